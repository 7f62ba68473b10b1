//! The Mesos master's JSON as the simulator writes and reads it: the v0
//! endpoints (`/master/slaves`, `/master/state`, `/master/state-summary`,
//! `/master/frameworks`, `/master/tasks`, `/master/flags`, maintenance)
//! and the v1 operator API (`POST /api/v1`). The simulator's own serde types, shaped
//! after tests/fixtures/mesos-*.json; the adapter's types are not reused,
//! so a mistake in one cannot hide the same mistake in the other.
//! Resources (an agent's, reserved or not) are in `resources`, the
//! maintenance schedule and status in `maintenance`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::sim::world::AgentView;

mod maintenance;
mod resources;

pub(crate) use maintenance::*;
pub(crate) use resources::*;

// ---- v0: /master/slaves and the `slaves` of /master/state

#[derive(Debug, Serialize)]
pub(crate) struct SlavesResponse {
    pub slaves: Vec<Slave>,
    /// Agents known from the registry after a failover that have not
    /// re-registered: the simulator's masters share one world, so none.
    pub recovered_slaves: Vec<serde_json::Value>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Slave {
    pub id: String,
    pub pid: String,
    pub hostname: String,
    pub port: u16,
    /// Seconds since the epoch, as a float (Mesos' `registered_time`).
    pub registered_time: f64,
    /// Written only for an agent that re-registered (with a new leader; a
    /// restarted agent registers anew, with a new id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reregistered_time: Option<f64>,
    pub resources: V0Resources,
    pub used_resources: V0Resources,
    pub offered_resources: V0Resources,
    /// Per role, what is reserved to it: a DC/OS public agent has its
    /// whole `resources` under `slave_public`; an unreserved agent, none.
    pub reserved_resources: BTreeMap<String, V0Resources>,
    pub unreserved_resources: V0Resources,
    /// `reserved_resources` as protobuf `Resource`s (Mesos'
    /// `JSON::Protobuf`), per role.
    pub reserved_resources_full: BTreeMap<String, Vec<V1Resource>>,
    pub unreserved_resources_full: Vec<V1Resource>,
    /// TEXT attributes as strings.
    pub attributes: BTreeMap<String, String>,
    pub active: bool,
    pub deactivated: bool,
    pub version: String,
    pub capabilities: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_info: Option<DrainInfo>,
}

#[derive(Debug, Serialize)]
pub(crate) struct DrainInfo {
    pub state: &'static str,
    pub config: DrainConfig,
}

/// What DRAIN_AGENT was asked; the world does not keep the options, so
/// this is Mesos' default (no grace period cap, not marked gone).
#[derive(Debug, Serialize)]
pub(crate) struct DrainConfig {
    pub mark_gone: bool,
}

/// The capabilities a Mesos 1.9 agent announces.
const AGENT_CAPABILITIES: [&str; 6] = [
    "MULTI_ROLE",
    "HIERARCHICAL_ROLE",
    "RESERVATION_REFINEMENT",
    "RESOURCE_PROVIDER",
    "RESIZE_VOLUME",
    "AGENT_DRAINING",
];

impl Slave {
    /// An agent as `/master/slaves` writes it. A reserved agent (a DC/OS
    /// public agent) has everything under its role and nothing unreserved,
    /// as dcos/dcos-checks' capture of a DC/OS 1.10 public agent (Mesos
    /// 1.3) shows: `reserved_resources: {"slave_public": {…, "ports"}}`,
    /// `unreserved_resources` of zeros without `ports`.
    pub fn from_view(agent: &AgentView) -> Slave {
        let total = V0Resources {
            cpus: agent.resources.cpus,
            mem: agent.resources.mem,
            disk: agent.resources.disk,
            ports: Some(format!("[{PORTS_BEGIN}-{PORTS_END}]")),
        };
        let full = total_resources(agent);
        let (reserved_resources, reserved_resources_full, unreserved_resources, unreserved_full) =
            match &agent.role {
                Some(role) => (
                    BTreeMap::from([(role.clone(), total.clone())]),
                    BTreeMap::from([(role.clone(), full)]),
                    V0Resources::default(),
                    Vec::new(),
                ),
                None => (BTreeMap::new(), BTreeMap::new(), total.clone(), full),
            };
        Slave {
            id: agent.id.clone(),
            pid: agent.pid.clone(),
            hostname: agent.hostname.clone(),
            port: agent.port,
            registered_time: agent.registered_unix_ms as f64 / 1000.0,
            reregistered_time: agent.reregistered_unix_ms.map(|ms| ms as f64 / 1000.0),
            unreserved_resources,
            unreserved_resources_full: unreserved_full,
            reserved_resources_full,
            resources: total,
            used_resources: V0Resources {
                cpus: agent.used_resources.cpus,
                mem: agent.used_resources.mem,
                disk: agent.used_resources.disk,
                ports: port_ranges(&agent.used_ports),
            },
            offered_resources: V0Resources {
                cpus: 0.0,
                mem: 0.0,
                disk: 0.0,
                ports: None,
            },
            reserved_resources,
            attributes: agent.attributes.clone(),
            active: agent.active,
            deactivated: agent.deactivated,
            version: agent.version.clone(),
            capabilities: AGENT_CAPABILITIES.to_vec(),
            drain_info: agent.drain_state.map(|state| DrainInfo {
                state,
                config: DrainConfig { mark_gone: false },
            }),
        }
    }
}

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
    pub drain_agent: Option<AgentCall>,
    pub deactivate_agent: Option<AgentCall>,
    pub reactivate_agent: Option<AgentCall>,
    pub update_maintenance_schedule: Option<UpdateSchedule>,
    pub start_maintenance: Option<Machines>,
    pub stop_maintenance: Option<Machines>,
}

/// `{"agent_id": {"value"}, ...}`; DRAIN_AGENT's `max_grace_period` and
/// `mark_gone` are accepted and not modelled.
#[derive(Debug, Deserialize)]
pub(crate) struct AgentCall {
    pub agent_id: Value,
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
pub(crate) struct GetAgentsResponse {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub get_agents: GetAgents,
}

#[derive(Debug, Serialize)]
pub(crate) struct GetAgents {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<V1Agent>,
}

#[derive(Debug, Serialize)]
pub(crate) struct V1Agent {
    pub agent_info: AgentInfo,
    pub active: bool,
    pub deactivated: bool,
    pub pid: String,
    pub registered_time: Nanoseconds,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reregistered_time: Option<Nanoseconds>,
    pub total_resources: Vec<V1Resource>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allocated_resources: Vec<V1Resource>,
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_info: Option<DrainInfo>,
}

#[derive(Debug, Serialize)]
pub(crate) struct AgentInfo {
    pub hostname: String,
    pub id: Value,
    pub port: u16,
    pub resources: Vec<V1Resource>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<V1Attribute>,
}

#[derive(Debug, Serialize)]
pub(crate) struct V1Attribute {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: Value,
}

fn unix_ms_as_nanoseconds(ms: u64) -> Nanoseconds {
    Nanoseconds {
        nanoseconds: i64::try_from(ms)
            .unwrap_or(i64::MAX / 1_000_000)
            .saturating_mul(1_000_000),
    }
}

impl V1Agent {
    pub fn from_view(agent: &AgentView) -> V1Agent {
        let total = total_resources(agent);
        let used = &agent.used_resources;
        let role = agent.role.as_deref();
        let allocated = if used.cpus > 0.0 || used.mem > 0.0 {
            vec![
                scalar("cpus", used.cpus, role),
                scalar("mem", used.mem, role),
            ]
        } else {
            Vec::new()
        };
        V1Agent {
            agent_info: AgentInfo {
                hostname: agent.hostname.clone(),
                id: Value {
                    value: agent.id.clone(),
                },
                port: agent.port,
                resources: total.clone(),
                attributes: agent
                    .attributes
                    .iter()
                    .map(|(name, text)| V1Attribute {
                        name: name.clone(),
                        kind: "TEXT",
                        text: Value {
                            value: text.clone(),
                        },
                    })
                    .collect(),
            },
            active: agent.active,
            deactivated: agent.deactivated,
            pid: agent.pid.clone(),
            registered_time: unix_ms_as_nanoseconds(agent.registered_unix_ms),
            reregistered_time: agent.reregistered_unix_ms.map(unix_ms_as_nanoseconds),
            total_resources: total,
            allocated_resources: allocated,
            version: agent.version.clone(),
            drain_info: agent.drain_state.map(|state| DrainInfo {
                state,
                config: DrainConfig { mark_gone: false },
            }),
        }
    }
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
