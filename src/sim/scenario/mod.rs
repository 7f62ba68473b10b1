//! The scenario format: one TOML file describing a simulated cluster (its
//! timings, Auto Scaling groups, agent shapes, Marathon apps, other
//! frameworks' job runs, DC/OS SDK services and faults), how
//! it is read (strictly: an unknown or malformed field is refused with its
//! name) and the scenarios shipped inside the binary.
//!
//! Every default is the real system's documented default where one exists
//! (Mesos ping timeouts, Marathon health checks and backoff, AWS process
//! names); where the real system has none (how long an app takes to start)
//! the default is a plausible value, said so on the field.

use std::path::Path;

use serde::Deserialize;

use super::shared::ApiFaults;
use super::world::{AlarmSpec, Faults};

mod app;
pub(crate) mod defaults;
mod group;
mod job;
mod mixed;
mod service;
mod timings;
mod validate;
mod warm_pool;

#[cfg(test)]
mod tests;

pub(crate) use app::accepts;
pub(crate) use app::{AppSpec, ExpandedApp};
pub(crate) use group::{
    AgentSpec, GroupSpec, MaintenancePolicySpec, PUBLIC_ROLE, scaling_processes,
};
pub(crate) use group::{HOOK_LAUNCHING, HOOK_TERMINATING, LifecycleHookSpec};
pub(crate) use group::{check_role, resolve_template_version};
pub(crate) use job::JobSpec;
pub(crate) use mixed::MixedInstancesSpec;
pub(crate) use service::{SDK_API_LABEL, SERVICE_NAME_LABEL, ServiceSpec};
pub(crate) use timings::Timings;
pub(crate) use timings::millis;
pub(crate) use warm_pool::WarmPoolSpec;

/// The scenarios embedded in the binary, by name.
const BUILTIN: &[(&str, &str)] = &[
    ("demo", include_str!("../../../tests/scenarios/demo.toml")),
    (
        "msr-55",
        include_str!("../../../tests/scenarios/msr-55.toml"),
    ),
    (
        "hazards",
        include_str!("../../../tests/scenarios/hazards.toml"),
    ),
    ("big", include_str!("../../../tests/scenarios/big.toml")),
    ("huge", include_str!("../../../tests/scenarios/huge.toml")),
    (
        "bad-image",
        include_str!("../../../tests/scenarios/bad-image.toml"),
    ),
    (
        "bad-image-mixed",
        include_str!("../../../tests/scenarios/bad-image-mixed.toml"),
    ),
    (
        "production",
        include_str!("../../../tests/scenarios/production.toml"),
    ),
    (
        "cluster",
        include_str!("../../../tests/scenarios/cluster.toml"),
    ),
    (
        "demo-cluster",
        include_str!("../../../tests/scenarios/demo-cluster.toml"),
    ),
    ("dcos", include_str!("../../../tests/scenarios/dcos.toml")),
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
    pub(crate) fn label(&self) -> &'static str {
        match self {
            ScenarioError::Read { .. } => "scenario_unreadable",
            ScenarioError::Parse { .. } => "scenario_malformed",
            ScenarioError::Invalid { .. } => "scenario_invalid",
        }
    }
}

/// A whole simulated cluster: one or more Auto Scaling groups whose agents
/// register with the same Mesos masters, and the Marathon apps on them.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// What this scenario is for, shown by `roller sim`.
    pub(crate) description: String,
    /// Seeds every random choice (placement, ids, jitter): the same seed
    /// replays the same run.
    pub(crate) seed: u64,
    pub(crate) timings: Timings,
    /// The first group (`[group]`, or the first of `[[groups]]`): the one a
    /// roll of one group is pointed at (`roller sim --write-env` names it).
    pub group: GroupSpec,
    /// The cluster's further groups, in file order (the rest of
    /// `[[groups]]`).
    pub(crate) other_groups: Vec<GroupSpec>,
    /// The agents' shape, unless a group gives its own.
    pub(crate) agent: AgentSpec,
    pub(crate) apps: Vec<AppSpec>,
    /// Job runs of frameworks other than Marathon (`[[jobs]]`).
    pub(crate) jobs: Vec<JobSpec>,
    /// DC/OS SDK data services (`[[services]]`).
    pub(crate) services: Vec<ServiceSpec>,
    pub(crate) faults: Faults,
    /// Errors, latency and throttling the HTTP facades inject from the
    /// start (switchable later through `/sim/faults`).
    pub(crate) api_faults: ApiFaults,
    /// What roller is told about this cluster beyond its endpoints
    /// (`[roller]`): the environment `roller sim --write-env` writes and
    /// the demo rolls with.
    pub(crate) roller: RollerSettings,
    /// CloudWatch alarms (`[[alarms]]`: `name`, `state`, and when it goes
    /// to ALARM, `alarm_at_s` with `alarm_reason`).
    pub(crate) alarms: Vec<AlarmSpec>,
    /// Written as `[[groups]]` (errors then name `groups[i]`), not `[group]`.
    groups_listed: bool,
}

/// A scenario file as written: `[group]` or `[[groups]]`, the rest as in
/// `Scenario`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    #[serde(default)]
    description: String,
    #[serde(default = "defaults::seed")]
    seed: u64,
    #[serde(default)]
    timings: Timings,
    #[serde(default)]
    group: Option<GroupSpec>,
    #[serde(default)]
    groups: Option<Vec<GroupSpec>>,
    #[serde(default)]
    agent: AgentSpec,
    #[serde(default)]
    apps: Vec<AppSpec>,
    #[serde(default)]
    jobs: Vec<JobSpec>,
    #[serde(default)]
    services: Vec<ServiceSpec>,
    #[serde(default)]
    faults: Faults,
    #[serde(default)]
    api_faults: ApiFaults,
    #[serde(default)]
    alarms: Vec<AlarmSpec>,
    #[serde(default)]
    roller: RollerSettings,
}

/// Table `[roller]`: the environment keys a scenario's cluster needs to
/// roll hands-off, as an operator of that cluster would set them (the
/// values are checked by roller when it reads the environment).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RollerSettings {
    /// Termination hooks of the scenario's groups that are roller's to
    /// complete (`complete_lifecycle_hooks`).
    #[serde(default)]
    pub(crate) complete_lifecycle_hooks: Vec<String>,
    /// `standby`: ignore, wait or terminate.
    #[serde(default)]
    pub(crate) standby: Option<String>,
    /// `protected`: replace, ignore or wait.
    #[serde(default)]
    pub(crate) protected: Option<String>,
}

impl Scenario {
    /// An embedded scenario by name, else a file by path.
    pub fn load(name_or_path: &str) -> Result<Scenario, ScenarioError> {
        if let Some((name, text)) = BUILTIN.iter().find(|(name, _)| *name == name_or_path) {
            return Scenario::from_toml(text, name);
        }
        Scenario::from_path(Path::new(name_or_path))
    }

    pub(crate) fn builtin(name: &str) -> Option<Result<Scenario, ScenarioError>> {
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Scenario::from_toml(text, n))
    }

    pub(crate) fn from_path(path: &Path) -> Result<Scenario, ScenarioError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: origin.clone(),
            source,
        })?;
        Scenario::from_toml(&text, &origin)
    }

    /// Parses and validates; `origin` names the scenario in errors.
    pub(crate) fn from_toml(text: &str, origin: &str) -> Result<Scenario, ScenarioError> {
        let file: ScenarioFile = toml::from_str(text).map_err(|e| ScenarioError::Parse {
            origin: origin.to_string(),
            message: e.to_string(),
        })?;
        let groups_listed = file.groups.is_some();
        let mut groups = match (file.group, file.groups) {
            (Some(_), Some(_)) => {
                return Err(ScenarioError::Invalid {
                    origin: origin.to_string(),
                    field: "groups".into(),
                    message: "give either one [group] or [[groups]] tables, not both".into(),
                });
            }
            (Some(one), None) => vec![one],
            (None, Some(many)) => many,
            (None, None) => Vec::new(),
        }
        .into_iter();
        let Some(group) = groups.next() else {
            return Err(ScenarioError::Invalid {
                origin: origin.to_string(),
                field: "groups".into(),
                message:
                    "a scenario needs its Auto Scaling groups: [[groups]] tables, or one [group]"
                        .into(),
            });
        };
        let scenario = Scenario {
            description: file.description,
            seed: file.seed,
            timings: file.timings,
            group,
            other_groups: groups.collect(),
            agent: file.agent,
            apps: file.apps,
            jobs: file.jobs,
            services: file.services,
            faults: file.faults,
            api_faults: file.api_faults,
            roller: file.roller,
            alarms: file.alarms,
            groups_listed,
        };
        scenario.validate(origin)?;
        Ok(scenario)
    }

    /// Every group, the first first.
    pub fn groups(&self) -> impl Iterator<Item = &GroupSpec> {
        std::iter::once(&self.group).chain(&self.other_groups)
    }

    /// The shape of `group`'s agents: its own, else the top-level one.
    pub(crate) fn agent_of<'a>(&'a self, group: &'a GroupSpec) -> &'a AgentSpec {
        group.agent.as_ref().unwrap_or(&self.agent)
    }

    /// The role Marathon registers with (`--mesos_role`): the one role the
    /// groups reserve their agents to, if any (DC/OS: `slave_public`).
    /// Marathon has one role, so a scenario reserves to one at most.
    pub(crate) fn marathon_role(&self) -> Option<&str> {
        self.groups().find_map(|g| g.role.as_deref())
    }

    /// The apps with `count` expanded, in scenario order.
    pub(crate) fn expanded_apps(&self) -> Vec<ExpandedApp> {
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
    #[cfg(test)]
    pub(crate) fn task_count(&self) -> u64 {
        self.apps
            .iter()
            .map(|a| u64::from(a.count) * u64::from(a.instances))
            .sum()
    }
}
