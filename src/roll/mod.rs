//! The roll: builds the replacement plan from the desired end state and
//! runs it.
//!
//! - `env`: the environment file, resolved with variables and flags.
//! - `preflight`: selection and checks of a fresh run; the first checkpoint.
//! - `roll_plan`: the plan (pure; what `--dry-run` prints).
//! - `runner`: executes the plan step by step against the ports.
//! - `run`: one `roller run` (lock, resume or preflight, archive).
//! - `checkpoint`: the resumable record and the run lock.
//! - `safety`: which tasks must move before an agent goes (pure).
//! - `rebalance`: the AZ moves rebalancing needs (pure).
//! - `health`: the verdict over what Marathon reports.
//! - `ports`: the small traits through which the roll reaches the world.

pub mod checkpoint;
pub mod env;
pub mod health;
#[cfg(test)]
mod moto_tests;
pub mod ports;
pub mod preflight;
pub mod rebalance;
pub mod roll_plan;
pub mod run;
pub mod runner;
pub mod safety;
#[cfg(test)]
mod surge_tests;
