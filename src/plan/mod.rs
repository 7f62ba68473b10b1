//! The plan engine: plans, phases and steps with the DC/OS SDK's statuses,
//! strategies and operator operations. Pure data and rules: no I/O, no
//! clock, so that what `--dry-run` prints is exactly what a run would do.
//!
//! - `status.rs`, `strategy.rs`: the vocabulary.
//! - `step.rs`, `phase.rs`, `plan.rs`: the tree (one type per file).
//! - `aggregate.rs`: a parent's status from its children.
//! - `operation.rs`: continue, interrupt, force-complete, restart, start, stop.
//! - `address.rs`: finding a phase or step by id or name.
//! - `coordinator.rs`: candidates across plans, one step per asset.
//! - `document.rs`: the JSON document that round-trips all of it.
//! - `render.rs`: the `plan show` tree and the JSON view.

mod address;
mod aggregate;
mod coordinator;
mod document;
mod operation;
mod phase;
#[allow(clippy::module_inception)]
mod plan;
#[cfg(test)]
mod proptests;
mod render;
mod status;
mod step;
mod strategy;
#[cfg(test)]
mod tests;

pub(crate) use address::AddressError;
pub(crate) use coordinator::plan_candidates;
pub(crate) use document::DocumentError;
pub(crate) use operation::{Operation, Outcome, Target};
pub(crate) use phase::{Canary, Phase};
pub(crate) use plan::{Plan, StepIndex};
pub(crate) use render::{PlanInfo, info, info_tree, tree};
pub(crate) use status::Status;
pub(crate) use step::Step;
pub(crate) use strategy::Strategy;

// What only the plan engine's own tests name from here.
#[cfg(test)]
pub(crate) use coordinator::candidates;
