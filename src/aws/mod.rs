//! The AWS adapter: the `AutoScaling` port (`crate::roll::ports::auto_scaling`)
//! over aws-sdk-autoscaling, aws-sdk-ec2 and aws-sdk-cloudwatch.
//!
//! - `config`: region, profile, credentials chain, endpoint, timeouts, retries.
//! - `client`: the port's operations, each checked against the group first.
//! - `lifecycle_hooks`: DescribeLifecycleHooks, CompleteLifecycleAction.
//! - `alarms`: DescribeAlarms (CloudWatch, on the same endpoint).
//! - `warm_pool`: DescribeWarmPool, a warm instance's termination.
//! - `call_meter`: counts every request sent (for `/metrics`).
//! - `error`: `AwsError` and the mapping from SDK errors.
//! - `group_instances`: a group's instances read from DescribeAutoScalingGroups'
//!   answer without the SDK's XML decoder (4,000 of them every tick at
//!   2,000 agents).
//! - `launch_source`: templates, launch configurations and mixed instances
//!   policies between the SDK and the port.
//! - `s3_checkpoint`: the checkpoint as an S3 object with conditional
//!   writes (`--checkpoint s3://bucket/key`).
//!
//! Tests: `contract` runs the adapter's protocol tests against moto and
//! the simulator alike; `moto_tests` holds what only moto shows; `tests`
//! what needs neither. Those against moto need `scripts/with-moto cargo
//! test aws`.

mod alarms;
mod call_meter;
mod client;
mod config;
mod error;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) mod fuzz;
mod group_instances;
mod launch_source;
mod lifecycle_hooks;
mod s3_checkpoint;
mod warm_pool;

#[cfg(test)]
pub(crate) mod contract;
#[cfg(test)]
mod moto_tests;
#[cfg(test)]
pub(crate) mod tests;

pub use client::AwsAutoScaling;
pub(crate) use config::AwsSettings;
#[cfg(test)]
pub(crate) use config::AwsTimeouts;
pub use config::simulated_client;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use error::AwsError;
pub(crate) use s3_checkpoint::{S3Checkpoint, S3Location};
