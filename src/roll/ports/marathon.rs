//! The Marathon port: what the roll asks of the scheduler (apps with their
//! tasks, running deployments, a scale-up for a surge, moving tasks off an
//! agent) and the plain domain types it gets back. The HTTP adapter is
//! `crate::marathon`; no wire type crosses this trait.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// An app as the roll judges it: its target, Marathon's own counts and the
/// tasks it runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct App {
    /// Absolute path id, e.g. `/a/b`.
    pub(crate) id: String,
    /// The target instance count; 0 means the app is suspended.
    pub(crate) instances: u32,
    pub(crate) tasks_staged: u32,
    pub(crate) tasks_running: u32,
    /// Always 0 for an app without health checks: Marathon counts a task
    /// healthy only when it has health results and all are alive.
    pub(crate) tasks_healthy: u32,
    pub(crate) tasks_unhealthy: u32,
    /// How many health checks the app defines; 0 changes what "healthy"
    /// means for it (running counts instead).
    pub(crate) health_checks: usize,
    /// The longest `intervalSeconds` of its health checks, if it has any.
    pub(crate) health_check_interval: Option<Duration>,
    /// Ids of the deployments that touch the app right now; an app with
    /// one is locked (changes answer 409) and not settled.
    pub(crate) deployments: Vec<String>,
    pub tasks: Vec<Task>,
    /// How soon Marathon replaces the tasks of an agent that stops
    /// answering; decides how long a terminated agent's tasks stay counted.
    pub(crate) unreachable_strategy: UnreachableStrategy,
    /// `upgradeStrategy.minimumHealthCapacity` (0..=1); `None` when
    /// Marathon left it out (its default is 1). With `--honor-min-health`
    /// the roll keeps ceil(instances x this) healthy.
    pub(crate) min_health_capacity: Option<f64>,
    /// The app's latest failed task (`lastTaskFailure`), when Marathon
    /// keeps one: a failed task leaves the task list, this stays.
    pub(crate) last_task_failure: Option<TaskFailure>,
    /// `acceptedResourceRoles`: the roles whose resources its tasks may
    /// use (`*`: unreserved ones; DC/OS public agents offer
    /// `slave_public`). `None` when the app leaves it to Marathon's
    /// `--default_accepted_resource_roles`, which DC/OS sets to `*`.
    pub(crate) accepted_resource_roles: Option<Vec<String>>,
    /// Why the app must never run more tasks than its instance count;
    /// `None` when a surge may add one. Such an app moves by kill and
    /// relaunch, down until its relaunch is up.
    pub(crate) no_surge: Option<NoSurge>,
    /// Its labels with string values (Marathon's are strings): DC/OS
    /// marks its SDK schedulers with them.
    pub(crate) labels: BTreeMap<String, String>,
    /// The most of its tasks one agent may run, from a `hostname`
    /// constraint (`UNIQUE`: 1; `MAX_PER n`: n), or 1 when each task
    /// needs a fixed host port; `None` when neither. A capped roll's
    /// batch opens no more old agents holding its tasks than the new
    /// agents have places for.
    pub(crate) per_host: Option<u32>,
}

/// Why an app is never surged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoSurge {
    /// `MARATHON_SINGLE_INSTANCE_APP: "true"`: Marathon refuses more than
    /// one instance (422); every DC/OS SDK scheduler carries it.
    SingleInstanceLabel,
    /// `upgradeStrategy` {minimumHealthCapacity 0, maximumOverCapacity
    /// 0}: its owner asked that it never run an extra task.
    NoOverCapacity,
}

/// The label Marathon reads as "never more than one instance".
pub(crate) const SINGLE_INSTANCE_LABEL: &str = "MARATHON_SINGLE_INSTANCE_APP";

impl NoSurge {
    /// Why, in a few words, for logs and `--dry-run`.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            NoSurge::SingleInstanceLabel => {
                "single-instance app: label MARATHON_SINGLE_INSTANCE_APP"
            }
            NoSurge::NoOverCapacity => "upgradeStrategy 0/0: never over its instance count",
        }
    }

    /// What an app says about surging: its label, else its upgrade
    /// strategy (Marathon's defaults are 1 and 1 when left out).
    pub(crate) fn of(
        labels: &BTreeMap<String, String>,
        min_health_capacity: Option<f64>,
        max_over_capacity: Option<f64>,
    ) -> Option<NoSurge> {
        if labels
            .get(SINGLE_INSTANCE_LABEL)
            .is_some_and(|v| v == "true")
        {
            return Some(NoSurge::SingleInstanceLabel);
        }
        (min_health_capacity == Some(0.0) && max_over_capacity == Some(0.0))
            .then_some(NoSurge::NoOverCapacity)
    }
}

/// A task that ended badly, as Marathon's `lastTaskFailure` says it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TaskFailure {
    pub(crate) task_id: String,
    /// The Mesos agent (`slaveId`) it ran on, when reported.
    pub(crate) agent_id: Option<String>,
    pub(crate) host: Option<String>,
    /// `TASK_FAILED`, `TASK_KILLED`, …
    pub(crate) state: String,
    pub(crate) message: String,
    /// When it ended; `None` when Marathon's timestamp did not parse.
    pub(crate) at: Option<SystemTime>,
}

impl App {
    pub(crate) fn has_health_checks(&self) -> bool {
        self.health_checks > 0
    }
}

/// Marathon's `unreachableStrategy` (≥ 1.4): an object, or the string
/// `"disabled"`; absent in older versions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum UnreachableStrategy {
    /// Not reported (Marathon < 1.4).
    #[default]
    Unknown,
    /// Unreachable tasks are never replaced.
    Disabled,
    /// Replaced `inactive_after_seconds` after becoming unreachable,
    /// expunged after `expunge_after_seconds`.
    After {
        inactive_after_seconds: u64,
        expunge_after_seconds: u64,
    },
}

/// One task of an app.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Task {
    pub(crate) id: String,
    /// The Mesos agent (`slaveId`) it runs on; absent in Marathon < 0.8
    /// responses.
    pub(crate) agent_id: Option<String>,
    pub(crate) host: Option<String>,
    /// The Mesos task state (`TASK_RUNNING`, `TASK_STAGING`, …); absent
    /// before Marathon 1.2, where a set `startedAt` is the only sign of
    /// a running task.
    pub(crate) state: Option<String>,
    /// Whether `startedAt` is set (it is null while the task is staged).
    pub(crate) started: bool,
    /// `startedAt`, when set and readable: how long the task has run.
    pub(crate) started_at: Option<SystemTime>,
    /// One entry per health check; each says whether it currently passes.
    pub(crate) health_results: Vec<HealthResult>,
}

impl Task {
    /// Running, as far as the response tells: `TASK_RUNNING`, or, when the
    /// state is not reported, started.
    pub(crate) fn is_running(&self) -> bool {
        match &self.state {
            Some(state) => state == "TASK_RUNNING",
            None => self.started,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HealthResult {
    pub(crate) alive: bool,
    pub(crate) consecutive_failures: u32,
    /// When the check last passed (`lastSuccess`), if it has.
    pub(crate) last_success: Option<SystemTime>,
    /// When the check last failed (`lastFailure`), if it has.
    pub(crate) last_failure: Option<SystemTime>,
    /// Why it last failed (`lastFailureCause`), if Marathon says.
    pub(crate) last_failure_cause: Option<String>,
}

/// A deployment in progress. It is finished when its id is no longer
/// listed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deployment {
    pub(crate) id: String,
    pub(crate) affected_apps: Vec<String>,
    /// 1-based; `current_step` of `total_steps`.
    pub(crate) current_step: u32,
    pub(crate) total_steps: u32,
}

/// An app in Marathon's launch queue (`GET /v2/queue`): instances it
/// still has to launch, held back by a launch delay while its tasks keep
/// failing (Marathon's backoff).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct QueuedLaunch {
    pub(crate) app: String,
    /// Instances left to launch.
    pub(crate) count: u32,
    /// How long the launch delay still holds them back; zero when it is
    /// over (`overdue`) or there is none.
    pub(crate) delay_left: Duration,
}

/// What `POST /v2/tasks/delete` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KillOutcome {
    /// `scale=false`: the tasks Marathon is killing; it relaunches them
    /// where it can place them.
    Killed(Vec<String>),
    /// `scale=true`: the deployment that scales the apps down.
    Deployment(String),
}

/// What the roll needs from Marathon. Reads are retried on transient
/// failures; writes only when the failure proves Marathon did not act.
pub(crate) trait Marathon {
    /// Every app, with its tasks, counts and deployments. Shared: an
    /// adapter may hand out the same answer again while Marathon says
    /// nothing changed.
    fn apps(&self) -> impl Future<Output = Result<Arc<Vec<App>>, MarathonError>> + Send;

    /// One app, with its tasks, counts and deployments.
    fn app(&self, id: &str) -> impl Future<Output = Result<App, MarathonError>> + Send;

    /// The deployments in progress.
    fn deployments(&self) -> impl Future<Output = Result<Vec<Deployment>, MarathonError>> + Send;

    /// The launch queue: apps with instances left to launch, and their
    /// launch delays.
    fn launch_queue(&self)
    -> impl Future<Output = Result<Vec<QueuedLaunch>, MarathonError>> + Send;

    /// Sets the app's instance count to `instances` (an absolute count, so
    /// that re-running the step after a crash asks for the same target
    /// instead of adding one more) and returns the deployment's id. A
    /// deployment already touching the app is `MarathonError::Conflict`;
    /// it is never overridden with `force`.
    fn scale_app(
        &self,
        id: &str,
        instances: u32,
    ) -> impl Future<Output = Result<String, MarathonError>> + Send;

    /// Waits until deployment `id` is no longer listed, for at most
    /// `timeout` (then `MarathonError::DeploymentTimeout`).
    #[cfg(test)]
    fn follow_deployment(
        &self,
        id: &str,
        timeout: Duration,
    ) -> impl Future<Output = Result<(), MarathonError>> + Send;

    /// Cancels deployment `id` without `force`: Marathon stops it and
    /// deploys the app's previous definition back (a surge's scale-up is
    /// undone). Returns the id of that rollback deployment, or `None` when
    /// the deployment is no longer there (finished, or cancelled before).
    fn cancel_deployment(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<String>, MarathonError>> + Send;

    /// Drops the app's launch delay, so that its next launch is not held
    /// back by the failures before (`DELETE /v2/queue/{id}/delay`). An app
    /// not in the queue is not an error.
    fn reset_delay(&self, app: &str) -> impl Future<Output = Result<(), MarathonError>> + Send;

    /// Kills tasks: with `scale` false Marathon relaunches them elsewhere
    /// (moving them off an agent); with `scale` true the apps shrink.
    fn kill_tasks(
        &self,
        task_ids: &[String],
        scale: bool,
    ) -> impl Future<Output = Result<KillOutcome, MarathonError>> + Send;
}

/// Why a Marathon call failed. `operation` names the call, e.g.
/// `GET /v2/apps`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MarathonError {
    /// No configured Marathon answered usefully within the retries
    /// (connection refused, no leader, 5xx); `detail` says what each said.
    #[error("{operation}: no Marathon could serve the request after {attempts} attempts: {detail}")]
    Unavailable {
        operation: &'static str,
        attempts: u32,
        detail: String,
    },
    /// A write was sent but its fate is unknown (timeout, dropped
    /// connection, gateway error): it is not retried, the caller must look.
    #[error(
        "{operation}: sent, but whether Marathon acted is unknown ({detail}); check before repeating"
    )]
    OutcomeUnknown {
        operation: &'static str,
        detail: String,
    },
    /// 409: a deployment already touches the app (`target` names it, or
    /// the tasks the call was about); never overridden with `force`.
    #[error("{operation}: {target} is locked by deployment(s) {}", deployments.join(", "))]
    Conflict {
        operation: &'static str,
        target: String,
        deployments: Vec<String>,
    },
    #[error("{operation}: app {app} does not exist")]
    AppNotFound {
        operation: &'static str,
        app: String,
    },
    /// 401/403: the credentials are missing, wrong or not allowed.
    #[error("{operation}: Marathon refused the credentials (HTTP {status}): {message}")]
    Unauthorized {
        operation: &'static str,
        status: u16,
        message: String,
    },
    /// Any other answer the adapter does not expect (4xx, 3xx).
    #[error("{operation}: Marathon answered HTTP {status}: {message}")]
    Rejected {
        operation: &'static str,
        status: u16,
        message: String,
    },
    /// A 2xx whose body is not what the API documents.
    #[error("{operation}: cannot parse Marathon's answer: {reason}")]
    Unparsable {
        operation: &'static str,
        reason: String,
    },
    #[error("deployment {id} still in progress after {waited:?}")]
    DeploymentTimeout { id: String, waited: Duration },
}

impl MarathonError {
    /// A stable short name, for logs, checkpoints and tests.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            MarathonError::Unavailable { .. } => "unavailable",
            MarathonError::OutcomeUnknown { .. } => "outcome_unknown",
            MarathonError::Conflict { .. } => "conflict",
            MarathonError::AppNotFound { .. } => "app_not_found",
            MarathonError::Unauthorized { .. } => "unauthorized",
            MarathonError::Rejected { .. } => "rejected",
            MarathonError::Unparsable { .. } => "unparsable",
            MarathonError::DeploymentTimeout { .. } => "deployment_timeout",
        }
    }
}
