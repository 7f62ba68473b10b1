//! The roll: builds the replacement plan from the desired end state and
//! runs it.
//!
//! - `env`: the environment file, resolved with variables and flags.
//! - `preflight`: selection and checks of a fresh run; the first checkpoint.
//! - `roll_plan`: the plan (pure; what `--dry-run` prints).
//! - `steps`: what each step does (`StepKind`), one tick at a time.
//! - `runner`: the reconcile loop: candidates, ticks, deadlines.
//! - `wait`: what a step waits for, its deadline, the sleep between ticks.
//! - `drain`: moving tasks off an agent (kills, surges, maintenance).
//! - `paging`: pausing on a timeout and the page.
//! - `inbox`: operator operations queued for a live run.
//! - `live`: what a running roll shares with the plan API (snapshot, queue).
//! - `clock`: the roll's time (`time_scale` applied here only).
//! - `cluster`: the ports and the views preflight and runner share.
//! - `observation`: what one tick reads of the cluster, shared by its steps.
//! - `error`: `RollError` and the shape of every port's error.
//! - `run`: one `roller run` (lock, resume or preflight, archive).
//! - `abandon`: `roller abandon`, with the finish steps.
//! - `checkpoint`: the resumable record and the run lock.
//! - `safety`: which tasks must move before an agent goes (pure).
//! - `drain_plan`: the next wave of moves over every old agent (pure).
//! - `rebalance`: the AZ moves rebalancing needs (pure).
//! - `health`: the verdict over what Marathon reports.
//! - `ports`: the small traits through which the roll reaches the world.

pub mod abandon;
pub mod checkpoint;
pub mod clock;
pub mod cluster;
mod drain;
pub mod drain_plan;
#[cfg(test)]
mod drain_tests;
pub mod env;
pub mod error;
#[cfg(test)]
mod fault_tests;
pub mod health;
#[cfg(test)]
mod in_process_tests;
pub mod inbox;
pub mod live;
#[cfg(test)]
mod moto_tests;
mod observation;
mod paging;
pub mod ports;
pub mod preflight;
pub mod rebalance;
pub mod roll_plan;
pub mod run;
pub mod runner;
pub mod safety;
pub mod steps;
#[cfg(test)]
mod surge_tests;
#[cfg(test)]
mod test_apps;
mod wait;
