//! `GET /v2/events` as Marathon's servlet serves it, and the adapter that
//! keeps `/v2/apps` while the stream is quiet.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::*;

/// How long a test waits for something the stream must bring.
const PATIENCE: Duration = Duration::from_secs(10);

/// A raw stream of the leader (`index` 0), read frame by frame.
struct RawStream {
    response: reqwest::Response,
    text: String,
}

impl RawStream {
    async fn open(marathons: &Marathons, query: &str) -> RawStream {
        let response = reqwest::Client::new()
            .get(format!("{}/v2/events{query}", marathons.urls[0]))
            .header("Accept", "text/event-stream")
            .send()
            .await
            .expect("an answer");
        assert_eq!(response.status(), 200);
        RawStream {
            response,
            text: String::new(),
        }
    }

    /// Reads until `done` holds for what was read, or the stream ends
    /// (false then).
    async fn until(&mut self, done: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + PATIENCE;
        while !done(&self.text) {
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.text.push_str(&String::from_utf8_lossy(&chunk)),
                _ => return false,
            }
        }
        true
    }

    /// The (type, data) of each complete event read so far.
    fn events(&self) -> Vec<(String, Value)> {
        self.text
            .split("\r\n\r\n")
            .filter_map(|frame| {
                let frame = frame.trim_start_matches("\r\n");
                let event = frame.strip_prefix("event: ")?;
                let (name, data) = event.split_once("\r\ndata: ")?;
                let data = serde_json::from_str(data).ok()?;
                Some((name.to_string(), data))
            })
            .collect()
    }
}

#[tokio::test]
async fn the_stream_opens_with_its_own_attach_and_carries_a_scale_as_marathon_writes_it() {
    let marathons = Marathons::start(1.0).await;
    let mut stream = RawStream::open(&marathons, "").await;
    assert!(
        stream
            .until(|t| t.contains("event: event_stream_attached"))
            .await
    );
    assert!(
        stream
            .text
            .starts_with("event: event_stream_attached\r\ndata: {"),
        "the first frame is the stream's own attach, CRLF-ended: {:?}",
        stream.text
    );
    let app = marathons.world.with(|w| w.apps(false))[0].id.clone();
    let instances = marathons.world.with(|w| w.apps(false))[0].instances;
    let client = marathons.client();
    client.scale_app(&app, instances + 1).await.expect("scaled");
    assert!(
        stream
            .until(|t| t.contains("TASK_STAGING") && t.contains("event: instance_changed_event"))
            .await,
        "the new task's status update comes: {}",
        stream.text
    );
    let events = stream.events();
    let types: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
    for expected in ["api_post_event", "deployment_info", "status_update_event"] {
        assert!(types.contains(&expected), "{expected} in {types:?}");
    }
    for (event_type, data) in &events {
        assert_eq!(data["eventType"], event_type.as_str(), "{data}");
        assert!(data["timestamp"].is_string(), "{data}");
    }
    let (_, staging) = events
        .iter()
        .find(|(t, d)| t == "status_update_event" && d["taskStatus"] == "TASK_STAGING")
        .expect("a staging update");
    assert_eq!(staging["appId"], app.as_str());
    for key in ["slaveId", "taskId", "host", "ports", "version", "message"] {
        assert!(staging.get(key).is_some(), "{key} in {staging}");
    }
    let (_, info) = events
        .iter()
        .find(|(t, _)| t == "deployment_info")
        .expect("deployment_info");
    assert_eq!(info["plan"]["steps"][0]["actions"][0]["app"], app.as_str());
    assert!(
        info["plan"]["original"].is_object() && info["plan"]["target"].is_object(),
        "heavy plans by default: {info}"
    );
}

#[tokio::test]
async fn a_light_stream_of_chosen_types_leaves_out_the_rest_and_the_root_group() {
    let marathons = Marathons::start(1.0).await;
    let mut stream = RawStream::open(
        &marathons,
        "?plan-format=light&event_type=deployment_info&event_type=api_post_event",
    )
    .await;
    let app = marathons.world.with(|w| w.apps(false))[0].clone();
    marathons
        .client()
        .scale_app(&app.id, app.instances + 1)
        .await
        .expect("scaled");
    assert!(stream.until(|t| t.contains("event: deployment_info")).await);
    let events = stream.events();
    assert!(
        events
            .iter()
            .all(|(t, _)| t == "deployment_info" || t == "api_post_event"),
        "{events:?}"
    );
    let (_, info) = &events
        .iter()
        .find(|(t, _)| t == "deployment_info")
        .expect("info");
    assert!(info["plan"].get("original").is_none(), "{info}");
    assert!(info["plan"].get("target").is_none(), "{info}");
}

#[tokio::test]
async fn without_the_event_stream_accept_it_is_a_405_and_a_standby_redirects_to_the_leader() {
    let marathons = Marathons::start(1.0).await;
    let plain = marathons.get(0, "/v2/events").await;
    assert_eq!(plain.status(), 405);
    let standby = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .get(format!("{}/v2/events?plan-format=light", marathons.urls[1]))
        .header("Accept", "text/event-stream")
        .send()
        .await
        .expect("an answer");
    assert_eq!(standby.status(), 302);
    assert_eq!(
        standby.headers()["location"],
        format!("{}/v2/events?plan-format=light", marathons.urls[0]).as_str()
    );
}

#[tokio::test]
async fn the_leaders_streams_end_when_it_stops_leading() {
    let marathons = Marathons::start(1.0).await;
    let mut stream = RawStream::open(&marathons, "").await;
    assert!(stream.until(|t| t.contains("attached")).await);
    marathons.peers.set_leader(1);
    assert!(
        !stream.until(|_| false).await,
        "the stream ended (rather than the wait running out)"
    );
    let attached = marathons.world.with(|w| w.marathon_event_seq());
    marathons.world.with(|w| w.advance_by_ms(1_000));
    assert_eq!(
        marathons.world.with(|w| w.marathon_event_seq()),
        attached,
        "nothing is kept once no stream listens"
    );
}

/// How many `GET /v2/apps` the Marathons answered.
fn apps_reads(marathons: &Marathons) -> u64 {
    marathons.world.with(|w| {
        w.report()
            .api_calls
            .get("marathon:GET /v2/apps")
            .copied()
            .unwrap_or(0)
    })
}

/// Calls `apps` until the adapter answers without reading (its stream
/// subscribed and quiet), at most `PATIENCE`.
async fn until_kept(marathons: &Marathons, client: &MarathonClient) -> Arc<Vec<App>> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let before = apps_reads(marathons);
        let apps = client.apps().await.expect("apps");
        if apps_reads(marathons) == before {
            return apps;
        }
        assert!(Instant::now() < deadline, "the stream never went quiet");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

use crate::roll::ports::marathon::App;

#[tokio::test]
async fn a_quiet_stream_keeps_the_apps_and_any_change_reads_them_again() {
    // Time stands still in the world unless a test moves it.
    let marathons = Marathons::start(1e-9).await;
    let client = marathons.client().with_event_stream();
    let kept = until_kept(&marathons, &client).await;
    let reads = apps_reads(&marathons);
    for _ in 0..5 {
        assert_eq!(client.apps().await.expect("apps"), kept);
    }
    assert_eq!(apps_reads(&marathons), reads, "quiet: nothing read");

    // A task ends in the world (not through this client): the stream
    // says so, and the next look reads the change.
    let task = kept[0].tasks[0].id.clone();
    marathons
        .world
        .with(|w| w.kill_tasks(std::slice::from_ref(&task), false));
    let deadline = Instant::now() + PATIENCE;
    loop {
        let apps = client.apps().await.expect("apps");
        let state = apps[0]
            .tasks
            .iter()
            .find(|t| t.id == task)
            .and_then(|t| t.state.clone());
        if state.as_deref() == Some("TASK_KILLING") {
            break;
        }
        assert!(Instant::now() < deadline, "the kill never showed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(apps_reads(&marathons) > reads);

    // A write through the client reads again at once.
    let kept = until_kept(&marathons, &client).await;
    let reads = apps_reads(&marathons);
    client
        .scale_app(&kept[1].id, kept[1].instances + 1)
        .await
        .expect("scaled");
    let apps = client.apps().await.expect("apps");
    assert_eq!(apps_reads(&marathons), reads + 1);
    assert_eq!(apps[1].instances, kept[1].instances + 1);
}

#[tokio::test]
async fn after_a_leader_change_the_stream_follows_the_redirect_and_nothing_older_is_kept() {
    let marathons = Marathons::start(1e-9).await;
    let client = marathons.client().with_event_stream();
    until_kept(&marathons, &client).await;
    marathons.peers.set_leader(2);
    // The old leader's stream ends (within its look at its leadership):
    // from then its quiet is not trusted, and the adapter reads until a
    // new stream, through peer 0's redirect, is subscribed.
    let reads = apps_reads(&marathons);
    let deadline = Instant::now() + PATIENCE;
    while apps_reads(&marathons) == reads {
        assert!(
            Instant::now() < deadline,
            "the old stream's quiet was trusted"
        );
        client.apps().await.expect("apps");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    until_kept(&marathons, &client).await;
    let streams = marathons.world.with(|w| {
        w.report()
            .api_calls
            .get("marathon:GET /v2/events")
            .copied()
            .unwrap_or(0)
    });
    assert!(streams >= 2, "connected again: {streams}");
}
