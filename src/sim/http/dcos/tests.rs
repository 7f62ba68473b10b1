//! The admin router through real HTTP (reqwest): each endpoint's status
//! code, content type and JSON shape as dcos-commons writes them, a pod
//! replaced and recovered as a client sees it, interrupt and continue
//! (200 and 208), the 404s of the router and of the scheduler, and the 502
//! while the scheduler has no running task. The world is moved by hand
//! (its clock never catches up within a test), so nothing waits for luck.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::sim::Scenario;
use crate::sim::http::peer_servers::{PeerServers, keys};
use crate::sim::server::{SimOptions, Simulator};

/// Three agents, the scheduler of `hello-world`, its two pods (ready 10 s
/// after their tasks start).
const HELLO: &str = r#"
    [group]
    name = "agents"
    min_size = 3
    max_size = 6
    desired_capacity = 3

    [agent]
    cpus = 4
    mem = 8192

    [[apps]]
    id = "/hello-world"
    instances = 1
    cpus = 0.5
    mem = 512
    [apps.labels]
    DCOS_COMMONS_API_VERSION = "v1"
    DCOS_SERVICE_NAME = "hello-world"

    [[services]]
    name = "hello-world"
    {service}

    [[services.pods]]
    type = "hello"
    count = 2
    cpus = 1
    mem = 1024
    readiness_s = 10
"#;

struct Admin {
    servers: PeerServers,
    base: String,
}

impl Admin {
    async fn start(service: &str) -> Admin {
        let text = HELLO.replace("{service}", service);
        let scenario = Scenario::from_toml(&text, "hello").expect("valid");
        let servers =
            PeerServers::start_with(&scenario, 1.0, |world, _, _| super::router(world)).await;
        let base = format!("{}/service/hello-world/v1", servers.urls[0]);
        Admin { servers, base }
    }

    fn advance(&self, ms: u64) {
        self.servers.world.with(|w| w.advance_by_ms(ms));
    }

    async fn call(&self, method: reqwest::Method, path: &str) -> (StatusCode, String, String) {
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        };
        let answer = client()
            .request(method, url)
            .send()
            .await
            .expect("an answer");
        let status = answer.status();
        let content_type = answer
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        (status, content_type, answer.text().await.expect("a body"))
    }

    async fn get(&self, path: &str) -> (StatusCode, String, String) {
        self.call(reqwest::Method::GET, path).await
    }

    async fn post(&self, path: &str) -> (StatusCode, String, String) {
        self.call(reqwest::Method::POST, path).await
    }

    /// A 2xx JSON answer's status and body.
    async fn get_json(&self, path: &str) -> (StatusCode, Value) {
        let (status, content_type, body) = self.get(path).await;
        assert_eq!(content_type, "application/json", "{path}: {body}");
        (status, serde_json::from_str(&body).expect("JSON"))
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a reqwest client")
}

fn set(names: &[&str]) -> std::collections::BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[tokio::test]
async fn plans_list_and_a_complete_deploy_plan_answers_200_in_plan_info_shape() {
    let admin = Admin::start("").await;
    let (status, plans) = admin.get_json("/plans").await;
    assert_eq!(
        (status, plans),
        (StatusCode::OK, json!(["deploy", "recovery"]))
    );

    let (status, plan) = admin.get_json("/plans/deploy").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        keys(&plan),
        set(&["phases", "errors", "strategy", "status"])
    );
    assert_eq!(plan["status"], "COMPLETE");
    assert_eq!(plan["strategy"], "serial");
    assert_eq!(plan["errors"], json!([]));
    let phase = &plan["phases"][0];
    assert_eq!(
        keys(phase),
        set(&["id", "name", "steps", "strategy", "status"])
    );
    assert_eq!(phase["name"], "hello");
    let step = &phase["steps"][0];
    assert_eq!(keys(step), set(&["id", "status", "name", "message"]));
    assert_eq!(step["name"], "hello-0:[server]");
    assert_eq!(step["status"], "COMPLETE");
    let id = step["id"].as_str().expect("an id");
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
    assert!(
        step["message"]
            .as_str()
            .is_some_and(|m| m.ends_with(&format!("hello-0:[server] [{id}] with status: COMPLETE"))),
        "{step}"
    );

    let (status, recovery) = admin.get_json("/plans/recovery").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(recovery["strategy"], "parallel");
    assert_eq!(recovery["phases"], json!([]));

    let (status, content_type, body) = admin.get("/plans/update").await;
    assert_eq!(
        (status, content_type.as_str(), body.as_str()),
        (StatusCode::NOT_FOUND, "text/plain", "Plan update not found")
    );
}

#[tokio::test]
async fn a_deploy_in_progress_answers_202_and_one_with_errors_417() {
    let admin = Admin::start("deploy_s = 60").await;
    let (status, plan) = admin.get_json("/plans/deploy").await;
    assert_eq!(
        (status, plan["status"].as_str()),
        (StatusCode::ACCEPTED, Some("STARTING"))
    );
    admin.advance(60_000);
    assert_eq!(admin.get_json("/plans/deploy").await.0, StatusCode::OK);

    let admin = Admin::start(r#"deploy_errors = ["Field 'count' cannot decrease"]"#).await;
    let (status, plan) = admin.get_json("/plans/deploy").await;
    assert_eq!(status, StatusCode::EXPECTATION_FAILED);
    assert_eq!(plan["status"], "ERROR");
    assert_eq!(plan["errors"], json!(["Field 'count' cannot decrease"]));
}

#[tokio::test]
async fn interrupt_and_continue_answer_200_once_and_208_when_nothing_changes() {
    let admin = Admin::start("deploy_s = 60").await;
    let already = (
        StatusCode::ALREADY_REPORTED,
        "text/plain".to_string(),
        "Command has already been reported or completed".to_string(),
    );
    assert_eq!(
        admin.post("/plans/deploy/continue").await,
        already,
        "running"
    );
    let (status, content_type, body) = admin.post("/plans/deploy/interrupt").await;
    assert_eq!(
        (status, content_type.as_str()),
        (StatusCode::OK, "application/json")
    );
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("JSON"),
        json!({"message": "Received cmd: interrupt"})
    );
    assert_eq!(admin.post("/plans/deploy/interrupt").await, already);
    let (status, plan) = admin.get_json("/plans/deploy").await;
    assert_eq!(
        (status, plan["status"].as_str()),
        (StatusCode::ACCEPTED, Some("WAITING"))
    );
    let (status, _, body) = admin.post("/plans/deploy/continue").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("JSON"),
        json!({"message": "Received cmd: continue"})
    );
    // The recovery plan is complete: nothing to interrupt.
    assert_eq!(admin.post("/plans/recovery/interrupt").await, already);
    assert_eq!(
        admin.post("/plans/nope/interrupt").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        admin.get("/plans/deploy/interrupt").await.0,
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[tokio::test]
async fn pods_are_listed_with_their_tasks_statuses_and_infos() {
    let admin = Admin::start("").await;
    let (status, pods) = admin.get_json("/pod").await;
    assert_eq!(
        (status, pods),
        (StatusCode::OK, json!(["hello-0", "hello-1"]))
    );

    let (status, all) = admin.get_json("/pod/status").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(keys(&all), set(&["service", "pods"]));
    assert_eq!(all["service"], "hello-world");
    assert_eq!(all["pods"][0]["name"], "hello");
    let instance = &all["pods"][0]["instances"][0];
    assert_eq!(keys(instance), set(&["name", "tasks"]));
    assert_eq!(instance["name"], "hello-0");
    let task = &instance["tasks"][0];
    assert_eq!(keys(task), set(&["id", "name", "status"]));
    assert_eq!(task["name"], "hello-0-server");
    assert_eq!(task["status"], "RUNNING");
    let task_id = task["id"].as_str().expect("an id").to_string();
    assert!(task_id.starts_with("hello-0-server__"), "{task_id}");

    let (status, one) = admin.get_json("/pod/hello-0/status").await;
    assert_eq!((status, &one), (StatusCode::OK, instance));

    let (status, info) = admin.get_json("/pod/hello-0/info").await;
    assert_eq!(status, StatusCode::OK);
    let entry = &info[0];
    assert_eq!(keys(entry), set(&["info", "status"]));
    assert_eq!(entry["info"]["name"], "hello-0-server");
    assert_eq!(entry["info"]["taskId"]["value"], task_id.as_str());
    let agent = entry["info"]["slaveId"]["value"]
        .as_str()
        .expect("an agent");
    let truth = admin.servers.world.with(|w| w.pods());
    assert_eq!(truth[0].agent_id.as_deref(), Some(agent));
    assert_eq!(entry["status"]["state"], "TASK_RUNNING");
    assert_eq!(entry["status"]["taskId"]["value"], task_id.as_str());
    assert_eq!(entry["status"]["slaveId"]["value"], agent);

    for path in ["/pod/hello-9/status", "/pod/hello-9/info"] {
        let (status, content_type, body) = admin.get(path).await;
        assert_eq!(
            (status, content_type.as_str(), body.as_str()),
            (StatusCode::NOT_FOUND, "text/plain", "Pod hello-9 not found"),
            "{path}"
        );
    }
    assert_eq!(
        admin.post("/pod/hello-9/replace").await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_replaced_pod_reads_complete_until_its_kill_is_over_then_recovers_elsewhere() {
    let admin = Admin::start("").await;
    let before = admin.servers.world.with(|w| w.pods())[0].clone();
    let (status, _, body) = admin.post("/pod/hello-0/replace").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        serde_json::from_str::<Value>(&body).expect("JSON"),
        json!({"pod": "hello-0", "tasks": ["hello-0-server"]})
    );
    // Right after the POST the recovery plan still reads COMPLETE: a
    // client must also look at where the pod's tasks run.
    let (status, plan) = admin.get_json("/plans/recovery").await;
    assert_eq!(
        (status, plan["status"].as_str()),
        (StatusCode::OK, Some("COMPLETE"))
    );
    let (_, pod) = admin.get_json("/pod/hello-0/status").await;
    assert_eq!(pod["tasks"][0]["status"], "KILLING");

    admin.advance(5_000);
    let (status, plan) = admin.get_json("/plans/recovery").await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(plan["status"], "PENDING");
    let phase = &plan["phases"][0];
    assert_eq!(phase["name"], "hello-0:[server]");
    assert_eq!(phase["strategy"], "serial");
    assert_eq!(phase["steps"][0]["name"], "hello-0:[server]");
    assert_eq!(phase["steps"][0]["status"], "PENDING");
    let (_, pod) = admin.get_json("/pod/hello-0/status").await;
    assert_eq!(pod["tasks"][0]["status"], "KILLED");
    assert_eq!(pod["tasks"][0]["id"], before.task_ids[0].as_str());

    // An offer accepted: new task ids, no status yet (the key left out of
    // the status, `null` in the info).
    admin.advance(1_000);
    let (status, plan) = admin.get_json("/plans/recovery").await;
    assert_eq!(
        (status, plan["phases"][0]["steps"][0]["status"].as_str()),
        (StatusCode::ACCEPTED, Some("PREPARED"))
    );
    let (_, pod) = admin.get_json("/pod/hello-0/status").await;
    assert_eq!(keys(&pod["tasks"][0]), set(&["id", "name"]));
    assert_ne!(pod["tasks"][0]["id"], before.task_ids[0].as_str());
    let (_, info) = admin.get_json("/pod/hello-0/info").await;
    assert_eq!(info[0]["status"], Value::Null);

    admin.advance(2_000);
    let (_, plan) = admin.get_json("/plans/recovery").await;
    assert_eq!(plan["phases"][0]["steps"][0]["status"], "STARTING");
    admin.advance(10_000);
    let (status, plan) = admin.get_json("/plans/recovery").await;
    assert_eq!(
        (status, plan["status"].as_str()),
        (StatusCode::OK, Some("COMPLETE"))
    );
    assert_eq!(
        plan["phases"][0]["status"], "COMPLETE",
        "kept until the next recovery"
    );
    let (_, pod) = admin.get_json("/pod/hello-0/status").await;
    assert_eq!(pod["tasks"][0]["status"], "RUNNING");
}

#[tokio::test]
async fn the_router_answers_404_for_an_unknown_service_and_502_while_its_scheduler_is_down() {
    let admin = Admin::start("").await;
    let other = format!("{}/service/kafka/v1/plans", admin.servers.urls[0]);
    let (status, content_type, body) = admin.get(&other).await;
    assert_eq!(
        (status, content_type.as_str()),
        (StatusCode::NOT_FOUND, "text/html")
    );
    assert!(body.contains("404 Not Found"), "{body}");

    admin.servers.world.with(|w| {
        w.update_app_instances("/hello-world", 0, true)
            .expect("an app")
    });
    admin.advance(10_000);
    let (status, content_type, body) = admin.get("/plans/deploy").await;
    assert_eq!(
        (status, content_type.as_str()),
        (StatusCode::BAD_GATEWAY, "text/html")
    );
    assert!(body.contains("502 Bad Gateway"), "{body}");
    assert_eq!(
        admin.post("/pod/hello-0/replace").await.0,
        StatusCode::BAD_GATEWAY
    );

    admin.servers.world.with(|w| {
        w.update_app_instances("/hello-world", 1, true)
            .expect("an app")
    });
    admin.advance(60_000);
    assert_eq!(admin.get_json("/plans/deploy").await.0, StatusCode::OK);
}

#[tokio::test]
async fn the_simulator_serves_the_dcos_scenarios_services_at_its_dcos_url() {
    let scenario = Scenario::load("dcos").expect("built in");
    let sim = Simulator::start(&scenario, SimOptions::default())
        .await
        .expect("serves");
    let url = &sim.endpoints().dcos_url;
    for (service, pods) in [
        ("hello-world", json!(["hello-0", "hello-1", "hello-2"])),
        (
            "kafka",
            json!(["kafka-0", "kafka-1", "kafka-2", "kafka-3", "kafka-4"]),
        ),
    ] {
        let answer = client()
            .get(format!("{url}/service/{service}/v1/pod"))
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), StatusCode::OK, "{service}");
        assert_eq!(answer.json::<Value>().await.expect("JSON"), pods);
    }
    let truth = sim.world().with(|w| w.pods());
    assert_eq!(truth.len(), 8);
    assert!(truth.iter().all(|p| p.running()), "{truth:?}");
    sim.shutdown().await;
}
