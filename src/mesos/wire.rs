//! The Mesos master's JSON, as serde types, and their translation to the
//! port's domain types. Field names and shapes follow the real responses
//! in tests/fixtures/ (v0 endpoints and the v1 operator API); every field
//! an older or newer master may omit is optional here.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::lenient::Number;
use crate::roll::ports::mesos::{
    Agent, AgentId, Agents, AttributeValue, DrainState, DrainingMachine, Framework, FrameworkTask,
    InverseOfferAnswer, InverseOfferResponse, MachineId, MaintenanceSchedule, MaintenanceStatus,
    MaintenanceWindow, RecoveredAgent, Resources, Unavailability,
};

// ---- v0: /master/frameworks (and the `frameworks` of /master/state)

/// `{"frameworks": [...], "completed_frameworks": [...], ...}`: only the
/// registered ones are read (a completed framework runs nothing).
#[derive(Debug, Deserialize)]
pub(crate) struct FrameworksResponse {
    #[serde(default)]
    pub(crate) frameworks: Vec<WireFramework>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireFramework {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) name: String,
    /// Absent in the oldest masters, where only active ones are listed.
    pub(crate) active: Option<bool>,
    /// Its tasks not yet terminal (terminal ones are `completed_tasks`,
    /// unreachable ones `unreachable_tasks`: neither runs on an agent).
    #[serde(default)]
    pub(crate) tasks: Vec<WireFrameworkTask>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireFrameworkTask {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) name: String,
    pub(crate) slave_id: String,
    #[serde(default)]
    pub(crate) state: String,
    #[serde(default)]
    pub(crate) resources: BTreeMap<String, serde_json::Value>,
}

/// Mesos' terminal task states: such a task runs nowhere.
const TERMINAL_TASK_STATES: [&str; 8] = [
    "TASK_FINISHED",
    "TASK_FAILED",
    "TASK_KILLED",
    "TASK_LOST",
    "TASK_ERROR",
    "TASK_DROPPED",
    "TASK_GONE",
    "TASK_GONE_BY_OPERATOR",
];

impl From<FrameworksResponse> for Vec<Framework> {
    fn from(wire: FrameworksResponse) -> Vec<Framework> {
        wire.frameworks
            .into_iter()
            .map(|f| Framework {
                id: f.id,
                name: f.name,
                active: f.active.unwrap_or(true),
                tasks: f
                    .tasks
                    .into_iter()
                    // Old masters list a task that just ended here too.
                    .filter(|t| !TERMINAL_TASK_STATES.contains(&t.state.as_str()))
                    .map(|t| {
                        let scalar = |name: &str| {
                            t.resources
                                .get(name)
                                .and_then(serde_json::Value::as_f64)
                                .unwrap_or(0.0)
                        };
                        FrameworkTask {
                            cpus: scalar("cpus"),
                            mem: scalar("mem"),
                            id: t.id,
                            name: t.name,
                            agent_id: t.slave_id,
                            state: t.state,
                        }
                    })
                    .collect(),
            })
            .collect()
    }
}

// ---- v0: /master/slaves (and the `slaves` of /master/state, /state-summary)

#[derive(Debug, Deserialize)]
pub(crate) struct SlavesResponse {
    #[serde(default)]
    pub(crate) slaves: Vec<Slave>,
    /// Absent before Mesos 1.0 and in `/master/state-summary`.
    #[serde(default)]
    pub(crate) recovered_slaves: Vec<RecoveredSlave>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Slave {
    pub(crate) id: String,
    pub(crate) hostname: String,
    pub(crate) port: Option<u16>,
    /// `slave(1)@10.0.0.5:5051`.
    pub(crate) pid: Option<String>,
    /// Absent in Mesos 0.19, which lists registered agents only.
    pub(crate) active: Option<bool>,
    /// Mesos 1.9 and later.
    #[serde(default)]
    pub(crate) deactivated: bool,
    /// Seconds since the epoch, as a float.
    pub(crate) registered_time: Option<f64>,
    pub(crate) reregistered_time: Option<f64>,
    /// TEXT attributes are strings, SCALAR ones numbers.
    #[serde(default)]
    pub(crate) attributes: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub(crate) resources: Scalars,
    #[serde(default)]
    pub(crate) used_resources: Scalars,
    /// By role: `{"slave_public": {"cpus": 4, ...}}` (Mesos 0.25 and
    /// later; absent before).
    #[serde(default)]
    pub(crate) reserved_resources: BTreeMap<String, Scalars>,
    /// Mesos 1.0 and later; before, what `resources` holds beyond the
    /// reserved ones.
    pub(crate) unreserved_resources: Option<Scalars>,
    pub(crate) version: Option<String>,
    pub(crate) drain_info: Option<DrainInfo>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct RecoveredSlave {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) hostname: String,
    pub(crate) port: Option<u16>,
}

/// `{"state": "DRAINING"|"DRAINED", "config": {...}}`; the config is not
/// needed by the roll.
#[derive(Debug, Deserialize)]
pub(crate) struct DrainInfo {
    pub(crate) state: String,
}

impl SlavesResponse {
    pub(crate) fn into_agents(self) -> Agents {
        Agents {
            registered: self.slaves.into_iter().map(Slave::into_agent).collect(),
            recovered: self
                .recovered_slaves
                .into_iter()
                .map(|slave| RecoveredAgent {
                    id: AgentId(slave.id),
                    hostname: slave.hostname,
                    port: slave.port,
                })
                .collect(),
        }
    }
}

impl Slave {
    pub(crate) fn into_agent(self) -> Agent {
        Agent {
            ip: self.pid.as_deref().and_then(ip_from_pid),
            id: AgentId(self.id),
            hostname: self.hostname,
            port: self.port,
            // Mesos 0.19 has no `active` and lists only registered agents.
            active: self.active.unwrap_or(true),
            deactivated: self.deactivated,
            registered_at: self.registered_time.and_then(time_from_secs),
            reregistered_at: self.reregistered_time.and_then(time_from_secs),
            attributes: self
                .attributes
                .into_iter()
                .map(|(name, value)| (name, attribute_from_json(value)))
                .collect(),
            reserved_roles: self
                .reserved_resources
                .iter()
                .filter(|(_, r)| r.offers_any())
                .map(|(role, _)| role.clone())
                .collect(),
            unreserved: match &self.unreserved_resources {
                Some(unreserved) => unreserved.offers_any(),
                None => {
                    let reserved: f64 = self
                        .reserved_resources
                        .values()
                        .filter_map(|r| r.cpus.0)
                        .sum();
                    self.resources.resources().cpus > reserved
                }
            },
            resources: self.resources.resources(),
            used_resources: self.used_resources.resources(),
            version: self.version,
            drain: self.drain_info.map(|info| drain_state(&info.state)),
        }
    }
}

/// A v0 resources object (`{"cpus": 4, "mem": 2933, "ports": "[...]"}`),
/// as far as roller reads it: its CPU, memory and disk. Read as it is
/// parsed (an agent has four such objects; 4,000 agents built 16,000
/// maps of JSON values a tick); any other resource is skipped, and a
/// value that is not a number reads as none, as before.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Scalars {
    #[serde(default)]
    cpus: Number,
    #[serde(default)]
    mem: Number,
    #[serde(default)]
    disk: Number,
}

impl Scalars {
    /// Whether it holds any CPU or memory.
    fn offers_any(&self) -> bool {
        [self.cpus.0, self.mem.0]
            .into_iter()
            .any(|v| v.is_some_and(|v| v > 0.0))
    }

    fn resources(&self) -> Resources {
        Resources {
            cpus: self.cpus.0.unwrap_or(0.0),
            mem: self.mem.0.unwrap_or(0.0),
            disk: self.disk.0.unwrap_or(0.0),
        }
    }
}

/// The IP of a libprocess pid `name@ip:port`.
pub(crate) fn ip_from_pid(pid: &str) -> Option<IpAddr> {
    let (_, address) = pid.rsplit_once('@')?;
    if let Ok(socket) = address.parse::<SocketAddr>() {
        return Some(socket.ip());
    }
    let (host, _port) = address.rsplit_once(':')?;
    host.parse().ok()
}

fn time_from_secs(secs: f64) -> Option<SystemTime> {
    let since_epoch = Duration::try_from_secs_f64(secs).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(since_epoch)
}

fn time_from_nanos(nanos: i64) -> Option<SystemTime> {
    let nanos = u64::try_from(nanos).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_nanos(nanos))
}

fn attribute_from_json(value: serde_json::Value) -> AttributeValue {
    match value {
        serde_json::Value::Number(number) => match number.as_f64() {
            Some(scalar) => AttributeValue::Scalar(scalar),
            None => AttributeValue::Text(number.to_string()),
        },
        serde_json::Value::String(text) => AttributeValue::Text(text),
        other => AttributeValue::Text(other.to_string()),
    }
}

fn drain_state(state: &str) -> DrainState {
    match state {
        "DRAINING" => DrainState::Draining,
        "DRAINED" => DrainState::Drained,
        other => DrainState::Other(other.to_string()),
    }
}

// ---- v0: /master/state, only to find the leader on masters without
// a usable /master/redirect.

#[derive(Debug, Deserialize)]
pub(crate) struct StateLeader {
    /// The leader's pid, `master@10.0.0.1:5050` (Mesos 0.19 and later).
    pub(crate) leader: Option<String>,
    /// Mesos 1.x: the leader's MasterInfo.
    pub(crate) leader_info: Option<LeaderInfo>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct LeaderInfo {
    pub(crate) hostname: Option<String>,
    pub(crate) port: Option<u16>,
}

impl StateLeader {
    /// `host:port` of the leader, if the master knows one.
    pub(crate) fn leader_address(&self) -> Option<String> {
        if let Some(LeaderInfo {
            hostname: Some(hostname),
            port: Some(port),
        }) = &self.leader_info
            && !hostname.is_empty()
        {
            return Some(format!("{hostname}:{port}"));
        }
        let (_, address) = self.leader.as_deref()?.rsplit_once('@')?;
        (!address.is_empty()).then(|| address.to_string())
    }
}

// ---- v0: /master/maintenance/schedule (GET and POST)

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Schedule {
    #[serde(default)]
    pub(crate) windows: Vec<Window>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Window {
    #[serde(default)]
    pub(crate) machine_ids: Vec<MachineIdJson>,
    pub(crate) unavailability: UnavailabilityJson,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct MachineIdJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hostname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ip: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct UnavailabilityJson {
    pub(crate) start: Nanoseconds,
    /// Absent: unavailable indefinitely.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) duration: Option<Nanoseconds>,
}

/// Both `TimeInfo` and `DurationInfo`: `{"nanoseconds": n}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Nanoseconds {
    pub(crate) nanoseconds: i64,
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

impl From<Schedule> for MaintenanceSchedule {
    fn from(schedule: Schedule) -> MaintenanceSchedule {
        MaintenanceSchedule {
            windows: schedule
                .windows
                .into_iter()
                .map(|window| MaintenanceWindow {
                    machines: window
                        .machine_ids
                        .into_iter()
                        .map(MachineId::from)
                        .collect(),
                    unavailability: Unavailability {
                        start_nanos: window.unavailability.start.nanoseconds,
                        duration_nanos: window.unavailability.duration.map(|d| d.nanoseconds),
                    },
                })
                .collect(),
        }
    }
}

impl From<&MaintenanceSchedule> for Schedule {
    fn from(schedule: &MaintenanceSchedule) -> Schedule {
        Schedule {
            windows: schedule
                .windows
                .iter()
                .map(|window| Window {
                    machine_ids: window.machines.iter().map(MachineIdJson::from).collect(),
                    unavailability: UnavailabilityJson {
                        start: Nanoseconds {
                            nanoseconds: window.unavailability.start_nanos,
                        },
                        duration: window
                            .unavailability
                            .duration_nanos
                            .map(|nanoseconds| Nanoseconds { nanoseconds }),
                    },
                })
                .collect(),
        }
    }
}

// ---- v0: /master/maintenance/status (the v1 GET_MAINTENANCE_STATUS
// `status` has the same shape)

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ClusterStatus {
    #[serde(default)]
    pub(crate) draining_machines: Vec<DrainingMachineJson>,
    #[serde(default)]
    pub(crate) down_machines: Vec<MachineIdJson>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct DrainingMachineJson {
    pub(crate) id: MachineIdJson,
    #[serde(default)]
    pub(crate) statuses: Vec<InverseOfferStatus>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct InverseOfferStatus {
    pub(crate) status: String,
    pub(crate) framework_id: Value,
}

impl From<ClusterStatus> for MaintenanceStatus {
    fn from(status: ClusterStatus) -> MaintenanceStatus {
        MaintenanceStatus {
            draining: status
                .draining_machines
                .into_iter()
                .map(|machine| DrainingMachine {
                    id: machine.id.into(),
                    responses: machine
                        .statuses
                        .into_iter()
                        .map(|status| InverseOfferResponse {
                            framework_id: status.framework_id.value,
                            answer: match status.status.as_str() {
                                "ACCEPT" => InverseOfferAnswer::Accept,
                                "DECLINE" => InverseOfferAnswer::Decline,
                                _ => InverseOfferAnswer::Unknown,
                            },
                        })
                        .collect(),
                })
                .collect(),
            down: status
                .down_machines
                .into_iter()
                .map(MachineId::from)
                .collect(),
        }
    }
}

/// Protobuf ids in JSON: `{"value": "..."}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Value {
    pub(crate) value: String,
}

// ---- v1 operator API: POST /api/v1

/// A v1 `master::Call`, as JSON.
#[derive(Debug, Serialize)]
pub(crate) struct V1Call {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) drain_agent: Option<DrainAgent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) deactivate_agent: Option<DeactivateAgent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reactivate_agent: Option<DeactivateAgent>,
}

impl V1Call {
    pub(crate) fn get_agents() -> V1Call {
        V1Call {
            kind: "GET_AGENTS",
            drain_agent: None,
            deactivate_agent: None,
            reactivate_agent: None,
        }
    }

    pub(crate) fn drain_agent(
        agent: &AgentId,
        max_grace_period: Option<Duration>,
        mark_gone: bool,
    ) -> V1Call {
        V1Call {
            kind: "DRAIN_AGENT",
            drain_agent: Some(DrainAgent {
                agent_id: Value {
                    value: agent.0.clone(),
                },
                max_grace_period: max_grace_period.map(ProtoDuration::from),
                mark_gone,
            }),
            deactivate_agent: None,
            reactivate_agent: None,
        }
    }

    pub(crate) fn deactivate_agent(agent: &AgentId) -> V1Call {
        V1Call {
            kind: "DEACTIVATE_AGENT",
            drain_agent: None,
            deactivate_agent: Some(DeactivateAgent {
                agent_id: Value {
                    value: agent.0.clone(),
                },
            }),
            reactivate_agent: None,
        }
    }

    /// `REACTIVATE_AGENT {agent_id}` (the same body as DEACTIVATE's).
    pub(crate) fn reactivate_agent(agent: &AgentId) -> V1Call {
        V1Call {
            kind: "REACTIVATE_AGENT",
            drain_agent: None,
            deactivate_agent: None,
            reactivate_agent: Some(DeactivateAgent {
                agent_id: Value {
                    value: agent.0.clone(),
                },
            }),
        }
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct DrainAgent {
    pub(crate) agent_id: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_grace_period: Option<ProtoDuration>,
    pub(crate) mark_gone: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct DeactivateAgent {
    pub(crate) agent_id: Value,
}

/// `google.protobuf.Duration` in JSON mapping: `{"seconds": s, "nanos": n}`
/// (nanos omitted when zero, as in the Mesos docs).
#[derive(Debug, Serialize)]
pub(crate) struct ProtoDuration {
    pub(crate) seconds: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) nanos: i32,
}

fn is_zero(nanos: &i32) -> bool {
    *nanos == 0
}

impl From<Duration> for ProtoDuration {
    fn from(duration: Duration) -> ProtoDuration {
        ProtoDuration {
            seconds: i64::try_from(duration.as_secs()).unwrap_or(i64::MAX),
            // Below 10^9, so it always fits.
            nanos: i32::try_from(duration.subsec_nanos()).unwrap_or(0),
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct GetAgentsResponse {
    pub(crate) get_agents: GetAgents,
}

#[derive(Debug, Deserialize)]
pub(crate) struct GetAgents {
    #[serde(default)]
    pub(crate) agents: Vec<V1Agent>,
    #[serde(default)]
    pub(crate) recovered_agents: Vec<V1AgentInfo>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct V1Agent {
    pub(crate) agent_info: V1AgentInfo,
    #[serde(default)]
    pub(crate) active: bool,
    #[serde(default)]
    pub(crate) deactivated: bool,
    pub(crate) pid: Option<String>,
    pub(crate) registered_time: Option<Nanoseconds>,
    pub(crate) reregistered_time: Option<Nanoseconds>,
    #[serde(default)]
    pub(crate) total_resources: Vec<V1Resource>,
    #[serde(default)]
    pub(crate) allocated_resources: Vec<V1Resource>,
    pub(crate) version: Option<String>,
    pub(crate) drain_info: Option<DrainInfo>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct V1AgentInfo {
    pub(crate) id: Value,
    #[serde(default)]
    pub(crate) hostname: String,
    pub(crate) port: Option<u16>,
    #[serde(default)]
    pub(crate) attributes: Vec<V1Attribute>,
    #[serde(default)]
    pub(crate) resources: Vec<V1Resource>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct V1Resource {
    pub(crate) name: String,
    pub(crate) scalar: Option<Scalar>,
    /// The pre-refinement role (`*` when unreserved); deprecated, still
    /// sent.
    pub(crate) role: Option<String>,
    /// Reservation refinement (Mesos 1.4 and later): the last one is the
    /// role the resource is reserved to.
    #[serde(default)]
    pub(crate) reservations: Vec<V1Reservation>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct V1Reservation {
    pub(crate) role: Option<String>,
}

impl V1Resource {
    /// The role it is reserved to, `None` when unreserved.
    fn reserved_to(&self) -> Option<&str> {
        let role = match self.reservations.last() {
            Some(reservation) => reservation.role.as_deref(),
            None => self.role.as_deref(),
        };
        role.filter(|r| *r != "*")
    }

    /// Whether it is CPU or memory of a positive amount.
    fn counts(&self) -> bool {
        matches!(self.name.as_str(), "cpus" | "mem")
            && self.scalar.as_ref().is_some_and(|s| s.value > 0.0)
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct Scalar {
    pub(crate) value: f64,
}

#[derive(Debug, Deserialize)]
pub(crate) struct V1Attribute {
    pub(crate) name: String,
    pub(crate) scalar: Option<Scalar>,
    pub(crate) text: Option<Value>,
    pub(crate) ranges: Option<Ranges>,
    pub(crate) set: Option<Set>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Ranges {
    #[serde(default)]
    pub(crate) range: Vec<Range>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Range {
    pub(crate) begin: u64,
    pub(crate) end: u64,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Set {
    #[serde(default)]
    pub(crate) item: Vec<String>,
}

impl GetAgentsResponse {
    pub(crate) fn into_agents(self) -> Agents {
        Agents {
            registered: self
                .get_agents
                .agents
                .into_iter()
                .map(V1Agent::into_agent)
                .collect(),
            recovered: self
                .get_agents
                .recovered_agents
                .into_iter()
                .map(|info| RecoveredAgent {
                    id: AgentId(info.id.value),
                    hostname: info.hostname,
                    port: info.port,
                })
                .collect(),
        }
    }
}

impl V1Agent {
    fn into_agent(self) -> Agent {
        // `total_resources` is the newer field; older masters only fill
        // the agent's own `resources`.
        let total = if self.total_resources.is_empty() {
            &self.agent_info.resources
        } else {
            &self.total_resources
        };
        Agent {
            ip: self.pid.as_deref().and_then(ip_from_pid),
            id: AgentId(self.agent_info.id.value),
            hostname: self.agent_info.hostname,
            port: self.agent_info.port,
            active: self.active,
            deactivated: self.deactivated,
            registered_at: self
                .registered_time
                .and_then(|t| time_from_nanos(t.nanoseconds)),
            reregistered_at: self
                .reregistered_time
                .and_then(|t| time_from_nanos(t.nanoseconds)),
            attributes: self
                .agent_info
                .attributes
                .into_iter()
                .map(|attribute| (attribute.name.clone(), attribute_from_v1(attribute)))
                .collect(),
            reserved_roles: total
                .iter()
                .filter(|r| r.counts())
                .filter_map(|r| r.reserved_to().map(str::to_string))
                .collect(),
            unreserved: total
                .iter()
                .any(|r| r.counts() && r.reserved_to().is_none()),
            resources: resources_from_list(total),
            used_resources: resources_from_list(&self.allocated_resources),
            version: self.version,
            drain: self.drain_info.map(|info| drain_state(&info.state)),
        }
    }
}

/// Renders RANGES and SET the way the v0 endpoints do (`[1-2, 4-5]`,
/// `{a,b}`), so both APIs give the roll the same attribute values.
fn attribute_from_v1(attribute: V1Attribute) -> AttributeValue {
    if let Some(scalar) = attribute.scalar {
        return AttributeValue::Scalar(scalar.value);
    }
    if let Some(text) = attribute.text {
        return AttributeValue::Text(text.value);
    }
    if let Some(ranges) = attribute.ranges {
        let parts: Vec<String> = ranges
            .range
            .iter()
            .map(|r| format!("{}-{}", r.begin, r.end))
            .collect();
        return AttributeValue::Text(format!("[{}]", parts.join(", ")));
    }
    if let Some(set) = attribute.set {
        return AttributeValue::Text(format!("{{{}}}", set.item.join(",")));
    }
    AttributeValue::Text(String::new())
}

/// v1 resources are a list with one entry per role and name: sum them.
fn resources_from_list(resources: &[V1Resource]) -> Resources {
    let scalar = |name: &str| {
        resources
            .iter()
            .filter(|r| r.name == name)
            .filter_map(|r| r.scalar.as_ref().map(|s| s.value))
            .sum()
    };
    Resources {
        cpus: scalar("cpus"),
        mem: scalar("mem"),
        disk: scalar("disk"),
    }
}
