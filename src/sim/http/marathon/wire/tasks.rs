//! Tasks as Marathon writes them (`/v2/tasks`, `/v2/apps/{id}/tasks`,
//! embedded in apps): the RAML `Task` with Marathon 1.5's health results
//! (`instanceId`).

use serde::Serialize;

use super::{service_port, timestamp};
use crate::sim::world::{HealthCheckResultView, TaskView};

#[derive(Debug, Serialize)]
pub(crate) struct TaskList {
    pub(crate) tasks: Vec<Task>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub(crate) id: String,
    pub(crate) app_id: String,
    pub(crate) host: String,
    pub(crate) ip_addresses: Vec<IpAddress>,
    /// One host port per service port, as every task of the fixtures.
    pub(crate) ports: Vec<u16>,
    pub(crate) slave_id: String,
    pub(crate) state: &'static str,
    pub(crate) staged_at: String,
    /// Null while the task is staged, as Marathon writes it.
    pub(crate) started_at: Option<String>,
    pub(crate) version: String,
    /// The app's service ports, as `GET /v2/tasks` writes them.
    pub(crate) service_ports: Vec<u16>,
    /// The agent's fault domain: its AZ's region and the AZ.
    pub(crate) region: String,
    pub(crate) zone: String,
    pub(crate) role: String,
    /// Absent for a task without results (and for every task of an app
    /// without health checks), as in the Marathon 1.5 fixtures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) health_check_results: Vec<HealthCheckResult>,
}

/// `DELETE /v2/apps/{id}/tasks/{taskId}`: the task killed.
#[derive(Debug, Serialize)]
pub(crate) struct TaskSingle {
    pub(crate) task: Task,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct IpAddress {
    pub(crate) ip_address: String,
    pub(crate) protocol: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HealthCheckResult {
    pub(crate) alive: bool,
    pub(crate) consecutive_failures: u32,
    pub(crate) first_success: Option<String>,
    pub(crate) last_success: Option<String>,
    pub(crate) last_failure: Option<String>,
    pub(crate) last_failure_cause: Option<String>,
    pub(crate) instance_id: String,
}

impl Task {
    pub(crate) fn from_view(task: &TaskView) -> Task {
        Task {
            id: task.id.clone(),
            app_id: task.app_id.clone(),
            host: task.host.clone(),
            ip_addresses: vec![IpAddress {
                ip_address: task.ip_address.clone(),
                protocol: "IPv4",
            }],
            ports: vec![task.host_port],
            slave_id: task.slave_id.clone(),
            state: task.state,
            staged_at: timestamp(task.staged_unix_ms),
            started_at: task.started_unix_ms.map(timestamp),
            version: timestamp(task.version_unix_ms),
            service_ports: vec![service_port(&task.app_id)],
            region: task
                .zone
                .trim_end_matches(|c: char| c.is_ascii_lowercase())
                .to_string(),
            zone: task.zone.clone(),
            role: task.role.clone(),
            health_check_results: task
                .health_check_results
                .iter()
                .map(HealthCheckResult::from_view)
                .collect(),
        }
    }
}

impl HealthCheckResult {
    fn from_view(result: &HealthCheckResultView) -> HealthCheckResult {
        HealthCheckResult {
            alive: result.alive,
            consecutive_failures: result.consecutive_failures,
            first_success: result.first_success_unix_ms.map(timestamp),
            last_success: result.last_success_unix_ms.map(timestamp),
            last_failure: result.last_failure_unix_ms.map(timestamp),
            last_failure_cause: result.last_failure_cause.clone(),
            instance_id: instance_id(&result.task_id),
        }
    }
}

/// Marathon ≥ 1.5 names the instance of task `app.UUID` `app.marathon-UUID`.
fn instance_id(task_id: &str) -> String {
    match task_id.split_once('.') {
        Some((app, uuid)) => format!("{app}.marathon-{uuid}"),
        None => task_id.to_string(),
    }
}
