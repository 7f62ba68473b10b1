//! The process's count of requests sent to each outside system, and of
//! those that failed, for `GET /metrics` (`roller_api_calls_total`,
//! `roller_api_errors_total`). A handful of global atomics: the adapters
//! bump them where they send (one place each), and nothing else needs to
//! be threaded through the ports for it.
//!
//! A call is one request sent (each retry counts). An error is a request
//! that got no answer (connection refused, timeout, reset) or a 5xx: the
//! system is unwell. A 4xx is an answer, counted as a call only.

use std::sync::atomic::{AtomicU64, Ordering};

/// An outside system roller talks to, as the `system` label names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum System {
    Aws,
    Mesos,
    Marathon,
    PagerDuty,
    Webhook,
}

impl System {
    pub(crate) const ALL: [System; 5] = [
        System::Aws,
        System::Mesos,
        System::Marathon,
        System::PagerDuty,
        System::Webhook,
    ];

    /// The `system` label.
    pub(crate) fn label(self) -> &'static str {
        match self {
            System::Aws => "aws",
            System::Mesos => "mesos",
            System::Marathon => "marathon",
            System::PagerDuty => "pagerduty",
            System::Webhook => "webhook",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

static CALLS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
static ERRORS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

/// One request is about to be sent to `system`.
pub(crate) fn call(system: System) {
    CALLS[system.index()].fetch_add(1, Ordering::Relaxed);
}

/// A request to `system` got no answer, or a 5xx.
pub(crate) fn error(system: System) {
    ERRORS[system.index()].fetch_add(1, Ordering::Relaxed);
}

/// Counts an answer (or its absence) by the rule above: `status` is the
/// HTTP status, `None` when no answer came.
pub(crate) fn answered(system: System, status: Option<u16>) {
    if status.is_none_or(|s| s >= 500) {
        error(system);
    }
}

/// Calls and errors so far, per system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) system: System,
    pub(crate) calls: u64,
    pub(crate) errors: u64,
}

/// Every system's counts, in `System::ALL` order.
pub(crate) fn counts() -> Vec<Counts> {
    System::ALL
        .into_iter()
        .map(|system| Counts {
            system,
            calls: CALLS[system.index()].load(Ordering::Relaxed),
            errors: ERRORS[system.index()].load(Ordering::Relaxed),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(system: System) -> Counts {
        counts().into_iter().find(|c| c.system == system).unwrap()
    }

    // Other tests of this process send requests too: only growth is
    // checked, never an exact count.
    #[test]
    fn no_answer_and_a_5xx_count_as_errors_and_a_4xx_does_not() {
        let before = of(System::Webhook);
        call(System::Webhook);
        answered(System::Webhook, Some(404));
        let after_404 = of(System::Webhook);
        assert!(after_404.calls > before.calls);
        answered(System::Webhook, Some(503));
        answered(System::Webhook, None);
        let after = of(System::Webhook);
        assert!(after.errors >= after_404.errors + 2, "{before:?} {after:?}");
    }
}
