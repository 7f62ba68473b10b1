//! A scenario group's mixed instances policy (`[group.mixed_instances]`):
//! the instance types it launches (overrides, in priority order, each
//! perhaps pinned to a version of the group's launch template) and its
//! Spot/on-demand distribution, as AWS's `MixedInstancesPolicy` has them.

use serde::Deserialize;

use super::group::resolve_template_version;

/// `MixedInstancesPolicy`: the group's `launch_template` is the policy's.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MixedInstancesSpec {
    pub(crate) overrides: Vec<OverrideSpec>,
    /// AWS's default: 0.
    #[serde(default)]
    pub(crate) on_demand_base_capacity: u32,
    /// AWS's default: 100 (all on-demand).
    #[serde(default = "hundred")]
    pub(crate) on_demand_percentage_above_base_capacity: u32,
    /// Kept and described back; the simulator spreads Spot instances
    /// over the types whatever it is (it has no prices or pools).
    #[serde(default = "lowest_price")]
    pub(crate) spot_allocation_strategy: String,
}

fn hundred() -> u32 {
    100
}

fn lowest_price() -> String {
    "lowest-price".to_string()
}

/// One of `Overrides`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OverrideSpec {
    pub(crate) instance_type: String,
    /// The version of the group's launch template this type launches
    /// from (the override's own `LaunchTemplateSpecification`); unset,
    /// the policy's.
    #[serde(default)]
    pub(crate) version: Option<String>,
}

impl MixedInstancesSpec {
    /// Why the policy cannot be, for a template with versions 1 to
    /// `latest` (default `default`); the error names the field.
    pub(crate) fn check(&self, latest: u64, default: u64) -> Result<(), (String, String)> {
        if self.overrides.is_empty() {
            return Err((
                "overrides".into(),
                "must list at least one instance type".into(),
            ));
        }
        for (n, o) in self.overrides.iter().enumerate() {
            if o.instance_type.trim().is_empty()
                || self.overrides[..n]
                    .iter()
                    .any(|p| p.instance_type == o.instance_type)
            {
                return Err((
                    "overrides".into(),
                    format!("{:?}: each instance type once, none empty", o.instance_type),
                ));
            }
            if let Some(v) = &o.version
                && resolve_template_version(v, latest, default).is_none()
            {
                return Err((
                    "overrides.version".into(),
                    format!("{v:?} is not a version of the template (1 to {latest})"),
                ));
            }
        }
        if self.on_demand_percentage_above_base_capacity > 100 {
            return Err((
                "on_demand_percentage_above_base_capacity".into(),
                "must be 0 to 100".into(),
            ));
        }
        Ok(())
    }
}
