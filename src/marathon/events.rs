//! Marathon's event stream (`GET /v2/events`), followed only to know when
//! `/v2/apps` may have changed: Marathon's own advice is to use the stream
//! as a cache invalidation, not to rebuild its state from it (its events
//! are not ordered). While a stream is subscribed and no event has come
//! since the last full read, that read still holds, and the tick that
//! would read 17,600 tasks again (a third of a tick's CPU at 2,000 agents)
//! keeps it instead.
//!
//! What makes the quiet trustworthy:
//! - A connection counts only once it has delivered its first event:
//!   Marathon's stream subscribes to the bus before it publishes its own
//!   `event_stream_attached`, so any event proves the subscription. Every
//!   event but another stream's attach or detach counts as a change.
//! - Marathon's servlet (Jetty's `EventSourceServlet`) sends a bare line
//!   every 10 s; a stream silent for `SILENCE` is taken for dead and
//!   dropped, and no quiet is trusted from it meanwhile.
//! - A standby redirects to the leader (followed once, to a configured
//!   URL only, so credentials go nowhere else); a Marathon that stops
//!   leading closes its streams. Any end drops the subscription until the
//!   next connection's first event, and it is tried again after a pause.
//!
//! The stream asks `plan-format=light` (deployment events without the
//! root group before and after; the only format from Marathon 1.7 on),
//! and reads no event's data: only the names and where each ends.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{ACCEPT, LOCATION};
use reqwest::{StatusCode, Url};
use tokio::time::Instant;

use crate::http::HttpAuth;
use crate::metrics::System;

#[cfg(test)]
mod tests;

/// How long a stream may stay silent, heartbeats included, before it is
/// taken for dead: two and a half of Jetty's 10 s heartbeats.
pub(crate) const SILENCE: Duration = Duration::from_millis(25_000);

/// How long one connection is kept before it is opened again (the HTTP
/// client's timeouts cover a whole request; a stream is one long request).
const CONNECTION_LIFETIME: Duration = Duration::from_secs(600);

/// The pause before connecting again: doubled after each connection that
/// brought no event, up to `RETRY_MAX`.
const RETRY_MIN: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);

/// The events that say nothing about apps: streams coming and going.
const NOT_CHANGES: [&str; 2] = ["event_stream_attached", "event_stream_detached"];

/// Where the stream stood at a moment: which subscribed connection, and
/// how many changes it had brought. Two equal marks mean no change was
/// heard between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    connection: u64,
    changes: u64,
}

#[derive(Debug, Default)]
struct Heard {
    /// Connections opened so far.
    connections: u64,
    /// The subscribed connection (its number), if one is.
    subscribed: Option<u64>,
    /// Changes heard, across connections.
    changes: u64,
    /// When the subscribed connection last sent anything.
    last: Option<Instant>,
}

/// A followed event stream; following ends when this is dropped.
#[derive(Debug)]
pub(crate) struct EventWatch {
    heard: Arc<Mutex<Heard>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for EventWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the follower needs to connect: the client's, shared.
pub(crate) struct Connect {
    pub(crate) http: reqwest::Client,
    pub(crate) auth: HttpAuth,
    /// Each Marathon's stream URL (`…/v2/events?plan-format=light`), in
    /// the order of the client's URLs.
    pub(crate) streams: Vec<Url>,
    /// The base to try first (the client's: the leader when known).
    pub(crate) preferred: Arc<AtomicUsize>,
}

impl EventWatch {
    /// Starts following (inside a tokio runtime).
    pub(crate) fn start(connect: Connect) -> EventWatch {
        let heard = Arc::new(Mutex::new(Heard::default()));
        let task = tokio::spawn(follow(connect, heard.clone()));
        EventWatch { heard, task }
    }

    /// Where the stream stands now, if a subscribed stream has been heard
    /// within `SILENCE`; `None` when no quiet can be trusted.
    pub(crate) fn mark(&self) -> Option<Mark> {
        let heard = lock(&self.heard);
        let connection = heard.subscribed?;
        let recent = heard.last.is_some_and(|at| at.elapsed() < SILENCE);
        recent.then_some(Mark {
            connection,
            changes: heard.changes,
        })
    }
}

fn lock(heard: &Mutex<Heard>) -> std::sync::MutexGuard<'_, Heard> {
    heard
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Connects, reads until the stream ends, pauses, and again, for as long
/// as the watch lives.
async fn follow(connect: Connect, heard: Arc<Mutex<Heard>>) {
    let mut pause = RETRY_MIN;
    let mut next = connect.preferred.load(Ordering::Relaxed);
    loop {
        let index = next % connect.streams.len().max(1);
        let brought_events = read_one(&connect, index, &heard).await;
        lock(&heard).subscribed = None;
        if brought_events {
            pause = RETRY_MIN;
            next = connect.preferred.load(Ordering::Relaxed);
        } else {
            pause = (pause * 2).min(RETRY_MAX);
            // The next URL, unless the client has learnt of a leader since.
            let preferred = connect.preferred.load(Ordering::Relaxed);
            next = if preferred == index {
                index + 1
            } else {
                preferred
            };
        }
        tokio::time::sleep(pause).await;
    }
}

/// One connection to base `index`, read to its end. Whether it brought
/// any event.
async fn read_one(connect: &Connect, index: usize, heard: &Mutex<Heard>) -> bool {
    let Some(url) = connect.streams.get(index) else {
        return false;
    };
    let Some(mut response) = open(connect, url.clone()).await else {
        return false;
    };
    if response.status().is_redirection() {
        // A standby names the leader; followed only to one of ours.
        let target = response
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| Url::parse(v).ok())
            .filter(|url| connect.streams.iter().any(|s| same_origin(s, url)));
        let Some(target) = target else {
            return false;
        };
        let Some(again) = open(connect, target).await else {
            return false;
        };
        response = again;
    }
    if response.status() != StatusCode::OK {
        return false;
    }
    let connection = {
        let mut h = lock(heard);
        h.connections += 1;
        h.connections
    };
    let mut parser = SseParser::default();
    let mut brought = false;
    loop {
        let chunk = match tokio::time::timeout(SILENCE, response.chunk()).await {
            Ok(Ok(Some(chunk))) => chunk,
            // The end, an error, or silence past a heartbeat's time.
            _ => return brought,
        };
        let mut h = lock(heard);
        parser.feed(&chunk, |event_type| {
            if h.subscribed != Some(connection) {
                h.subscribed = Some(connection);
                // Nothing heard before this proves quiet since.
                h.changes += 1;
            } else if !NOT_CHANGES.contains(&event_type) {
                h.changes += 1;
            }
            brought = true;
        });
        if h.subscribed == Some(connection) {
            h.last = Some(Instant::now());
        }
    }
}

async fn open(connect: &Connect, url: Url) -> Option<reqwest::Response> {
    crate::metrics::call(System::Marathon);
    let request = connect
        .http
        .get(url)
        .header(ACCEPT, "text/event-stream")
        .timeout(CONNECTION_LIFETIME);
    let sent = connect.auth.apply(request).send().await;
    crate::metrics::answered(
        System::Marathon,
        sent.as_ref().ok().map(|r| r.status().as_u16()),
    );
    sent.ok()
}

/// Whether `a` and `b` reach the same server (scheme, host, port).
pub(super) fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// The server-sent events format (WHATWG HTML, "Parsing an event
/// stream"), as far as telling events apart needs: lines end in CRLF, LF
/// or CR; `event:` names the event; a blank line dispatches it if it had
/// data; a line starting with `:` is a comment. Only each line's start is
/// kept (a field's name is short; an event's data is never read).
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    /// The current line's first bytes.
    line: Vec<u8>,
    /// The last byte was a CR: a LF right after it ends nothing.
    after_cr: bool,
    event_type: String,
    has_data: bool,
}

/// How much of a line is kept: enough for any field name and event type.
const LINE_KEPT: usize = 128;

impl SseParser {
    /// Feeds `bytes`, calling `dispatch` with each complete event's type.
    pub(crate) fn feed(&mut self, bytes: &[u8], mut dispatch: impl FnMut(&str)) {
        for &byte in bytes {
            match byte {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    self.end_line(&mut dispatch);
                }
                _ => {
                    self.after_cr = false;
                    if self.line.len() < LINE_KEPT {
                        self.line.push(byte);
                    }
                }
            }
        }
    }

    fn end_line(&mut self, dispatch: &mut impl FnMut(&str)) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if self.has_data {
                let event_type = if self.event_type.is_empty() {
                    "message"
                } else {
                    &self.event_type
                };
                dispatch(event_type);
            }
            self.event_type.clear();
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        match field {
            b"event" => self.event_type = String::from_utf8_lossy(value).into_owned(),
            b"data" => self.has_data = true,
            _ => {}
        }
    }
}
