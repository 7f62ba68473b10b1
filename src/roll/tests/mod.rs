//! Whole rolls, in process: roller's real clients against the simulator on
//! loopback, on paused tokio time (hours of cluster time in about a second),
//! checked against the simulator's ground truth.

mod abandon;
mod alarms;
mod bad_image;
mod cluster;
mod cluster_roll;
mod drain;
mod eta;
mod failure_limit;
mod faults;
mod held;
mod hooks;
pub(crate) mod in_process;
mod mixed_instances;
mod moto;
mod other_tasks;
mod preflight;
mod production;
mod reclaim;
mod refresh;
mod rollback;
mod sdk_services;
mod single_instance;
mod surge;
mod surge_cap;
mod warm_pool;
mod wrapped_aws;
