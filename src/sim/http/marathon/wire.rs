//! Marathon's JSON as the simulator writes and reads it, shaped after
//! tests/fixtures/marathon-*.json (Marathon 1.5 and the v2 RAML examples):
//! apps with counts, deployments and tasks, task health results with
//! `instanceId`, deployments with steps, `/v2/info`, `/v2/leader`, an
//! app's `lastTaskFailure` (Marathon's `TaskFailureWrites`). The
//! simulator's own types; the adapter's are not reused. Tasks are in
//! `tasks`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::sim::world::{AppView, DeploymentView, HealthCheckView, QueueView, TaskFailureView};

mod tasks;

pub(crate) use tasks::*;

/// Marathon writes whole numbers without a fraction (`"mem": 65`,
/// `"backoffSeconds": 1`) and others as floats (`"cpus": 0.1`).
fn number(x: f64) -> serde_json::Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        serde_json::Value::from(x as i64)
    } else {
        serde_json::Value::from(x)
    }
}

/// Unix milliseconds as Marathon's timestamps: `2017-07-14T15:13:34.402Z`.
pub(crate) fn timestamp(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let millis = unix_ms % 1000;
    let (hour, minute, second) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    // Days since the epoch to a civil date (Howard Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
}

/// FNV-1a of a string: stable ports from ids.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// A stable service port for an app (10000..20000, Marathon's
/// `local_port_min..local_port_max`), from its id.
pub(crate) fn service_port(app_id: &str) -> u16 {
    10_000 + (fnv1a(app_id) % 10_000) as u16
}

#[derive(Debug, Serialize)]
pub(crate) struct AppList {
    pub(crate) apps: Vec<App>,
}

#[derive(Debug, Serialize)]
pub(crate) struct AppEnvelope {
    pub(crate) app: App,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct App {
    pub(crate) id: String,
    pub(crate) cmd: String,
    /// `null`: the simulated apps run `cmd`, not `args`.
    pub(crate) args: Option<Vec<String>>,
    /// `null`: the Mesos containerizer without an image.
    pub(crate) container: Option<serde_json::Value>,
    pub(crate) env: BTreeMap<String, String>,
    /// The app's service port (the pre-1.0 field, kept for old clients).
    pub(crate) ports: Vec<u16>,
    /// The same service port as Marathon ≥ 0.15 writes it for an app on
    /// the host's network; marathon-lb and service discovery read it.
    pub(crate) port_definitions: Vec<PortDefinition>,
    /// Marathon ≥ 1.5's network modes: the simulated apps run on the
    /// host's network.
    pub(crate) networks: Vec<Network>,
    pub(crate) uris: Vec<String>,
    pub(crate) user: Option<String>,
    pub(crate) dependencies: Vec<String>,
    pub(crate) instances: u32,
    pub(crate) cpus: serde_json::Value,
    pub(crate) mem: serde_json::Value,
    pub(crate) disk: u32,
    pub(crate) gpus: u32,
    pub(crate) executor: &'static str,
    pub(crate) constraints: Vec<Vec<String>>,
    /// As the app was given them, or Marathon's default (DC/OS's
    /// `--default_accepted_resource_roles`), `["*"]`.
    pub(crate) accepted_resource_roles: Vec<String>,
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) require_ports: bool,
    pub(crate) backoff_seconds: serde_json::Value,
    pub(crate) backoff_factor: serde_json::Value,
    pub(crate) max_launch_delay_seconds: serde_json::Value,
    pub(crate) health_checks: Vec<HealthCheck>,
    pub(crate) upgrade_strategy: UpgradeStrategy,
    pub(crate) unreachable_strategy: UnreachableStrategy,
    pub(crate) kill_selection: &'static str,
    pub(crate) version: String,
    pub(crate) version_info: VersionInfo,
    pub(crate) tasks_staged: u32,
    pub(crate) tasks_running: u32,
    pub(crate) tasks_healthy: u32,
    pub(crate) tasks_unhealthy: u32,
    pub(crate) deployments: Vec<DeploymentRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Vec<Task>>,
    /// Only when embedded (`with_last_task_failure`) and the app has one,
    /// as Marathon leaves it out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) last_task_failure: Option<TaskFailure>,
}

/// `lastTaskFailure`: every key Marathon's `TaskFailureWrites` writes.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskFailure {
    pub(crate) app_id: String,
    pub(crate) host: String,
    pub(crate) message: String,
    pub(crate) state: &'static str,
    pub(crate) task_id: String,
    pub(crate) timestamp: String,
    pub(crate) version: String,
    pub(crate) slave_id: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HealthCheck {
    pub(crate) protocol: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) path: Option<&'static str>,
    pub(crate) port_index: u32,
    pub(crate) grace_period_seconds: serde_json::Value,
    pub(crate) interval_seconds: serde_json::Value,
    pub(crate) timeout_seconds: serde_json::Value,
    pub(crate) max_consecutive_failures: u32,
    pub(crate) delay_seconds: u32,
}

/// A RAML `PortDefinition`: `name` left out, as Marathon leaves it unless
/// given.
#[derive(Debug, Serialize)]
pub(crate) struct PortDefinition {
    pub(crate) port: u16,
    pub(crate) protocol: &'static str,
    pub(crate) labels: BTreeMap<String, String>,
}

/// A RAML `Network`: `{"mode": "host"}`, as Marathon 1.5 writes a
/// Mesos-containerizer app without a container network.
#[derive(Debug, Serialize)]
pub(crate) struct Network {
    pub(crate) mode: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UpgradeStrategy {
    pub(crate) minimum_health_capacity: serde_json::Value,
    pub(crate) maximum_over_capacity: serde_json::Value,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UnreachableStrategy {
    pub(crate) inactive_after_seconds: u64,
    pub(crate) expunge_after_seconds: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VersionInfo {
    pub(crate) last_scaling_at: String,
    pub(crate) last_config_change_at: String,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct DeploymentRef {
    pub(crate) id: String,
}

impl App {
    pub(crate) fn from_view(app: &AppView) -> App {
        let version = timestamp(app.version_unix_ms);
        App {
            id: app.id.clone(),
            cmd: format!("./{}", app.id.rsplit('/').next().unwrap_or("app")),
            args: None,
            container: None,
            env: BTreeMap::new(),
            ports: vec![service_port(&app.id)],
            port_definitions: vec![PortDefinition {
                port: service_port(&app.id),
                protocol: "tcp",
                labels: BTreeMap::new(),
            }],
            networks: vec![Network { mode: "host" }],
            uris: Vec::new(),
            user: None,
            dependencies: Vec::new(),
            instances: app.instances,
            cpus: number(app.cpus),
            mem: number(app.mem),
            disk: 0,
            gpus: 0,
            executor: "",
            constraints: app.constraints.clone(),
            accepted_resource_roles: app
                .accepted_resource_roles
                .clone()
                .unwrap_or_else(|| vec!["*".to_string()]),
            labels: app.labels.clone(),
            require_ports: false,
            backoff_seconds: number(app.backoff_seconds),
            backoff_factor: number(app.backoff_factor),
            max_launch_delay_seconds: number(app.max_launch_delay_seconds),
            health_checks: app
                .health_checks
                .iter()
                .map(HealthCheck::from_view)
                .collect(),
            upgrade_strategy: UpgradeStrategy {
                minimum_health_capacity: number(app.minimum_health_capacity),
                maximum_over_capacity: number(app.maximum_over_capacity),
            },
            unreachable_strategy: UnreachableStrategy {
                inactive_after_seconds: app.unreachable_inactive_after_seconds,
                expunge_after_seconds: app.unreachable_expunge_after_seconds,
            },
            kill_selection: "YOUNGEST_FIRST",
            version_info: VersionInfo {
                last_scaling_at: version.clone(),
                last_config_change_at: timestamp(app.config_changed_unix_ms),
            },
            version,
            tasks_staged: app.tasks_staged,
            tasks_running: app.tasks_running,
            tasks_healthy: app.tasks_healthy,
            tasks_unhealthy: app.tasks_unhealthy,
            deployments: app
                .deployments
                .iter()
                .map(|id| DeploymentRef { id: id.clone() })
                .collect(),
            tasks: app
                .tasks
                .as_ref()
                .map(|tasks| tasks.iter().map(Task::from_view).collect()),
            last_task_failure: None,
        }
    }

    /// The app with its `lastTaskFailure` written, if it has one (what the
    /// `lastTaskFailure` embed asks).
    pub(crate) fn with_last_task_failure(mut self, app: &AppView) -> App {
        self.last_task_failure = app.last_task_failure.as_ref().map(TaskFailure::from_view);
        self
    }
}

impl TaskFailure {
    fn from_view(failure: &TaskFailureView) -> TaskFailure {
        TaskFailure {
            app_id: failure.app_id.clone(),
            host: failure.host.clone(),
            message: failure.message.clone(),
            state: failure.state,
            task_id: failure.task_id.clone(),
            timestamp: timestamp(failure.timestamp_unix_ms),
            version: timestamp(failure.version_unix_ms),
            slave_id: failure.slave_id.clone(),
        }
    }
}

impl HealthCheck {
    pub(crate) fn from_view(check: &HealthCheckView) -> HealthCheck {
        let probes_a_path = matches!(
            check.protocol.as_str(),
            "HTTP" | "HTTPS" | "MESOS_HTTP" | "MESOS_HTTPS"
        );
        HealthCheck {
            protocol: check.protocol.clone(),
            path: probes_a_path.then_some("/"),
            port_index: 0,
            grace_period_seconds: number(check.grace_period_seconds),
            interval_seconds: number(check.interval_seconds),
            timeout_seconds: number(check.timeout_seconds),
            max_consecutive_failures: check.max_consecutive_failures,
            delay_seconds: 15,
        }
    }
}

/// An app as its definition alone, as Marathon writes one inside a group
/// or at a version: no counts, deployments or tasks.
pub(crate) fn definition(app: &AppView) -> serde_json::Value {
    let mut value = serde_json::to_value(App::from_view(app)).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        for key in [
            "tasksStaged",
            "tasksRunning",
            "tasksHealthy",
            "tasksUnhealthy",
            "deployments",
            "tasks",
        ] {
            object.remove(key);
        }
    }
    value
}

/// A group as `GET /v2/groups[/{id}]` answers it with its default embeds
/// (apps, groups, pods; Marathon's `GroupInfoWrites`): its apps as bare
/// definitions (no counts, deployments or tasks: no `group.apps.*` embed),
/// its subgroups nested. The groups are the apps' parent paths; a group's
/// version is its latest app's (a change to an app versions every group
/// above it), the world's start when none changed. None for a path no app
/// lies under (the root always exists).
pub(crate) fn group(
    id: &str,
    apps: &[AppView],
    config_changed_unix_ms: u64,
) -> Option<serde_json::Value> {
    let id = if id == "/" {
        "/".to_string()
    } else {
        id.trim_end_matches('/').to_string()
    };
    let prefix = if id == "/" {
        "/".to_string()
    } else {
        format!("{id}/")
    };
    let beneath: Vec<&AppView> = apps.iter().filter(|a| a.id.starts_with(&prefix)).collect();
    if beneath.is_empty() && id != "/" {
        return None;
    }
    let mut direct = Vec::new();
    let mut children = std::collections::BTreeSet::new();
    for app in &beneath {
        match app.id[prefix.len()..].split_once('/') {
            None => direct.push(*app),
            Some((child, _)) => {
                children.insert(format!("{prefix}{child}"));
            }
        }
    }
    let version = beneath
        .iter()
        .map(|a| a.version_unix_ms)
        .max()
        .unwrap_or(config_changed_unix_ms)
        .max(config_changed_unix_ms);
    let apps_json: Vec<serde_json::Value> = direct.iter().map(|app| definition(app)).collect();
    let groups: Vec<serde_json::Value> = children
        .iter()
        .filter_map(|child| group(child, apps, config_changed_unix_ms))
        .collect();
    Some(serde_json::json!({
        "id": id,
        "dependencies": [],
        "version": timestamp(version),
        "apps": apps_json,
        "groups": groups,
        "pods": [],
    }))
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deployment {
    pub(crate) id: String,
    pub(crate) version: String,
    pub(crate) affected_apps: Vec<String>,
    pub(crate) affected_pods: Vec<String>,
    pub(crate) steps: Vec<Step>,
    pub(crate) current_actions: Vec<CurrentAction>,
    pub(crate) current_step: u32,
    pub(crate) total_steps: u32,
}

#[derive(Debug, Serialize)]
pub struct Step {
    pub(crate) actions: Vec<Action>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Action {
    pub(crate) action: &'static str,
    pub(crate) app: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CurrentAction {
    pub(crate) action: &'static str,
    pub(crate) app: String,
    pub(crate) readiness_check_results: Vec<serde_json::Value>,
}

impl Deployment {
    pub(crate) fn from_view(deployment: &DeploymentView) -> Deployment {
        let actions = || {
            deployment
                .affected_apps
                .iter()
                .map(|app| Action {
                    action: deployment.action,
                    app: app.clone(),
                })
                .collect::<Vec<_>>()
        };
        Deployment {
            id: deployment.id.clone(),
            version: timestamp(deployment.version_unix_ms),
            affected_apps: deployment.affected_apps.clone(),
            affected_pods: Vec::new(),
            steps: vec![Step { actions: actions() }],
            current_actions: deployment
                .affected_apps
                .iter()
                .map(|app| CurrentAction {
                    action: deployment.action,
                    app: app.clone(),
                    readiness_check_results: Vec::new(),
                })
                .collect(),
            current_step: deployment.current_step,
            total_steps: deployment.total_steps,
        }
    }
}

/// The answer to an app-changing call.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeploymentResult {
    pub(crate) version: String,
    pub(crate) deployment_id: String,
}

/// `{"message", ...}`: every Marathon error body.
#[derive(Debug, Serialize)]
pub(crate) struct Message {
    pub(crate) message: String,
}

/// A 409: the app is locked by these deployments.
#[derive(Debug, Serialize)]
pub(crate) struct Locked {
    pub(crate) message: String,
    pub(crate) deployments: Vec<DeploymentRef>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Leader {
    pub(crate) leader: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct Info {
    pub(crate) name: &'static str,
    pub(crate) version: &'static str,
    pub(crate) buildref: &'static str,
    pub(crate) elected: bool,
    pub(crate) leader: String,
    #[serde(rename = "frameworkId")]
    pub(crate) framework_id: String,
    /// Every key of the RAML example (Marathon 1.5), values as a default
    /// Marathon has them, this instance's host and URLs where they name it.
    pub(crate) marathon_config: serde_json::Value,
    pub(crate) zookeeper_config: serde_json::Value,
    pub(crate) http_config: HttpConfig,
}

#[derive(Debug, Serialize)]
pub(crate) struct HttpConfig {
    pub(crate) http_port: u16,
    pub(crate) https_port: u16,
}

/// `PUT /v2/apps/{id}`: a partial update; the simulator changes only
/// `instances` and `acceptedResourceRoles` (other fields are accepted and
/// ignored).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AppUpdate {
    pub(crate) instances: Option<u32>,
    pub(crate) accepted_resource_roles: Option<Vec<String>>,
}

/// `POST /v2/tasks/delete`.
#[derive(Debug, Deserialize)]
pub(crate) struct TaskIds {
    pub(crate) ids: Vec<String>,
}

/// `GET /v2/queue`.
#[derive(Debug, Serialize)]
pub(crate) struct Queue {
    pub(crate) queue: Vec<QueueItem>,
}

/// One app in Marathon's launch queue. Marathon ≥ 1.5 adds
/// `processedOffersSummary` (and, when embedded, `lastUnusedOffers`): the
/// simulator keeps no offer statistics, so it leaves them out rather than
/// invent them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueueItem {
    pub(crate) count: u32,
    pub(crate) delay: QueueDelay,
    pub(crate) since: String,
    pub(crate) app: App,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueueDelay {
    pub(crate) time_left_seconds: u64,
    /// The delay is over (or there was none) and the launch is due.
    pub(crate) overdue: bool,
}

impl QueueItem {
    pub(crate) fn from_view(item: &QueueView) -> QueueItem {
        QueueItem {
            count: item.count,
            delay: QueueDelay {
                time_left_seconds: item.delay_left_ms.div_ceil(1000),
                overdue: item.delay_left_ms == 0,
            },
            since: timestamp(item.since_unix_ms),
            app: App::from_view(&item.app),
        }
    }
}
