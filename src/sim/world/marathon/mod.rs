//! Marathon: apps, their tasks (staging → running → healthy), health
//! checks with grace periods, relaunch after TASK_UNREACHABLE/LOST
//! (unreachableStrategy 0/0), the launch delay of Marathon's rate limiter
//! (see [`LaunchDelay`]), deployments (a change of `instances` is one; a
//! second change to the app meanwhile is a conflict) and task kills. Counts
//! follow Marathon's rules: without health checks `tasksHealthy` stays 0.
//! Each app keeps its `lastTaskFailure` as Marathon's `TaskFailure` does
//! (a task failed, lost, or killed for failing its health checks), and a
//! task placed on an agent of a bad image (`Faults::bad_image`) fails as
//! that image makes it.
//!
//! Here Marathon's state and its views; `api` the calls the Marathon facade
//! makes, `views` how apps and tasks are shown, `tasks` a task's life
//! (placement, start, checks, ends, relaunches) and the counts it moves,
//! `app_update` what `PUT /v2/apps/{id}` changes, `bus` the events
//! `/v2/events` streams.

mod api;
mod app_update;
mod bus;
mod tasks;
mod views;

pub(crate) use app_update::AppChange;
pub(crate) use bus::{BusEvent, BusKind, Read as BusRead};
pub(crate) use views::{
    AppView, DeploymentView, HealthCheckResultView, HealthCheckView, KillResult, QueueView,
    TaskFailureView, TaskView,
};

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use serde::Serialize;

use super::World;
use super::agents::to_milli;
use super::clock::SimTime;
use super::events::{AgentIdx, AppIdx, Event, TaskKey};
use super::faults::ImageEffect;
use crate::sim::scenario::{ExpandedApp, millis};

/// How long a task on a crashing image runs before it fails: "a few
/// seconds", long enough to be seen running, short of any health check's
/// grace period.
const CRASH_AFTER_MS: u64 = 3_000;
/// How long a task of an app without health checks must have run before
/// the monitor lets a scale-up raise the app's floor (roller's default
/// settle time): a task that crashes sooner never served the new count.
const SETTLE_MS: u64 = 30_000;

/// What a task that exits non-zero tells Marathon: the Mesos command
/// executor's status message (`"Command " + WSTRINGIFY(status)`).
const EXITED_MESSAGE: &str = "Command exited with status 1";

#[derive(Clone, Debug)]
pub(crate) struct HealthSpec {
    protocol: String,
    grace_ms: u64,
    interval_ms: u64,
    timeout_s: f64,
    max_failures: u32,
}

impl HealthSpec {
    /// Marathon's `lastFailureCause` for a failed check of this protocol.
    /// Marathon's own HTTP(S) checks write the answer's status
    /// (`response.status.toString()`; a sick app answering 503), its TCP
    /// checks the exception (`getSimpleName: getMessage`; nothing
    /// listening). Mesos-level checks (`MESOS_*`, and `COMMAND`, which
    /// Mesos runs) reach Marathon as a bare unhealthy status, which it
    /// records with an empty cause.
    fn failure_cause(&self) -> &'static str {
        match self.protocol.as_str() {
            "HTTP" | "HTTPS" => "503 Service Unavailable",
            "TCP" => "ConnectException: Connection refused",
            _ => "",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) staged: u32,
    pub(crate) running: u32,
    pub(crate) healthy: u32,
    pub(crate) unhealthy: u32,
}

#[derive(Clone, Debug)]
pub struct App {
    pub(crate) id: String,
    pub(crate) instances: u32,
    /// The instances the floor is computed from: a scale-up raises it only
    /// once the app serves the new count (until then the new tasks are
    /// extra, as Marathon judges capacity against what it replaces), and
    /// for an app without health checks only once every task has run for
    /// the settle time (a surge whose task crashes after a few seconds
    /// never raised the floor); a scale-down lowers it at once.
    pub(crate) floor_instances: u32,
    cpus_f: f64,
    mem_f: f64,
    pub(crate) cpus: u64,
    pub(crate) mem: u64,
    task_start_ms: u64,
    ready_after_ms: u64,
    health: Option<HealthSpec>,
    min_health_capacity: f64,
    max_over_capacity: f64,
    pub(crate) unique: bool,
    pub(crate) colocate: bool,
    /// `acceptedResourceRoles` (`None`: Marathon's default, `*`): the
    /// roles whose resources its tasks may use.
    pub(crate) accepted_roles: Option<Vec<String>>,
    /// Its labels, as given.
    pub(crate) labels: BTreeMap<String, String>,
    /// The single-instance label is set: more than one instance is
    /// refused (422), as Marathon's validation does.
    pub(crate) single_instance: bool,
    /// When its configuration (not its scale) last changed.
    pub(crate) config_changed: SimTime,
    backoff_ms: f64,
    backoff_factor: f64,
    max_delay_ms: u64,
    pub(crate) version: SimTime,
    pub tasks: BTreeSet<TaskKey>,
    pub(crate) counts: Counts,
    pub(crate) delay: Option<LaunchDelay>,
    launch_due_at: Option<SimTime>,
    /// Since when the app has had instances left to launch (Marathon's
    /// launch queue entry), if it has.
    queued_since: Option<SimTime>,
    /// Every version Marathon stored, oldest first.
    versions: Vec<AppVersion>,
    deployment: Option<String>,
    never_healthy: bool,
    /// Under the `failing_health_checks` fault: every check fails.
    failing_checks: bool,
    /// Lineages (first task key, first task id) whose task was lost and
    /// awaits its replacement: the replacement continues the lineage.
    orphans: VecDeque<(TaskKey, String)>,
    /// Marathon's `lastTaskFailure`: the latest task that failed, was lost
    /// or was killed for failing its health checks (kills asked through the
    /// API, scale-downs and drains are not failures). Kept until the app
    /// is gone, as Marathon keeps it.
    last_failure: Option<TaskFailure>,
}

/// One version Marathon stored of an app: when, and what of it can change
/// (`instances` and `acceptedResourceRoles`) as it was then.
#[derive(Clone, Debug)]
pub(crate) struct AppVersion {
    pub(crate) at: SimTime,
    pub(crate) instances: u32,
    pub(crate) accepted_roles: Option<Vec<String>>,
}

/// A task that ended badly, as Marathon's `TaskFailure` records it.
#[derive(Clone, Debug)]
struct TaskFailure {
    task_id: String,
    /// The Mesos state it ended in (`TASK_FAILED`, `TASK_KILLED`, …).
    state: &'static str,
    message: String,
    host: String,
    slave_id: String,
    at: SimTime,
    /// The app's version the task ran.
    version: SimTime,
}

impl App {
    /// ceil(instances × minimumHealthCapacity), guarded against float
    /// noise (10 × 0.7 is 7.000000000000001).
    pub(crate) fn floor(&self) -> u32 {
        (f64::from(self.floor_instances.min(self.instances)) * self.min_health_capacity - 1e-9)
            .ceil()
            .max(0.0) as u32
    }

    /// Whether it may never run a second task: the single-instance label,
    /// or an upgrade strategy of 0 and 0 (its owner's choice).
    pub(crate) fn no_second_task(&self) -> bool {
        self.single_instance || (self.min_health_capacity == 0.0 && self.max_over_capacity == 0.0)
    }

    /// What counts as serving: healthy with health checks, running without.
    pub(crate) fn serving(&self) -> u32 {
        if self.health.is_some() {
            self.counts.healthy
        } else {
            self.counts.running
        }
    }

    /// Instances without a task (Marathon's instances left to launch).
    fn left_to_launch(&self) -> usize {
        (self.instances as usize).saturating_sub(self.tasks.len())
    }

    /// The launch delay in force at `now`: none once Marathon's clean-up
    /// would have dropped it (its reference is more than
    /// `maxLaunchDelaySeconds` old).
    fn delay_at(&self, now: SimTime) -> Option<LaunchDelay> {
        self.delay
            .filter(|d| now <= d.reference.plus_ms(self.max_delay_ms))
    }
}

/// Marathon's rate limiter for one app (`RateLimiter` in Marathon 1.7+):
/// a delay keyed by the app's last config change, so scaling keeps it.
/// - A task ending in a limit-worthy condition (FAILED, ERROR, DROPPED,
///   GONE, FINISHED) sets it to `backoffSeconds` or multiplies it by
///   `backoffFactor`, capped at `maxLaunchDelaySeconds`, counted from now.
///   KILLED (an operator's, a drain's, a failed health check's kill) and
///   UNREACHABLE do not.
/// - A task of the app staging or running moves its reference to now
///   (`advanceDelay`): the next launch waits the whole delay again.
/// - Nothing resets it but time: it is dropped once its reference is more
///   than `maxLaunchDelaySeconds` old, or by a change of the app's config.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LaunchDelay {
    reference: SimTime,
    current_ms: f64,
}

impl LaunchDelay {
    /// When launches may resume.
    pub(crate) fn deadline(&self) -> SimTime {
        self.reference.plus_ms(self.current_ms.round() as u64)
    }
}

/// The delay after one more limit-worthy failure: `backoff` the first
/// time, then the previous one × `factor`, never above `max_ms`.
pub(crate) fn next_delay_ms(
    previous: Option<f64>,
    backoff_ms: f64,
    factor: f64,
    max_ms: u64,
) -> f64 {
    let max = max_ms as f64;
    let next = match previous {
        None => backoff_ms,
        Some(previous) => previous * factor,
    };
    if next.is_finite() { next.min(max) } else { max }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskState {
    Staging,
    Running,
    Killing,
    Unreachable,
    Lost,
    Failed,
}

impl TaskState {
    fn as_mesos(self) -> &'static str {
        match self {
            TaskState::Staging => "TASK_STAGING",
            TaskState::Running => "TASK_RUNNING",
            TaskState::Killing => "TASK_KILLING",
            TaskState::Unreachable => "TASK_UNREACHABLE",
            TaskState::Lost => "TASK_LOST",
            TaskState::Failed => "TASK_FAILED",
        }
    }
}

/// How a task ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskEnd {
    /// Its agent missed its pings: TASK_UNREACHABLE, replaced at once
    /// (unreachableStrategy 0/0), no launch delay.
    Unreachable,
    /// Its machine was brought down (`machine/down`). Whether Mesos tells a
    /// partition-aware Marathon TASK_GONE_BY_OPERATOR (GONE: the launch
    /// delay grows) or TASK_LOST with REASON_SLAVE_REMOVED (which Marathon
    /// reads as unreachable: no delay) was not established; the simulator
    /// takes the harder case and grows the delay.
    Lost,
    /// Killed by an operator or a drain: replaced, no backoff.
    Killed,
    /// Killed with `scale=true` or by a scale-down: not replaced.
    KilledForScale,
    /// Failed on start: TASK_FAILED, the launch delay grows.
    Failed,
    /// Killed by Marathon after too many failed health checks: TASK_KILLED,
    /// which Marathon's rate limiter does not count (no launch delay).
    HealthKilled,
}

#[derive(Clone, Debug, Default)]
struct Health {
    alive: Option<bool>,
    consecutive_failures: u32,
    first_success: Option<SimTime>,
    last_success: Option<SimTime>,
    last_failure: Option<SimTime>,
}

#[derive(Clone, Debug)]
pub struct Task {
    id: String,
    pub(crate) app: AppIdx,
    pub(crate) agent: AgentIdx,
    pub(crate) state: TaskState,
    staged_at: SimTime,
    started_at: Option<SimTime>,
    health: Health,
    lineage: (TaskKey, String),
    /// Launched while the app's never-healthy fault was on, or placed on a
    /// bad image whose tasks never pass a check: its checks never pass.
    doomed: bool,
    /// Placed on a bad image that makes it crash soon after it starts.
    crashes: bool,
    /// A chain of health checks is scheduled for it (checks stop once it
    /// is healthy, unless its app's checks are made to fail).
    checking: bool,
    /// Its host port, taken from its agent's offered range.
    host_port: u16,
}

/// The `ports` range every simulated agent offers (Mesos' default).
pub(crate) const AGENT_PORTS: std::ops::RangeInclusive<u16> = 31_000..=32_000;

#[derive(Clone, Debug)]
pub struct Deployment {
    pub(crate) id: String,
    pub(crate) app: AppIdx,
    version: SimTime,
    /// The app's `instances` and roles before the change: what cancelling
    /// the deployment without `force` restores (Marathon's `plan.revert`).
    pub(crate) original_instances: u32,
    pub(crate) original_roles: Option<Vec<String>>,
    /// Its one step's action: `ScaleApplication`, or `RestartApplication`
    /// for a change of configuration.
    pub(crate) action: &'static str,
}

/// Marathon's state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Marathon {
    pub(crate) apps: Vec<App>,
    pub(crate) by_id: HashMap<String, AppIdx>,
    pub(crate) tasks: HashMap<TaskKey, Task>,
    task_by_id: HashMap<String, TaskKey>,
    next_key: TaskKey,
    pub(crate) deployments: Vec<Deployment>,
    /// The role Marathon registered with (`--mesos_role`; `None`: `*`),
    /// the role its tasks' resources are allocated to.
    pub(crate) role: Option<String>,
    /// Apps missing tasks that found no agent with room.
    pub(crate) waiting: BTreeSet<AppIdx>,
    pub(crate) offer_cycle_scheduled: bool,
    /// What `/v2/events` streams.
    bus: bus::Bus,
}

impl Marathon {
    pub(crate) fn new(apps: &[ExpandedApp], role: Option<&str>) -> Marathon {
        let mut m = Marathon {
            role: role.map(str::to_string),
            ..Marathon::default()
        };
        for app in apps {
            let s = &app.spec;
            let idx = m.apps.len();
            m.apps.push(App {
                id: app.id.clone(),
                instances: s.instances,
                floor_instances: s.instances,
                cpus_f: s.cpus,
                mem_f: s.mem,
                cpus: to_milli(s.cpus),
                mem: to_milli(s.mem),
                task_start_ms: millis(s.task_start_s),
                ready_after_ms: millis(s.ready_after_s),
                health: s.health_check.as_ref().map(|h| HealthSpec {
                    protocol: h.protocol.clone(),
                    grace_ms: millis(h.grace_period_s),
                    interval_ms: millis(h.interval_s).max(1),
                    timeout_s: h.timeout_s,
                    max_failures: h.max_consecutive_failures,
                }),
                min_health_capacity: s.min_health_capacity,
                max_over_capacity: s.max_over_capacity,
                unique: s.unique_hostname(),
                colocate: s.colocate,
                accepted_roles: s.accepted_resource_roles.clone(),
                labels: s.labels.clone(),
                single_instance: s.single_instance(),
                config_changed: SimTime::ZERO,
                backoff_ms: s.backoff_s * 1000.0,
                backoff_factor: s.backoff_factor,
                max_delay_ms: millis(s.max_launch_delay_s),
                version: SimTime::ZERO,
                tasks: BTreeSet::new(),
                counts: Counts::default(),
                delay: None,
                queued_since: None,
                versions: vec![AppVersion {
                    at: SimTime::ZERO,
                    instances: s.instances,
                    accepted_roles: s.accepted_resource_roles.clone(),
                }],
                launch_due_at: None,
                deployment: None,
                never_healthy: false,
                failing_checks: false,
                orphans: VecDeque::new(),
                last_failure: None,
            });
            m.by_id.insert(app.id.clone(), idx);
        }
        m
    }

    pub(crate) fn refresh_never_healthy(&mut self, ids: &[String]) {
        for app in &mut self.apps {
            app.never_healthy = ids.contains(&app.id);
        }
    }

    /// Whether the app exists and has a health check (what the
    /// `failing_health_checks` fault needs).
    pub(crate) fn has_health_check(&self, id: &str) -> Option<bool> {
        let &a = self.by_id.get(id)?;
        Some(self.apps[a].health.is_some())
    }
}

/// A Marathon error (the facade maps them to 404/409).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MarathonError {
    #[error("{action}: App '{app}' does not exist")]
    AppNotFound { action: &'static str, app: String },
    #[error("{action}: App is locked by one or more deployments: {deployments:?} (app {app})")]
    DeploymentConflict {
        action: &'static str,
        app: String,
        deployments: Vec<String>,
    },
    #[error("{action}: DeploymentPlan {id} does not exist")]
    DeploymentNotFound { action: &'static str, id: String },
    /// Marathon's validation refused the app as changed (422): the path
    /// and the error, in Marathon's words.
    #[error("{action}: Object is not valid: {path}: {error}")]
    Invalid {
        action: &'static str,
        path: &'static str,
        error: &'static str,
    },
}

impl MarathonError {
    #[cfg(test)]
    pub(crate) fn label(&self) -> &'static str {
        match self {
            MarathonError::AppNotFound { .. } => "app_not_found",
            MarathonError::DeploymentConflict { .. } => "deployment_conflict",
            MarathonError::DeploymentNotFound { .. } => "deployment_not_found",
            MarathonError::Invalid { .. } => "invalid",
        }
    }
}

impl World {
    /// The role Marathon registered with (`--mesos_role`): `*`, or the
    /// role the scenario's groups reserve their agents to (DC/OS:
    /// `slave_public`).
    pub(crate) fn marathon_role(&self) -> &str {
        self.marathon.role.as_deref().unwrap_or("*")
    }

    /// The framework id Marathon registered with the master under: what
    /// `/v2/info` answers as `frameworkId` and the master lists its tasks
    /// under. Mesos' shape, `<uuid>-0000`, stable across runs.
    pub(crate) fn marathon_framework_id(&self) -> String {
        format!(
            "{}-0000",
            uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, b"roller-sim-marathon")
        )
    }
}
