//! `RunOptions`: what a run is told besides its environment, fixed for
//! the run and read by the runner and the steps.

use std::sync::Arc;

use super::live::Live;

/// Options of this run that are not in the environment.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunOptions {
    /// Resume AZRebalance even when the final AZ counts are uneven.
    pub(crate) resume_az_rebalance: bool,
    /// The command an operator runs to resume (printed and paged).
    pub(crate) resume_command: String,
    /// Go on past a failure the roll paused on (`--acknowledge-failure`):
    /// it is acknowledged and never reported again.
    pub(crate) acknowledge_failure: bool,
    /// `roller rollback`: turn the plan around before anything else, as
    /// a failure on the new agents would (an operator's order).
    pub(crate) rollback_ordered: bool,
    /// Shared with the plan API (`--listen`): the runner keeps its
    /// snapshot current, drains its operations at each tick with the
    /// queued files, and reports step durations to it.
    pub(crate) live: Option<Arc<Live>>,
}
