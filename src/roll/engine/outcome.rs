//! How a run ends: `Outcome` (complete, paused, held, stopped), and
//! `Ended`, the outcome with the checkpoint as last written and its store.

use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore};

#[derive(Debug)]
pub enum Outcome {
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
    /// A stop signal arrived; the checkpoint is consistent.
    Stopped,
}

/// How a run ended: the outcome, the checkpoint as last written, and the
/// store it was written to.
pub type Ended = (Outcome, Checkpoint, CheckpointStore);
