//! The Mesos master's JSON as the simulator writes and reads it: the v0
//! endpoints (`/master/slaves`, `/master/state`, `/master/state-summary`,
//! `/master/frameworks`, `/master/tasks`, `/master/flags`, maintenance)
//! and the v1 operator API (`POST /api/v1`). The simulator's own serde types, shaped
//! after tests/fixtures/mesos-*.json; the adapter's types are not reused,
//! so a mistake in one cannot hide the same mistake in the other.
//! Agents (`/master/slaves` and GET_AGENTS) are in `agents`, resources
//! (an agent's, reserved or not) in `resources`, the maintenance schedule
//! and status in `maintenance`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::sim::world::DrainConfig;

mod agents;
mod maintenance;
mod resources;

pub(crate) use agents::*;
pub(crate) use maintenance::*;
pub(crate) use resources::*;

// ---- v0: /master/state, every field Mesos 1.9's `ReadOnlyHandler::state`
// writes on a master without an authorizer (no `git_*`, `log_dir` or
// `domain`: those only when set)

#[derive(Debug, Serialize)]
pub(crate) struct State {
    pub version: String,
    pub build_date: &'static str,
    pub build_time: f64,
    pub build_user: &'static str,
    pub start_time: f64,
    pub elected_time: f64,
    pub id: String,
    pub pid: String,
    pub hostname: String,
    pub capabilities: Vec<MasterCapability>,
    pub activated_slaves: usize,
    pub deactivated_slaves: usize,
    pub unreachable_slaves: usize,
    /// The leader's pid, `master@127.0.0.1:PORT`.
    pub leader: String,
    pub leader_info: MasterInfo,
    pub cluster: &'static str,
    /// What `/master/flags` answers, as the state carries it.
    pub flags: BTreeMap<&'static str, String>,
    pub slaves: Vec<Slave>,
    pub recovered_slaves: Vec<serde_json::Value>,
    pub frameworks: Vec<Framework>,
    pub completed_frameworks: Vec<serde_json::Value>,
    /// Always empty since Mesos 1.2, written for compatibility.
    pub orphan_tasks: Vec<serde_json::Value>,
    pub unregistered_frameworks: Vec<serde_json::Value>,
}

/// One of a master's capabilities, as its protobuf becomes JSON.
#[derive(Debug, Serialize)]
pub(crate) struct MasterCapability {
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// Mesos 1.9's `MASTER_CAPABILITIES()` (src/master/constants.cpp).
pub(crate) fn master_capabilities() -> Vec<MasterCapability> {
    ["AGENT_UPDATE", "AGENT_DRAINING", "QUOTA_V2"]
        .into_iter()
        .map(|kind| MasterCapability { kind })
        .collect()
}

#[derive(Debug, Serialize)]
pub(crate) struct MasterInfo {
    pub id: String,
    pub pid: String,
    pub hostname: String,
    pub port: u16,
    pub version: String,
    pub address: Address,
}

#[derive(Debug, Serialize)]
pub(crate) struct Address {
    pub hostname: String,
    pub ip: String,
    pub port: u16,
}

// ---- v0: frameworks and their tasks (/master/state, /master/frameworks,
// /master/tasks, /master/state-summary), as Mesos 1.9 writes them

/// A task, as Mesos' `json(const Task&)` writes it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct V0Task {
    pub id: String,
    pub name: String,
    pub framework_id: String,
    /// Empty for a task run by the command executor, as Marathon's are.
    pub executor_id: String,
    pub slave_id: String,
    pub state: &'static str,
    pub resources: V0Resources,
    /// Marathon's role (`*` unless the scenario reserves agents to one).
    pub role: String,
    /// The status updates the master has seen, oldest first (none while
    /// the task stages).
    pub statuses: Vec<TaskStatus>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct TaskStatus {
    pub state: &'static str,
    /// Seconds since the epoch, as a float.
    pub timestamp: f64,
}

/// What `Summary<Framework>` writes: the part of a framework that
/// `/master/state-summary` shows too.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct FrameworkSummary {
    pub id: String,
    pub name: &'static str,
    pub used_resources: V0Resources,
    pub offered_resources: V0Resources,
    pub capabilities: Vec<&'static str>,
    pub hostname: String,
    pub webui_url: String,
    pub active: bool,
    pub connected: bool,
    pub recovered: bool,
}

/// A framework of `/master/state` and `/master/frameworks` (Mesos'
/// `FullFrameworkWriter`).
#[derive(Debug, Serialize)]
pub(crate) struct Framework {
    #[serde(flatten)]
    pub summary: FrameworkSummary,
    pub user: &'static str,
    pub failover_timeout: f64,
    pub checkpoint: bool,
    /// Marathon's `--mesos_role`.
    pub role: String,
    pub registered_time: f64,
    pub unregistered_time: f64,
    pub resources: V0Resources,
    /// Staging, running and killing tasks.
    pub tasks: Vec<V0Task>,
    pub unreachable_tasks: Vec<V0Task>,
    /// Ended tasks Marathon has not expunged yet.
    pub completed_tasks: Vec<V0Task>,
    pub offers: Vec<serde_json::Value>,
    pub executors: Vec<serde_json::Value>,
}

/// `/master/frameworks`.
#[derive(Debug, Serialize)]
pub(crate) struct FrameworksResponse {
    pub frameworks: Vec<Framework>,
    pub completed_frameworks: Vec<serde_json::Value>,
    pub unregistered_frameworks: Vec<serde_json::Value>,
}

/// `/master/tasks`.
#[derive(Debug, Serialize)]
pub(crate) struct TasksResponse {
    pub tasks: Vec<V0Task>,
}

/// The `TASK_*` counters of `/master/state-summary`.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(crate) struct TaskCounts {
    #[serde(rename = "TASK_STAGING")]
    pub staging: usize,
    #[serde(rename = "TASK_STARTING")]
    pub starting: usize,
    #[serde(rename = "TASK_RUNNING")]
    pub running: usize,
    #[serde(rename = "TASK_KILLING")]
    pub killing: usize,
    #[serde(rename = "TASK_FINISHED")]
    pub finished: usize,
    #[serde(rename = "TASK_KILLED")]
    pub killed: usize,
    #[serde(rename = "TASK_FAILED")]
    pub failed: usize,
    #[serde(rename = "TASK_LOST")]
    pub lost: usize,
    #[serde(rename = "TASK_ERROR")]
    pub error: usize,
}

impl TaskCounts {
    /// Counts `state` (a task in a state without a counter, such as
    /// TASK_UNREACHABLE, is not counted, as Mesos does not).
    pub fn count(&mut self, state: &str) {
        let counter = match state {
            "TASK_STAGING" => &mut self.staging,
            "TASK_STARTING" => &mut self.starting,
            "TASK_RUNNING" => &mut self.running,
            "TASK_KILLING" => &mut self.killing,
            "TASK_FINISHED" => &mut self.finished,
            "TASK_KILLED" => &mut self.killed,
            "TASK_FAILED" => &mut self.failed,
            "TASK_LOST" => &mut self.lost,
            "TASK_ERROR" => &mut self.error,
            _ => return,
        };
        *counter += 1;
    }
}

/// `/master/state-summary`.
#[derive(Debug, Serialize)]
pub(crate) struct StateSummary {
    pub hostname: String,
    pub cluster: &'static str,
    pub slaves: Vec<SummarySlave>,
    pub frameworks: Vec<SummaryFramework>,
}

#[derive(Debug, Serialize)]
pub(crate) struct SummarySlave {
    #[serde(flatten)]
    pub slave: Slave,
    #[serde(flatten)]
    pub counts: TaskCounts,
    pub framework_ids: Vec<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct SummaryFramework {
    #[serde(flatten)]
    pub summary: FrameworkSummary,
    #[serde(flatten)]
    pub counts: TaskCounts,
    pub slave_ids: Vec<String>,
}

/// `/master/flags`: every value a string, as Mesos writes its flags.
#[derive(Debug, Serialize)]
pub(crate) struct FlagsResponse {
    pub flags: BTreeMap<&'static str, String>,
}

// ---- v1 operator API: POST /api/v1

/// A `master::Call`. Only the fields of the calls the simulator answers.
#[derive(Debug, Deserialize)]
pub(crate) struct V1Call {
    #[serde(rename = "type")]
    pub kind: String,
    pub drain_agent: Option<DrainAgentCall>,
    pub deactivate_agent: Option<AgentCall>,
    pub reactivate_agent: Option<AgentCall>,
    pub update_maintenance_schedule: Option<UpdateSchedule>,
    pub start_maintenance: Option<Machines>,
    pub stop_maintenance: Option<Machines>,
}

/// `{"agent_id": {"value"}}`: DEACTIVATE_AGENT, REACTIVATE_AGENT.
#[derive(Debug, Deserialize)]
pub(crate) struct AgentCall {
    pub agent_id: Value,
}

/// DRAIN_AGENT's `{"agent_id", "max_grace_period", "mark_gone"}`, the
/// grace period a `google.protobuf.Duration` (`{"seconds", "nanos"}`, as
/// in the operator API docs' example).
#[derive(Debug, Deserialize)]
pub(crate) struct DrainAgentCall {
    pub agent_id: Value,
    pub max_grace_period: Option<ProtoDuration>,
    #[serde(default)]
    pub mark_gone: bool,
}

#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ProtoDuration {
    pub seconds: i64,
    pub nanos: i32,
}

impl DrainAgentCall {
    /// The config the master keeps, the grace period in nanoseconds as
    /// Mesos' `devolve` turns the Duration into a `DurationInfo`.
    pub fn config(&self) -> DrainConfig {
        DrainConfig {
            max_grace_period_ns: self.max_grace_period.map(|d| {
                d.seconds
                    .saturating_mul(1_000_000_000)
                    .saturating_add(i64::from(d.nanos))
            }),
            mark_gone: self.mark_gone,
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct UpdateSchedule {
    pub schedule: Schedule,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Machines {
    #[serde(default)]
    pub machines: Vec<MachineIdJson>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Value {
    pub value: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct GetScheduleResponse {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub get_maintenance_schedule: ScheduleEnvelope,
}

#[derive(Debug, Serialize)]
pub(crate) struct ScheduleEnvelope {
    pub schedule: Schedule,
}

#[derive(Debug, Serialize)]
pub(crate) struct GetStatusResponse {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub get_maintenance_status: StatusEnvelope,
}

#[derive(Debug, Serialize)]
pub(crate) struct StatusEnvelope {
    pub status: ClusterStatus,
}
