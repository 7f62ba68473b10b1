//! A scenario's Marathon apps and their health checks.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::defaults;

/// One Marathon app, or `count` alike apps whose `id` holds `{n}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AppSpec {
    /// Absolute app id (`/team/service`); with `count` > 1 it must hold
    /// `{n}`, replaced by 1..=count zero-padded to the same width.
    pub(crate) id: String,
    #[serde(default = "defaults::count")]
    pub(crate) count: u32,
    pub(crate) instances: u32,
    /// Marathon's default: 1 CPU per task.
    #[serde(default = "defaults::app_cpus")]
    pub(crate) cpus: f64,
    /// Marathon's default: 128 MB per task.
    #[serde(default = "defaults::app_mem")]
    pub(crate) mem: f64,
    /// Staging → running (no real default: pulling and starting, 5 s).
    #[serde(default = "defaults::task_start_s")]
    pub(crate) task_start_s: f64,
    /// From running to answering its health check (no real default: 10 s).
    #[serde(default = "defaults::ready_after_s")]
    pub(crate) ready_after_s: f64,
    /// None: the app has no health checks (tasksHealthy stays 0).
    #[serde(default)]
    pub(crate) health_check: Option<HealthCheckSpec>,
    /// `upgradeStrategy.minimumHealthCapacity` (Marathon default 1.0).
    #[serde(default = "defaults::one")]
    pub(crate) min_health_capacity: f64,
    /// `upgradeStrategy.maximumOverCapacity` (Marathon default 1.0).
    #[serde(default = "defaults::one")]
    pub(crate) max_over_capacity: f64,
    /// Marathon constraints; only `["hostname", "UNIQUE"]` is simulated.
    #[serde(default)]
    pub(crate) constraints: Vec<Vec<String>>,
    /// Place every initial task of the app on one agent (the hazard the
    /// roller must not turn into an outage). Relaunches go anywhere.
    #[serde(default)]
    pub(crate) colocate: bool,
    /// Tasks launched after the start never become healthy.
    #[serde(default)]
    pub(crate) never_healthy_after_relaunch: bool,
    /// Marathon `backoffSeconds` (1).
    #[serde(default = "defaults::backoff_s")]
    pub(crate) backoff_s: f64,
    /// Marathon `backoffFactor` (1.15).
    #[serde(default = "defaults::backoff_factor")]
    pub(crate) backoff_factor: f64,
    /// Marathon `maxLaunchDelaySeconds` (3600: `AppDefinition`'s default
    /// and every captured app's).
    #[serde(default = "defaults::max_launch_delay_s")]
    pub(crate) max_launch_delay_s: f64,
    /// Marathon `acceptedResourceRoles`: the roles whose resources its
    /// tasks may use (`*` unreserved). Unset: `["*"]`, DC/OS Marathon's
    /// `--default_accepted_resource_roles`, so never a public agent.
    #[serde(default)]
    pub(crate) accepted_resource_roles: Option<Vec<String>>,
    /// Marathon labels. `MARATHON_SINGLE_INSTANCE_APP = "true"` (every
    /// DC/OS SDK scheduler's) makes Marathon refuse more than one
    /// instance, and requires `instances` <= 1 and both capacities 0.
    #[serde(default)]
    pub(crate) labels: BTreeMap<String, String>,
}

/// The label with which Marathon keeps an app at one instance.
pub(crate) const SINGLE_INSTANCE_LABEL: &str = "MARATHON_SINGLE_INSTANCE_APP";

impl AppSpec {
    /// Marathon's `isSingleInstance`: the label, with the value `true`.
    pub(crate) fn single_instance(&self) -> bool {
        self.labels
            .get(SINGLE_INSTANCE_LABEL)
            .is_some_and(|v| v == "true")
    }
}

/// One Marathon health check (Marathon's defaults).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HealthCheckSpec {
    #[serde(default = "defaults::protocol")]
    pub(crate) protocol: String,
    #[serde(default = "defaults::grace_period_s")]
    pub(crate) grace_period_s: f64,
    #[serde(default = "defaults::interval_s")]
    pub(crate) interval_s: f64,
    #[serde(default = "defaults::timeout_s")]
    pub(crate) timeout_s: f64,
    #[serde(default = "defaults::max_consecutive_failures")]
    pub(crate) max_consecutive_failures: u32,
}

impl Default for HealthCheckSpec {
    fn default() -> HealthCheckSpec {
        HealthCheckSpec {
            protocol: defaults::protocol(),
            grace_period_s: defaults::grace_period_s(),
            interval_s: defaults::interval_s(),
            timeout_s: defaults::timeout_s(),
            max_consecutive_failures: defaults::max_consecutive_failures(),
        }
    }
}

/// One app after `count`/`{n}` expansion.
#[derive(Clone, Debug)]
pub(crate) struct ExpandedApp {
    pub(crate) id: String,
    pub(crate) spec: AppSpec,
}

impl AppSpec {
    /// Whether Marathon may place a task of the app on an agent whose
    /// resources are reserved to `reserved_to` (`None`: unreserved).
    pub(crate) fn accepts(&self, reserved_to: Option<&str>) -> bool {
        accepts(self.accepted_resource_roles.as_deref(), reserved_to)
    }

    pub(crate) fn unique_hostname(&self) -> bool {
        self.constraints
            .iter()
            .any(|c| c.len() == 2 && c[0] == "hostname" && c[1] == "UNIQUE")
    }
}

pub(super) const HEALTH_PROTOCOLS: &[&str] = &[
    "HTTP",
    "HTTPS",
    "TCP",
    "COMMAND",
    "MESOS_HTTP",
    "MESOS_HTTPS",
    "MESOS_TCP",
];

/// Whether `acceptedResourceRoles` (`None`: Marathon's default, `*`) take
/// resources reserved to `reserved_to` (`None`: unreserved, role `*`).
/// Marathon offers a task only resources of a role it accepts, and a DC/OS
/// public agent has no unreserved resources at all.
pub(crate) fn accepts(accepted: Option<&[String]>, reserved_to: Option<&str>) -> bool {
    let role = reserved_to.unwrap_or("*");
    match accepted {
        None => role == "*",
        Some(roles) => roles.iter().any(|r| r == role),
    }
}
