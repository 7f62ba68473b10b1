//! The roll: builds the replacement plan from the desired end state and
//! runs it.
//!
//! Its rooms, each a folder whose `mod.rs` says what lives there and what
//! it may import (lower rooms never import higher ones):
//!
//! - `ports/`: the small traits through which the roll reaches the world,
//!   with their plain domain types. Imports nothing of the roll.
//! - `record/`: what the roll keeps: the checkpoint and its stores, the
//!   environment it runs against. Imports `ports` (types only).
//! - `decide/`: pure decisions: the plan, wave planning, floors and safety,
//!   AZ rebalance math, the health verdict. No port is called, no I/O, no
//!   tokio. Imports `ports` (types) and `record` (types, never a store).
//! - `engine/`: the reconcile loop and its steps: the runner, each step's
//!   type, the tick context, waits, paging, the operator inbox, the live
//!   snapshot, the clock. Imports every room below it.
//!
//! The entrances, beside the rooms: `run.rs` (one `roller run`: lock,
//! resume or preflight, run, archive), `preflight.rs` (the checks and the
//! first checkpoint of a fresh run), `abandon.rs` (`roller abandon`), and
//! `error.rs` (`RollError`, the shape every port's error shares).

pub(crate) mod abandon;
pub mod decide;
pub(crate) mod engine;
pub(crate) mod error;
pub mod ports;
pub(crate) mod preflight;
pub mod record;
pub(crate) mod run;
#[cfg(test)]
mod tests;
