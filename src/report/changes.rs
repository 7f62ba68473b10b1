//! A roll's state changes, read off its checkpoint: the runner hands every
//! checkpoint it writes to an observer, and `Tracker` turns the difference
//! from the last one into `Change`s, which the logs, the `--json` stream
//! and the terminal view all print. A step's state is its status and what
//! it waits for: a wait's message that changes tick after tick ("3 of 5
//! tasks healthy") is not a new state, so it makes no new line.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::eta::Pace;
use crate::plan::{Status, Step};
use crate::roll::record::checkpoint::{Checkpoint, EventKind, WaitRecord, utc};
use crate::roll::record::env::Timeouts;
use crate::roll::record::kinds::{GroupStep, RollPlan, StepKind, WaitKind};

/// What a working step waits for, since when, and how long it may.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct WaitInfo {
    pub(crate) kind: WaitKind,
    /// UTC, RFC 3339.
    pub(crate) since: String,
    pub(crate) waited_s: u64,
    pub(crate) timeout_s: u64,
}

/// One state change, as one log line or one `--json` object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Change {
    /// The run took up a checkpoint some of whose steps had already run.
    Resumed {
        at: String,
        run_id: String,
        complete: usize,
        steps: usize,
    },
    /// An entry of the checkpoint's event log (terminations, pages,
    /// operator operations with their user, pauses).
    Event {
        at: String,
        kind: EventKind,
        message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        user: Option<String>,
    },
    /// A step's status or wait changed.
    Step {
        at: String,
        /// `phase/step`.
        step: String,
        status: Status,
        message: String,
        wait: Option<WaitInfo>,
    },
    Phase {
        at: String,
        phase: String,
        status: Status,
    },
    Plan {
        at: String,
        plan: String,
        status: Status,
    },
}

impl Change {
    /// The step or phase it is about (`phase/step`, `phase`, or the plan).
    pub(crate) fn subject(&self) -> &str {
        match self {
            Change::Step { step, .. } => step,
            Change::Phase { phase, .. } => phase,
            Change::Plan { plan, .. } => plan,
            Change::Resumed { .. } | Change::Event { .. } => "",
        }
    }

    /// Whether it deserves a warning rather than information.
    pub(crate) fn is_warning(&self) -> bool {
        match self {
            Change::Event { kind, .. } => matches!(
                kind,
                EventKind::Pause | EventKind::PageFailed | EventKind::Failure | EventKind::Held
            ),
            Change::Step { status, .. } | Change::Phase { status, .. } => {
                matches!(status, Status::Error | Status::Delayed)
            }
            Change::Plan { status, .. } => matches!(status, Status::Error),
            Change::Resumed { .. } => false,
        }
    }

    /// The log line's text (the timestamp and level are the logger's).
    pub(crate) fn line(&self) -> String {
        match self {
            Change::Resumed {
                run_id,
                complete,
                steps,
                ..
            } => format!("resuming run {run_id}: {complete} of {steps} steps complete"),
            Change::Event {
                kind,
                message,
                user,
                ..
            } => match user {
                Some(user) => format!("{kind}: {message} (by {user})"),
                None => format!("{kind}: {message}"),
            },
            Change::Step {
                step,
                status,
                message,
                wait,
                ..
            } => {
                let mut line = format!("{step} {status}");
                if !message.is_empty() {
                    line.push_str(": ");
                    line.push_str(message);
                }
                if let Some(wait) = wait {
                    line.push_str(&format!(
                        " ({} s of {} s, since {})",
                        wait.waited_s, wait.timeout_s, wait.since
                    ));
                }
                line
            }
            Change::Phase { phase, status, .. } => format!("phase {phase} {status}"),
            Change::Plan { plan, status, .. } => format!("plan {plan} {status}"),
        }
    }
}

/// How far the roll has come, for the progress line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    /// Agents whose replacement step completed, of those selected.
    pub(crate) replaced: usize,
    pub(crate) agents: usize,
    /// Drain waves begun (0 for the serial strategy, or before the first).
    pub(crate) waves: usize,
    /// A capped surge's batches open to the drain, and in all (every
    /// group's summed; 0 of 0 when no group is capped).
    pub(crate) batches: (u32, u32),
    /// Cluster time since this process began watching.
    pub(crate) elapsed: Duration,
    /// What is left of the plan at the pace seen so far (`eta.rs`), when
    /// the progress was taken; `None` before any checkpoint was seen.
    pub(crate) eta: Option<Duration>,
}

impl Progress {
    /// The time the rest of the plan should take, as of when the progress
    /// was taken.
    pub(crate) fn eta(&self) -> Option<Duration> {
        self.eta
    }
}

/// `00:14:02`.
pub(crate) fn clock_span(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Diffs consecutive checkpoints.
pub(crate) struct Tracker {
    timeouts: Timeouts,
    now: Box<dyn Fn() -> SystemTime + Send>,
    began: Option<SystemTime>,
    plan: Option<Phase>,
    phases: HashMap<String, Phase>,
    /// Each step's last status and wait, by phase id, then step id (a
    /// plan of 2,000 steps is looked through at every write: no name is
    /// built for a step that did not change).
    steps: HashMap<String, HashMap<String, (Status, Option<WaitKind>)>>,
    events: usize,
    /// How long things took, for the ETA.
    pace: Pace,
    progress: Progress,
}

impl Tracker {
    /// `now`: the cluster's clock (the roll's, or a fixed one in tests).
    pub(crate) fn new(
        timeouts: Timeouts,
        now: impl Fn() -> SystemTime + Send + 'static,
    ) -> Tracker {
        Tracker {
            timeouts,
            now: Box::new(now),
            began: None,
            plan: None,
            phases: HashMap::new(),
            steps: HashMap::new(),
            events: 0,
            pace: Pace::default(),
            progress: Progress::default(),
        }
    }

    pub(crate) fn progress(&self) -> &Progress {
        &self.progress
    }

    pub(crate) fn now(&self) -> SystemTime {
        (self.now)()
    }

    /// The changes since the last checkpoint seen. The first one seen is
    /// the baseline: a fresh roll's events are all news; a resumed roll's
    /// past is summed up in one `Resumed`, and only its working steps are
    /// listed.
    pub(crate) fn changes(&mut self, checkpoint: &Checkpoint) -> Vec<Change> {
        let now = self.now();
        let at = utc(now);
        let first = self.began.is_none();
        let began = *self.began.get_or_insert(now);
        let plan = &checkpoint.plan;
        let mut changes = Vec::new();
        let resumed = first && plan.steps().any(|(_, s)| s.status() != Status::Pending);
        if resumed {
            changes.push(Change::Resumed {
                at: at.clone(),
                run_id: checkpoint.run_id.clone(),
                complete: plan.steps().filter(|(_, s)| s.is_complete()).count(),
                steps: plan.steps().count(),
            });
            self.events = checkpoint.events.len();
        }
        // The events first: they say why the steps below changed.
        changes.extend(self.new_events(checkpoint, &at));
        changes.extend(self.step_changes(checkpoint, now, &at, resumed));
        // A phase's or the plan's line when it begins, ends, or stops
        // (not each time its derived status moves among the working ones).
        let quiet = |status: Status| first && (resumed || status == Status::Pending);
        changes.extend(self.phase_and_plan_changes(plan, &at, quiet));
        self.update_progress(checkpoint, now, began);
        changes
    }

    /// The checkpoint's events not seen yet, but a step's completion,
    /// which is its step's own line, with its message.
    fn new_events(&mut self, checkpoint: &Checkpoint, at: &str) -> Vec<Change> {
        let events = checkpoint
            .events
            .iter()
            .skip(self.events)
            .filter(|event| event.kind != EventKind::Step)
            // Stamped when seen, in cluster time, as every other change
            // (the checkpoint records the wall clock's time; against the
            // simulator the two differ).
            .map(|event| Change::Event {
                at: at.to_string(),
                kind: event.kind,
                message: event.message.clone(),
                user: event.user.clone(),
            })
            .collect();
        self.events = checkpoint.events.len();
        events
    }

    /// Each step whose status or wait changed since the last checkpoint
    /// seen, or, unseen before, that has begun (of a resume's baseline,
    /// only the working ones).
    fn step_changes(
        &mut self,
        checkpoint: &Checkpoint,
        now: SystemTime,
        at: &str,
        resumed: bool,
    ) -> Vec<Change> {
        let mut changes = Vec::new();
        let timeouts = &self.timeouts;
        for phase in &checkpoint.plan.phases {
            let seen = self.steps.entry(phase.id.clone()).or_default();
            for step in &phase.steps {
                let status = step.status();
                let wait = checkpoint
                    .progress
                    .get(&step.id)
                    .and_then(|p| p.wait.as_ref());
                let state = (status, wait.map(|w| w.kind));
                let news = match seen.get_mut(step.id.as_str()) {
                    Some(before) => std::mem::replace(before, state) != state,
                    // Unseen: news when it has begun, unless this is a
                    // resume's baseline, where only working steps are.
                    None => {
                        seen.insert(step.id.clone(), state);
                        status != Status::Pending
                            && (!resumed || !matches!(status, Status::Complete | Status::Waiting))
                    }
                };
                if news {
                    let name = format!("{}/{}", phase.id, step.id);
                    changes.push(step_change(
                        step,
                        name,
                        wait.map(|w| wait_info(w, timeouts, now)),
                        at,
                    ));
                }
            }
        }
        changes
    }

    /// Each phase, then the plan, whose status changed (working counted
    /// as one), unless `quiet` keeps that status out of a baseline.
    fn phase_and_plan_changes(
        &mut self,
        plan: &RollPlan,
        at: &str,
        quiet: impl Fn(Status) -> bool,
    ) -> Vec<Change> {
        let mut changes = Vec::new();
        for phase in &plan.phases {
            let status = phase.status();
            if self.phases.insert(phase.id.clone(), Phase::of(status)) != Some(Phase::of(status))
                && !quiet(status)
            {
                changes.push(Change::Phase {
                    at: at.to_string(),
                    phase: phase.id.clone(),
                    status,
                });
            }
        }
        let status = plan.status();
        if self.plan.replace(Phase::of(status)) != Some(Phase::of(status)) && !quiet(status) {
            changes.push(Change::Plan {
                at: at.to_string(),
                plan: plan.name.clone(),
                status,
            });
        }
        changes
    }

    fn update_progress(&mut self, checkpoint: &Checkpoint, now: SystemTime, began: SystemTime) {
        let mut replaced = 0;
        let mut waves = 0;
        for (_, step) in checkpoint.plan.steps() {
            let Some(kind) = step.kind.as_ref().map(|k| &k.kind) else {
                continue;
            };
            match kind {
                StepKind::Replace { .. } | StepKind::Terminate { .. } if step.is_complete() => {
                    replaced += 1;
                }
                StepKind::DrainWave { .. } if step.status() != Status::Pending => {
                    waves += 1;
                }
                _ => {}
            }
        }
        self.pace.observe(checkpoint, now);
        self.progress = Progress {
            replaced,
            agents: checkpoint.groups.iter().map(|g| g.instances.len()).sum(),
            waves,
            batches: checkpoint
                .groups
                .iter()
                .filter_map(|g| g.surge.as_ref().map(|s| (g.opened_batches, s.batches)))
                .fold((0, 0), |(o, t), (go, gt)| (o + go, t + gt)),
            elapsed: now.duration_since(began).unwrap_or_default(),
            eta: Some(self.pace.eta(checkpoint, now)),
        };
    }
}

/// A phase's or plan's status as its log lines tell it: working
/// (`STARTING`, `STARTED`, `IN_PROGRESS`, `PREPARED`) is one state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Working,
    Other(Status),
}

impl Phase {
    fn of(status: Status) -> Phase {
        match status {
            Status::Starting | Status::Started | Status::InProgress | Status::Prepared => {
                Phase::Working
            }
            other => Phase::Other(other),
        }
    }
}

/// The line of `step`, news, and what it waits for.
fn step_change(step: &Step<GroupStep>, name: String, wait: Option<WaitInfo>, at: &str) -> Change {
    let message = match &wait {
        // The wait's own `(since …)` is in `wait`.
        Some(_) => strip_since(&step.message).to_string(),
        None => step.message.clone(),
    };
    Change::Step {
        at: at.to_string(),
        step: name,
        status: step.status(),
        message,
        wait,
    }
}

/// What a step waits for, since when, and how long it may, as of `now`.
fn wait_info(wait: &WaitRecord, timeouts: &Timeouts, now: SystemTime) -> WaitInfo {
    let since = UNIX_EPOCH + Duration::from_millis(wait.since_unix_ms);
    WaitInfo {
        kind: wait.kind,
        since: utc(since),
        waited_s: now.duration_since(since).unwrap_or_default().as_secs(),
        timeout_s: wait.kind.timeout(timeouts).as_secs(),
    }
}

/// A wait's message without the ` (since …)` the runner appends.
fn strip_since(message: &str) -> &str {
    match message.rfind(" (since ") {
        Some(at) if message.ends_with(')') => &message[..at],
        _ => message,
    }
}
