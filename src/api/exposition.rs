//! `GET /metrics`: the roll in Prometheus' text exposition format 0.0.4,
//! every metric named `roller_…` with its HELP and TYPE lines. Read from
//! the checkpoint as last saved (steps, waits, pauses, pages), the
//! configured timeouts, the durations of the steps this process
//! completed, and the process's count of requests to each outside system.
//!
//! Every series is written even when it is zero, so a dashboard's query
//! finds it from the first scrape.

use std::fmt::Write;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use super::ApiState;
use crate::metrics;
use crate::plan::Status;
use crate::roll::engine::live::{DURATION_BUCKETS, Live};
use crate::roll::record::checkpoint::{Checkpoint, EventKind};
use crate::roll::record::kinds::WaitKind;

const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

pub(super) async fn metrics(State(state): State<ApiState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], render(&state.live))
}

/// One metric family's HELP and TYPE lines.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// The whole exposition.
pub(crate) fn render(live: &Live) -> String {
    let checkpoint = live.checkpoint();
    let checkpoint = checkpoint.as_deref();
    let mut out = String::new();
    steps(&mut out, checkpoint);
    step_durations(&mut out, live);
    waits(&mut out, checkpoint, live);
    roll_events(&mut out, checkpoint);
    api_calls(&mut out);
    loop_cost(&mut out);
    out
}

/// `roller_steps`: the plan's steps by status.
fn steps(out: &mut String, checkpoint: Option<&Checkpoint>) {
    family(
        out,
        "roller_steps",
        "gauge",
        "Steps of the roll's plan, by status (WAITING: interrupted before it began).",
    );
    for status in Status::STEP_STATUSES {
        let count = checkpoint.map_or(0, |c| {
            c.plan.steps().filter(|(_, s)| s.status() == status).count()
        });
        let _ = writeln!(out, "roller_steps{{status=\"{status}\"}} {count}");
    }
}

/// `roller_step_duration_seconds`: how long the completed steps took.
fn step_durations(out: &mut String, live: &Live) {
    let durations = live.durations();
    family(
        out,
        "roller_step_duration_seconds",
        "histogram",
        "How long the steps this process completed took, in cluster seconds.",
    );
    for (bound, count) in DURATION_BUCKETS.iter().zip(durations.at_most) {
        let _ = writeln!(
            out,
            "roller_step_duration_seconds_bucket{{le=\"{bound}\"}} {count}"
        );
    }
    let _ = writeln!(
        out,
        "roller_step_duration_seconds_bucket{{le=\"+Inf\"}} {}",
        durations.count
    );
    let _ = writeln!(
        out,
        "roller_step_duration_seconds_sum {}",
        durations.sum_seconds
    );
    let _ = writeln!(
        out,
        "roller_step_duration_seconds_count {}",
        durations.count
    );
}

/// `roller_waits` (steps waiting now) and `roller_wait_timeout_seconds`
/// (each kind's timeout).
fn waits(out: &mut String, checkpoint: Option<&Checkpoint>, live: &Live) {
    family(
        out,
        "roller_waits",
        "gauge",
        "Steps waiting now, by kind of wait.",
    );
    for kind in WaitKind::ALL {
        let count = checkpoint.map_or(0, |c| {
            c.progress
                .values()
                .filter(|p| p.wait.as_ref().is_some_and(|w| w.kind == kind))
                .count()
        });
        let _ = writeln!(out, "roller_waits{{kind=\"{}\"}} {count}", kind.as_str());
    }
    family(
        out,
        "roller_wait_timeout_seconds",
        "gauge",
        "The configured timeout of each kind of wait ([timeouts]), in cluster seconds.",
    );
    for kind in WaitKind::ALL {
        let _ = writeln!(
            out,
            "roller_wait_timeout_seconds{{kind=\"{}\"}} {}",
            kind.as_str(),
            kind.timeout(live.timeouts()).as_secs_f64()
        );
    }
}

/// The roll's pauses and pages, counted off its events.
fn roll_events(out: &mut String, checkpoint: Option<&Checkpoint>) {
    let events = |kind: EventKind| {
        checkpoint.map_or(0, |c| c.events.iter().filter(|e| e.kind == kind).count())
    };
    for (name, help, kind) in [
        (
            "roller_wait_timeouts_total",
            "Waits that outlived their timeout and paused the roll, over the whole roll.",
            EventKind::Pause,
        ),
        (
            "roller_pages_sent_total",
            "Pages that went out, over the whole roll.",
            EventKind::Paged,
        ),
        (
            "roller_pages_resolved_total",
            "Pages resolved, over the whole roll.",
            EventKind::PageResolved,
        ),
    ] {
        family(out, name, "counter", help);
        let _ = writeln!(out, "{name} {}", events(kind));
    }
}

/// `roller_api_calls_total` and `roller_api_errors_total`, per outside
/// system.
fn api_calls(out: &mut String) {
    let counts = metrics::counts();
    family(
        out,
        "roller_api_calls_total",
        "counter",
        "Requests this process sent to each outside system, retries included.",
    );
    for c in &counts {
        let _ = writeln!(
            out,
            "roller_api_calls_total{{system=\"{}\"}} {}",
            c.system.label(),
            c.calls
        );
    }
    family(
        out,
        "roller_api_errors_total",
        "counter",
        "Requests to each outside system that got no answer or a 5xx.",
    );
    for c in &counts {
        let _ = writeln!(
            out,
            "roller_api_errors_total{{system=\"{}\"}} {}",
            c.system.label(),
            c.errors
        );
    }
}

/// What the roll loop cost this process: its ticks and their CPU, its
/// checkpoint writes and their bytes.
fn loop_cost(out: &mut String) {
    let cost = metrics::loop_cost();
    let seconds = |d: std::time::Duration| d.as_secs_f64();
    for (name, kind, help, value) in [
        (
            "roller_ticks_total",
            "counter",
            "Ticks of the roll loop this process ran.",
            cost.ticks as f64,
        ),
        (
            "roller_tick_cpu_seconds_total",
            "counter",
            "CPU this process used within the roll loop's ticks (every thread's, sleeps left out).",
            seconds(cost.tick_cpu),
        ),
        (
            "roller_tick_cpu_seconds_max",
            "gauge",
            "The most CPU one tick of the roll loop used.",
            seconds(cost.tick_cpu_max),
        ),
        (
            "roller_checkpoint_writes_total",
            "counter",
            "Checkpoint writes this process made.",
            cost.checkpoint_writes as f64,
        ),
        (
            "roller_checkpoint_written_bytes_total",
            "counter",
            "Bytes of checkpoint this process wrote.",
            cost.checkpoint_bytes as f64,
        ),
        (
            "roller_checkpoint_write_bytes_max",
            "gauge",
            "The largest checkpoint this process wrote, in bytes.",
            cost.checkpoint_write_max as f64,
        ),
    ] {
        family(out, name, kind, help);
        let _ = writeln!(out, "{name} {value}");
    }
}
