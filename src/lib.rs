//! roller: replaces every node of a Mesos cluster in an AWS Auto Scaling
//! group without an outage, as a plan that can be paused and resumed.
//!
//! - `plan`: the plan engine (pure data and rules).
//! - `atomic_file`: crash-safe replacement of files on disk.
//! - `cli`: the command line, from arguments to exit codes.
//! - `demo`: the walkthrough behind `roller demo`.

pub mod atomic_file;
pub mod cli;
pub mod demo;
pub mod plan;
