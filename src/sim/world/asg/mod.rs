//! The Auto Scaling groups and their EC2 instances, following AWS's documented
//! behaviour where moto is looser: launches take time (Pending → InService),
//! a launch picks the AZ with the fewest instances, desired capacity stays
//! within [MinSize, MaxSize], terminating with decrement respects MinSize,
//! and AZRebalance (unless suspended) launches in the low AZ and then
//! terminates in the high one. A group launches from one launch template
//! (`LaunchTemplate`), perhaps through a mixed instances policy (`mixed`:
//! instance types, Spot and on-demand): each instance keeps the version
//! it launched with (and its type), and UpdateAutoScalingGroup changes
//! the version new instances get. Each group
//! does all of this on its own (sizes, AZs, suspended processes, tags,
//! template, activities); their agents join the same Mesos masters, shaped
//! and reserved as the group says.
//!
//! Here the groups' types and views; `api` the calls the AWS facade makes,
//! `standby` EnterStandby/ExitStandby, `scaling` what the group does by
//! itself (launches, terminations, AZRebalance, activities), `hooks`
//! lifecycle hooks and the `Pending:Wait` / `Terminating:Wait` they hold
//! instances in, `reclaim` EC2 taking an instance away (a Spot
//! interruption, a hardware failure), `warm_pool` the instances waiting
//! beside the group (`Warmed:*`) for its scale-outs.

mod api;
mod hooks;
pub(crate) use hooks::ActionRef;
// Only tests reclaim instances so far (the control API does not).
mod mixed;
#[cfg(test)]
mod reclaim;
use mixed::MixedPolicy;
pub(crate) use mixed::{MixedPolicyView, MixedUpdate, OverrideUpdate};
mod refresh;
pub(crate) use refresh::RefreshView;
mod scaling;
mod standby;
mod warm_pool;
#[cfg(test)]
pub(crate) use warm_pool::WarmPoolView;
use warm_pool::{PoolState, WarmPool};

use std::collections::BTreeMap;

use serde::Serialize;

use super::World;
use super::clock::SimTime;
use super::events::{AgentIdx, Event, GroupIdx, InstanceIdx};
use crate::sim::scenario::{AgentSpec, GroupSpec, MaintenancePolicySpec, resolve_template_version};

/// An instance's Auto Scaling lifecycle state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) enum LifecycleState {
    Pending,
    /// Booted, held by the group's launch hooks before going in service.
    PendingWait,
    InService,
    /// Taken out of service by EnterStandby: still in the group and still
    /// running (its Mesos agent too), not counted against desired
    /// capacity, never picked for a scale-in.
    Standby,
    Terminating,
    /// Held by the group's termination hooks before being shut down.
    TerminatingWait,
    /// The termination hooks are done: being shut down.
    TerminatingProceed,
    Terminated,
    /// Launching into the warm pool, or stopping on its way back there
    /// from a scale-in.
    WarmedPending,
    /// Waiting in the warm pool, in its pool state: not the group's, its
    /// machine stopped (or running, with no agent started).
    Warmed(PoolState),
    /// Terminated out of the warm pool.
    WarmedTerminating,
}

impl LifecycleState {
    /// As DescribeAutoScalingGroups spells it.
    pub(crate) fn as_aws(self) -> &'static str {
        match self {
            LifecycleState::Pending => "Pending",
            LifecycleState::PendingWait => "Pending:Wait",
            LifecycleState::InService => "InService",
            LifecycleState::Standby => "Standby",
            LifecycleState::Terminating => "Terminating",
            LifecycleState::TerminatingWait => "Terminating:Wait",
            LifecycleState::TerminatingProceed => "Terminating:Proceed",
            LifecycleState::Terminated => "Terminated",
            LifecycleState::WarmedPending => "Warmed:Pending",
            LifecycleState::Warmed(PoolState::Stopped) => "Warmed:Stopped",
            LifecycleState::Warmed(PoolState::Running) => "Warmed:Running",
            LifecycleState::Warmed(PoolState::Hibernated) => "Warmed:Hibernated",
            LifecycleState::WarmedTerminating => "Warmed:Terminating",
        }
    }

    /// As EC2 DescribeInstances spells the matching instance state.
    pub(crate) fn as_ec2(self) -> &'static str {
        match self {
            LifecycleState::Pending => "pending",
            // The machine runs through a lifecycle hook's wait.
            LifecycleState::PendingWait
            | LifecycleState::InService
            | LifecycleState::Standby
            | LifecycleState::TerminatingWait => "running",
            LifecycleState::Terminating | LifecycleState::TerminatingProceed => "shutting-down",
            LifecycleState::Terminated => "terminated",
            LifecycleState::WarmedPending => "pending",
            LifecycleState::Warmed(PoolState::Running) => "running",
            LifecycleState::Warmed(_) => "stopped",
            LifecycleState::WarmedTerminating => "shutting-down",
        }
    }

    /// Its machine is up (booting, serving, or in Standby): a Mesos agent
    /// on it answers.
    pub(crate) fn machine_runs(self) -> bool {
        matches!(
            self,
            LifecycleState::Pending
                | LifecycleState::PendingWait
                | LifecycleState::InService
                | LifecycleState::Standby
        )
    }

    /// Counted by the group against its desired capacity.
    fn is_live(self) -> bool {
        matches!(
            self,
            LifecycleState::Pending | LifecycleState::PendingWait | LifecycleState::InService
        )
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Instance {
    pub(crate) id: String,
    /// The group that launched it (an instance never changes group).
    pub(crate) group: GroupIdx,
    pub(crate) az: usize,
    pub(crate) state: LifecycleState,
    pub(crate) launched_at: SimTime,
    pub(crate) ip: String,
    /// The launch template version it launched from, as a number (the
    /// group's `$Latest` or `$Default` resolved at launch, or its
    /// override's): its image.
    pub(crate) template_version: String,
    /// Its EC2 instance type: an override's on a mixed instances policy.
    pub(crate) instance_type: String,
    /// A Spot instance (EC2's `InstanceLifecycle` spot), per the policy's
    /// distribution; on-demand otherwise.
    pub(crate) spot: bool,
    /// Protected from scale-in (the scenario's `protected`): the group's
    /// own scale-in passes it over; an explicit termination does not.
    pub(crate) protected_from_scale_in: bool,
    /// The Mesos agent running on it, once registered.
    pub(crate) agent: Option<AgentIdx>,
    launch_activity: usize,
    terminate_activity: Option<usize>,
    /// Its wait for lifecycle hooks, while in `Pending:Wait` or
    /// `Terminating:Wait`.
    hook_wait: Option<hooks::HookWait>,
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

/// One Auto Scaling group of the world.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub(crate) name: String,
    min: u32,
    max: u32,
    pub(crate) desired: u32,
    pub(crate) azs: Vec<String>,
    pub(crate) template: LaunchTemplate,
    /// Its mixed instances policy over `template`, if it has one.
    mixed: Option<MixedPolicy>,
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
    /// What its instances' Mesos agents offer and announce.
    pub(crate) agent: AgentSpec,
    /// The role all its agents' resources are reserved to (`None`:
    /// unreserved, `*`).
    pub(crate) role: Option<String>,
    /// Its instance refreshes, oldest first.
    refreshes: Vec<refresh::Refresh>,
    /// Its lifecycle hooks, in the order they were put.
    hooks: Vec<hooks::Hook>,
    /// Its warm pool, if it has one.
    warm: Option<WarmPool>,
    /// Its instance maintenance policy, if it has one.
    pub(crate) maintenance_policy: Option<MaintenancePolicySpec>,
}

impl Group {
    pub(crate) fn new(spec: &GroupSpec, agent: &AgentSpec) -> Group {
        Group {
            agent: agent.clone(),
            role: spec.role.clone(),
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
            mixed: spec.mixed_instances.as_ref().map(MixedPolicy::from_spec),
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
            refreshes: Vec::new(),
            hooks: spec
                .lifecycle_hooks
                .iter()
                .map(hooks::Hook::from_spec)
                .collect(),
            warm: spec.warm_pool.as_ref().map(WarmPool::from_spec),
            maintenance_policy: spec.instance_maintenance_policy,
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
pub(crate) struct GroupUpdate {
    pub(crate) min: Option<u32>,
    pub(crate) max: Option<u32>,
    pub(crate) desired: Option<u32>,
    pub(crate) launch_template: Option<LaunchTemplateChoice>,
    pub(crate) mixed_instances_policy: Option<MixedUpdate>,
}

/// A `LaunchTemplateSpecification`: the template by id or by name (exactly
/// one of them) and a version (a number, `$Latest` or `$Default`; unset,
/// `$Default`, as AWS takes it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LaunchTemplateChoice {
    pub(crate) id: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) version: Option<String>,
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
    #[error(
        "{action}: An Instance Refresh is already in progress and blocks the execution of this Instance Refresh."
    )]
    RefreshInProgress { action: &'static str },
    #[error(
        "{action}: No in progress or pending Instance Refresh found for Auto Scaling group {name}"
    )]
    NoActiveRefresh { action: &'static str, name: String },
}

impl AwsError {
    /// The AWS error code the facade puts in `<Code>`.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            AwsError::Ec2InstanceNotFound { .. } => "InvalidInstanceID.NotFound",
            AwsError::RefreshInProgress { .. } => "InstanceRefreshInProgress",
            AwsError::NoActiveRefresh { .. } => "ActiveInstanceRefreshNotFound",
            _ => "ValidationError",
        }
    }

    /// The message the facade puts in `<Message>` (without the action).
    pub(crate) fn aws_message(&self) -> String {
        let full = self.to_string();
        match full.split_once(": ") {
            Some((_, message)) => message.to_string(),
            None => full,
        }
    }

    #[cfg(test)]
    pub(crate) fn label(&self) -> &'static str {
        match self {
            AwsError::GroupNotFound { .. } => "group_not_found",
            AwsError::InstanceNotFound { .. } => "instance_not_found",
            AwsError::Validation { .. } => "validation",
            AwsError::Ec2InstanceNotFound { .. } => "ec2_instance_not_found",
            AwsError::RefreshInProgress { .. } => "refresh_in_progress",
            AwsError::NoActiveRefresh { .. } => "no_active_refresh",
        }
    }
}

/// A launch template and a version: the group's (the version as it was
/// set, `$Latest` included) or an instance's (the number it launched from).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct LaunchTemplateView {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) version: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct GroupInstanceView {
    pub(crate) instance_id: String,
    pub(crate) availability_zone: String,
    pub(crate) lifecycle_state: &'static str,
    pub(crate) health_status: &'static str,
    pub(crate) instance_type: String,
    pub(crate) launch_template: LaunchTemplateView,
    pub(crate) protected_from_scale_in: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct SuspendedProcessView {
    pub(crate) process_name: String,
    /// When it was suspended (the world's start for the scenario's own):
    /// AWS's `SuspensionReason` says so.
    pub(crate) suspended_unix_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct TagView {
    pub(crate) key: String,
    pub(crate) value: String,
}

/// DescribeAutoScalingGroups' view of the group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct GroupView {
    pub(crate) name: String,
    pub(crate) min_size: u32,
    pub(crate) max_size: u32,
    pub(crate) desired_capacity: u32,
    pub(crate) availability_zones: Vec<String>,
    /// The group's template, or its policy's (AWS then describes only
    /// the policy: `mixed_instances_policy`).
    pub(crate) launch_template: LaunchTemplateView,
    pub(crate) mixed_instances_policy: Option<MixedPolicyView>,
    pub(crate) instances: Vec<GroupInstanceView>,
    pub(crate) suspended_processes: Vec<SuspendedProcessView>,
    pub(crate) tags: Vec<TagView>,
    /// The role its agents' resources are reserved to (not AWS's: the
    /// scenario's, for tests and the report).
    pub(crate) role: Option<String>,
    pub(crate) instance_maintenance_policy: Option<MaintenancePolicySpec>,
}

/// DescribeScalingActivities' view of one activity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ActivityView {
    pub(crate) activity_id: String,
    pub(crate) group_name: String,
    pub(crate) description: String,
    pub(crate) cause: String,
    pub(crate) start_unix_ms: u64,
    pub(crate) end_unix_ms: Option<u64>,
    /// "InProgress", "Successful" or "Failed".
    pub(crate) status_code: &'static str,
    pub(crate) status_message: Option<String>,
    pub(crate) progress: u8,
}

/// EC2 DescribeInstances' view of one instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Ec2InstanceView {
    pub(crate) instance_id: String,
    /// The group that launched it (EC2's `aws:autoscaling:groupName` tag).
    pub(crate) group_name: String,
    pub(crate) availability_zone: String,
    /// "pending", "running", "shutting-down" or "terminated".
    pub(crate) state: &'static str,
    pub(crate) private_ip_address: String,
    pub(crate) private_dns_name: String,
    pub(crate) launch_unix_ms: u64,
    pub(crate) launch_template: LaunchTemplateView,
    pub(crate) instance_type: String,
    /// EC2's `instanceLifecycle` is `spot`.
    pub(crate) spot: bool,
    /// Launched into a subnet that gives instances a public IPv4 address:
    /// the group's agents are DC/OS public agents (`slave_public`), which
    /// sit at the edge; private agents have none.
    pub(crate) public_subnet: bool,
}
