//! The views the Marathon facade writes: apps, tasks, health results,
//! deployments, the queue, kills; and how the world builds them.

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct HealthCheckView {
    pub(crate) protocol: String,
    pub(crate) grace_period_seconds: f64,
    pub(crate) interval_seconds: f64,
    pub(crate) timeout_seconds: f64,
    pub(crate) max_consecutive_failures: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct HealthCheckResultView {
    pub(crate) alive: bool,
    pub(crate) consecutive_failures: u32,
    pub(crate) first_success_unix_ms: Option<u64>,
    pub(crate) last_success_unix_ms: Option<u64>,
    pub(crate) last_failure_unix_ms: Option<u64>,
    /// Why the last check failed (Marathon's `lastFailureCause`), once one
    /// has.
    pub(crate) last_failure_cause: Option<String>,
    /// The task's id (`instanceId` in Marathon ≥ 1.5, `taskId` before).
    pub(crate) task_id: String,
}

/// An app's `lastTaskFailure`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct TaskFailureView {
    pub(crate) app_id: String,
    pub(crate) task_id: String,
    /// The agent's hostname and id.
    pub(crate) host: String,
    pub(crate) slave_id: String,
    /// `TASK_FAILED`, `TASK_LOST` or `TASK_KILLED` (failed health checks).
    pub(crate) state: &'static str,
    pub(crate) message: String,
    pub(crate) timestamp_unix_ms: u64,
    /// The app version the task ran.
    pub(crate) version_unix_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct TaskView {
    pub(crate) id: String,
    pub(crate) app_id: String,
    pub(crate) host: String,
    pub(crate) ip_address: String,
    pub(crate) slave_id: String,
    /// A Mesos task state, e.g. "TASK_RUNNING".
    pub(crate) state: &'static str,
    pub(crate) staged_unix_ms: u64,
    pub(crate) started_unix_ms: Option<u64>,
    pub(crate) version_unix_ms: u64,
    pub(crate) health_check_results: Vec<HealthCheckResultView>,
    /// The agent's instance's AZ (Marathon's `zone`; `region` is the AZ
    /// without its letter).
    pub(crate) zone: String,
    /// The one host port Marathon took for it from its agent's offer (one
    /// per port of its app: every simulated app has one), held until the
    /// task is gone; no two tasks on an agent share one.
    pub(crate) host_port: u16,
    /// The role its resources are allocated to: Marathon's (`*` unless the
    /// scenario reserves a group to a role).
    pub(crate) role: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct AppView {
    pub(crate) id: String,
    pub(crate) instances: u32,
    pub(crate) cpus: f64,
    pub(crate) mem: f64,
    pub(crate) tasks_staged: u32,
    pub(crate) tasks_running: u32,
    pub(crate) tasks_healthy: u32,
    pub(crate) tasks_unhealthy: u32,
    /// Ids of the deployments touching the app.
    pub(crate) deployments: Vec<String>,
    /// `acceptedResourceRoles` as the app was given it (`None`: Marathon's
    /// default, `--default_accepted_resource_roles`, `*`).
    pub(crate) accepted_resource_roles: Option<Vec<String>>,
    pub(crate) labels: BTreeMap<String, String>,
    /// When its configuration (not its scale) last changed
    /// (`versionInfo.lastConfigChangeAt`).
    pub(crate) config_changed_unix_ms: u64,
    pub(crate) health_checks: Vec<HealthCheckView>,
    pub(crate) minimum_health_capacity: f64,
    pub(crate) maximum_over_capacity: f64,
    pub(crate) constraints: Vec<Vec<String>>,
    pub(crate) backoff_seconds: f64,
    pub(crate) backoff_factor: f64,
    pub(crate) max_launch_delay_seconds: f64,
    /// unreachableStrategy: both 0 (Marathon ≥ 1.5's default).
    pub(crate) unreachable_inactive_after_seconds: u64,
    pub(crate) unreachable_expunge_after_seconds: u64,
    pub(crate) version_unix_ms: u64,
    /// Only with `embed=apps.tasks`.
    pub(crate) tasks: Option<Vec<TaskView>>,
    /// The latest task that ended badly, if any (the facade writes it when
    /// the embeds ask for it).
    pub(crate) last_task_failure: Option<TaskFailureView>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct DeploymentView {
    pub(crate) id: String,
    pub(crate) version_unix_ms: u64,
    pub(crate) affected_apps: Vec<String>,
    /// The one action of the one step, e.g. "ScaleApplication".
    pub(crate) action: &'static str,
    pub(crate) current_step: u32,
    pub(crate) total_steps: u32,
}

/// An app with instances left to launch: an entry of `/v2/queue`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct QueueView {
    pub(crate) app: AppView,
    /// Instances left to launch.
    pub(crate) count: u32,
    /// Simulated ms until the launch delay allows launches again (0 when
    /// none is in force or it has passed).
    pub(crate) delay_left_ms: u64,
    pub(crate) since_unix_ms: u64,
}

/// What `POST /v2/tasks/delete` did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct KillResult {
    pub(crate) killed: Vec<TaskView>,
    /// Ids Marathon does not know (ignored, as Marathon does).
    pub(crate) unknown: Vec<String>,
    /// With `scale=true`: the deployment that scales the apps down.
    pub(crate) deployment_id: Option<String>,
}

impl HealthSpec {
    /// The check as Marathon writes it.
    pub(super) fn view(&self) -> HealthCheckView {
        HealthCheckView {
            protocol: self.protocol.clone(),
            grace_period_seconds: self.grace_ms as f64 / 1000.0,
            interval_seconds: self.interval_ms as f64 / 1000.0,
            timeout_seconds: self.timeout_s,
            max_consecutive_failures: self.max_failures,
        }
    }
}

impl World {
    pub(super) fn app_view(&self, a: AppIdx, embed_tasks: bool) -> AppView {
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
            labels: app.labels.clone(),
            config_changed_unix_ms: self.unix_ms(app.config_changed),
            health_checks: app.health.iter().map(HealthSpec::view).collect(),
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

    pub(super) fn app_tasks(&self, a: AppIdx) -> Vec<TaskView> {
        self.marathon.apps[a]
            .tasks
            .iter()
            .map(|&k| self.task_view(k))
            .collect()
    }

    pub(super) fn task_view(&self, key: TaskKey) -> TaskView {
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
}
