//! roller: replaces every node of a Mesos cluster in an AWS Auto Scaling
//! group without an outage, as a plan that can be paused and resumed.
//!
//! - `plan`: the plan engine (pure data and rules).
//! - `roll`: the roll and its ports (the traits it reaches the world by).
//! - `aws`, `mesos`, `marathon`, `pager`: one adapter per outside system.
//! - `http`, `retry`: what the adapters share (clients, credentials, backoff).
//! - `sentence`: an error and its causes as one readable sentence.
//! - `metrics`: requests sent to each outside system, and their failures.
//! - `api`: the DC/OS SDK's plan HTTP API and `/metrics`, served while a
//!   roll runs (`--listen`).
//! - `atomic_file`: crash-safe replacement of files on disk.
//! - `crash_point`: the crash harness's hook (SIGKILL at the K-th checkpoint
//!   write, set by `ROLLER_CRASH_AT`; nothing when unset).
//! - `report`: what the operator sees of a roll (logs, `--json` events,
//!   the terminal view), read off its checkpoints.
//! - `cli`: the command line, from arguments to exit codes.
//! - `sim`: the simulated cluster (world, scenarios, HTTP facades, server).
//! - `simulated`: roller's real clients wired to an in-process simulator.
//! - `demo`: `roller demo` (the simulated cluster) and `roller plan demo`
//!   (the plan engine walkthrough).
//! - `fuzz_targets`: the fuzz targets' bodies (tests and `fuzzing` only).

pub(crate) mod api;
pub(crate) mod atomic_file;
pub mod aws;
pub(crate) mod by_id;
pub mod cli;
pub mod crash_point;
pub(crate) mod dcos;
pub(crate) mod demo;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzz_targets;
pub(crate) mod http;
#[cfg(test)]
mod layout_tests;
pub(crate) mod lenient;
pub mod marathon;
pub(crate) mod mesos;
pub(crate) mod metrics;
pub(crate) mod pager;
pub(crate) mod plan;
pub mod report;
pub(crate) mod retry;
pub mod roll;
pub(crate) mod sentence;
pub mod sim;
pub(crate) mod simulated;
