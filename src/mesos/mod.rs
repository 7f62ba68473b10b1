//! The Mesos master adapter: implements the roll's `MesosMaster` port
//! (`crate::roll::ports::mesos`) over the master's HTTP API with reqwest.
//!
//! - `client`: finding and following the leader, timeouts, retries.
//! - `master`: each port operation as endpoint, body and answer.
//! - `maintenance`: merging our windows into the shared schedule.
//! - `wire`: the master's JSON and its translation to domain types.

mod client;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod fuzz;
mod maintenance;
mod master;
mod wire;

#[cfg(test)]
mod fake_master;
#[cfg(test)]
mod tests;

pub(crate) use client::{MesosClient, MesosSettings};
#[cfg(test)]
pub(crate) use {crate::roll::ports::mesos::MesosError, client::AgentListing};
