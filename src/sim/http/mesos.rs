//! The Mesos master facade: one of the three simulated masters, serving
//! the v0 endpoints and the v1 operator calls the roller uses over the
//! shared world, with Mesos' own status codes, redirects and error texts.
//!
//! Leadership as Mesos does it: every master answers `/health`; any master
//! answers `/master/redirect` with a 307 to the leader's base URL (the
//! leader to itself); a non-leader answers every other master endpoint and
//! `/api/v1` with a 307 to the same path on the leader. Locations are
//! protocol-relative (`//127.0.0.1:PORT/...`), as Mesos writes them.
//!
//! - `wire`: the JSON the master writes and reads.

mod wire;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::sim::shared::{Peers, SharedWorld};
use crate::sim::world::{MachineId, MesosError, World};

use wire::{
    ClusterStatus, GetAgents, GetAgentsResponse, GetScheduleResponse, GetStatusResponse,
    MachineIdJson, MasterInfo, Schedule, ScheduleEnvelope, Slave, SlavesResponse, StatusEnvelope,
    V1Agent, V1Call,
};

/// The version the simulated masters report.
const MESOS_VERSION: &str = "1.9.0";

/// The master at `peers.url(index)`; it leads when `peers.leader() == index`.
pub fn router(world: SharedWorld, peers: Arc<Peers>, index: usize) -> Router {
    Router::new().fallback(handle).with_state(Master {
        world,
        peers,
        index,
    })
}

#[derive(Clone)]
struct Master {
    world: SharedWorld,
    peers: Arc<Peers>,
    index: usize,
}

/// What a request asks for, once its path is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    Health,
    Redirect,
    Slaves,
    State,
    Schedule,
    Status,
    MachineDown,
    MachineUp,
    ApiV1,
}

impl Endpoint {
    fn from_path(path: &str) -> Option<Endpoint> {
        Some(match path {
            "/health" | "/master/health" => Endpoint::Health,
            "/master/redirect" | "/redirect" => Endpoint::Redirect,
            "/master/slaves" => Endpoint::Slaves,
            "/master/state" | "/master/state.json" => Endpoint::State,
            "/master/maintenance/schedule" => Endpoint::Schedule,
            "/master/maintenance/status" => Endpoint::Status,
            "/master/machine/down" => Endpoint::MachineDown,
            "/master/machine/up" => Endpoint::MachineUp,
            "/api/v1" => Endpoint::ApiV1,
            _ => return None,
        })
    }

    /// The methods Mesos accepts on it.
    fn allows(self, method: &Method) -> bool {
        match self {
            Endpoint::Health | Endpoint::Redirect | Endpoint::Slaves | Endpoint::State => {
                method == Method::GET
            }
            Endpoint::Schedule => method == Method::GET || method == Method::POST,
            Endpoint::Status => method == Method::GET,
            Endpoint::MachineDown | Endpoint::MachineUp | Endpoint::ApiV1 => method == Method::POST,
        }
    }
}

async fn handle(State(master): State<Master>, method: Method, uri: Uri, body: Bytes) -> Response {
    let path = uri.path();
    let endpoint = Endpoint::from_path(path);
    // v1 calls are told apart by their `type`, for the report as for the
    // dispatch; a body that is not a call is answered below.
    let v1 = (endpoint == Some(Endpoint::ApiV1) && method == Method::POST)
        .then(|| serde_json::from_slice::<V1Call>(&body));
    let action = match (&endpoint, &v1) {
        (Some(_), Some(Ok(call))) => format!("POST /api/v1 {}", call.kind),
        (Some(_), _) => format!("{method} {path}"),
        (None, _) => "unknown endpoint".to_string(),
    };
    master.world.with(|w| w.record_api_call("mesos", &action));
    if let Some(fault) = injected_fault(&master.world).await {
        return fault;
    }
    let Some(endpoint) = endpoint else {
        return text(StatusCode::NOT_FOUND, "");
    };
    if !endpoint.allows(&method) {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            &format!("Expecting 'GET' or 'POST', received '{method}'"),
        );
    }
    if endpoint == Endpoint::Health {
        return StatusCode::OK.into_response();
    }
    if !master.peers.has_leader() {
        // As a master answers while no leader is elected.
        return text(StatusCode::SERVICE_UNAVAILABLE, "No leader elected");
    }
    let leader = master.peers.leader();
    let leader_authority = authority(master.peers.url(leader)).to_string();
    if endpoint == Endpoint::Redirect {
        // To the leader's base, not to `/master/redirect` again: that
        // would loop.
        return redirect(&format!("//{leader_authority}"));
    }
    if leader != master.index {
        let path_and_query = uri.path_and_query().map_or(path, |pq| pq.as_str());
        return redirect(&format!("//{leader_authority}{path_and_query}"));
    }
    match endpoint {
        Endpoint::Slaves => slaves(&master.world),
        Endpoint::State => state(&master, &leader_authority),
        Endpoint::Schedule if method == Method::GET => {
            let windows = master.world.with(|w| w.maintenance_schedule());
            json(StatusCode::OK, &Schedule::from_windows(&windows))
        }
        Endpoint::Schedule => post_schedule(&master.world, &body),
        Endpoint::Status => {
            let status = master.world.with(|w| w.maintenance_status());
            json(StatusCode::OK, &ClusterStatus::from_status(&status))
        }
        Endpoint::MachineDown => post_machines(&master.world, &body, World::machines_down),
        Endpoint::MachineUp => post_machines(&master.world, &body, World::machines_up),
        Endpoint::ApiV1 => match v1 {
            Some(Ok(call)) => api_v1(&master.world, call),
            Some(Err(err)) => protobuf_error(&err.to_string()),
            None => protobuf_error("no body"),
        },
        Endpoint::Health | Endpoint::Redirect => StatusCode::OK.into_response(),
    }
}

/// The configured faults: latency first (as a slow network would add it),
/// then a 503 for the share of calls `error_rate` says, answered before
/// the world is touched, as a master that is recovering answers.
async fn injected_fault(world: &SharedWorld) -> Option<Response> {
    let faults = world.api_faults().mesos;
    if faults.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(faults.latency_ms)).await;
    }
    (faults.error_rate > 0.0 && rand::random::<f64>() < faults.error_rate).then(|| {
        world.with(|w| w.record_injected_fault("mesos", "503"));
        text(
            StatusCode::SERVICE_UNAVAILABLE,
            "Master is recovering (an error injected by the simulator)",
        )
    })
}

fn slaves(world: &SharedWorld) -> Response {
    let agents = world.with(|w| w.agents());
    json(
        StatusCode::OK,
        &SlavesResponse {
            slaves: agents.iter().map(Slave::from_view).collect(),
            recovered_slaves: Vec::new(),
        },
    )
}

fn state(master: &Master, leader_authority: &str) -> Response {
    let (agents, started_unix_ms) = master
        .world
        .with(|w| (w.agents(), w.unix_ms(crate::sim::world::SimTime::ZERO)));
    let own = authority(master.peers.url(master.index));
    let (host, _) = split_authority(own);
    let (leader_host, leader_port) = split_authority(leader_authority);
    let deactivated = agents.iter().filter(|a| !a.active).count();
    let started = started_unix_ms as f64 / 1000.0;
    json(
        StatusCode::OK,
        &wire::State {
            version: MESOS_VERSION.to_string(),
            id: master_id(master.peers.url(master.index)),
            pid: format!("master@{own}"),
            hostname: host.to_string(),
            start_time: started,
            elected_time: started,
            activated_slaves: agents.len() - deactivated,
            deactivated_slaves: deactivated,
            leader: format!("master@{leader_authority}"),
            leader_info: MasterInfo {
                id: master_id(master.peers.url(master.peers.leader())),
                pid: format!("master@{leader_authority}"),
                hostname: leader_host.to_string(),
                port: leader_port,
                version: MESOS_VERSION.to_string(),
                address: wire::Address {
                    hostname: leader_host.to_string(),
                    ip: leader_host.to_string(),
                    port: leader_port,
                },
            },
            slaves: agents.iter().map(Slave::from_view).collect(),
            recovered_slaves: Vec::new(),
            frameworks: Vec::new(),
            completed_frameworks: Vec::new(),
            unregistered_frameworks: Vec::new(),
        },
    )
}

fn post_schedule(world: &SharedWorld, body: &[u8]) -> Response {
    let schedule: Schedule = match serde_json::from_slice(body) {
        Ok(schedule) => schedule,
        Err(err) => {
            return text(
                StatusCode::BAD_REQUEST,
                &format!("Failed to convert JSON into a maintenance schedule: {err}"),
            );
        }
    };
    update_schedule(world, schedule)
}

fn update_schedule(world: &SharedWorld, schedule: Schedule) -> Response {
    let windows = match schedule.into_windows() {
        Ok(windows) => windows,
        Err(reason) => return text(StatusCode::BAD_REQUEST, &reason),
    };
    match world.with(|w| w.set_maintenance_schedule(windows)) {
        Ok(()) => StatusCode::OK.into_response(),
        Err(err) => mesos_error(&err),
    }
}

fn post_machines(
    world: &SharedWorld,
    body: &[u8],
    act: fn(&mut World, &[MachineId]) -> Result<(), MesosError>,
) -> Response {
    let machines: Vec<MachineIdJson> = match serde_json::from_slice(body) {
        Ok(machines) => machines,
        Err(err) => {
            return text(
                StatusCode::BAD_REQUEST,
                &format!("Failed to convert JSON into machine ids: {err}"),
            );
        }
    };
    machines_call(world, machines, act)
}

fn machines_call(
    world: &SharedWorld,
    machines: Vec<MachineIdJson>,
    act: fn(&mut World, &[MachineId]) -> Result<(), MesosError>,
) -> Response {
    if machines.is_empty() {
        return text(StatusCode::BAD_REQUEST, "List of machines is empty");
    }
    let machines: Vec<MachineId> = machines.into_iter().map(MachineId::from).collect();
    match world.with(|w| act(w, &machines)) {
        Ok(()) => StatusCode::OK.into_response(),
        Err(err) => mesos_error(&err),
    }
}

fn api_v1(world: &SharedWorld, call: V1Call) -> Response {
    let missing = |field: &str| {
        text(
            StatusCode::BAD_REQUEST,
            &format!("Failed to validate master::Call: Expecting '{field}' to be present"),
        )
    };
    match call.kind.as_str() {
        "GET_AGENTS" => {
            let agents = world.with(|w| w.agents());
            json(
                StatusCode::OK,
                &GetAgentsResponse {
                    kind: "GET_AGENTS",
                    get_agents: GetAgents {
                        agents: agents.iter().map(V1Agent::from_view).collect(),
                    },
                },
            )
        }
        "GET_MAINTENANCE_SCHEDULE" => {
            let windows = world.with(|w| w.maintenance_schedule());
            json(
                StatusCode::OK,
                &GetScheduleResponse {
                    kind: "GET_MAINTENANCE_SCHEDULE",
                    get_maintenance_schedule: ScheduleEnvelope {
                        schedule: Schedule::from_windows(&windows),
                    },
                },
            )
        }
        "GET_MAINTENANCE_STATUS" => {
            let status = world.with(|w| w.maintenance_status());
            json(
                StatusCode::OK,
                &GetStatusResponse {
                    kind: "GET_MAINTENANCE_STATUS",
                    get_maintenance_status: StatusEnvelope {
                        status: ClusterStatus::from_status(&status),
                    },
                },
            )
        }
        "UPDATE_MAINTENANCE_SCHEDULE" => match call.update_maintenance_schedule {
            Some(update) => update_schedule(world, update.schedule),
            None => missing("update_maintenance_schedule"),
        },
        "START_MAINTENANCE" => match call.start_maintenance {
            Some(start) => machines_call(world, start.machines, World::machines_down),
            None => missing("start_maintenance"),
        },
        "STOP_MAINTENANCE" => match call.stop_maintenance {
            Some(stop) => machines_call(world, stop.machines, World::machines_up),
            None => missing("stop_maintenance"),
        },
        "DRAIN_AGENT" => match call.drain_agent {
            Some(drain) => agent_call(world, &drain.agent_id.value, World::drain_agent),
            None => missing("drain_agent"),
        },
        "DEACTIVATE_AGENT" => match call.deactivate_agent {
            Some(deactivate) => {
                agent_call(world, &deactivate.agent_id.value, World::deactivate_agent)
            }
            None => missing("deactivate_agent"),
        },
        "REACTIVATE_AGENT" => match call.reactivate_agent {
            Some(reactivate) => {
                agent_call(world, &reactivate.agent_id.value, World::reactivate_agent)
            }
            None => missing("reactivate_agent"),
        },
        // Mesos fails an unknown type while converting JSON to protobuf;
        // the adapter reads that text as "this master lacks the call".
        other => protobuf_error(&format!(
            "Failed to find enum for '{other}' (not modelled by the simulator)"
        )),
    }
}

fn agent_call(
    world: &SharedWorld,
    agent_id: &str,
    act: fn(&mut World, &str) -> Result<(), MesosError>,
) -> Response {
    match world.with(|w| act(w, agent_id)) {
        Ok(()) => StatusCode::OK.into_response(),
        Err(err) => mesos_error(&err),
    }
}

fn protobuf_error(reason: &str) -> Response {
    text(
        StatusCode::BAD_REQUEST,
        &format!("Failed to convert JSON into Call protobuf: {reason}"),
    )
}

/// Mesos answers a refused operation with 400 and the reason as plain
/// text; the world's message without the action it prefixes.
fn mesos_error(err: &MesosError) -> Response {
    let message = err.to_string();
    let reason = match err {
        MesosError::UnknownAgent { agent_id, .. } => format!("Unknown agent {agent_id}"),
        MesosError::EmptyMachineId { .. } => {
            "Both 'hostname' and 'ip' for a MachineID are empty".to_string()
        }
        _ => message
            .split_once(": ")
            .map_or(message.clone(), |(_, reason)| reason.to_string()),
    };
    text(StatusCode::BAD_REQUEST, &reason)
}

/// `host:port` of a peer's base URL (`http://127.0.0.1:5050` → `127.0.0.1:5050`).
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest)
}

fn split_authority(authority: &str) -> (&str, u16) {
    match authority.rsplit_once(':') {
        Some((host, port)) => (host, port.parse().unwrap_or(5050)),
        None => (authority, 5050),
    }
}

/// A master id of Mesos' shape, stable for a given URL.
fn master_id(url: &str) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, url.as_bytes()).to_string()
}

fn redirect(location: &str) -> Response {
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

fn text(status: StatusCode, body: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body.to_string(),
    )
        .into_response()
}

fn json(status: StatusCode, value: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (status, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(err) => text(StatusCode::INTERNAL_SERVER_ERROR, &err.to_string()),
    }
}
