//! `roller health` against a Marathon served from the fixture files on a
//! loopback port: exit 0 healthy, 1 unhealthy, 2 no verdict, and the same
//! JSON shape for all three.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{StatusCode, Uri};
use serde_json::{Value, json};

use crate::test::{Test, keys};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/{name}")).unwrap()
}

/// A Marathon on 127.0.0.1 answering `path → (status, body)` (404
/// otherwise), in its own thread; stopped when dropped.
struct FixtureMarathon {
    url: String,
    /// Every request's path and query, in order.
    requests: Arc<Mutex<Vec<String>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FixtureMarathon {
    fn serve(routes: &[(&str, u16, String)]) -> FixtureMarathon {
        let routes: Arc<HashMap<String, (u16, String)>> = Arc::new(
            routes
                .iter()
                .map(|(path, status, body)| (path.to_string(), (*status, body.clone())))
                .collect(),
        );
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                url_tx
                    .send(format!("http://{}", listener.local_addr().unwrap()))
                    .unwrap();
                let router = Router::new().fallback(move |uri: Uri| {
                    let routes = routes.clone();
                    let seen = seen.clone();
                    async move {
                        seen.lock().unwrap().push(uri.to_string());
                        let (status, body) = routes
                            .get(uri.path())
                            .cloned()
                            .unwrap_or((404, String::new()));
                        (StatusCode::from_u16(status).unwrap(), body)
                    }
                });
                axum::serve(listener, router)
                    .with_graceful_shutdown(async {
                        stopped.await.ok();
                    })
                    .await
                    .unwrap();
            });
        });
        FixtureMarathon {
            url: url_rx.recv().unwrap(),
            requests,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `/v2/apps` from `apps` and `/v2/deployments` from `deployments`.
    fn with(apps: &str, deployments: &str) -> FixtureMarathon {
        FixtureMarathon::serve(&[
            ("/v2/apps", 200, fixture(apps)),
            ("/v2/deployments", 200, fixture(deployments)),
        ])
    }
}

impl Drop for FixtureMarathon {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
        if let Some(thread) = self.thread.take() {
            thread.join().ok();
        }
    }
}

const HEALTHY_1_5: &str = "marathon-1.5-v2-apps-embed-tasks-healthchecks.json";
const HEALTHY_2016: &str = "marathon-2016-v2-apps-embed-tasks-healthchecks.json";
const DEPLOYING_STAGED: &str = "marathon-0.7-v2-apps-lastTaskFailure-tasks-docs-example.json";
const DEPLOYMENTS_KAFKA: &str = "marathon-v2-deployments-readiness-dcosui.json";
const DEPLOYMENTS_FOO: &str = "marathon-v2-deployments-raml-example.json";

#[test]
fn a_healthy_cluster_exits_zero_with_one_line_per_app() {
    // The listed deployment touches /kafka, not these apps.
    let marathon = FixtureMarathon::with(HEALTHY_2016, DEPLOYMENTS_KAFKA);
    Test::new()
        .args(["health", "--marathon", &marathon.url])
        .stdout(
            "\
APP           VERDICT    INSTANCES  RUNNING  HEALTHY  REASON
/nginx-blue   healthy            1        1        1
/nginx-green  healthy            3        3        3
verdict: healthy (2 apps)
",
        )
        .run();
    let requests = marathon.requests.lock().unwrap().clone();
    assert!(
        requests
            .contains(&"/v2/apps?embed=apps.tasks&embed=apps.counts&embed=apps.deployments&embed=apps.lastTaskFailure".into()),
        "{requests:?}"
    );
}

#[test]
fn json_reports_every_app_with_its_healthy_tasks_per_agent() {
    let marathon = FixtureMarathon::with(HEALTHY_1_5, DEPLOYMENTS_KAFKA);
    let output = Test::new()
        .args(["health", "--json", "--marathon", &marathon.url])
        .any_stdout()
        .run();
    let report = output.json();
    assert_eq!(keys(&report), ["apps", "error", "verdict"]);
    assert_eq!(report["verdict"], "healthy");
    assert_eq!(report["error"], Value::Null);
    let app = &report["apps"][0];
    assert_eq!(
        keys(app),
        [
            "healthy",
            "healthyPerAgent",
            "id",
            "instances",
            "reason",
            "tasksHealthy",
            "tasksRunning"
        ]
    );
    assert_eq!(
        *app,
        json!({
            "id": "/nginx-green",
            "healthy": true,
            "reason": null,
            "instances": 3,
            "tasksRunning": 3,
            "tasksHealthy": 3,
            "healthyPerAgent": {
                "c28a2184-c702-482c-91c8-5af9318434d4-S0": 1,
                "c28a2184-c702-482c-91c8-5af9318434d4-S1": 2
            }
        })
    );
}

#[test]
fn an_unhealthy_app_exits_one_and_is_listed_with_its_reason() {
    let marathon = FixtureMarathon::with(DEPLOYING_STAGED, DEPLOYMENTS_FOO);
    Test::new()
        .args(["health", "--marathon", &marathon.url])
        .status(1)
        .stdout(
            "\
APP      VERDICT    INSTANCES  RUNNING  HEALTHY  REASON
/ubuntu  unhealthy          1        0        0  deploying (f945548f-dd80-49a2-8b1a-d07ad9245688); 0 of 1 running (no health checks); 1 staged
verdict: unhealthy (1 of 1 apps)
",
        )
        .stderr("roller: 1 of 1 Marathon apps unhealthy\n")
        .run();
}

#[test]
fn json_for_an_unhealthy_cluster_carries_the_reason() {
    let marathon = FixtureMarathon::with(DEPLOYING_STAGED, DEPLOYMENTS_FOO);
    let output = Test::new()
        .args(["health", "--marathon", &marathon.url, "--json"])
        .status(1)
        .any_stdout()
        .stderr_contains("unhealthy")
        .run();
    let report = output.json();
    assert_eq!(report["verdict"], "unhealthy");
    assert_eq!(report["error"], Value::Null);
    assert_eq!(report["apps"][0]["healthy"], false);
    assert_eq!(
        report["apps"][0]["reason"],
        "deploying (f945548f-dd80-49a2-8b1a-d07ad9245688); 0 of 1 running (no health checks); 1 staged"
    );
    assert_eq!(report["apps"][0]["healthyPerAgent"], json!({}));
}

#[test]
fn an_unreachable_marathon_is_no_verdict_within_seconds() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    let output = Test::new()
        .args(["health", "--json", "--marathon", &format!("{url},{url}/")])
        .status(2)
        .any_stdout()
        .stderr_contains("roller: no health verdict: Marathon: GET /v2/")
        .stderr_contains("cannot connect")
        .run();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let report = output.json();
    assert_eq!(report["verdict"], "unknown");
    assert_eq!(report["apps"], json!([]));
    let error = report["error"].as_str().unwrap();
    assert!(
        error.contains("no Marathon could serve the request"),
        "{error}"
    );
}

#[test]
fn an_unparsable_answer_is_no_verdict() {
    let marathon = FixtureMarathon::serve(&[
        ("/v2/apps", 200, "<html>login</html>".to_string()),
        ("/v2/deployments", 200, "[]".to_string()),
    ]);
    Test::new()
        .args(["health", "--marathon", &marathon.url])
        .status(2)
        .stderr_contains(
            "roller: no health verdict: Marathon: GET /v2/apps: cannot parse Marathon's answer",
        )
        .run();
}

#[test]
fn a_bad_url_is_no_verdict_and_still_json() {
    let output = Test::new()
        .args(["health", "--json", "--marathon", "ftp://marathon:8080"])
        .status(2)
        .any_stdout()
        .stderr_contains("is not a usable Marathon URL")
        .run();
    let report = output.json();
    assert_eq!(report["verdict"], "unknown");
    assert!(report["error"].as_str().unwrap().contains("http or https"));
}

#[test]
fn without_a_marathon_url_it_is_a_usage_error() {
    Test::new()
        .args(["health"])
        .status(2)
        .stderr_contains("--marathon <URL[,URL...]>")
        .run();
}

#[test]
fn health_help_documents_exit_codes_credentials_and_the_json_shape() {
    Test::new()
        .args(["health", "--help"])
        .stdout_contains("Usage: roller health [OPTIONS] --marathon <URL[,URL...]>")
        .stdout_contains("  1    some app is unhealthy")
        .stdout_contains("  2    no verdict")
        .stdout_contains("ROLLER_MARATHON_TOKEN")
        .stdout_contains("\"healthyPerAgent\"")
        .run();
}

/// `/master/slaves` from the dcos-ui fixture's agents, the first renamed to
/// the agent the 2016 Marathon fixture's three nginx-green tasks run on.
fn mesos_slaves_holding_nginx_green() -> String {
    let summary: Value =
        serde_json::from_str(&fixture("mesos-master-state-summary-dcosui.json")).unwrap();
    let mut slaves = summary["slaves"].clone();
    slaves[0]["id"] = json!("1f09399d-0cb0-4484-afd7-f08e99d2acbb-S1");
    json!({ "slaves": slaves, "recovered_slaves": [] }).to_string()
}

#[test]
fn with_mesos_each_agent_is_listed_with_the_healthy_tasks_it_holds() {
    let cluster = FixtureMarathon::serve(&[
        ("/v2/apps", 200, fixture(HEALTHY_2016)),
        ("/v2/deployments", 200, fixture(DEPLOYMENTS_KAFKA)),
        // 200 from /master/redirect: this master is the leader.
        ("/master/redirect", 200, String::new()),
        ("/master/slaves", 200, mesos_slaves_holding_nginx_green()),
    ]);
    let output = Test::new()
        .args([
            "health",
            "--marathon",
            &cluster.url,
            "--mesos",
            &cluster.url,
            "--json",
        ])
        .any_stdout()
        .run();
    let report = output.json();
    assert_eq!(report["verdict"], "healthy");
    let agents = report["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 3);
    assert_eq!(agents[0]["id"], "1f09399d-0cb0-4484-afd7-f08e99d2acbb-S1");
    assert_eq!(agents[0]["hostname"], "dcos-01");
    assert_eq!(agents[0]["healthyTasks"], 3);
    assert_eq!(agents[0]["active"], true);
    assert_eq!(agents[1]["healthyTasks"], 0);
}

#[test]
fn an_unreachable_mesos_is_no_verdict() {
    let marathon = FixtureMarathon::with(HEALTHY_2016, DEPLOYMENTS_KAFKA);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mesos = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let output = Test::new()
        .args([
            "health",
            "--marathon",
            &marathon.url,
            "--mesos",
            &mesos,
            "--json",
        ])
        .status(2)
        .any_stdout()
        .stderr_contains("Mesos")
        .run();
    assert_eq!(output.json()["verdict"], "unknown");
}

#[test]
fn a_ca_bundle_without_certificates_is_no_verdict_naming_the_file() {
    Test::new()
        .file("ca.pem", "not a certificate")
        .args([
            "health",
            "--marathon",
            "http://127.0.0.1:9",
            "--ca-bundle",
            "ca.pem",
        ])
        .status(2)
        .stderr_contains("ca.pem")
        .run();
}
