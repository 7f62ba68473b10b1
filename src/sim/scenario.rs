//! The scenario format: one TOML file describing a simulated cluster (its
//! timings, Auto Scaling group, agent shape, Marathon apps and faults), how
//! it is read (strictly: an unknown or malformed field is refused with its
//! name) and the scenarios shipped inside the binary.
//!
//! Every default is the real system's documented default where one exists
//! (Mesos ping timeouts, Marathon health checks and backoff, AWS process
//! names); where the real system has none (how long an app takes to start)
//! the default is a plausible value, said so on the field.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use super::shared::ApiFaults;
use super::world::Faults;

/// The scenarios embedded in the binary, by name.
const BUILTIN: &[(&str, &str)] = &[
    ("demo", include_str!("../../tests/scenarios/demo.toml")),
    ("msr-55", include_str!("../../tests/scenarios/msr-55.toml")),
    (
        "hazards",
        include_str!("../../tests/scenarios/hazards.toml"),
    ),
    ("big", include_str!("../../tests/scenarios/big.toml")),
    (
        "bad-image",
        include_str!("../../tests/scenarios/bad-image.toml"),
    ),
];

/// The names of the embedded scenarios.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(name, _)| *name).collect()
}

/// Why a scenario was refused.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("reading scenario {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("scenario {origin}: {message}")]
    Parse { origin: String, message: String },
    #[error("scenario {origin}: {field}: {message}")]
    Invalid {
        origin: String,
        field: String,
        message: String,
    },
}

impl ScenarioError {
    pub fn label(&self) -> &'static str {
        match self {
            ScenarioError::Read { .. } => "scenario_unreadable",
            ScenarioError::Parse { .. } => "scenario_malformed",
            ScenarioError::Invalid { .. } => "scenario_invalid",
        }
    }
}

/// A whole simulated cluster.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What this scenario is for, shown by `roller sim`.
    #[serde(default)]
    pub description: String,
    /// Seeds every random choice (placement, ids, jitter): the same seed
    /// replays the same run.
    #[serde(default = "defaults::seed")]
    pub seed: u64,
    #[serde(default)]
    pub timings: Timings,
    pub group: GroupSpec,
    #[serde(default)]
    pub agent: AgentSpec,
    #[serde(default)]
    pub apps: Vec<AppSpec>,
    #[serde(default)]
    pub faults: Faults,
    /// Errors, latency and throttling the HTTP facades inject from the
    /// start (switchable later through `/sim/faults`).
    #[serde(default)]
    pub api_faults: ApiFaults,
}

/// How long things take, in (simulated) seconds.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timings {
    /// Unix time (seconds) of the simulation's start. Unset, a served
    /// simulator starts at the wall clock, as a real master's clock is:
    /// the roller writes maintenance windows in wall-clock time, and they
    /// must mean the same to both. Set it for reproducible timestamps (a
    /// bare `World` without it starts at 2024-01-01).
    #[serde(default)]
    pub epoch_unix_s: Option<u64>,
    /// Spread (a fraction, 0 = exact) applied to boot, registration and
    /// task start times, drawn from the seed.
    #[serde(default)]
    pub jitter: f64,
    /// Pending → InService (EC2 boot plus Auto Scaling's checks).
    #[serde(default = "defaults::instance_boot_s")]
    pub instance_boot_s: f64,
    /// InService → the Mesos agent registered with the master.
    #[serde(default = "defaults::agent_register_s")]
    pub agent_register_s: f64,
    /// Terminating → Terminated (EC2 shutting-down).
    #[serde(default = "defaults::instance_terminate_s")]
    pub instance_terminate_s: f64,
    /// After a failed launch, when the group tries again.
    #[serde(default = "defaults::launch_retry_s")]
    pub launch_retry_s: f64,
    /// How long after a change AZRebalance looks at the AZ counts.
    #[serde(default = "defaults::az_rebalance_delay_s")]
    pub az_rebalance_delay_s: f64,
    /// Mesos `--agent_ping_timeout` (15 s).
    #[serde(default = "defaults::agent_ping_timeout_s")]
    pub agent_ping_timeout_s: f64,
    /// Mesos `--max_agent_ping_timeouts` (5).
    #[serde(default = "defaults::max_agent_ping_timeouts")]
    pub max_agent_ping_timeouts: u32,
    /// From TASK_UNREACHABLE/TASK_LOST to Marathon launching the
    /// replacement (unreachableStrategy 0/0 plus its reaction, ~3 s).
    #[serde(default = "defaults::unreachable_relaunch_s")]
    pub unreachable_relaunch_s: f64,
    /// How often Marathon sees offers again for apps it could not place
    /// (Mesos `--allocation_interval`, 1 s).
    #[serde(default = "defaults::offer_interval_s")]
    pub offer_interval_s: f64,
    /// From a kill to the task being gone (Mesos
    /// `--executor_shutdown_grace_period`, 5 s).
    #[serde(default = "defaults::task_kill_s")]
    pub task_kill_s: f64,
    /// Marathon `--draining_seconds` (0): how long before a maintenance
    /// window Marathon starts declining the machine's offers.
    #[serde(default)]
    pub marathon_draining_s: f64,
}

impl Default for Timings {
    fn default() -> Timings {
        Timings {
            epoch_unix_s: None,
            jitter: 0.0,
            instance_boot_s: defaults::instance_boot_s(),
            agent_register_s: defaults::agent_register_s(),
            instance_terminate_s: defaults::instance_terminate_s(),
            launch_retry_s: defaults::launch_retry_s(),
            az_rebalance_delay_s: defaults::az_rebalance_delay_s(),
            agent_ping_timeout_s: defaults::agent_ping_timeout_s(),
            max_agent_ping_timeouts: defaults::max_agent_ping_timeouts(),
            unreachable_relaunch_s: defaults::unreachable_relaunch_s(),
            offer_interval_s: defaults::offer_interval_s(),
            task_kill_s: defaults::task_kill_s(),
            marathon_draining_s: 0.0,
        }
    }
}

/// The Auto Scaling group of Mesos agents.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    pub name: String,
    pub min_size: u32,
    pub max_size: u32,
    pub desired_capacity: u32,
    #[serde(default = "defaults::availability_zones")]
    pub availability_zones: Vec<String>,
    #[serde(default)]
    pub launch_template: LaunchTemplateSpec,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Processes suspended at the start (AWS names, e.g. "AZRebalance").
    #[serde(default)]
    pub suspended_processes: Vec<String>,
    /// Instances in Standby at the start, besides the `desired_capacity`
    /// in service (as EnterStandby with decrement leaves them): running,
    /// their agents registered with tasks, not counted against desired.
    #[serde(default)]
    pub standby: u32,
}

/// The group's EC2 launch template, as far as the simulator models one: a
/// name, versions numbered 1 to `latest_version` (each its own image), and
/// which of them is the default. The group launches from `version`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchTemplateSpec {
    #[serde(default = "defaults::launch_template_name")]
    pub name: String,
    /// What the group launches from: a version number, `$Latest` or
    /// `$Default`, as AWS's `LaunchTemplateSpecification.Version`.
    #[serde(default = "defaults::launch_template_version")]
    pub version: String,
    /// The template's newest version (EC2's `LatestVersionNumber`); unset,
    /// `version` if it is a number, else 1. Versions above the group's are
    /// images an operator published and may switch the group to.
    #[serde(default)]
    pub latest_version: Option<u64>,
    /// The template's default version (EC2's `DefaultVersionNumber`); 1
    /// unless set, as a new template's first version is its default.
    #[serde(default)]
    pub default_version: Option<u64>,
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
    pub fn latest(&self) -> u64 {
        self.latest_version
            .or_else(|| self.version.parse().ok().filter(|&n| n >= 1))
            .unwrap_or(1)
    }

    /// The template's default version number.
    pub fn default_number(&self) -> u64 {
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
pub struct AgentSpec {
    /// CPUs offered (default: an 8-vCPU instance).
    #[serde(default = "defaults::agent_cpus")]
    pub cpus: f64,
    /// Memory offered in MB (default: a 32 GiB instance less the OS share).
    #[serde(default = "defaults::agent_mem")]
    pub mem: f64,
    #[serde(default = "defaults::agent_disk")]
    pub disk: f64,
    /// The agent attribute that carries its EC2 instance id.
    #[serde(default = "defaults::instance_id_attribute")]
    pub instance_id_attribute: String,
    /// Further TEXT attributes every agent carries.
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
    #[serde(default = "defaults::mesos_version")]
    pub version: String,
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

/// One Marathon app, or `count` alike apps whose `id` holds `{n}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    /// Absolute app id (`/team/service`); with `count` > 1 it must hold
    /// `{n}`, replaced by 1..=count zero-padded to the same width.
    pub id: String,
    #[serde(default = "defaults::count")]
    pub count: u32,
    pub instances: u32,
    /// Marathon's default: 1 CPU per task.
    #[serde(default = "defaults::app_cpus")]
    pub cpus: f64,
    /// Marathon's default: 128 MB per task.
    #[serde(default = "defaults::app_mem")]
    pub mem: f64,
    /// Staging → running (no real default: pulling and starting, 5 s).
    #[serde(default = "defaults::task_start_s")]
    pub task_start_s: f64,
    /// From running to answering its health check (no real default: 10 s).
    #[serde(default = "defaults::ready_after_s")]
    pub ready_after_s: f64,
    /// None: the app has no health checks (tasksHealthy stays 0).
    #[serde(default)]
    pub health_check: Option<HealthCheckSpec>,
    /// `upgradeStrategy.minimumHealthCapacity` (Marathon default 1.0).
    #[serde(default = "defaults::one")]
    pub min_health_capacity: f64,
    /// `upgradeStrategy.maximumOverCapacity` (Marathon default 1.0).
    #[serde(default = "defaults::one")]
    pub max_over_capacity: f64,
    /// Marathon constraints; only `["hostname", "UNIQUE"]` is simulated.
    #[serde(default)]
    pub constraints: Vec<Vec<String>>,
    /// Place every initial task of the app on one agent (the hazard the
    /// roller must not turn into an outage). Relaunches go anywhere.
    #[serde(default)]
    pub colocate: bool,
    /// Tasks launched after the start never become healthy.
    #[serde(default)]
    pub never_healthy_after_relaunch: bool,
    /// Marathon `backoffSeconds` (1).
    #[serde(default = "defaults::backoff_s")]
    pub backoff_s: f64,
    /// Marathon `backoffFactor` (1.15).
    #[serde(default = "defaults::backoff_factor")]
    pub backoff_factor: f64,
    /// Marathon `maxLaunchDelaySeconds` (3600: `AppDefinition`'s default
    /// and every captured app's).
    #[serde(default = "defaults::max_launch_delay_s")]
    pub max_launch_delay_s: f64,
}

/// One Marathon health check (Marathon's defaults).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthCheckSpec {
    #[serde(default = "defaults::protocol")]
    pub protocol: String,
    #[serde(default = "defaults::grace_period_s")]
    pub grace_period_s: f64,
    #[serde(default = "defaults::interval_s")]
    pub interval_s: f64,
    #[serde(default = "defaults::timeout_s")]
    pub timeout_s: f64,
    #[serde(default = "defaults::max_consecutive_failures")]
    pub max_consecutive_failures: u32,
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
pub struct ExpandedApp {
    pub id: String,
    pub spec: AppSpec,
}

impl AppSpec {
    pub fn unique_hostname(&self) -> bool {
        self.constraints
            .iter()
            .any(|c| c.len() == 2 && c[0] == "hostname" && c[1] == "UNIQUE")
    }
}

/// Seconds (as written in scenarios) to the world's milliseconds.
pub(crate) fn millis(seconds: f64) -> u64 {
    (seconds * 1000.0).round().max(0.0) as u64
}

const PROCESSES: &[&str] = &[
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
pub fn scaling_processes() -> &'static [&'static str] {
    PROCESSES
}

const HEALTH_PROTOCOLS: &[&str] = &[
    "HTTP",
    "HTTPS",
    "TCP",
    "COMMAND",
    "MESOS_HTTP",
    "MESOS_HTTPS",
    "MESOS_TCP",
];

impl Scenario {
    /// An embedded scenario by name, else a file by path.
    pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        if let Some((name, text)) = BUILTIN.iter().find(|(name, _)| *name == name_or_path) {
            return Scenario::from_toml(text, name);
        }
        Scenario::from_path(Path::new(name_or_path))
    }

    pub fn builtin(name: &str) -> Option<Result<Scenario, ScenarioError>> {
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Scenario::from_toml(text, n))
    }

    pub fn from_path(path: &Path) -> Result<Scenario, ScenarioError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: origin.clone(),
            source,
        })?;
        Scenario::from_toml(&text, &origin)
    }

    /// Parses and validates; `origin` names the scenario in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario = toml::from_str(text).map_err(|e| ScenarioError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        scenario.validate(origin)?;
        Ok(scenario)
    }

    /// The apps with `count` expanded, in scenario order.
    pub fn expanded_apps(&self) -> Vec<ExpandedApp> {
        let mut out = Vec::new();
        for spec in &self.apps {
            if spec.count <= 1 && !spec.id.contains("{n}") {
                out.push(ExpandedApp {
                    id: spec.id.clone(),
                    spec: spec.clone(),
                });
                continue;
            }
            let width = spec.count.to_string().len();
            for n in 1..=spec.count {
                out.push(ExpandedApp {
                    id: spec.id.replace("{n}", &format!("{n:0width$}")),
                    spec: spec.clone(),
                });
            }
        }
        out
    }

    /// How many tasks the scenario asks for in all.
    pub fn task_count(&self) -> u64 {
        self.apps
            .iter()
            .map(|a| u64::from(a.count) * u64::from(a.instances))
            .sum()
    }

    fn validate(&self, origin: &str) -> Result<(), ScenarioError> {
        let invalid = |field: String, message: String| ScenarioError::Invalid {
            origin: origin.to_string(),
            field,
            message,
        };
        self.api_faults
            .check()
            .map_err(|message| match message.split_once(": ") {
                Some((field, why)) => invalid(format!("api_faults.{field}"), why.to_string()),
                None => invalid("api_faults".to_string(), message),
            })?;
        let t = &self.timings;
        let durations = [
            ("instance_boot_s", t.instance_boot_s),
            ("agent_register_s", t.agent_register_s),
            ("instance_terminate_s", t.instance_terminate_s),
            ("launch_retry_s", t.launch_retry_s),
            ("az_rebalance_delay_s", t.az_rebalance_delay_s),
            ("agent_ping_timeout_s", t.agent_ping_timeout_s),
            ("unreachable_relaunch_s", t.unreachable_relaunch_s),
            ("offer_interval_s", t.offer_interval_s),
            ("task_kill_s", t.task_kill_s),
            ("marathon_draining_s", t.marathon_draining_s),
        ];
        for (name, value) in durations {
            if !value.is_finite() || value < 0.0 {
                return Err(invalid(
                    format!("timings.{name}"),
                    format!("must be a non-negative number of seconds, got {value}"),
                ));
            }
        }
        if t.offer_interval_s <= 0.0 || t.launch_retry_s <= 0.0 {
            return Err(invalid(
                "timings.offer_interval_s/launch_retry_s".into(),
                "must be more than 0 (they are retry periods)".into(),
            ));
        }
        if !(0.0..1.0).contains(&t.jitter) {
            return Err(invalid(
                "timings.jitter".into(),
                format!("must be a fraction in [0, 1), got {}", t.jitter),
            ));
        }

        let g = &self.group;
        if g.name.is_empty() {
            return Err(invalid("group.name".into(), "must not be empty".into()));
        }
        if g.min_size > g.max_size {
            return Err(invalid(
                "group.min_size".into(),
                format!("{} is above max_size {}", g.min_size, g.max_size),
            ));
        }
        if g.desired_capacity < g.min_size || g.desired_capacity > g.max_size {
            return Err(invalid(
                "group.desired_capacity".into(),
                format!(
                    "{} is outside [min_size {}, max_size {}]",
                    g.desired_capacity, g.min_size, g.max_size
                ),
            ));
        }
        if g.desired_capacity.saturating_add(g.standby) > g.max_size {
            return Err(invalid(
                "group.standby".into(),
                format!(
                    "{} in Standby besides desired_capacity {} is above max_size {}",
                    g.standby, g.desired_capacity, g.max_size
                ),
            ));
        }
        let azs: BTreeSet<&String> = g.availability_zones.iter().collect();
        if g.availability_zones.is_empty() || azs.len() != g.availability_zones.len() {
            return Err(invalid(
                "group.availability_zones".into(),
                "must list at least one zone, each once".into(),
            ));
        }
        for p in &g.suspended_processes {
            if !PROCESSES.contains(&p.as_str()) {
                return Err(invalid(
                    "group.suspended_processes".into(),
                    format!("unknown process {p:?}; expected one of {PROCESSES:?}"),
                ));
            }
        }

        let lt = &g.launch_template;
        let (latest, default) = (lt.latest(), lt.default_number());
        if latest == 0 {
            return Err(invalid(
                "group.launch_template.latest_version".into(),
                "must be at least 1".into(),
            ));
        }
        if !(1..=latest).contains(&default) {
            return Err(invalid(
                "group.launch_template.default_version".into(),
                format!("{default} is not a version of the template (1 to {latest})"),
            ));
        }
        if resolve_template_version(&lt.version, latest, default).is_none() {
            return Err(invalid(
                "group.launch_template.version".into(),
                format!(
                    "{:?} is not a version of the template: expected 1 to {latest}, $Latest or $Default",
                    lt.version
                ),
            ));
        }

        let a = &self.agent;
        for (name, value) in [("cpus", a.cpus), ("mem", a.mem), ("disk", a.disk)] {
            if !value.is_finite() || value <= 0.0 {
                return Err(invalid(
                    format!("agent.{name}"),
                    format!("must be more than 0, got {value}"),
                ));
            }
        }

        let mut ids = BTreeSet::new();
        for (i, app) in self.apps.iter().enumerate() {
            let field = |name: &str| format!("apps[{i}] ({}).{name}", app.id);
            if !app.id.starts_with('/') || app.id.len() < 2 || app.id.ends_with('/') {
                return Err(invalid(
                    field("id"),
                    "must be an absolute app id like \"/team/service\"".into(),
                ));
            }
            if app.count == 0 {
                return Err(invalid(field("count"), "must be at least 1".into()));
            }
            if app.count > 1 && !app.id.contains("{n}") {
                return Err(invalid(
                    field("id"),
                    format!("count is {} so the id must hold {{n}}", app.count),
                ));
            }
            for (name, value) in [("cpus", app.cpus), ("mem", app.mem)] {
                if !value.is_finite() || value <= 0.0 {
                    return Err(invalid(
                        field(name),
                        format!("must be more than 0, got {value}"),
                    ));
                }
                let shape = if name == "cpus" { a.cpus } else { a.mem };
                if value > shape {
                    return Err(invalid(
                        field(name),
                        format!("{value} does not fit on an agent (agent.{name} = {shape})"),
                    ));
                }
            }
            for (name, value) in [
                ("task_start_s", app.task_start_s),
                ("ready_after_s", app.ready_after_s),
                ("backoff_s", app.backoff_s),
                ("max_launch_delay_s", app.max_launch_delay_s),
            ] {
                if !value.is_finite() || value < 0.0 {
                    return Err(invalid(
                        field(name),
                        format!("must be a non-negative number of seconds, got {value}"),
                    ));
                }
            }
            for (name, value) in [
                ("min_health_capacity", app.min_health_capacity),
                ("max_over_capacity", app.max_over_capacity),
            ] {
                if !(0.0..=1.0).contains(&value) {
                    return Err(invalid(
                        field(name),
                        format!("must be between 0 and 1, got {value}"),
                    ));
                }
            }
            if !app.backoff_factor.is_finite() || app.backoff_factor < 1.0 {
                return Err(invalid(
                    field("backoff_factor"),
                    format!("must be at least 1, got {}", app.backoff_factor),
                ));
            }
            for c in &app.constraints {
                if !(c.len() == 2 && c[0] == "hostname" && c[1] == "UNIQUE") {
                    return Err(invalid(
                        field("constraints"),
                        format!("{c:?} is not simulated; only [\"hostname\", \"UNIQUE\"] is"),
                    ));
                }
            }
            if app.colocate && app.unique_hostname() && app.instances > 1 {
                return Err(invalid(
                    field("colocate"),
                    "contradicts the [\"hostname\", \"UNIQUE\"] constraint".into(),
                ));
            }
            if app.colocate
                && (app.cpus * f64::from(app.instances) > a.cpus
                    || app.mem * f64::from(app.instances) > a.mem)
            {
                return Err(invalid(
                    field("colocate"),
                    format!("{} tasks do not fit on one agent", app.instances),
                ));
            }
            if let Some(hc) = &app.health_check {
                if !HEALTH_PROTOCOLS.contains(&hc.protocol.as_str()) {
                    return Err(invalid(
                        field("health_check.protocol"),
                        format!(
                            "unknown protocol {:?}; expected one of {HEALTH_PROTOCOLS:?}",
                            hc.protocol
                        ),
                    ));
                }
                if !hc.interval_s.is_finite() || hc.interval_s <= 0.0 {
                    return Err(invalid(
                        field("health_check.interval_s"),
                        format!("must be more than 0, got {}", hc.interval_s),
                    ));
                }
                if !hc.grace_period_s.is_finite() || hc.grace_period_s < 0.0 {
                    return Err(invalid(
                        field("health_check.grace_period_s"),
                        format!("must be non-negative, got {}", hc.grace_period_s),
                    ));
                }
                if hc.max_consecutive_failures == 0 {
                    return Err(invalid(
                        field("health_check.max_consecutive_failures"),
                        "must be at least 1".into(),
                    ));
                }
            }
        }
        for app in self.expanded_apps() {
            if !ids.insert(app.id.clone()) {
                return Err(invalid(
                    "apps".into(),
                    format!("app id {} appears more than once", app.id),
                ));
            }
        }
        for id in &self.faults.never_healthy_apps {
            if !ids.contains(id) {
                return Err(invalid(
                    "faults.never_healthy_apps".into(),
                    format!("{id} is not an app of this scenario"),
                ));
            }
        }
        for id in &self.faults.failing_health_checks {
            let field = || "faults.failing_health_checks".to_string();
            match self.expanded_apps().into_iter().find(|app| app.id == *id) {
                None => {
                    return Err(invalid(
                        field(),
                        format!("{id} is not an app of this scenario"),
                    ));
                }
                Some(app) if app.spec.health_check.is_none() => {
                    return Err(invalid(
                        field(),
                        format!("{id} has no health check, so its tasks cannot fail one"),
                    ));
                }
                Some(_) => {}
            }
        }
        self.faults
            .check_bad_images(latest)
            .map_err(|message| invalid("faults.bad_image".into(), message))?;
        Ok(())
    }
}

/// The defaults, one function each because serde wants functions.
pub(crate) mod defaults {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::world::ImageEffect;

    const MINIMAL: &str = r#"
        [group]
        name = "agents"
        min_size = 3
        max_size = 6
        desired_capacity = 3

        [[apps]]
        id = "/web"
        instances = 2
    "#;

    fn refused(text: &str) -> String {
        match Scenario::from_toml(text, "test.toml") {
            Ok(_) => panic!("scenario was accepted:\n{text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_minimal_scenario_gets_the_real_systems_defaults() {
        let s = Scenario::from_toml(MINIMAL, "minimal").expect("valid");
        assert_eq!(s.timings.instance_boot_s, 90.0);
        assert_eq!(s.timings.agent_ping_timeout_s, 15.0);
        assert_eq!(s.timings.max_agent_ping_timeouts, 5);
        assert_eq!(s.group.availability_zones.len(), 3);
        let app = &s.apps[0];
        assert_eq!((app.cpus, app.mem), (1.0, 128.0));
        assert_eq!(app.min_health_capacity, 1.0);
        assert_eq!(app.backoff_factor, 1.15);
        assert_eq!(app.max_launch_delay_s, 3600.0);
        assert!(app.health_check.is_none());
    }

    #[test]
    fn api_faults_are_read_from_the_scenario_and_bad_rates_refused() {
        let text = format!(
            "{MINIMAL}\n[api_faults]\naws_throttle_rate = 0.2\n[api_faults.marathon]\nerror_rate = 0.1\nlatency_ms = 50\n"
        );
        let s = Scenario::from_toml(&text, "faulty").expect("valid");
        assert_eq!(s.api_faults.aws_throttle_rate, 0.2);
        assert_eq!(s.api_faults.marathon.latency_ms, 50);
        let err = refused(&text.replace("error_rate = 0.1", "error_rate = 2.0"));
        assert!(
            err.contains("api_faults.marathon.error_rate: 2 is not a share between 0 and 1"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_field_is_refused_by_name() {
        let text = MINIMAL.replace("instances = 2", "instances = 2\nhealthchecks = true");
        let message = refused(&text);
        assert!(message.contains("healthchecks"), "{message}");
    }

    #[test]
    fn a_missing_required_field_is_refused_by_name() {
        let text = MINIMAL.replace("desired_capacity = 3", "");
        let message = refused(&text);
        assert!(message.contains("desired_capacity"), "{message}");
    }

    #[test]
    fn a_field_of_the_wrong_type_is_refused_by_name() {
        let text = MINIMAL.replace("instances = 2", "instances = \"two\"");
        let message = refused(&text);
        assert!(message.contains("instances"), "{message}");
    }

    #[test]
    fn a_desired_capacity_above_max_is_refused() {
        let text = MINIMAL.replace("desired_capacity = 3", "desired_capacity = 7");
        let message = refused(&text);
        assert!(message.contains("group.desired_capacity"), "{message}");
    }

    #[test]
    fn an_unsimulated_constraint_is_refused() {
        let text = MINIMAL.replace(
            "instances = 2",
            "instances = 2\nconstraints = [[\"rack\", \"GROUP_BY\"]]",
        );
        let message = refused(&text);
        assert!(message.contains("constraints"), "{message}");
    }

    #[test]
    fn a_min_health_capacity_above_one_is_refused() {
        let text = MINIMAL.replace("instances = 2", "instances = 2\nmin_health_capacity = 1.5");
        let message = refused(&text);
        assert!(message.contains("min_health_capacity"), "{message}");
    }

    #[test]
    fn a_counted_app_without_a_placeholder_is_refused() {
        let text = MINIMAL.replace("instances = 2", "instances = 2\ncount = 3");
        let message = refused(&text);
        assert!(message.contains("{n}"), "{message}");
    }

    #[test]
    fn a_fault_naming_an_unknown_app_is_refused() {
        let text = format!("{MINIMAL}\n[faults]\nnever_healthy_apps = [\"/nope\"]\n");
        let message = refused(&text);
        assert!(message.contains("faults.never_healthy_apps"), "{message}");
    }

    #[test]
    fn failing_health_checks_need_an_app_with_a_health_check() {
        let text = format!("{MINIMAL}\n[faults]\nfailing_health_checks = [\"/web\"]\n");
        let message = refused(&text);
        assert!(
            message.contains("faults.failing_health_checks"),
            "{message}"
        );
        assert!(message.contains("/web has no health check"), "{message}");
        let checked = MINIMAL.replace("instances = 2", "instances = 2\n[apps.health_check]");
        let text = format!("{checked}\n[faults]\nfailing_health_checks = [\"/web\"]\n");
        Scenario::from_toml(&text, "test.toml").expect("an app with a check is accepted");
    }

    #[test]
    fn a_launch_template_names_its_versions_and_the_group_one_of_them() {
        let s = Scenario::from_toml(MINIMAL, "minimal").expect("valid");
        let lt = &s.group.launch_template;
        assert_eq!(
            (lt.version.as_str(), lt.latest(), lt.default_number()),
            ("1", 1, 1)
        );
        let with = |table: &str| format!("{MINIMAL}\n[group.launch_template]\n{table}\n");
        let s = Scenario::from_toml(&with("version = \"3\""), "t").expect("valid");
        assert_eq!(
            s.group.launch_template.latest(),
            3,
            "the version is the latest"
        );
        let s = Scenario::from_toml(&with("version = \"$Latest\"\nlatest_version = 4"), "t")
            .expect("valid");
        assert_eq!(s.group.launch_template.latest(), 4);
        for (table, field) in [
            (
                "version = \"3\"\nlatest_version = 2",
                "group.launch_template.version",
            ),
            ("version = \"latest\"", "group.launch_template.version"),
            ("version = \"0\"", "group.launch_template.version"),
            ("latest_version = 0", "group.launch_template.latest_version"),
            (
                "latest_version = 2\ndefault_version = 3",
                "group.launch_template.default_version",
            ),
        ] {
            let message = refused(&with(table));
            assert!(message.contains(field), "{table}: {message}");
        }
    }

    #[test]
    fn a_bad_image_is_one_table_or_a_list_of_the_templates_versions() {
        let base = format!("{MINIMAL}\n[group.launch_template]\nlatest_version = 3\n");
        let one = format!(
            "{base}\n[faults]\nbad_image = {{ version = \"2\", effect = \"unhealthy\" }}\n"
        );
        let s = Scenario::from_toml(&one, "one").expect("valid");
        assert_eq!(s.faults.image_effect("2"), Some(ImageEffect::Unhealthy));
        assert_eq!(s.faults.image_effect("1"), None);
        let many = format!(
            "{base}\n[faults]\nbad_image = [{{ version = \"2\", effect = \"crash\" }}, {{ version = \"3\", effect = \"unregistered\" }}]\n"
        );
        let s = Scenario::from_toml(&many, "many").expect("valid");
        assert_eq!(s.faults.image_effect("2"), Some(ImageEffect::Crash));
        assert_eq!(s.faults.image_effect("3"), Some(ImageEffect::Unregistered));
        for (bad, expected) in [
            (
                one.replace("\"2\"", "\"4\""),
                "faults.bad_image: version \"4\" is not a version of the launch template (1 to 3)",
            ),
            (
                many.replace("\"3\", effect", "\"2\", effect"),
                "faults.bad_image: version 2 appears more than once",
            ),
            (one.replace("unhealthy", "sick"), "unknown variant `sick`"),
            (one.replace("effect", "effects"), "unknown field `effects`"),
        ] {
            let message = refused(&bad);
            assert!(message.contains(expected), "{message}");
        }
    }

    #[test]
    fn the_bad_image_scenario_starts_on_a_good_image_with_the_bad_one_published() {
        let s = Scenario::load("bad-image").expect("shipped");
        let lt = &s.group.launch_template;
        assert_eq!((lt.version.as_str(), lt.latest()), ("1", 2));
        assert_eq!(s.faults.image_effect("2"), Some(ImageEffect::Unhealthy));
        assert_eq!(s.faults.image_effect("1"), None);
        assert_eq!(s.group.desired_capacity, 6);
        assert_eq!(s.group.availability_zones.len(), 3);
        let apps = s.expanded_apps();
        assert!(apps.iter().any(|a| a.spec.health_check.is_none()));
        assert!(apps.iter().any(|a| a.spec.instances == 1));
        assert!(
            apps.iter()
                .any(|a| a.spec.instances >= 3 && a.spec.min_health_capacity <= 0.5)
        );
    }

    #[test]
    fn an_unknown_suspended_process_is_refused() {
        let text = MINIMAL.replace(
            "desired_capacity = 3",
            "desired_capacity = 3\nsuspended_processes = [\"AZRebalancing\"]",
        );
        let message = refused(&text);
        assert!(message.contains("AZRebalancing"), "{message}");
    }

    #[test]
    fn counted_apps_expand_with_zero_padded_numbers() {
        let text = MINIMAL.replace("id = \"/web\"", "id = \"/svc/app-{n}\"\ncount = 12");
        let s = Scenario::from_toml(&text, "counted").expect("valid");
        let apps = s.expanded_apps();
        assert_eq!(apps.len(), 12);
        assert_eq!(apps[0].id, "/svc/app-01");
        assert_eq!(apps[11].id, "/svc/app-12");
        assert_eq!(s.task_count(), 24);
    }

    #[test]
    fn every_shipped_scenario_loads_by_name() {
        for name in builtin_names() {
            let s = Scenario::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!s.apps.is_empty(), "{name} has apps");
        }
    }

    #[test]
    fn a_scenario_loads_from_a_path_and_a_missing_path_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, MINIMAL).expect("write");
        let s = Scenario::load(path.to_str().expect("utf-8 path")).expect("loads");
        assert_eq!(s.group.name, "agents");
        let missing = Scenario::load("/definitely/not/here.toml").expect_err("missing");
        assert_eq!(missing.label(), "scenario_unreadable");
    }
}
