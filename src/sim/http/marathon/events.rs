//! `GET /v2/events`: Marathon's event stream, as its servlet serves it
//! (Jetty's `EventSourceServlet` under `HttpEventStreamServlet`).
//!
//! - Only a request whose `Accept` is exactly `text/event-stream` gets a
//!   stream; any other GET falls to the servlet's default, a 405.
//! - A standby Marathon redirects the request to the leader (302, the
//!   leader's URL with the same path and query: `LeaderProxyFilter`); the
//!   leader answers 200 `text/event-stream` and keeps the answer open.
//! - Each event is `event: <type>` and `data: <json>` lines and a blank
//!   line (CRLF endings); every 10 s (real time) a bare CRLF is sent, the
//!   servlet's heartbeat, by which a dead connection shows.
//! - The stream's own `event_stream_attached` comes first (the stream
//!   subscribes, then publishes it), then every event published since, in
//!   order. `event_type=` (repeatable) keeps only those types;
//!   `plan-format=light` leaves a deployment's plan without `original` and
//!   `target` (the root group before and after), as Marathon 1.7+ always
//!   does.
//! - The stream ends when its Marathon stops leading (Marathon closes its
//!   streams on losing leadership), when it falls too far behind (a slow
//!   consumer's stream is closed), and when the simulator shuts down.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::watch;
use tokio::time::Instant;

use super::Marathon;
use super::responses::jetty_error;
use super::wire::{App, HealthCheck, group, timestamp};
use crate::sim::shared::SharedWorld;
use crate::sim::world::{BusEvent, BusKind, BusRead, DeploymentView, SimTime};

/// Jetty's `EventSourceServlet` default `heartBeatPeriod`.
const HEARTBEAT: Duration = Duration::from_secs(10);

/// How often a stream looks whether its Marathon still leads.
const LEADERSHIP_LOOK: Duration = Duration::from_millis(200);

/// The least real time between two looks at the world: a stream also
/// wakes when the world's next change is due, so that, as a real
/// Marathon's, its events go out when things happen, not when the next
/// request happens to bring the world up to date (at 300x the server's
/// own 100 ms tick would be 30 simulated seconds late).
const LEAST_WAKE: Duration = Duration::from_millis(1);

/// The address every stream is said to come from (the simulator serves
/// loopback).
const REMOTE: &str = "127.0.0.1";

/// `GET /v2/events` on `marathon`, which leads (the caller redirected
/// otherwise).
pub(super) fn stream(
    marathon: &Marathon,
    headers: &HeaderMap,
    uri: &Uri,
    query: &[(String, String)],
) -> Response {
    let accepts = headers
        .get_all(header::ACCEPT)
        .iter()
        .any(|value| value.as_bytes() == b"text/event-stream");
    if !accepts {
        return jetty_error(
            StatusCode::METHOD_NOT_ALLOWED,
            uri.path(),
            "HTTP method GET is not supported by this URL",
        );
    }
    let types: Vec<String> = query
        .iter()
        .filter(|(k, _)| k == "event_type")
        .map(|(_, v)| v.clone())
        .collect();
    let light = query
        .iter()
        .any(|(k, v)| k == "plan-format" && v == "light");
    let from = marathon.world.with(|w| w.listen_to_marathon(REMOTE));
    let state = Stream {
        listening: Listening(marathon.world.clone()),
        peers: marathon.peers.clone(),
        index: marathon.index,
        from,
        types,
        light,
        changed: marathon.world.marathon_events(),
        stop: marathon.world.closing(),
        heartbeat: Instant::now() + HEARTBEAT,
    };
    let body = Body::from_stream(futures_util::stream::unfold(state, next_frames));
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream;charset=utf-8"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-store, must-revalidate"),
    );
    response
}

/// A standby's answer: the same request, at the leader.
pub(super) fn redirect_to_leader(leader_url: &str, uri: &Uri) -> Response {
    let target = format!(
        "{}{}",
        leader_url.trim_end_matches('/'),
        uri.path_and_query().map_or("/v2/events", |p| p.as_str())
    );
    let mut response = StatusCode::FOUND.into_response();
    if let Ok(value) = HeaderValue::from_str(&target) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// A stream's listening, ended when the stream is dropped (the client
/// went, or the stream ended).
struct Listening(SharedWorld);

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.with(|w| w.stop_listening_to_marathon(REMOTE));
    }
}

struct Stream {
    listening: Listening,
    peers: std::sync::Arc<crate::sim::shared::Peers>,
    index: usize,
    /// The next event to send.
    from: u64,
    types: Vec<String>,
    light: bool,
    changed: watch::Receiver<u64>,
    stop: watch::Receiver<bool>,
    heartbeat: Instant,
}

/// The next bytes to send: the events published since the last, a
/// heartbeat, or the end.
async fn next_frames(mut s: Stream) -> Option<(Result<Bytes, Infallible>, Stream)> {
    loop {
        if s.peers.current_leader() != Some(s.index) {
            return None;
        }
        let (read, frames, due) = s.listening.0.with(|w| {
            let read = w.marathon_events(s.from);
            let frames = match &read {
                BusRead::Events(events, _) => render(w, events, &s.types, s.light),
                BusRead::Behind => String::new(),
            };
            (read, frames, w.next_due())
        });
        match read {
            BusRead::Behind => return None,
            BusRead::Events(_, next) => s.from = next,
        }
        if !frames.is_empty() {
            return Some((Ok(Bytes::from(frames)), s));
        }
        let now = Instant::now();
        let clock = s.listening.0.clock();
        let wake_at = due
            .map(|t| clock.instant_of(t).max(now + LEAST_WAKE))
            .unwrap_or(now + LEADERSHIP_LOOK)
            .min(now + LEADERSHIP_LOOK);
        let woke = tokio::select! {
            _ = s.stop.wait_for(|closing| *closing) => Woke::Closing,
            changed = s.changed.changed() => match changed {
                Ok(()) => Woke::Look,
                Err(_) => Woke::Closing,
            },
            _ = tokio::time::sleep_until(s.heartbeat) => Woke::Heartbeat,
            _ = tokio::time::sleep_until(wake_at) => Woke::Look,
        };
        match woke {
            Woke::Closing => return None,
            Woke::Look => {}
            Woke::Heartbeat => {
                s.heartbeat = Instant::now() + HEARTBEAT;
                return Some((Ok(Bytes::from_static(b"\r\n")), s));
            }
        }
    }
}

enum Woke {
    Closing,
    Look,
    Heartbeat,
}

/// The events as SSE frames, those of the asked types only.
fn render(
    w: &crate::sim::world::World,
    events: &[BusEvent],
    types: &[String],
    light: bool,
) -> String {
    let mut out = String::new();
    let wanted = |t: &str| types.is_empty() || types.iter().any(|x| x == t);
    let mut root = None;
    for event in events {
        for (event_type, data) in json(w, event, light, &mut root) {
            if wanted(event_type) {
                out.push_str("event: ");
                out.push_str(event_type);
                out.push_str("\r\ndata: ");
                out.push_str(&data.to_string());
                out.push_str("\r\n\r\n");
            }
        }
    }
    out
}

/// The event's JSON, as Marathon's `Formats` write it (a status update is
/// two events: `status_update_event`, then `instance_changed_event`).
fn json(
    w: &crate::sim::world::World,
    event: &BusEvent,
    light: bool,
    root: &mut Option<serde_json::Value>,
) -> Vec<(&'static str, serde_json::Value)> {
    let at = timestamp(event.at_unix_ms);
    let event_type = event.kind.event_type();
    match &event.kind {
        BusKind::StatusUpdate {
            task,
            message,
            condition,
        } => vec![
            (
                event_type,
                serde_json::json!({
                    "slaveId": task.slave_id,
                    "taskId": task.id,
                    "taskStatus": task.state,
                    "message": message,
                    "appId": task.app_id,
                    "host": task.host,
                    "ipAddresses": [{"ipAddress": task.ip_address, "protocol": "IPv4"}],
                    "ports": [task.host_port],
                    "version": timestamp(task.version_unix_ms),
                    "eventType": event_type,
                    "timestamp": at,
                }),
            ),
            (
                "instance_changed_event",
                serde_json::json!({
                    "instanceId": task.id,
                    "condition": condition,
                    "runSpecId": task.app_id,
                    "agentId": task.slave_id,
                    "host": task.host,
                    "runSpecVersion": timestamp(task.version_unix_ms),
                    "timestamp": at,
                    "eventType": "instance_changed_event",
                }),
            ),
        ],
        BusKind::HealthChanged {
            app_id,
            task_id,
            version_unix_ms,
            alive,
        } => vec![(
            event_type,
            serde_json::json!({
                "appId": app_id,
                "instanceId": task_id,
                "version": timestamp(*version_unix_ms),
                "alive": alive,
                "eventType": event_type,
                "timestamp": at,
            }),
        )],
        BusKind::FailedCheck {
            app_id,
            task_id,
            check,
        } => vec![(
            event_type,
            serde_json::json!({
                "appId": app_id,
                "eventType": event_type,
                "healthCheck": HealthCheck::from_view(check),
                "taskId": task_id,
                "timestamp": at,
            }),
        )],
        BusKind::UnhealthyKill {
            app_id,
            task_id,
            version_unix_ms,
            host,
            slave_id,
        } => vec![(
            event_type,
            serde_json::json!({
                "appId": app_id,
                "taskId": task_id,
                "instanceId": task_id,
                "version": timestamp(*version_unix_ms),
                "reason": "HealthCheckFailed",
                "host": host,
                "slaveId": slave_id,
                "eventType": event_type,
                "timestamp": at,
            }),
        )],
        BusKind::ApiPost { uri, app } => vec![(
            event_type,
            serde_json::json!({
                "clientIp": REMOTE,
                "uri": uri,
                "appDefinition": App::from_view(app),
                "eventType": event_type,
                "timestamp": at,
            }),
        )],
        BusKind::Stream { remote_address, .. } => vec![(
            event_type,
            serde_json::json!({
                "remoteAddress": remote_address,
                "eventType": event_type,
                "timestamp": at,
            }),
        )],
        BusKind::Deployment {
            event_type,
            deployment,
        } => {
            let plan = plan(w, deployment, light, root);
            let step = &plan["steps"][0];
            let data = match *event_type {
                "deployment_info" => serde_json::json!({
                    "plan": plan,
                    "currentStep": step,
                    "eventType": event_type,
                    "timestamp": at,
                }),
                _ => serde_json::json!({
                    "id": deployment.id,
                    "plan": plan,
                    "eventType": event_type,
                    "timestamp": at,
                }),
            };
            vec![(event_type, data)]
        }
    }
}

/// A deployment's plan (`raml.DeploymentPlan`): its one step, and unless
/// `light` the root group as it is now for `original` and `target` (the
/// simulator keeps no group history).
fn plan(
    w: &crate::sim::world::World,
    deployment: &DeploymentView,
    light: bool,
    root: &mut Option<serde_json::Value>,
) -> serde_json::Value {
    let actions: Vec<serde_json::Value> = deployment
        .affected_apps
        .iter()
        .map(|app| serde_json::json!({"action": deployment.action, "app": app}))
        .collect();
    let mut plan = serde_json::json!({
        "id": deployment.id,
        "steps": [{"actions": actions}],
        "version": timestamp(deployment.version_unix_ms),
    });
    if !light {
        let root = root.get_or_insert_with(|| {
            let apps = w.apps(false);
            group("/", &apps, w.unix_ms(SimTime::ZERO)).unwrap_or_default()
        });
        plan["original"] = root.clone();
        plan["target"] = root.clone();
    }
    plan
}
