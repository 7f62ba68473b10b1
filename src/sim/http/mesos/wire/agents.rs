//! Agents as the master lists them: `/master/slaves` (and the `slaves`
//! of `/master/state` and `/master/state-summary`), Mesos 1.9's
//! `SlaveWriter`, and the v1 GET_AGENTS answer, Mesos'
//! `createAgentResponse` turned into JSON.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Nanoseconds, PORTS_BEGIN, PORTS_END, V0Resources, V1Resource, Value};
use super::{port_ranges, scalar, total_resources};
use crate::sim::world::AgentView;

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

// ---- v1: GET_AGENTS

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
