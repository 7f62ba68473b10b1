//! Auto Scaling through the real adapter (over the simulator or moto)
//! with one thing changed for a test: the first terminations answering
//! 503, or no instance refreshes (moto has none: it answers 500).

use std::sync::atomic::{AtomicU32, Ordering};

use crate::aws::AwsAutoScaling;
use crate::roll::ports::auto_scaling::{
    AlarmState, AutoScaling, AutoScalingError, AutoScalingGroup, Ec2Instance, GroupTag,
    InstanceRefresh, LaunchSource, LifecycleActionCompletion, LifecycleActionResult, LifecycleHook,
    ScalingActivity, ScalingProcess, Termination, TerminationRequest, WarmPool,
};

pub(super) struct WrappedAws<'a> {
    pub(super) aws: &'a AwsAutoScaling,
    /// The first this many terminations answer 503 (after reading the
    /// group, as the adapter does): the group is read fine each tick
    /// while the termination keeps failing.
    pub(super) failing_terminations: AtomicU32,
    /// Instance refreshes answered as none.
    pub(super) no_refreshes: bool,
}

impl<'a> WrappedAws<'a> {
    /// `aws` with the first `n` terminations failing.
    pub(super) fn failing_terminations(aws: &'a AwsAutoScaling, n: u32) -> WrappedAws<'a> {
        WrappedAws {
            aws,
            failing_terminations: AtomicU32::new(n),
            no_refreshes: false,
        }
    }

    /// `aws` answering no instance refresh (a group none was started on).
    pub(super) fn without_refreshes(aws: &'a AwsAutoScaling) -> WrappedAws<'a> {
        WrappedAws {
            aws,
            failing_terminations: AtomicU32::new(0),
            no_refreshes: true,
        }
    }
}

impl AutoScaling for WrappedAws<'_> {
    async fn describe_group(&self, group: &str) -> Result<AutoScalingGroup, AutoScalingError> {
        self.aws.describe_group(group).await
    }
    async fn groups_tagged(&self, key: &str) -> Result<Vec<AutoScalingGroup>, AutoScalingError> {
        self.aws.groups_tagged(key).await
    }
    async fn set_desired_capacity(
        &self,
        group: &str,
        desired: u32,
    ) -> Result<(), AutoScalingError> {
        self.aws.set_desired_capacity(group, desired).await
    }
    async fn terminate_instance(
        &self,
        group: &str,
        instance: &str,
    ) -> Result<Termination, AutoScalingError> {
        let left = self.failing_terminations.load(Ordering::SeqCst);
        if left > 0 {
            self.failing_terminations.store(left - 1, Ordering::SeqCst);
            return Err(AutoScalingError::Unavailable {
                operation: "TerminateInstanceInAutoScalingGroup",
                target: group.to_string(),
                message: "503 (a test's fault)".to_string(),
            });
        }
        self.aws.terminate_instance(group, instance).await
    }
    async fn terminate_and_replace(
        &self,
        group: &str,
        instance: &str,
    ) -> Result<Termination, AutoScalingError> {
        self.aws.terminate_and_replace(group, instance).await
    }
    /// One at a time through the two above (the failing ones fail here
    /// too), stopping at the first error.
    async fn terminate_many(
        &self,
        group: &str,
        requests: &[TerminationRequest<'_>],
    ) -> Vec<Result<Termination, AutoScalingError>> {
        let mut answers = Vec::new();
        for r in requests {
            let answer = if r.replace {
                self.terminate_and_replace(group, r.instance).await
            } else {
                self.terminate_instance(group, r.instance).await
            };
            let failed = answer.is_err();
            answers.push(answer);
            if failed {
                break;
            }
        }
        answers
    }
    async fn suspend_processes(
        &self,
        group: &str,
        processes: &[ScalingProcess],
    ) -> Result<(), AutoScalingError> {
        self.aws.suspend_processes(group, processes).await
    }
    async fn resume_processes(
        &self,
        group: &str,
        processes: &[ScalingProcess],
    ) -> Result<(), AutoScalingError> {
        self.aws.resume_processes(group, processes).await
    }
    async fn update_size_limits(
        &self,
        group: &str,
        min: u32,
        max: u32,
    ) -> Result<(), AutoScalingError> {
        self.aws.update_size_limits(group, min, max).await
    }
    async fn set_launch_source(
        &self,
        group: &str,
        source: &LaunchSource,
    ) -> Result<(), AutoScalingError> {
        self.aws.set_launch_source(group, source).await
    }
    async fn put_tags(&self, group: &str, tags: &[GroupTag]) -> Result<(), AutoScalingError> {
        self.aws.put_tags(group, tags).await
    }
    async fn delete_tags(&self, group: &str, keys: &[String]) -> Result<(), AutoScalingError> {
        self.aws.delete_tags(group, keys).await
    }
    async fn exit_standby(
        &self,
        group: &str,
        instances: &[String],
    ) -> Result<(), AutoScalingError> {
        self.aws.exit_standby(group, instances).await
    }
    async fn instance_refreshes(
        &self,
        group: &str,
    ) -> Result<Vec<InstanceRefresh>, AutoScalingError> {
        if self.no_refreshes {
            return Ok(Vec::new());
        }
        self.aws.instance_refreshes(group).await
    }
    async fn scaling_activities(
        &self,
        group: &str,
        limit: usize,
    ) -> Result<Vec<ScalingActivity>, AutoScalingError> {
        self.aws.scaling_activities(group, limit).await
    }
    async fn lifecycle_hooks(&self, group: &str) -> Result<Vec<LifecycleHook>, AutoScalingError> {
        self.aws.lifecycle_hooks(group).await
    }
    async fn complete_lifecycle_action(
        &self,
        group: &str,
        hook: &str,
        instance: &str,
        result: LifecycleActionResult,
    ) -> Result<LifecycleActionCompletion, AutoScalingError> {
        self.aws
            .complete_lifecycle_action(group, hook, instance, result)
            .await
    }
    async fn warm_pool(&self, group: &str) -> Result<Option<WarmPool>, AutoScalingError> {
        self.aws.warm_pool(group).await
    }
    async fn terminate_warm_instance(
        &self,
        group: &str,
        instance: &str,
    ) -> Result<Termination, AutoScalingError> {
        self.aws.terminate_warm_instance(group, instance).await
    }
    async fn describe_instances(
        &self,
        ids: &[String],
    ) -> Result<Vec<Ec2Instance>, AutoScalingError> {
        self.aws.describe_instances(ids).await
    }

    async fn describe_alarms(&self, names: &[String]) -> Result<Vec<AlarmState>, AutoScalingError> {
        self.aws.describe_alarms(names).await
    }
}
