//! The Auto Scaling group and its EC2 instances, following AWS's documented
//! behaviour where moto is looser: launches take time (Pending → InService),
//! a launch picks the AZ with the fewest instances, desired capacity stays
//! within [MinSize, MaxSize], terminating with decrement respects MinSize,
//! and AZRebalance (unless suspended) launches in the low AZ and then
//! terminates in the high one. The group launches from one launch template
//! (`LaunchTemplate`): each instance keeps the version it launched with, and
//! UpdateAutoScalingGroup changes the version new instances get.

use std::collections::BTreeMap;

use serde::Serialize;

use super::World;
use super::clock::SimTime;
use super::events::{AgentIdx, Event, InstanceIdx};
use crate::sim::scenario::{GroupSpec, resolve_template_version, scaling_processes};

/// An instance's Auto Scaling lifecycle state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum LifecycleState {
    Pending,
    InService,
    /// Taken out of service by EnterStandby: still in the group and still
    /// running (its Mesos agent too), not counted against desired
    /// capacity, never picked for a scale-in.
    Standby,
    Terminating,
    Terminated,
}

impl LifecycleState {
    /// As DescribeAutoScalingGroups spells it.
    pub fn as_aws(self) -> &'static str {
        match self {
            LifecycleState::Pending => "Pending",
            LifecycleState::InService => "InService",
            LifecycleState::Standby => "Standby",
            LifecycleState::Terminating => "Terminating",
            LifecycleState::Terminated => "Terminated",
        }
    }

    /// As EC2 DescribeInstances spells the matching instance state.
    pub fn as_ec2(self) -> &'static str {
        match self {
            LifecycleState::Pending => "pending",
            LifecycleState::InService | LifecycleState::Standby => "running",
            LifecycleState::Terminating => "shutting-down",
            LifecycleState::Terminated => "terminated",
        }
    }

    /// Its machine is up (booting, serving, or in Standby): a Mesos agent
    /// on it answers.
    pub(crate) fn machine_runs(self) -> bool {
        matches!(
            self,
            LifecycleState::Pending | LifecycleState::InService | LifecycleState::Standby
        )
    }

    /// Counted by the group against its desired capacity.
    fn is_live(self) -> bool {
        matches!(self, LifecycleState::Pending | LifecycleState::InService)
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Instance {
    pub(crate) id: String,
    pub(crate) az: usize,
    pub(crate) state: LifecycleState,
    pub(crate) launched_at: SimTime,
    pub(crate) ip: String,
    /// The launch template version it launched from, as a number (the
    /// group's `$Latest` or `$Default` resolved at launch): its image.
    pub(crate) template_version: String,
    /// The Mesos agent running on it, once registered.
    pub(crate) agent: Option<AgentIdx>,
    launch_activity: usize,
    terminate_activity: Option<usize>,
}

impl Instance {
    pub(crate) fn private_dns(&self) -> String {
        format!("ip-{}.ec2.internal", self.ip.replace('.', "-"))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ActivityStatus {
    InProgress,
    /// ExitStandby's activity as it is answered: the instance is on its
    /// way back into service.
    PreInService,
    Successful,
    Failed,
}

#[derive(Clone, Debug)]
struct Activity {
    id: String,
    description: String,
    cause: String,
    started: SimTime,
    ended: Option<SimTime>,
    status: ActivityStatus,
    message: Option<String>,
}

/// The one Auto Scaling group of the world.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    name: String,
    min: u32,
    max: u32,
    desired: u32,
    pub(crate) azs: Vec<String>,
    pub(crate) template: LaunchTemplate,
    tags: BTreeMap<String, String>,
    /// Suspended processes and when each was suspended.
    suspended: BTreeMap<String, SimTime>,
    /// Instances in the group (Pending, InService, Terminating), by launch.
    members: Vec<InstanceIdx>,
    activities: Vec<Activity>,
    /// The extra instance AZRebalance launched and has not yet balanced
    /// against a termination in the high AZ.
    rebalancing: Option<InstanceIdx>,
    rebalance_check_scheduled: bool,
    pub(crate) retry_at: Option<SimTime>,
}

impl Group {
    pub(crate) fn new(spec: &GroupSpec) -> Group {
        Group {
            name: spec.name.clone(),
            min: spec.min_size,
            max: spec.max_size,
            desired: spec.desired_capacity,
            azs: spec.availability_zones.clone(),
            template: LaunchTemplate {
                name: spec.launch_template.name.clone(),
                version: spec.launch_template.version.clone(),
                latest: spec.launch_template.latest(),
                default: spec.launch_template.default_number(),
            },
            tags: spec.tags.clone(),
            suspended: spec
                .suspended_processes
                .iter()
                .map(|p| (p.clone(), SimTime::ZERO))
                .collect(),
            members: Vec::new(),
            activities: Vec::new(),
            rebalancing: None,
            rebalance_check_scheduled: false,
            retry_at: None,
        }
    }

    fn is_suspended(&self, process: &str) -> bool {
        self.suspended.contains_key(process)
    }
}

/// The group's launch template as the simulator models one: versions 1 to
/// `latest` exist (each an image), one is the default, and the group
/// launches from `version` (a number, `$Latest` or `$Default`, kept as it
/// was set, as DescribeAutoScalingGroups shows it).
#[derive(Clone, Debug)]
pub(crate) struct LaunchTemplate {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) latest: u64,
    pub(crate) default: u64,
}

impl LaunchTemplate {
    /// The version number an instance launched now gets.
    fn launch_version(&self) -> String {
        resolve_template_version(&self.version, self.latest, self.default)
            .map_or_else(|| self.version.clone(), |n| n.to_string())
    }

    fn id(&self) -> String {
        launch_template_id(&self.name)
    }
}

/// A launch template's id (`lt-0` and 16 hex digits), stable per name, as
/// EC2 gave it when the template was created.
pub(crate) fn launch_template_id(name: &str) -> String {
    let hex = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, name.as_bytes())
        .simple()
        .to_string();
    format!("lt-0{}", &hex[..16])
}

/// A change UpdateAutoScalingGroup asks for. Each part left `None` stays
/// as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupUpdate {
    pub min: Option<u32>,
    pub max: Option<u32>,
    pub desired: Option<u32>,
    pub launch_template: Option<LaunchTemplateChoice>,
}

/// A `LaunchTemplateSpecification`: the template by id or by name (exactly
/// one of them) and a version (a number, `$Latest` or `$Default`; unset,
/// `$Default`, as AWS takes it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchTemplateChoice {
    pub id: Option<String>,
    pub name: Option<String>,
    pub version: Option<String>,
}

/// An AWS error, as the Query protocol would carry it (`code()`, message).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AwsError {
    #[error("{action}: AutoScalingGroup name not found - AutoScalingGroup '{name}' not found")]
    GroupNotFound { action: &'static str, name: String },
    #[error("{action}: Instance Id not found - No managed instance found for instance ID: {id}")]
    InstanceNotFound { action: &'static str, id: String },
    #[error("{action}: {message}")]
    Validation {
        action: &'static str,
        message: String,
    },
    #[error("{action}: The instance ID '{id}' does not exist")]
    Ec2InstanceNotFound { action: &'static str, id: String },
}

impl AwsError {
    /// The AWS error code the facade puts in `<Code>`.
    pub fn code(&self) -> &'static str {
        match self {
            AwsError::Ec2InstanceNotFound { .. } => "InvalidInstanceID.NotFound",
            _ => "ValidationError",
        }
    }

    /// The message the facade puts in `<Message>` (without the action).
    pub fn aws_message(&self) -> String {
        let full = self.to_string();
        match full.split_once(": ") {
            Some((_, message)) => message.to_string(),
            None => full,
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            AwsError::GroupNotFound { .. } => "group_not_found",
            AwsError::InstanceNotFound { .. } => "instance_not_found",
            AwsError::Validation { .. } => "validation",
            AwsError::Ec2InstanceNotFound { .. } => "ec2_instance_not_found",
        }
    }
}

/// A launch template and a version: the group's (the version as it was
/// set, `$Latest` included) or an instance's (the number it launched from).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchTemplateView {
    pub id: String,
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupInstanceView {
    pub instance_id: String,
    pub availability_zone: String,
    pub lifecycle_state: &'static str,
    pub health_status: &'static str,
    pub launch_template: LaunchTemplateView,
    pub protected_from_scale_in: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SuspendedProcessView {
    pub process_name: String,
    /// When it was suspended (the world's start for the scenario's own):
    /// AWS's `SuspensionReason` says so.
    pub suspended_unix_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TagView {
    pub key: String,
    pub value: String,
}

/// DescribeAutoScalingGroups' view of the group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupView {
    pub name: String,
    pub min_size: u32,
    pub max_size: u32,
    pub desired_capacity: u32,
    pub availability_zones: Vec<String>,
    pub launch_template: LaunchTemplateView,
    pub instances: Vec<GroupInstanceView>,
    pub suspended_processes: Vec<SuspendedProcessView>,
    pub tags: Vec<TagView>,
}

/// DescribeScalingActivities' view of one activity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ActivityView {
    pub activity_id: String,
    pub group_name: String,
    pub description: String,
    pub cause: String,
    pub start_unix_ms: u64,
    pub end_unix_ms: Option<u64>,
    /// "InProgress", "Successful" or "Failed".
    pub status_code: &'static str,
    pub status_message: Option<String>,
    pub progress: u8,
}

/// EC2 DescribeInstances' view of one instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ec2InstanceView {
    pub instance_id: String,
    pub availability_zone: String,
    /// "pending", "running", "shutting-down" or "terminated".
    pub state: &'static str,
    pub private_ip_address: String,
    pub private_dns_name: String,
    pub launch_unix_ms: u64,
    pub launch_template: LaunchTemplateView,
}

impl World {
    // ----- the API the AWS facade calls -----

    /// DescribeAutoScalingGroups: the named groups (all when `names` is
    /// empty); unknown names are left out, as AWS does.
    pub fn describe_groups(&self, names: &[String]) -> Vec<GroupView> {
        if !names.is_empty() && !names.contains(&self.group.name) {
            return Vec::new();
        }
        let g = &self.group;
        let instances = g
            .members
            .iter()
            .map(|&i| {
                let inst = &self.instances[i];
                GroupInstanceView {
                    instance_id: inst.id.clone(),
                    availability_zone: g.azs[inst.az].clone(),
                    lifecycle_state: inst.state.as_aws(),
                    health_status: "Healthy",
                    launch_template: LaunchTemplateView {
                        id: g.template.id(),
                        name: g.template.name.clone(),
                        version: inst.template_version.clone(),
                    },
                    protected_from_scale_in: false,
                }
            })
            .collect();
        vec![GroupView {
            name: g.name.clone(),
            min_size: g.min,
            max_size: g.max,
            desired_capacity: g.desired,
            availability_zones: g.azs.clone(),
            launch_template: LaunchTemplateView {
                id: g.template.id(),
                name: g.template.name.clone(),
                version: g.template.version.clone(),
            },
            instances,
            suspended_processes: g
                .suspended
                .iter()
                .map(|(p, at)| SuspendedProcessView {
                    process_name: p.clone(),
                    suspended_unix_ms: self.unix_ms(*at),
                })
                .collect(),
            tags: g
                .tags
                .iter()
                .map(|(k, v)| TagView {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        }]
    }

    /// SetDesiredCapacity: refused outside [MinSize, MaxSize] with AWS's
    /// message; the group then launches or terminates to match.
    pub fn set_desired_capacity(&mut self, group: &str, desired: u32) -> Result<(), AwsError> {
        const ACTION: &str = "SetDesiredCapacity";
        self.check_group(ACTION, group)?;
        let g = &self.group;
        if desired > g.max {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "New SetDesiredCapacity value {desired} is above max value {} for the AutoScalingGroup.",
                    g.max
                ),
            });
        }
        if desired < g.min {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "New SetDesiredCapacity value {desired} is below min value {} for the AutoScalingGroup.",
                    g.min
                ),
            });
        }
        self.group.desired = desired;
        self.reconcile_group();
        self.observe_group();
        Ok(())
    }

    /// TerminateInstanceInAutoScalingGroup. With `decrement` the desired
    /// capacity drops by one (refused below MinSize, as AWS does); without,
    /// the group launches a replacement. An instance already terminating is
    /// answered with its termination activity, changing nothing.
    pub fn terminate_instance(
        &mut self,
        instance_id: &str,
        decrement: bool,
    ) -> Result<ActivityView, AwsError> {
        const ACTION: &str = "TerminateInstanceInAutoScalingGroup";
        let idx = match self.instance_by_id.get(instance_id) {
            Some(&i) if self.instances[i].state != LifecycleState::Terminated => i,
            _ => {
                self.monitor.termination_of_gone(instance_id);
                return Err(AwsError::InstanceNotFound {
                    action: ACTION,
                    id: instance_id.to_string(),
                });
            }
        };
        if let Some(activity) = self.instances[idx].terminate_activity {
            self.monitor.termination_repeated(instance_id);
            return Ok(self.activity_view(activity));
        }
        if decrement {
            if self.group.desired <= self.group.min {
                return Err(AwsError::Validation {
                    action: ACTION,
                    message: format!(
                        "Currently, desiredSize equals minSize ({}). Terminating instance without replacement will violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false or lower group's min size.",
                        self.group.min
                    ),
                });
            }
            self.group.desired -= 1;
        }
        let cause = if decrement {
            format!(
                "At {} instance {instance_id} was taken out of service in response to a user request, shrinking the capacity from {} to {}.",
                self.now,
                self.group.desired + 1,
                self.group.desired
            )
        } else {
            format!(
                "At {} instance {instance_id} was taken out of service in response to a user request.",
                self.now
            )
        };
        let activity = self.begin_termination(idx, cause);
        self.reconcile_group();
        self.observe_group();
        Ok(self.activity_view(activity))
    }

    /// EnterStandby: each instance must be InService (all are checked
    /// before any moves). With `decrement` desired capacity drops by their
    /// number (refused below MinSize); without, the group launches
    /// replacements. Their machines keep running, Mesos agents included.
    /// Answers one activity per instance, as AWS does (in progress).
    pub fn enter_standby(
        &mut self,
        group: &str,
        instance_ids: &[String],
        decrement: bool,
    ) -> Result<Vec<ActivityView>, AwsError> {
        const ACTION: &str = "EnterStandby";
        let picked =
            self.standby_members(ACTION, group, instance_ids, LifecycleState::InService)?;
        let n = u32::try_from(picked.len()).unwrap_or(u32::MAX);
        if decrement && self.group.desired.saturating_sub(n) < self.group.min {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "Cannot move {n} instance(s) to Standby with ShouldDecrementDesiredCapacity: desired capacity {} would fall below min size {}.",
                    self.group.desired, self.group.min
                ),
            });
        }
        let mut views = Vec::with_capacity(picked.len());
        for idx in picked {
            let before = self.group.desired;
            if decrement {
                self.group.desired -= 1;
            }
            let id = self.instances[idx].id.clone();
            let shrinking = if decrement {
                format!(
                    ", shrinking the capacity from {before} to {}.",
                    self.group.desired
                )
            } else {
                ".".to_string()
            };
            let activity = self.add_activity(
                format!("Moving EC2 instance to Standby: {id}"),
                format!(
                    "At {} instance {id} was moved to standby in response to a user request{shrinking}",
                    self.now
                ),
                ActivityStatus::InProgress,
            );
            self.instances[idx].state = LifecycleState::Standby;
            views.push(self.activity_view(activity));
            self.finish_activity(activity);
        }
        self.reconcile_group();
        self.observe_group();
        Ok(views)
    }

    /// ExitStandby: each instance must be in Standby; desired capacity
    /// grows by their number (refused above MaxSize) and they are back in
    /// service. Answers one PreInService activity per instance, as AWS
    /// does.
    pub fn exit_standby(
        &mut self,
        group: &str,
        instance_ids: &[String],
    ) -> Result<Vec<ActivityView>, AwsError> {
        const ACTION: &str = "ExitStandby";
        let picked = self.standby_members(ACTION, group, instance_ids, LifecycleState::Standby)?;
        let n = u32::try_from(picked.len()).unwrap_or(u32::MAX);
        if self.group.desired.saturating_add(n) > self.group.max {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "Cannot move {n} instance(s) out of Standby: desired capacity {} would rise above max size {}.",
                    self.group.desired, self.group.max
                ),
            });
        }
        let mut views = Vec::with_capacity(picked.len());
        for idx in picked {
            let before = self.group.desired;
            self.group.desired += 1;
            let id = self.instances[idx].id.clone();
            let activity = self.add_activity(
                format!("Moving EC2 instance out of Standby: {id}"),
                format!(
                    "At {} instance {id} was moved out of standby in response to a user request, increasing the capacity from {before} to {}.",
                    self.now, self.group.desired
                ),
                ActivityStatus::PreInService,
            );
            self.instances[idx].state = LifecycleState::InService;
            views.push(self.activity_view(activity));
            self.finish_activity(activity);
        }
        self.reconcile_group();
        self.observe_group();
        Ok(views)
    }

    /// The group's instances named by `ids`, each in `state`; refused as a
    /// whole otherwise (an unknown or other group's instance, or one in
    /// another state), with nothing changed.
    fn standby_members(
        &self,
        action: &'static str,
        group: &str,
        ids: &[String],
        state: LifecycleState,
    ) -> Result<Vec<InstanceIdx>, AwsError> {
        self.check_group(action, group)?;
        if ids.is_empty() {
            return Err(AwsError::Validation {
                action,
                message: "The parameter InstanceIds is required.".into(),
            });
        }
        let mut picked = Vec::with_capacity(ids.len());
        for id in ids {
            let idx = self
                .instance_by_id
                .get(id)
                .copied()
                .filter(|&i| self.group.members.contains(&i))
                .ok_or_else(|| AwsError::Validation {
                    action,
                    message: format!(
                        "The instance {id} is not part of Auto Scaling group {group}."
                    ),
                })?;
            if self.instances[idx].state != state {
                return Err(AwsError::Validation {
                    action,
                    message: format!("The instance {id} is not in {}.", state.as_aws()),
                });
            }
            if !picked.contains(&idx) {
                picked.push(idx);
            }
        }
        Ok(picked)
    }

    /// SuspendProcesses: an empty list suspends all nine, as AWS does.
    pub fn suspend_processes(&mut self, group: &str, processes: &[String]) -> Result<(), AwsError> {
        let names = self.process_names("SuspendProcesses", group, processes)?;
        // One already suspended keeps its time, as AWS keeps its reason.
        for name in names {
            self.group.suspended.entry(name).or_insert(self.now);
        }
        Ok(())
    }

    /// ResumeProcesses: an empty list resumes all. Resuming AZRebalance
    /// makes it look at the AZ counts again.
    pub fn resume_processes(&mut self, group: &str, processes: &[String]) -> Result<(), AwsError> {
        let names = self.process_names("ResumeProcesses", group, processes)?;
        for name in names {
            self.group.suspended.remove(&name);
        }
        self.schedule_rebalance_check();
        self.reconcile_group();
        Ok(())
    }

    /// UpdateAutoScalingGroup's sizes (see `update_group_with`).
    pub fn update_group(
        &mut self,
        group: &str,
        min: Option<u32>,
        max: Option<u32>,
        desired: Option<u32>,
    ) -> Result<(), AwsError> {
        self.update_group_with(
            group,
            GroupUpdate {
                min,
                max,
                desired,
                launch_template: None,
            },
        )
    }

    /// Points the group at another version of its launch template, as an
    /// operator publishing a new image does (UpdateAutoScalingGroup with
    /// the template's name and `version`: a number, `$Latest` or
    /// `$Default`). Instances launched from now on get it; those running
    /// keep theirs. Refused, changing nothing, for a version the template
    /// does not have.
    pub fn set_launch_template_version(&mut self, version: &str) -> Result<(), AwsError> {
        let group = self.group.name.clone();
        let name = self.group.template.name.clone();
        self.update_group_with(
            &group,
            GroupUpdate {
                launch_template: Some(LaunchTemplateChoice {
                    id: None,
                    name: Some(name),
                    version: Some(version.to_string()),
                }),
                ..GroupUpdate::default()
            },
        )
    }

    /// UpdateAutoScalingGroup. As AWS: min ≤ max, a given desired must
    /// fit; without one, desired is pulled into the new range. A launch
    /// template must be named by id or by name (not both) and be the
    /// group's (the world has one), its version one the template has; new
    /// instances launch from it, running ones keep theirs. Everything is
    /// checked before anything changes.
    pub fn update_group_with(&mut self, group: &str, update: GroupUpdate) -> Result<(), AwsError> {
        const ACTION: &str = "UpdateAutoScalingGroup";
        self.check_group(ACTION, group)?;
        let version = match &update.launch_template {
            Some(choice) => Some(self.check_launch_template(ACTION, choice)?),
            None => None,
        };
        let min = update.min.unwrap_or(self.group.min);
        let max = update.max.unwrap_or(self.group.max);
        if min > max {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "Max bound, {max}, must be greater than or equal to min bound, {min}"
                ),
            });
        }
        let desired = match update.desired {
            Some(d) if d < min || d > max => {
                return Err(AwsError::Validation {
                    action: ACTION,
                    message: format!(
                        "Desired capacity:{d} must be between the specified min size:{min} and max size:{max}"
                    ),
                });
            }
            Some(d) => d,
            None => self.group.desired.clamp(min, max),
        };
        self.group.min = min;
        self.group.max = max;
        self.group.desired = desired;
        if let Some(version) = version {
            self.group.template.version = version;
        }
        self.reconcile_group();
        self.observe_group();
        Ok(())
    }

    /// CreateOrUpdateTags on the group.
    pub fn put_tags(&mut self, group: &str, tags: &[(String, String)]) -> Result<(), AwsError> {
        self.check_group("CreateOrUpdateTags", group)?;
        for (k, v) in tags {
            self.group.tags.insert(k.clone(), v.clone());
        }
        Ok(())
    }

    /// DeleteTags on the group (a missing key is fine).
    pub fn delete_tags(&mut self, group: &str, keys: &[String]) -> Result<(), AwsError> {
        self.check_group("DeleteTags", group)?;
        for k in keys {
            self.group.tags.remove(k);
        }
        Ok(())
    }

    /// DescribeScalingActivities: newest first, at most `limit`.
    pub fn scaling_activities(
        &self,
        group: &str,
        limit: usize,
    ) -> Result<Vec<ActivityView>, AwsError> {
        self.check_group("DescribeScalingActivities", group)?;
        Ok((0..self.group.activities.len())
            .rev()
            .take(limit)
            .map(|i| self.activity_view(i))
            .collect())
    }

    /// EC2 DescribeInstances by id (all when `ids` is empty). An unknown id
    /// is an error, as EC2 answers InvalidInstanceID.NotFound.
    pub fn ec2_instances(&self, ids: &[String]) -> Result<Vec<Ec2InstanceView>, AwsError> {
        let picked: Vec<usize> = if ids.is_empty() {
            (0..self.instances.len()).collect()
        } else {
            let mut picked = Vec::with_capacity(ids.len());
            for id in ids {
                match self.instance_by_id.get(id) {
                    Some(&i) => picked.push(i),
                    None => {
                        return Err(AwsError::Ec2InstanceNotFound {
                            action: "DescribeInstances",
                            id: id.clone(),
                        });
                    }
                }
            }
            picked
        };
        Ok(picked
            .into_iter()
            .map(|i| {
                let inst = &self.instances[i];
                Ec2InstanceView {
                    instance_id: inst.id.clone(),
                    availability_zone: self.group.azs[inst.az].clone(),
                    state: inst.state.as_ec2(),
                    private_ip_address: inst.ip.clone(),
                    private_dns_name: inst.private_dns(),
                    launch_unix_ms: self.unix_ms(inst.launched_at),
                    launch_template: LaunchTemplateView {
                        id: self.group.template.id(),
                        name: self.group.template.name.clone(),
                        version: inst.template_version.clone(),
                    },
                }
            })
            .collect())
    }

    /// Instances per AZ that count against desired (Pending + InService),
    /// in the group's AZ order.
    pub fn az_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.group.azs.len()];
        for &i in &self.group.members {
            let inst = &self.instances[i];
            if inst.state.is_live() {
                counts[inst.az] += 1;
            }
        }
        counts
    }

    // ----- internals -----

    fn check_group(&self, action: &'static str, name: &str) -> Result<(), AwsError> {
        if name == self.group.name {
            Ok(())
        } else {
            Err(AwsError::GroupNotFound {
                action,
                name: name.to_string(),
            })
        }
    }

    /// The version a `LaunchTemplateSpecification` sets, once checked as AWS
    /// checks it: exactly one of id and name (AWS's words for both and for
    /// neither), naming the group's template; a version the template has
    /// (`$Default` when unset). AWS's wording for an unknown template or
    /// version is not established: these follow the shape of its "You must
    /// use a valid fully-formed launch template." refusals.
    fn check_launch_template(
        &self,
        action: &'static str,
        choice: &LaunchTemplateChoice,
    ) -> Result<String, AwsError> {
        let invalid = |message: String| AwsError::Validation { action, message };
        let template = &self.group.template;
        match (choice.id.as_deref(), choice.name.as_deref()) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(invalid(
                    "Valid requests must contain either launchTemplateId or LaunchTemplateName"
                        .into(),
                ));
            }
            (Some(id), None) if id != template.id() => {
                return Err(invalid(format!(
                    "You must use a valid fully-formed launch template. The specified launch template, with template ID {id}, does not exist."
                )));
            }
            (None, Some(name)) if name != template.name => {
                return Err(invalid(format!(
                    "You must use a valid fully-formed launch template. The specified launch template, with template name {name}, does not exist."
                )));
            }
            _ => {}
        }
        let version = choice.version.as_deref().unwrap_or("$Default");
        match resolve_template_version(version, template.latest, template.default) {
            Some(_) => Ok(version.to_string()),
            None => Err(invalid(format!(
                "You must use a valid fully-formed launch template. The specified launch template version {version} does not exist."
            ))),
        }
    }

    fn process_names(
        &self,
        action: &'static str,
        group: &str,
        processes: &[String],
    ) -> Result<Vec<String>, AwsError> {
        self.check_group(action, group)?;
        if processes.is_empty() {
            return Ok(scaling_processes().iter().map(|p| p.to_string()).collect());
        }
        for p in processes {
            if !scaling_processes().contains(&p.as_str()) {
                return Err(AwsError::Validation {
                    action,
                    message: format!("Process '{p}' is not a valid scaling process"),
                });
            }
        }
        Ok(processes.to_vec())
    }

    fn activity_view(&self, i: usize) -> ActivityView {
        let a = &self.group.activities[i];
        ActivityView {
            activity_id: a.id.clone(),
            group_name: self.group.name.clone(),
            description: a.description.clone(),
            cause: a.cause.clone(),
            start_unix_ms: self.unix_ms(a.started),
            end_unix_ms: a.ended.map(|t| self.unix_ms(t)),
            status_code: match a.status {
                ActivityStatus::InProgress => "InProgress",
                ActivityStatus::PreInService => "PreInService",
                ActivityStatus::Successful => "Successful",
                ActivityStatus::Failed => "Failed",
            },
            status_message: a.message.clone(),
            progress: match a.status {
                ActivityStatus::InProgress => 50,
                ActivityStatus::PreInService => 30,
                ActivityStatus::Successful | ActivityStatus::Failed => 100,
            },
        }
    }

    fn add_activity(
        &mut self,
        description: String,
        cause: String,
        status: ActivityStatus,
    ) -> usize {
        let id = self.rng.uuid();
        let ended = (status != ActivityStatus::InProgress).then_some(self.now);
        self.group.activities.push(Activity {
            id,
            description,
            cause,
            started: self.now,
            ended,
            status,
            message: None,
        });
        self.group.activities.len() - 1
    }

    fn finish_activity(&mut self, i: usize) {
        let a = &mut self.group.activities[i];
        a.status = ActivityStatus::Successful;
        a.ended = Some(self.now);
    }

    /// Launches one instance in `az`, Pending, booting. `None` when the
    /// launch-failure fault is on (a failed activity is recorded instead).
    fn launch_instance(&mut self, az: usize, cause: String) -> Option<InstanceIdx> {
        if self.faults.launches_fail {
            let i = self.add_activity(
                "Launching a new EC2 instance.  Status Reason: We currently do not have sufficient capacity in the Availability Zone you requested. Launching EC2 instance failed.".into(),
                cause,
                ActivityStatus::Failed,
            );
            self.group.activities[i].message = Some(
                "We currently do not have sufficient capacity in the Availability Zone you requested. Launching EC2 instance failed.".into(),
            );
            self.monitor.launch_failed();
            return None;
        }
        let idx = self.create_instance(az, cause);
        let boot = self.rng.jittered(self.timing.boot_ms, self.timing.jitter);
        self.schedule_in(boot, Event::InstanceBooted(idx));
        Some(idx)
    }

    fn create_instance(&mut self, az: usize, cause: String) -> InstanceIdx {
        let id = format!("i-0{}", self.rng.hex(16));
        let n = self.instances.len();
        let ip = format!("10.0.{}.{}", 1 + n / 250, 4 + n % 250);
        let activity = self.add_activity(
            format!("Launching a new EC2 instance: {id}"),
            cause,
            ActivityStatus::InProgress,
        );
        let idx = self.instances.len();
        self.instances.push(Instance {
            id: id.clone(),
            az,
            state: LifecycleState::Pending,
            launched_at: self.now,
            ip,
            template_version: self.group.template.launch_version(),
            agent: None,
            launch_activity: activity,
            terminate_activity: None,
        });
        self.instance_by_id.insert(id, idx);
        self.group.members.push(idx);
        self.monitor.instance_launched();
        idx
    }

    /// The scenario's instances, InService at time zero with their agents
    /// registered, spread over the AZs as launches would have spread them.
    /// The scenario's `standby` extra ones are in Standby (the last
    /// launched), their agents registered as well.
    pub(crate) fn populate_initial_instances(&mut self, standby: u32) {
        let mut created = Vec::new();
        for _ in 0..self.group.desired + standby {
            let az = self.emptiest_az();
            let idx = self.create_instance(az, "Initial capacity of the scenario.".into());
            self.instances[idx].state = LifecycleState::InService;
            let activity = self.instances[idx].launch_activity;
            self.finish_activity(activity);
            self.register_agent(idx);
            created.push(idx);
        }
        for &idx in created.iter().rev().take(standby as usize) {
            self.instances[idx].state = LifecycleState::Standby;
        }
    }

    /// The AZ with the fewest live instances; ties go to the first in the
    /// group's AZ list, so a seed replays the same spread.
    fn emptiest_az(&self) -> usize {
        let counts = self.az_counts();
        (0..counts.len())
            .min_by_key(|&az| (counts[az], az))
            .unwrap_or(0)
    }

    /// The instance the default termination policy picks: from the AZ with
    /// the most live instances (or `only_az`), the one with the oldest
    /// launch template version, then the oldest launch, then by id.
    fn termination_candidate(
        &self,
        only_az: Option<usize>,
        exclude: Option<InstanceIdx>,
    ) -> Option<InstanceIdx> {
        let counts = self.az_counts();
        let az = match only_az {
            Some(az) => az,
            None => (0..counts.len()).max_by_key(|&az| (counts[az], std::cmp::Reverse(az)))?,
        };
        self.group
            .members
            .iter()
            .copied()
            .filter(|&i| {
                let inst = &self.instances[i];
                inst.az == az && inst.state.is_live() && Some(i) != exclude
            })
            .min_by(|&a, &b| {
                let (x, y) = (&self.instances[a], &self.instances[b]);
                // Versions are numbers: "10" is newer than "9".
                let version = |i: &Instance| i.template_version.parse::<u64>().unwrap_or(u64::MAX);
                (version(x), x.launched_at, &x.id).cmp(&(version(y), y.launched_at, &y.id))
            })
    }

    /// Starts terminating an instance: its agent stops answering (unless the
    /// fault keeps it registered) and EC2 finishes the shutdown later.
    fn begin_termination(&mut self, idx: InstanceIdx, cause: String) -> usize {
        let id = self.instances[idx].id.clone();
        let activity = self.add_activity(
            format!("Terminating EC2 instance: {id}"),
            cause,
            ActivityStatus::InProgress,
        );
        self.instances[idx].state = LifecycleState::Terminating;
        self.instances[idx].terminate_activity = Some(activity);
        if self.group.rebalancing == Some(idx) {
            self.group.rebalancing = None;
        }
        if let Some(agent) = self.instances[idx].agent {
            if self.faults.agents_outlive_instances > 0 {
                self.faults.agents_outlive_instances -= 1;
            } else {
                self.agent_stops_answering(agent);
            }
            for app in self.apps_on_agent(agent) {
                self.app_changed(app);
            }
        }
        self.schedule_in(self.timing.terminate_ms, Event::InstanceTerminated(idx));
        activity
    }

    pub(crate) fn on_instance_booted(&mut self, idx: InstanceIdx) {
        if self.instances[idx].state != LifecycleState::Pending {
            return;
        }
        self.instances[idx].state = LifecycleState::InService;
        let activity = self.instances[idx].launch_activity;
        self.finish_activity(activity);
        let register = self
            .rng
            .jittered(self.timing.register_ms, self.timing.jitter);
        self.schedule_in(register, Event::AgentRegisters(idx));
        if self.group.rebalancing == Some(idx) {
            // AZRebalance's second half: the new instance serves, so one in
            // the high AZ goes (desired capacity unchanged).
            self.group.rebalancing = None;
            let counts = self.az_counts();
            let high = (0..counts.len()).max_by_key(|&az| (counts[az], std::cmp::Reverse(az)));
            if let Some(victim) =
                high.and_then(|az| self.termination_candidate(Some(az), Some(idx)))
            {
                let cause = format!(
                    "At {} an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity: AZRebalance.",
                    self.now
                );
                self.begin_termination(victim, cause);
            }
        }
        self.schedule_rebalance_check();
        self.observe_group();
    }

    pub(crate) fn on_instance_terminated(&mut self, idx: InstanceIdx) {
        if self.instances[idx].state != LifecycleState::Terminating {
            return;
        }
        self.instances[idx].state = LifecycleState::Terminated;
        if let Some(activity) = self.instances[idx].terminate_activity {
            self.finish_activity(activity);
        }
        self.group.members.retain(|&i| i != idx);
        self.monitor.instance_terminated();
        self.schedule_rebalance_check();
        self.observe_group();
    }

    /// Launches or terminates until the live instances match desired
    /// capacity (plus AZRebalance's extra one), unless Launch/Terminate is
    /// suspended. A failed launch is retried after `launch_retry`.
    pub(crate) fn reconcile_group(&mut self) {
        let target = self.group.desired as usize + usize::from(self.group.rebalancing.is_some());
        loop {
            let live: usize = self.az_counts().iter().map(|&c| c as usize).sum();
            if live < target {
                if self.group.is_suspended("Launch") {
                    break;
                }
                let az = self.emptiest_az();
                let cause = format!(
                    "At {} an instance was started in response to a difference between desired and actual capacity, increasing the capacity from {live} to {target}.",
                    self.now
                );
                if self.launch_instance(az, cause).is_none() {
                    if self.group.retry_at.is_none() {
                        let at = self.now.plus_ms(self.timing.launch_retry_ms);
                        self.group.retry_at = Some(at);
                        self.schedule(at, Event::ReconcileGroup);
                    }
                    break;
                }
            } else if live > target {
                if self.group.is_suspended("Terminate") {
                    break;
                }
                let Some(victim) = self.termination_candidate(None, self.group.rebalancing) else {
                    break;
                };
                let cause = format!(
                    "At {} an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity from {live} to {target}.",
                    self.now
                );
                self.begin_termination(victim, cause);
            } else {
                break;
            }
        }
        self.schedule_rebalance_check();
        self.observe_group();
    }

    fn schedule_rebalance_check(&mut self) {
        if self.group.rebalance_check_scheduled || self.group.is_suspended("AZRebalance") {
            return;
        }
        self.group.rebalance_check_scheduled = true;
        self.schedule_in(self.timing.rebalance_delay_ms, Event::RebalanceCheck);
    }

    /// AZRebalance: when not suspended and the AZ counts differ by more than
    /// one, launch in the low AZ first (the group briefly runs one beyond
    /// desired), terminate in the high AZ once the new instance serves.
    pub(crate) fn on_rebalance_check(&mut self) {
        self.group.rebalance_check_scheduled = false;
        let g = &self.group;
        if g.is_suspended("AZRebalance")
            || g.is_suspended("Launch")
            || g.is_suspended("Terminate")
            || g.rebalancing.is_some()
        {
            return;
        }
        let counts = self.az_counts();
        let (Some(&low), Some(&high)) = (counts.iter().min(), counts.iter().max()) else {
            return;
        };
        if high - low <= 1 {
            return;
        }
        let az = self.emptiest_az();
        let cause = format!(
            "At {} an instance was launched to rebalance the group across Availability Zones (AZRebalance).",
            self.now
        );
        match self.launch_instance(az, cause) {
            Some(idx) => self.group.rebalancing = Some(idx),
            None => self.schedule_rebalance_check(),
        }
        self.observe_group();
    }

    /// Tells the monitor the group's shape after a change.
    pub(crate) fn observe_group(&mut self) {
        let counts = self.az_counts();
        let desired = self.group.desired;
        self.monitor.observe_group(self.now, &counts, desired);
    }

    pub(crate) fn group_desired(&self) -> u32 {
        self.group.desired
    }

    pub(crate) fn az_names(&self) -> &[String] {
        &self.group.azs
    }
}
