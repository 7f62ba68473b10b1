//! The Marathon adapter against every Marathon fixture and against scripted
//! loopback Marathons (leader discovery, failover, retries, 409, writes).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::wire::{self, fixture_only};
use super::{MarathonClient, MarathonConfigError};
use crate::http::{HttpAuth, HttpSettings, Secret};
use crate::retry::Backoff;
use crate::roll::decide::health;
use crate::roll::ports::marathon::{
    KillOutcome, Marathon, MarathonError, NoSurge, UnreachableStrategy,
};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}"))
        .unwrap_or_else(|err| panic!("cannot read fixture {name}: {err}"))
}

const APPS_0_7: &str = "marathon-0.7-v2-apps-docs-example.json";
const APPS_0_7_STAGED: &str = "marathon-0.7-v2-apps-lastTaskFailure-tasks-docs-example.json";
const APP_0_7_TASKS: &str =
    "marathon-0.7-v2-apps-appid-embed-tasks-healthCheckResults-docs-example.json";
const TASKS_0_7: &str = "marathon-0.7-v2-tasks-healthCheckResults-docs-example.json";
const APPS_1_5: &str = "marathon-1.5-v2-apps-embed-tasks-healthchecks.json";
const APPS_1_5_UNCHECKED: &str = "marathon-1.5-v2-apps-embed-tasks-no-healthchecks.json";
const APPS_2016: &str = "marathon-2016-v2-apps-embed-tasks-healthchecks.json";
const APP_TASKS_RAML: &str = "marathon-v2-apps-appid-tasks-raml-example.json";
const APPS_RAML: &str = "marathon-v2-apps-raml-example.json";
const DEPLOYMENTS_RAML: &str = "marathon-v2-deployments-raml-example.json";
const DEPLOYMENTS_DCOSUI: &str = "marathon-v2-deployments-readiness-dcosui.json";
const INFO_RAML: &str = "marathon-v2-info-raml-example.json";
const LEADER: &str = "marathon-v2-leader-docs-example.json";
const TASKS_RAML: &str = "marathon-v2-tasks-raml-example.json";
const QUEUE: &str = "marathon-v2-queue-docs-example.json";

/// The fixtures the tests below parse; a new one must be added here.
const PARSED: [&str; 15] = [
    APPS_0_7,
    APPS_0_7_STAGED,
    APP_0_7_TASKS,
    TASKS_0_7,
    APPS_1_5,
    APPS_1_5_UNCHECKED,
    APPS_2016,
    APP_TASKS_RAML,
    APPS_RAML,
    DEPLOYMENTS_RAML,
    DEPLOYMENTS_DCOSUI,
    INFO_RAML,
    LEADER,
    TASKS_RAML,
    QUEUE,
];

#[test]
fn every_marathon_fixture_is_parsed_by_a_test() {
    let mut on_disk: Vec<String> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("marathon-") && name.ends_with(".json"))
        .collect();
    on_disk.sort();
    let mut parsed: Vec<String> = PARSED.iter().map(|s| s.to_string()).collect();
    parsed.sort();
    assert_eq!(on_disk, parsed);
}

#[test]
fn marathon_1_5_apps_carry_agents_states_instance_ids_and_an_unreachable_strategy() {
    let body = fixture(APPS_1_5);
    // The ≥ 1.5 spelling of the health result's id.
    assert!(String::from_utf8_lossy(&body).contains("\"instanceId\""));
    let apps = wire::parse_apps(&body).unwrap();
    assert_eq!(apps.len(), 1);
    let app = &apps[0];
    assert_eq!(app.id, "/nginx-green");
    assert_eq!(
        (app.instances, app.tasks_running, app.tasks_healthy),
        (3, 3, 3)
    );
    assert_eq!(app.health_checks, 1);
    assert!(app.deployments.is_empty());
    assert_eq!(app.min_health_capacity, Some(1.0));
    // Its labels, read as given; no single-instance label and a 1/1
    // strategy: it may be surged.
    assert_eq!(
        app.labels
            .get("HAPROXY_DEPLOYMENT_COLOUR")
            .map(String::as_str),
        Some("green")
    );
    assert_eq!(app.no_surge, None);
    assert_eq!(
        app.unreachable_strategy,
        UnreachableStrategy::After {
            inactive_after_seconds: 300,
            expunge_after_seconds: 600
        }
    );
    let agents: Vec<&str> = app
        .tasks
        .iter()
        .map(|t| t.agent_id.as_deref().unwrap())
        .collect();
    assert_eq!(
        agents,
        [
            "c28a2184-c702-482c-91c8-5af9318434d4-S0",
            "c28a2184-c702-482c-91c8-5af9318434d4-S1",
            "c28a2184-c702-482c-91c8-5af9318434d4-S1"
        ]
    );
    assert!(
        app.tasks
            .iter()
            .all(|t| t.state.as_deref() == Some("TASK_RUNNING")
                && t.started
                && t.health_results.len() == 1
                && t.health_results[0].alive)
    );

    let verdict = health::judge(&apps, &[], health::Settle::NONE);
    assert!(verdict.is_healthy());
    let per_agent: BTreeMap<String, u32> = [
        ("c28a2184-c702-482c-91c8-5af9318434d4-S0".to_string(), 1),
        ("c28a2184-c702-482c-91c8-5af9318434d4-S1".to_string(), 2),
    ]
    .into();
    assert_eq!(verdict.apps[0].healthy_per_agent, per_agent);
}

#[test]
fn an_unreachable_strategy_may_be_the_string_disabled() {
    let body = String::from_utf8(fixture(APPS_1_5)).unwrap();
    let start = body.find("\"unreachableStrategy\"").unwrap();
    let end = start + body[start..].find('}').unwrap() + 1;
    let disabled = format!(
        "{}\"unreachableStrategy\": \"disabled\"{}",
        &body[..start],
        &body[end..]
    );
    let apps = wire::parse_apps(disabled.as_bytes()).unwrap();
    assert_eq!(apps[0].unreachable_strategy, UnreachableStrategy::Disabled);
}

#[test]
fn an_app_without_health_checks_reports_zero_healthy_and_is_judged_by_running_tasks() {
    let apps = wire::parse_apps(&fixture(APPS_1_5_UNCHECKED)).unwrap();
    let app = &apps[0];
    assert_eq!(app.id, "/pywebserver");
    assert_eq!(app.health_checks, 0);
    assert_eq!(
        (app.instances, app.tasks_running, app.tasks_healthy),
        (1, 1, 0)
    );
    let verdict = health::judge(&apps, &[], health::Settle::NONE);
    assert!(verdict.is_healthy());
    assert_eq!(
        verdict.apps[0].healthy_per_agent,
        [("db7b40e2-791c-445f-b373-183e2a648a86-S1".to_string(), 1)].into()
    );
}

#[test]
fn pre_1_5_apps_have_task_ids_in_health_results_and_tasks_without_state() {
    let body = fixture(APPS_2016);
    assert!(String::from_utf8_lossy(&body).contains("\"taskId\""));
    let apps = wire::parse_apps(&body).unwrap();
    let ids: Vec<&str> = apps.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["/nginx-green", "/nginx-blue"]);
    assert!(
        apps.iter()
            .flat_map(|a| &a.tasks)
            .all(|t| t.state.is_none() && t.started && t.health_results[0].alive)
    );
    let verdict = health::judge(&apps, &[], health::Settle::NONE);
    assert!(verdict.is_healthy());
    assert_eq!(
        verdict.apps[1].healthy_per_agent,
        [("1f09399d-0cb0-4484-afd7-f08e99d2acbb-S1".to_string(), 3)].into()
    );
    assert_eq!(verdict.apps[0].id, "/nginx-blue");
    let roles = ["*".to_string(), "slave_public".to_string()];
    assert!(
        apps.iter()
            .all(|a| a.accepted_resource_roles.as_deref() == Some(&roles[..]))
    );
}

#[test]
fn a_0_7_app_with_a_staged_task_and_a_deployment_is_unhealthy_for_every_reason() {
    let apps = wire::parse_apps(&fixture(APPS_0_7_STAGED)).unwrap();
    let app = &apps[0];
    assert_eq!(app.id, "/ubuntu");
    assert_eq!(app.deployments, ["f945548f-dd80-49a2-8b1a-d07ad9245688"]);
    assert_eq!(app.tasks_staged, 1);
    let task = &app.tasks[0];
    assert!(!task.started, "startedAt is null");
    assert_eq!(
        (task.state.as_deref(), task.agent_id.as_deref()),
        (None, None)
    );
    let verdict = health::judge(&apps, &[], health::Settle::NONE);
    assert_eq!(
        verdict.apps[0].reason().as_deref(),
        Some(
            "deploying (f945548f-dd80-49a2-8b1a-d07ad9245688); 0 of 1 running (no health checks); 1 staged"
        )
    );
    assert!(verdict.apps[0].healthy_per_agent.is_empty());
}

#[test]
fn a_0_7_app_list_without_tasks_is_judged_by_its_counts() {
    let apps = wire::parse_apps(&fixture(APPS_0_7)).unwrap();
    assert_eq!(apps[0].id, "/bridged-webapp");
    assert_eq!(
        (
            apps[0].instances,
            apps[0].tasks_healthy,
            apps[0].health_checks
        ),
        (2, 2, 1)
    );
    assert!(apps[0].tasks.is_empty());
    assert!(health::judge(&apps, &[], health::Settle::NONE).is_healthy());
}

#[test]
fn a_single_0_7_app_parses_with_tasks_that_name_no_agent() {
    let app = wire::parse_app(&fixture(APP_0_7_TASKS)).unwrap();
    assert_eq!(app.id, "/toggle");
    assert_eq!(app.tasks.len(), 2);
    assert_eq!(
        app.tasks[0].id,
        "toggle.802df2ae-3ad4-11e4-a400-56847afe9799"
    );
    assert_eq!(app.tasks[0].host.as_deref(), Some("10.141.141.10"));
    assert!(
        app.tasks
            .iter()
            .all(|t| t.agent_id.is_none() && t.health_results[0].alive)
    );
    assert_eq!(app.unreachable_strategy, UnreachableStrategy::Unknown);
}

#[test]
fn the_raml_app_list_shows_a_deploying_app_with_no_running_task() {
    let apps = wire::parse_apps(&fixture(APPS_RAML)).unwrap();
    assert_eq!(apps[0].id, "/myapp");
    // `"acceptedResourceRoles": null`: Marathon's default.
    assert_eq!(apps[0].accepted_resource_roles, None);
    // `"constraints": [["hostname", "UNIQUE", ""]]`: one task an agent.
    assert_eq!(apps[0].per_host, Some(1));
    assert_eq!(
        apps[0].deployments,
        ["9538079c-3898-4e32-aa31-799bf9097f74"]
    );
    let verdict = health::judge(&apps, &[], health::Settle::NONE);
    assert_eq!(
        verdict.apps[0].reason().as_deref(),
        Some("deploying (9538079c-3898-4e32-aa31-799bf9097f74); 0 of 3 running (no health checks)")
    );
}

#[test]
fn deployments_parse_with_their_affected_apps_and_steps() {
    let raml = wire::parse_deployments(&fixture(DEPLOYMENTS_RAML)).unwrap();
    assert_eq!(raml.len(), 1);
    assert_eq!(raml[0].id, "97c136bf-5a28-4821-9d94-480d9fbb01c8");
    assert_eq!(raml[0].affected_apps, ["/foo"]);
    assert_eq!((raml[0].current_step, raml[0].total_steps), (1, 1));

    let dcos = wire::parse_deployments(&fixture(DEPLOYMENTS_DCOSUI)).unwrap();
    assert_eq!(dcos[0].id, "b4f69082-6f96-4c92-a778-37bf61c59686");
    assert_eq!(dcos[0].affected_apps, ["/kafka"]);
    assert_eq!((dcos[0].current_step, dcos[0].total_steps), (2, 2));
}

#[test]
fn task_lists_parse_with_the_same_task_shape() {
    let old: fixture_only::TaskList = serde_json::from_slice(&fixture(TASKS_0_7)).unwrap();
    assert_eq!(old.tasks.len(), 2);
    assert!(
        old.tasks
            .iter()
            .all(|t| t.slave_id.is_none() && t.health_check_results.as_ref().unwrap()[0].alive)
    );

    let raml: fixture_only::TaskList = serde_json::from_slice(&fixture(TASKS_RAML)).unwrap();
    let states: Vec<(&str, &str)> = raml
        .tasks
        .iter()
        .map(|t| (t.slave_id.as_deref().unwrap(), t.state.as_deref().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("20150707-153709-201330860-5050-12052-S0", "TASK_RUNNING"),
            ("1cc9e7d0-63d6-4e99-9c58-c0b950401ae2-S24", "TASK_RUNNING")
        ]
    );

    let staging: fixture_only::TaskList = serde_json::from_slice(&fixture(APP_TASKS_RAML)).unwrap();
    let task = &staging.tasks[0];
    assert_eq!(
        (
            task.slave_id.as_deref(),
            task.state.as_deref(),
            task.started_at.is_some()
        ),
        (Some("agent0"), Some("TASK_STAGING"), true)
    );
}

#[test]
fn info_and_leader_parse() {
    let info: fixture_only::Info = serde_json::from_slice(&fixture(INFO_RAML)).unwrap();
    assert_eq!(info.version, "1.5.0-SNAPSHOT");
    assert!(info.elected);
    assert_eq!(info.leader.as_deref(), Some("localhost:8080"));
    let leader: wire::Leader = serde_json::from_slice(&fixture(LEADER)).unwrap();
    assert_eq!(leader.leader, "127.0.0.1:8080");
}

#[test]
fn missing_counts_are_derived_from_the_embedded_tasks() {
    let body = br#"{"apps": [{"id": "/a", "instances": 2, "healthChecks": [{}],
        "tasks": [
          {"id": "a.1", "slaveId": "S1", "state": "TASK_RUNNING", "startedAt": "2017-01-01T00:00:00Z",
           "healthCheckResults": [{"alive": true}]},
          {"id": "a.2", "slaveId": "S2", "state": "TASK_RUNNING", "startedAt": "2017-01-01T00:00:00Z",
           "healthCheckResults": [{"alive": false}]},
          {"id": "a.3", "startedAt": null}
        ]}]}"#;
    let app = &wire::parse_apps(body).unwrap()[0];
    assert_eq!(
        (
            app.tasks_staged,
            app.tasks_running,
            app.tasks_healthy,
            app.tasks_unhealthy
        ),
        (1, 2, 1, 1)
    );
}

#[test]
fn a_response_that_is_not_an_app_list_is_an_error_not_an_empty_list() {
    assert!(wire::parse_apps(b"{}").is_err());
    assert!(wire::parse_apps(b"[]").is_err());
    assert!(wire::parse_apps(br#"{"apps": [{"id": "/a"}]}"#).is_err());
    assert!(wire::parse_deployments(br#"{"deployments": []}"#).is_err());
}

#[test]
fn an_answer_that_is_not_utf8_is_refused_saying_so() {
    // Outside a string and inside one: either way the text is refused
    // before it is parsed, and the error says why.
    for body in [
        &b"{\"apps\": [\xff]}"[..],
        b"{\"apps\": [{\"id\": \"/a\xc3\"}]}",
    ] {
        let err = wire::parse_apps(body).unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
    }
    let err = wire::parse_queue(b"{\"queue\": \"\xfe\"}").unwrap_err();
    assert!(err.to_string().contains("not UTF-8"), "{err}");
}

// ---------------------------------------------------------------------
// Scripted loopback Marathons.

#[derive(Clone, Debug)]
struct Hit {
    method: String,
    path: String,
    query: String,
    body: String,
    authorization: Option<String>,
}

struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
    /// Answer only after this long (a Marathon that hangs).
    delay: Option<Duration>,
}

fn reply(status: u16, body: impl Into<String>) -> Reply {
    Reply {
        status,
        headers: Vec::new(),
        body: body.into(),
        delay: None,
    }
}

type Script = dyn Fn(&Hit, usize) -> Reply + Send + Sync;

#[derive(Clone)]
struct ServerState {
    hits: Arc<Mutex<Vec<Hit>>>,
    script: Arc<Script>,
}

/// A loopback HTTP server answering by `script(hit, earlier hits on the
/// same path)`; stopped when dropped.
struct Server {
    url: String,
    authority: String,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn start(script: impl Fn(&Hit, usize) -> Reply + Send + Sync + 'static) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let authority = listener.local_addr().unwrap().to_string();
        let hits = Arc::new(Mutex::new(Vec::new()));
        let state = ServerState {
            hits: hits.clone(),
            script: Arc::new(script),
        };
        let router = Router::new().fallback(answer).with_state(state);
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Server {
            url: format!("http://{authority}"),
            authority,
            hits,
            task,
        }
    }

    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    fn hits_on(&self, method: &str, path: &str) -> Vec<Hit> {
        self.hits()
            .into_iter()
            .filter(|h| h.method == method && h.path == path)
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(
    State(state): State<ServerState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let hit = Hit {
        method: method.to_string(),
        path: uri.path().to_string(),
        query: uri.query().unwrap_or_default().to_string(),
        body: String::from_utf8_lossy(&body).into_owned(),
        authorization: headers
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_string()),
    };
    let reply = {
        let mut hits = state.hits.lock().unwrap();
        let earlier = hits
            .iter()
            .filter(|h| h.path == hit.path && h.method == hit.method)
            .count();
        hits.push(hit.clone());
        (state.script)(&hit, earlier)
    };
    if let Some(delay) = reply.delay {
        tokio::time::sleep(delay).await;
    }
    let mut response = (StatusCode::from_u16(reply.status).unwrap(), reply.body).into_response();
    for (name, value) in reply.headers {
        response.headers_mut().insert(name, value.parse().unwrap());
    }
    response
}

/// A loopback port nothing listens on.
async fn dead_url() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

const FAST: Backoff = Backoff {
    initial: Duration::from_millis(1),
    max: Duration::from_millis(5),
    attempts: 3,
};

fn settings() -> HttpSettings {
    HttpSettings {
        request_timeout: Duration::from_secs(5),
        ..HttpSettings::default()
    }
}

fn client(urls: &[&str]) -> MarathonClient {
    MarathonClient::new(urls, &settings())
        .unwrap()
        .with_backoff(FAST)
        .with_poll_interval(Duration::from_millis(10))
}

const NO_LEADER: &str = "<html><body><h2>HTTP ERROR 503</h2><p>Could not determine the current leader</p></body></html>";

#[tokio::test]
async fn apps_are_asked_for_with_every_embed_and_the_credentials() {
    let marathon =
        Server::start(|_, _| reply(200, String::from_utf8(fixture(APPS_1_5)).unwrap())).await;
    let settings = HttpSettings {
        auth: HttpAuth::DcosToken(Secret::new("abc.def")),
        ..settings()
    };
    let client = MarathonClient::new(&[&marathon.url], &settings).unwrap();
    let apps = client.apps().await.unwrap();
    assert_eq!(apps[0].id, "/nginx-green");
    let hits = marathon.hits();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, "/v2/apps");
    assert_eq!(
        hits[0].query,
        "embed=apps.tasks&embed=apps.counts&embed=apps.deployments&embed=apps.lastTaskFailure"
    );
    assert_eq!(hits[0].authorization.as_deref(), Some("token=abc.def"));
}

#[tokio::test]
async fn a_path_prefix_in_the_url_is_kept_and_app_ids_become_path_segments() {
    let marathon = Server::start(|hit, _| match hit.path.as_str() {
        "/service/marathon/v2/apps/prod/web" => {
            reply(200, String::from_utf8(fixture(APP_0_7_TASKS)).unwrap())
        }
        _ => reply(404, r#"{"message": "not here"}"#),
    })
    .await;
    let client = client(&[&format!("{}/service/marathon", marathon.url)]);
    let app = client.app("/prod/web").await.unwrap();
    assert_eq!(app.id, "/toggle");
    assert_eq!(
        marathon.hits()[0].query,
        "embed=app.tasks&embed=app.counts&embed=app.deployments"
    );
}

#[tokio::test]
async fn the_leader_is_found_by_v2_leader_and_asked_first() {
    let leader = Server::start(|hit, _| match hit.path.as_str() {
        "/v2/deployments" => reply(200, "[]"),
        _ => reply(404, "{}"),
    })
    .await;
    let leader_authority = leader.authority.clone();
    let follower = Server::start(move |hit, _| match hit.path.as_str() {
        "/v2/leader" => reply(200, format!(r#"{{"leader": "{leader_authority}"}}"#)),
        // A follower would proxy; this one proves it is not asked.
        _ => reply(500, "should not be asked"),
    })
    .await;
    let client = client(&[&follower.url, &leader.url]);
    assert_eq!(
        client.leader().await.unwrap(),
        Some(leader.authority.clone())
    );
    assert!(client.deployments().await.unwrap().is_empty());
    assert!(client.deployments().await.unwrap().is_empty());
    assert_eq!(leader.hits_on("GET", "/v2/deployments").len(), 2);
    assert!(follower.hits_on("GET", "/v2/deployments").is_empty());
    assert_eq!(follower.hits_on("GET", "/v2/leader").len(), 1);
    assert!(
        leader.hits_on("GET", "/v2/leader").is_empty(),
        "looked up once"
    );
}

#[tokio::test]
async fn no_leader_is_none_not_an_error() {
    let marathon = Server::start(|_, _| reply(404, "")).await;
    assert_eq!(client(&[&marathon.url]).leader().await.unwrap(), None);
}

#[tokio::test]
async fn a_proxied_answer_naming_the_leader_sends_later_calls_to_it() {
    let leader = Server::start(|_, _| reply(200, "[]")).await;
    let leader_url = leader.url.clone();
    let follower = Server::start(move |hit, _| match hit.path.as_str() {
        "/v2/leader" => reply(404, ""),
        _ => Reply {
            headers: vec![("X-Marathon-Leader", leader_url.clone())],
            ..reply(200, "[]")
        },
    })
    .await;
    let client = client(&[&follower.url, &leader.url]);
    client.deployments().await.unwrap();
    client.deployments().await.unwrap();
    assert_eq!(follower.hits_on("GET", "/v2/deployments").len(), 1);
    assert_eq!(leader.hits_on("GET", "/v2/deployments").len(), 1);
}

#[tokio::test]
async fn a_marathon_without_leader_is_skipped_for_another_url() {
    let electing = Server::start(|_, _| {
        reply(
            502,
            "<html><p>Could not determine the current leader</p></html>",
        )
    })
    .await;
    let healthy = Server::start(|hit, _| match hit.path.as_str() {
        "/v2/apps" => reply(200, String::from_utf8(fixture(APPS_1_5)).unwrap()),
        _ => reply(404, ""),
    })
    .await;
    let apps = client(&[&electing.url, &healthy.url]).apps().await.unwrap();
    assert_eq!(apps[0].id, "/nginx-green");
    assert!(!electing.hits().is_empty());
    assert_eq!(healthy.hits_on("GET", "/v2/apps").len(), 1);
}

#[tokio::test]
async fn a_write_is_retried_while_marathon_elects_a_leader() {
    let marathon = Server::start(|_, earlier| {
        if earlier < 2 {
            reply(503, NO_LEADER)
        } else {
            reply(200, r#"{"tasks": [{"id": "a.1"}]}"#)
        }
    })
    .await;
    let outcome = client(&[&marathon.url])
        .kill_tasks(&["a.1".to_string()], false)
        .await
        .unwrap();
    assert_eq!(outcome, KillOutcome::Killed(vec!["a.1".to_string()]));
    assert_eq!(marathon.hits_on("POST", "/v2/tasks/delete").len(), 3);
}

#[tokio::test]
async fn every_marathon_down_is_an_unavailable_error_in_bounded_time() {
    let (first, second) = (dead_url().await, dead_url().await);
    let started = Instant::now();
    let err = client(&[&first, &second]).apps().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(err.label(), "unavailable");
    let MarathonError::Unavailable {
        attempts, detail, ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*attempts, FAST.attempts);
    assert!(
        detail.contains(&first) && detail.contains(&second),
        "{detail}"
    );
    assert!(detail.contains("cannot connect"), "{detail}");
}

#[tokio::test]
async fn a_read_is_retried_after_a_server_error() {
    let marathon = Server::start(|_, earlier| {
        if earlier == 0 {
            reply(500, "boom")
        } else {
            reply(200, String::from_utf8(fixture(DEPLOYMENTS_RAML)).unwrap())
        }
    })
    .await;
    let deployments = client(&[&marathon.url]).deployments().await.unwrap();
    assert_eq!(deployments[0].affected_apps, ["/foo"]);
    assert_eq!(marathon.hits().len(), 2);
}

#[tokio::test]
async fn a_kill_that_fails_after_being_sent_is_never_sent_again() {
    let broken = Server::start(|hit, _| match hit.path.as_str() {
        "/v2/leader" => reply(404, ""),
        _ => reply(500, "internal error"),
    })
    .await;
    let spare = Server::start(|hit, _| match hit.path.as_str() {
        "/v2/leader" => reply(404, ""),
        _ => reply(200, r#"{"tasks": []}"#),
    })
    .await;
    let client = client(&[&broken.url, &spare.url]);
    let err = client
        .kill_tasks(&["a.1".to_string()], false)
        .await
        .unwrap_err();
    assert_eq!(err.label(), "outcome_unknown", "{err}");
    let sent = broken.hits_on("POST", "/v2/tasks/delete").len()
        + spare.hits_on("POST", "/v2/tasks/delete").len();
    assert_eq!(sent, 1);
}

#[tokio::test]
async fn a_kill_that_times_out_is_an_unknown_outcome_not_a_retry() {
    let slow = Server::start(|_, _| Reply {
        delay: Some(Duration::from_secs(3)),
        ..reply(200, r#"{"tasks": []}"#)
    })
    .await;
    let settings = HttpSettings {
        request_timeout: Duration::from_millis(200),
        ..HttpSettings::default()
    };
    let client = MarathonClient::new(&[&slow.url], &settings)
        .unwrap()
        .with_backoff(FAST);
    let err = client
        .kill_tasks(&["a.1".to_string()], true)
        .await
        .unwrap_err();
    assert_eq!(err.label(), "outcome_unknown");
    assert!(err.to_string().contains("timed out"), "{err}");
    assert_eq!(slow.hits().len(), 1);
}

#[tokio::test]
async fn tasks_are_killed_with_their_ids_and_the_scale_flag() {
    let marathon = Server::start(|hit, _| {
        if hit.query == "scale=true" {
            reply(
                200,
                r#"{"version": "2017-07-14T15:13:34.402Z", "deploymentId": "dep-9"}"#,
            )
        } else {
            reply(
                200,
                r#"{"tasks": [{"id": "a.1", "appId": "/a"}, {"id": "b.2", "appId": "/b"}]}"#,
            )
        }
    })
    .await;
    let client = client(&[&marathon.url]);
    let ids = vec!["a.1".to_string(), "b.2".to_string()];
    assert_eq!(
        client.kill_tasks(&ids, false).await.unwrap(),
        KillOutcome::Killed(ids.clone())
    );
    assert_eq!(
        client.kill_tasks(&ids, true).await.unwrap(),
        KillOutcome::Deployment("dep-9".to_string())
    );
    let hits = marathon.hits_on("POST", "/v2/tasks/delete");
    let sent: Vec<(&str, serde_json::Value)> = hits
        .iter()
        .map(|h| (h.query.as_str(), serde_json::from_str(&h.body).unwrap()))
        .collect();
    let body = serde_json::json!({"ids": ["a.1", "b.2"]});
    assert_eq!(sent, [("scale=false", body.clone()), ("scale=true", body)]);
    assert_eq!(
        client.kill_tasks(&[], false).await.unwrap(),
        KillOutcome::Killed(vec![])
    );
    assert_eq!(marathon.hits().len(), 2, "nothing to kill sends nothing");
}

const LOCKED: &str = r#"{"message": "App is locked by one or more deployments. Override with the option '?force=true'. View details at '/v2/deployments/<DEPLOYMENT_ID>'.", "deployments": [{"id": "dep-1"}]}"#;

#[tokio::test]
async fn a_409_is_a_conflict_naming_the_deployment_and_is_never_forced() {
    let marathon = Server::start(|hit, _| match hit.method.as_str() {
        "GET" => reply(200, String::from_utf8(fixture(APP_0_7_TASKS)).unwrap()),
        _ => reply(409, LOCKED),
    })
    .await;
    let err = client(&[&marathon.url])
        .scale_app("/toggle", 3)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        MarathonError::Conflict {
            operation: "PUT /v2/apps/{id}",
            target: "/toggle".to_string(),
            deployments: vec!["dep-1".to_string()],
        }
    );
    assert_eq!(err.label(), "conflict");
    assert_eq!(marathon.hits_on("PUT", "/v2/apps/toggle").len(), 1);
    assert!(marathon.hits().iter().all(|h| !h.query.contains("force")));
}

#[test]
fn an_app_marathon_keeps_at_one_instance_is_never_surged() {
    // A DC/OS SDK scheduler as DC/OS deploys it (dcos-commons' Marathon
    // app: the label and upgradeStrategy 0/0).
    let labelled = br#"{"apps": [{"id": "/kafka", "instances": 1,
        "labels": {"MARATHON_SINGLE_INSTANCE_APP": "true", "DCOS_SERVICE_NAME": "kafka",
                   "DCOS_COMMONS_API_VERSION": "v1", "DCOS_SERVICE_PORT_INDEX": 0},
        "upgradeStrategy": {"minimumHealthCapacity": 0, "maximumOverCapacity": 0}}]}"#;
    let app = &wire::parse_apps(labelled).unwrap()[0];
    assert_eq!(app.no_surge, Some(NoSurge::SingleInstanceLabel));
    assert_eq!(
        app.labels.get("DCOS_SERVICE_NAME").map(String::as_str),
        Some("kafka")
    );
    // A label whose value is not a string is left out, not an error.
    assert!(!app.labels.contains_key("DCOS_SERVICE_PORT_INDEX"));
    // 0/0 without the label: its owner's choice, honoured the same.
    let chosen = br#"{"apps": [{"id": "/leader", "instances": 1, "labels": {},
        "upgradeStrategy": {"minimumHealthCapacity": 0, "maximumOverCapacity": 0}}]}"#;
    let app = &wire::parse_apps(chosen).unwrap()[0];
    assert_eq!(app.no_surge, Some(NoSurge::NoOverCapacity));
    // Only "true" is Marathon's single-instance value; 0 capacity alone
    // (over capacity left at its default 1) may be surged.
    let other = br#"{"apps": [{"id": "/x", "instances": 1,
        "labels": {"MARATHON_SINGLE_INSTANCE_APP": "yes"},
        "upgradeStrategy": {"minimumHealthCapacity": 0}}]}"#;
    assert_eq!(wire::parse_apps(other).unwrap()[0].no_surge, None);
}

#[tokio::test]
async fn a_scale_marathon_finds_invalid_is_rejected_with_its_reason() {
    // Marathon's answer to a second instance of a single-instance app
    // (AppDefinition's complyWithSingleInstanceLabelRules).
    let marathon = Server::start(|hit, _| match hit.method.as_str() {
        "GET" => reply(200, String::from_utf8(fixture(APP_0_7_TASKS)).unwrap()),
        _ => reply(
            422,
            r#"{"message":"Object is not valid","details":[{"path":"/","errors":["Single instance app may only have one instance"]}]}"#,
        ),
    })
    .await;
    let err = client(&[&marathon.url])
        .scale_app("/kafka", 2)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        MarathonError::Rejected {
            operation: "PUT /v2/apps/{id}",
            status: 422,
            message: "Object is not valid: Single instance app may only have one instance"
                .to_string(),
        }
    );
    // A write refused is never repeated by the adapter.
    assert_eq!(marathon.hits_on("PUT", "/v2/apps/kafka").len(), 1);
}

#[tokio::test]
async fn scaling_puts_the_count_and_the_deployment_is_followed_until_it_is_gone() {
    let marathon = Server::start(|hit, earlier| match (hit.method.as_str(), hit.path.as_str()) {
        ("GET", "/v2/apps/web") => reply(200, String::from_utf8(fixture(APP_0_7_TASKS)).unwrap()),
        ("PUT", "/v2/apps/web") => reply(
            200,
            r#"{"version": "2017-07-14T15:13:34.402Z", "deploymentId": "97c136bf-5a28-4821-9d94-480d9fbb01c8"}"#,
        ),
        ("GET", "/v2/deployments") if earlier < 2 => {
            reply(200, String::from_utf8(fixture(DEPLOYMENTS_RAML)).unwrap())
        }
        ("GET", "/v2/deployments") => reply(200, "[]"),
        _ => reply(404, ""),
    })
    .await;
    let client = client(&[&marathon.url]);
    let deployment = client.scale_app("/web", 4).await.unwrap();
    assert_eq!(deployment, "97c136bf-5a28-4821-9d94-480d9fbb01c8");
    assert!(
        marathon.hits_on("GET", "/v2/apps/web").is_empty(),
        "a scale is one PUT, no read before it"
    );
    let put = &marathon.hits_on("PUT", "/v2/apps/web")[0];
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&put.body).unwrap(),
        serde_json::json!({"instances": 4})
    );
    assert_eq!(put.query, "");
    client
        .follow_deployment(&deployment, Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!(marathon.hits_on("GET", "/v2/deployments").len(), 3);
}

#[tokio::test]
async fn following_a_deployment_that_never_ends_stops_at_the_deadline() {
    let marathon =
        Server::start(|_, _| reply(200, String::from_utf8(fixture(DEPLOYMENTS_RAML)).unwrap()))
            .await;
    let started = Instant::now();
    let err = client(&[&marathon.url])
        .follow_deployment(
            "97c136bf-5a28-4821-9d94-480d9fbb01c8",
            Duration::from_millis(150),
        )
        .await
        .unwrap_err();
    assert_eq!(err.label(), "deployment_timeout");
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(marathon.hits().len() >= 2, "polled more than once");
}

/// Marathon takes a PUT to an unknown id as a create and refuses it (no
/// `cmd`, `args` or `container`): the refusal is told as the app gone,
/// found by asking for it; a 422 for an app that is there stays what it
/// was.
#[tokio::test]
async fn scaling_an_app_gone_is_refused_by_marathon_and_said_plainly() {
    let refused = r#"{"message": "Object is not valid", "details": [{"path": "/", "errors": ["AppDefinition must either contain one of 'cmd' or 'args', and/or a 'container'."]}]}"#;
    let marathon = Server::start(
        move |hit, _| match (hit.method.as_str(), hit.path.as_str()) {
            ("PUT", _) => reply(422, refused),
            ("GET", "/v2/apps/web") => {
                reply(200, String::from_utf8(fixture(APP_0_7_TASKS)).unwrap())
            }
            _ => reply(404, r#"{"message": "App '/nope' does not exist"}"#),
        },
    )
    .await;
    let client = client(&[&marathon.url]);
    let err = client.scale_app("/nope", 2).await.unwrap_err();
    assert_eq!(
        err,
        MarathonError::AppNotFound {
            operation: "GET /v2/apps/{id}",
            app: "/nope".to_string()
        }
    );
    assert_eq!(marathon.hits_on("PUT", "/v2/apps/nope").len(), 1);
    let err = client.scale_app("/web", 2).await.unwrap_err();
    assert_eq!(err.label(), "rejected", "{err}");
}

#[tokio::test]
async fn refused_credentials_and_garbage_are_errors_with_their_own_labels() {
    let marathon = Server::start(|hit, _| match hit.path.as_str() {
        "/v2/apps" => reply(401, r#"{"message": "Invalid username or password."}"#),
        _ => reply(200, "<html>not json</html>"),
    })
    .await;
    let client = client(&[&marathon.url]);
    let err = client.apps().await.unwrap_err();
    assert_eq!(err.label(), "unauthorized");
    assert!(
        err.to_string().contains("Invalid username or password."),
        "{err}"
    );
    assert_eq!(
        client.deployments().await.unwrap_err().label(),
        "unparsable"
    );
}

#[test]
fn unusable_urls_are_refused_before_anything_is_sent() {
    let settings = HttpSettings::default();
    let empty: [&str; 0] = [];
    let cases: [(&[&str], &str); 5] = [
        (&empty, "no_url"),
        (&["ftp://marathon:8080"], "bad_url"),
        (&["not a url"], "bad_url"),
        (&["http://ops:secret@marathon:8080"], "bad_url"),
        (&["http://marathon:8080?x=1"], "bad_url"),
    ];
    for (urls, label) in cases {
        let err: MarathonConfigError = MarathonClient::new(urls, &settings).unwrap_err();
        assert_eq!(err.label(), label, "{urls:?}");
        assert!(!err.to_string().contains("secret"), "{err}");
    }
}

#[test]
fn marathon_timestamps_are_read_to_the_millisecond_and_anything_else_is_none() {
    let at = |secs: u64, millis: u64| {
        Some(std::time::SystemTime::UNIX_EPOCH + Duration::from_millis(secs * 1000 + millis))
    };
    // 2014-10-10T05:35:52Z is 1,412,919,352 s after the epoch.
    assert_eq!(
        wire::timestamp("2014-10-10T05:35:52.025Z"),
        at(1_412_919_352, 25)
    );
    assert_eq!(
        wire::timestamp("2014-10-10T05:35:52Z"),
        at(1_412_919_352, 0)
    );
    assert_eq!(
        wire::timestamp("2014-10-10T07:35:52.025+02:00"),
        at(1_412_919_352, 25)
    );
    assert_eq!(
        wire::timestamp("2014-10-10T03:35:52.025-02:00"),
        at(1_412_919_352, 25)
    );
    assert_eq!(wire::timestamp("2000-02-29T00:00:00Z"), at(951_782_400, 0));
    // A fraction of any length: to the nanosecond, digits past the ninth
    // dropped.
    let nanos = |n: u32| Some(std::time::SystemTime::UNIX_EPOCH + Duration::new(1_412_919_352, n));
    assert_eq!(
        wire::timestamp("2014-10-10T05:35:52.5Z"),
        nanos(500_000_000)
    );
    assert_eq!(wire::timestamp("2014-10-10T05:35:52.000001Z"), nanos(1_000));
    assert_eq!(
        wire::timestamp("2014-10-10T05:35:52.123456789Z"),
        nanos(123_456_789)
    );
    assert_eq!(
        wire::timestamp("2014-10-10T05:35:52.1234567891Z"),
        nanos(123_456_789)
    );
    for bad in [
        "",
        "2014-10-10",
        "2014-13-10T05:35:52Z",
        "2014-10-10T25:35:52Z",
        "2014-10-10T05:35:52",
        "2014-10-10T05:35:xxZ",
        "1960-01-01T00:00:00Z",
        "2014-10-10T05:35:52.0x5Z",
        "2014-10-10T05:35:52.-5Z",
    ] {
        assert_eq!(wire::timestamp(bad), None, "{bad}");
    }
}

#[test]
fn start_times_health_check_times_and_the_last_task_failure_are_read_from_real_answers() {
    // 0.7's docs: a lastTaskFailure (no slaveId yet), a staged task.
    let apps = wire::parse_apps(&fixture(APPS_0_7_STAGED)).unwrap();
    let failure = apps[0].last_task_failure.clone().expect("lastTaskFailure");
    assert_eq!(
        failure.task_id,
        "ubuntu.4b20f4a9-503f-11e4-bd18-56847afe9799"
    );
    assert_eq!(failure.state, "TASK_FAILED");
    assert_eq!(failure.message, "Abnormal executor termination");
    assert_eq!(failure.host.as_deref(), Some("10.141.141.10"));
    assert_eq!(failure.agent_id, None);
    assert_eq!(failure.at, wire::timestamp("2014-10-10T05:35:52.025Z"));
    assert!(failure.at.is_some());
    assert_eq!(
        apps[0].tasks[0].started_at, None,
        "startedAt is null while staged"
    );
    // 1.5: startedAt and the health check's last success, no failure.
    let apps = wire::parse_apps(&fixture(APPS_1_5)).unwrap();
    let task = &apps[0].tasks[0];
    assert_eq!(task.started_at, wire::timestamp("2017-07-14T15:13:58.326Z"));
    assert!(task.started_at.is_some());
    let result = &task.health_results[0];
    assert_eq!(
        result.last_success,
        wire::timestamp("2017-07-14T15:14:18.395Z")
    );
    assert_eq!(result.last_failure, None);
    assert_eq!(result.last_failure_cause, None);
    assert!(apps.iter().all(|a| a.last_task_failure.is_none()));
}

/// Timestamps are read straight from the response's text: one written
/// with JSON escapes reads the same, one that is no time leaves the task
/// started but its start unknown, and one that is not a string is a
/// malformed answer (as it was when they were read as strings).
#[test]
fn timestamps_read_escaped_unreadable_and_wrong_typed() {
    let body = |started: &str| {
        format!(
            r#"{{"apps": [{{"id": "/a", "instances": 1, "tasks": [{{"id": "a.1", "startedAt": {started},
                "healthCheckResults": [{{"alive": true, "lastSuccess": {started}, "lastFailure": null}}]}}]}}]}}"#
        )
    };
    let escaped = wire::parse_apps(body(r#""2017-07-14T15:13:58\u002e326Z""#).as_bytes()).unwrap();
    let task = &escaped[0].tasks[0];
    assert_eq!(task.started_at, wire::timestamp("2017-07-14T15:13:58.326Z"));
    assert!(task.started_at.is_some() && task.started);
    assert_eq!(task.health_results[0].last_success, task.started_at);
    assert_eq!(task.health_results[0].last_failure, None);

    let unreadable = wire::parse_apps(body(r#""yesterday""#).as_bytes()).unwrap();
    let task = &unreadable[0].tasks[0];
    assert!(task.started, "a startedAt that is set means started");
    assert_eq!(task.started_at, None);

    assert!(wire::parse_apps(body("1500000000").as_bytes()).is_err());
}

#[test]
fn the_launch_queue_is_read_with_each_apps_count_and_delay() {
    let queue = wire::parse_queue(&fixture(QUEUE)).unwrap();
    let read: Vec<(&str, u32, Duration)> = queue
        .iter()
        .map(|q| (q.app.as_str(), q.count, q.delay_left))
        .collect();
    assert_eq!(
        read,
        [
            ("/tools/datadog-agent", 1, Duration::ZERO),
            ("/foo", 2, Duration::ZERO)
        ]
    );
    // The same answer while a delay holds the launch back, as Marathon
    // writes it for an app whose tasks keep failing; and a pod's entry
    // (no `app`) is not an app's.
    let mut held: serde_json::Value = serde_json::from_slice(&fixture(QUEUE)).unwrap();
    held["queue"][1]["delay"] = serde_json::json!({"timeLeftSeconds": 784, "overdue": false});
    held["queue"][0] = serde_json::json!({"pod": {"id": "/pod"}, "count": 1,
        "delay": {"timeLeftSeconds": 3, "overdue": false}});
    let queue = wire::parse_queue(&serde_json::to_vec(&held).unwrap()).unwrap();
    assert_eq!(queue.len(), 1);
    assert_eq!(queue[0].app, "/foo");
    assert_eq!(queue[0].delay_left, Duration::from_secs(784));
}

#[test]
fn a_fixed_host_port_allows_one_task_an_agent() {
    let app = |fields: &str| {
        let body = format!(r#"{{"apps": [{{"id": "/a", "instances": 2, {fields}}}]}}"#);
        wire::parse_apps(body.as_bytes())
            .unwrap_or_else(|e| panic!("{fields}: {e}"))
            .remove(0)
            .per_host
    };
    // Host networking: the ports are the host's only with requirePorts.
    let defs = r#""portDefinitions": [{"port": 8080, "protocol": "tcp", "name": "http"}]"#;
    assert_eq!(app(&format!(r#""requirePorts": true, {defs}"#)), Some(1));
    assert_eq!(app(&format!(r#""requirePorts": false, {defs}"#)), None);
    assert_eq!(app(defs), None);
    assert_eq!(
        app(r#""requirePorts": true, "portDefinitions": [{"port": 0}, {"port": 0}]"#),
        None
    );
    assert_eq!(app(r#""requirePorts": true, "ports": [0, 31000]"#), Some(1));
    // Bridged (1.5's container.portMappings, docker.portMappings before):
    // a non-zero hostPort, whatever requirePorts says.
    let mapped = |host: &str| {
        format!(
            r#""requirePorts": true, {defs}, "container": {{"type": "DOCKER",
            "portMappings": [{{"containerPort": 8080, {host} "servicePort": 10000}}]}}"#
        )
    };
    assert_eq!(app(&mapped(r#""hostPort": 31080,"#)), Some(1));
    assert_eq!(app(&mapped(r#""hostPort": 0,"#)), None);
    assert_eq!(app(&mapped("")), None);
    assert_eq!(
        app(r#""container": {"docker": {"network": "BRIDGE",
            "portMappings": [{"containerPort": 80, "hostPort": 80, "protocol": "tcp"}]}}"#),
        Some(1)
    );
    // With a constraint allowing more, the port still allows one.
    assert_eq!(
        app(&format!(
            r#""constraints": [["hostname", "MAX_PER", "3"]], "requirePorts": true, {defs}"#
        )),
        Some(1)
    );
    // Odd shapes: no fixed port, never an error.
    for odd in [
        r#""requirePorts": true, "portDefinitions": "8080""#,
        r#""requirePorts": true, "ports": [[80], "80", {"port": "80"}, -1, 8.5, null]"#,
        r#""requirePorts": true, "portDefinitions": [{"port": {"number": 80}}]"#,
        r#""container": {"portMappings": {"hostPort": 80}, "docker": null}"#,
        r#""container": null, "portDefinitions": null, "ports": null"#,
    ] {
        assert_eq!(app(odd), None, "{odd}");
    }
}

#[test]
fn the_real_apps_name_no_fixed_host_port() {
    // These fixtures' apps map hostPort 0 or leave requirePorts false,
    // with no hostname constraint: Marathon picks their ports, and
    // nothing limits them (the RAML example's is `UNIQUE`, read above).
    for name in [
        "marathon-1.5-v2-apps-embed-tasks-healthchecks.json",
        "marathon-2016-v2-apps-embed-tasks-healthchecks.json",
        "marathon-0.7-v2-apps-docs-example.json",
    ] {
        let apps = wire::parse_apps(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!apps.is_empty(), "{name}");
        for app in apps {
            assert_eq!(app.per_host, None, "{name}: {}", app.id);
        }
    }
}

#[test]
fn hostname_constraints_say_how_many_tasks_one_agent_may_run() {
    let app = |constraints: &str| {
        let body = format!(
            r#"{{"apps": [{{"id": "/a", "instances": 2, "constraints": {constraints}}}]}}"#
        );
        wire::parse_apps(body.as_bytes())
            .unwrap()
            .remove(0)
            .per_host
    };
    assert_eq!(app(r#"[["hostname", "UNIQUE"]]"#), Some(1));
    assert_eq!(app(r#"[["hostname", "MAX_PER", "3"]]"#), Some(3));
    assert_eq!(
        app(r#"[["hostname", "MAX_PER", "3"], ["hostname", "unique"]]"#),
        Some(1)
    );
    // Other fields and operators, odd shapes: no limit, never an error.
    assert_eq!(app(r#"[["rack", "UNIQUE"]]"#), None);
    assert_eq!(app(r#"[["hostname", "GROUP_BY"]]"#), None);
    assert_eq!(app(r#"[["hostname", "MAX_PER", "zero"]]"#), None);
    assert_eq!(
        app(r#"[["hostname"], [], [1, 2], "hostname:UNIQUE"]"#),
        None
    );
    assert_eq!(app(r#""hostname:UNIQUE""#), None);
    assert_eq!(app("[]"), None);
    assert_eq!(app("null"), None);
}
