//! The lifecycle-hook calls of the `AutoScaling` port over the SDK:
//! DescribeLifecycleHooks (what holds the group's instances in
//! `Pending:Wait` / `Terminating:Wait`) and CompleteLifecycleAction (ending
//! a wait roller owns). AWS answers a completion no action waits for with
//! a ValidationError ("No active Lifecycle Action found …"): read here as
//! `NotWaiting`, so that completing again after a crash is no failure.

use std::time::Duration;

use super::client::AwsAutoScaling;
use super::error::AwsError;
use crate::roll::ports::auto_scaling::{
    HookTransition, LifecycleActionCompletion, LifecycleActionResult, LifecycleHook,
};

/// What AWS says when no lifecycle action waits for the instance (done,
/// timed out, never begun).
const NO_ACTIVE_ACTION: &str = "No active Lifecycle Action found";

impl AwsAutoScaling {
    pub(super) async fn describe_lifecycle_hooks(
        &self,
        group: &str,
    ) -> Result<Vec<LifecycleHook>, AwsError> {
        const OP: &str = "DescribeLifecycleHooks";
        // One page: AWS allows 50 hooks per group and answers them all.
        let out = self
            .asg
            .describe_lifecycle_hooks()
            .auto_scaling_group_name(group)
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, group, e))?;
        out.lifecycle_hooks()
            .iter()
            .map(|h| {
                let name = h.lifecycle_hook_name().ok_or_else(|| {
                    AwsError::bad_response(OP, group, "a lifecycle hook without a name")
                })?;
                let transition = h.lifecycle_transition().ok_or_else(|| {
                    AwsError::bad_response(
                        OP,
                        group,
                        format!("lifecycle hook {name} without LifecycleTransition"),
                    )
                })?;
                let heartbeat_timeout = h
                    .heartbeat_timeout()
                    .and_then(|s| u64::try_from(s).ok())
                    .map_or(
                        LifecycleHook::DEFAULT_HEARTBEAT_TIMEOUT,
                        Duration::from_secs,
                    );
                // AWS's default is ABANDON; an unknown spelling is read as
                // ABANDON too (for a termination both end the same).
                let default_result = h
                    .default_result()
                    .and_then(LifecycleActionResult::parse)
                    .unwrap_or(LifecycleActionResult::Abandon);
                Ok(LifecycleHook {
                    name: name.to_string(),
                    transition: HookTransition::parse(transition),
                    heartbeat_timeout,
                    default_result,
                })
            })
            .collect()
    }

    /// One CompleteLifecycleAction by instance id.
    pub(super) async fn send_complete_lifecycle_action(
        &self,
        group: &str,
        hook: &str,
        instance: &str,
        result: LifecycleActionResult,
    ) -> Result<LifecycleActionCompletion, AwsError> {
        const OP: &str = "CompleteLifecycleAction";
        let sent = self
            .asg
            .complete_lifecycle_action()
            .auto_scaling_group_name(group)
            .lifecycle_hook_name(hook)
            .instance_id(instance)
            .lifecycle_action_result(result.as_str())
            .send()
            .await;
        match sent {
            Ok(_) => Ok(LifecycleActionCompletion::Completed),
            Err(e) => match AwsError::from_sdk(OP, instance, e) {
                AwsError::Validation { message, .. } if message.contains(NO_ACTIVE_ACTION) => {
                    Ok(LifecycleActionCompletion::NotWaiting)
                }
                other => Err(other),
            },
        }
    }
}
