//! The checkpoint's event log: an intent log. An `intent` is written
//! before its side effect, the result after it; pauses, pages, operator
//! operations and failures are logged as they happen.
//!
//! The routine events (an intent, a completion, a termination, a surge:
//! one per agent or app, thousands at 2,000 agents) are left out of the
//! checkpoint's file once older than its last `KEPT_EVENTS`
//! (`Checkpoint::events_as_written`); the journal appends every event
//! before those to the event log beside a file checkpoint first. Every
//! other event stays, and a run keeps all its own in memory (the live
//! view, the log and the metrics read them there).

use serde::{Deserialize, Serialize};

use super::Checkpoint;

/// The newest events the checkpoint always keeps whole (it holds up to
/// twice as many before it leaves some out): more than `roller status`
/// shows (20).
pub(crate) const KEPT_EVENTS: usize = 200;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// UTC, RFC 3339.
    pub(crate) at: String,
    pub kind: EventKind,
    pub message: String,
    /// Who, for operator operations (`roller plan …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The error's stable label, for failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) label: Option<String>,
}

/// What an event records. The checkpoint's log is an intent log: an
/// `intent` is written before its side effect, the result after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// Preflight passed; the roll begins.
    Start,
    /// A side effect about to be sent.
    Intent,
    /// A step completed.
    Step,
    /// The run stopped on a signal.
    Stop,
    /// A run resumed after a pause.
    Resume,
    /// A wait timed out: the roll paused.
    Pause,
    /// A page went out.
    Paged,
    /// A page could not be sent or resolved.
    PageFailed,
    PageResolved,
    /// A step failed; the run stopped with exit 1.
    Failure,
    /// A termination's answer.
    Terminate,
    /// A surge's progress.
    Surge,
    /// The AZ rebalance report.
    Rebalance,
    /// An operator's `roller plan …` operation, or a flag given on resume.
    Operator,
    /// The run stopped because the plan is held by an operator or a canary.
    Held,
    /// The failure watch found a failure on a new agent.
    FailureFound,
    /// A new agent registered after its group's scale-up (the group's
    /// replacement of an instance EC2 took away): watched and, on a
    /// rollback, terminated like the others.
    NewAgent,
    /// A failure on a new agent within the failure limit: recorded and
    /// counted, the roll goes on.
    FailureTolerated,
    /// The plan turned around: the rollback phase runs.
    RollingBack,
    /// The rollback is complete.
    RolledBack,
}

impl EventKind {
    /// The name written in the checkpoint.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventKind::Start => "start",
            EventKind::Intent => "intent",
            EventKind::Step => "step",
            EventKind::Stop => "stop",
            EventKind::Resume => "resume",
            EventKind::Pause => "pause",
            EventKind::Paged => "paged",
            EventKind::PageFailed => "page_failed",
            EventKind::PageResolved => "page_resolved",
            EventKind::Failure => "failure",
            EventKind::FailureFound => "failure_found",
            EventKind::NewAgent => "new_agent",
            EventKind::FailureTolerated => "failure_tolerated",
            EventKind::RollingBack => "rolling_back",
            EventKind::RolledBack => "rolled_back",
            EventKind::Terminate => "terminate",
            EventKind::Surge => "surge",
            EventKind::Rebalance => "rebalance",
            EventKind::Operator => "operator",
            EventKind::Held => "held",
        }
    }
}

/// The kinds logged per agent or per app, thousands of them in a large
/// roll, that nothing reads back once old.
const ROUTINE: [EventKind; 4] = [
    EventKind::Intent,
    EventKind::Step,
    EventKind::Terminate,
    EventKind::Surge,
];

impl EventKind {
    pub(crate) fn is_routine(self) -> bool {
        ROUTINE.contains(&self)
    }
}

impl Checkpoint {
    /// `events` as the checkpoint is written when the first `cut` of them
    /// are in the event log beside it: of those, the ones that are not
    /// routine, and the latest of a routine kind the rest has none of
    /// (`roller status` reads whether a completion came after a failure);
    /// then the rest whole, in order. Gives them with how many come from
    /// before `cut`.
    pub(crate) fn events_as_written(&self, cut: usize) -> (Vec<Event>, usize) {
        let (old, recent) = self.events.split_at(cut.min(self.events.len()));
        let latest: Vec<usize> = ROUTINE
            .into_iter()
            .filter(|kind| !recent.iter().any(|e| e.kind == *kind))
            .filter_map(|kind| old.iter().rposition(|e| e.kind == kind))
            .collect();
        let kept: Vec<Event> = old
            .iter()
            .enumerate()
            .filter(|(n, e)| !e.kind.is_routine() || latest.contains(n))
            .map(|(_, e)| e.clone())
            .collect();
        let in_log = kept.len();
        (
            kept.into_iter().chain(recent.iter().cloned()).collect(),
            in_log,
        )
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
