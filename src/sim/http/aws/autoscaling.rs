//! The Auto Scaling actions (API version 2011-01-01) over the world: each
//! reads its parameters as the SDK sends them, asks the world, and writes
//! the `<{Action}Result>` body AWS returns (None for actions without one).

use std::collections::BTreeSet;

use super::mixed;
use super::query::{Params, QueryError, Service, max_records, page, world_error};
use super::tags::{TagFlags, create_or_update_tags, delete_tags, describe_tags};
use super::xml::{Xml, timestamp};
use super::{ACCOUNT, region_of};
use crate::sim::world::ids::subnet_id;
use crate::sim::world::{
    ActivityView, GroupUpdate, GroupView, LaunchTemplateChoice, LaunchTemplateView, RefreshView,
    World,
};

pub(super) fn dispatch(
    w: &mut World,
    flags: &mut TagFlags,
    action: &str,
    p: &Params,
) -> Option<Result<Option<String>, QueryError>> {
    Some(match action {
        "DescribeAutoScalingGroups" => describe_groups(w, flags, p).map(Some),
        "SetDesiredCapacity" => set_desired_capacity(w, p).map(|()| None),
        "TerminateInstanceInAutoScalingGroup" => terminate(w, p).map(Some),
        "SuspendProcesses" => processes(w, p, true).map(|()| None),
        "ResumeProcesses" => processes(w, p, false).map(|()| None),
        "UpdateAutoScalingGroup" => update_group(w, p).map(|()| None),
        "CreateOrUpdateTags" => create_or_update_tags(w, flags, p).map(|()| None),
        "DeleteTags" => delete_tags(w, flags, p).map(|()| None),
        "DescribeScalingActivities" => describe_activities(w, p).map(Some),
        "DescribeAutoScalingInstances" => describe_instances(w, p).map(Some),
        "DescribeTags" => describe_tags(w, flags, p).map(Some),
        "EnterStandby" => standby(w, p, true).map(Some),
        "ExitStandby" => standby(w, p, false).map(Some),
        // An empty `<…Result/>`, as AWS answers the actions whose output
        // shape is an (empty) `…Answer`: botocore looks for the element.
        "SetInstanceProtection" => set_instance_protection(w, p).map(|()| Some(String::new())),
        "StartInstanceRefresh" => refresh_id(w, p, true),
        "CancelInstanceRefresh" => refresh_id(w, p, false),
        "DescribeInstanceRefreshes" => describe_refreshes(w, p).map(Some),
        _ => return None,
    })
}

/// The Auto Scaling actions the facade answers.
pub(super) const ACTIONS: &[&str] = &[
    "DescribeAutoScalingGroups",
    "SetDesiredCapacity",
    "TerminateInstanceInAutoScalingGroup",
    "SuspendProcesses",
    "ResumeProcesses",
    "UpdateAutoScalingGroup",
    "CreateOrUpdateTags",
    "DeleteTags",
    "DescribeScalingActivities",
    "DescribeAutoScalingInstances",
    "DescribeTags",
    "EnterStandby",
    "ExitStandby",
    "SetInstanceProtection",
    "StartInstanceRefresh",
    "CancelInstanceRefresh",
    "DescribeInstanceRefreshes",
];

/// The group's ARN, with a UUID stable per name.
fn group_arn(name: &str, azs: &[String]) -> String {
    let region = region_of(azs.first().map(String::as_str).unwrap_or("us-east-1a"));
    let uuid = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, name.as_bytes());
    format!(
        "arn:aws:autoscaling:{region}:{ACCOUNT}:autoScalingGroup:{uuid}:autoScalingGroupName/{name}"
    )
}

fn launch_template_xml(x: &mut Xml, t: &LaunchTemplateView) {
    x.open("LaunchTemplate")
        .leaf("LaunchTemplateId", &t.id)
        .leaf("LaunchTemplateName", &t.name)
        .leaf("Version", &t.version)
        .close("LaunchTemplate");
}

fn group_xml(x: &mut Xml, w: &World, flags: &TagFlags, g: &GroupView) {
    let created = timestamp(w.epoch().unix_ms);
    x.open("member").leaf("AutoScalingGroupName", &g.name).leaf(
        "AutoScalingGroupARN",
        group_arn(&g.name, &g.availability_zones),
    );
    // A group has one launch source: AWS describes a policy's group with
    // the policy alone.
    match &g.mixed_instances_policy {
        Some(policy) => mixed::policy_xml(x, policy),
        None => launch_template_xml(x, &g.launch_template),
    }
    x.leaf("MinSize", g.min_size)
        .leaf("MaxSize", g.max_size)
        .leaf("DesiredCapacity", g.desired_capacity)
        .leaf("DefaultCooldown", 300)
        .list(
            "AvailabilityZones",
            "member",
            g.availability_zones.iter().map(String::as_str),
        )
        .empty("LoadBalancerNames")
        .empty("TargetGroupARNs")
        .leaf("HealthCheckType", "EC2")
        .leaf("HealthCheckGracePeriod", 300)
        .open("Instances");
    for i in &g.instances {
        x.open("member")
            .leaf("InstanceId", &i.instance_id)
            .leaf("InstanceType", &i.instance_type)
            .leaf("AvailabilityZone", &i.availability_zone)
            .leaf("LifecycleState", i.lifecycle_state)
            .leaf("HealthStatus", i.health_status);
        launch_template_xml(x, &i.launch_template);
        x.leaf("ProtectedFromScaleIn", i.protected_from_scale_in)
            .close("member");
    }
    x.close("Instances")
        .leaf("CreatedTime", created)
        .open("SuspendedProcesses");
    for s in &g.suspended_processes {
        x.open("member")
            .leaf("ProcessName", &s.process_name)
            .leaf("SuspensionReason", suspension_reason(s.suspended_unix_ms))
            .close("member");
    }
    let subnets: Vec<String> = g
        .availability_zones
        .iter()
        .map(|az| subnet_id(az))
        .collect();
    x.close("SuspendedProcesses")
        .leaf("VPCZoneIdentifier", subnets.join(","))
        .empty("EnabledMetrics")
        .open("Tags");
    for t in &g.tags {
        x.open("member")
            .leaf("ResourceId", &g.name)
            .leaf("ResourceType", "auto-scaling-group")
            .leaf("Key", &t.key)
            .leaf("Value", &t.value)
            .leaf("PropagateAtLaunch", flags.get(&g.name, &t.key))
            .close("member");
    }
    x.close("Tags")
        .list("TerminationPolicies", "member", ["Default"])
        .leaf("NewInstancesProtectedFromScaleIn", false)
        .leaf(
            "ServiceLinkedRoleARN",
            format!("arn:aws:iam::{ACCOUNT}:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling"),
        )
        .leaf("CapacityRebalance", false);
    if let Some(policy) = &g.instance_maintenance_policy {
        x.open("InstanceMaintenancePolicy")
            .leaf("MinHealthyPercentage", policy.min_healthy_percentage)
            .leaf("MaxHealthyPercentage", policy.max_healthy_percentage)
            .close("InstanceMaintenancePolicy");
    }
    x.close("member");
}

/// One filter of DescribeAutoScalingGroups: `tag-key`, `tag-value` or
/// `tag:<key>` with its values (ORed); the filters are ANDed, as AWS's
/// `Filter` documents.
enum GroupFilter {
    TagKey(BTreeSet<String>),
    TagValue(BTreeSet<String>),
    Tag(String, BTreeSet<String>),
}

impl GroupFilter {
    fn read(p: &Params) -> Result<Vec<GroupFilter>, QueryError> {
        let mut filters = Vec::new();
        for fields in p.structs("Filters.member") {
            let name = fields.get("Name").cloned().unwrap_or_default();
            let values: BTreeSet<String> = fields
                .iter()
                .filter(|(k, _)| k.starts_with("Values.member."))
                .map(|(_, v)| v.clone())
                .collect();
            filters.push(match name.as_str() {
                "tag-key" => GroupFilter::TagKey(values),
                "tag-value" => GroupFilter::TagValue(values),
                _ => match name.strip_prefix("tag:") {
                    Some(key) if !key.is_empty() => GroupFilter::Tag(key.to_string(), values),
                    _ => {
                        // AWS's wording for an unknown filter is not
                        // established: DescribeTags' form.
                        return Err(QueryError::sender(
                            "ValidationError",
                            format!(
                                "Filter type {name} is not correct. Allowed Filter types are: tag-key tag-value tag:<key>"
                            ),
                        ));
                    }
                },
            });
        }
        Ok(filters)
    }

    fn matches(&self, g: &GroupView) -> bool {
        match self {
            GroupFilter::TagKey(keys) => g.tags.iter().any(|t| keys.contains(&t.key)),
            GroupFilter::TagValue(values) => g.tags.iter().any(|t| values.contains(&t.value)),
            GroupFilter::Tag(key, values) => g
                .tags
                .iter()
                .any(|t| &t.key == key && values.contains(&t.value)),
        }
    }
}

/// DescribeAutoScalingGroups: the named groups (every group when none is
/// named), in name order, narrowed by `Filters`, paged by MaxRecords and
/// NextToken.
fn describe_groups(w: &mut World, flags: &TagFlags, p: &Params) -> Result<String, QueryError> {
    let names = p.list("AutoScalingGroupNames.member");
    let max = max_records(p)?;
    let filters = GroupFilter::read(p)?;
    let groups: Vec<GroupView> = w
        .describe_groups(&names)
        .into_iter()
        .filter(|g| filters.iter().all(|f| f.matches(g)))
        .collect();
    let (groups, next) = page(
        Service::AutoScaling,
        groups,
        |g| g.name.as_str(),
        p.get("NextToken"),
        max,
    )?;
    let mut x = Xml::new();
    x.open("AutoScalingGroups");
    for g in &groups {
        group_xml(&mut x, w, flags, g);
    }
    x.close("AutoScalingGroups").opt_leaf("NextToken", next);
    Ok(x.finish())
}

/// DescribeAutoScalingInstances: the named instances of any group (all
/// when none is named; unknown ids left out; at most 50 named, as AWS
/// allows), paged by MaxRecords (1 to 50, default 50). Its HealthStatus is
/// upper case, unlike DescribeAutoScalingGroups' (`HEALTHY`, as AWS
/// writes it).
fn describe_instances(w: &mut World, p: &Params) -> Result<String, QueryError> {
    let named = p.list("InstanceIds.member");
    if named.len() > 50 {
        return Err(QueryError::sender(
            "ValidationError",
            format!(
                "1 validation error detected: Value '{named:?}' at 'instanceIds' failed to satisfy constraint: Member must have length less than or equal to 50"
            ),
        ));
    }
    let ids: BTreeSet<String> = named.into_iter().collect();
    let max = match p.int("MaxRecords")? {
        None => 50,
        Some(n) if (1..=50).contains(&n) => n as usize,
        Some(n) => {
            return Err(QueryError::sender(
                "ValidationError",
                format!(
                    "1 validation error detected: Value '{n}' at 'maxRecords' failed to satisfy constraint: Member must have value between 1 and 50"
                ),
            ));
        }
    };
    let mut members = Vec::new();
    for g in w.describe_groups(&[]) {
        for i in g.instances {
            if ids.is_empty() || ids.contains(&i.instance_id) {
                members.push((g.name.clone(), i));
            }
        }
    }
    members.sort_by(|a, b| a.1.instance_id.cmp(&b.1.instance_id));
    let (members, next) = page(
        Service::AutoScaling,
        members,
        |(_, i)| i.instance_id.as_str(),
        p.get("NextToken"),
        max,
    )?;
    let mut x = Xml::new();
    x.open("AutoScalingInstances");
    for (group, i) in &members {
        x.open("member")
            .leaf("InstanceId", &i.instance_id)
            .leaf("InstanceType", &i.instance_type)
            .leaf("AutoScalingGroupName", group)
            .leaf("AvailabilityZone", &i.availability_zone)
            .leaf("LifecycleState", i.lifecycle_state)
            .leaf("HealthStatus", i.health_status.to_ascii_uppercase());
        launch_template_xml(&mut x, &i.launch_template);
        x.leaf("ProtectedFromScaleIn", i.protected_from_scale_in)
            .close("member");
    }
    x.close("AutoScalingInstances").opt_leaf("NextToken", next);
    Ok(x.finish())
}

/// SetInstanceProtection: ProtectedFromScaleIn is required, as AWS has it.
fn set_instance_protection(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let ids = p.list("InstanceIds.member");
    p.required("ProtectedFromScaleIn")?;
    let protected = p.bool("ProtectedFromScaleIn")?.unwrap_or(false);
    w.set_instance_protection(group, &ids, protected)
        .map_err(world_error)
}

fn set_desired_capacity(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    p.required("DesiredCapacity")?;
    let desired = p.size("DesiredCapacity")?.unwrap_or(0);
    // The world has no cooldowns, so HonorCooldown never refuses; it is
    // still checked to be a boolean, as AWS does.
    p.bool("HonorCooldown")?;
    w.set_desired_capacity(group, desired).map_err(world_error)
}

fn activity_xml(x: &mut Xml, tag: &str, a: &ActivityView, azs: &[String]) {
    x.open(tag)
        .leaf("ActivityId", &a.activity_id)
        .leaf("AutoScalingGroupARN", group_arn(&a.group_name, azs))
        .leaf("AutoScalingGroupName", &a.group_name)
        .leaf("Description", &a.description)
        .leaf("Cause", &a.cause)
        .leaf("StartTime", timestamp(a.start_unix_ms))
        .opt_leaf("EndTime", a.end_unix_ms.map(timestamp))
        .leaf("StatusCode", a.status_code)
        .opt_leaf("StatusMessage", a.status_message.as_deref())
        .leaf("Progress", a.progress)
        .leaf("Details", "{}")
        .close(tag);
}

/// A group's AZs (for its ARN's region); none for a name that is no group.
fn group_azs(w: &World, group: &str) -> Vec<String> {
    w.describe_groups(&[group.to_string()])
        .into_iter()
        .next()
        .map(|g| g.availability_zones)
        .unwrap_or_default()
}

fn terminate(w: &mut World, p: &Params) -> Result<String, QueryError> {
    let instance = p.required("InstanceId")?;
    p.required("ShouldDecrementDesiredCapacity")?;
    let decrement = p.bool("ShouldDecrementDesiredCapacity")?.unwrap_or(false);
    let activity = w
        .terminate_instance(instance, decrement)
        .map_err(world_error)?;
    let mut x = Xml::new();
    activity_xml(
        &mut x,
        "Activity",
        &activity,
        &group_azs(w, &activity.group_name),
    );
    Ok(x.finish())
}

/// EnterStandby (`enter`) or ExitStandby: `<Activities>`, one per
/// instance. EnterStandby requires ShouldDecrementDesiredCapacity, as AWS
/// does.
fn standby(w: &mut World, p: &Params, enter: bool) -> Result<String, QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let ids = p.list("InstanceIds.member");
    let activities = if enter {
        p.required("ShouldDecrementDesiredCapacity")?;
        let decrement = p.bool("ShouldDecrementDesiredCapacity")?.unwrap_or(false);
        w.enter_standby(group, &ids, decrement)
    } else {
        w.exit_standby(group, &ids)
    }
    .map_err(world_error)?;
    let azs = group_azs(w, group);
    let mut x = Xml::new();
    x.open("Activities");
    for a in &activities {
        activity_xml(&mut x, "member", a, &azs);
    }
    x.close("Activities");
    Ok(x.finish())
}

fn processes(w: &mut World, p: &Params, suspend: bool) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let names = p.list("ScalingProcesses.member");
    if suspend {
        w.suspend_processes(group, &names)
    } else {
        w.resume_processes(group, &names)
    }
    .map_err(world_error)
}

/// AWS's reason for a suspended process: "User suspended at" and when, in
/// whole seconds (2011-10-07T22:02:06Z).
fn suspension_reason(suspended_unix_ms: u64) -> String {
    let stamp = timestamp(suspended_unix_ms / 1000 * 1000);
    format!(
        "User suspended at {}Z",
        stamp.trim_end_matches('Z').trim_end_matches(".000")
    )
}

/// The parameters of UpdateAutoScalingGroup the world models (`Version`
/// is the API's, `LaunchTemplate.Version` the template's). Others (launch
/// configurations, health checks, subnets, …) are refused rather than
/// accepted and ignored, so no caller believes a change it did not get.
const UPDATE_PARAMS: &[&str] = &[
    "Action",
    "Version",
    "AutoScalingGroupName",
    "MinSize",
    "MaxSize",
    "DesiredCapacity",
    "LaunchTemplate.LaunchTemplateId",
    "LaunchTemplate.LaunchTemplateName",
    "LaunchTemplate.Version",
];

fn update_group(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    if let Some(other) = p
        .names()
        .find(|n| !UPDATE_PARAMS.contains(n) && !mixed::is_policy_param(n))
    {
        return Err(QueryError::sender(
            "ValidationError",
            format!(
                "The simulator's UpdateAutoScalingGroup changes only MinSize, MaxSize, DesiredCapacity, LaunchTemplate and MixedInstancesPolicy, not {other}"
            ),
        ));
    }
    // The `LaunchTemplate` structure, as the Query protocol flattens it;
    // any of its members makes it present (the world checks the rest).
    let member = |name: &str| p.get(&format!("LaunchTemplate.{name}")).map(str::to_string);
    let choice = LaunchTemplateChoice {
        id: member("LaunchTemplateId"),
        name: member("LaunchTemplateName"),
        version: member("Version"),
    };
    let launch_template = (choice != LaunchTemplateChoice::default()).then_some(choice);
    let update = GroupUpdate {
        min: p.size("MinSize")?,
        max: p.size("MaxSize")?,
        desired: p.size("DesiredCapacity")?,
        launch_template,
        mixed_instances_policy: mixed::policy_update(p)?,
    };
    w.update_group_with(group, update).map_err(world_error)
}

/// DescribeScalingActivities: the group's activities, newest first, or
/// every group's when none is named ("the scaling activities in the
/// account and Region"), by start time.
fn describe_activities(w: &mut World, p: &Params) -> Result<String, QueryError> {
    let max = max_records(p)?;
    let wanted: BTreeSet<String> = p.list("ActivityIds.member").into_iter().collect();
    let groups: Vec<String> = match p.get("AutoScalingGroupName") {
        Some(g) if !g.is_empty() => vec![g.to_string()],
        _ => w.describe_groups(&[]).into_iter().map(|g| g.name).collect(),
    };
    // AWS lists no activities (not an error) for a group it does not know.
    let mut activities: Vec<ActivityView> = groups
        .iter()
        .flat_map(|g| w.scaling_activities(g, usize::MAX).unwrap_or_default())
        .filter(|a| wanted.is_empty() || wanted.contains(&a.activity_id))
        .collect();
    // Each group's come newest first; merged, newest first across groups.
    activities.sort_by_key(|a| std::cmp::Reverse(a.start_unix_ms));
    let (activities, next) = page(
        Service::AutoScaling,
        activities,
        |a| a.activity_id.as_str(),
        p.get("NextToken"),
        max,
    )?;
    let mut x = Xml::new();
    x.open("Activities");
    for a in &activities {
        activity_xml(&mut x, "member", a, &group_azs(w, &a.group_name));
    }
    x.close("Activities").opt_leaf("NextToken", next);
    Ok(x.finish())
}

/// The answer of StartInstanceRefresh and CancelInstanceRefresh: the
/// refresh's id.
fn refresh_id(w: &mut World, p: &Params, start: bool) -> Result<Option<String>, QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let id = if start {
        w.start_instance_refresh(group)
    } else {
        w.cancel_instance_refresh(group)
    }
    .map_err(world_error)?;
    let mut x = Xml::new();
    x.leaf("InstanceRefreshId", id);
    Ok(Some(x.finish()))
}

/// DescribeInstanceRefreshes: the group's refreshes, newest first (for a
/// name that is no group, none, as for its scaling activities).
fn describe_refreshes(w: &mut World, p: &Params) -> Result<String, QueryError> {
    let max = max_records(p)?;
    let group = p.required("AutoScalingGroupName")?;
    let wanted: BTreeSet<String> = p.list("InstanceRefreshIds.member").into_iter().collect();
    let refreshes: Vec<RefreshView> = w
        .instance_refreshes(group)
        .unwrap_or_default()
        .into_iter()
        .filter(|r| wanted.is_empty() || wanted.contains(&r.instance_refresh_id))
        .collect();
    let (refreshes, next) = page(
        Service::AutoScaling,
        refreshes,
        |r| r.instance_refresh_id.as_str(),
        p.get("NextToken"),
        max,
    )?;
    let mut x = Xml::new();
    x.open("InstanceRefreshes");
    for r in &refreshes {
        x.open("member")
            .leaf("InstanceRefreshId", &r.instance_refresh_id)
            .leaf("AutoScalingGroupName", &r.group_name)
            .leaf("Status", r.status)
            .leaf("StartTime", timestamp(r.start_unix_ms))
            .opt_leaf("EndTime", r.end_unix_ms.map(timestamp))
            .close("member");
    }
    x.close("InstanceRefreshes").opt_leaf("NextToken", next);
    Ok(x.finish())
}
