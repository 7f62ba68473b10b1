//! How the AWS adapter finds AWS: region, profile and credentials from the
//! standard chain (environment, profile, SSO, IMDS), an optional endpoint
//! (moto, the simulator), and the timeouts and retry bounds the SDK lacks
//! by default.

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, ConfigLoader, Region};
use aws_sdk_autoscaling::config::ProvideCredentials;

use super::client::AwsAutoScaling;
use super::error::AwsError;

/// What the user chose (flags, env file); `None` means "the standard chain
/// decides".
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AwsSettings {
    /// `--region`; else `AWS_REGION`, the profile, IMDS.
    pub(crate) region: Option<String>,
    /// `--profile`; else `AWS_PROFILE`, else `default`.
    pub(crate) profile: Option<String>,
    /// An explicit endpoint for both services (the env file's
    /// `aws_endpoint_url`). Without it aws-config still honours
    /// `AWS_ENDPOINT_URL` (and `AWS_ENDPOINT_URL_AUTO_SCALING` /
    /// `AWS_ENDPOINT_URL_EC2`) and a profile's `endpoint_url`.
    pub(crate) endpoint_url: Option<String>,
    pub(crate) timeouts: AwsTimeouts,
    /// Attempts per call, the first included (SDK standard retry mode:
    /// throttling, 5xx and connection errors, with jittered backoff).
    pub(crate) max_attempts: u32,
    /// Records per page of describe calls; `None` asks for AWS's maximum.
    /// Small values exist so tests can cross page boundaries.
    pub(crate) page_size: Option<u32>,
}

/// The SDK sets none of these by default: a server that accepts and never
/// answers would hang a call forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AwsTimeouts {
    pub(crate) connect: Duration,
    /// Longest silence while reading a response.
    pub(crate) read: Duration,
    /// One attempt, end to end.
    pub(crate) attempt: Duration,
    /// One call, all attempts and backoff included.
    pub(crate) operation: Duration,
}

impl Default for AwsTimeouts {
    fn default() -> AwsTimeouts {
        AwsTimeouts {
            connect: Duration::from_secs(3),
            read: Duration::from_secs(10),
            attempt: Duration::from_secs(15),
            operation: Duration::from_secs(45),
        }
    }
}

impl Default for AwsSettings {
    fn default() -> AwsSettings {
        AwsSettings {
            region: None,
            profile: None,
            endpoint_url: None,
            timeouts: AwsTimeouts::default(),
            max_attempts: 4,
            page_size: None,
        }
    }
}

impl AwsSettings {
    /// The aws-config loader with these settings applied; credentials and
    /// anything left `None` come from the standard chain when it loads.
    pub(crate) fn loader(&self) -> ConfigLoader {
        let t = &self.timeouts;
        let mut loader = aws_config::defaults(BehaviorVersion::latest())
            .timeout_config(
                TimeoutConfig::builder()
                    .connect_timeout(t.connect)
                    .read_timeout(t.read)
                    .operation_attempt_timeout(t.attempt)
                    .operation_timeout(t.operation)
                    .build(),
            )
            .retry_config(
                RetryConfig::standard()
                    .with_max_attempts(self.max_attempts.max(1))
                    .with_initial_backoff(Duration::from_millis(200))
                    .with_max_backoff(Duration::from_secs(5)),
            );
        if let Some(region) = &self.region {
            loader = loader.region(Region::new(region.clone()));
        }
        if let Some(profile) = &self.profile {
            loader = loader.profile_name(profile);
        }
        if let Some(url) = &self.endpoint_url {
            loader = loader.endpoint_url(url);
        }
        loader
    }

    /// Loads the configuration and resolves credentials once, so a missing
    /// region or broken credentials fail here, at startup, with a clear
    /// message rather than at the first write of a roll. With credentials
    /// in the environment the chain stops there and never asks IMDS.
    pub(crate) async fn connect(&self) -> Result<AwsAutoScaling, AwsError> {
        if let Some(url) = &self.endpoint_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(AwsError::Config {
                message: format!("endpoint URL '{url}' must start with http:// or https://"),
            });
        }
        let sdk = self.loader().load().await;
        if sdk.region().is_none() {
            return Err(AwsError::Config {
                message:
                    "no AWS region: pass --region, set AWS_REGION or give the profile a region"
                        .to_string(),
            });
        }
        let Some(provider) = sdk.credentials_provider() else {
            return Err(AwsError::Credentials {
                operation: "LoadCredentials",
                message: "no credentials provider configured".to_string(),
            });
        };
        match tokio::time::timeout(self.timeouts.operation, provider.provide_credentials()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                return Err(AwsError::Credentials {
                    operation: "LoadCredentials",
                    message: crate::sentence::sentence(&e),
                });
            }
            Err(_) => {
                return Err(AwsError::Credentials {
                    operation: "LoadCredentials",
                    message: format!(
                        "no credentials within {:?} (env, profile, SSO and IMDS tried)",
                        self.timeouts.operation
                    ),
                });
            }
        }
        Ok(AwsAutoScaling::new(&sdk, self.page_size))
    }
}

/// A client for a simulated AWS at `endpoint_url` (the built-in
/// simulator), with fixed dummy credentials, region and endpoint given in
/// code: they win over any `AWS_*` variable or profile, so the client can
/// never sign for, or reach, a real account.
pub async fn simulated_client(endpoint_url: &str, region: &str) -> AwsAutoScaling {
    let credentials = aws_sdk_autoscaling::config::Credentials::new(
        "simulated",
        "simulated",
        None,
        None,
        "roller-simulator",
    );
    let settings = AwsSettings {
        region: Some(region.to_string()),
        endpoint_url: Some(endpoint_url.to_string()),
        ..AwsSettings::default()
    };
    let sdk = settings
        .loader()
        .credentials_provider(credentials)
        .load()
        .await;
    AwsAutoScaling::new(&sdk, None)
}
