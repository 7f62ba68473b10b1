//! A scenario's Auto Scaling groups, their launch templates, the shape of
//! the Mesos agents their instances run and the role those agents' resources
//! are reserved to (DC/OS public agents: `slave_public`).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::defaults;
use super::mixed::MixedInstancesSpec;
use super::warm_pool::WarmPoolSpec;

/// One Auto Scaling group of Mesos agents (`[[groups]]`, or the one
/// `[group]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    pub name: String,
    pub(crate) min_size: u32,
    pub(crate) max_size: u32,
    pub desired_capacity: u32,
    #[serde(default = "defaults::availability_zones")]
    pub(crate) availability_zones: Vec<String>,
    #[serde(default)]
    pub(crate) launch_template: LaunchTemplateSpec,
    /// A mixed instances policy over `launch_template` (several instance
    /// types, Spot and on-demand); unset, the group launches from the
    /// template alone.
    #[serde(default)]
    pub(crate) mixed_instances: Option<MixedInstancesSpec>,
    #[serde(default)]
    pub(crate) tags: BTreeMap<String, String>,
    /// Processes suspended at the start (AWS names, e.g. "AZRebalance").
    #[serde(default)]
    pub(crate) suspended_processes: Vec<String>,
    /// Instances in Standby at the start, besides the `desired_capacity`
    /// in service (as EnterStandby with decrement leaves them): running,
    /// their agents registered with tasks, not counted against desired.
    #[serde(default)]
    pub(crate) standby: u32,
    /// Of the instances in service at the start, how many (the first
    /// launched) are protected from scale-in.
    #[serde(default)]
    pub(crate) protected: u32,
    /// The Mesos role every resource of the group's agents is reserved to,
    /// statically (the agents' `--default_role`), as DC/OS starts its
    /// public agents with `slave_public`; Marathon then places there only
    /// apps whose `acceptedResourceRoles` name it. Agents of a
    /// `slave_public` group also carry DC/OS's attribute `public_ip =
    /// "true"`. Unset: unreserved resources (role `*`).
    #[serde(default)]
    pub(crate) role: Option<String>,
    /// The shape of this group's agents, replacing the top-level `[agent]`
    /// whole (unset fields take the defaults, not `[agent]`'s).
    #[serde(default)]
    pub(crate) agent: Option<AgentSpec>,
    /// Lifecycle hooks on the group from the start (`[[group.lifecycle_hooks]]`),
    /// as PutLifecycleHook would have put them.
    #[serde(default)]
    pub(crate) lifecycle_hooks: Vec<LifecycleHookSpec>,
    /// A warm pool beside the group from the start (`[group.warm_pool]`),
    /// as PutWarmPool would have put it, filled at time zero from the
    /// group's launch template.
    #[serde(default)]
    pub(crate) warm_pool: Option<WarmPoolSpec>,
    /// The group's instance maintenance policy
    /// (`[group.instance_maintenance_policy]`), as CreateAutoScalingGroup
    /// takes it: unset, the group has none.
    #[serde(default)]
    pub(crate) instance_maintenance_policy: Option<MaintenancePolicySpec>,
}

/// An instance maintenance policy: how far below and above its desired
/// capacity (in percent of it) the group may go while instances are
/// replaced. AWS's ranges: `min_healthy_percentage` 0–100,
/// `max_healthy_percentage` 100–200, both given, at most 100 apart.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MaintenancePolicySpec {
    pub(crate) min_healthy_percentage: i32,
    pub(crate) max_healthy_percentage: i32,
}

impl MaintenancePolicySpec {
    /// What AWS refuses in the policy, in words of its API reference.
    pub(crate) fn check(&self) -> Result<(), String> {
        let (min, max) = (self.min_healthy_percentage, self.max_healthy_percentage);
        if !(0..=100).contains(&min) {
            return Err(format!("MinHealthyPercentage {min} is outside 0 to 100"));
        }
        if !(100..=200).contains(&max) {
            return Err(format!("MaxHealthyPercentage {max} is outside 100 to 200"));
        }
        if max - min > 100 {
            return Err(format!(
                "MaxHealthyPercentage {max} and MinHealthyPercentage {min} are more than 100 apart"
            ));
        }
        Ok(())
    }
}

/// One lifecycle hook, as PutLifecycleHook takes it: a name, the
/// transition it holds instances at, how long an instance waits without a
/// heartbeat, and what happens then.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct LifecycleHookSpec {
    pub(crate) name: String,
    /// `autoscaling:EC2_INSTANCE_LAUNCHING` or
    /// `autoscaling:EC2_INSTANCE_TERMINATING`.
    pub(crate) transition: String,
    /// Seconds, 30 to 7200 (AWS's default 3600).
    #[serde(default = "defaults::heartbeat_timeout")]
    pub(crate) heartbeat_timeout: u64,
    /// `CONTINUE` or `ABANDON` (AWS's default `ABANDON`).
    #[serde(default = "defaults::default_result")]
    pub(crate) default_result: String,
}

/// The transitions a lifecycle hook may hold instances at.
pub(crate) const HOOK_LAUNCHING: &str = "autoscaling:EC2_INSTANCE_LAUNCHING";
pub(crate) const HOOK_TERMINATING: &str = "autoscaling:EC2_INSTANCE_TERMINATING";

impl LifecycleHookSpec {
    /// What AWS refuses in a PutLifecycleHook, in its words (without the
    /// error code): a name outside `[A-Za-z0-9\-_\/]+` (1–255), another
    /// transition, a heartbeat timeout outside 30–7200 s, a default
    /// result other than CONTINUE or ABANDON.
    pub(crate) fn check(&self) -> Result<(), String> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 255
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/'));
        if !name_ok {
            return Err(format!(
                "1 validation error detected: Value '{}' at 'lifecycleHookName' failed to satisfy constraint: Member must satisfy regular expression pattern: [A-Za-z0-9\\-_\\/]+",
                self.name
            ));
        }
        if self.transition != HOOK_LAUNCHING && self.transition != HOOK_TERMINATING {
            return Err(format!(
                "Invalid Lifecycle Transition: {} (expected {HOOK_LAUNCHING} or {HOOK_TERMINATING})",
                self.transition
            ));
        }
        if !(30..=7200).contains(&self.heartbeat_timeout) {
            return Err(format!(
                "Heartbeat timeout must be between 30 and 7200 seconds, not {}",
                self.heartbeat_timeout
            ));
        }
        if self.default_result != "CONTINUE" && self.default_result != "ABANDON" {
            return Err(format!(
                "Valid values for DefaultResult are CONTINUE and ABANDON, not {}",
                self.default_result
            ));
        }
        Ok(())
    }
}

/// The role DC/OS reserves its public agents' resources to.
pub(crate) const PUBLIC_ROLE: &str = "slave_public";

/// Whether `role` is a role name Mesos accepts (`roles::validate`: `*`,
/// or `/`-separated components, none empty, `.`, `..` or `*`, none
/// starting with `-` or holding whitespace or DEL). The error says why,
/// without the field's name.
pub(crate) fn check_role(role: &str) -> Result<(), String> {
    if role == "*" {
        return Ok(());
    }
    let why = if role.is_empty() {
        Some("a role cannot be empty")
    } else if role.starts_with('/') || role.ends_with('/') {
        Some("a role cannot start or end with a slash")
    } else {
        role.split('/').find_map(|component| match component {
            "" => Some("a role cannot hold two adjacent slashes"),
            "." | ".." | "*" => Some("a role component cannot be ., .. or *"),
            c if c.starts_with('-') => Some("a role component cannot start with a dash"),
            c if c
                .chars()
                .any(|ch| ch.is_ascii_whitespace() || ch == '\x7f' || ch == '\x0b') =>
            {
                Some("a role cannot hold whitespace or backspace")
            }
            _ => None,
        })
    };
    match why {
        Some(why) => Err(format!("{role:?} is not a Mesos role: {why}")),
        None => Ok(()),
    }
}

/// The group's EC2 launch template, as far as the simulator models one: a
/// name, versions numbered 1 to `latest_version` (each its own image), and
/// which of them is the default. The group launches from `version`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LaunchTemplateSpec {
    #[serde(default = "defaults::launch_template_name")]
    pub(crate) name: String,
    /// What the group launches from: a version number, `$Latest` or
    /// `$Default`, as AWS's `LaunchTemplateSpecification.Version`.
    #[serde(default = "defaults::launch_template_version")]
    pub(crate) version: String,
    /// The template's newest version (EC2's `LatestVersionNumber`); unset,
    /// `version` if it is a number, else 1. Versions above the group's are
    /// images an operator published and may switch the group to.
    #[serde(default)]
    pub(crate) latest_version: Option<u64>,
    /// The template's default version (EC2's `DefaultVersionNumber`); 1
    /// unless set, as a new template's first version is its default.
    #[serde(default)]
    pub(crate) default_version: Option<u64>,
}

impl Default for LaunchTemplateSpec {
    fn default() -> LaunchTemplateSpec {
        LaunchTemplateSpec {
            name: defaults::launch_template_name(),
            version: defaults::launch_template_version(),
            latest_version: None,
            default_version: None,
        }
    }
}

impl LaunchTemplateSpec {
    /// The newest version number the template has.
    pub(crate) fn latest(&self) -> u64 {
        self.latest_version
            .or_else(|| self.version.parse().ok().filter(|&n| n >= 1))
            .unwrap_or(1)
    }

    /// The template's default version number.
    pub(crate) fn default_number(&self) -> u64 {
        self.default_version.unwrap_or(1)
    }
}

/// The version number a launch template's `version` names, as Auto Scaling
/// resolves it when it launches: `$Latest` the newest, `$Default` the
/// default, a number itself if the template has it. `None` for a version
/// the template does not have (or a malformed one).
pub(crate) fn resolve_template_version(version: &str, latest: u64, default: u64) -> Option<u64> {
    match version {
        "$Latest" => Some(latest),
        "$Default" => Some(default),
        number => number
            .parse::<u64>()
            .ok()
            .filter(|n| (1..=latest).contains(n) && !number.starts_with('0')),
    }
}

/// What every Mesos agent offers (one agent per instance).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentSpec {
    /// CPUs offered (default: an 8-vCPU instance).
    #[serde(default = "defaults::agent_cpus")]
    pub(crate) cpus: f64,
    /// Memory offered in MB (default: a 32 GiB instance less the OS share).
    #[serde(default = "defaults::agent_mem")]
    pub(crate) mem: f64,
    #[serde(default = "defaults::agent_disk")]
    pub(crate) disk: f64,
    /// The agent attribute that carries its EC2 instance id.
    #[serde(default = "defaults::instance_id_attribute")]
    pub(crate) instance_id_attribute: String,
    /// Further TEXT attributes every agent carries.
    #[serde(default)]
    pub(crate) attributes: BTreeMap<String, String>,
    #[serde(default = "defaults::mesos_version")]
    pub(crate) version: String,
}

impl Default for AgentSpec {
    fn default() -> AgentSpec {
        AgentSpec {
            cpus: defaults::agent_cpus(),
            mem: defaults::agent_mem(),
            disk: defaults::agent_disk(),
            instance_id_attribute: defaults::instance_id_attribute(),
            attributes: BTreeMap::new(),
            version: defaults::mesos_version(),
        }
    }
}

pub(super) const PROCESSES: &[&str] = &[
    "Launch",
    "Terminate",
    "AddToLoadBalancer",
    "AlarmNotification",
    "AZRebalance",
    "HealthCheck",
    "ReplaceUnhealthy",
    "ScheduledActions",
    "InstanceRefresh",
];

/// The nine Auto Scaling process names, as AWS spells them.
pub(crate) fn scaling_processes() -> &'static [&'static str] {
    PROCESSES
}
