//! Agents as the master lists them: `/master/slaves` (and the `slaves`
//! of `/master/state` and `/master/state-summary`), Mesos 1.9's
//! `SlaveWriter`, and the v1 GET_AGENTS answer, Mesos'
//! `createAgentResponse` turned into JSON.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Nanoseconds, PORTS_BEGIN, PORTS_END, V0Resources, V1Resource, Value};
use super::{port_ranges, total_resources, used_resources};
use crate::sim::world::{AgentView, DrainView};

// ---- v0: /master/slaves and the `slaves` of /master/state

#[derive(Debug, Serialize)]
pub(crate) struct SlavesResponse {
    pub(crate) slaves: Vec<Slave>,
    /// Agents known from the registry after a failover that have not
    /// re-registered: the simulator's masters share one world, so none.
    pub(crate) recovered_slaves: Vec<serde_json::Value>,
}

#[derive(Debug, Serialize)]
pub(crate) struct Slave {
    pub(crate) id: String,
    pub(crate) pid: String,
    pub(crate) hostname: String,
    pub(crate) port: u16,
    /// Seconds since the epoch, as a float (Mesos' `registered_time`).
    pub(crate) registered_time: f64,
    /// Written only for an agent that re-registered (with a new leader; a
    /// restarted agent registers anew, with a new id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reregistered_time: Option<f64>,
    pub(crate) resources: V0Resources,
    pub(crate) used_resources: V0Resources,
    pub(crate) offered_resources: V0Resources,
    /// Per role, what is reserved to it: a DC/OS public agent has its
    /// whole `resources` under `slave_public`; an unreserved agent, none.
    pub(crate) reserved_resources: BTreeMap<String, V0Resources>,
    pub(crate) unreserved_resources: V0Resources,
    /// `reserved_resources` as protobuf `Resource`s (Mesos'
    /// `JSON::Protobuf`), per role.
    pub(crate) reserved_resources_full: BTreeMap<String, Vec<V1Resource>>,
    pub(crate) unreserved_resources_full: Vec<V1Resource>,
    /// What the agent's tasks hold and what is offered (nothing: the
    /// simulated master holds no offers), as protobuf `Resource`s.
    pub(crate) used_resources_full: Vec<V1Resource>,
    pub(crate) offered_resources_full: Vec<V1Resource>,
    /// TEXT attributes as strings.
    pub(crate) attributes: BTreeMap<String, String>,
    pub(crate) active: bool,
    pub(crate) deactivated: bool,
    pub(crate) version: String,
    pub(crate) capabilities: Vec<&'static str>,
    /// Once DRAIN_AGENT was accepted, until REACTIVATE_AGENT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) drain_info: Option<DrainInfo>,
    /// With `drain_info`: when the drain was last asked, in seconds since
    /// the epoch (Mesos' `estimatedDrainStartTime`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) estimated_drain_start_time_seconds: Option<f64>,
}

/// Mesos' `DrainInfo` as `JSON::Protobuf` writes it, in both APIs.
#[derive(Debug, Serialize)]
pub(crate) struct DrainInfo {
    pub(crate) state: &'static str,
    pub(crate) config: DrainConfig,
}

/// Mesos' `DrainConfig`: the grace period cap a `DurationInfo`, written
/// only when DRAIN_AGENT gave one; `mark_gone` always (the master sets it).
#[derive(Debug, Serialize)]
pub(crate) struct DrainConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_grace_period: Option<Nanoseconds>,
    pub(crate) mark_gone: bool,
}

impl DrainInfo {
    fn from_view(drain: &DrainView) -> DrainInfo {
        DrainInfo {
            state: drain.state,
            config: DrainConfig {
                max_grace_period: drain
                    .config
                    .max_grace_period_ns
                    .map(|nanoseconds| Nanoseconds { nanoseconds }),
                mark_gone: drain.config.mark_gone,
            },
        }
    }
}

impl Slave {
    /// An agent as `/master/slaves` writes it. A reserved agent (a DC/OS
    /// public agent) has everything under its role and nothing unreserved,
    /// as dcos/dcos-checks' capture of a DC/OS 1.10 public agent (Mesos
    /// 1.3) shows: `reserved_resources: {"slave_public": {…, "ports"}}`,
    /// `unreserved_resources` of zeros without `ports`.
    pub(crate) fn from_view(agent: &AgentView) -> Slave {
        let total = V0Resources {
            cpus: agent.resources.cpus,
            gpus: 0.0,
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
                gpus: 0.0,
                mem: agent.used_resources.mem,
                disk: agent.used_resources.disk,
                ports: port_ranges(&agent.used_ports),
            },
            offered_resources: V0Resources::default(),
            used_resources_full: used_resources(agent),
            offered_resources_full: Vec::new(),
            reserved_resources,
            attributes: agent.attributes.clone(),
            active: agent.active,
            deactivated: agent.deactivated,
            version: agent.version.clone(),
            capabilities: agent.capabilities.clone(),
            drain_info: agent.drain.as_ref().map(DrainInfo::from_view),
            estimated_drain_start_time_seconds: agent
                .drain
                .as_ref()
                .map(|d| d.asked_unix_ms as f64 / 1000.0),
        }
    }
}

// ---- v1: GET_AGENTS

#[derive(Debug, Serialize)]
pub(crate) struct GetAgentsResponse {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) get_agents: GetAgents,
}

#[derive(Debug, Serialize)]
pub(crate) struct GetAgents {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) agents: Vec<V1Agent>,
}

#[derive(Debug, Serialize)]
pub(crate) struct V1Agent {
    pub(crate) agent_info: AgentInfo,
    pub(crate) active: bool,
    pub(crate) deactivated: bool,
    pub(crate) pid: String,
    pub(crate) registered_time: Nanoseconds,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reregistered_time: Option<Nanoseconds>,
    pub(crate) total_resources: Vec<V1Resource>,
    /// Repeated fields: left out when empty, as protobuf's JSON does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) allocated_resources: Vec<V1Resource>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) offered_resources: Vec<V1Resource>,
    pub(crate) version: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) capabilities: Vec<Capability>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) drain_info: Option<DrainInfo>,
    /// With `drain_info`: when the drain was last asked, in whole seconds
    /// (Mesos writes `Seconds(time.secs()).ns()`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) estimated_drain_start_time: Option<Nanoseconds>,
}

/// `AgentInfo.Capability` as protobuf JSON: `{"type": "MULTI_ROLE"}`.
#[derive(Debug, Serialize)]
pub(crate) struct Capability {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
}

#[derive(Debug, Serialize)]
pub(crate) struct AgentInfo {
    pub(crate) hostname: String,
    pub(crate) id: Value,
    pub(crate) port: u16,
    pub(crate) resources: Vec<V1Resource>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) attributes: Vec<V1Attribute>,
}

#[derive(Debug, Serialize)]
pub(crate) struct V1Attribute {
    pub(crate) name: String,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) text: Value,
}

fn unix_ms_as_nanoseconds(ms: u64) -> Nanoseconds {
    Nanoseconds {
        nanoseconds: i64::try_from(ms)
            .unwrap_or(i64::MAX / 1_000_000)
            .saturating_mul(1_000_000),
    }
}

impl V1Agent {
    pub(crate) fn from_view(agent: &AgentView) -> V1Agent {
        let total = total_resources(agent);
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
            allocated_resources: used_resources(agent),
            offered_resources: Vec::new(),
            version: agent.version.clone(),
            capabilities: agent
                .capabilities
                .iter()
                .map(|&kind| Capability { kind })
                .collect(),
            drain_info: agent.drain.as_ref().map(DrainInfo::from_view),
            estimated_drain_start_time: agent
                .drain
                .as_ref()
                .map(|d| unix_ms_as_nanoseconds(d.asked_unix_ms / 1000 * 1000)),
        }
    }
}
