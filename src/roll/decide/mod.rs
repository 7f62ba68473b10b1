//! Decisions: what the roll should do, computed from what it has seen.
//! Pure functions over plain data: no port is called, no I/O, no tokio.
//!
//! - `roll_plan`: the plan, built from what was selected (what
//!   `--dry-run` prints), and the plan's fixed phase and step ids.
//! - `drain_plan`: the next wave of task moves over every old agent.
//! - `safety`: the floors, and which tasks must move before an agent goes.
//! - `rebalance`: the AZ moves rebalancing needs.
//! - `health`: the verdict over what Marathon reports.
//! - `failure`: whether what the roll placed on the new agents failed.
//! - `failure_limit`: how many failures the roll tolerates before the
//!   new image counts as bad (`--failure-limit`).
//! - `placement`: whether the old agents' tasks have an agent to go to
//!   (roles an app accepts, roles an agent offers).
//! - `cluster_lock`: whether another run holds a group of this cluster.
//! - `cluster_plan`: the plan of a roll of several groups, one plan.
//! - `refresh`: whether an Instance Refresh is at work on a group.
//! - `held`: which instances the roll takes, leaves out or brings in
//!   first (Standby, scale-in protection: `--standby`, `--protected`).
//! - `alarms`: whether a watched CloudWatch alarm is in ALARM (a failure
//!   on the new image), and the preflight's refusal of the alarms named.
//!
//! May import: the ports' domain types (`App`, `Agent`, the group), never
//! a port trait; the records' types (`RolledInstance`, `StepKind`), never
//! a store; `crate::plan`. Never the engine.

pub(crate) mod agent_contents;
pub(crate) mod alarms;
pub(crate) mod cluster_lock;
pub(crate) mod cluster_plan;
pub(crate) mod drain_plan;
pub(crate) mod failure;
pub(crate) mod failure_limit;
pub mod health;
pub(crate) mod held;
pub(crate) mod placement;
pub(crate) mod rebalance;
pub(crate) mod refresh;
pub(crate) mod roll_plan;
pub(crate) mod safety;
pub(crate) mod surge_cap;
#[cfg(test)]
pub(crate) mod test_apps;
