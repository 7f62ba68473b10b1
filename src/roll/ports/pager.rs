//! Paging a human: what the roll says when it pauses (a trigger) and when it
//! gets past the step it paused on (a resolve), whatever the sink.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;

/// How bad it is, in PagerDuty's words (the two a roll pages with: a
/// pause is an error, a rollback a warning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One incident. The same `dedup_key` is the same incident: triggering it
/// again does not page twice, and resolving it closes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Page {
    /// Stable for the thing that is stuck (e.g. run id + step), so a rerun
    /// that times out on the same step updates the same incident.
    pub(crate) dedup_key: String,
    /// One line a human reads first: the ASG, the step, how long it waited.
    pub(crate) summary: String,
    pub(crate) severity: Severity,
    /// Where it happens (e.g. the ASG name).
    pub(crate) source: String,
    pub(crate) component: Option<String>,
    pub(crate) group: Option<String>,
    pub(crate) class: Option<String>,
    /// Everything else, e.g. `resume_command`: the exact command to resume.
    pub(crate) details: BTreeMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum PagerError {
    #[error("{sink} refused the {action}: HTTP {status}: {body}")]
    Refused {
        sink: &'static str,
        action: &'static str,
        status: u16,
        body: String,
    },
    #[error("{sink} could not be reached for the {action}: {reason}")]
    Unreachable {
        sink: &'static str,
        action: &'static str,
        reason: String,
    },
    #[error("{}", .0.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))]
    Several(Vec<PagerError>),
}

impl PagerError {
    /// A stable label for logs and checkpoints.
    #[cfg(test)]
    pub(crate) fn label(&self) -> &'static str {
        match self {
            PagerError::Refused { .. } => "pager_refused",
            PagerError::Unreachable { .. } => "pager_unreachable",
            PagerError::Several(_) => "pager_failed",
        }
    }
}

pub(crate) trait Pager: Send + Sync {
    /// Whether any sink is configured: a page is said to have gone out
    /// only when one is and it accepted the page.
    fn is_configured(&self) -> bool {
        true
    }
    fn trigger(&self, page: &Page) -> impl Future<Output = Result<(), PagerError>> + Send;
    fn resolve(&self, dedup_key: &str) -> impl Future<Output = Result<(), PagerError>> + Send;
}
