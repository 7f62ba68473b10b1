//! The Mesos master's JSON as the simulator writes and reads it: the v0
//! endpoints (`/master/slaves`, `/master/state`, maintenance) and the v1
//! operator API (`POST /api/v1`). The simulator's own serde types, shaped
//! after tests/fixtures/mesos-*.json; the adapter's types are not reused,
//! so a mistake in one cannot hide the same mistake in the other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::sim::world::{AgentView, MachineId, MaintenanceStatus, MaintenanceWindow};

/// The ports every simulated agent offers, as Mesos' default `ports`.
const PORTS_BEGIN: u64 = 31000;
const PORTS_END: u64 = 32000;

/// A window posted without `duration` is unavailable indefinitely; the
/// world keeps it as the longest duration and it is written back without
/// one, so another operator's window survives a read-modify-write as it was.
pub(crate) const INDEFINITE_NS: i64 = i64::MAX;

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
    /// `reregistered_time` is written only for an agent that re-registered,
    /// which no simulated agent does (a restarted one gets a new id).
    pub registered_time: f64,
    pub resources: V0Resources,
    pub used_resources: V0Resources,
    pub offered_resources: V0Resources,
    pub reserved_resources: BTreeMap<String, V0Resources>,
    pub unreserved_resources: V0Resources,
    /// TEXT attributes as strings.
    pub attributes: BTreeMap<String, String>,
    pub active: bool,
    pub deactivated: bool,
    pub version: String,
    pub capabilities: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drain_info: Option<DrainInfo>,
}

/// v0 resources: scalars as numbers, ranges as Mesos' text form.
#[derive(Debug, Serialize)]
pub(crate) struct V0Resources {
    pub cpus: f64,
    pub mem: f64,
    pub disk: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ports: Option<String>,
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
    pub fn from_view(agent: &AgentView) -> Slave {
        let total = V0Resources {
            cpus: agent.resources.cpus,
            mem: agent.resources.mem,
            disk: agent.resources.disk,
            ports: Some(format!("[{PORTS_BEGIN}-{PORTS_END}]")),
        };
        Slave {
            id: agent.id.clone(),
            pid: agent.pid.clone(),
            hostname: agent.hostname.clone(),
            port: agent.port,
            registered_time: agent.registered_unix_ms as f64 / 1000.0,
            unreserved_resources: V0Resources {
                ports: total.ports.clone(),
                ..total
            },
            resources: total,
            used_resources: V0Resources {
                cpus: agent.used_resources.cpus,
                mem: agent.used_resources.mem,
                disk: agent.used_resources.disk,
                ports: None,
            },
            offered_resources: V0Resources {
                cpus: 0.0,
                mem: 0.0,
                disk: 0.0,
                ports: None,
            },
            reserved_resources: BTreeMap::new(),
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

// ---- v0: /master/state (the subset a leader lookup and a dashboard read)

#[derive(Debug, Serialize)]
pub(crate) struct State {
    pub version: String,
    pub id: String,
    pub pid: String,
    pub hostname: String,
    pub start_time: f64,
    pub elected_time: f64,
    pub activated_slaves: usize,
    pub deactivated_slaves: usize,
    /// The leader's pid, `master@127.0.0.1:PORT`.
    pub leader: String,
    pub leader_info: MasterInfo,
    pub slaves: Vec<Slave>,
    pub recovered_slaves: Vec<serde_json::Value>,
    pub frameworks: Vec<serde_json::Value>,
    pub completed_frameworks: Vec<serde_json::Value>,
    pub unregistered_frameworks: Vec<serde_json::Value>,
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

// ---- maintenance: the schedule (v0 body and v1 `schedule`), machine ids

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Schedule {
    /// Mesos writes no empty repeated field: an empty schedule is `{}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<Window>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Window {
    #[serde(default)]
    pub machine_ids: Vec<MachineIdJson>,
    pub unavailability: Unavailability,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Unavailability {
    pub start: Nanoseconds,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Nanoseconds>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Nanoseconds {
    pub nanoseconds: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct MachineIdJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<String>,
}

impl From<MachineIdJson> for MachineId {
    fn from(id: MachineIdJson) -> MachineId {
        MachineId {
            hostname: id.hostname,
            ip: id.ip,
        }
    }
}

impl From<&MachineId> for MachineIdJson {
    fn from(id: &MachineId) -> MachineIdJson {
        MachineIdJson {
            hostname: id.hostname.clone(),
            ip: id.ip.clone(),
        }
    }
}

impl Schedule {
    pub fn from_windows(windows: &[MaintenanceWindow]) -> Schedule {
        Schedule {
            windows: windows
                .iter()
                .map(|w| Window {
                    machine_ids: w.machines.iter().map(MachineIdJson::from).collect(),
                    unavailability: Unavailability {
                        start: Nanoseconds {
                            nanoseconds: w.start_unix_ns,
                        },
                        duration: (w.duration_ns != INDEFINITE_NS).then_some(Nanoseconds {
                            nanoseconds: w.duration_ns,
                        }),
                    },
                })
                .collect(),
        }
    }

    /// The world's windows, or why Mesos would refuse the schedule before
    /// looking at the machines' states.
    pub fn into_windows(self) -> Result<Vec<MaintenanceWindow>, String> {
        self.windows
            .into_iter()
            .map(|w| {
                if w.machine_ids.is_empty() {
                    return Err("List of machines in the maintenance window is empty".to_string());
                }
                let duration_ns = match w.unavailability.duration {
                    Some(d) if d.nanoseconds < 0 => {
                        return Err("Unavailability 'duration' is negative".to_string());
                    }
                    Some(d) => d.nanoseconds,
                    None => INDEFINITE_NS,
                };
                Ok(MaintenanceWindow {
                    machines: w.machine_ids.into_iter().map(MachineId::from).collect(),
                    start_unix_ns: w.unavailability.start.nanoseconds,
                    duration_ns,
                })
            })
            .collect()
    }
}

/// `/master/maintenance/status` and the v1 `status`.
#[derive(Debug, Serialize)]
pub(crate) struct ClusterStatus {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub draining_machines: Vec<DrainingMachine>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub down_machines: Vec<MachineIdJson>,
}

/// No `statuses`: Marathon ignores inverse offers, and the simulator
/// models no other framework that would answer them.
#[derive(Debug, Serialize)]
pub(crate) struct DrainingMachine {
    pub id: MachineIdJson,
}

impl ClusterStatus {
    pub fn from_status(status: &MaintenanceStatus) -> ClusterStatus {
        ClusterStatus {
            draining_machines: status
                .draining
                .iter()
                .map(|m| DrainingMachine { id: m.into() })
                .collect(),
            down_machines: status.down.iter().map(MachineIdJson::from).collect(),
        }
    }
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
pub(crate) struct V1Resource {
    pub name: &'static str,
    pub role: &'static str,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scalar: Option<Scalar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranges: Option<Ranges>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Scalar {
    pub value: f64,
}

#[derive(Debug, Serialize)]
pub(crate) struct Ranges {
    pub range: Vec<Range>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Range {
    pub begin: u64,
    pub end: u64,
}

#[derive(Debug, Serialize)]
pub(crate) struct V1Attribute {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: Value,
}

fn scalar(name: &'static str, value: f64) -> V1Resource {
    V1Resource {
        name,
        role: "*",
        kind: "SCALAR",
        scalar: Some(Scalar { value }),
        ranges: None,
    }
}

impl V1Agent {
    pub fn from_view(agent: &AgentView) -> V1Agent {
        let total = vec![
            scalar("cpus", agent.resources.cpus),
            scalar("mem", agent.resources.mem),
            scalar("disk", agent.resources.disk),
            V1Resource {
                name: "ports",
                role: "*",
                kind: "RANGES",
                scalar: None,
                ranges: Some(Ranges {
                    range: vec![Range {
                        begin: PORTS_BEGIN,
                        end: PORTS_END,
                    }],
                }),
            },
        ];
        let used = &agent.used_resources;
        let allocated = if used.cpus > 0.0 || used.mem > 0.0 {
            vec![scalar("cpus", used.cpus), scalar("mem", used.mem)]
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
                resources: vec![
                    scalar("cpus", agent.resources.cpus),
                    scalar("mem", agent.resources.mem),
                    scalar("disk", agent.resources.disk),
                ],
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
            registered_time: Nanoseconds {
                nanoseconds: i64::try_from(agent.registered_unix_ms)
                    .unwrap_or(i64::MAX / 1_000_000)
                    .saturating_mul(1_000_000),
            },
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
