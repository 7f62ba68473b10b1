//! Resources as the master writes them: v0's flat form (scalars as
//! numbers, ranges as text) and protobuf `Resource`s with their role and,
//! reserved, their reservations; what every simulated agent has.

use serde::Serialize;

use crate::sim::world::AgentView;

/// The ports every simulated agent offers, as Mesos' default `ports`.
pub(crate) const PORTS_BEGIN: u64 = 31000;
pub(crate) const PORTS_END: u64 = 32000;

/// v0 resources: scalars as numbers, ranges as Mesos' text form.
/// Mesos' `json(Resources)` writes `cpus`, `gpus`, `mem` and `disk`
/// always (0 when absent), then whatever ranges there are.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct V0Resources {
    pub(crate) cpus: f64,
    pub(crate) gpus: f64,
    pub(crate) mem: f64,
    pub(crate) disk: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ports: Option<String>,
}

/// Ports as Mesos writes a RANGES resource in v0 JSON: `[31000-31001,
/// 31005-31005]`; none (the key left out) for no port.
pub(crate) fn port_ranges(ports: &[u16]) -> Option<String> {
    let ranges = port_spans(ports);
    (!ranges.is_empty()).then(|| {
        let parts: Vec<String> = ranges.iter().map(|(b, e)| format!("{b}-{e}")).collect();
        format!("[{}]", parts.join(", "))
    })
}

/// Ascending ports as the (first, last) of each run of consecutive ones.
fn port_spans(ports: &[u16]) -> Vec<(u16, u16)> {
    let mut ranges: Vec<(u16, u16)> = Vec::new();
    for &p in ports {
        match ranges.last_mut() {
            Some((_, end)) if u32::from(*end) + 1 == u32::from(p) => *end = p,
            _ => ranges.push((p, p)),
        }
    }
    ranges
}

/// A protobuf `Resource` as Mesos writes it at its endpoints: the
/// (deprecated) `role`, `*` when unreserved; a statically reserved one
/// also carries its `reservations` stack, one `STATIC` reservation to the
/// role (Mesos ≥ 1.4's endpoint format; the 1.3 capture has `role` alone).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct V1Resource {
    pub(crate) name: &'static str,
    pub(crate) role: String,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) scalar: Option<Scalar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ranges: Option<Ranges>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) reservations: Vec<Reservation>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Reservation {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) role: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Scalar {
    pub(crate) value: f64,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Ranges {
    pub(crate) range: Vec<Range>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Range {
    pub(crate) begin: u64,
    pub(crate) end: u64,
}

/// A resource of `role` (`None`: unreserved, `*`).
pub(crate) fn resource(name: &'static str, role: Option<&str>) -> V1Resource {
    V1Resource {
        name,
        role: role.unwrap_or("*").to_string(),
        kind: "SCALAR",
        scalar: None,
        ranges: None,
        reservations: role
            .map(|role| {
                vec![Reservation {
                    kind: "STATIC",
                    role: role.to_string(),
                }]
            })
            .unwrap_or_default(),
    }
}

pub(crate) fn scalar(name: &'static str, value: f64, role: Option<&str>) -> V1Resource {
    V1Resource {
        scalar: Some(Scalar { value }),
        ..resource(name, role)
    }
}

/// Everything the agent has, `ports` included, each of its role: what it
/// announces in its AgentInfo, as in the GET_AGENTS example of Mesos'
/// operator API docs (an unreserved agent), and what `/master/slaves`
/// lists as `reserved_resources_full` or `unreserved_resources_full`.
pub(crate) fn total_resources(agent: &AgentView) -> Vec<V1Resource> {
    let role = agent.role.as_deref();
    vec![
        scalar("cpus", agent.resources.cpus, role),
        scalar("mem", agent.resources.mem, role),
        scalar("disk", agent.resources.disk, role),
        V1Resource {
            kind: "RANGES",
            ranges: Some(Ranges {
                range: vec![Range {
                    begin: PORTS_BEGIN,
                    end: PORTS_END,
                }],
            }),
            ..resource("ports", role)
        },
    ]
}

/// What the agent's tasks hold, as Mesos sums it (`Resources::sum` of the
/// used resources: nothing of zero, the tasks' host ports as RANGES):
/// GET_AGENTS' `allocated_resources`, `/master/slaves`'
/// `used_resources_full`.
pub(crate) fn used_resources(agent: &AgentView) -> Vec<V1Resource> {
    let role = agent.role.as_deref();
    let used = &agent.used_resources;
    let mut resources: Vec<V1Resource> =
        [("cpus", used.cpus), ("mem", used.mem), ("disk", used.disk)]
            .into_iter()
            .filter(|(_, value)| *value > 0.0)
            .map(|(name, value)| scalar(name, value, role))
            .collect();
    let spans = port_spans(&agent.used_ports);
    if !spans.is_empty() {
        resources.push(V1Resource {
            kind: "RANGES",
            ranges: Some(Ranges {
                range: spans
                    .into_iter()
                    .map(|(begin, end)| Range {
                        begin: u64::from(begin),
                        end: u64::from(end),
                    })
                    .collect(),
            }),
            ..resource("ports", role)
        });
    }
    resources
}
