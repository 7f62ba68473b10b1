//! What the simulated instances are and where they launch, as the AWS
//! facade describes them and as the world's own messages name them (a
//! failed launch names the instance type and the subnet): one place, so
//! both say the same.

/// What the simulated instances are (the scenario does not say).
pub(crate) const INSTANCE_TYPE: &str = "m5.2xlarge";

/// The subnet of `az`: `subnet-` and 17 hex digits, one per AZ.
pub(crate) fn subnet_id(az: &str) -> String {
    format!("subnet-0{}", stable_hex(az, 16))
}

/// `n` hex digits derived from `seed`, the same every run (fake resource
/// ids that stay put across requests and restarts).
pub(crate) fn stable_hex(seed: &str, n: usize) -> String {
    let a = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, seed.as_bytes())
        .simple()
        .to_string();
    a.chars().take(n).collect()
}
