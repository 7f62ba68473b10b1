//! The log lines, the event stream and the terminal view, each from real
//! checkpoints (the fuzz seeds: a serial roll paused mid-way) with the
//! clock fixed, compared with golden text.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

use super::changes::{Change, Progress, Tracker};
use super::logging::{LogFormat, LogSettings, emit, subscriber};
use super::view::{Screen, View};
use crate::plan::Status;
use crate::roll::record::checkpoint::{Checkpoint, EventKind, StepProgress, WaitRecord};
use crate::roll::record::env::Timeouts;
use crate::roll::record::kinds::WaitKind;

/// The seed's deregistration wait began at 22:07:31.169; the clock reads
/// one minute later.
const SINCE_MS: u64 = 1_795_471_651_169;
const NOW_MS: u64 = SINCE_MS + 60_000;

fn seed() -> Checkpoint {
    let text = include_str!("../../fuzz/seeds/checkpoint/serial-1.json");
    Checkpoint::parse(Path::new("seed.json"), text).expect("the seed parses")
}

fn fixed(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

/// The next state: the terminated agent is gone, the next instance's
/// termination sent, a page resolved by an operator's continue.
fn next(mut checkpoint: Checkpoint) -> Checkpoint {
    let plan = &mut checkpoint.plan;
    let at = step_at(plan, "i-05705b8770b3d7dd5");
    let done = plan.step_mut(at);
    done.status = Status::Complete;
    done.message = "i-05705b8770b3d7dd5 replaced; Marathon healthy (took 2m 0s)".to_string();
    let at = step_at(plan, "i-07e348a0e451650be");
    let next = plan.step_mut(at);
    next.status = Status::Started;
    next.message = "waiting for Mesos to deregister agent S3: i-07e348a0e451650be terminated \
                    (since 2026-11-23T22:08:21Z)"
        .to_string();
    checkpoint.progress.clear();
    checkpoint.progress.insert(
        "i-07e348a0e451650be".to_string(),
        StepProgress {
            started_unix_ms: NOW_MS - 20_000,
            wait: Some(WaitRecord {
                kind: WaitKind::Deregistered,
                since_unix_ms: NOW_MS - 10_000,
                extended_ms: 0,
            }),
        },
    );
    checkpoint.log(
        UNIX_EPOCH,
        EventKind::Step,
        "replace/i-05705b8770b3d7dd5 complete: replaced",
    );
    checkpoint.log(
        UNIX_EPOCH,
        EventKind::Intent,
        "terminate i-07e348a0e451650be with decrement",
    );
    checkpoint.events.last_mut().unwrap().at = "2026-11-23T22:08:21Z".to_string();
    checkpoint.log(UNIX_EPOCH, EventKind::Operator, "continue the plan");
    let last = checkpoint.events.last_mut().unwrap();
    last.at = "2026-11-23T22:08:25Z".to_string();
    last.user = Some("alice".to_string());
    checkpoint
}

fn step_at(plan: &crate::roll::record::kinds::RollPlan, id: &str) -> crate::plan::StepIndex {
    match plan.find(Some("replace"), Some(id)) {
        Ok(crate::plan::Target::Step(at)) => at,
        other => panic!("no step {id}: {other:?}"),
    }
}

/// The changes of the seed (a resume's baseline), then of the next state.
fn changes() -> (Vec<Change>, Vec<Change>, Progress) {
    let clock = Arc::new(Mutex::new(NOW_MS));
    let read = clock.clone();
    let mut tracker = Tracker::new(Timeouts::DEFAULT, move || fixed(*read.lock().unwrap()));
    let first = tracker.changes(&seed());
    *clock.lock().unwrap() = NOW_MS + 30_000;
    let second = tracker.changes(&next(seed()));
    (first, second, tracker.progress().clone())
}

struct FixedTime;

impl FormatTime for FixedTime {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        w.write_str("2026-11-23T22:09:01Z")
    }
}

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn logged(settings: &LogSettings, changes: &[Change]) -> String {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = subscriber(settings, FixedTime, move || writer.clone(), false);
    tracing::subscriber::with_default(subscriber, || {
        for change in changes {
            emit(change);
        }
    });
    buffer.text()
}

#[test]
fn a_resume_is_one_line_and_its_working_step_then_one_line_per_change() {
    let (first, second, _) = changes();
    let all: Vec<Change> = first.into_iter().chain(second).collect();
    let text = logged(&LogSettings::default(), &all);
    let golden = "\
2026-11-23T22:09:01Z  INFO resuming run b0b26f23-be67-49fb-a0d2-c6c864ca1c8f: 6 of 20 steps complete
2026-11-23T22:09:01Z  INFO replace/i-05705b8770b3d7dd5 STARTED: waiting for Mesos to deregister agent 956eeb2f-2632-47bd-83f1-66b233e3ef28-S2: i-05705b8770b3d7dd5 terminated (60 s of 600 s, since 2026-11-23T22:07:31Z)
2026-11-23T22:09:01Z  INFO intent: terminate i-07e348a0e451650be with decrement
2026-11-23T22:09:01Z  INFO operator: continue the plan (by alice)
2026-11-23T22:09:01Z  INFO replace/i-05705b8770b3d7dd5 COMPLETE: i-05705b8770b3d7dd5 replaced; Marathon healthy (took 2m 0s)
2026-11-23T22:09:01Z  INFO replace/i-07e348a0e451650be STARTED: waiting for Mesos to deregister agent S3: i-07e348a0e451650be terminated (40 s of 600 s, since 2026-11-23T22:08:21Z)
";
    assert_eq!(text, golden, "\n{text}");
}

#[test]
fn quiet_keeps_warnings_and_verbose_adds_nothing_to_the_roll_lines() {
    let (_, second, _) = changes();
    let delayed = Change::Step {
        at: "2026-11-23T22:09:01Z".to_string(),
        step: "replace/i-1".to_string(),
        status: Status::Delayed,
        message: "timed out".to_string(),
        wait: None,
    };
    let mut all = second.clone();
    all.push(delayed);
    let quiet = LogSettings {
        verbosity: -1,
        ..LogSettings::default()
    };
    assert_eq!(
        logged(&quiet, &all),
        "2026-11-23T22:09:01Z  WARN replace/i-1 DELAYED: timed out\n"
    );
    let verbose = LogSettings {
        verbosity: 1,
        ..LogSettings::default()
    };
    assert_eq!(logged(&verbose, &all).lines().count(), all.len());
    // RUST_LOG decides over -q.
    let overridden = LogSettings {
        verbosity: -1,
        rust_log: Some("roller=info".to_string()),
        ..LogSettings::default()
    };
    assert_eq!(logged(&overridden, &all).lines().count(), all.len());
}

#[test]
fn json_logs_are_one_object_a_line_with_the_step_as_a_field() {
    let (_, second, _) = changes();
    let settings = LogSettings {
        format: LogFormat::Json,
        ..LogSettings::default()
    };
    let text = logged(&settings, &second);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object"))
        .collect();
    assert_eq!(lines.len(), second.len());
    // An event is about no step: no field.
    assert_eq!(
        lines[0]["fields"]["message"],
        "intent: terminate i-07e348a0e451650be with decrement"
    );
    assert!(lines[0]["fields"].get("step").is_none(), "{}", lines[0]);
    let last = lines.last().unwrap();
    assert_eq!(last["timestamp"], "2026-11-23T22:09:01Z");
    assert_eq!(last["level"], "INFO");
    assert_eq!(last["fields"]["step"], "replace/i-07e348a0e451650be");
    assert!(
        last["fields"]["message"]
            .as_str()
            .unwrap()
            .starts_with("replace/i-07e348a0e451650be STARTED: waiting"),
        "{last}"
    );
}

#[test]
fn the_event_stream_is_typed_objects_with_the_wait_spelled_out() {
    let (_, second, _) = changes();
    let lines: Vec<String> = second.iter().map(super::json_line).collect();
    assert_eq!(
        lines[0],
        r#"{"type":"event","at":"2026-11-23T22:09:01Z","kind":"intent","message":"terminate i-07e348a0e451650be with decrement"}"#
    );
    assert_eq!(
        lines[1],
        r#"{"type":"event","at":"2026-11-23T22:09:01Z","kind":"operator","message":"continue the plan","user":"alice"}"#
    );
    assert_eq!(
        lines[3],
        r#"{"type":"step","at":"2026-11-23T22:09:01Z","step":"replace/i-07e348a0e451650be","status":"STARTED","message":"waiting for Mesos to deregister agent S3: i-07e348a0e451650be terminated","wait":{"kind":"deregistered","since":"2026-11-23T22:08:21Z","waited_s":40,"timeout_s":600}}"#
    );
}

#[test]
fn a_fresh_roll_prints_its_events_and_no_pending_phases() {
    let mut fresh = seed();
    for step in fresh
        .plan
        .phases
        .iter_mut()
        .flat_map(|p| p.steps.iter_mut())
    {
        step.status = Status::Pending;
    }
    fresh.progress.clear();
    fresh.events.truncate(1);
    let mut tracker = Tracker::new(Timeouts::DEFAULT, || fixed(NOW_MS));
    let changes = tracker.changes(&fresh);
    let lines: Vec<String> = changes.iter().map(Change::line).collect();
    assert_eq!(
        lines,
        ["start: roll of mesos-agents-demo to 12 agents: 12 instance(s) selected by all"]
    );
    // The same checkpoint again: nothing changed, nothing printed.
    assert!(tracker.changes(&fresh).is_empty());
}

#[test]
fn the_eta_is_what_is_left_of_the_plan_at_the_pace_seen() {
    let (_, _, progress) = changes();
    assert_eq!((progress.replaced, progress.agents), (3, 12));
    // One replacement seen from start to end here, in 30 s: the nine left
    // (the one under way just begun) take 4m 30s, and the finish phase's
    // four quick steps 5 s each.
    let finish = seed()
        .plan
        .phases
        .iter()
        .find(|p| p.id == "finish")
        .map(|p| p.steps.len())
        .unwrap();
    assert_eq!(finish, 4);
    assert_eq!(progress.eta(), Some(Duration::from_secs(270 + 20)));
    // Nothing seen done yet: the defaults (3 min a replacement).
    let mut tracker = Tracker::new(Timeouts::DEFAULT, || fixed(NOW_MS));
    tracker.changes(&seed());
    assert_eq!(
        tracker.progress().eta(),
        Some(Duration::from_secs(10 * 180 + 20))
    );
}

#[test]
fn the_view_draws_working_steps_progress_and_recent_events_and_erases_its_last_frame() {
    let buffer = Buffer::default();
    let screen = Arc::new(Screen::new(Box::new(buffer.clone()), 200));
    let view = View::new(screen.clone(), || fixed(NOW_MS + 30_000));
    let (first, second, progress) = changes();
    view.update(&seed(), &first, &progress);
    let first_frame = buffer.text();
    assert!(!first_frame.contains("\x1b["), "nothing to erase yet");
    let lines: Vec<&str> = first_frame.lines().collect();
    assert_eq!(
        lines[0],
        "roll-mesos-agents-demo (serial strategy) (IN_PROGRESS)"
    );
    assert!(
        first_frame.contains(
            "    i-05705b8770b3d7dd5 (STARTED) 1m 30s  waiting for Mesos to deregister agent"
        ),
        "{first_frame}"
    );
    assert!(
        first_frame.contains("agents replaced 3/12, elapsed 00:00:30, ETA 00:04:50"),
        "{first_frame}"
    );
    view.update(&next(seed()), &second, &progress);
    let both = buffer.text();
    let drawn = lines.len();
    let second_frame = &both[first_frame.len()..];
    assert!(
        second_frame.starts_with(&format!("\x1b[{drawn}F\x1b[J")),
        "the first frame is erased: {second_frame:?}"
    );
    assert!(second_frame.contains("recent:\n"), "{second_frame}");
    assert!(
        second_frame.contains("  22:09:01 operator: continue the plan (by alice)"),
        "{second_frame}"
    );
    // A log line goes above the frame, which is drawn again under it.
    screen.print_above(b"a warning\n");
    let after = buffer.text();
    let tail = &after[both.len()..];
    assert!(tail.contains("\x1b[J") && tail.contains("a warning\nroll-mesos-agents-demo"));
}
