//! The AWS adapter: the `AutoScaling` port (`crate::roll::ports::auto_scaling`)
//! over aws-sdk-autoscaling and aws-sdk-ec2.
//!
//! - `config`: region, profile, credentials chain, endpoint, timeouts, retries.
//! - `client`: the port's operations, each checked against the group first.
//! - `error`: `AwsError` and the mapping from SDK errors.
//!
//! Tests against moto need `scripts/with-moto cargo test aws`.

mod client;
mod config;
mod error;

#[cfg(test)]
mod moto_tests;
#[cfg(test)]
mod tests;

pub use client::AwsAutoScaling;
pub use config::{AwsSettings, AwsTimeouts, simulated_client};
pub use error::AwsError;
