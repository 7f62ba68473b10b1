//! The pager sinks against a loopback receiver that records what arrives
//! and answers as scripted.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::Value;

use super::*;
use crate::http::Secret;
use crate::retry::Backoff;
use crate::roll::ports::pager::{Page, Pager, PagerError, Severity};

/// Records request bodies and answers with the scripted statuses in turn
/// (the last one repeats).
#[derive(Clone, Default)]
struct Receiver {
    bodies: Arc<Mutex<Vec<Value>>>,
    statuses: Arc<Mutex<Vec<u16>>>,
}

impl Receiver {
    fn answering(statuses: &[u16]) -> Receiver {
        Receiver {
            bodies: Arc::default(),
            statuses: Arc::new(Mutex::new(statuses.to_vec())),
        }
    }

    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }

    /// Serves on 127.0.0.1:0 and returns the URL; the server stops with the
    /// test's runtime.
    async fn serve(&self) -> String {
        async fn record(State(receiver): State<Receiver>, body: String) -> (StatusCode, String) {
            receiver
                .bodies
                .lock()
                .unwrap()
                .push(serde_json::from_str(&body).unwrap_or(Value::Null));
            let mut statuses = receiver.statuses.lock().unwrap();
            let status = if statuses.len() > 1 {
                statuses.remove(0)
            } else {
                statuses[0]
            };
            let reply = r#"{"status":"success","message":"Event processed","dedup_key":"k"}"#;
            (StatusCode::from_u16(status).unwrap(), reply.to_string())
        }
        let app = Router::new()
            .route("/v2/enqueue", post(record))
            .route("/hook", post(record))
            .with_state(self.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{address}")
    }
}

const FAST: Backoff = Backoff {
    initial: Duration::from_millis(1),
    max: Duration::from_millis(5),
    attempts: 4,
};

fn page() -> Page {
    Page {
        dedup_key: "roller/run-42/replace/i-0abc".to_string(),
        summary: "roll of asg agents paused: i-0abc not deregistered after 600 s".to_string(),
        severity: Severity::Error,
        source: "agents".to_string(),
        component: Some("mesos".to_string()),
        group: None,
        class: Some("timeout".to_string()),
        details: BTreeMap::from([(
            "resume_command".to_string(),
            "roller run --env prod.toml".to_string(),
        )]),
    }
}

fn client() -> reqwest::Client {
    crate::http::HttpSettings::default().client().unwrap()
}

#[tokio::test]
async fn a_trigger_sends_an_events_v2_body_with_the_dedup_key() {
    let receiver = Receiver::answering(&[202]);
    let url = format!("{}/v2/enqueue", receiver.serve().await);
    let pagerduty = PagerDuty::new(client(), url, Secret::new("R0UTING-KEY")).with_backoff(FAST);
    pagerduty.trigger(&page()).await.unwrap();
    let bodies = receiver.bodies();
    assert_eq!(bodies.len(), 1);
    let body = &bodies[0];
    assert_eq!(body["routing_key"], "R0UTING-KEY");
    assert_eq!(body["event_action"], "trigger");
    assert_eq!(body["dedup_key"], "roller/run-42/replace/i-0abc");
    assert_eq!(body["payload"]["severity"], "error");
    assert_eq!(body["payload"]["source"], "agents");
    assert_eq!(body["payload"]["class"], "timeout");
    assert_eq!(
        body["payload"]["custom_details"]["resume_command"],
        "roller run --env prod.toml"
    );
    assert!(body["payload"].get("group").is_none());
}

#[tokio::test]
async fn a_resolve_names_the_same_incident_and_carries_no_payload() {
    let receiver = Receiver::answering(&[202]);
    let url = format!("{}/v2/enqueue", receiver.serve().await);
    let pagerduty = PagerDuty::new(client(), url, Secret::new("key")).with_backoff(FAST);
    pagerduty.resolve(&page().dedup_key).await.unwrap();
    let body = &receiver.bodies()[0];
    assert_eq!(body["event_action"], "resolve");
    assert_eq!(body["dedup_key"], "roller/run-42/replace/i-0abc");
    assert!(body.get("payload").is_none());
}

#[tokio::test]
async fn a_rate_limited_event_is_retried_until_accepted() {
    let receiver = Receiver::answering(&[429, 500, 202]);
    let url = format!("{}/v2/enqueue", receiver.serve().await);
    let pagerduty = PagerDuty::new(client(), url, Secret::new("key")).with_backoff(FAST);
    pagerduty.trigger(&page()).await.unwrap();
    assert_eq!(receiver.bodies().len(), 3);
}

#[tokio::test]
async fn an_invalid_event_is_not_retried_and_the_error_hides_the_routing_key() {
    let receiver = Receiver::answering(&[400]);
    let url = format!("{}/v2/enqueue", receiver.serve().await);
    let pagerduty = PagerDuty::new(client(), url, Secret::new("SECRET-KEY")).with_backoff(FAST);
    let err = pagerduty.trigger(&page()).await.unwrap_err();
    assert_eq!(receiver.bodies().len(), 1);
    assert_eq!(err.label(), "pager_refused");
    let shown = format!("{err} {err:?} {pagerduty:?}");
    assert!(shown.contains("HTTP 400"), "{shown}");
    assert!(!shown.contains("SECRET-KEY"), "{shown}");
}

#[tokio::test]
async fn an_unreachable_sink_fails_after_bounded_retries_without_naming_the_url() {
    // Bind then drop: nothing listens on this port any more.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/hook?token=S3CRET",
        listener.local_addr().unwrap()
    );
    drop(listener);
    let webhook = Webhook::new(client(), Secret::new(url)).with_backoff(FAST);
    let err = webhook.trigger(&page()).await.unwrap_err();
    assert_eq!(err.label(), "pager_unreachable");
    assert!(!format!("{err} {err:?} {webhook:?}").contains("S3CRET"));
}

#[tokio::test]
async fn the_webhook_posts_slack_compatible_text_with_the_resume_command() {
    let receiver = Receiver::answering(&[200]);
    let url = format!("{}/hook", receiver.serve().await);
    let webhook = Webhook::new(client(), Secret::new(url)).with_backoff(FAST);
    webhook.trigger(&page()).await.unwrap();
    webhook.resolve(&page().dedup_key).await.unwrap();
    let bodies = receiver.bodies();
    assert_eq!(
        bodies[0]["text"],
        "[ERROR] roll of asg agents paused: i-0abc not deregistered after 600 s\n\
         Resume with: roller run --env prod.toml"
    );
    assert_eq!(bodies[0]["event"], "trigger");
    assert_eq!(bodies[1]["event"], "resolve");
    assert_eq!(bodies[1]["dedup_key"], "roller/run-42/replace/i-0abc");
}

#[tokio::test]
async fn a_webhook_server_error_is_not_retried_since_it_may_have_posted() {
    let receiver = Receiver::answering(&[500, 200]);
    let url = format!("{}/hook", receiver.serve().await);
    let webhook = Webhook::new(client(), Secret::new(url)).with_backoff(FAST);
    assert!(webhook.trigger(&page()).await.is_err());
    assert_eq!(receiver.bodies().len(), 1);
}

#[tokio::test]
async fn every_sink_is_told_even_when_one_fails() {
    let failing = Receiver::answering(&[400]);
    let working = Receiver::answering(&[202]);
    let failing_url = format!("{}/v2/enqueue", failing.serve().await);
    let working_url = format!("{}/hook", working.serve().await);
    let sinks = Sinks(vec![
        Sink::PagerDuty(PagerDuty::new(client(), failing_url, Secret::new("k")).with_backoff(FAST)),
        Sink::Webhook(Webhook::new(client(), Secret::new(working_url)).with_backoff(FAST)),
    ]);
    let err = sinks.trigger(&page()).await.unwrap_err();
    assert_eq!(err.label(), "pager_refused");
    assert_eq!(working.bodies().len(), 1);
}

#[test]
fn a_routing_key_file_is_read_without_its_newline() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("key");
    std::fs::write(&file, "abc123\n").unwrap();
    let lookup = |name: &str| {
        (name == "ROLLER_PAGERDUTY_ROUTING_KEY_FILE").then(|| file.to_str().unwrap().to_string())
    };
    let key = crate::http::secret_from(&lookup, "ROLLER_PAGERDUTY_ROUTING_KEY").unwrap();
    assert_eq!(key.unwrap().expose(), "abc123");
}

#[test]
fn an_error_of_several_sinks_lists_each() {
    let err = PagerError::Several(vec![
        PagerError::Refused {
            sink: "PagerDuty",
            action: "trigger",
            status: 400,
            body: "bad".into(),
        },
        PagerError::Unreachable {
            sink: "the webhook",
            action: "trigger",
            reason: "timed out".into(),
        },
    ]);
    assert_eq!(
        err.to_string(),
        "PagerDuty refused the trigger: HTTP 400: bad; the webhook could not be reached for the trigger: timed out"
    );
}
