//! The adapter against a loopback server answering as dcos-commons does
//! (bodies from its CLI's recorded responses and from `PodQueries`).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::ServicesClient;
use crate::http::{HttpAuth, HttpSettings, Secret};
use crate::roll::ports::services::{ServiceError, Services};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).expect("fixture exists")
}

const POD_STATUS: &str = r#"{"service":"kafka","pods":[{"name":"kafka","instances":[
  {"name":"kafka-0","tasks":[{"id":"kafka-0-broker__6ad4b0c5","name":"kafka-0-broker","status":"RUNNING"}]},
  {"name":"kafka-1","tasks":[{"id":"","name":"kafka-1-broker"}]}]}]}"#;

const POD_INFO: &str = r#"[{"info":{"name":"kafka-0-broker","taskId":{"value":"kafka-0-broker__6ad4b0c5"},
  "slaveId":{"value":"a1-S3"},"resources":[],"labels":{"labels":[]}},
  "status":{"taskId":{"value":"kafka-0-broker__6ad4b0c5"},"state":"TASK_RUNNING",
  "slaveId":{"value":"a1-S3"},"timestamp":1.5E9}}]"#;

/// Every request seen: method, path, Authorization header.
type Seen = Arc<Mutex<Vec<(String, String, Option<String>)>>>;

async fn answer(State(seen): State<Seen>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    let auth = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    seen.lock()
        .unwrap()
        .push((request.method().to_string(), path.clone(), auth));
    let json = |status: StatusCode, body: String| {
        (status, [("content-type", "application/json")], body).into_response()
    };
    let tail = path
        .strip_prefix("/service/kafka/")
        .or_else(|| path.strip_prefix("/direct/"));
    match tail {
        Some("v1/plans/deploy") => json(
            StatusCode::ACCEPTED,
            fixture("dcos-commons-v1-plans-plan-cli-testdata.json"),
        ),
        Some("v1/plans/recovery") => json(
            StatusCode::EXPECTATION_FAILED,
            r#"{"phases":[{"id":"x","name":"kafka-0:[broker]","steps":[{"id":"y","status":"ERROR","name":"kafka-0:[broker]","message":"failed"}],"status":"ERROR","strategy":"parallel"}],"errors":["kafka-0 failed"],"status":"ERROR","strategy":"parallel"}"#
                .to_string(),
        ),
        Some("v1/pod/status") => json(StatusCode::OK, POD_STATUS.to_string()),
        Some("v1/pod/kafka-0/info") => json(StatusCode::OK, POD_INFO.to_string()),
        Some("v1/pod/kafka-0/replace") => json(
            StatusCode::OK,
            r#"{"pod":"kafka-0","tasks":["kafka-0-broker"]}"#.to_string(),
        ),
        Some(p) if p.starts_with("v1/pod/") => {
            (StatusCode::NOT_FOUND, "Pod kafka-9 not found").into_response()
        }
        _ => (StatusCode::BAD_GATEWAY, "<html>502 Bad Gateway</html>").into_response(),
    }
}

async fn serve() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new().fallback(answer).with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, seen)
}

fn client(dcos_url: Option<&str>, listed: &[(&str, &str)], auth: HttpAuth) -> ServicesClient {
    let listed: Vec<(String, String)> = listed
        .iter()
        .map(|(n, u)| (n.to_string(), u.to_string()))
        .collect();
    let settings = HttpSettings {
        auth,
        ..HttpSettings::default()
    };
    ServicesClient::new(dcos_url, &listed, &settings).expect("a client")
}

#[tokio::test]
async fn plans_are_read_through_the_admin_router_whatever_their_status_code() {
    let (url, seen) = serve().await;
    let token = HttpAuth::DcosToken(Secret::new("abc.def"));
    let services = client(Some(&url), &[], token);

    let deploy = services.plan("kafka", "deploy").await.unwrap();
    assert_eq!(deploy.status, "IN_PROGRESS");
    assert_eq!(deploy.strategy, "serial");
    assert_eq!(deploy.phases[0].name, "Deployment");
    assert_eq!(deploy.phases[0].steps[1].name, "kafka-1:[broker]");
    assert_eq!(deploy.phases[0].steps[1].status, "IN_PROGRESS");
    assert!(!deploy.is_complete() && !deploy.has_errors());

    let recovery = services.plan("kafka", "recovery").await.unwrap();
    assert!(recovery.has_errors());
    assert_eq!(recovery.errors, vec!["kafka-0 failed".to_string()]);

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0].1, "/service/kafka/v1/plans/deploy");
    assert_eq!(seen[0].2.as_deref(), Some("token=abc.def"));
}

#[tokio::test]
async fn pods_their_tasks_and_agents_are_read_from_status_and_info() {
    let (url, _) = serve().await;
    let services = client(Some(&format!("{url}/")), &[], HttpAuth::None);

    let pods = services.pods("kafka").await.unwrap();
    assert_eq!(pods.len(), 2);
    assert_eq!(pods[0].name, "kafka-0");
    assert!(pods[0].running());
    assert_eq!(pods[0].tasks[0].id, "kafka-0-broker__6ad4b0c5");
    assert_eq!(
        pods[1].tasks[0].status, None,
        "a task never launched has no status"
    );
    assert!(!pods[1].running());

    let info = services.pod_info("kafka", "kafka-0").await.unwrap();
    assert_eq!(info.len(), 1);
    assert_eq!(info[0].agent_id.as_deref(), Some("a1-S3"));
    assert_eq!(info[0].state.as_deref(), Some("TASK_RUNNING"));
    assert_eq!(info[0].task_id, "kafka-0-broker__6ad4b0c5");
}

#[tokio::test]
async fn a_listed_scheduler_url_wins_over_the_admin_router() {
    let (url, seen) = serve().await;
    let direct = format!("{url}/direct");
    let services = client(
        Some("http://127.0.0.1:9/"),
        &[("kafka", &direct)],
        HttpAuth::None,
    );

    services.replace_pod("kafka", "kafka-0").await.unwrap();

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, "POST");
    assert_eq!(seen[0].1, "/direct/v1/pod/kafka-0/replace");
}

#[tokio::test]
async fn refusals_and_unreachable_services_are_told_apart() {
    let (url, _) = serve().await;
    let services = client(Some(&url), &[], HttpAuth::None);

    let unknown = services.replace_pod("kafka", "kafka-9").await.unwrap_err();
    assert!(
        matches!(&unknown, ServiceError::Status { status: 404, body, .. } if body.contains("Pod kafka-9 not found")),
        "{unknown:?}"
    );
    assert!(!unknown.is_transient());

    let gateway = services.plan("zookeeper", "deploy").await.unwrap_err();
    assert!(
        matches!(gateway, ServiceError::Status { status: 502, .. }),
        "{gateway:?}"
    );
    assert!(gateway.is_transient());

    let closed = client(Some("http://127.0.0.1:9"), &[], HttpAuth::None);
    let err = closed.pods("kafka").await.unwrap_err();
    assert!(matches!(err, ServiceError::Unreachable { .. }), "{err:?}");
    assert!(err.is_transient());
}

#[tokio::test]
async fn without_dcos_url_only_listed_services_have_a_route() {
    let services = client(None, &[("kafka", "http://127.0.0.1:9")], HttpAuth::None);
    assert!(services.reachable("kafka"));
    assert!(!services.reachable("cassandra"));
    let err = services.plan("cassandra", "deploy").await.unwrap_err();
    assert!(matches!(err, ServiceError::NoRoute { .. }), "{err:?}");
    assert!(err.to_string().contains("[[service]]"), "{err}");
}

#[test]
fn a_bad_url_is_refused_naming_what_it_is_for() {
    let settings = HttpSettings::default();
    let err = ServicesClient::new(Some("ftp://x"), &[], &settings).unwrap_err();
    assert!(err.to_string().contains("dcos_url"), "{err}");
    let listed = vec![("kafka".to_string(), "not a url".to_string())];
    let err = ServicesClient::new(None, &listed, &settings).unwrap_err();
    assert!(err.to_string().contains("service kafka"), "{err}");
}

/// The admin router's 502 page is said by its title, on one line: a step
/// message or a log line never carries a page of HTML.
#[test]
fn an_html_refusal_is_said_by_its_title_and_any_other_body_on_one_line() {
    let page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n\
                <center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>openresty</center>\r\n\
                </body>\r\n</html>\r\n";
    assert_eq!(
        super::client::said(page),
        "an HTML page, \"502 Bad Gateway\""
    );
    assert_eq!(
        super::client::said("<html><body>x</body></html>"),
        "an HTML page"
    );
    assert_eq!(
        super::client::said("Pod kafka-9\n not found"),
        "Pod kafka-9 not found"
    );
    assert_eq!(super::client::said("  "), "(no body)");
    let long = "x".repeat(400);
    assert_eq!(super::client::said(&long).chars().count(), 301);
}
