//! The warm-pool calls of the `AutoScaling` port over the SDK:
//! DescribeWarmPool (the pool's configuration and its instances, paged by
//! NextToken) and the termination of a warm instance
//! (TerminateInstanceInAutoScalingGroup without decrement: AWS's own way
//! to "force replacement warm pool instances to launch that use the new
//! launch template", user guide, "Updating instances in a warm pool").

use super::client::{AwsAutoScaling, next_token};
use super::error::AwsError;
use super::launch_source;
use crate::retry::{Backoff, retry};
use crate::roll::ports::auto_scaling::{
    AutoScaling, LifecycleState, Termination, WarmInstance, WarmPool,
};

/// DescribeWarmPool's page maximum ("The maximum value is 50").
const MAX_WARM_PAGE: u32 = 50;

impl AwsAutoScaling {
    pub(super) async fn describe_warm_pool(
        &self,
        group: &str,
    ) -> Result<Option<WarmPool>, AwsError> {
        const OP: &str = "DescribeWarmPool";
        let mut pool: Option<WarmPool> = None;
        let mut token: Option<String> = None;
        loop {
            let sent = self
                .asg
                .describe_warm_pool()
                .auto_scaling_group_name(group)
                .max_records(self.page(MAX_WARM_PAGE, 1))
                .set_next_token(token.clone())
                .send()
                .await;
            let out = match sent {
                Ok(out) => out,
                Err(e) => {
                    let err = AwsError::from_sdk(OP, group, e);
                    // An unknown group: say so as every other call does
                    // (moto answers it with a server error).
                    self.describe_group(group).await?;
                    return Err(err);
                }
            };
            let Some(config) = out.warm_pool_configuration() else {
                // No pool: AWS answers without a configuration.
                return Ok(None);
            };
            let pool = pool.get_or_insert_with(|| WarmPool {
                pool_state: config
                    .pool_state()
                    .map_or("Stopped", |s| s.as_str())
                    .to_string(),
                min_size: config
                    .min_size()
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(0),
                max_group_prepared_capacity: config
                    .max_group_prepared_capacity()
                    .and_then(|n| u32::try_from(n).ok()),
                status: config.status().map(|s| s.as_str().to_string()),
                instances: Vec::new(),
            });
            for i in out.instances() {
                let id = i.instance_id().ok_or_else(|| {
                    AwsError::bad_response(OP, group, "a warm instance without InstanceId")
                })?;
                pool.instances.push(WarmInstance {
                    id: id.to_string(),
                    lifecycle_state: LifecycleState::parse(
                        i.lifecycle_state().map(|s| s.as_str()).unwrap_or_default(),
                    ),
                    launch_source: launch_source::instance_source(
                        i.launch_template(),
                        i.launch_configuration_name(),
                    ),
                    instance_type: i.instance_type().map(str::to_string),
                });
            }
            token = next_token(OP, group, token.as_deref(), out.next_token())?;
            if token.is_none() {
                return Ok(Some(pool.clone()));
            }
        }
    }

    /// One warm instance terminated, checked first and looked at again
    /// when the answer is lost, as a group instance's termination is.
    pub(super) async fn terminate_warm(
        &self,
        group: &str,
        instance: &str,
    ) -> Result<Termination, AwsError> {
        let in_pool = |pool: &Option<WarmPool>| {
            pool.as_ref().is_some_and(|p| {
                p.instances
                    .iter()
                    .any(|i| i.id == instance && !i.is_leaving())
            })
        };
        if !in_pool(&self.warm_pool(group).await?) {
            return Ok(Termination::AlreadyGone);
        }
        let sent = retry(Backoff::DEFAULT, AwsError::proves_not_acted_upon, || {
            self.send_terminate(instance, false)
        })
        .await;
        match sent {
            Ok(activity) => Ok(Termination::Started(activity)),
            Err(err) => match self.warm_pool(group).await {
                Ok(now) if !in_pool(&now) => Ok(Termination::AlreadyGone),
                _ => Err(err),
            },
        }
    }
}
