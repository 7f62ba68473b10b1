//! The stream's parser, and the follower's trust in a quiet stream.

use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::IntoResponse;

use super::*;

fn types_of(chunks: &[&[u8]]) -> Vec<String> {
    let mut parser = SseParser::default();
    let mut seen = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, |t| seen.push(t.to_string()));
    }
    seen
}

#[test]
fn events_end_at_a_blank_line_whatever_the_line_endings() {
    let text: &[u8] = b"event: a\r\ndata: {}\r\n\r\nevent: b\ndata: 1\n\nevent: c\rdata: 2\r\r";
    assert_eq!(types_of(&[text]), ["a", "b", "c"]);
}

#[test]
fn a_crlf_split_between_chunks_is_one_line_end() {
    // Were the LF a second line end, the blank line would end the event
    // before its data, and `data` would then make a nameless one.
    let seen = types_of(&[b"event: status_update_event\r", b"\ndata: {}\r", b"\n\r\n"]);
    assert_eq!(seen, ["status_update_event"]);
}

#[test]
fn heartbeats_comments_and_events_without_data_dispatch_nothing() {
    let seen = types_of(&[b"\r\n\r\n", b": a comment\r\n\r\n", b"event: x\r\n\r\n"]);
    assert!(seen.is_empty(), "{seen:?}");
    // A nameless event is a `message`; `data` without a space counts.
    assert_eq!(types_of(&[b"data:x\n\n"]), ["message"]);
}

#[test]
fn a_huge_data_line_is_not_kept() {
    let mut parser = SseParser::default();
    let mut seen = Vec::new();
    parser.feed(b"event: deployment_info\r\ndata: ", |t| {
        seen.push(t.to_string())
    });
    let big = vec![b'x'; 4 << 20];
    parser.feed(&big, |t| seen.push(t.to_string()));
    assert!(
        parser.line.capacity() <= 4 * LINE_KEPT,
        "{}",
        parser.line.capacity()
    );
    parser.feed(b"\r\n\r\n", |t| seen.push(t.to_string()));
    assert_eq!(seen, ["deployment_info"]);
}

/// A Marathon whose stream sends `frames`, then stays open and silent.
async fn silent_after(frames: &'static [u8]) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}/", listener.local_addr().expect("address"));
    let app = axum::Router::new().fallback(move || async move {
        let first =
            futures_util::stream::once(
                async move { Ok::<_, Infallible>(Bytes::from_static(frames)) },
            );
        let body = Body::from_stream(first.chain(futures_util::stream::pending()));
        ([("content-type", "text/event-stream")], body).into_response()
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

fn watch(url: &str) -> EventWatch {
    EventWatch::start(Connect {
        http: reqwest::Client::new(),
        auth: HttpAuth::None,
        streams: vec![Url::parse(url).expect("url")],
        preferred: Arc::new(AtomicUsize::new(0)),
    })
}

async fn until_marked(watch: &EventWatch) -> Mark {
    for _ in 0..500 {
        if let Some(mark) = watch.mark() {
            return mark;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the stream never subscribed");
}

use futures_util::StreamExt;

const ATTACHED: &str = "event: event_stream_attached\r\ndata: {}\r\n\r\n";
const DETACHED: &str = "event: event_stream_detached\r\ndata: {}\r\n\r\n";
const UPDATE: &str = "event: status_update_event\r\ndata: {}\r\n\r\n";

#[tokio::test]
async fn other_streams_coming_and_going_are_no_change_and_anything_else_is() {
    let quiet: &'static str = format!("{ATTACHED}{ATTACHED}{DETACHED}").leak();
    let busy: &'static str = format!("{ATTACHED}{UPDATE}{DETACHED}").leak();
    let quiet = until_marked(&watch(&silent_after(quiet.as_bytes()).await)).await;
    let busy = until_marked(&watch(&silent_after(busy.as_bytes()).await)).await;
    assert_eq!(quiet.changes, 1, "the subscription itself only");
    assert_eq!(busy.changes, 2);
}

#[tokio::test]
async fn a_stream_is_trusted_from_its_first_event_until_it_falls_silent() {
    let watch = watch(&silent_after(ATTACHED.as_bytes()).await);
    let mark = until_marked(&watch).await;
    assert_eq!(watch.mark(), Some(mark));
    tokio::time::pause();
    tokio::time::advance(SILENCE + Duration::from_millis(1)).await;
    assert_eq!(
        watch.mark(),
        None,
        "silent past the heartbeats: not trusted"
    );
}

#[tokio::test]
async fn a_stream_that_sends_nothing_is_never_trusted() {
    let url = silent_after(b"\r\n").await;
    let watch = watch(&url);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(watch.mark(), None, "a heartbeat proves no subscription");
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
}

#[tokio::test]
async fn a_standbys_redirect_is_followed_to_a_configured_leader_only() {
    use crate::sim::http::peer_servers::PeerServers;
    let marathons = PeerServers::start(1e-9, crate::sim::http::marathon::router).await;
    let url = |i: usize| {
        Url::parse(&format!(
            "{}/v2/events?plan-format=light",
            marathons.urls[i]
        ))
        .expect("url")
    };
    // The standby first, the leader configured too: followed.
    let both = EventWatch::start(Connect {
        http: no_redirects(),
        auth: HttpAuth::None,
        streams: vec![url(1), url(0)],
        preferred: Arc::new(AtomicUsize::new(0)),
    });
    until_marked(&both).await;
    // The standby alone: the leader is none of ours, and its URL would
    // get the credentials; not followed, so never trusted.
    let alone = EventWatch::start(Connect {
        http: no_redirects(),
        auth: HttpAuth::None,
        streams: vec![url(1)],
        preferred: Arc::new(AtomicUsize::new(0)),
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(alone.mark(), None);
    let asked = marathons.world.with(|w| w.report().api_calls.clone());
    assert!(
        asked.get("marathon:GET /v2/events").copied().unwrap_or(0) >= 3,
        "{asked:?}"
    );
}

/// A Marathon whose stream attaches and then stays quiet, whose
/// `/v2/apps` answers after `read_delay` and counts its reads, and whose
/// scale answers at once.
async fn quiet_marathon(read_delay: Duration) -> (String, Arc<AtomicUsize>) {
    use axum::routing::{get, put};
    let reads = Arc::new(AtomicUsize::new(0));
    let counted = reads.clone();
    let app = axum::Router::new()
        .route(
            "/v2/events",
            get(|| async {
                let first = futures_util::stream::once(async {
                    Ok::<_, Infallible>(Bytes::from_static(ATTACHED.as_bytes()))
                });
                let body = Body::from_stream(first.chain(futures_util::stream::pending()));
                ([("content-type", "text/event-stream")], body).into_response()
            }),
        )
        .route(
            "/v2/apps",
            get(move || {
                let counted = counted.clone();
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(read_delay).await;
                    ([("content-type", "application/json")], r#"{"apps":[]}"#).into_response()
                }
            }),
        )
        .route(
            "/v2/apps/{id}",
            put(|| async {
                (
                    [("content-type", "application/json")],
                    r#"{"version":"2026-12-07T00:00:00.000Z","deploymentId":"d1"}"#,
                )
                    .into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}/", listener.local_addr().expect("address"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, reads)
}

#[tokio::test]
async fn an_answer_asked_for_while_this_client_wrote_is_not_kept() {
    use crate::http::HttpSettings;
    use crate::marathon::MarathonClient;
    use crate::roll::ports::marathon::Marathon;
    let (url, reads) = quiet_marathon(Duration::from_millis(300)).await;
    let client = MarathonClient::new(&[url], &HttpSettings::default())
        .expect("a client")
        .with_event_stream();
    // Until the stream is subscribed and an answer kept.
    for _ in 0..500 {
        let before = reads.load(Ordering::SeqCst);
        client.apps().await.expect("apps");
        if reads.load(Ordering::SeqCst) == before {
            break;
        }
    }
    let before = reads.load(Ordering::SeqCst);
    client.apps().await.expect("apps");
    assert_eq!(reads.load(Ordering::SeqCst), before, "quiet: kept");

    // A scale sent while a read is on its way: the stream stays quiet,
    // yet that answer may predate the scale.
    client.scale_app("/x", 2).await.expect("scaled");
    let (read, scaled) = tokio::join!(client.apps(), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        client.scale_app("/x", 3).await
    });
    read.expect("apps");
    scaled.expect("scaled");
    let before = reads.load(Ordering::SeqCst);
    client.apps().await.expect("apps");
    assert_eq!(
        reads.load(Ordering::SeqCst),
        before + 1,
        "read again after the write"
    );
    client.apps().await.expect("apps");
    assert_eq!(reads.load(Ordering::SeqCst), before + 1, "then kept again");
}
