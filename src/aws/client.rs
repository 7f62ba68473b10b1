//! `AwsAutoScaling`: the `AutoScaling` port over the AWS SDK (Auto Scaling
//! for the group, EC2 for addresses). Each write checks the group first and
//! refuses what real AWS would refuse, even where a mock would accept it.
//! A termination checks its one instance, and the sizes the group had when
//! last described less the decrements sent since (`Sizes`): a drain
//! terminates hundreds of instances a tick, and describing a group of
//! thousands before each made the roll wait for roller. Terminations sent
//! together (`terminate_many`) check their instances together, fifty to a
//! DescribeAutoScalingInstances.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use aws_config::SdkConfig;
use aws_config::retry::RetryConfig;
use aws_config::stalled_stream_protection::StalledStreamProtectionConfig;
use aws_sdk_autoscaling::operation::describe_auto_scaling_groups::DescribeAutoScalingGroupsOutput;
use aws_sdk_autoscaling::operation::describe_auto_scaling_groups::builders::DescribeAutoScalingGroupsFluentBuilder;
use aws_sdk_autoscaling::types as asg;
use aws_sdk_ec2::types as ec2;

use super::call_meter::CallMeter;
use super::error::AwsError;
use super::group_instances::{InstanceFields, InstancesRead};
use super::launch_source;
use crate::retry::{Backoff, retry};
use crate::roll::ports::auto_scaling::TerminationRequest;
use crate::roll::ports::auto_scaling::{
    AlarmState, AutoScaling, AutoScalingGroup, Ec2Instance, GroupInstance, GroupTag,
    InstanceRefresh, LaunchSource, LifecycleActionCompletion, LifecycleActionResult, LifecycleHook,
    LifecycleState, MaintenancePolicy, ScalingActivity, ScalingProcess, Termination, WarmPool,
};
use crate::roll::ports::mixed_instances::TemplateRef;

/// AWS's page maxima: DescribeAutoScalingGroups 100,
/// DescribeScalingActivities 100, DescribeInstances 1000 (minimum 5).
const MAX_GROUP_PAGE: u32 = 100;
const MAX_ACTIVITY_PAGE: u32 = 100;
const MAX_REFRESH_PAGE: u32 = 100;
const MAX_INSTANCE_PAGE: u32 = 1000;
const MIN_INSTANCE_PAGE: u32 = 5;
/// Instance ids per DescribeInstances filter (AWS caps filter values at 200).
const IDS_PER_REQUEST: usize = 100;
/// Instance ids per DescribeAutoScalingInstances (AWS's most, and its
/// page's).
const INSTANCES_PER_DESCRIBE: usize = 50;
/// Terminations in flight at once, after their instances are checked
/// together: each is a call of its own (AWS has no batch of them).
const TERMINATIONS_AT_ONCE: usize = 8;

#[derive(Clone, Debug)]
pub struct AwsAutoScaling {
    pub(super) asg: aws_sdk_autoscaling::Client,
    /// The same client with the SDK's retries off, for the calls that
    /// must never be resent blindly (a termination): built once, where a
    /// per-call override rebuilt the client's configuration every call.
    asg_once: aws_sdk_autoscaling::Client,
    ec2: aws_sdk_ec2::Client,
    pub(super) cloudwatch: aws_sdk_cloudwatch::Client,
    page_size: Option<u32>,
    /// Each group's sizes as last described, less the decrements this
    /// client sent since; forgotten by a write that may move them
    /// otherwise (new limits, instances out of Standby) or a termination
    /// that failed.
    sizes: Arc<Mutex<HashMap<String, Sizes>>>,
    /// DescribeAutoScalingInstances was refused for access (a policy
    /// written before roller called it): terminations describe the group
    /// instead for the rest of the process, as they did before, and the
    /// refusal is logged once.
    instances_refused: Arc<AtomicBool>,
    /// A group's instances are read by `InstancesRead`, not the SDK's
    /// decoder (off only in the tests that compare the two).
    pub(super) reads_instances: bool,
}

/// What a termination with decrement checks of its group: AWS refuses a
/// desired capacity below MinSize (moto performs it).
#[derive(Clone, Copy, Debug)]
struct Sizes {
    min: u32,
    desired: u32,
}

impl AwsAutoScaling {
    /// The clients leave the SDK's stalled-stream protection off: every
    /// call here answers a small body read whole within the attempt, so
    /// the attempt timeout (15 s by default) ends a stalled answer before
    /// the protection's 20 s grace would, and the protection's watch of
    /// each body cost about a tenth of a millisecond of CPU a call (a
    /// drain at 2,000 agents sends two thousand terminations). The S3
    /// checkpoint store, which streams, keeps it.
    pub(crate) fn new(sdk: &SdkConfig, page_size: Option<u32>) -> AwsAutoScaling {
        AwsAutoScaling {
            asg: aws_sdk_autoscaling::Client::from_conf(
                aws_sdk_autoscaling::config::Builder::from(sdk)
                    .interceptor(CallMeter)
                    .stalled_stream_protection(StalledStreamProtectionConfig::disabled())
                    .build(),
            ),
            asg_once: aws_sdk_autoscaling::Client::from_conf(
                aws_sdk_autoscaling::config::Builder::from(sdk)
                    .interceptor(CallMeter)
                    .retry_config(RetryConfig::disabled())
                    .stalled_stream_protection(StalledStreamProtectionConfig::disabled())
                    .build(),
            ),
            ec2: aws_sdk_ec2::Client::from_conf(
                aws_sdk_ec2::config::Builder::from(sdk)
                    .interceptor(CallMeter)
                    .stalled_stream_protection(StalledStreamProtectionConfig::disabled())
                    .build(),
            ),
            cloudwatch: aws_sdk_cloudwatch::Client::from_conf(
                aws_sdk_cloudwatch::config::Builder::from(sdk)
                    .interceptor(CallMeter)
                    .stalled_stream_protection(
                        aws_sdk_cloudwatch::config::StalledStreamProtectionConfig::disabled(),
                    )
                    .build(),
            ),
            page_size,
            sizes: Arc::default(),
            instances_refused: Arc::default(),
            reads_instances: true,
        }
    }

    fn remembered(&self, group: &str) -> Option<Sizes> {
        self.sizes.lock().ok()?.get(group).copied()
    }

    /// Keeps `group`'s sizes (`None`: forgets them).
    fn remember(&self, group: &str, sizes: Option<Sizes>) {
        if let Ok(mut all) = self.sizes.lock() {
            match sizes {
                Some(sizes) => all.insert(group.to_string(), sizes),
                None => all.remove(group),
            };
        }
    }

    /// Takes one off `group`'s desired capacity as remembered, for a
    /// termination with decrement about to be sent; refused (the desired
    /// capacity and MinSize) when that would fall below MinSize, which AWS
    /// refuses and moto performs. One lock for the check and the decrement:
    /// terminations sent at once each count the others'. `found` is what
    /// this termination's check read; the lower desired capacity of it and
    /// the remembered one is taken (the remembered one is lower while
    /// decrements sent are not applied yet; a fresh read is lower after
    /// someone else's).
    fn reserve_decrement(&self, group: &str, found: Sizes) -> Result<(), (u32, u32)> {
        let mut all = match self.sizes.lock() {
            Ok(all) => all,
            Err(poisoned) => poisoned.into_inner(),
        };
        let now = match all.get(group) {
            Some(kept) => Sizes {
                min: kept.min.max(found.min),
                desired: kept.desired.min(found.desired),
            },
            None => found,
        };
        if now.desired == 0 || now.desired - 1 < now.min {
            return Err((now.desired, now.min));
        }
        all.insert(
            group.to_string(),
            Sizes {
                desired: now.desired - 1,
                ..now
            },
        );
        Ok(())
    }

    /// The lifecycle state of each of `instances` that `group` has (one
    /// DescribeAutoScalingInstances per `INSTANCES_PER_DESCRIBE` of them);
    /// those it does not have are left out.
    async fn instance_states(
        &self,
        group: &str,
        instances: &[&str],
    ) -> Result<HashMap<String, LifecycleState>, AwsError> {
        const OP: &str = "DescribeAutoScalingInstances";
        let mut states = HashMap::new();
        for some in instances.chunks(INSTANCES_PER_DESCRIBE) {
            let target = some.first().copied().unwrap_or(group);
            let mut token: Option<String> = None;
            loop {
                let out = self
                    .asg
                    .describe_auto_scaling_instances()
                    .set_instance_ids(Some(some.iter().map(|i| i.to_string()).collect()))
                    .max_records(INSTANCES_PER_DESCRIBE as i32)
                    .set_next_token(token.clone())
                    .send()
                    .await
                    .map_err(|e| AwsError::from_sdk(OP, target, e))?;
                for i in out.auto_scaling_instances() {
                    if let (Some(id), Some(g)) = (i.instance_id(), i.auto_scaling_group_name())
                        && g == group
                        && some.contains(&id)
                    {
                        let state = LifecycleState::parse(i.lifecycle_state().unwrap_or_default());
                        states.insert(id.to_string(), state);
                    }
                }
                token = next_token(OP, target, token.as_deref(), out.next_token())?;
                if token.is_none() {
                    break;
                }
            }
        }
        Ok(states)
    }

    /// The sizes a termination of `instances` checks, with those of them
    /// the group still has in service: the remembered sizes and the
    /// instances themselves when this client described the group before,
    /// else (or when the policy refuses DescribeAutoScalingInstances) the
    /// whole group.
    async fn termination_check(
        &self,
        group: &str,
        instances: &[&str],
    ) -> Result<(Sizes, HashSet<String>), AwsError> {
        let remembered = if self.instances_refused.load(Ordering::Relaxed) {
            None
        } else {
            self.remembered(group)
        };
        if let Some(sizes) = remembered {
            match self.instance_states(group, instances).await {
                Ok(states) => {
                    let present = states
                        .into_iter()
                        .filter(|(_, state)| !state.is_leaving())
                        .map(|(id, _)| id)
                        .collect();
                    return Ok((sizes, present));
                }
                Err(AwsError::AccessDenied { code, .. }) => self.note_instances_refused(&code),
                Err(err) => return Err(err),
            }
        }
        let g = self.group_for_write(group).await?;
        let present = instances
            .iter()
            .filter(|id| {
                g.instance(id)
                    .is_some_and(|i| !i.lifecycle_state.is_leaving())
            })
            .map(|id| id.to_string())
            .collect();
        let sizes = Sizes {
            min: g.min_size,
            desired: g.desired_capacity,
        };
        Ok((sizes, present))
    }

    /// The policy lacks `autoscaling:DescribeAutoScalingInstances`: a
    /// roll must not stop for a permission it can do without, so every
    /// termination from now on describes the whole group, and the operator
    /// is told once what to add.
    fn note_instances_refused(&self, code: &str) {
        if !self.instances_refused.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "DescribeAutoScalingInstances was refused ({code}): each termination now \
                 describes the whole group instead, which is only slower; add \
                 autoscaling:DescribeAutoScalingInstances to roller's IAM policy \
                 (docs/reference.md#aws-permissions)"
            );
        }
    }

    pub(super) fn page(&self, max: u32, min: u32) -> i32 {
        let n = self.page_size.unwrap_or(max).clamp(min, max);
        i32::try_from(n).unwrap_or(i32::MAX)
    }

    /// The group as the SDK reads it, across pages (what a write sends
    /// back, a mixed instances policy, is taken from here), and its
    /// instances where `InstancesRead` read them instead of the SDK (the
    /// SDK's group then has none).
    pub(super) async fn describe_raw(
        &self,
        group: &str,
    ) -> Result<(asg::AutoScalingGroup, Option<Vec<GroupInstance>>), AwsError> {
        const OP: &str = "DescribeAutoScalingGroups";
        let mut token: Option<String> = None;
        loop {
            let read = InstancesRead::default();
            let call = self
                .asg
                .describe_auto_scaling_groups()
                .auto_scaling_group_names(group)
                .max_records(self.page(MAX_GROUP_PAGE, 1))
                .set_next_token(token.clone());
            let out = self.send_describe(call, &read, group).await?;
            let found = out.auto_scaling_groups.unwrap_or_default();
            let mut read = read_groups(OP, group, read.take(), found.len())?;
            // Taken out of the answer, not cloned: at 2,000 agents the
            // group holds 4,000 instances, read every tick.
            if let Some((n, found)) = found
                .into_iter()
                .enumerate()
                .find(|(_, g)| g.auto_scaling_group_name() == Some(group))
            {
                let instances = read.as_mut().map(|groups| std::mem::take(&mut groups[n]));
                return Ok((found, instances));
            }
            token = next_token(OP, group, token.as_deref(), out.next_token.as_deref())?;
            if token.is_none() {
                // AWS answers an unknown name with an empty list.
                return Err(AwsError::GroupNotFound {
                    operation: OP,
                    group: group.to_string(),
                });
            }
        }
    }

    /// Sends a DescribeAutoScalingGroups with `read` reading the groups'
    /// instances (unless the SDK is to decode all of it).
    async fn send_describe(
        &self,
        call: DescribeAutoScalingGroupsFluentBuilder,
        read: &InstancesRead,
        target: &str,
    ) -> Result<DescribeAutoScalingGroupsOutput, AwsError> {
        let sent = if self.reads_instances {
            call.customize().interceptor(read.clone()).send().await
        } else {
            call.send().await
        };
        sent.map_err(|e| AwsError::from_sdk("DescribeAutoScalingGroups", target, e))
    }

    /// Checks before a write: the group exists (clear GroupNotFound even
    /// where the write itself would answer something vaguer).
    async fn group_for_write(&self, group: &str) -> Result<AutoScalingGroup, AwsError> {
        self.describe_group(group).await
    }

    /// One TerminateInstanceInAutoScalingGroup, with the SDK's own retries
    /// off: a retried terminate after a lost answer is exactly the blind
    /// retry a non-idempotent call must not get.
    pub(super) async fn send_terminate(
        &self,
        instance: &str,
        decrement: bool,
    ) -> Result<ScalingActivity, AwsError> {
        const OP: &str = "TerminateInstanceInAutoScalingGroup";
        let out = self
            .asg_once
            .terminate_instance_in_auto_scaling_group()
            .instance_id(instance)
            .should_decrement_desired_capacity(decrement)
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, instance, e))?;
        match out.activity() {
            Some(activity) => activity_from(activity, OP, instance),
            None => Err(AwsError::bad_response(
                OP,
                instance,
                "no Activity in the answer",
            )),
        }
    }
}

impl AwsAutoScaling {
    /// TerminateInstanceInAutoScalingGroup after the group is checked:
    /// an instance gone or leaving is `AlreadyGone`; a decrement below
    /// MinSize is refused here (AWS refuses it; moto performs it).
    async fn terminate(
        &self,
        group: &str,
        instance: &str,
        decrement: bool,
    ) -> Result<Termination, AwsError> {
        let (sizes, present) = self.termination_check(group, &[instance]).await?;
        self.terminate_checked(
            group,
            instance,
            decrement,
            sizes,
            present.contains(instance),
        )
        .await
    }

    /// Terminates `requests` in `group`, their instances checked together
    /// (`INSTANCES_PER_DESCRIBE` to a check), `TERMINATIONS_AT_ONCE` sent at
    /// once. An answer per request in order, as far as the sends went: a
    /// check or a round of sends with an error is the last (its answers
    /// kept, then its first error).
    async fn terminate_all(
        &self,
        group: &str,
        requests: &[TerminationRequest<'_>],
    ) -> Vec<Result<Termination, AwsError>> {
        let mut answers = Vec::with_capacity(requests.len());
        for checked in requests.chunks(INSTANCES_PER_DESCRIBE) {
            let ids: Vec<&str> = checked.iter().map(|r| r.instance).collect();
            let (sizes, present) = match self.termination_check(group, &ids).await {
                Ok(found) => found,
                Err(err) => {
                    answers.push(Err(err));
                    return answers;
                }
            };
            for some in checked.chunks(TERMINATIONS_AT_ONCE) {
                let round = futures_util::future::join_all(some.iter().map(|r| {
                    let here = present.contains(r.instance);
                    self.terminate_checked(group, r.instance, !r.replace, sizes, here)
                }))
                .await;
                let failed = round.iter().any(Result::is_err);
                answers.extend(round);
                if failed {
                    return answers;
                }
            }
        }
        answers
    }

    /// TerminateInstanceInAutoScalingGroup for `instance`, which the
    /// group's check found `present` (in service) or not, with `sizes`.
    async fn terminate_checked(
        &self,
        group: &str,
        instance: &str,
        decrement: bool,
        sizes: Sizes,
        present: bool,
    ) -> Result<Termination, AwsError> {
        const OP: &str = "TerminateInstanceInAutoScalingGroup";
        if !present {
            return Ok(Termination::AlreadyGone);
        }
        if decrement {
            self.reserve_decrement(group, sizes)
                .map_err(|(desired, min)| AwsError::Refused {
                    operation: OP,
                    target: format!("{group}/{instance}"),
                    reason: format!(
                        "desired capacity {desired} − 1 would fall below MinSize {min}; lower MinSize first"
                    ),
                })?;
        }
        let sent = retry(Backoff::DEFAULT, AwsError::proves_not_acted_upon, || {
            self.send_terminate(instance, decrement)
        })
        .await;
        if sent.is_err() {
            self.remember(group, None);
        } else if !decrement && self.remembered(group).is_none() {
            self.remember(group, Some(sizes));
        }
        match sent {
            Ok(activity) => Ok(Termination::Started(activity)),
            Err(err) => {
                // The answer was lost or odd (a timeout, a 5xx, moto's HTML
                // 500 for an instance no group holds, AWS's "not found"):
                // look again instead of guessing or resending.
                match self.describe_group(group).await {
                    Ok(now) if !now.still_has(instance) => Ok(Termination::AlreadyGone),
                    _ => Err(err),
                }
            }
        }
    }
}

impl AutoScaling for AwsAutoScaling {
    async fn describe_group(&self, group: &str) -> Result<AutoScalingGroup, AwsError> {
        let (raw, instances) = self.describe_raw(group).await?;
        let g = group_from(&raw, group, instances)?;
        let sizes = Sizes {
            min: g.min_size,
            desired: g.desired_capacity,
        };
        self.remember(group, Some(sizes));
        Ok(g)
    }

    async fn groups_tagged(&self, key: &str) -> Result<Vec<AutoScalingGroup>, AwsError> {
        const OP: &str = "DescribeAutoScalingGroups";
        let filter = asg::Filter::builder().name("tag-key").values(key).build();
        let mut groups = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let read = InstancesRead::default();
            let call = self
                .asg
                .describe_auto_scaling_groups()
                .filters(filter.clone())
                .max_records(self.page(MAX_GROUP_PAGE, 1))
                .set_next_token(token.clone());
            let out = self.send_describe(call, &read, key).await?;
            let found = out.auto_scaling_groups();
            let mut read = read_groups(OP, key, read.take(), found.len())?.map(Vec::into_iter);
            for found in found {
                let name = found.auto_scaling_group_name().unwrap_or_default();
                let instances = read.as_mut().and_then(Iterator::next);
                groups.push(group_from(found, name, instances)?);
            }
            token = next_token(OP, key, token.as_deref(), out.next_token())?;
            if token.is_none() {
                return Ok(groups);
            }
        }
    }

    async fn set_desired_capacity(&self, group: &str, desired: u32) -> Result<(), AwsError> {
        const OP: &str = "SetDesiredCapacity";
        let g = self.group_for_write(group).await?;
        // AWS refuses these with a ValidationError; moto accepts them.
        if desired > g.max_size || desired < g.min_size {
            return Err(AwsError::Refused {
                operation: OP,
                target: group.to_string(),
                reason: format!(
                    "desired capacity {desired} is outside MinSize {} .. MaxSize {}; change the limits first",
                    g.min_size, g.max_size
                ),
            });
        }
        self.asg
            .set_desired_capacity()
            .auto_scaling_group_name(group)
            .desired_capacity(to_i32(desired))
            .honor_cooldown(false)
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, group, e))?;
        let sizes = Sizes {
            min: g.min_size,
            desired,
        };
        self.remember(group, Some(sizes));
        Ok(())
    }

    async fn terminate_instance(
        &self,
        group: &str,
        instance: &str,
    ) -> Result<Termination, AwsError> {
        self.terminate(group, instance, true).await
    }

    async fn terminate_and_replace(
        &self,
        group: &str,
        instance: &str,
    ) -> Result<Termination, AwsError> {
        self.terminate(group, instance, false).await
    }

    async fn terminate_many(
        &self,
        group: &str,
        requests: &[TerminationRequest<'_>],
    ) -> Vec<Result<Termination, AwsError>> {
        self.terminate_all(group, requests).await
    }

    async fn suspend_processes(
        &self,
        group: &str,
        processes: &[ScalingProcess],
    ) -> Result<(), AwsError> {
        const OP: &str = "SuspendProcesses";
        refuse_empty(OP, group, processes)?;
        self.group_for_write(group).await?;
        self.asg
            .suspend_processes()
            .auto_scaling_group_name(group)
            .set_scaling_processes(Some(names(processes)))
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, group, e))?;
        Ok(())
    }

    async fn resume_processes(
        &self,
        group: &str,
        processes: &[ScalingProcess],
    ) -> Result<(), AwsError> {
        const OP: &str = "ResumeProcesses";
        refuse_empty(OP, group, processes)?;
        self.group_for_write(group).await?;
        self.asg
            .resume_processes()
            .auto_scaling_group_name(group)
            .set_scaling_processes(Some(names(processes)))
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, group, e))?;
        Ok(())
    }

    async fn update_size_limits(&self, group: &str, min: u32, max: u32) -> Result<(), AwsError> {
        const OP: &str = "UpdateAutoScalingGroup";
        let refuse = |reason: String| AwsError::Refused {
            operation: OP,
            target: group.to_string(),
            reason,
        };
        if min > max {
            return Err(refuse(format!("MinSize {min} > MaxSize {max}")));
        }
        let g = self.group_for_write(group).await?;
        // Limits that exclude the desired capacity make AWS move it
        // silently (launching or terminating); the roll moves it itself.
        if g.desired_capacity < min || g.desired_capacity > max {
            return Err(refuse(format!(
                "desired capacity {} is outside the new limits {min} .. {max}; AWS would change it silently",
                g.desired_capacity
            )));
        }
        self.asg
            .update_auto_scaling_group()
            .auto_scaling_group_name(group)
            .min_size(to_i32(min))
            .max_size(to_i32(max))
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, group, e))?;
        self.remember(group, None);
        Ok(())
    }

    async fn set_launch_source(&self, group: &str, source: &LaunchSource) -> Result<(), AwsError> {
        const OP: &str = "UpdateAutoScalingGroup";
        let (raw, _) = self.describe_raw(group).await?;
        let refused = |reason: String| AwsError::Refused {
            operation: OP,
            target: group.to_string(),
            reason,
        };
        // AWS takes a top-level LaunchTemplate on a policy's group as a
        // replacement of the policy: the group's shape would change.
        if let Some(current) = launch_source::group_source(&raw)
            && current.kind() != source.kind()
        {
            return Err(refused(format!(
                "the group launches from a {}, not a {}: roller never changes the kind of a group's launch source",
                current.kind(),
                source.kind()
            )));
        }
        let update = self
            .asg
            .update_auto_scaling_group()
            .auto_scaling_group_name(group);
        let update = match source {
            LaunchSource::Template { id, name, version } => {
                if id.is_none() && name.is_none() {
                    return Err(refused(
                        "a launch template needs an id or a name".to_string(),
                    ));
                }
                update.launch_template(launch_source::template_spec(&TemplateRef {
                    id: id.clone(),
                    name: name.clone(),
                    version: version.clone(),
                }))
            }
            LaunchSource::Configuration { name } => update.launch_configuration_name(name),
            LaunchSource::MixedInstances(wanted) => {
                let Some(current) = raw.mixed_instances_policy() else {
                    return Err(refused(
                        "the group has no mixed instances policy to update".to_string(),
                    ));
                };
                update.mixed_instances_policy(
                    launch_source::policy_update(current, wanted).map_err(refused)?,
                )
            }
        };
        update
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, group, e))?;
        Ok(())
    }

    async fn put_tags(&self, group: &str, tags: &[GroupTag]) -> Result<(), AwsError> {
        const OP: &str = "CreateOrUpdateTags";
        if tags.is_empty() {
            return Ok(());
        }
        self.group_for_write(group).await?;
        let tags = tags
            .iter()
            .map(|t| {
                asg::Tag::builder()
                    .resource_id(group)
                    .resource_type("auto-scaling-group")
                    .key(&t.key)
                    .value(&t.value)
                    .propagate_at_launch(t.propagate_at_launch)
                    .build()
            })
            .collect();
        self.asg
            .create_or_update_tags()
            .set_tags(Some(tags))
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, group, e))?;
        Ok(())
    }

    async fn delete_tags(&self, group: &str, keys: &[String]) -> Result<(), AwsError> {
        const OP: &str = "DeleteTags";
        if keys.is_empty() {
            return Ok(());
        }
        self.group_for_write(group).await?;
        let tags = keys
            .iter()
            .map(|k| {
                asg::Tag::builder()
                    .resource_id(group)
                    .resource_type("auto-scaling-group")
                    .key(k)
                    .build()
            })
            .collect();
        self.asg
            .delete_tags()
            .set_tags(Some(tags))
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, group, e))?;
        Ok(())
    }

    async fn scaling_activities(
        &self,
        group: &str,
        limit: usize,
    ) -> Result<Vec<ScalingActivity>, AwsError> {
        const OP: &str = "DescribeScalingActivities";
        let mut found = Vec::new();
        let mut token: Option<String> = None;
        while found.len() < limit {
            let out = self
                .asg
                .describe_scaling_activities()
                .auto_scaling_group_name(group)
                .max_records(self.page(MAX_ACTIVITY_PAGE, 1))
                .set_next_token(token.clone())
                .send()
                .await
                .map_err(|e| AwsError::from_sdk(OP, group, e))?;
            for a in out.activities() {
                found.push(activity_from(a, OP, group)?);
            }
            token = next_token(OP, group, token.as_deref(), out.next_token())?;
            if token.is_none() {
                break;
            }
        }
        found.truncate(limit);
        if found.is_empty() {
            // An unknown group also has no activities: say which it is.
            self.describe_group(group).await?;
        }
        Ok(found)
    }

    async fn instance_refreshes(&self, group: &str) -> Result<Vec<InstanceRefresh>, AwsError> {
        const OP: &str = "DescribeInstanceRefreshes";
        let mut found = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let out = self
                .asg
                .describe_instance_refreshes()
                .auto_scaling_group_name(group)
                .max_records(self.page(MAX_REFRESH_PAGE, 1))
                .set_next_token(token.clone())
                .send()
                .await
                .map_err(|e| AwsError::from_sdk(OP, group, e))?;
            for r in out.instance_refreshes() {
                let id = r.instance_refresh_id().ok_or_else(|| {
                    AwsError::bad_response(
                        OP,
                        group,
                        "an instance refresh without InstanceRefreshId",
                    )
                })?;
                found.push(InstanceRefresh {
                    id: id.to_string(),
                    status: r
                        .status()
                        .map(|s| s.as_str().to_string())
                        .unwrap_or_default(),
                    start_time: time(r.start_time()),
                });
            }
            token = next_token(OP, group, token.as_deref(), out.next_token())?;
            if token.is_none() {
                return Ok(found);
            }
        }
    }

    async fn lifecycle_hooks(&self, group: &str) -> Result<Vec<LifecycleHook>, AwsError> {
        self.describe_lifecycle_hooks(group).await
    }

    async fn complete_lifecycle_action(
        &self,
        group: &str,
        hook: &str,
        instance: &str,
        result: LifecycleActionResult,
    ) -> Result<LifecycleActionCompletion, AwsError> {
        self.send_complete_lifecycle_action(group, hook, instance, result)
            .await
    }

    async fn exit_standby(&self, group: &str, instances: &[String]) -> Result<(), AwsError> {
        const OP: &str = "ExitStandby";
        let current = self.group_for_write(group).await?;
        let standby: Vec<String> = instances
            .iter()
            .filter(|id| {
                current
                    .instance(id)
                    .is_some_and(|i| i.lifecycle_state == LifecycleState::Standby)
            })
            .cloned()
            .collect();
        if standby.is_empty() {
            return Ok(());
        }
        self.asg
            .exit_standby()
            .auto_scaling_group_name(group)
            .set_instance_ids(Some(standby))
            .send()
            .await
            .map_err(|e| AwsError::from_sdk(OP, group, e))?;
        // AWS raised the desired capacity for them.
        self.remember(group, None);
        Ok(())
    }

    async fn warm_pool(&self, group: &str) -> Result<Option<WarmPool>, AwsError> {
        self.describe_warm_pool(group).await
    }

    async fn terminate_warm_instance(
        &self,
        group: &str,
        instance: &str,
    ) -> Result<Termination, AwsError> {
        self.terminate_warm(group, instance).await
    }

    async fn describe_instances(&self, ids: &[String]) -> Result<Vec<Ec2Instance>, AwsError> {
        const OP: &str = "DescribeInstances";
        let mut found = Vec::new();
        // MaxResults cannot go with InstanceIds, so the ids travel as a
        // filter, which also makes unknown ids absent instead of an error.
        for chunk in ids.chunks(IDS_PER_REQUEST) {
            let target = chunk.join(",");
            let mut token: Option<String> = None;
            loop {
                let out = self
                    .ec2
                    .describe_instances()
                    .filters(
                        ec2::Filter::builder()
                            .name("instance-id")
                            .set_values(Some(chunk.to_vec()))
                            .build(),
                    )
                    .max_results(self.page(MAX_INSTANCE_PAGE, MIN_INSTANCE_PAGE))
                    .set_next_token(token.clone())
                    .send()
                    .await
                    .map_err(|e| AwsError::from_sdk(OP, &target, e))?;
                for reservation in out.reservations() {
                    for i in reservation.instances() {
                        found.push(ec2_instance_from(i, &target)?);
                    }
                }
                token = next_token(OP, &target, token.as_deref(), out.next_token())?;
                if token.is_none() {
                    break;
                }
            }
        }
        Ok(found)
    }

    async fn describe_alarms(&self, names: &[String]) -> Result<Vec<AlarmState>, AwsError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        self.describe_named_alarms(names).await
    }
}

/// The token for the next page, or `None` at the end. A token that comes
/// back unchanged would loop forever: that is a bad response.
pub(super) fn next_token(
    operation: &'static str,
    target: &str,
    previous: Option<&str>,
    next: Option<&str>,
) -> Result<Option<String>, AwsError> {
    match next {
        None | Some("") => Ok(None),
        Some(t) if Some(t) == previous => Err(AwsError::bad_response(
            operation,
            target,
            "the same NextToken came back twice",
        )),
        Some(t) => Ok(Some(t.to_string())),
    }
}

fn refuse_empty(
    operation: &'static str,
    group: &str,
    processes: &[ScalingProcess],
) -> Result<(), AwsError> {
    if processes.is_empty() {
        return Err(AwsError::Refused {
            operation,
            target: group.to_string(),
            reason: "an empty process list means every process to AWS; name the processes"
                .to_string(),
        });
    }
    Ok(())
}

fn names(processes: &[ScalingProcess]) -> Vec<String> {
    processes.iter().map(|p| p.as_str().to_string()).collect()
}

fn to_i32(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

fn size(
    operation: &'static str,
    group: &str,
    field: &str,
    v: Option<i32>,
) -> Result<u32, AwsError> {
    v.and_then(|n| u32::try_from(n).ok()).ok_or_else(|| {
        AwsError::bad_response(operation, group, format!("{field} missing or negative"))
    })
}

/// The instances `InstancesRead` read, one list for each of the `groups`
/// the SDK decoded from the rest of the answer. A count that differs
/// (never seen: both follow the same members) is refused: the SDK's
/// groups have no instances left to fall back on.
pub(super) fn read_groups(
    operation: &'static str,
    target: &str,
    read: Option<Vec<Vec<GroupInstance>>>,
    groups: usize,
) -> Result<Option<Vec<Vec<GroupInstance>>>, AwsError> {
    match read {
        Some(read) if read.len() != groups => Err(AwsError::bad_response(
            operation,
            target,
            format!(
                "{} group(s) decoded but instances read for {}",
                groups,
                read.len()
            ),
        )),
        read => Ok(read),
    }
}

fn group_from(
    g: &asg::AutoScalingGroup,
    group: &str,
    read: Option<Vec<GroupInstance>>,
) -> Result<AutoScalingGroup, AwsError> {
    const OP: &str = "DescribeAutoScalingGroups";
    let instances = match read {
        Some(instances) => instances,
        None => g
            .instances()
            .iter()
            .map(|i| {
                InstanceFields {
                    id: i.instance_id(),
                    availability_zone: i.availability_zone(),
                    lifecycle_state: i.lifecycle_state().map(|s| s.as_str()),
                    health_status: i.health_status(),
                    template: i.launch_template().map(launch_source::template_ref),
                    configuration: i.launch_configuration_name(),
                    protected_from_scale_in: i.protected_from_scale_in(),
                    instance_type: i.instance_type(),
                }
                .instance()
                .ok_or_else(|| AwsError::bad_response(OP, group, "an instance without InstanceId"))
            })
            .collect::<Result<Vec<_>, AwsError>>()?,
    };
    Ok(AutoScalingGroup {
        name: group.to_string(),
        min_size: size(OP, group, "MinSize", g.min_size())?,
        max_size: size(OP, group, "MaxSize", g.max_size())?,
        desired_capacity: size(OP, group, "DesiredCapacity", g.desired_capacity())?,
        availability_zones: g.availability_zones().to_vec(),
        instances,
        by_id: Default::default(),
        suspended_processes: g
            .suspended_processes()
            .iter()
            .filter_map(|p| p.process_name())
            .map(ScalingProcess::parse)
            .collect(),
        tags: g
            .tags()
            .iter()
            .filter_map(|t| {
                Some(GroupTag {
                    key: t.key()?.to_string(),
                    value: t.value().unwrap_or_default().to_string(),
                    propagate_at_launch: t.propagate_at_launch().unwrap_or(false),
                })
            })
            .collect(),
        launch_source: launch_source::group_source(g),
        maintenance_policy: g.instance_maintenance_policy().map(|p| {
            // AWS's -1 (or nothing) clears a bound.
            let bound = |v: Option<i32>| v.and_then(|v| u32::try_from(v).ok());
            MaintenancePolicy {
                min_healthy_percentage: bound(p.min_healthy_percentage()),
                max_healthy_percentage: bound(p.max_healthy_percentage()),
            }
        }),
    })
}

fn time(t: Option<&aws_sdk_autoscaling::primitives::DateTime>) -> Option<SystemTime> {
    t.and_then(|t| SystemTime::try_from(*t).ok())
}

fn activity_from(
    a: &asg::Activity,
    operation: &'static str,
    target: &str,
) -> Result<ScalingActivity, AwsError> {
    let id = a.activity_id().ok_or_else(|| {
        AwsError::bad_response(operation, target, "an activity without ActivityId")
    })?;
    Ok(ScalingActivity {
        id: id.to_string(),
        status: a
            .status_code()
            .map(|s| s.as_str().to_string())
            .unwrap_or_default(),
        description: a.description().unwrap_or_default().to_string(),
        cause: a.cause().unwrap_or_default().to_string(),
        status_message: a.status_message().map(str::to_string),
        start_time: time(a.start_time()),
        end_time: time(a.end_time()),
    })
}

fn ec2_instance_from(i: &ec2::Instance, target: &str) -> Result<Ec2Instance, AwsError> {
    const OP: &str = "DescribeInstances";
    let id = i
        .instance_id()
        .ok_or_else(|| AwsError::bad_response(OP, target, "an instance without InstanceId"))?;
    let private_ip = match i.private_ip_address().filter(|s| !s.is_empty()) {
        None => None,
        Some(text) => Some(text.parse::<IpAddr>().map_err(|_| {
            AwsError::bad_response(OP, id, format!("PrivateIpAddress '{text}' is not an IP"))
        })?),
    };
    Ok(Ec2Instance {
        id: id.to_string(),
        private_ip,
        private_dns_name: i
            .private_dns_name()
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        state: i
            .state()
            .and_then(|s| s.name())
            .map(|n| n.as_str().to_string())
            .unwrap_or_default(),
        launch_time: i.launch_time().and_then(|t| SystemTime::try_from(*t).ok()),
        availability_zone: i
            .placement()
            .and_then(|p| p.availability_zone())
            .map(str::to_string),
    })
}
