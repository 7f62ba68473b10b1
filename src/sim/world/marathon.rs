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

use std::collections::{BTreeSet, HashMap, VecDeque};

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
pub(crate) struct App {
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
    /// When its configuration (not its scale) last changed.
    pub(crate) config_changed: SimTime,
    backoff_ms: f64,
    backoff_factor: f64,
    max_delay_ms: u64,
    pub(crate) version: SimTime,
    pub(crate) tasks: BTreeSet<TaskKey>,
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
pub(crate) struct Task {
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
pub const AGENT_PORTS: std::ops::RangeInclusive<u16> = 31_000..=32_000;

#[derive(Clone, Debug)]
pub(crate) struct Deployment {
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
pub enum MarathonError {
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
}

impl MarathonError {
    pub fn label(&self) -> &'static str {
        match self {
            MarathonError::AppNotFound { .. } => "app_not_found",
            MarathonError::DeploymentConflict { .. } => "deployment_conflict",
            MarathonError::DeploymentNotFound { .. } => "deployment_not_found",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HealthCheckView {
    pub protocol: String,
    pub grace_period_seconds: f64,
    pub interval_seconds: f64,
    pub timeout_seconds: f64,
    pub max_consecutive_failures: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HealthCheckResultView {
    pub alive: bool,
    pub consecutive_failures: u32,
    pub first_success_unix_ms: Option<u64>,
    pub last_success_unix_ms: Option<u64>,
    pub last_failure_unix_ms: Option<u64>,
    /// Why the last check failed (Marathon's `lastFailureCause`), once one
    /// has.
    pub last_failure_cause: Option<String>,
    /// The task's id (`instanceId` in Marathon ≥ 1.5, `taskId` before).
    pub task_id: String,
}

/// An app's `lastTaskFailure`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskFailureView {
    pub app_id: String,
    pub task_id: String,
    /// The agent's hostname and id.
    pub host: String,
    pub slave_id: String,
    /// `TASK_FAILED`, `TASK_LOST` or `TASK_KILLED` (failed health checks).
    pub state: &'static str,
    pub message: String,
    pub timestamp_unix_ms: u64,
    /// The app version the task ran.
    pub version_unix_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskView {
    pub id: String,
    pub app_id: String,
    pub host: String,
    pub ip_address: String,
    pub slave_id: String,
    /// A Mesos task state, e.g. "TASK_RUNNING".
    pub state: &'static str,
    pub staged_unix_ms: u64,
    pub started_unix_ms: Option<u64>,
    pub version_unix_ms: u64,
    pub health_check_results: Vec<HealthCheckResultView>,
    /// The agent's instance's AZ (Marathon's `zone`; `region` is the AZ
    /// without its letter).
    pub zone: String,
    /// The one host port Marathon took for it from its agent's offer (one
    /// per port of its app: every simulated app has one), held until the
    /// task is gone; no two tasks on an agent share one.
    pub host_port: u16,
    /// The role its resources are allocated to: Marathon's (`*` unless the
    /// scenario reserves a group to a role).
    pub role: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppView {
    pub id: String,
    pub instances: u32,
    pub cpus: f64,
    pub mem: f64,
    pub tasks_staged: u32,
    pub tasks_running: u32,
    pub tasks_healthy: u32,
    pub tasks_unhealthy: u32,
    /// Ids of the deployments touching the app.
    pub deployments: Vec<String>,
    /// `acceptedResourceRoles` as the app was given it (`None`: Marathon's
    /// default, `--default_accepted_resource_roles`, `*`).
    pub accepted_resource_roles: Option<Vec<String>>,
    /// When its configuration (not its scale) last changed
    /// (`versionInfo.lastConfigChangeAt`).
    pub config_changed_unix_ms: u64,
    pub health_checks: Vec<HealthCheckView>,
    pub minimum_health_capacity: f64,
    pub maximum_over_capacity: f64,
    pub constraints: Vec<Vec<String>>,
    pub backoff_seconds: f64,
    pub backoff_factor: f64,
    pub max_launch_delay_seconds: f64,
    /// unreachableStrategy: both 0 (Marathon ≥ 1.5's default).
    pub unreachable_inactive_after_seconds: u64,
    pub unreachable_expunge_after_seconds: u64,
    pub version_unix_ms: u64,
    /// Only with `embed=apps.tasks`.
    pub tasks: Option<Vec<TaskView>>,
    /// The latest task that ended badly, if any (the facade writes it when
    /// the embeds ask for it).
    pub last_task_failure: Option<TaskFailureView>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeploymentView {
    pub id: String,
    pub version_unix_ms: u64,
    pub affected_apps: Vec<String>,
    /// The one action of the one step, e.g. "ScaleApplication".
    pub action: &'static str,
    pub current_step: u32,
    pub total_steps: u32,
}

/// An app with instances left to launch: an entry of `/v2/queue`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueView {
    pub app: AppView,
    /// Instances left to launch.
    pub count: u32,
    /// Simulated ms until the launch delay allows launches again (0 when
    /// none is in force or it has passed).
    pub delay_left_ms: u64,
    pub since_unix_ms: u64,
}

/// What `POST /v2/tasks/delete` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KillResult {
    pub killed: Vec<TaskView>,
    /// Ids Marathon does not know (ignored, as Marathon does).
    pub unknown: Vec<String>,
    /// With `scale=true`: the deployment that scales the apps down.
    pub deployment_id: Option<String>,
}

impl World {
    // ----- the API the Marathon facade calls -----

    /// `/v2/apps` (with counts and deployments; tasks when `embed_tasks`).
    pub fn apps(&self, embed_tasks: bool) -> Vec<AppView> {
        (0..self.marathon.apps.len())
            .map(|a| self.app_view(a, embed_tasks))
            .collect()
    }

    /// `/v2/apps/{id}`.
    pub fn app(&self, id: &str, embed_tasks: bool) -> Result<AppView, MarathonError> {
        let a = self.app_idx("get_app", id)?;
        Ok(self.app_view(a, embed_tasks))
    }

    /// `/v2/tasks`: every task Marathon knows, by app.
    pub fn tasks(&self) -> Vec<TaskView> {
        (0..self.marathon.apps.len())
            .flat_map(|a| self.app_tasks(a))
            .collect()
    }

    /// `/v2/queue`: the apps with instances left to launch, each with what
    /// is left and how long its launch delay still holds them back.
    pub fn queue(&self) -> Vec<QueueView> {
        (0..self.marathon.apps.len())
            .filter_map(|a| {
                let app = &self.marathon.apps[a];
                let since = app.queued_since?;
                let count = app.left_to_launch();
                if count == 0 {
                    return None;
                }
                let delay_left_ms = self
                    .launch_delay(a)
                    .map_or(0, |(_, deadline)| deadline.since(self.now));
                Some(QueueView {
                    app: self.app_view(a, false),
                    count: u32::try_from(count).unwrap_or(u32::MAX),
                    delay_left_ms,
                    since_unix_ms: self.unix_ms(since),
                })
            })
            .collect()
    }

    /// `DELETE /v2/queue/{id}/delay`: drops the app's launch delay so its
    /// queued instances launch now. False when the app has nothing queued
    /// (or does not exist), as Marathon answers 404 then.
    pub fn reset_launch_delay(&mut self, id: &str) -> bool {
        let Ok(a) = self.app_idx("reset_delay", id) else {
            return false;
        };
        let app = &self.marathon.apps[a];
        if app.queued_since.is_none() || app.left_to_launch() == 0 {
            return false;
        }
        self.marathon.apps[a].delay = None;
        self.launch_missing(a);
        true
    }

    /// `GET /v2/apps/{id}/versions`: the app's stored versions (Unix ms),
    /// newest first.
    pub fn app_versions(&self, id: &str) -> Result<Vec<u64>, MarathonError> {
        let a = self.app_idx("app_versions", id)?;
        Ok(self.marathon.apps[a]
            .versions
            .iter()
            .rev()
            .map(|v| self.unix_ms(v.at))
            .collect())
    }

    /// `GET /v2/apps/{id}/versions/{version}`: the app as it was at that
    /// version (Unix ms), None for a version it never had.
    pub fn app_at_version(
        &self,
        id: &str,
        version_unix_ms: u64,
    ) -> Result<Option<AppView>, MarathonError> {
        let a = self.app_idx("app_version", id)?;
        let app = &self.marathon.apps[a];
        Ok(app
            .versions
            .iter()
            .find(|v| self.unix_ms(v.at) == version_unix_ms)
            .map(|v| {
                let mut view = self.app_view(a, false);
                view.instances = v.instances;
                view.accepted_resource_roles = v.accepted_roles.clone();
                view.version_unix_ms = self.unix_ms(v.at);
                view
            }))
    }

    pub(crate) fn store_version(&mut self, a: AppIdx) {
        let now = self.now;
        let app = &mut self.marathon.apps[a];
        let version = AppVersion {
            at: now,
            instances: app.instances,
            accepted_roles: app.accepted_roles.clone(),
        };
        match app.versions.last_mut() {
            // Two changes in one millisecond are one version.
            Some(last) if last.at == now => *last = version,
            _ => app.versions.push(version),
        }
    }

    /// `/v2/deployments`, oldest first.
    pub fn deployments(&self) -> Vec<DeploymentView> {
        self.marathon
            .deployments
            .iter()
            .map(|d| DeploymentView {
                id: d.id.clone(),
                version_unix_ms: self.unix_ms(d.version),
                affected_apps: vec![self.marathon.apps[d.app].id.clone()],
                action: d.action,
                current_step: 1,
                total_steps: 1,
            })
            .collect()
    }

    /// `PUT /v2/apps/{id}` with a new `instances`: starts a deployment and
    /// returns its id. Refused while another deployment touches the app
    /// unless `force` (which replaces it, as Marathon's `force=true`).
    pub fn update_app_instances(
        &mut self,
        id: &str,
        instances: u32,
        force: bool,
    ) -> Result<String, MarathonError> {
        const ACTION: &str = "update_app";
        let a = self.app_idx(ACTION, id)?;
        self.take_over_deployment(ACTION, a, force)?;
        let original = self.marathon.apps[a].instances;
        let deployment = self.start_deployment(a, original, "ScaleApplication");
        self.marathon.apps[a].instances = instances;
        let app = &mut self.marathon.apps[a];
        app.floor_instances = app.floor_instances.min(instances);
        self.marathon.apps[a].version = self.now;
        self.store_version(a);
        // A change of `instances` alone is not a config change: Marathon
        // keys the launch delay by the last config change, so it stays.
        self.scale_down_surplus(a);
        self.launch_missing(a);
        self.app_changed(a);
        Ok(deployment)
    }

    /// Before a change to app `a`: refused while a deployment touches it,
    /// unless `force`, which drops that deployment (Marathon's
    /// `force=true`).
    pub(crate) fn take_over_deployment(
        &mut self,
        action: &'static str,
        a: AppIdx,
        force: bool,
    ) -> Result<(), MarathonError> {
        let app = &self.marathon.apps[a];
        if let Some(existing) = &app.deployment {
            if !force {
                return Err(MarathonError::DeploymentConflict {
                    action,
                    app: app.id.clone(),
                    deployments: vec![existing.clone()],
                });
            }
            let existing = existing.clone();
            self.marathon.deployments.retain(|d| d.id != existing);
        }
        Ok(())
    }

    /// `DELETE /v2/deployments/{id}`, as Marathon's `DeploymentsResource`
    /// cancels one. Without `force` the deployment is stopped and a new one
    /// deploys the app's state before it (`plan.revert`, forced over the
    /// one cancelled): for a scale, `instances` goes back and the surplus
    /// is killed as any scale-down kills; its id is returned. With `force`
    /// the deployment is dropped and nothing is rolled back (`None`): the
    /// app keeps the `instances` the deployment set.
    pub fn cancel_deployment(
        &mut self,
        id: &str,
        force: bool,
    ) -> Result<Option<String>, MarathonError> {
        const ACTION: &str = "cancel_deployment";
        let Some(deployment) = self.marathon.deployments.iter().find(|d| d.id == id) else {
            return Err(MarathonError::DeploymentNotFound {
                action: ACTION,
                id: id.to_string(),
            });
        };
        let (a, original) = (deployment.app, deployment.original_instances);
        let original_roles = deployment.original_roles.clone();
        if force {
            self.marathon.deployments.retain(|d| d.id != id);
            if self.marathon.apps[a].deployment.as_deref() == Some(id) {
                self.marathon.apps[a].deployment = None;
            }
            self.app_changed(a);
            return Ok(None);
        }
        self.marathon.deployments.retain(|d| d.id != id);
        if self.marathon.apps[a].accepted_roles != original_roles {
            self.marathon.apps[a].accepted_roles = original_roles;
            self.marathon.apps[a].config_changed = self.now;
        }
        let app_id = self.marathon.apps[a].id.clone();
        self.update_app_instances(&app_id, original, true).map(Some)
    }

    /// `POST /v2/tasks/delete`: kills the tasks. With `scale` the apps'
    /// instances drop by the tasks killed (one deployment); without, the
    /// tasks are replaced (wherever they can be placed).
    pub fn kill_tasks(&mut self, ids: &[String], scale: bool) -> KillResult {
        let mut killed = Vec::new();
        let mut unknown = Vec::new();
        // Each scaled app's `instances` before the kills: what its
        // deployment would restore if cancelled.
        let mut scaled_apps: HashMap<AppIdx, u32> = HashMap::new();
        for id in ids {
            let Some(&key) = self.marathon.task_by_id.get(id) else {
                unknown.push(id.clone());
                continue;
            };
            let task = &self.marathon.tasks[&key];
            if !matches!(task.state, TaskState::Staging | TaskState::Running) {
                continue;
            }
            let app = task.app;
            if scale {
                let a = &mut self.marathon.apps[app];
                scaled_apps.entry(app).or_insert(a.instances);
                a.instances = a.instances.saturating_sub(1);
                a.floor_instances = a.floor_instances.min(a.instances);
            }
            self.end_task(
                key,
                if scale {
                    TaskEnd::KilledForScale
                } else {
                    TaskEnd::Killed
                },
            );
            killed.push(self.task_view(key));
        }
        let mut deployment_id = None;
        let mut scaled_apps: Vec<(AppIdx, u32)> = scaled_apps.into_iter().collect();
        scaled_apps.sort_unstable();
        for (app, original) in scaled_apps {
            self.marathon.apps[app].version = self.now;
            self.store_version(app);
            if self.marathon.apps[app].deployment.is_none() {
                deployment_id = Some(self.start_deployment(app, original, "ScaleApplication"));
            }
            self.app_changed(app);
        }
        KillResult {
            killed,
            unknown,
            deployment_id,
        }
    }

    // ----- internals -----

    pub(crate) fn app_idx(&self, action: &'static str, id: &str) -> Result<AppIdx, MarathonError> {
        let key = if id.starts_with('/') {
            id.to_string()
        } else {
            format!("/{id}")
        };
        self.marathon
            .by_id
            .get(&key)
            .copied()
            .ok_or_else(|| MarathonError::AppNotFound {
                action,
                app: id.to_string(),
            })
    }

    fn app_view(&self, a: AppIdx, embed_tasks: bool) -> AppView {
        let app = &self.marathon.apps[a];
        AppView {
            id: app.id.clone(),
            instances: app.instances,
            cpus: app.cpus_f,
            mem: app.mem_f,
            tasks_staged: app.counts.staged,
            tasks_running: app.counts.running,
            tasks_healthy: app.counts.healthy,
            tasks_unhealthy: app.counts.unhealthy,
            deployments: app.deployment.iter().cloned().collect(),
            accepted_resource_roles: app.accepted_roles.clone(),
            config_changed_unix_ms: self.unix_ms(app.config_changed),
            health_checks: app
                .health
                .iter()
                .map(|h| HealthCheckView {
                    protocol: h.protocol.clone(),
                    grace_period_seconds: h.grace_ms as f64 / 1000.0,
                    interval_seconds: h.interval_ms as f64 / 1000.0,
                    timeout_seconds: h.timeout_s,
                    max_consecutive_failures: h.max_failures,
                })
                .collect(),
            minimum_health_capacity: app.min_health_capacity,
            maximum_over_capacity: app.max_over_capacity,
            constraints: if app.unique {
                vec![vec!["hostname".into(), "UNIQUE".into()]]
            } else {
                Vec::new()
            },
            backoff_seconds: app.backoff_ms / 1000.0,
            backoff_factor: app.backoff_factor,
            max_launch_delay_seconds: app.max_delay_ms as f64 / 1000.0,
            unreachable_inactive_after_seconds: 0,
            unreachable_expunge_after_seconds: 0,
            version_unix_ms: self.unix_ms(app.version),
            tasks: embed_tasks.then(|| self.app_tasks(a)),
            last_task_failure: app.last_failure.as_ref().map(|f| TaskFailureView {
                app_id: app.id.clone(),
                task_id: f.task_id.clone(),
                host: f.host.clone(),
                slave_id: f.slave_id.clone(),
                state: f.state,
                message: f.message.clone(),
                timestamp_unix_ms: self.unix_ms(f.at),
                version_unix_ms: self.unix_ms(f.version),
            }),
        }
    }

    fn app_tasks(&self, a: AppIdx) -> Vec<TaskView> {
        self.marathon.apps[a]
            .tasks
            .iter()
            .map(|&k| self.task_view(k))
            .collect()
    }

    fn task_view(&self, key: TaskKey) -> TaskView {
        let t = &self.marathon.tasks[&key];
        let app = &self.marathon.apps[t.app];
        let agent = &self.mesos.agents[t.agent];
        let health_check_results = match (&app.health, t.health.alive) {
            (Some(spec), Some(alive)) => vec![HealthCheckResultView {
                alive,
                consecutive_failures: t.health.consecutive_failures,
                first_success_unix_ms: t.health.first_success.map(|s| self.unix_ms(s)),
                last_success_unix_ms: t.health.last_success.map(|s| self.unix_ms(s)),
                last_failure_unix_ms: t.health.last_failure.map(|s| self.unix_ms(s)),
                last_failure_cause: t
                    .health
                    .last_failure
                    .map(|_| spec.failure_cause().to_string()),
                task_id: t.id.clone(),
            }],
            _ => Vec::new(),
        };
        TaskView {
            id: t.id.clone(),
            app_id: app.id.clone(),
            host: agent.hostname.clone(),
            ip_address: agent.ip.clone(),
            slave_id: agent.id.clone(),
            state: t.state.as_mesos(),
            staged_unix_ms: self.unix_ms(t.staged_at),
            started_unix_ms: t.started_at.map(|s| self.unix_ms(s)),
            version_unix_ms: self.unix_ms(app.version),
            health_check_results,
            zone: self.groups[agent.group].azs[self.instances[agent.instance].az].clone(),
            host_port: t.host_port,
            role: self.marathon_role().to_string(),
        }
    }

    /// A deployment of app `a`, whose `instances` were `original` before
    /// the change it carries out (its roles are still as they were).
    pub(crate) fn start_deployment(
        &mut self,
        a: AppIdx,
        original: u32,
        action: &'static str,
    ) -> String {
        let id = self.rng.uuid();
        self.marathon.deployments.push(Deployment {
            id: id.clone(),
            app: a,
            version: self.now,
            original_instances: original,
            original_roles: self.marathon.apps[a].accepted_roles.clone(),
            action,
        });
        self.marathon.apps[a].deployment = Some(id.clone());
        id
    }

    /// Kills tasks beyond `instances`: staging ones first, then unhealthy,
    /// then the most recently started (as Marathon prefers).
    pub(crate) fn scale_down_surplus(&mut self, a: AppIdx) {
        let app = &self.marathon.apps[a];
        let live: Vec<TaskKey> = app
            .tasks
            .iter()
            .copied()
            .filter(|k| {
                matches!(
                    self.marathon.tasks[k].state,
                    TaskState::Staging | TaskState::Running
                )
            })
            .collect();
        let surplus = live.len().saturating_sub(app.instances as usize);
        if surplus == 0 {
            return;
        }
        let mut ranked: Vec<(u8, std::cmp::Reverse<SimTime>, TaskKey)> = live
            .iter()
            .map(|&k| {
                let t = &self.marathon.tasks[&k];
                let rank = match (t.state, t.health.alive) {
                    (TaskState::Staging, _) => 0,
                    (_, Some(false)) => 1,
                    _ => 2,
                };
                (
                    rank,
                    std::cmp::Reverse(t.started_at.unwrap_or(t.staged_at)),
                    k,
                )
            })
            .collect();
        ranked.sort();
        for (_, _, k) in ranked.into_iter().take(surplus) {
            self.end_task(k, TaskEnd::KilledForScale);
        }
    }

    /// Creates a task of `a` on `agent`. Initial tasks start running and
    /// healthy at once (the scenario's steady state, whatever the image);
    /// others stage, and suffer the agent's image if it is bad.
    pub(crate) fn start_task(&mut self, a: AppIdx, agent: AgentIdx, initial: bool) -> TaskKey {
        let image = if initial {
            None
        } else {
            self.image_effect_on(agent)
        };
        let key = self.marathon.next_key;
        self.marathon.next_key += 1;
        let app = &mut self.marathon.apps[a];
        let id = format!(
            "{}.{}",
            app.id.trim_start_matches('/').replace('/', "_"),
            self.rng.uuid()
        );
        let lineage = match app.orphans.pop_front() {
            Some(lineage) => {
                self.monitor.task_moved(a, lineage.0, &lineage.1);
                lineage
            }
            None => (key, id.clone()),
        };
        let app = &mut self.marathon.apps[a];
        app.tasks.insert(key);
        let has_health = app.health.is_some();
        let (cpus, mem) = (app.cpus, app.mem);
        // On a bad image a task never passes a check, or (without checks to
        // fail, or on a crashing image) fails soon after it starts.
        let doomed = (app.never_healthy && !initial)
            || (image == Some(ImageEffect::Unhealthy) && has_health);
        let crashes = image == Some(ImageEffect::Crash)
            || (image == Some(ImageEffect::Unhealthy) && !has_health);
        let start_ms = app.task_start_ms;
        let host_port = self.free_port(agent);
        let ag = &mut self.mesos.agents[agent];
        ag.used_cpus += cpus;
        ag.used_mem += mem;
        ag.tasks.insert(key);
        let mut task = Task {
            id: id.clone(),
            app: a,
            agent,
            state: TaskState::Staging,
            staged_at: self.now,
            started_at: None,
            health: Health::default(),
            lineage,
            doomed,
            crashes,
            checking: false,
            host_port,
        };
        if initial {
            task.state = TaskState::Running;
            task.started_at = Some(self.now);
            if has_health {
                task.health.alive = Some(true);
                task.health.first_success = Some(self.now);
                task.health.last_success = Some(self.now);
            }
        } else {
            let start = self.rng.jittered(start_ms, self.timing.jitter);
            self.schedule_in(start, Event::TaskStarted(key));
        }
        self.marathon.tasks.insert(key, task);
        self.marathon.task_by_id.insert(id, key);
        if !initial {
            self.advance_delay(a);
        }
        key
    }

    /// The lowest port of the agent's range no task on it holds (Mesos
    /// offers only free ones).
    fn free_port(&self, agent: AgentIdx) -> u16 {
        let held = self.ports_held(&self.mesos.agents[agent].tasks);
        AGENT_PORTS
            .clone()
            .find(|p| !held.contains(p))
            .unwrap_or(*AGENT_PORTS.start())
    }

    /// The host ports `tasks` (an agent's) hold.
    pub(crate) fn ports_held(&self, tasks: &BTreeSet<TaskKey>) -> BTreeSet<u16> {
        tasks
            .iter()
            .filter_map(|k| self.marathon.tasks.get(k).map(|t| t.host_port))
            .collect()
    }

    /// Marathon's `advanceDelay`: a task of the app staging or running
    /// moves the app's launch delay (if any) to start now.
    fn advance_delay(&mut self, a: AppIdx) {
        let now = self.now;
        let app = &mut self.marathon.apps[a];
        if let Some(delay) = app.delay_at(now) {
            app.delay = Some(LaunchDelay {
                reference: now,
                ..delay
            });
        } else {
            app.delay = None;
        }
    }

    /// The app's launch delay and when launches may resume, if one is in
    /// force (what Marathon's `/v2/queue` reports as `delay`).
    pub(crate) fn launch_delay(&self, a: AppIdx) -> Option<(f64, SimTime)> {
        self.marathon.apps[a]
            .delay_at(self.now)
            .map(|d| (d.current_ms, d.deadline()))
    }

    pub(crate) fn on_task_started(&mut self, key: TaskKey) {
        let Some(task) = self.marathon.tasks.get_mut(&key) else {
            return;
        };
        if task.state != TaskState::Staging {
            return;
        }
        task.state = TaskState::Running;
        task.started_at = Some(self.now);
        let (a, doomed, crashes) = (task.app, task.doomed, task.crashes);
        if crashes {
            self.schedule_in(CRASH_AFTER_MS, Event::TaskCrashes(key));
        }
        match self.marathon.apps[a].health.as_ref().map(|h| h.interval_ms) {
            None if doomed => {
                self.end_task(key, TaskEnd::Failed);
                return;
            }
            None => self.schedule_in(SETTLE_MS, Event::AppSettled(a)),
            Some(interval) => self.schedule_check(key, interval),
        }
        self.advance_delay(a);
        self.app_changed(a);
    }

    /// A health check reports. Failures inside the grace period (before a
    /// first success) are ignored, as Marathon does; after
    /// `maxConsecutiveFailures` the task is killed. Once a task is healthy
    /// its checks stop (they would only keep passing, and stopping keeps
    /// `big` cheap) unless its app's checks are made to fail
    /// (`failing_health_checks`): then a healthy task turns unhealthy.
    pub(crate) fn on_health_check(&mut self, key: TaskKey) {
        let Some(task) = self.marathon.tasks.get(&key) else {
            return;
        };
        if task.state != TaskState::Running {
            return;
        }
        let a = task.app;
        let Some(spec) = self.marathon.apps[a].health.clone() else {
            return;
        };
        let failing = self.marathon.apps[a].failing_checks;
        let started = task.started_at.unwrap_or(self.now);
        let ready = !failing
            && !task.doomed
            && self.now >= started.plus_ms(self.marathon.apps[a].ready_after_ms);
        let in_grace =
            task.health.first_success.is_none() && self.now < started.plus_ms(spec.grace_ms);
        let now = self.now;
        let Some(task) = self.marathon.tasks.get_mut(&key) else {
            return;
        };
        if ready {
            task.health.alive = Some(true);
            task.health.consecutive_failures = 0;
            task.health.first_success.get_or_insert(now);
            task.health.last_success = Some(now);
            task.checking = false;
        } else if in_grace {
            self.schedule_in(spec.interval_ms, Event::HealthCheck(key));
            return;
        } else {
            task.health.alive = Some(false);
            task.health.consecutive_failures += 1;
            task.health.last_failure = Some(now);
            if task.health.consecutive_failures >= spec.max_failures {
                task.checking = false;
                self.end_task(key, TaskEnd::HealthKilled);
                return;
            }
            self.schedule_in(spec.interval_ms, Event::HealthCheck(key));
        }
        self.app_changed(a);
    }

    /// A task on a crashing image exits non-zero while running: TASK_FAILED
    /// (the launch delay grows). A task no longer running is left alone.
    pub(crate) fn on_task_crashes(&mut self, key: TaskKey) {
        if self
            .marathon
            .tasks
            .get(&key)
            .is_some_and(|t| t.state == TaskState::Running)
        {
            self.end_task(key, TaskEnd::Failed);
        }
    }

    /// Starts a chain of health checks for the task, the first in
    /// `interval_ms`.
    fn schedule_check(&mut self, key: TaskKey, interval_ms: u64) {
        if let Some(task) = self.marathon.tasks.get_mut(&key) {
            task.checking = true;
            self.schedule_in(interval_ms, Event::HealthCheck(key));
        }
    }

    /// The `failing_health_checks` fault changed: the listed apps' checks
    /// fail from now on, and their running tasks that had stopped being
    /// checked (healthy ones) are checked again; unlisted apps' checks
    /// pass again.
    pub(crate) fn refresh_failing_checks(&mut self, ids: &[String]) {
        for a in 0..self.marathon.apps.len() {
            let app = &mut self.marathon.apps[a];
            app.failing_checks = ids.contains(&app.id);
            let Some(interval) = app.health.as_ref().map(|h| h.interval_ms) else {
                continue;
            };
            if !app.failing_checks {
                continue;
            }
            let idle: Vec<TaskKey> = app
                .tasks
                .iter()
                .copied()
                .filter(|k| {
                    let t = &self.marathon.tasks[k];
                    t.state == TaskState::Running && !t.checking
                })
                .collect();
            for key in idle {
                self.schedule_check(key, interval);
            }
        }
    }

    /// Ends a task. Failures grow the app's launch delay; the task is
    /// expunged (and, unless scaled away, replaced) after Marathon's
    /// reaction time: ~3 s for unreachable/lost, the kill grace for kills.
    pub(crate) fn end_task(&mut self, key: TaskKey, how: TaskEnd) {
        let Some(task) = self.marathon.tasks.get_mut(&key) else {
            return;
        };
        if !matches!(task.state, TaskState::Staging | TaskState::Running) {
            return;
        }
        task.state = match how {
            TaskEnd::Unreachable => TaskState::Unreachable,
            TaskEnd::Lost => TaskState::Lost,
            TaskEnd::Failed => TaskState::Failed,
            TaskEnd::Killed | TaskEnd::KilledForScale | TaskEnd::HealthKilled => TaskState::Killing,
        };
        let a = task.app;
        let lineage = task.lineage.clone();
        let (task_id, agent) = (task.id.clone(), task.agent);
        self.record_failure(a, task_id, agent, how);
        // Marathon's limit-worthy conditions: FAILED, and GONE for a task
        // whose machine was brought down (see `TaskEnd::Lost`).
        let limit_worthy = matches!(how, TaskEnd::Lost | TaskEnd::Failed);
        let now = self.now;
        let app = &mut self.marathon.apps[a];
        if limit_worthy {
            let previous = app.delay_at(now).map(|d| d.current_ms);
            app.delay = Some(LaunchDelay {
                reference: now,
                current_ms: next_delay_ms(
                    previous,
                    app.backoff_ms,
                    app.backoff_factor,
                    app.max_delay_ms,
                ),
            });
        }
        if how != TaskEnd::KilledForScale {
            app.orphans.push_back(lineage);
        }
        let delay = match how {
            TaskEnd::Unreachable | TaskEnd::Lost => self.timing.unreachable_relaunch_ms,
            TaskEnd::Failed => 0,
            TaskEnd::Killed | TaskEnd::KilledForScale | TaskEnd::HealthKilled => {
                self.timing.kill_ms
            }
        };
        self.schedule_in(delay, Event::TaskExpunged(key));
        self.app_changed(a);
    }

    /// Keeps the app's `lastTaskFailure` when a task ends in what Marathon
    /// records as a failure: a terminal failure state from Mesos
    /// (TASK_FAILED, TASK_LOST, …), or its own kill for failed health
    /// checks (TASK_KILLED, with the last check's cause). Kills asked
    /// through the API, scale-downs, drains (TASK_KILLED) and
    /// TASK_UNREACHABLE are not failures to Marathon.
    fn record_failure(&mut self, a: AppIdx, task_id: String, agent: AgentIdx, how: TaskEnd) {
        let host = self.mesos.agents[agent].hostname.clone();
        let (state, message) = match how {
            TaskEnd::Failed => ("TASK_FAILED", EXITED_MESSAGE.to_string()),
            // The master's words for a task on a machine it brought down
            // (Mesos' `removeSlave`).
            TaskEnd::Lost => (
                "TASK_LOST",
                format!("Slave {host} removed: Operator initiated 'Machine DOWN'"),
            ),
            TaskEnd::HealthKilled => {
                let cause = self.marathon.apps[a]
                    .health
                    .as_ref()
                    .map_or("", HealthSpec::failure_cause);
                (
                    "TASK_KILLED",
                    format!("Task was killed since health check failed. Reason: {cause}"),
                )
            }
            TaskEnd::Unreachable | TaskEnd::Killed | TaskEnd::KilledForScale => return,
        };
        let app = &mut self.marathon.apps[a];
        app.last_failure = Some(TaskFailure {
            task_id,
            state,
            message,
            host,
            slave_id: self.mesos.agents[agent].id.clone(),
            at: self.now,
            version: app.version,
        });
    }

    pub(crate) fn on_task_expunged(&mut self, key: TaskKey) {
        let Some(task) = self.marathon.tasks.remove(&key) else {
            return;
        };
        self.marathon.task_by_id.remove(&task.id);
        let a = task.app;
        let app = &mut self.marathon.apps[a];
        app.tasks.remove(&key);
        let (cpus, mem) = (app.cpus, app.mem);
        let agent = &mut self.mesos.agents[task.agent];
        agent.tasks.remove(&key);
        agent.used_cpus = agent.used_cpus.saturating_sub(cpus);
        agent.used_mem = agent.used_mem.saturating_sub(mem);
        self.app_changed(a);
        self.launch_missing(a);
        self.offers_changed();
    }

    /// Places the app's missing tasks, once its launch delay is over; what
    /// finds no room waits for the next offer cycle.
    pub(crate) fn launch_missing(&mut self, a: AppIdx) {
        let app = &self.marathon.apps[a];
        let missing = app.left_to_launch();
        if missing == 0 {
            self.marathon.apps[a].queued_since = None;
            self.marathon.waiting.remove(&a);
            return;
        }
        let now = self.now;
        let app = &mut self.marathon.apps[a];
        app.queued_since.get_or_insert(now);
        if let Some(at) = app.delay_at(self.now).map(|d| d.deadline())
            && self.now < at
        {
            if app.launch_due_at != Some(at) {
                self.marathon.apps[a].launch_due_at = Some(at);
                self.schedule(at, Event::LaunchDue(a));
            }
            return;
        }
        for _ in 0..missing {
            match self.pick_agent(a) {
                Some(agent) => {
                    self.start_task(a, agent, false);
                }
                None => {
                    self.marathon.waiting.insert(a);
                    self.offers_changed();
                    self.app_changed(a);
                    return;
                }
            }
        }
        self.marathon.apps[a].queued_since = None;
        self.marathon.waiting.remove(&a);
        self.app_changed(a);
    }

    /// After any change to an app's tasks: recount, tell the monitor, and
    /// finish its deployment once every instance serves.
    pub(crate) fn app_changed(&mut self, a: AppIdx) {
        let mut counts = Counts::default();
        // What really serves, which Marathon may not know yet: a task on an
        // instance that is gone serves nobody, however long Mesos takes to
        // notice (or, with the stay-registered fault, never notices).
        let mut really_serving = 0;
        // Every running task of an app without checks has run the settle
        // time (with checks, health says it).
        let mut settled = true;
        // Live tasks on an agent whose resources the app's roles do not
        // take (placement never does it; the monitor checks it).
        let mut misplaced = 0;
        let app = &self.marathon.apps[a];
        let has_health = app.health.is_some();
        for k in &app.tasks {
            let t = &self.marathon.tasks[k];
            if matches!(
                t.state,
                TaskState::Staging | TaskState::Running | TaskState::Killing
            ) && !self.accepted_on(a, t.agent)
            {
                misplaced += 1;
            }
            match t.state {
                TaskState::Staging => counts.staged += 1,
                TaskState::Running => {
                    counts.running += 1;
                    if has_health {
                        match t.health.alive {
                            Some(true) => counts.healthy += 1,
                            Some(false) => counts.unhealthy += 1,
                            None => {}
                        }
                    }
                    settled &=
                        has_health || t.started_at.is_some_and(|s| self.now.since(s) >= SETTLE_MS);
                    let serves = !has_health || t.health.alive == Some(true);
                    if serves && self.agent_host_alive(t.agent) {
                        really_serving += 1;
                    }
                }
                _ => {}
            }
        }
        let app = &mut self.marathon.apps[a];
        app.counts = counts;
        let (serving, instances) = (app.serving(), app.instances);
        let done = app.tasks.len() == instances as usize && serving == instances;
        if done && let Some(id) = app.deployment.take() {
            self.marathon.deployments.retain(|d| d.id != id);
        }
        if done && settled {
            app.floor_instances = app.floor_instances.max(instances);
        }
        let floor = app.floor();
        let target = instances.min(app.floor_instances);
        self.monitor
            .observe_app(a, self.now, really_serving, floor, instances, target);
        self.monitor.observe_misplaced(a, self.now, misplaced);
    }

    /// For the monitor's report: each app's id.
    pub(crate) fn app_id(&self, a: AppIdx) -> &str {
        &self.marathon.apps[a].id
    }
}

impl World {
    /// The role Marathon registered with (`--mesos_role`): `*`, or the
    /// role the scenario's groups reserve their agents to (DC/OS:
    /// `slave_public`).
    pub fn marathon_role(&self) -> &str {
        self.marathon.role.as_deref().unwrap_or("*")
    }

    /// The framework id Marathon registered with the master under: what
    /// `/v2/info` answers as `frameworkId` and the master lists its tasks
    /// under. Mesos' shape, `<uuid>-0000`, stable across runs.
    pub fn marathon_framework_id(&self) -> String {
        format!(
            "{}-0000",
            uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, b"roller-sim-marathon")
        )
    }
}
