//! A scripted Mesos master for the adapter's tests: an axum server on
//! 127.0.0.1:0 that plays leader, follower (307 to the leader, as Mesos
//! does: protocol-relative) or leaderless master (503), keeps a
//! maintenance schedule, and records every request it gets. Stopped when
//! dropped.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use tokio::task::JoinHandle;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Leader,
    /// Redirects everything to this `host:port`.
    Follower(String),
    /// 503 "No leader elected" to everything.
    NoLeader,
}

/// One request as the fake master saw it.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) authorization: Option<String>,
    pub(crate) content_type: Option<String>,
    pub(crate) body: String,
}

pub(crate) struct FakeState {
    pub(crate) role: Role,
    /// `host:port` of this master.
    pub(crate) address: String,
    pub(crate) slaves: String,
    pub(crate) get_agents: String,
    pub(crate) schedule: serde_json::Value,
    pub(crate) status: String,
    /// v1 call types this master knows; others get Mesos' 400.
    pub(crate) v1_calls: HashSet<&'static str>,
    /// When set, requests without exactly this Authorization get 401.
    pub(crate) require_authorization: Option<String>,
    /// Canned answers `(path, status, body)`, each used once, before any
    /// other rule (auth and role included).
    pub(crate) scripted: VecDeque<(String, u16, String)>,
    pub(crate) requests: Vec<Recorded>,
}

pub(crate) struct FakeMaster {
    pub(crate) url: String,
    pub(crate) address: String,
    state: Arc<Mutex<FakeState>>,
    server: JoinHandle<()>,
}

impl FakeMaster {
    pub(crate) async fn start(role: Role) -> FakeMaster {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let address = listener.local_addr().expect("local address").to_string();
        let state = Arc::new(Mutex::new(FakeState {
            role,
            address: address.clone(),
            slaves: fixture("mesos-master-state-summary-dcosui.json").to_string(),
            get_agents: fixture("mesos-v1-GET_AGENTS-response-docs-example.json").to_string(),
            schedule: serde_json::json!({}),
            status: "{}".to_string(),
            v1_calls: ["GET_AGENTS", "DRAIN_AGENT", "DEACTIVATE_AGENT"].into(),
            require_authorization: None,
            scripted: VecDeque::new(),
            requests: Vec::new(),
        }));
        let app = Router::new().fallback(handle).with_state(state.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeMaster {
            url: format!("http://{address}"),
            address,
            state,
            server,
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, FakeState> {
        self.state.lock().expect("fake master state")
    }

    pub(crate) fn set_role(&self, role: Role) {
        self.state().role = role;
    }

    pub(crate) fn script(&self, path: &str, status: u16, body: &str) {
        self.state()
            .scripted
            .push_back((path.to_string(), status, body.to_string()));
    }

    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }

    pub(crate) fn requests_to(&self, method: &str, path: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == method && r.path == path)
            .collect()
    }
}

impl Drop for FakeMaster {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// A fixture file from tests/fixtures/.
pub(crate) fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("read {path}: {err}"))
}

async fn handle(
    State(state): State<Arc<Mutex<FakeState>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut state = state.lock().expect("fake master state");
    let text = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let path = uri.path().to_string();
    state.requests.push(Recorded {
        method: method.to_string(),
        path: path.clone(),
        authorization: text(header::AUTHORIZATION),
        content_type: text(header::CONTENT_TYPE),
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    if let Some(index) = state.scripted.iter().position(|(p, _, _)| *p == path) {
        let (_, status, body) = state.scripted.remove(index).expect("scripted answer");
        return answer(status, body);
    }
    if let Some(expected) = &state.require_authorization
        && text(header::AUTHORIZATION).as_ref() != Some(expected)
    {
        return answer(401, String::new());
    }
    match state.role.clone() {
        Role::NoLeader => answer(503, "No leader elected".to_string()),
        Role::Follower(leader) => {
            // As Mesos: /master/redirect points at the leader's root,
            // anything else at the same path and query on the leader.
            let location = if path == "/master/redirect" {
                format!("//{leader}")
            } else {
                let path_and_query = uri.path_and_query().map(|p| p.as_str()).unwrap_or("");
                format!("//{leader}{path_and_query}")
            };
            redirect(location)
        }
        Role::Leader => lead(&mut state, &method, &path, &body),
    }
}

fn lead(state: &mut FakeState, method: &Method, path: &str, body: &[u8]) -> Response {
    match (method.as_str(), path) {
        (_, "/master/redirect") => redirect(format!("//{}", state.address)),
        ("GET", "/master/slaves") => answer(200, state.slaves.clone()),
        ("GET", "/master/maintenance/schedule") => answer(200, state.schedule.to_string()),
        ("POST", "/master/maintenance/schedule") => match serde_json::from_slice(body) {
            Ok(schedule) => {
                state.schedule = schedule;
                answer(200, String::new())
            }
            Err(err) => answer(400, format!("Failed to parse the schedule: {err}")),
        },
        ("GET", "/master/maintenance/status") => answer(200, state.status.clone()),
        ("POST", "/master/machine/down" | "/master/machine/up") => answer(200, String::new()),
        ("POST", "/api/v1") => {
            let call: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
            let kind = call["type"].as_str().unwrap_or("").to_string();
            if !state.v1_calls.contains(kind.as_str()) {
                return answer(
                    400,
                    format!(
                        "Failed to convert JSON into Call protobuf: Failed to find enum for '{kind}'"
                    ),
                );
            }
            match kind.as_str() {
                "GET_AGENTS" => answer(200, state.get_agents.clone()),
                _ => answer(200, String::new()),
            }
        }
        _ => answer(404, String::new()),
    }
}

fn answer(status: u16, body: String) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, body).into_response()
}

fn redirect(location: String) -> Response {
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, location)],
        String::new(),
    )
        .into_response()
}
