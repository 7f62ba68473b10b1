//! The plan API against a checkpoint of a serial roll halfway through
//! `replace` (`fuzz/seeds/checkpoint/serial-1.json`): every operation's
//! status code and body as the SDK's `PlansQueries` gives them, what is
//! queued for the runner, the token, and `/metrics` read by a strict
//! parser of the Prometheus text format.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;

use super::{ApiError, ApiSettings, router};
use crate::http::Secret;
use crate::plan::Status;
use crate::roll::engine::live::Live;
use crate::roll::record::checkpoint::Checkpoint;
use crate::roll::record::env::Timeouts;

fn checkpoint() -> Checkpoint {
    let text = include_str!("../../fuzz/seeds/checkpoint/serial-1.json");
    Checkpoint::parse(std::path::Path::new("c.json"), text).unwrap()
}

fn timeouts() -> Timeouts {
    Timeouts {
        scale_up: Duration::from_secs(1200),
        deregister: Duration::from_secs(600),
        healthy: Duration::from_secs(900),
        task_move: Duration::from_secs(600),
        retry: Duration::from_secs(600),
        operator: Duration::from_secs(3600),
        other_tasks: Duration::from_secs(7200),
        pod_replace: Duration::from_secs(1800),
    }
}

fn live_with(checkpoint: &Checkpoint) -> Arc<Live> {
    let live = Live::new(timeouts());
    live.observe(checkpoint);
    live
}

/// One request through the router, as if from 127.0.0.1:5555.
async fn ask(live: &Arc<Live>, method: Method, uri: &str) -> (StatusCode, Value) {
    let (status, text) = ask_text(live, method, uri).await;
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// `ask`, the body as text.
async fn ask_text(live: &Arc<Live>, method: Method, uri: &str) -> (StatusCode, String) {
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .body(Body::empty())
        .unwrap();
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 5555))));
    let response = router(Arc::clone(live), None)
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test]
async fn every_operation_answers_as_the_sdks_plans_resource_and_only_a_change_is_queued() {
    const ALREADY: &str = "Command has already been reported or completed";
    // (path and query, status, message, queued)
    let table: &[(&str, u16, &str, bool)] = &[
        // The plan is running: continuing it changes nothing.
        ("continue", 208, ALREADY, false),
        ("interrupt", 200, "Received cmd: interrupt", true),
        ("interrupt?phase=prepare", 208, ALREADY, false),
        (
            "interrupt?phase=finish",
            200,
            "Received cmd: interrupt",
            true,
        ),
        ("interrupt?phase=nope", 404, "Phase nope not found", false),
        ("continue?phase=replace", 208, ALREADY, false),
        ("forceComplete?phase=prepare&step=lock", 208, ALREADY, false),
        (
            "forceComplete?phase=finish&step=unlock",
            200,
            "Received cmd: forceComplete for Plan: roll, Phase: finish, Step: unlock",
            true,
        ),
        (
            "forceComplete?phase=finish",
            200,
            "Received cmd: forceComplete for Plan: roll, Phase: finish, Step: null",
            true,
        ),
        ("forceComplete?step=unlock", 400, "Missing phase", false),
        ("restart?step=unlock&phase=", 400, "Missing phase", false),
        (
            "forceComplete?phase=finish&step=nope",
            404,
            "Step nope not found",
            false,
        ),
        ("restart?phase=finish", 208, ALREADY, false),
        (
            "restart?phase=prepare",
            200,
            "Received cmd: restart for Plan: roll, Phase: prepare, Step: null",
            true,
        ),
        ("start?phase=finish", 208, ALREADY, false),
        ("start", 208, ALREADY, false),
        ("stop?phase=finish", 200, "Received cmd: stop", true),
        ("bogus", 404, "Operation bogus not found", false),
    ];
    for (operation, status, message, queued) in table {
        let live = live_with(&checkpoint());
        let uri = format!("/v1/plans/roll/{operation}");
        let (got, body) = ask(&live, Method::POST, &uri).await;
        assert_eq!(got.as_u16(), *status, "{uri}: {body}");
        assert_eq!(body["message"], *message, "{uri}: {body}");
        let taken = live.take_operations();
        assert_eq!(taken.len(), usize::from(*queued), "{uri}: {taken:?}");
        if let Some(op) = taken.first() {
            assert_eq!(op.user, "api 127.0.0.1:5555", "the caller, for the log");
            assert_eq!(body["id"], op.id.as_str(), "{uri}");
        }
    }
}

#[tokio::test]
async fn an_unknown_plan_is_404_for_every_route_and_a_get_of_an_operation_is_405() {
    let live = live_with(&checkpoint());
    for (method, uri) in [
        (Method::GET, "/v1/plans/deploy"),
        (Method::POST, "/v1/plans/deploy/interrupt"),
    ] {
        let (status, body) = ask(&live, method, uri).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
        assert_eq!(body["message"], "Plan deploy not found", "{uri}");
    }
    let (status, _) = ask(&live, Method::GET, "/v1/plans/roll/interrupt").await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let (status, body) = ask(&live, Method::GET, "/v2/apps").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        body["detail"].as_str().unwrap().contains("/metrics"),
        "{body}"
    );
    assert!(live.take_operations().is_empty());
}

#[tokio::test]
async fn a_get_of_the_plan_says_202_while_it_runs_200_complete_417_error_and_503_before_it_exists()
{
    let running = checkpoint();
    let mut complete = checkpoint();
    for phase in &mut complete.plan.phases {
        for step in &mut phase.steps {
            step.status = Status::Complete;
        }
    }
    let mut failed = checkpoint();
    failed.plan.phases[2].steps[2].status = Status::Error;
    for (checkpoint, status, plan_status) in [
        (&running, 202, "IN_PROGRESS"),
        (&complete, 200, "COMPLETE"),
        (&failed, 417, "ERROR"),
    ] {
        let live = live_with(checkpoint);
        let (got, body) = ask(&live, Method::GET, "/v1/plans/roll").await;
        assert_eq!(got.as_u16(), status, "{body}");
        assert_eq!(body["status"], plan_status);
        // The PlanInfo of `roller plan show --json`, exactly.
        let (_, text) = ask_text(&live, Method::GET, "/v1/plans/roll").await;
        let printed =
            serde_json::to_string_pretty(&crate::plan::info(&checkpoint.plan)).unwrap() + "\n";
        assert_eq!(text, printed);
    }
    let empty = Live::new(timeouts());
    let (got, _) = ask(&empty, Method::GET, "/v1/plans/roll").await;
    assert_eq!(got, StatusCode::SERVICE_UNAVAILABLE);
    let (got, _) = ask(&empty, Method::POST, "/v1/plans/roll/interrupt").await;
    assert_eq!(got, StatusCode::SERVICE_UNAVAILABLE);
    let (got, body) = ask(&empty, Method::GET, "/v1/plans").await;
    assert_eq!(got, StatusCode::OK);
    assert_eq!(body, serde_json::json!(["roll"]));
}

#[test]
fn a_non_loopback_address_needs_a_token_and_the_refusal_names_the_variables() {
    let open: SocketAddr = "0.0.0.0:8080".parse().unwrap();
    let err = ApiSettings::new(open, None).unwrap_err();
    assert!(matches!(err, ApiError::OpenWithoutToken { .. }));
    let said = err.to_string();
    assert!(
        said.contains("ROLLER_API_TOKEN") && said.contains("ROLLER_API_TOKEN_FILE"),
        "{said}"
    );
    assert!(ApiSettings::new(open, Some(Secret::new("t"))).is_ok());
    for loopback in ["127.0.0.1:0", "[::1]:0"] {
        assert!(ApiSettings::new(loopback.parse().unwrap(), None).is_ok());
    }
}

/// Serves the router with `token` on a loopback port of this runtime;
/// the server stops when the returned sender is dropped.
async fn serve_on_loopback(
    live: Arc<Live>,
    token: Option<Secret>,
) -> (String, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(super::serve(listener, router(live, token), async move {
        let _ = stopped.await;
    }));
    (url, stop)
}

#[tokio::test]
async fn with_a_token_every_request_needs_it_and_the_log_names_the_callers_address() {
    let live = live_with(&checkpoint());
    let (url, _stop) = serve_on_loopback(Arc::clone(&live), Some(Secret::new("s3cret"))).await;
    let client = reqwest::Client::new();
    for path in ["/v1/plans", "/v1/plans/roll", "/metrics"] {
        for auth in [
            None,
            Some("Bearer wrong"),
            Some("Basic s3cret"),
            Some("s3cret"),
        ] {
            let mut request = client.get(format!("{url}{path}"));
            if let Some(auth) = auth {
                request = request.header("authorization", auth);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 401, "{path} with {auth:?}");
            let body = response.text().await.unwrap();
            assert!(
                !body.contains("s3cret"),
                "the token is never echoed: {body}"
            );
        }
        let response = client
            .get(format!("{url}{path}"))
            .bearer_auth("s3cret")
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "{path}: {}",
            response.status()
        );
    }
    let refused = client
        .post(format!("{url}/v1/plans/roll/interrupt"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert!(
        live.take_operations().is_empty(),
        "a refused call queues nothing"
    );
    let accepted = client
        .post(format!("{url}/v1/plans/roll/interrupt"))
        .bearer_auth("s3cret")
        .header(super::OPERATOR_HEADER, "alice")
        .send()
        .await
        .unwrap();
    assert_eq!(accepted.status(), 200);
    let taken = live.take_operations();
    assert_eq!(taken.len(), 1);
    let user = &taken[0].user;
    assert!(
        user.starts_with("api 127.0.0.1:") && user.ends_with(" (says alice)"),
        "{user}"
    );
    assert!(!user.contains("s3cret"));
}

/// A strict reading of the Prometheus text format 0.0.4: each family's
/// `# HELP` then `# TYPE` before its samples, every sample
/// `name{label="value",…} value` of a declared family, names `roller_…`.
/// Returns each sample (name with its labels) and its value.
fn parse_exposition(text: &str) -> BTreeMap<String, f64> {
    let mut helped = BTreeSet::new();
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut samples = BTreeMap::new();
    let valid_name = |name: &str| {
        name.starts_with("roller_")
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    };
    assert!(text.ends_with('\n'), "the last line ends with a newline");
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').expect("HELP name text");
            assert!(valid_name(name), "{line}");
            assert!(!help.trim().is_empty(), "{line}");
            assert!(helped.insert(name.to_string()), "HELP twice: {line}");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(helped.contains(name), "TYPE before HELP: {line}");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "{line}"
            );
            assert!(
                types.insert(name.to_string(), kind.to_string()).is_none(),
                "TYPE twice: {line}"
            );
            continue;
        }
        assert!(
            !line.starts_with('#') && !line.is_empty(),
            "stray line: {line:?}"
        );
        let (series, value) = line.rsplit_once(' ').expect("series value");
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value: {line}")),
        };
        let name = match series.split_once('{') {
            None => series,
            Some((name, labels)) => {
                let labels = labels.strip_suffix('}').expect("labels end with }");
                for pair in labels.split(',') {
                    let (label, quoted) = pair.split_once('=').expect("label=value");
                    assert!(
                        !label.is_empty()
                            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                        "{line}"
                    );
                    assert!(
                        quoted.len() >= 2 && quoted.starts_with('"') && quoted.ends_with('"'),
                        "{line}"
                    );
                    assert!(!quoted[1..quoted.len() - 1].contains('"'), "{line}");
                }
                name
            }
        };
        assert!(valid_name(name), "{line}");
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .filter_map(|suffix| name.strip_suffix(suffix))
            .find(|base| types.get(*base).is_some_and(|k| k == "histogram"))
            .unwrap_or(name);
        assert!(
            types.contains_key(family),
            "a sample before its TYPE: {line}"
        );
        let kind = &types[family];
        if kind == "counter" {
            assert!(
                name.ends_with("_total"),
                "a counter is named _total: {line}"
            );
        }
        assert!(
            samples.insert(series.to_string(), value).is_none(),
            "a series twice: {line}"
        );
    }
    samples
}

#[tokio::test]
async fn metrics_parse_as_prometheus_text_and_carry_the_steps_by_status() {
    let checkpoint = checkpoint();
    let live = live_with(&checkpoint);
    live.step_took(Duration::from_secs(42));
    let (url, _stop) = serve_on_loopback(Arc::clone(&live), None).await;
    let response = reqwest::get(format!("{url}/metrics")).await.unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let samples = parse_exposition(&response.text().await.unwrap());

    let steps = |status: &str| samples[&format!("roller_steps{{status=\"{status}\"}}")];
    // serial-1: 6 steps complete, one replacement started, 13 pending.
    assert_eq!(steps("COMPLETE"), 6.0);
    assert_eq!(steps("STARTED"), 1.0);
    assert_eq!(steps("PENDING"), 13.0);
    let all: f64 = Status::STEP_STATUSES
        .iter()
        .map(|s| steps(s.as_str()))
        .sum();
    assert_eq!(all, checkpoint.plan.steps().count() as f64);
    assert_eq!(samples["roller_waits{kind=\"deregistered\"}"], 1.0);
    assert_eq!(
        samples["roller_wait_timeout_seconds{kind=\"healthy\"}"],
        900.0
    );
    assert_eq!(
        samples["roller_step_duration_seconds_bucket{le=\"30\"}"],
        0.0
    );
    assert_eq!(
        samples["roller_step_duration_seconds_bucket{le=\"60\"}"],
        1.0
    );
    assert_eq!(samples["roller_step_duration_seconds_count"], 1.0);
    assert_eq!(samples["roller_step_duration_seconds_sum"], 42.0);
    for system in ["aws", "mesos", "marathon", "pagerduty", "webhook"] {
        assert!(samples.contains_key(&format!("roller_api_calls_total{{system=\"{system}\"}}")));
        assert!(samples.contains_key(&format!("roller_api_errors_total{{system=\"{system}\"}}")));
    }
    for name in [
        "roller_wait_timeouts_total",
        "roller_pages_sent_total",
        "roller_pages_resolved_total",
    ] {
        assert_eq!(samples[name], 0.0, "{name}");
    }
    // The process's own, which other tests of this process bump too.
    for name in [
        "roller_ticks_total",
        "roller_tick_cpu_seconds_total",
        "roller_tick_cpu_seconds_max",
        "roller_checkpoint_writes_total",
        "roller_checkpoint_written_bytes_total",
        "roller_checkpoint_write_bytes_max",
    ] {
        assert!(samples[name] >= 0.0, "{name}");
    }
}

#[test]
fn the_strict_parser_refuses_what_prometheus_would() {
    for bad in [
        "roller_x 1\n",                                                // no TYPE
        "# HELP roller_x h\n# TYPE roller_x gauge\nother_x 1\n",       // not roller_
        "# HELP roller_x h\n# TYPE roller_x gauge\nroller_x{a=b} 1\n", // unquoted
        "# HELP roller_x h\n# TYPE roller_x counter\nroller_x 1\n",    // counter not _total
        "# HELP roller_x h\n# TYPE roller_x gauge\nroller_x one\n",    // not a number
    ] {
        let result = std::panic::catch_unwind(|| parse_exposition(bad));
        assert!(result.is_err(), "accepted: {bad:?}");
    }
}
