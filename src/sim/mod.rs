//! The simulator: a deterministic model of an Auto Scaling group of Mesos
//! agents running Marathon apps, which later steps serve over the real
//! AWS, Mesos and Marathon HTTP contracts so the roller can be tested and
//! demonstrated without a cluster.
//!
//! - `scenario`: the TOML scenario format and the embedded scenarios.
//! - `world`: the simulated world itself (pure, no I/O, no real clock),
//!   its API for the facades, and the monitor's report.
//! - `shared`: the world behind a lock with its clock, faults and peers.
//! - `http`: the AWS, Mesos and Marathon facades over the shared world.
//! - `control`: the simulator's own `/sim` endpoints (report, time, faults).
//! - `server`: all of it served on loopback ports until shut down.

pub(crate) mod control;
pub(crate) mod http;
pub mod scenario;
pub(crate) mod server;
pub(crate) mod shared;
pub mod world;

pub use scenario::Scenario;
pub(crate) use scenario::ScenarioError;
pub(crate) use server::{Endpoints, SimServeError};
pub use server::{SimOptions, Simulator};
pub use world::Report;
#[cfg(test)]
pub(crate) use world::World;
