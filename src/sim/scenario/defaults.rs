//! The defaults, one function each because serde wants functions.

pub(super) fn seed() -> u64 {
    1
}
/// 2024-01-01T00:00:00Z.
pub(crate) fn epoch_unix_s() -> u64 {
    1_704_067_200
}
pub(super) fn instance_boot_s() -> f64 {
    90.0
}
pub(super) fn agent_register_s() -> f64 {
    30.0
}
pub(super) fn instance_terminate_s() -> f64 {
    30.0
}
pub(super) fn launch_retry_s() -> f64 {
    10.0
}
pub(super) fn az_rebalance_delay_s() -> f64 {
    60.0
}
pub(super) fn agent_ping_timeout_s() -> f64 {
    15.0
}
pub(super) fn max_agent_ping_timeouts() -> u32 {
    5
}
pub(super) fn unreachable_relaunch_s() -> f64 {
    3.0
}
pub(super) fn offer_interval_s() -> f64 {
    1.0
}
pub(super) fn task_kill_s() -> f64 {
    5.0
}
pub(super) fn availability_zones() -> Vec<String> {
    ["us-east-1a", "us-east-1b", "us-east-1c"]
        .map(String::from)
        .to_vec()
}
pub(super) fn launch_template_name() -> String {
    "mesos-agent".into()
}
pub(super) fn launch_template_version() -> String {
    "1".into()
}
pub(super) fn agent_cpus() -> f64 {
    8.0
}
pub(super) fn agent_mem() -> f64 {
    30_720.0
}
pub(super) fn agent_disk() -> f64 {
    100_000.0
}
pub(super) fn instance_id_attribute() -> String {
    "instance_id".into()
}
pub(super) fn mesos_version() -> String {
    "1.9.0".into()
}
pub(super) fn count() -> u32 {
    1
}
pub(super) fn app_cpus() -> f64 {
    1.0
}
pub(super) fn app_mem() -> f64 {
    128.0
}
pub(super) fn task_start_s() -> f64 {
    5.0
}
pub(super) fn ready_after_s() -> f64 {
    10.0
}
pub(super) fn one() -> f64 {
    1.0
}
pub(super) fn backoff_s() -> f64 {
    1.0
}
pub(super) fn backoff_factor() -> f64 {
    1.15
}
pub(super) fn max_launch_delay_s() -> f64 {
    3600.0
}
pub(super) fn protocol() -> String {
    "MESOS_HTTP".into()
}
pub(super) fn grace_period_s() -> f64 {
    300.0
}
pub(super) fn interval_s() -> f64 {
    60.0
}
pub(super) fn timeout_s() -> f64 {
    20.0
}
pub(super) fn max_consecutive_failures() -> u32 {
    3
}

/// A lifecycle hook's heartbeat timeout when none is given: AWS's, one
/// hour.
pub(super) fn heartbeat_timeout() -> u64 {
    3600
}

/// A lifecycle hook's default result when none is given: AWS's.
pub(super) fn default_result() -> String {
    "ABANDON".to_string()
}
