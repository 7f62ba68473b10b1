//! The Auto Scaling group as the roll sees it: the `AutoScaling` trait (one
//! group, its instances, the few writes a roll makes) with plain domain
//! types, and, re-exported from `agent_match`, how EC2 instances are matched
//! to Mesos agents. The AWS adapter (`crate::aws`) implements the trait;
//! nothing here knows the SDK.

use std::fmt;
use std::future::Future;
use std::time::SystemTime;

use crate::by_id::ById;

pub(crate) use super::alarms::{AlarmState, AlarmStateValue};
pub(crate) use super::auto_scaling_error::AutoScalingError;
pub use super::ec2::Ec2Instance;
pub(crate) use super::ec2::{AgentIdentity, AgentMatch, AgentMatches, instance_key, match_agents};
pub(crate) use super::launch_source::is_outdated;
pub use super::launch_source::{LaunchSource, LifecycleState};
pub(crate) use super::lifecycle_hooks::{
    HookTransition, LifecycleActionCompletion, LifecycleActionResult, LifecycleHook,
};
pub use super::mixed_instances::MixedInstancesPolicy;
pub use super::warm_pool::{WarmInstance, WarmPool};

/// What the roll reads of, and does to, one Auto Scaling group and its EC2
/// instances. Every write names the group, and every write is safe to run
/// again after a crash (each method says why).
pub trait AutoScaling {
    /// The group with its sizes, instances, suspended processes and tags.
    /// An unknown name is an error, never an empty group.
    fn describe_group(
        &self,
        group: &str,
    ) -> impl Future<Output = Result<AutoScalingGroup, AutoScalingError>> + Send;

    /// Every group carrying a tag with key `key` (whatever its value),
    /// across all pages: how a roll finds the groups other rolls hold.
    /// None is an empty list.
    fn groups_tagged(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Vec<AutoScalingGroup>, AutoScalingError>> + Send;

    /// Sets the desired capacity at once (cooldowns are not honoured: the
    /// roll, not a cooldown, paces itself). Refused when `desired` is outside
    /// [MinSize, MaxSize]. Setting an absolute value is idempotent.
    fn set_desired_capacity(
        &self,
        group: &str,
        desired: u32,
    ) -> impl Future<Output = Result<(), AutoScalingError>> + Send;

    /// Terminates `instance` and decrements the desired capacity, so the
    /// group does not launch a replacement. Checks first that the instance
    /// is still in the group: re-running after a crash reports `AlreadyGone`
    /// instead of failing or terminating something else. Refused when
    /// desired − 1 would fall below MinSize.
    fn terminate_instance(
        &self,
        group: &str,
        instance: &str,
    ) -> impl Future<Output = Result<Termination, AutoScalingError>> + Send;

    /// Terminates `instance` without a decrement: the group launches a
    /// new instance in its place (a capped surge's old agents, while the
    /// group is to stay at its ceiling). The same checks and answers as
    /// `terminate_instance`, but MinSize is not concerned: the desired
    /// capacity stays.
    fn terminate_and_replace(
        &self,
        group: &str,
        instance: &str,
    ) -> impl Future<Output = Result<Termination, AutoScalingError>> + Send;

    /// Terminates each of `requests` as `terminate_instance` (or, with
    /// `replace`, `terminate_and_replace`) does, with the same checks and
    /// answers, made for many at once: the checks read many instances in
    /// one call, and several terminations are in flight together (their
    /// decrements counted against MinSize together). An answer per
    /// request, in order, as far as the sends went: an error is the last
    /// answer but the other answers of its round (requests after it were
    /// not sent). A re-run after a crash finds what landed `AlreadyGone`.
    fn terminate_many(
        &self,
        group: &str,
        requests: &[TerminationRequest<'_>],
    ) -> impl Future<Output = Vec<Result<Termination, AutoScalingError>>> + Send;

    /// Suspends exactly `processes` (an empty list is refused: AWS reads it
    /// as "all nine"). Suspending a suspended process is a no-op.
    fn suspend_processes(
        &self,
        group: &str,
        processes: &[ScalingProcess],
    ) -> impl Future<Output = Result<(), AutoScalingError>> + Send;

    /// Resumes exactly `processes` (an empty list is refused: AWS reads it
    /// as "all"). Resuming a running process is a no-op.
    fn resume_processes(
        &self,
        group: &str,
        processes: &[ScalingProcess],
    ) -> impl Future<Output = Result<(), AutoScalingError>> + Send;

    /// Sets MinSize and MaxSize (absolute values, so idempotent). Refused
    /// when min > max.
    fn update_size_limits(
        &self,
        group: &str,
        min: u32,
        max: u32,
    ) -> impl Future<Output = Result<(), AutoScalingError>> + Send;

    /// Sets what the group launches new instances from: a launch template
    /// (by id or name, and version), a launch configuration, or a mixed
    /// instances policy of which only template versions may change
    /// (absolute, so idempotent). Refused when it would change the kind of
    /// source the group has, or a policy's overrides or distribution: the
    /// group's shape is never the roll's to change. Instances already
    /// running are not touched.
    fn set_launch_source(
        &self,
        group: &str,
        source: &LaunchSource,
    ) -> impl Future<Output = Result<(), AutoScalingError>> + Send;

    /// Creates or overwrites tags on the group (idempotent).
    fn put_tags(
        &self,
        group: &str,
        tags: &[GroupTag],
    ) -> impl Future<Output = Result<(), AutoScalingError>> + Send;

    /// Deletes tags by key from the group (deleting a missing tag is a no-op).
    fn delete_tags(
        &self,
        group: &str,
        keys: &[String],
    ) -> impl Future<Output = Result<(), AutoScalingError>> + Send;

    /// The group's most recent scaling activities, newest first, at most
    /// `limit` of them: where launch failures show up.
    fn scaling_activities(
        &self,
        group: &str,
        limit: usize,
    ) -> impl Future<Output = Result<Vec<ScalingActivity>, AutoScalingError>> + Send;

    /// The group's instance refreshes, newest first: whether another hand
    /// (Terraform's `instance_refresh`, the console) is replacing its
    /// instances, without draining their agents. None is an empty list.
    fn instance_refreshes(
        &self,
        group: &str,
    ) -> impl Future<Output = Result<Vec<InstanceRefresh>, AutoScalingError>> + Send;

    /// The group's lifecycle hooks (none is an empty list): what holds
    /// its instances in `Pending:Wait` or `Terminating:Wait`, and for how
    /// long.
    fn lifecycle_hooks(
        &self,
        group: &str,
    ) -> impl Future<Output = Result<Vec<LifecycleHook>, AutoScalingError>> + Send;

    /// Ends `instance`'s wait for `hook` with `result`. Safe to run again:
    /// when no action of the hook waits for the instance (completed
    /// already, timed out), the answer is `NotWaiting`, not an error.
    fn complete_lifecycle_action(
        &self,
        group: &str,
        hook: &str,
        instance: &str,
        result: LifecycleActionResult,
    ) -> impl Future<Output = Result<LifecycleActionCompletion, AutoScalingError>> + Send;

    /// Moves `instances`, each in Standby, back in service; the group's
    /// desired capacity grows by their number. Instances no longer in
    /// Standby are left out of the call, so running it again after a crash
    /// is a no-op for those already back.
    fn exit_standby(
        &self,
        group: &str,
        instances: &[String],
    ) -> impl Future<Output = Result<(), AutoScalingError>> + Send;
    /// The group's warm pool, its instances across all pages; `None` when
    /// the group has none.
    fn warm_pool(
        &self,
        group: &str,
    ) -> impl Future<Output = Result<Option<WarmPool>, AutoScalingError>> + Send;

    /// Terminates `instance` out of the group's warm pool, without
    /// decrement (warm instances do not count against desired capacity):
    /// the pool refills from the group's launch source as it is now.
    /// Checks first that the instance is still in the pool: re-running
    /// after a crash reports `AlreadyGone`.
    fn terminate_warm_instance(
        &self,
        group: &str,
        instance: &str,
    ) -> impl Future<Output = Result<Termination, AutoScalingError>> + Send;

    /// EC2's view of the given instances (private IP and DNS name, which the
    /// group does not carry). Ids EC2 does not know are left out.
    fn describe_instances(
        &self,
        ids: &[String],
    ) -> impl Future<Output = Result<Vec<Ec2Instance>, AutoScalingError>> + Send;

    /// CloudWatch's view of the named alarms, metric and composite alike,
    /// across all pages. Names CloudWatch does not know are left out; no
    /// names is no call.
    fn describe_alarms(
        &self,
        names: &[String],
    ) -> impl Future<Output = Result<Vec<AlarmState>, AutoScalingError>> + Send;
}

/// One Auto Scaling group, as DescribeAutoScalingGroups reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoScalingGroup {
    pub(crate) name: String,
    pub min_size: u32,
    pub max_size: u32,
    pub desired_capacity: u32,
    pub(crate) availability_zones: Vec<String>,
    pub instances: Vec<GroupInstance>,
    pub suspended_processes: Vec<ScalingProcess>,
    pub tags: Vec<GroupTag>,
    /// What new instances launch from; `None` only for groups whose source
    /// this port does not model.
    pub launch_source: Option<LaunchSource>,
    /// Its instance maintenance policy, when it has one.
    pub(crate) maintenance_policy: Option<MaintenancePolicy>,
    /// `instances` by id (a group of thousands is asked about each of the
    /// roll's instances every tick).
    pub(crate) by_id: ById,
}

/// A group's instance maintenance policy: how far below and above its
/// desired capacity, in percent of it, the group may go while its
/// instances are replaced (`MinHealthyPercentage` 0–100,
/// `MaxHealthyPercentage` 100–200; AWS's −1, unset, is `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MaintenancePolicy {
    pub(crate) min_healthy_percentage: Option<u32>,
    pub(crate) max_healthy_percentage: Option<u32>,
}

impl AutoScalingGroup {
    pub fn instance(&self, id: &str) -> Option<&GroupInstance> {
        let at = self.by_id.position(&self.instances, id, |i| &i.id)?;
        self.instances.get(at)
    }

    /// Whether the group still has instance `id` and it is not on its way
    /// out (terminating, lifecycle hook waits included).
    pub(crate) fn still_has(&self, id: &str) -> bool {
        self.instance(id)
            .is_some_and(|i| !i.lifecycle_state.is_leaving())
    }

    pub fn tag(&self, key: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|t| t.key == key)
            .map(|t| t.value.as_str())
    }
}

/// One instance as the group sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInstance {
    pub id: String,
    pub(crate) availability_zone: String,
    pub lifecycle_state: LifecycleState,
    /// "Healthy" or "Unhealthy" in AWS's words.
    pub(crate) health_status: String,
    /// What this instance was launched from: an instance launched from an
    /// older template version than the group's is one to replace.
    pub(crate) launch_source: Option<LaunchSource>,
    pub(crate) protected_from_scale_in: bool,
    /// Its EC2 instance type: on a mixed instances policy, which override
    /// (and so which template) applies to it.
    pub(crate) instance_type: Option<String>,
}

impl GroupInstance {
    /// Whether it runs another launch source than the one the group would
    /// launch it from now: on a mixed instances policy, the template (and
    /// version) of its instance type's override, else the policy's.
    pub(crate) fn is_outdated(&self, group_source: Option<&LaunchSource>) -> bool {
        is_outdated(
            self.launch_source.as_ref(),
            self.instance_type.as_deref(),
            group_source,
        )
    }
}

/// The Auto Scaling processes that can be suspended. The roll suspends
/// `AZRebalance` only: with it running, terminating one instance can make
/// AWS launch in one AZ and terminate in another, two nodes at once.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalingProcess {
    Launch,
    Terminate,
    AddToLoadBalancer,
    AlarmNotification,
    AZRebalance,
    HealthCheck,
    InstanceRefresh,
    ReplaceUnhealthy,
    ScheduledActions,
    /// A process this port does not know yet, kept by name.
    Other(String),
}

impl ScalingProcess {
    pub fn as_str(&self) -> &str {
        match self {
            ScalingProcess::Launch => "Launch",
            ScalingProcess::Terminate => "Terminate",
            ScalingProcess::AddToLoadBalancer => "AddToLoadBalancer",
            ScalingProcess::AlarmNotification => "AlarmNotification",
            ScalingProcess::AZRebalance => "AZRebalance",
            ScalingProcess::HealthCheck => "HealthCheck",
            ScalingProcess::InstanceRefresh => "InstanceRefresh",
            ScalingProcess::ReplaceUnhealthy => "ReplaceUnhealthy",
            ScalingProcess::ScheduledActions => "ScheduledActions",
            ScalingProcess::Other(name) => name,
        }
    }

    pub(crate) fn parse(name: &str) -> ScalingProcess {
        match name {
            "Launch" => ScalingProcess::Launch,
            "Terminate" => ScalingProcess::Terminate,
            "AddToLoadBalancer" => ScalingProcess::AddToLoadBalancer,
            "AlarmNotification" => ScalingProcess::AlarmNotification,
            "AZRebalance" => ScalingProcess::AZRebalance,
            "HealthCheck" => ScalingProcess::HealthCheck,
            "InstanceRefresh" => ScalingProcess::InstanceRefresh,
            "ReplaceUnhealthy" => ScalingProcess::ReplaceUnhealthy,
            "ScheduledActions" => ScalingProcess::ScheduledActions,
            other => ScalingProcess::Other(other.to_string()),
        }
    }
}

impl fmt::Display for ScalingProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tag on the group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupTag {
    pub key: String,
    pub value: String,
    /// Whether instances launched later carry the tag too.
    pub propagate_at_launch: bool,
}

/// One termination of `terminate_many`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerminationRequest<'a> {
    pub instance: &'a str,
    /// Without a decrement: the group launches one in its place.
    pub replace: bool,
}

/// What a terminate call found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Termination {
    /// The group accepted the termination; the activity tracks it.
    Started(ScalingActivity),
    /// The instance was no longer in the group (or already leaving it):
    /// nothing was done. A re-run after a crash lands here.
    AlreadyGone,
}

impl std::fmt::Display for Termination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Termination::Started(activity) => write!(
                f,
                "termination accepted (activity {}, {}): {}",
                activity.id, activity.status, activity.cause
            ),
            Termination::AlreadyGone => {
                f.write_str("no longer in the group (or already leaving it): nothing sent")
            }
        }
    }
}

/// One scaling activity (a launch, a termination, a failure to launch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalingActivity {
    pub(crate) id: String,
    /// AWS's status code: `Successful`, `InProgress`, `Failed`, `Cancelled`, …
    pub(crate) status: String,
    pub(crate) description: String,
    pub(crate) cause: String,
    /// Why it failed, when it did.
    pub(crate) status_message: Option<String>,
    pub(crate) start_time: Option<SystemTime>,
    pub(crate) end_time: Option<SystemTime>,
}

impl ScalingActivity {
    pub(crate) fn is_failed(&self) -> bool {
        self.status == "Failed"
    }
}

/// One instance refresh of a group, as DescribeInstanceRefreshes reports
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceRefresh {
    pub(crate) id: String,
    /// AWS's status: `Pending`, `InProgress`, `Cancelling`, `Baking`,
    /// `RollbackInProgress` (replacing instances), or an ended one
    /// (`Successful`, `Failed`, `Cancelled`, `RollbackFailed`,
    /// `RollbackSuccessful`).
    pub(crate) status: String,
    pub(crate) start_time: Option<SystemTime>,
}

impl InstanceRefresh {
    /// Whether it may still replace instances: one AWS has not ended
    /// (an unknown status counts as active: the safe side).
    pub(crate) fn is_active(&self) -> bool {
        !matches!(
            self.status.as_str(),
            "Successful" | "Failed" | "Cancelled" | "RollbackFailed" | "RollbackSuccessful"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(id: &str, ip: &str, dns: &str) -> Ec2Instance {
        Ec2Instance {
            id: id.to_string(),
            private_ip: ip.parse().ok(),
            private_dns_name: Some(dns.to_string()),
            state: "running".to_string(),
            launch_time: None,
            availability_zone: Some("us-east-1a".to_string()),
        }
    }

    fn agent(id: &str, hostname: &str, ip: &str, attrs: &[(&str, &str)]) -> AgentIdentity {
        AgentIdentity {
            id: id.to_string(),
            hostname: hostname.to_string(),
            ip: ip.parse().ok(),
            attributes: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn agent_match_parses_ip_dns_and_attribute_and_prints_back() {
        assert_eq!("ip".parse(), Ok(AgentMatch::PrivateIp));
        assert_eq!("dns".parse(), Ok(AgentMatch::PrivateDns));
        assert_eq!(
            "attribute:instance_id".parse(),
            Ok(AgentMatch::Attribute("instance_id".to_string()))
        );
        assert!("attribute:".parse::<AgentMatch>().is_err());
        assert!("hostname".parse::<AgentMatch>().is_err());
        assert_eq!(AgentMatch::default(), AgentMatch::PrivateIp);
        for text in ["ip", "dns", "attribute:ec2_id"] {
            assert_eq!(text.parse::<AgentMatch>().unwrap().to_string(), text);
        }
    }

    #[test]
    fn matching_by_ip_pairs_instances_and_reports_both_sides_left_over() {
        let instances = [
            instance("i-1", "10.0.1.5", "ip-10-0-1-5.ec2.internal"),
            instance("i-2", "10.0.2.7", "ip-10-0-2-7.ec2.internal"),
        ];
        let agents = [
            agent("S1", "mesos-a", "10.0.1.5", &[]),
            agent("S9", "mesos-z", "10.0.9.9", &[]),
        ];
        let m = match_agents(&AgentMatch::PrivateIp, &instances, &agents);
        assert_eq!(m.matched, vec![("i-1".to_string(), "S1".to_string())]);
        assert_eq!(m.unmatched_instances, vec!["i-2".to_string()]);
        assert_eq!(m.unmatched_agents, vec!["S9".to_string()]);
        assert!(m.ambiguous.is_empty());
    }

    #[test]
    fn matching_by_dns_ignores_case() {
        let instances = [instance("i-1", "10.0.1.5", "IP-10-0-1-5.ec2.internal")];
        let agents = [agent("S1", "ip-10-0-1-5.EC2.internal", "10.9.9.9", &[])];
        let m = match_agents(&AgentMatch::PrivateDns, &instances, &agents);
        assert_eq!(m.matched, vec![("i-1".to_string(), "S1".to_string())]);
    }

    #[test]
    fn matching_by_attribute_reads_the_instance_id_from_the_agent() {
        let instances = [
            instance("i-abc", "10.0.1.5", "x"),
            instance("i-def", "", ""),
        ];
        let agents = [
            agent("S1", "h1", "10.0.1.5", &[("ec2_id", "i-def")]),
            agent("S2", "h2", "10.0.1.6", &[]),
        ];
        let how = AgentMatch::Attribute("ec2_id".to_string());
        let m = match_agents(&how, &instances, &agents);
        assert_eq!(m.matched, vec![("i-def".to_string(), "S1".to_string())]);
        assert_eq!(m.unmatched_instances, vec!["i-abc".to_string()]);
        assert_eq!(m.unmatched_agents, vec!["S2".to_string()]);
    }

    #[test]
    fn two_agents_claiming_one_ip_are_never_guessed_between() {
        let instances = [instance("i-new", "10.0.1.5", "x")];
        let agents = [
            agent("S-old", "h", "10.0.1.5", &[]),
            agent("S-new", "h", "10.0.1.5", &[]),
        ];
        let m = match_agents(&AgentMatch::PrivateIp, &instances, &agents);
        assert!(m.matched.is_empty());
        assert_eq!(m.ambiguous, vec!["10.0.1.5".to_string()]);
        assert_eq!(m.unmatched_instances, vec!["i-new".to_string()]);
        assert_eq!(m.unmatched_agents.len(), 2);
    }

    #[test]
    fn an_instance_without_a_private_ip_matches_nothing() {
        let instances = [instance("i-1", "", "")];
        let agents = [agent("S1", "", "10.0.0.1", &[])];
        let m = match_agents(&AgentMatch::PrivateIp, &instances, &agents);
        assert!(m.matched.is_empty());
        let m = match_agents(&AgentMatch::PrivateDns, &instances, &agents);
        assert!(m.matched.is_empty(), "empty DNS names must not pair up");
    }

    #[test]
    fn processes_round_trip_through_their_aws_names() {
        for name in [
            "Launch",
            "Terminate",
            "AddToLoadBalancer",
            "AlarmNotification",
            "AZRebalance",
            "HealthCheck",
            "InstanceRefresh",
            "ReplaceUnhealthy",
            "ScheduledActions",
            "SomethingNew",
        ] {
            assert_eq!(ScalingProcess::parse(name).as_str(), name);
        }
        assert_eq!(
            ScalingProcess::parse("AZRebalance"),
            ScalingProcess::AZRebalance
        );
    }

    #[test]
    fn leaving_states_include_lifecycle_hook_waits() {
        assert_eq!(
            LifecycleState::parse("Terminating:Wait"),
            LifecycleState::TerminatingWait
        );
        assert_eq!(
            LifecycleState::parse("Pending:Wait"),
            LifecycleState::PendingWait
        );
        assert!(LifecycleState::parse("Terminating:Wait").is_leaving());
        assert!(LifecycleState::parse("Terminating:Proceed").is_leaving());
        assert!(LifecycleState::parse("Terminated").is_leaving());
        assert!(!LifecycleState::parse("InService").is_leaving());
        assert!(!LifecycleState::parse("Pending:Wait").is_leaving());
    }
}
