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
    pub(crate) version: String,
    pub(crate) build_date: &'static str,
    pub(crate) build_time: f64,
    pub(crate) build_user: &'static str,
    pub(crate) start_time: f64,
    pub(crate) elected_time: f64,
    pub(crate) id: String,
    pub(crate) pid: String,
    pub(crate) hostname: String,
    pub(crate) capabilities: Vec<MasterCapability>,
    pub(crate) activated_slaves: usize,
    pub(crate) deactivated_slaves: usize,
    pub(crate) unreachable_slaves: usize,
    /// The leader's pid, `master@127.0.0.1:PORT`.
    pub(crate) leader: String,
    pub(crate) leader_info: MasterInfo,
    pub(crate) cluster: &'static str,
    /// What `/master/flags` answers, as the state carries it.
    pub(crate) flags: BTreeMap<&'static str, String>,
    pub(crate) slaves: Vec<Slave>,
    pub(crate) recovered_slaves: Vec<serde_json::Value>,
    pub(crate) frameworks: Vec<Framework>,
    pub(crate) completed_frameworks: Vec<serde_json::Value>,
    /// Always empty since Mesos 1.2, written for compatibility.
    pub(crate) orphan_tasks: Vec<serde_json::Value>,
    pub(crate) unregistered_frameworks: Vec<serde_json::Value>,
}

/// One of a master's capabilities, as its protobuf becomes JSON.
#[derive(Debug, Serialize)]
pub(crate) struct MasterCapability {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
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
    pub(crate) id: String,
    pub(crate) pid: String,
    pub(crate) hostname: String,
    pub(crate) port: u16,
    pub(crate) version: String,
    pub(crate) address: Address,
}

#[derive(Debug, Serialize)]
pub(crate) struct Address {
    pub(crate) hostname: String,
    pub(crate) ip: String,
    pub(crate) port: u16,
}

// ---- v0: frameworks and their tasks (/master/state, /master/frameworks,
// /master/tasks, /master/state-summary), as Mesos 1.9 writes them

/// A task, as Mesos' `json(const Task&)` writes it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct V0Task {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) framework_id: String,
    /// Empty for a task run by the command executor, as Marathon's are.
    pub(crate) executor_id: String,
    pub(crate) slave_id: String,
    pub(crate) state: &'static str,
    pub(crate) resources: V0Resources,
    /// Marathon's role (`*` unless the scenario reserves agents to one).
    pub(crate) role: String,
    /// The status updates the master has seen, oldest first (none while
    /// the task stages).
    pub(crate) statuses: Vec<TaskStatus>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct TaskStatus {
    pub(crate) state: &'static str,
    /// Seconds since the epoch, as a float.
    pub(crate) timestamp: f64,
}

/// What `Summary<Framework>` writes: the part of a framework that
/// `/master/state-summary` shows too.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct FrameworkSummary {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) used_resources: V0Resources,
    pub(crate) offered_resources: V0Resources,
    pub(crate) capabilities: Vec<&'static str>,
    pub(crate) hostname: String,
    pub(crate) webui_url: String,
    pub(crate) active: bool,
    pub(crate) connected: bool,
    pub(crate) recovered: bool,
}

/// A framework of `/master/state` and `/master/frameworks` (Mesos'
/// `FullFrameworkWriter`).
#[derive(Debug, Serialize)]
pub(crate) struct Framework {
    #[serde(flatten)]
    pub(crate) summary: FrameworkSummary,
    pub(crate) user: &'static str,
    pub(crate) failover_timeout: f64,
    pub(crate) checkpoint: bool,
    /// Marathon's `--mesos_role`.
    pub(crate) role: String,
    pub(crate) registered_time: f64,
    pub(crate) unregistered_time: f64,
    pub(crate) resources: V0Resources,
    /// Staging, running and killing tasks.
    pub(crate) tasks: Vec<V0Task>,
    pub(crate) unreachable_tasks: Vec<V0Task>,
    /// Ended tasks Marathon has not expunged yet.
    pub(crate) completed_tasks: Vec<V0Task>,
    pub(crate) offers: Vec<serde_json::Value>,
    pub(crate) executors: Vec<serde_json::Value>,
}

/// `/master/frameworks`.
#[derive(Debug, Serialize)]
pub(crate) struct FrameworksResponse {
    pub(crate) frameworks: Vec<Framework>,
    pub(crate) completed_frameworks: Vec<serde_json::Value>,
    pub(crate) unregistered_frameworks: Vec<serde_json::Value>,
}

/// `/master/tasks`.
#[derive(Debug, Serialize)]
pub(crate) struct TasksResponse {
    pub(crate) tasks: Vec<V0Task>,
}

/// The `TASK_*` counters of `/master/state-summary`.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(crate) struct TaskCounts {
    #[serde(rename = "TASK_STAGING")]
    pub(crate) staging: usize,
    #[serde(rename = "TASK_STARTING")]
    pub(crate) starting: usize,
    #[serde(rename = "TASK_RUNNING")]
    pub(crate) running: usize,
    #[serde(rename = "TASK_KILLING")]
    pub(crate) killing: usize,
    #[serde(rename = "TASK_FINISHED")]
    pub(crate) finished: usize,
    #[serde(rename = "TASK_KILLED")]
    pub(crate) killed: usize,
    #[serde(rename = "TASK_FAILED")]
    pub(crate) failed: usize,
    #[serde(rename = "TASK_LOST")]
    pub(crate) lost: usize,
    #[serde(rename = "TASK_ERROR")]
    pub(crate) error: usize,
}

impl TaskCounts {
    /// Counts `state` (a task in a state without a counter, such as
    /// TASK_UNREACHABLE, is not counted, as Mesos does not).
    pub(crate) fn count(&mut self, state: &str) {
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
    pub(crate) hostname: String,
    pub(crate) cluster: &'static str,
    pub(crate) slaves: Vec<SummarySlave>,
    pub(crate) frameworks: Vec<SummaryFramework>,
}

#[derive(Debug, Serialize)]
pub(crate) struct SummarySlave {
    #[serde(flatten)]
    pub(crate) slave: Slave,
    #[serde(flatten)]
    pub(crate) counts: TaskCounts,
    pub(crate) framework_ids: Vec<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct SummaryFramework {
    #[serde(flatten)]
    pub(crate) summary: FrameworkSummary,
    #[serde(flatten)]
    pub(crate) counts: TaskCounts,
    pub(crate) slave_ids: Vec<String>,
}

/// `/master/flags`: every value a string, as Mesos writes its flags.
#[derive(Debug, Serialize)]
pub(crate) struct FlagsResponse {
    pub(crate) flags: BTreeMap<&'static str, String>,
}

// ---- v1 operator API: POST /api/v1

/// A `master::Call`. Only the fields of the calls the simulator answers.
#[derive(Debug, Deserialize)]
pub(crate) struct V1Call {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) drain_agent: Option<DrainAgentCall>,
    pub(crate) deactivate_agent: Option<AgentCall>,
    pub(crate) reactivate_agent: Option<AgentCall>,
    pub(crate) update_maintenance_schedule: Option<UpdateSchedule>,
    pub(crate) start_maintenance: Option<Machines>,
    pub(crate) stop_maintenance: Option<Machines>,
}

/// `{"agent_id": {"value"}}`: DEACTIVATE_AGENT, REACTIVATE_AGENT.
#[derive(Debug, Deserialize)]
pub(crate) struct AgentCall {
    pub(crate) agent_id: Value,
}

/// DRAIN_AGENT's `{"agent_id", "max_grace_period", "mark_gone"}`, the
/// grace period a `google.protobuf.Duration` (`{"seconds", "nanos"}`, as
/// in the operator API docs' example).
#[derive(Debug, Deserialize)]
pub(crate) struct DrainAgentCall {
    pub(crate) agent_id: Value,
    pub(crate) max_grace_period: Option<ProtoDuration>,
    #[serde(default)]
    pub(crate) mark_gone: bool,
}

#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ProtoDuration {
    pub(crate) seconds: i64,
    pub(crate) nanos: i32,
}

impl DrainAgentCall {
    /// The config the master keeps, the grace period in nanoseconds as
    /// Mesos' `devolve` turns the Duration into a `DurationInfo`.
    pub(crate) fn config(&self) -> DrainConfig {
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
    pub(crate) schedule: Schedule,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Machines {
    #[serde(default)]
    pub(crate) machines: Vec<MachineIdJson>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Value {
    pub(crate) value: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct GetScheduleResponse {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) get_maintenance_schedule: ScheduleEnvelope,
}

#[derive(Debug, Serialize)]
pub(crate) struct ScheduleEnvelope {
    pub(crate) schedule: Schedule,
}

#[derive(Debug, Serialize)]
pub(crate) struct GetStatusResponse {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) get_maintenance_status: StatusEnvelope,
}

#[derive(Debug, Serialize)]
pub(crate) struct StatusEnvelope {
    pub(crate) status: ClusterStatus,
}
