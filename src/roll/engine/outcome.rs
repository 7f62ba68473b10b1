//! How a run ends: `Outcome` (complete, paused, held, rolled back,
//! stopped, refused), and
//! `Ended`, the outcome with the checkpoint as last written and its store.

use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore};

#[derive(Debug)]
pub(crate) enum Outcome {
    Complete {
        /// The AZ rebalance report.
        summary: String,
    },
    /// A wait timed out: the step reads DELAYED; `paged` says whether a
    /// configured pager accepted the page.
    Paused {
        step: String,
        reason: String,
        paged: bool,
    },
    /// An operator interrupted the plan, a phase or a step, or a canary
    /// waits: `reason` ends with the exact `roller plan continue` command.
    Held { reason: String },
    /// A failure on the new agents turned the roll around, and the
    /// rollback phase put the cluster back as it was (exit 5).
    RolledBack {
        /// What failed, and where.
        failure: String,
        /// The finish phase's AZ report.
        summary: String,
        /// Whether a configured pager accepted the page that says so.
        paged: bool,
    },
    /// A stop signal arrived; the checkpoint is consistent.
    Stopped,
    /// Another run holds the cluster: this one changed nothing (exit 2),
    /// and its checkpoint was set aside so a rerun starts afresh.
    Refused {
        /// Who holds the cluster, and how to look at it or give it up.
        reason: String,
    },
}

/// How a run ended: the outcome, the checkpoint as last written, and the
/// store it was written to.
pub(crate) type Ended = (Outcome, Checkpoint, CheckpointStore);
