//! The Mesos master facade: one of the three simulated masters, serving
//! the v0 endpoints and the v1 operator calls the roller uses over the
//! shared world, with Mesos' own status codes, redirects and error texts.
//!
//! Leadership as Mesos does it: every master answers `/health`; any master
//! answers `/master/redirect` with a 307 to the leader's base URL (the
//! leader to itself); a non-leader answers every other master endpoint and
//! `/api/v1` with a 307 to the same path on the leader. Locations are
//! protocol-relative (`//127.0.0.1:PORT/...`), as Mesos writes them. As
//! Mesos' handlers do, the leader check comes before the method check:
//! a follower redirects a GET of `/api/v1` too; the leader answers it 405
//! with libprocess' `MethodNotAllowed` text and an `Allow` header.
//!
//! - `wire`: the JSON the master writes and reads.
//! - `frameworks`: Marathon's framework and tasks, then the job
//!   frameworks' runs, as the master lists them.
//! - `operator_api`: the v1 operator calls (`POST /api/v1`).

mod frameworks;
mod operator_api;
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
use crate::sim::world::{MachineId, MaintenanceError, World};

use frameworks::Snapshot;
use wire::{
    ClusterStatus, FlagsResponse, FrameworksResponse, MachineIdJson, MasterInfo, Schedule, Slave,
    SlavesResponse, StateSummary, TasksResponse, V1Call,
};

/// The version the simulated masters report.
const MESOS_VERSION: &str = "1.9.0";

/// The masters' `--cluster`.
const CLUSTER: &str = "roller-sim";

/// What `/master/state` says of the build (Mesos' `build::DATE`, `TIME`,
/// `USER`, in the shapes of the fixture's): a fixed build of September
/// 2019, when Mesos 1.9 came out, by root as packaged masters say.
const BUILD_DATE: &str = "2019-09-04 00:00:00";
const BUILD_TIME: f64 = 1_567_555_200.0;
const BUILD_USER: &str = "root";

/// `/master/tasks` without `limit` (Mesos' `TASK_LIMIT`).
const TASK_LIMIT: usize = 100;

/// The master at `peers.url(index)`; it leads when `peers.leader() == index`.
pub(crate) fn router(world: SharedWorld, peers: Arc<Peers>, index: usize) -> Router {
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
    StateSummary,
    Frameworks,
    Tasks,
    Flags,
    Schedule,
    Status,
    MachineDown,
    MachineUp,
    ApiV1,
}

impl Endpoint {
    /// The master's endpoints live under `/master`; libprocess hands a
    /// path that names no process to the master (its `delegate`), so each
    /// answers without the prefix too (`/slaves`, `/api/v1`, `/health`).
    fn from_path(path: &str) -> Option<Endpoint> {
        let path = path.strip_prefix("/master").unwrap_or(path);
        Some(match path {
            "/health" => Endpoint::Health,
            "/redirect" => Endpoint::Redirect,
            "/slaves" => Endpoint::Slaves,
            "/state" | "/state.json" => Endpoint::State,
            "/state-summary" => Endpoint::StateSummary,
            "/frameworks" => Endpoint::Frameworks,
            "/tasks" | "/tasks.json" => Endpoint::Tasks,
            "/flags" => Endpoint::Flags,
            "/maintenance/schedule" => Endpoint::Schedule,
            "/maintenance/status" => Endpoint::Status,
            "/machine/down" => Endpoint::MachineDown,
            "/machine/up" => Endpoint::MachineUp,
            "/api/v1" => Endpoint::ApiV1,
            _ => return None,
        })
    }

    /// The methods Mesos accepts on it.
    fn allowed(self) -> &'static [&'static str] {
        match self {
            Endpoint::Health
            | Endpoint::Redirect
            | Endpoint::Slaves
            | Endpoint::State
            | Endpoint::StateSummary
            | Endpoint::Frameworks
            | Endpoint::Tasks
            | Endpoint::Flags
            | Endpoint::Status => &["GET"],
            Endpoint::Schedule => &["GET", "POST"],
            Endpoint::MachineDown | Endpoint::MachineUp | Endpoint::ApiV1 => &["POST"],
        }
    }
}

/// libprocess' `MethodNotAllowed(allowed, method)`: 405, an `Allow`
/// header, and its body text.
fn method_not_allowed(allowed: &[&str], method: &Method) -> Response {
    let mut response = text(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!(
            "405 Method Not Allowed. Expecting one of {{ '{}' }}, but received '{method}'.",
            allowed.join("', '")
        ),
    );
    if let Ok(value) = header::HeaderValue::from_str(&allowed.join(", ")) {
        response.headers_mut().insert(header::ALLOW, value);
    }
    response
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
    let allowed = endpoint.allowed();
    if !allowed.contains(&method.as_str()) {
        return method_not_allowed(allowed, &method);
    }
    master.world.with(|w| w.master_leads(master.index));
    match endpoint {
        Endpoint::Slaves => slaves(&master.world),
        Endpoint::State => state(&master, &leader_authority),
        Endpoint::StateSummary => state_summary(&master),
        Endpoint::Frameworks => {
            let snapshot = {
                let webui = master.world.marathon_webui_url();
                master.world.with(|w| Snapshot::read(w, webui))
            };
            json(
                StatusCode::OK,
                &FrameworksResponse {
                    frameworks: snapshot.frameworks(own_host(&master)),
                    completed_frameworks: Vec::new(),
                    unregistered_frameworks: Vec::new(),
                },
            )
        }
        Endpoint::Tasks => tasks(&master.world, uri.query()),
        Endpoint::Flags => flags(&master),
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
            Some(Ok(call)) => operator_api::api_v1(&master.world, call),
            Some(Err(err)) => operator_api::protobuf_error(&err.to_string()),
            None => operator_api::protobuf_error("no body"),
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
    let webui = master.world.marathon_webui_url();
    let (snapshot, started_unix_ms) = master.world.with(|w| {
        (
            Snapshot::read(w, webui),
            w.unix_ms(crate::sim::world::SimTime::ZERO),
        )
    });
    let agents = &snapshot.agents;
    let own = authority(master.peers.url(master.index));
    let (host, _) = split_authority(own);
    let (leader_host, leader_port) = split_authority(leader_authority);
    let deactivated = agents.iter().filter(|a| !a.active).count();
    let started = started_unix_ms as f64 / 1000.0;
    let elected = master.world.with(|w| w.master_elected_unix_ms()) as f64 / 1000.0;
    // An agent is unreachable once it missed its pings; the world lists
    // only registered agents, so the ones counted are those whose tasks
    // the frameworks hold as unreachable (only Marathon's, which is
    // partition-aware, keeps any).
    let frameworks = snapshot.frameworks(host);
    let unreachable_slaves = frameworks
        .iter()
        .flat_map(|f| &f.unreachable_tasks)
        .map(|t| t.slave_id.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    json(
        StatusCode::OK,
        &wire::State {
            version: MESOS_VERSION.to_string(),
            build_date: BUILD_DATE,
            build_time: BUILD_TIME,
            build_user: BUILD_USER,
            start_time: started,
            elected_time: elected,
            id: master_id(master.peers.url(master.index)),
            pid: format!("master@{own}"),
            hostname: host.to_string(),
            capabilities: wire::master_capabilities(),
            activated_slaves: agents.len() - deactivated,
            deactivated_slaves: deactivated,
            unreachable_slaves,
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
            cluster: CLUSTER,
            flags: flag_values(master),
            slaves: agents.iter().map(Slave::from_view).collect(),
            recovered_slaves: Vec::new(),
            frameworks,
            completed_frameworks: Vec::new(),
            orphan_tasks: Vec::new(),
            unregistered_frameworks: Vec::new(),
        },
    )
}

fn state_summary(master: &Master) -> Response {
    let snapshot = {
        let webui = master.world.marathon_webui_url();
        master.world.with(|w| Snapshot::read(w, webui))
    };
    let host = own_host(master);
    json(
        StatusCode::OK,
        &StateSummary {
            hostname: host.to_string(),
            cluster: CLUSTER,
            slaves: snapshot.summary_slaves(),
            frameworks: snapshot.summary_frameworks(host),
        },
    )
}

/// `/master/tasks?limit=&offset=&order=asc|desc`. As Mesos, a value that
/// is not a number is ignored (the default applies) and a negative
/// `limit` means no limit.
fn tasks(world: &SharedWorld, query: Option<&str>) -> Response {
    let (mut limit, mut offset, mut ascending) = (TASK_LIMIT, 0, false);
    // The values are numbers or `asc`/`desc`: nothing to percent-decode.
    let pairs = query
        .unwrap_or("")
        .split('&')
        .filter_map(|p| p.split_once('='));
    for (key, value) in pairs {
        let number = value.parse::<i32>().ok();
        match (key, number) {
            ("limit", Some(n)) => limit = usize::try_from(n).unwrap_or(usize::MAX),
            ("offset", Some(n)) => offset = usize::try_from(n).unwrap_or(usize::MAX),
            ("order", _) => ascending = value == "asc",
            _ => {}
        }
    }
    let webui = world.marathon_webui_url();
    let snapshot = world.with(|w| Snapshot::read(w, webui));
    json(
        StatusCode::OK,
        &TasksResponse {
            tasks: snapshot.tasks(ascending, offset, limit),
        },
    )
}

/// `/master/flags`: the flags that shape what the world does, with the
/// values it uses, and the defaults of a few that name the master.
fn flags(master: &Master) -> Response {
    json(
        StatusCode::OK,
        &FlagsResponse {
            flags: flag_values(master),
        },
    )
}

/// The flags `/master/flags` and `/master/state` carry.
fn flag_values(master: &Master) -> std::collections::BTreeMap<&'static str, String> {
    let f = master.world.with(|w| w.master_flags());
    let own = authority(master.peers.url(master.index));
    let (host, port) = split_authority(own);
    let flags = [
        (
            "agent_ping_timeout",
            stout_duration(f.agent_ping_timeout_ms),
        ),
        (
            "max_agent_ping_timeouts",
            f.max_agent_ping_timeouts.to_string(),
        ),
        (
            "agent_reregister_timeout",
            stout_duration(f.agent_reregister_timeout_ms),
        ),
        (
            "allocation_interval",
            stout_duration(f.allocation_interval_ms),
        ),
        ("cluster", CLUSTER.to_string()),
        ("hostname", host.to_string()),
        ("port", port.to_string()),
        ("quorum", (master.peers.urls().len() / 2 + 1).to_string()),
        ("registry", "replicated_log".to_string()),
        ("recovery_agent_removal_limit", "100%".to_string()),
        ("max_completed_frameworks", "50".to_string()),
        ("max_completed_tasks_per_framework", "1000".to_string()),
        ("authenticate_agents", "false".to_string()),
        ("authenticate_frameworks", "false".to_string()),
        ("authenticate_http_readonly", "false".to_string()),
        ("authenticate_http_readwrite", "false".to_string()),
    ];
    flags.into_iter().collect()
}

/// A duration as stout prints one (`15secs`, `10mins`, `1.5secs`): in the
/// largest unit it is at least one of.
fn stout_duration(ms: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (604_800_000, "weeks"),
        (86_400_000, "days"),
        (3_600_000, "hrs"),
        (60_000, "mins"),
        (1_000, "secs"),
    ];
    if ms == 0 {
        return "0ns".to_string();
    }
    for (size, unit) in UNITS {
        if ms >= size {
            return format!("{}{unit}", ms as f64 / size as f64);
        }
    }
    format!("{ms}ms")
}

/// This master's host, where the simulated Marathons listen too.
fn own_host(master: &Master) -> &str {
    split_authority(authority(master.peers.url(master.index))).0
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
    let windows = schedule.into_windows();
    match world.with(|w| w.set_maintenance_schedule(windows)) {
        Ok(()) => StatusCode::OK.into_response(),
        Err(err) => maintenance_error(&err),
    }
}

fn post_machines(
    world: &SharedWorld,
    body: &[u8],
    act: fn(&mut World, &[MachineId]) -> Result<(), MaintenanceError>,
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
    act: fn(&mut World, &[MachineId]) -> Result<(), MaintenanceError>,
) -> Response {
    let machines: Vec<MachineId> = machines.into_iter().map(MachineId::from).collect();
    match world.with(|w| act(w, &machines)) {
        Ok(()) => StatusCode::OK.into_response(),
        Err(err) => maintenance_error(&err),
    }
}

/// A maintenance refusal: 400 with Mesos' own text (`BadRequest(error)`
/// in `master/http.cpp`).
fn maintenance_error(err: &MaintenanceError) -> Response {
    text(StatusCode::BAD_REQUEST, &err.to_string())
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
