//! Contract tests: the roller's real Marathon adapter against three
//! simulated Marathons on loopback over the `demo` world, and the facade's
//! JSON against real Marathon's field names (tests/fixtures/marathon-*.json).

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::router;
use super::wire::timestamp;
use crate::http::HttpSettings;
use crate::marathon::MarathonClient;
use crate::retry::Backoff;
use crate::roll::decide::health::judge;
use crate::roll::ports::marathon::{KillOutcome, Marathon, MarathonError, NoSurge};
use crate::sim::http::peer_servers::{PeerServers, fixture, keys};
use crate::sim::shared::{ApiFaults, SystemFaults};
use crate::sim::world::ImageEffect;

mod app_fields;
mod deployment_cancel;
mod event_stream;
mod leader_proxy;
mod single_instance;

/// Three Marathons over one world; peer 0 leads. Servers stop when dropped.
struct Marathons(PeerServers);

impl std::ops::Deref for Marathons {
    type Target = PeerServers;

    fn deref(&self) -> &PeerServers {
        &self.0
    }
}

/// The adapter over `urls`, with quick retries for tests.
fn client_for(urls: &[String]) -> MarathonClient {
    MarathonClient::new(urls, &HttpSettings::default())
        .expect("a valid client")
        .with_backoff(Backoff {
            initial: Duration::from_millis(10),
            max: Duration::from_millis(50),
            attempts: 3,
        })
        .with_poll_interval(Duration::from_millis(20))
}

impl Marathons {
    /// The `demo` world, `time_scale` simulated seconds per real second.
    async fn start(time_scale: f64) -> Marathons {
        Marathons(PeerServers::start(time_scale, router).await)
    }

    fn client(&self) -> MarathonClient {
        client_for(&self.urls)
    }

    fn advance(&self, ms: u64) {
        self.world.with(|w| w.advance_by_ms(ms));
    }

    async fn get(&self, index: usize, path: &str) -> reqwest::Response {
        reqwest::Client::new()
            .get(format!("{}{path}", self.urls[index]))
            .send()
            .await
            .expect("an answer")
    }

    async fn get_json(&self, index: usize, path: &str) -> Value {
        self.get(index, path).await.json().await.expect("JSON")
    }
}

/// Every key of every object in `items`.
fn union_of_keys<'a>(items: impl IntoIterator<Item = &'a Value>) -> BTreeSet<String> {
    items.into_iter().flat_map(keys).collect()
}

fn array(value: &Value) -> &Vec<Value> {
    value.as_array().expect("an array")
}

/// `ours` only has keys real Marathon writes somewhere in `real`.
fn assert_known_keys(what: &str, ours: &BTreeSet<String>, real: &BTreeSet<String>) {
    let unknown: Vec<&String> = ours.difference(real).collect();
    assert!(
        unknown.is_empty(),
        "{what}: keys Marathon never writes: {unknown:?}"
    );
}

#[tokio::test]
async fn the_adapter_lists_the_apps_with_tasks_and_counts_of_the_world() {
    let marathons = Marathons::start(1.0).await;
    let apps = marathons.client().apps().await.expect("apps");
    let truth = marathons.world.with(|w| w.apps(true));
    assert_eq!(apps.len(), truth.len());
    for (seen, real) in apps.iter().zip(&truth) {
        assert_eq!(seen.id, real.id);
        assert_eq!(seen.instances, real.instances);
        assert_eq!(seen.tasks_running, real.tasks_running);
        assert_eq!(seen.tasks_healthy, real.tasks_healthy);
        assert_eq!(seen.tasks_staged, real.tasks_staged);
        assert_eq!(seen.health_checks, real.health_checks.len());
        let real_tasks = real.tasks.as_ref().expect("embedded");
        let seen_ids: Vec<&str> = seen.tasks.iter().map(|t| t.id.as_str()).collect();
        let real_ids: Vec<&str> = real_tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(seen_ids, real_ids, "{}", seen.id);
        for (task, real_task) in seen.tasks.iter().zip(real_tasks) {
            assert_eq!(task.agent_id.as_deref(), Some(real_task.slave_id.as_str()));
            assert_eq!(task.state.as_deref(), Some("TASK_RUNNING"));
            assert!(task.started);
            assert_eq!(task.health_results.len(), real.health_checks.len());
        }
    }
    let no_checks = apps.iter().find(|a| a.id == "/ops/metrics").expect("app");
    assert_eq!((no_checks.tasks_running, no_checks.tasks_healthy), (2, 0));
}

#[tokio::test]
async fn at_steady_state_the_health_verdict_is_healthy() {
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    let apps = client.apps().await.expect("apps");
    let deployments = client.deployments().await.expect("deployments");
    assert!(deployments.is_empty());
    let health = judge(
        &apps,
        &deployments,
        crate::roll::decide::health::Settle::NONE,
    );
    let sick: Vec<_> = health.unhealthy().map(|a| a.reason()).collect();
    assert!(health.is_healthy(), "{sick:?}");
}

#[tokio::test]
async fn a_scale_up_starts_a_deployment_that_ends_when_the_new_task_is_healthy() {
    // 200 simulated seconds per real second: a task starts and passes its
    // first health check in well under a real second.
    let marathons = Marathons::start(200.0).await;
    let client = marathons.client();
    let deployment = client.scale_app("/web/frontend", 5).await.expect("scaled");
    // Whether it is still listed now depends on real timing at this
    // scale; the 409 test checks the listing at real time.
    client
        .follow_deployment(&deployment, Duration::from_secs(20))
        .await
        .expect("the deployment ends");
    let app = client.app("/web/frontend").await.expect("app");
    assert_eq!(app.instances, 5);
    assert_eq!(app.tasks_healthy, 5);
    assert!(app.deployments.is_empty());
}

#[tokio::test]
async fn a_task_killed_without_scaling_is_relaunched() {
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    let app = client.app("/ops/metrics").await.expect("app");
    let victim = app.tasks[0].id.clone();
    let outcome = client
        .kill_tasks(std::slice::from_ref(&victim), false)
        .await
        .expect("killed");
    assert_eq!(outcome, KillOutcome::Killed(vec![victim.clone()]));
    let killing = client.app("/ops/metrics").await.expect("app");
    assert_eq!(killing.tasks_running, 1);

    marathons.advance(60_000);
    let after = client.app("/ops/metrics").await.expect("app");
    assert_eq!(after.instances, 2);
    assert_eq!(after.tasks_running, 2);
    assert!(after.tasks.iter().all(|t| t.id != victim));
}

#[tokio::test]
async fn a_task_killed_with_scaling_shrinks_the_app_through_a_deployment() {
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    let app = client.app("/jobs/worker-2").await.expect("app");
    let outcome = client
        .kill_tasks(&[app.tasks[0].id.clone()], true)
        .await
        .expect("killed");
    let KillOutcome::Deployment(id) = outcome else {
        panic!("expected a deployment, got {outcome:?}");
    };
    assert!(!id.is_empty());
    marathons.advance(60_000);
    let after = client.app("/jobs/worker-2").await.expect("app");
    assert_eq!((after.instances, after.tasks_running), (1, 1));
    assert!(client.deployments().await.expect("deployments").is_empty());
}

#[tokio::test]
async fn a_change_during_a_deployment_is_a_409_naming_the_deployment() {
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    let deployment = client.scale_app("/web/frontend", 6).await.expect("scaled");

    let err = client
        .scale_app("/web/frontend", 7)
        .await
        .expect_err("locked");
    assert_eq!(
        err,
        MarathonError::Conflict {
            operation: "PUT /v2/apps/{id}",
            target: "/web/frontend".to_string(),
            deployments: vec![deployment.clone()],
        }
    );
    let app = client.app("/web/frontend").await.expect("app");
    let err = client
        .kill_tasks(&[app.tasks[0].id.clone()], true)
        .await
        .expect_err("locked");
    assert_eq!(err.label(), "conflict");

    let answer = reqwest::Client::new()
        .put(format!("{}/v2/apps/web/frontend", marathons.urls[0]))
        .json(&serde_json::json!({"instances": 7}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 409);
    let body: Value = answer.json().await.expect("JSON");
    assert!(body["message"].as_str().expect("a message").starts_with(
        "App is locked by one or more deployments. Override with the option '?force=true'."
    ));
    assert_eq!(body["deployments"][0]["id"], deployment.as_str());

    let forced = reqwest::Client::new()
        .put(format!(
            "{}/v2/apps/web/frontend?force=true",
            marathons.urls[0]
        ))
        .json(&serde_json::json!({"instances": 7}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(forced.status(), 200);
    let forced: Value = forced.json().await.expect("JSON");
    assert_ne!(forced["deploymentId"], deployment.as_str());
    assert!(forced["version"].is_string());
}

#[tokio::test]
async fn during_an_election_every_path_is_a_503_and_the_adapter_finds_marathon_unavailable() {
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    marathons.peers.lose_leader();
    // LeaderProxyFilter sits on `/*`: with no leader known, `/ping` and
    // `/v2/leader` are refused too.
    for path in ["/v2/apps", "/v2/leader", "/ping", "/v2/info"] {
        for index in 0..3 {
            let answer = marathons.get(index, path).await;
            assert_eq!(answer.status(), 503, "{path} on {index}");
            let body = answer.text().await.expect("a body");
            assert!(
                body.contains("Could not determine the current leader"),
                "{body}"
            );
        }
    }
    let err = client.leader().await.expect_err("no leader");
    assert_eq!(err.label(), "unavailable");
    let err = client.apps().await.expect_err("no leader");
    assert_eq!(err.label(), "unavailable");
    marathons.peers.set_leader(0);
    assert!(!client.apps().await.expect("apps").is_empty());
}

#[tokio::test]
async fn after_a_leader_change_every_marathon_names_the_new_leader() {
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    assert_eq!(
        client.leader().await.expect("leader"),
        Some(marathons.authority(0))
    );
    marathons.peers.set_leader(2);
    assert_eq!(
        client.leader().await.expect("leader"),
        Some(marathons.authority(2))
    );
    let app_count = marathons.world.with(|w| w.apps(false)).len();
    assert_eq!(client.apps().await.expect("apps").len(), app_count);

    // The old leader now forwards: the leader's answer, naming the leader,
    // and the way it came.
    let proxied = marathons.get(0, "/v2/apps").await;
    assert_eq!(
        proxied.headers()["x-marathon-leader"],
        marathons.urls[2].as_str()
    );
    assert_eq!(
        proxied.headers()["x-marathon-via"],
        format!("1.1 {}", marathons.authority(0)).as_str()
    );
    let info = marathons.get_json(0, "/v2/info").await;
    assert_eq!(info["elected"], true, "the leader's own answer");
    assert_eq!(info["leader"], marathons.authority(2).as_str());
    let leader_port = marathons
        .authority(2)
        .rsplit_once(':')
        .map(|(_, p)| p.to_string());
    assert_eq!(
        info["http_config"]["http_port"].to_string(),
        leader_port.expect("a port")
    );
    let ping = marathons.get(1, "/ping").await;
    assert_eq!(
        ping.headers()["x-marathon-leader"],
        marathons.urls[2].as_str()
    );
    assert_eq!(ping.text().await.expect("a body"), "pong");
}

#[tokio::test]
async fn an_unknown_app_is_a_404_with_marathons_message() {
    let marathons = Marathons::start(1.0).await;
    let err = marathons
        .client()
        .app("/no/such")
        .await
        .expect_err("absent");
    assert_eq!(err.label(), "app_not_found");
    let answer = marathons.get(1, "/v2/apps/no/such").await;
    assert_eq!(answer.status(), 404);
    let body: Value = answer.json().await.expect("JSON");
    assert_eq!(body["message"], "App '/no/such' does not exist");

    // A PUT to it is a create Marathon refuses: no cmd, args or container.
    let client = marathons.client();
    let err = client.scale_app("/no/such", 2).await.expect_err("gone");
    assert_eq!(err.label(), "app_not_found", "{err}");
    let answer = reqwest::Client::new()
        .put(format!("{}/v2/apps/no/such", marathons.urls[0]))
        .json(&serde_json::json!({"instances": 2}))
        .send()
        .await
        .expect("answer");
    assert_eq!(answer.status(), 422);
    let body: Value = answer.json().await.expect("JSON");
    assert_eq!(body["message"], "Object is not valid");
}

#[tokio::test]
async fn an_error_rate_of_one_answers_503_and_the_adapter_gives_up_as_unavailable() {
    let marathons = Marathons::start(1.0).await;
    marathons.world.set_api_faults(ApiFaults {
        marathon: SystemFaults {
            error_rate: 1.0,
            latency_ms: 20,
        },
        ..ApiFaults::default()
    });
    let started = std::time::Instant::now();
    let answer = marathons.get(0, "/v2/apps").await;
    assert_eq!(answer.status(), 503);
    assert!(started.elapsed() >= Duration::from_millis(20));
    let body: Value = answer.json().await.expect("JSON");
    assert!(body["message"].is_string());
    let err = marathons.client().apps().await.expect_err("all fail");
    assert_eq!(err.label(), "unavailable");
    let report = marathons.world.with(|w| w.report());
    assert!(report.api_calls["marathon:GET /v2/apps"] >= 2);
}

#[tokio::test]
async fn the_apps_json_uses_only_field_names_real_marathon_writes() {
    let marathons = Marathons::start(1.0).await;
    let ours = marathons
        .get_json(
            0,
            "/v2/apps?embed=apps.tasks&embed=apps.counts&embed=apps.deployments",
        )
        .await;
    let real_lists = [
        fixture("marathon-1.5-v2-apps-embed-tasks-healthchecks.json"),
        fixture("marathon-1.5-v2-apps-embed-tasks-no-healthchecks.json"),
        fixture("marathon-v2-apps-raml-example.json"),
    ];
    let real_apps: Vec<&Value> = real_lists.iter().flat_map(|l| array(&l["apps"])).collect();
    // The 2016 capture (Marathon 0.15) writes `portDefinitions`, as every
    // Marathon since does for an app on the host's network; its tasks and
    // health results are of the older shape, so only its app keys count.
    let capture_2016 = fixture("marathon-2016-v2-apps-embed-tasks-healthchecks.json");
    let real_app_keys: BTreeSet<String> = union_of_keys(real_apps.iter().copied())
        .union(&union_of_keys(array(&capture_2016["apps"])))
        .cloned()
        .collect();
    let real_tasks: Vec<&Value> = real_apps
        .iter()
        .filter_map(|a| a.get("tasks"))
        .flat_map(array)
        .collect();
    // Embedded tasks are the same RAML type as /v2/tasks' and
    // /v2/apps/{id}/tasks' (which carry the fault domain and service ports).
    let task_lists = [
        fixture("marathon-v2-tasks-raml-example.json"),
        fixture("marathon-v2-apps-appid-tasks-raml-example.json"),
    ];
    let real_task_keys: BTreeSet<String> = union_of_keys(real_tasks.iter().copied())
        .union(&union_of_keys(
            task_lists.iter().flat_map(|l| array(&l["tasks"])),
        ))
        .cloned()
        .collect();
    let real_results = union_of_keys(
        real_tasks
            .iter()
            .filter_map(|t| t.get("healthCheckResults"))
            .flat_map(array),
    );
    let real_checks = union_of_keys(
        real_apps
            .iter()
            .filter_map(|a| a.get("healthChecks"))
            .flat_map(array),
    );

    let apps = array(&ours["apps"]);
    let app_count = marathons.world.with(|w| w.apps(false)).len();
    assert_eq!(apps.len(), app_count);
    for app in apps {
        assert_known_keys("app", &keys(app), &real_app_keys);
        for key in [
            "id",
            "instances",
            "cpus",
            "mem",
            "healthChecks",
            "upgradeStrategy",
            "constraints",
            "unreachableStrategy",
            "tasksStaged",
            "tasksRunning",
            "tasksHealthy",
            "tasksUnhealthy",
            "deployments",
            "tasks",
        ] {
            assert!(app.get(key).is_some(), "{key} of {}", app["id"]);
        }
        assert_eq!(
            keys(&app["upgradeStrategy"]),
            keys(&real_apps[0]["upgradeStrategy"])
        );
        assert_eq!(
            keys(&app["unreachableStrategy"]),
            keys(&real_apps[0]["unreachableStrategy"])
        );
        for check in array(&app["healthChecks"]) {
            assert_known_keys("health check", &keys(check), &real_checks);
        }
        for task in array(&app["tasks"]) {
            assert_known_keys("task", &keys(task), &real_task_keys);
            for key in [
                "id",
                "appId",
                "host",
                "slaveId",
                "state",
                "stagedAt",
                "startedAt",
                "version",
            ] {
                assert!(task.get(key).is_some(), "{key}");
            }
            if let Some(results) = task.get("healthCheckResults") {
                for result in array(results) {
                    assert_eq!(keys(result), real_results);
                }
            }
        }
    }
    let unique = apps.iter().find(|a| a["id"] == "/data/cache").expect("app");
    assert_eq!(
        unique["constraints"],
        serde_json::json!([["hostname", "UNIQUE"]])
    );

    // The adapter's own parser reads it as the client does.
    let parsed = crate::marathon::parse_apps(ours.to_string().as_bytes()).expect("parses");
    assert_eq!(parsed.len(), app_count);

    let bare = marathons.get_json(0, "/v2/apps").await;
    assert!(
        array(&bare["apps"])
            .iter()
            .all(|a| a.get("tasks").is_none())
    );
    assert!(
        array(&bare["apps"])
            .iter()
            .all(|a| a.get("tasksRunning").is_some())
    );
}

#[tokio::test]
async fn deployments_tasks_info_and_leader_have_the_fields_of_the_docs_examples() {
    let marathons = Marathons::start(1.0).await;
    marathons
        .client()
        .scale_app("/web/api", 4)
        .await
        .expect("scaled");

    let ours = marathons.get_json(0, "/v2/deployments").await;
    let real = fixture("marathon-v2-deployments-raml-example.json");
    let (ours, real) = (&array(&ours)[0], &array(&real)[0]);
    assert_eq!(keys(ours), keys(real));
    assert_eq!(
        keys(&ours["steps"][0]["actions"][0]),
        BTreeSet::from(["action".to_string(), "app".to_string()])
    );
    assert_eq!(
        keys(&ours["currentActions"][0]),
        keys(&real["currentActions"][0])
    );
    assert_eq!(ours["affectedApps"], serde_json::json!(["/web/api"]));

    let ours = marathons.get_json(1, "/v2/tasks").await;
    let real = fixture("marathon-v2-tasks-raml-example.json");
    let real_1_5 = fixture("marathon-1.5-v2-apps-embed-tasks-healthchecks.json");
    let real_keys: BTreeSet<String> = union_of_keys(array(&real["tasks"]))
        .union(&union_of_keys(array(&real_1_5["apps"][0]["tasks"])))
        .cloned()
        .collect();
    let tasks = array(&ours["tasks"]);
    assert_eq!(tasks.len(), marathons.world.with(|w| w.tasks()).len());
    for task in tasks {
        assert_known_keys("task", &keys(task), &real_keys);
    }
    assert!(
        tasks
            .iter()
            .any(|t| t["state"] == "TASK_STAGING" && t["startedAt"].is_null())
    );

    let ours = marathons.get_json(2, "/v2/info").await;
    let real = fixture("marathon-v2-info-raml-example.json");
    assert_known_keys("info", &keys(&ours), &keys(&real));
    for key in ["elected", "leader", "name", "version"] {
        assert!(ours.get(key).is_some(), "{key}");
    }

    let ours = marathons.get_json(2, "/v2/leader").await;
    let real = fixture("marathon-v2-leader-docs-example.json");
    assert_eq!(keys(&ours), keys(&real));
    assert_eq!(ours["leader"], marathons.authority(0).as_str());
}

#[test]
fn timestamps_are_marathons_iso_8601_in_utc_with_milliseconds() {
    assert_eq!(timestamp(1_500_045_214_402), "2017-07-14T15:13:34.402Z");
    assert_eq!(timestamp(951_868_799_999), "2000-02-29T23:59:59.999Z");
    assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
}

impl Marathons {
    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = reqwest::Client::new().request(method, format!("{}{path}", self.urls[0]));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("an answer");
        let status = response.status().as_u16();
        (status, response.json().await.expect("JSON"))
    }
}

#[tokio::test(start_paused = true)]
async fn info_carries_every_key_of_the_raml_example_with_its_type() {
    let marathons = Marathons::start(1.0).await;
    let ours = marathons.get_json(0, "/v2/info").await;
    let real = fixture("marathon-v2-info-raml-example.json");
    assert_eq!(keys(&ours), keys(&real));
    for section in ["marathon_config", "zookeeper_config", "http_config"] {
        assert_eq!(keys(&ours[section]), keys(&real[section]), "{section}");
        for (key, value) in real[section].as_object().unwrap() {
            let ours = &ours[section][key];
            // A default Marathon leaves some unset (null); the rest have
            // the example's type.
            let same_type = std::mem::discriminant(ours) == std::mem::discriminant(value)
                || (ours.is_number() && value.is_number());
            assert!(
                ours.is_null() || same_type,
                "{section}.{key}: {ours} vs {value}"
            );
        }
    }
    // What marathon-python's MarathonInfo reads is there.
    assert_eq!(ours["marathon_config"]["framework_name"], "marathon");
    assert!(
        ours["zookeeper_config"]["zk"]
            .as_str()
            .unwrap()
            .starts_with("zk://")
    );
}

#[tokio::test(start_paused = true)]
async fn an_apps_tasks_are_listed_and_one_is_killed_through_its_path_as_marathon_does() {
    let marathons = Marathons::start(1.0).await;
    marathons.advance(300_000);
    let app = "/web/api";
    let (status, listed) = marathons
        .send(reqwest::Method::GET, "/v2/apps/web/api/tasks", None)
        .await;
    assert_eq!(status, 200, "{listed}");
    let tasks = array(&listed["tasks"]);
    assert!(!tasks.is_empty());
    assert!(tasks.iter().all(|t| t["appId"] == app), "{listed}");
    let real = fixture("marathon-v2-apps-appid-tasks-raml-example.json");
    assert_eq!(keys(&listed), keys(&real));

    // marathon-python's leading double slash reads the same app.
    let (status, again) = marathons
        .send(reqwest::Method::GET, "/v2/apps//web/api/tasks", None)
        .await;
    assert_eq!((status, array(&again["tasks"]).len()), (200, tasks.len()));
    let (status, single) = marathons
        .send(reqwest::Method::GET, "/v2/apps//web/api", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(single["app"]["id"], app);

    // One task killed by its path: `{"task": …}`, and Marathon replaces it.
    let id = tasks[0]["id"].as_str().unwrap().to_string();
    let (status, killed) = marathons
        .send(
            reqwest::Method::DELETE,
            &format!("/v2/apps/web/api/tasks/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{killed}");
    assert_eq!(killed["task"]["id"], id.as_str());
    // Listed while it is being killed, as Marathon does, then gone.
    marathons.advance(60_000);
    let (_, after) = marathons
        .send(reqwest::Method::GET, "/v2/apps/web/api/tasks", None)
        .await;
    assert!(
        array(&after["tasks"])
            .iter()
            .all(|t| t["id"] != id.as_str())
    );

    // An unknown task of a known app, and an unknown app: 404s.
    let (status, missing) = marathons
        .send(
            reqwest::Method::DELETE,
            &format!("/v2/apps/web/api/tasks/{id}"),
            None,
        )
        .await;
    assert_eq!(status, 404, "{missing}");
    assert_eq!(
        missing["message"],
        format!("Task '{id}' does not exist").as_str()
    );
    let (status, missing) = marathons
        .send(reqwest::Method::GET, "/v2/apps/no/such/tasks", None)
        .await;
    assert_eq!(status, 404, "{missing}");
    assert_eq!(missing["message"], "App '/no/such' does not exist");

    // With scale=true: a deployment, one instance fewer.
    let before = marathons
        .world
        .with(|w| w.app(app, false).unwrap().instances);
    let other = array(&after["tasks"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, deployment) = marathons
        .send(
            reqwest::Method::DELETE,
            &format!("/v2/apps/web/api/tasks/{other}?scale=true"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{deployment}");
    assert!(deployment["deploymentId"].is_string(), "{deployment}");
    assert_eq!(
        marathons
            .world
            .with(|w| w.app(app, false).unwrap().instances),
        before - 1
    );
}

#[tokio::test(start_paused = true)]
async fn tasks_delete_refuses_an_id_naming_no_app_and_leaves_out_unknown_tasks() {
    let marathons = Marathons::start(1.0).await;
    marathons.advance(300_000);
    // No app part: Marathon cannot read the app off it.
    let (status, refused) = marathons
        .send(
            reqwest::Method::POST,
            "/v2/tasks/delete",
            Some(serde_json::json!({"ids": ["nonsense"]})),
        )
        .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["message"], "Invalid task id 'nonsense'.");
    // Well formed but unknown: filtered out, nothing killed.
    let tasks_before = marathons.world.with(|w| w.tasks()).len();
    let (status, answer) = marathons
        .send(
            reqwest::Method::POST,
            "/v2/tasks/delete",
            Some(serde_json::json!({"ids": ["web_api.00000000-0000-0000-0000-000000000000"]})),
        )
        .await;
    assert_eq!((status, answer), (200, serde_json::json!({"tasks": []})));
    assert_eq!(marathons.world.with(|w| w.tasks()).len(), tasks_before);
    // The roller's adapter sees the refusal as an error, not as nothing
    // to kill.
    let err = marathons
        .client()
        .kill_tasks(&["nonsense".to_string()], false)
        .await
        .expect_err("a 400");
    assert!(err.to_string().contains("Invalid task id"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn apps_and_tasks_carry_the_fields_real_answers_carry() {
    let marathons = Marathons::start(1.0).await;
    let apps = marathons.get_json(0, "/v2/apps?embed=apps.tasks").await;
    let app = &array(&apps["apps"])[0];
    for key in [
        "args",
        "container",
        "env",
        "ports",
        "uris",
        "user",
        "dependencies",
    ] {
        assert!(app.get(key).is_some(), "app lacks {key}: {app}");
    }
    let port = app["ports"][0].as_u64().unwrap();
    assert!((10_000..20_000).contains(&port), "{port}");
    let tasks = marathons.get_json(0, "/v2/tasks").await;
    let real = fixture("marathon-v2-tasks-raml-example.json");
    for task in array(&tasks["tasks"]) {
        for key in ["servicePorts", "region", "zone", "role"] {
            assert!(task.get(key).is_some(), "task lacks {key}: {task}");
        }
        assert_eq!(
            std::mem::discriminant(&task["servicePorts"]),
            std::mem::discriminant(&real["tasks"][0]["servicePorts"])
        );
        let zone = task["zone"].as_str().unwrap();
        let region = task["region"].as_str().unwrap();
        assert!(
            zone.starts_with(region) && zone.len() == region.len() + 1,
            "{task}"
        );
    }
    // An app's tasks name its service port.
    let first = array(&tasks["tasks"])
        .iter()
        .find(|t| t["appId"] == app["id"])
        .expect("a task of the first app");
    assert_eq!(first["servicePorts"], app["ports"]);
}

#[tokio::test(start_paused = true)]
async fn the_queue_shows_a_failing_apps_launch_delay_until_it_is_reset() {
    use crate::sim::world::Faults;
    const APP: &str = "/ops/metrics";
    let marathons = Marathons::start(1.0).await;
    marathons.advance(300_000);
    assert_eq!(
        marathons.get_json(0, "/v2/queue").await,
        serde_json::json!({"queue": []})
    );
    // The app has no health checks: its relaunched tasks fail on start
    // (TASK_FAILED), which Marathon's rate limiter counts.
    marathons.world.with(|w| {
        w.set_faults(Faults {
            never_healthy_apps: vec![APP.into()],
            ..Faults::default()
        })
        .expect("valid faults");
        let ids: Vec<String> = w
            .tasks()
            .into_iter()
            .filter(|t| t.app_id == APP)
            .map(|t| t.id)
            .collect();
        w.kill_tasks(&ids, false);
    });
    let mut delayed = None;
    for _ in 0..1200 {
        marathons.advance(100);
        let queue = marathons.get_json(0, "/v2/queue").await;
        if let Some(item) = array(&queue["queue"])
            .iter()
            .find(|item| item["app"]["id"] == APP && item["delay"]["overdue"] == false)
        {
            delayed = Some(item.clone());
            break;
        }
    }
    let item = delayed.expect("the app waits out a launch delay within 120 s");
    assert_eq!(
        keys(&item),
        ["app", "count", "delay", "since"]
            .into_iter()
            .map(String::from)
            .collect::<BTreeSet<_>>()
    );
    let count = item["count"].as_u64().expect("a count");
    assert!((1..=2).contains(&count), "{item}");
    assert!(item["delay"]["timeLeftSeconds"].as_u64().expect("seconds") >= 1);
    assert!(item["since"].as_str().expect("a timestamp").ends_with('Z'));
    assert_eq!(item["app"]["instances"], 2);
    // Resetting the delay launches what was queued at once.
    let reset = reqwest::Client::new()
        .delete(format!("{}/v2/queue/{APP}/delay", marathons.urls[0]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(reset.status(), 204);
    let queue = marathons.get_json(0, "/v2/queue").await;
    assert!(
        array(&queue["queue"])
            .iter()
            .all(|item| item["app"]["id"] != APP),
        "{queue}"
    );
    // Nothing queued: Marathon's 404.
    let (status, answer) = marathons
        .send(
            reqwest::Method::DELETE,
            "/v2/queue/web/frontend/delay",
            None,
        )
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        answer["message"],
        "Application /web/frontend not found in tasks queue."
    );
}

// ----- a bad image: what a roll onto it reads -----

/// Kills the app's first task so that its replacement lands on an agent of
/// the demo's template version 7, made a bad image with `effect` (every
/// agent runs 7: the tasks placed from now on suffer it, the others run on
/// as they were). Returns the task killed.
fn replace_a_task_on_a_bad_image(marathons: &Marathons, app: &str, effect: ImageEffect) -> String {
    marathons.world.with(|w| {
        w.set_bad_image("7", effect).expect("the demo's version");
        let victim = w.app(app, true).expect("app").tasks.expect("embedded")[0]
            .id
            .clone();
        w.kill_tasks(std::slice::from_ref(&victim), false);
        victim
    })
}

#[tokio::test(start_paused = true)]
async fn the_adapter_reads_the_failing_checks_and_the_health_kill_of_a_task_on_a_bad_image() {
    const APP: &str = "/web/frontend";
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    let victim = replace_a_task_on_a_bad_image(&marathons, APP, ImageEffect::Unhealthy);
    // Its replacement passes its 60 s grace, then fails check after check.
    let mut failing = None;
    for _ in 0..120 {
        marathons.advance(1_000);
        let apps = client.apps().await.expect("apps");
        let app = apps.iter().find(|a| a.id == APP).expect("listed").clone();
        if let Some(task) = app
            .tasks
            .iter()
            .find(|t| t.health_results.iter().any(|r| r.consecutive_failures > 0))
        {
            failing = Some((app.clone(), task.clone()));
            break;
        }
    }
    let (app, task) = failing.expect("a task fails its checks within 120 s");
    assert_eq!(app.tasks_unhealthy, 1, "{app:?}");
    assert!(app.last_task_failure.is_none(), "nothing failed yet");
    let result = &task.health_results[0];
    assert!(!result.alive);
    assert!(result.last_failure.is_some());
    assert_eq!(
        result.last_failure_cause.as_deref(),
        Some("503 Service Unavailable"),
        "an HTTP check's cause is the answer's status"
    );

    // Three failures in a row and Marathon kills it.
    let mut killed = None;
    for _ in 0..60 {
        marathons.advance(1_000);
        let apps = client.apps().await.expect("apps");
        let app = apps.iter().find(|a| a.id == APP).expect("listed");
        if let Some(failure) = &app.last_task_failure {
            killed = Some(failure.clone());
            break;
        }
    }
    let failure = killed.expect("killed within 60 s of its first failure");
    assert_ne!(failure.task_id, victim, "the API's kill is no failure");
    assert_eq!(failure.task_id, task.id);
    assert_eq!(failure.agent_id, task.agent_id);
    assert_eq!(failure.host, task.host);
    assert_eq!(failure.state, "TASK_KILLED");
    assert_eq!(
        failure.message,
        "Task was killed since health check failed. Reason: 503 Service Unavailable"
    );
    assert!(failure.at.is_some(), "Marathon's timestamp parses");
    // `/v2/apps/{id}` embeds it whatever is asked, as Marathon does.
    let single = client.app(APP).await.expect("app");
    assert_eq!(single.last_task_failure, Some(failure));
}

#[tokio::test(start_paused = true)]
async fn last_task_failure_is_written_with_marathons_keys_only_when_embedded_in_the_list() {
    const APP: &str = "/ops/metrics";
    let marathons = Marathons::start(1.0).await;
    let victim = replace_a_task_on_a_bad_image(&marathons, APP, ImageEffect::Crash);
    marathons.advance(15_000);
    let embedded = marathons
        .get_json(0, "/v2/apps?embed=apps.lastTaskFailure")
        .await;
    let app = array(&embedded["apps"])
        .iter()
        .find(|a| a["id"] == APP)
        .expect("listed")
        .clone();
    let failure = &app["lastTaskFailure"];
    // The docs' example's keys, and `slaveId` (Marathon 0.8 on).
    let example = fixture("marathon-0.7-v2-apps-lastTaskFailure-tasks-docs-example.json");
    let mut expected = keys(&example["apps"][0]["lastTaskFailure"]);
    expected.insert("slaveId".into());
    assert_eq!(keys(failure), expected, "{failure}");
    assert_eq!(failure["appId"], APP);
    assert_eq!(failure["state"], "TASK_FAILED");
    assert_eq!(failure["message"], "Command exited with status 1");
    assert_ne!(failure["taskId"], victim.as_str());
    assert_eq!(failure["version"], app["version"]);
    for stamp in [&failure["timestamp"], &failure["version"]] {
        assert!(
            stamp
                .as_str()
                .is_some_and(|s| s.ends_with('Z') && s.len() == 24),
            "{stamp}"
        );
    }
    // Only apps with a failure carry one; unasked, the list has none.
    assert!(
        array(&embedded["apps"])
            .iter()
            .filter(|a| a["id"] != APP)
            .all(|a| a.get("lastTaskFailure").is_none())
    );
    for path in ["/v2/apps", "/v2/apps?embed=apps.tasks"] {
        let bare = marathons.get_json(0, path).await;
        assert!(
            array(&bare["apps"])
                .iter()
                .all(|a| a.get("lastTaskFailure").is_none()),
            "{path}"
        );
    }
    // The deprecated `failures` embeds it too, with the tasks.
    let old = marathons.get_json(0, "/v2/apps?embed=apps.failures").await;
    let app = array(&old["apps"])
        .iter()
        .find(|a| a["id"] == APP)
        .expect("listed");
    assert_eq!(&app["lastTaskFailure"], failure);
    assert!(app.get("tasks").is_some());
    // A single app: embedded by default.
    let single = marathons.get_json(0, "/v2/apps/ops/metrics").await;
    assert_eq!(&single["app"]["lastTaskFailure"], failure);
}

#[tokio::test(start_paused = true)]
async fn on_a_crashing_image_the_queue_shows_the_launch_delay_the_failures_grow() {
    const APP: &str = "/web/frontend";
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    replace_a_task_on_a_bad_image(&marathons, APP, ImageEffect::Crash);
    // Each replacement crashes 3 s after it starts (TASK_FAILED, health
    // checks or not); the delay grows by 1.15 per failure.
    let mut delays = Vec::new();
    for _ in 0..600 {
        marathons.advance(500);
        let queue = client.launch_queue().await.expect("queue");
        if let Some(queued) = queue.iter().find(|q| q.app == APP)
            && queued.delay_left > Duration::ZERO
            && delays.last().is_none_or(|d| queued.delay_left > *d)
        {
            delays.push(queued.delay_left);
            if delays.len() == 3 {
                break;
            }
        }
    }
    assert_eq!(delays.len(), 3, "three delays, each longer: {delays:?}");
    let failure = client
        .apps()
        .await
        .expect("apps")
        .iter()
        .find(|a| a.id == APP)
        .and_then(|a| a.last_task_failure.clone())
        .expect("recorded");
    assert_eq!(failure.state, "TASK_FAILED");
    assert_eq!(failure.message, "Command exited with status 1");
}

// ----- what marathon-python 0.13 found (tests/real_clients/) -----

#[tokio::test(start_paused = true)]
async fn boolean_query_parameters_are_true_in_any_case_as_jax_rs_reads_them() {
    // marathon-python sends Python's `True`; Marathon's resources read
    // booleans with `Boolean.valueOf`, which ignores case.
    assert!(super::query_true("True") && super::query_true("TRUE") && super::query_true("true"));
    assert!(!super::query_true("False") && !super::query_true("1") && !super::query_true(""));
    let marathons = Marathons::start(1.0).await;
    marathons.advance(300_000);
    let (_, listed) = marathons
        .send(reqwest::Method::GET, "/v2/apps/jobs/worker-1/tasks", None)
        .await;
    let id = array(&listed["tasks"])[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, answer) = marathons
        .send(
            reqwest::Method::DELETE,
            &format!("/v2/apps//jobs/worker-1/tasks/{id}?scale=True&wipe=False"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        keys(&answer),
        ["deploymentId", "version"].map(String::from).into()
    );
    let instances = marathons
        .world
        .with(|w| w.app("/jobs/worker-1", false).unwrap().instances);
    assert_eq!(instances, 1);
}

#[tokio::test(start_paused = true)]
async fn every_embed_spelling_marathon_accepts_embeds_the_tasks() {
    let marathons = Marathons::start(1.0).await;
    // InfoEmbedResolver strips `group.apps.`, `apps.` or `app.`, or none.
    for embed in [
        "apps.tasks",
        "app.tasks",
        "group.apps.tasks",
        "tasks",
        "apps.failures",
    ] {
        let apps = marathons
            .get_json(0, &format!("/v2/apps?embed={embed}"))
            .await;
        for app in array(&apps["apps"]) {
            let tasks = app["tasks"].as_array();
            assert_eq!(
                tasks.map(Vec::len),
                app["instances"].as_u64().map(|n| n as usize),
                "embed={embed}: {app}"
            );
        }
    }
    for embed in ["apps.counts", "app.deployments", "apps.task"] {
        let apps = marathons
            .get_json(0, &format!("/v2/apps?embed={embed}"))
            .await;
        assert!(
            array(&apps["apps"])
                .iter()
                .all(|a| a.get("tasks").is_none()),
            "embed={embed}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn event_subscriptions_are_refused_as_marathon_without_the_http_callback_refuses() {
    let marathons = Marathons::start(1.0).await;
    for method in [
        reqwest::Method::GET,
        reqwest::Method::POST,
        reqwest::Method::DELETE,
    ] {
        let (status, body) = marathons
            .send(
                method.clone(),
                "/v2/eventSubscriptions?callbackUrl=http://x/",
                None,
            )
            .await;
        assert_eq!(status, 400, "{method}: {body}");
        assert_eq!(
            body["message"],
            "http event callback system is not running on this Marathon instance. \
             Please re-start this instance with \"--event_subscriber http_callback\"."
        );
    }
    let info = marathons.get_json(0, "/v2/info").await;
    assert!(info.get("event_subscriber").is_none(), "{info}");
}

#[tokio::test(start_paused = true)]
async fn each_task_has_one_host_port_per_service_port_from_the_offered_range() {
    let marathons = Marathons::start(1.0).await;
    let real = fixture("marathon-v2-tasks-raml-example.json");
    for task in array(&real["tasks"]) {
        assert_eq!(
            array(&task["ports"]).len(),
            array(&task["servicePorts"]).len()
        );
    }
    let tasks = marathons.get_json(0, "/v2/tasks").await;
    for task in array(&tasks["tasks"]) {
        let ports = array(&task["ports"]);
        assert_eq!(ports.len(), array(&task["servicePorts"]).len(), "{task}");
        assert!(
            ports
                .iter()
                .all(|p| (31_000..=32_000).contains(&p.as_u64().unwrap())),
            "{task}"
        );
    }
    // The same task keeps its port from one answer to the next.
    let again = marathons.get_json(0, "/v2/tasks").await;
    assert_eq!(tasks, again);
}

#[tokio::test(start_paused = true)]
async fn groups_are_the_apps_parent_paths_nested_as_marathon_answers_them() {
    let marathons = Marathons::start(1.0).await;
    let (status, root) = marathons
        .send(reqwest::Method::GET, "/v2/groups", None)
        .await;
    assert_eq!(status, 200, "{root}");
    // GroupInfoWrites with the default embeds: apps, groups, pods.
    let group_keys: BTreeSet<String> = ["apps", "dependencies", "groups", "id", "pods", "version"]
        .map(String::from)
        .into();
    assert_eq!(keys(&root), group_keys);
    assert_eq!(root["id"], "/");
    assert_eq!(root["apps"], serde_json::json!([]));
    let ids: Vec<&str> = array(&root["groups"])
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["/data", "/jobs", "/ops", "/web"]);
    let web = array(&root["groups"])
        .iter()
        .find(|g| g["id"] == "/web")
        .unwrap();
    assert_eq!(keys(web), group_keys);
    let mut app_ids: Vec<&str> = array(&web["apps"])
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    app_ids.sort_unstable();
    assert_eq!(app_ids, ["/web/api", "/web/frontend"]);
    // Bare definitions: no counts, deployments or tasks without an
    // embed of group.apps.*.
    for app in array(&web["apps"]) {
        for key in ["tasksRunning", "deployments", "tasks"] {
            assert!(app.get(key).is_none(), "{key} in {app}");
        }
        assert!(app["instances"].is_u64() && app["healthChecks"].is_array());
    }
    // One group by its path (marathon-python's double slash too), and
    // Marathon's 404 for a path no group has.
    let (status, one) = marathons
        .send(reqwest::Method::GET, "/v2/groups//web", None)
        .await;
    assert_eq!((status, &one), (200, web));
    let (status, missing) = marathons
        .send(reqwest::Method::GET, "/v2/groups/web/frontend", None)
        .await;
    assert_eq!(status, 404, "{missing}");
    assert_eq!(missing["message"], "Group '/web/frontend' does not exist");

    // A scaled app versions its group and the root.
    let (_, scaled) = marathons
        .send(
            reqwest::Method::PUT,
            "/v2/apps/ops/metrics",
            Some(serde_json::json!({"instances": 3})),
        )
        .await;
    let (_, ops) = marathons
        .send(reqwest::Method::GET, "/v2/groups/ops", None)
        .await;
    assert_eq!(ops["version"], scaled["version"]);
    let (_, root) = marathons
        .send(reqwest::Method::GET, "/v2/groups", None)
        .await;
    assert_eq!(root["version"], scaled["version"]);
}

#[tokio::test(start_paused = true)]
async fn an_apps_versions_are_listed_newest_first_and_each_reads_as_it_was() {
    let marathons = Marathons::start(1.0).await;
    marathons.advance(300_000);
    let (status, listed) = marathons
        .send(reqwest::Method::GET, "/v2/apps/ops/metrics/versions", None)
        .await;
    assert_eq!(status, 200, "{listed}");
    let first = array(&listed["versions"]).clone();
    assert_eq!(first.len(), 1, "{listed}");
    let app = marathons.get_json(0, "/v2/apps/ops/metrics").await;
    assert_eq!(first[0], app["app"]["version"]);

    let (status, _) = marathons
        .send(
            reqwest::Method::PUT,
            "/v2/apps/ops/metrics",
            Some(serde_json::json!({"instances": 3})),
        )
        .await;
    assert_eq!(status, 200);
    marathons.advance(1_000);
    let (_, listed) = marathons
        .send(reqwest::Method::GET, "/v2/apps//ops/metrics/versions", None)
        .await;
    let versions = array(&listed["versions"]).clone();
    assert_eq!(versions.len(), 2, "{listed}");
    assert_eq!(versions[1], first[0], "newest first");
    for (version, instances) in [(&versions[0], 3), (&versions[1], 2)] {
        let path = format!(
            "/v2/apps/ops/metrics/versions/{}",
            version.as_str().unwrap()
        );
        let (status, definition) = marathons.send(reqwest::Method::GET, &path, None).await;
        assert_eq!(status, 200, "{definition}");
        assert_eq!(definition["instances"], instances, "{definition}");
        assert_eq!(&definition["version"], version);
        // A definition, not a status: no counts, deployments or tasks.
        for key in ["tasksRunning", "deployments", "tasks"] {
            assert!(definition.get(key).is_none(), "{key} in {definition}");
        }
    }
    let (status, missing) = marathons
        .send(
            reqwest::Method::GET,
            "/v2/apps/ops/metrics/versions/2001-01-01T00:00:00.000Z",
            None,
        )
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        missing["message"],
        "App '/ops/metrics' does not exist in version 2001-01-01T00:00:00.000Z"
    );
    let (status, missing) = marathons
        .send(reqwest::Method::GET, "/v2/apps/nope/versions", None)
        .await;
    assert_eq!(status, 404);
    assert_eq!(missing["message"], "App '/nope' does not exist");
}

#[tokio::test(start_paused = true)]
async fn accepted_resource_roles_are_served_and_info_names_dcos_marathons_role() {
    let marathons = Marathons(PeerServers::start_on("demo-cluster", 1.0, router).await);
    let apps = marathons.get_json(0, "/v2/apps?embed=apps.tasks").await;
    let roles_of = |id: &str| {
        array(&apps["apps"])
            .iter()
            .find(|a| a["id"] == id)
            .map(|a| a["acceptedResourceRoles"].clone())
            .expect("the app")
    };
    assert_eq!(
        roles_of("/edge/marathon-lb"),
        serde_json::json!(["slave_public"])
    );
    assert_eq!(
        roles_of("/web/frontend"),
        serde_json::json!(["*"]),
        "Marathon's default"
    );
    let edge = marathons.get_json(0, "/v2/apps/edge/marathon-lb").await;
    assert_eq!(
        edge["app"]["acceptedResourceRoles"],
        serde_json::json!(["slave_public"])
    );
    for task in array(&edge["app"]["tasks"]) {
        assert_eq!(task["role"], "slave_public", "Marathon's role");
    }
    let info = marathons.get_json(0, "/v2/info").await;
    assert_eq!(info["marathon_config"]["mesos_role"], "slave_public");

    let unreserved = Marathons::start(1.0).await;
    let info = unreserved.get_json(0, "/v2/info").await;
    assert_eq!(info["marathon_config"]["mesos_role"], Value::Null);
}

#[tokio::test(start_paused = true)]
async fn a_put_takes_accepted_resource_roles_as_marathon_validates_and_versions_them() {
    let marathons = Marathons(PeerServers::start_on("demo-cluster", 1.0, router).await);
    marathons.advance(60_000);
    let path = "/v2/apps/edge/marathon-lb";
    for roles in [serde_json::json!([]), serde_json::json!(["bad role"])] {
        let (status, body) = marathons
            .send(
                reqwest::Method::PUT,
                path,
                Some(serde_json::json!({"acceptedResourceRoles": roles})),
            )
            .await;
        assert_eq!(status, 422, "{roles}: {body}");
        assert_eq!(body["details"][0]["path"], "/acceptedResourceRoles");
    }
    let before = marathons.get_json(0, path).await["app"].clone();

    // The whole definition put back, as clients do: a scale, no config change.
    let (status, body) = marathons
        .send(
            reqwest::Method::PUT,
            path,
            Some(serde_json::json!({"instances": 3, "acceptedResourceRoles": ["slave_public"]})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let same = marathons.get_json(0, path).await["app"].clone();
    assert_eq!(
        same["versionInfo"]["lastConfigChangeAt"],
        before["versionInfo"]["lastConfigChangeAt"]
    );

    marathons.advance(1_000);
    let (status, body) = marathons
        .send(
            reqwest::Method::PUT,
            path,
            Some(serde_json::json!({"acceptedResourceRoles": ["*", "slave_public"]})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let after = marathons.get_json(0, path).await["app"].clone();
    assert_eq!(
        after["acceptedResourceRoles"],
        serde_json::json!(["*", "slave_public"])
    );
    assert_eq!(after["versionInfo"]["lastConfigChangeAt"], body["version"]);
    assert_eq!(after["instances"], 3);
    // The version before the change still reads as it was.
    let old = format!(
        "{path}/versions/{}",
        same["version"].as_str().expect("a version")
    );
    let (status, definition) = marathons.send(reqwest::Method::GET, &old, None).await;
    assert_eq!(status, 200, "{definition}");
    assert_eq!(
        definition["acceptedResourceRoles"],
        serde_json::json!(["slave_public"])
    );
}
