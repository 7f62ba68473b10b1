//! The Marathon facade: one of the three simulated Marathons, serving the
//! REST v2 endpoints the roller uses over the shared world, with
//! Marathon's status codes and `{"message"}` error bodies.
//!
//! Leadership as Marathon's `LeaderProxyFilter` does it (a servlet filter
//! on `/*`, so on every path, `/ping`, `/v2/info` and `/v2/leader`
//! included): the leader answers and names itself in
//! `X-Marathon-Leader: http://host:port`; a non-leader forwards the request
//! to the leader and hands back the leader's answer, its headers included,
//! adding `X-Marathon-Via: 1.1 host:port` (its own), and refuses a request
//! that already came through it (502 `Detected proxying loop.`); with no
//! leader every path is a 503 `Could not determine the current leader`.
//! As the Marathons share one world, forwarding is answering as the leader
//! would (its `/v2/info` included: `elected: true`, the leader's host).
//!
//! - `wire`: the JSON Marathon writes and reads.
//! - `info`: `/v2/info`; `writes`: the app, deployment and task writes;
//!   `responses`: Marathon's answers and error bodies.

mod events;
mod info;
mod responses;
mod wire;
mod writes;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::sim::scenario::check_role;
use crate::sim::shared::{Peers, SharedWorld};
use crate::sim::world::{AppChange, MarathonError, SimTime, World};

use responses::*;
use wire::{
    App, AppEnvelope, AppList, AppUpdate, Deployment, DeploymentRef, DeploymentResult, Info,
    Leader, Locked, Message, Queue, QueueItem, Task, TaskIds, TaskList, timestamp,
};
use writes::{cancel_deployment, kill, kill_tasks, update_app};

/// The header naming the leader on every answer.
const LEADER_HEADER: &str = "X-Marathon-Leader";

/// The header a forwarding Marathon adds to the request it forwards and to
/// the answer it hands back (`1.1 host:port`, its own), by which it also
/// tells a request it forwarded before (a loop).
const VIA_HEADER: &str = "X-Marathon-Via";

/// The header naming the deployment a change started (`RestResource`'s
/// `DeploymentHeader`).
const DEPLOYMENT_HEADER: &str = "Marathon-Deployment-Id";

/// The version the simulated Marathons report (the fixtures' shapes).
const MARATHON_VERSION: &str = "1.5.0";

/// The Marathon at `peers.url(index)`; it leads when `peers.leader() == index`.
pub(crate) fn router(world: SharedWorld, peers: Arc<Peers>, index: usize) -> Router {
    Router::new().fallback(handle).with_state(Marathon {
        world,
        peers,
        index,
    })
}

#[derive(Clone)]
struct Marathon {
    world: SharedWorld,
    peers: Arc<Peers>,
    index: usize,
}

/// What a request asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Route {
    Ping,
    Leader,
    Info,
    Apps,
    /// An app id, absolute (`/a/b`).
    App(String),
    UpdateApp(String),
    /// `GET /v2/apps/{id}/tasks`.
    AppTasks(String),
    /// `DELETE /v2/apps/{id}/tasks?host=&scale=`.
    KillAppTasks(String),
    /// `DELETE /v2/apps/{id}/tasks/{taskId}?scale=`.
    KillAppTask(String, String),
    /// `GET /v2/apps/{id}/versions`.
    AppVersions(String),
    /// `GET /v2/apps/{id}/versions/{version}`.
    AppVersion(String, String),
    Deployments,
    /// `DELETE /v2/deployments/{id}?force=`.
    CancelDeployment(String),
    Tasks,
    KillTasks,
    Queue,
    /// `DELETE /v2/queue/{id}/delay`.
    ResetDelay(String),
    /// `/v2/eventSubscriptions` (GET, POST, DELETE).
    EventSubscriptions,
    /// `GET /v2/events`: the event stream.
    Events,
    /// `GET /v2/groups` (the root, `/`) and `GET /v2/groups/{id}`.
    Group(String),
    MethodNotAllowed,
    NotFound,
}

impl Route {
    fn of(method: &Method, path: &str) -> Route {
        let get = method == Method::GET;
        let only = |ok: bool, route: Route| if ok { route } else { Route::MethodNotAllowed };
        match path {
            "/ping" => only(get, Route::Ping),
            "/v2/leader" => only(get, Route::Leader),
            "/v2/info" => only(get, Route::Info),
            "/v2/apps" => only(get, Route::Apps),
            "/v2/deployments" => only(get, Route::Deployments),
            _ if let Some(id) = path
                .strip_prefix("/v2/deployments/")
                .filter(|id| !id.is_empty() && !id.contains('/')) =>
            {
                only(
                    method == Method::DELETE,
                    Route::CancelDeployment(id.to_string()),
                )
            }
            "/v2/tasks" => only(get, Route::Tasks),
            "/v2/tasks/delete" => only(method == Method::POST, Route::KillTasks),
            "/v2/queue" => only(get, Route::Queue),
            _ if let Some(id) = path
                .strip_prefix("/v2/queue/")
                .and_then(|rest| rest.strip_suffix("/delay")) =>
            {
                only(
                    method == Method::DELETE,
                    Route::ResetDelay(format!("/{}", app_path(id))),
                )
            }
            "/v2/events" => only(get, Route::Events),
            "/v2/eventSubscriptions" => only(
                get || method == Method::POST || method == Method::DELETE,
                Route::EventSubscriptions,
            ),
            "/v2/groups" => only(get, Route::Group("/".into())),
            _ if path.starts_with("/v2/groups/") => {
                let id = app_path(&path["/v2/groups/".len()..]);
                // A group's versions and its apps listing are not modelled.
                let listing = id == "apps"
                    || id == "versions"
                    || id.ends_with("/apps")
                    || id.ends_with("/versions")
                    || id.starts_with("versions/")
                    || id.contains("/versions/");
                if listing {
                    Route::NotFound
                } else {
                    only(get, Route::Group(format!("/{id}")))
                }
            }
            _ => match path.strip_prefix("/v2/apps/").map(app_path) {
                Some(rest) if !rest.is_empty() => {
                    let delete = method == Method::DELETE;
                    if let Some(id) = rest.strip_suffix("/tasks") {
                        let id = format!("/{id}");
                        if get {
                            Route::AppTasks(id)
                        } else if delete {
                            Route::KillAppTasks(id)
                        } else {
                            Route::MethodNotAllowed
                        }
                    } else if let Some((id, task)) = rest.rsplit_once("/tasks/") {
                        let id = format!("/{id}");
                        only(delete, Route::KillAppTask(id, task.to_string()))
                    } else if let Some(id) = rest.strip_suffix("/versions") {
                        only(get, Route::AppVersions(format!("/{id}")))
                    } else if let Some((id, version)) = rest.rsplit_once("/versions/") {
                        only(
                            get,
                            Route::AppVersion(format!("/{id}"), version.to_string()),
                        )
                    } else {
                        let id = format!("/{rest}");
                        if get {
                            Route::App(id)
                        } else if method == Method::PUT {
                            Route::UpdateApp(id)
                        } else {
                            Route::MethodNotAllowed
                        }
                    }
                }
                _ => Route::NotFound,
            },
        }
    }

    /// The name the monitor counts the call under (ids left out, so that
    /// the report stays one line per endpoint).
    fn action(&self, method: &Method) -> String {
        match self {
            Route::Ping => "GET /ping".into(),
            Route::Leader => "GET /v2/leader".into(),
            Route::Info => "GET /v2/info".into(),
            Route::Apps => "GET /v2/apps".into(),
            Route::App(_) => "GET /v2/apps/{id}".into(),
            Route::UpdateApp(_) => "PUT /v2/apps/{id}".into(),
            Route::AppTasks(_) => "GET /v2/apps/{id}/tasks".into(),
            Route::KillAppTasks(_) => "DELETE /v2/apps/{id}/tasks".into(),
            Route::KillAppTask(..) => "DELETE /v2/apps/{id}/tasks/{taskId}".into(),
            Route::AppVersions(_) => "GET /v2/apps/{id}/versions".into(),
            Route::AppVersion(..) => "GET /v2/apps/{id}/versions/{version}".into(),
            Route::Deployments => "GET /v2/deployments".into(),
            Route::CancelDeployment(_) => "DELETE /v2/deployments/{id}".into(),
            Route::Tasks => "GET /v2/tasks".into(),
            Route::KillTasks => "POST /v2/tasks/delete".into(),
            Route::Queue => "GET /v2/queue".into(),
            Route::ResetDelay(_) => "DELETE /v2/queue/{id}/delay".into(),
            Route::EventSubscriptions => format!("{method} /v2/eventSubscriptions"),
            Route::Events => "GET /v2/events".into(),
            Route::Group(_) => "GET /v2/groups/{id}".into(),
            Route::MethodNotAllowed => format!("{method} (method not allowed)"),
            Route::NotFound => "unknown endpoint".into(),
        }
    }
}

async fn handle(
    State(marathon): State<Marathon>,
    method: Method,
    headers: HeaderMap,
    uri: Uri,
    body: Bytes,
) -> Response {
    let path = match uri.path().trim_end_matches('/') {
        "" => "/",
        path => path,
    };
    let route = Route::of(&method, path);
    marathon
        .world
        .with(|w| w.record_api_call("marathon", &route.action(&method)));
    if let Some(fault) = injected_fault(&marathon.world).await {
        return with_leader(fault, &marathon.peers);
    }
    let Some(leader) = marathon.peers.current_leader() else {
        // Neither leading nor knowing a leader: `LeaderProxyFilter` waits
        // for a consistent leadership state, then gives up.
        return jetty_error(
            StatusCode::SERVICE_UNAVAILABLE,
            uri.path(),
            "Could not determine the current leader",
        );
    };
    if route == Route::Events {
        // Streamed by the leader only; a standby redirects there.
        if leader != marathon.index {
            return events::redirect_to_leader(marathon.peers.url(leader), &uri);
        }
        let query = Query::<Vec<(String, String)>>::try_from_uri(&uri)
            .map(|q| q.0)
            .unwrap_or_default();
        let response = events::stream(&marathon, &headers, &uri, &query);
        return with_leader(response, &marathon.peers);
    }
    if leader == marathon.index {
        let response = answer(&marathon, route, &uri, &body);
        return with_leader(response, &marathon.peers);
    }
    let via = format!("1.1 {}", authority(marathon.peers.url(marathon.index)));
    if headers
        .get_all(VIA_HEADER)
        .iter()
        .any(|value| value.as_bytes() == via.as_bytes())
    {
        return jetty_error(
            StatusCode::BAD_GATEWAY,
            uri.path(),
            "Detected proxying loop.",
        );
    }
    // Forwarded: the leader's answer, as the leader gives it.
    let the_leader = Marathon {
        index: leader,
        ..marathon.clone()
    };
    let mut response = with_leader(answer(&the_leader, route, &uri, &body), &marathon.peers);
    if let Ok(value) = HeaderValue::from_str(&via) {
        response.headers_mut().append(VIA_HEADER, value);
    }
    response
}

/// The answer with `X-Marathon-Leader`, as the leader's filter adds it.
fn with_leader(mut response: Response, peers: &Peers) -> Response {
    let leader_url = peers.url(peers.leader()).trim_end_matches('/');
    if let Ok(value) = HeaderValue::from_str(leader_url) {
        response.headers_mut().insert(LEADER_HEADER, value);
    }
    response
}

fn answer(marathon: &Marathon, route: Route, uri: &Uri, body: &[u8]) -> Response {
    let query = Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map(|q| q.0)
        .unwrap_or_default();
    let flag = |name: &str| query.iter().any(|(k, v)| k == name && query_true(v));
    let world = &marathon.world;
    match route {
        Route::Ping => pong(),
        Route::Leader => json(
            StatusCode::OK,
            &Leader {
                leader: authority(marathon.peers.url(marathon.peers.leader())).to_string(),
            },
        ),
        Route::Info => info::info(marathon),
        Route::Apps => {
            let embed_tasks = query.iter().any(|(k, v)| k == "embed" && embeds_tasks(v));
            let embed_failure = query.iter().any(|(k, v)| k == "embed" && embeds_failure(v));
            let apps = world.with(|w| w.apps(embed_tasks));
            json(
                StatusCode::OK,
                &AppList {
                    apps: apps
                        .iter()
                        .map(|app| {
                            let written = App::from_view(app);
                            if embed_failure {
                                written.with_last_task_failure(app)
                            } else {
                                written
                            }
                        })
                        .collect(),
                },
            )
        }
        // A single app comes with its tasks and its last task failure
        // whatever the embeds, as every Marathon's `show` embeds them by
        // default for compatibility.
        Route::App(id) => match world.with(|w| w.app(&id, true)) {
            Ok(app) => json(
                StatusCode::OK,
                &AppEnvelope {
                    app: App::from_view(&app).with_last_task_failure(&app),
                },
            ),
            Err(err) => marathon_error(&err),
        },
        Route::UpdateApp(id) => update_app(world, &id, body, flag("force")),
        Route::AppTasks(id) => match world.with(|w| w.app(&id, false).map(|_| w.tasks())) {
            Ok(tasks) => json(
                StatusCode::OK,
                &TaskList {
                    tasks: tasks
                        .iter()
                        .filter(|t| t.app_id == id)
                        .map(Task::from_view)
                        .collect(),
                },
            ),
            Err(err) => marathon_error(&err),
        },
        Route::KillAppTasks(id) => {
            let host = query
                .iter()
                .find(|(k, _)| k == "host")
                .map(|(_, v)| v.clone());
            match world.with(|w| w.app(&id, false).map(|_| w.tasks())) {
                Ok(tasks) => {
                    let ids: Vec<String> = tasks
                        .into_iter()
                        .filter(|t| t.app_id == id)
                        .filter(|t| host.as_ref().is_none_or(|h| h == "*" || *h == t.host))
                        .map(|t| t.id)
                        .collect();
                    kill(world, &ids, flag("scale"), flag("force"), false)
                }
                Err(err) => marathon_error(&err),
            }
        }
        Route::KillAppTask(id, task) => {
            match world.with(|w| w.app(&id, false).map(|_| w.tasks())) {
                Ok(tasks) if tasks.iter().any(|t| t.app_id == id && t.id == task) => {
                    kill(world, &[task], flag("scale"), flag("force"), true)
                }
                Ok(_) => message(
                    StatusCode::NOT_FOUND,
                    &format!("Task '{task}' does not exist"),
                ),
                Err(err) => marathon_error(&err),
            }
        }
        Route::AppVersions(id) => match world.with(|w| w.app_versions(&id)) {
            Ok(versions) => json(
                StatusCode::OK,
                &serde_json::json!({
                    "versions": versions.into_iter().map(timestamp).collect::<Vec<_>>()
                }),
            ),
            Err(err) => marathon_error(&err),
        },
        Route::AppVersion(id, version) => app_version(world, &id, &version),
        Route::Deployments => {
            let deployments = world.with(|w| w.deployments());
            let list: Vec<Deployment> = deployments.iter().map(Deployment::from_view).collect();
            json(StatusCode::OK, &list)
        }
        Route::CancelDeployment(id) => cancel_deployment(world, &id, flag("force")),
        Route::Tasks => {
            let tasks = world.with(|w| w.tasks());
            json(
                StatusCode::OK,
                &TaskList {
                    tasks: tasks.iter().map(Task::from_view).collect(),
                },
            )
        }
        Route::KillTasks => kill_tasks(world, body, flag("scale"), flag("force")),
        Route::Queue => {
            let items = world.with(|w| w.queue());
            json(
                StatusCode::OK,
                &Queue {
                    queue: items.iter().map(QueueItem::from_view).collect(),
                },
            )
        }
        // Marathon's QueueResource: 204 once the delay is reset, 404 for an
        // app with nothing queued.
        Route::ResetDelay(id) => {
            if world.with(|w| w.reset_launch_delay(&id)) {
                StatusCode::NO_CONTENT.into_response()
            } else {
                message(
                    StatusCode::NOT_FOUND,
                    &format!("Application {id} not found in tasks queue."),
                )
            }
        }
        Route::Group(id) => {
            let (apps, config_changed) = world.with(|w| (w.apps(false), w.unix_ms(SimTime::ZERO)));
            match wire::group(&id, &apps, config_changed) {
                Some(group) => json(StatusCode::OK, &group),
                None => message(
                    StatusCode::NOT_FOUND,
                    &format!("Group '{id}' does not exist"),
                ),
            }
        }
        // The simulated Marathons run without `--event_subscriber
        // http_callback` (Marathon's default; `/v2/info` names no
        // `event_subscriber`), so every call here is refused as
        // `EventSubscriptionsResource` refuses it then.
        // `handle` streams these; never answered as a plain request.
        Route::Events => jetty_error(
            StatusCode::METHOD_NOT_ALLOWED,
            uri.path(),
            "HTTP method GET is not supported by this URL",
        ),
        Route::EventSubscriptions => message(
            StatusCode::BAD_REQUEST,
            "http event callback system is not running on this Marathon instance. \
             Please re-start this instance with \"--event_subscriber http_callback\".",
        ),
        Route::MethodNotAllowed => message(
            StatusCode::METHOD_NOT_ALLOWED,
            "HTTP 405 Method Not Allowed",
        ),
        Route::NotFound => message(StatusCode::NOT_FOUND, "HTTP 404 Not Found"),
    }
}

/// `GET /v2/apps/{id}/versions/{version}`: the app's definition at that
/// version, as `AppVersionsResource.show` answers; Marathon's 404s for an
/// unknown app or a version it never had. A version is matched as
/// Marathon writes it (`2014-03-01T23:29:30.158Z`), the form clients read
/// from `/versions`.
fn app_version(world: &SharedWorld, id: &str, version: &str) -> Response {
    let found = world.with(|w| {
        let versions = w.app_versions(id)?;
        let Some(ms) = versions.into_iter().find(|&ms| timestamp(ms) == version) else {
            return Ok(None);
        };
        let app = w.app_at_version(id, ms)?;
        Ok(app.map(|app| wire::definition(&app)))
    });
    match found {
        Ok(Some(definition)) => json(StatusCode::OK, &definition),
        Ok(None) => message(
            StatusCode::NOT_FOUND,
            &format!("App '{id}' does not exist in version {version}"),
        ),
        Err(err) => marathon_error(&err),
    }
}

/// A boolean query parameter as Marathon's JAX-RS resources read one
/// (`Boolean.valueOf`): `true` in any case is true, anything else false.
/// marathon-python sends Python's `True` and `False`.
fn query_true(value: &str) -> bool {
    value.eq_ignore_ascii_case("true")
}

/// Whether an `embed` value asks for the apps' tasks, as Marathon's
/// `InfoEmbedResolver` reads it: the prefix `apps.`, `app.` (what
/// marathon-python sends) or `group.apps.`, or none, then `tasks` or the
/// deprecated `failures` (tasks, last failure and deployments).
fn embeds_tasks(value: &str) -> bool {
    let bare = ["group.apps.", "apps.", "app."]
        .iter()
        .find_map(|prefix| value.strip_prefix(prefix))
        .unwrap_or(value);
    matches!(bare, "tasks" | "failures")
}

/// Whether an `embed` value asks for the apps' last task failure:
/// `lastTaskFailure` or the deprecated `failures`, under any of the
/// prefixes `InfoEmbedResolver` takes.
fn embeds_failure(value: &str) -> bool {
    let bare = ["group.apps.", "apps.", "app."]
        .iter()
        .find_map(|prefix| value.strip_prefix(prefix))
        .unwrap_or(value);
    matches!(bare, "lastTaskFailure" | "failures")
}

/// The configured faults: latency first, then a 503 for the share of
/// calls `error_rate` says, answered before the world is touched (as
/// Marathon answers while it has no leader).
async fn injected_fault(world: &SharedWorld) -> Option<Response> {
    let faults = world.api_faults().marathon;
    if faults.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(faults.latency_ms)).await;
    }
    (faults.error_rate > 0.0 && rand::random::<f64>() < faults.error_rate).then(|| {
        world.with(|w| w.record_injected_fault("marathon", "503"));
        message(
            StatusCode::SERVICE_UNAVAILABLE,
            "Could not determine the current leader (an error injected by the simulator)",
        )
    })
}

/// An app path as Marathon reads it: empty segments dropped, so that
/// `//a//b` (marathon-python sends a leading double slash) is `a/b`.
fn app_path(rest: &str) -> String {
    rest.split('/')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("/")
}

/// `host:port` of a peer's base URL.
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest)
}
