//! Failure on the new agents (pure): from what Marathon reports, whether
//! anything the roll placed on a new agent has failed, which would mean the
//! new image is bad. Marathon's signs, each checked against its source:
//!
//! - an app's `lastTaskFailure` on a new agent: a task that failed
//!   (`TASK_FAILED`, `TASK_ERROR`), was lost (`TASK_LOST`), or was killed
//!   for failing its health checks (`TASK_KILLED` with Marathon's message
//!   "Task was killed since health check failed"; kills asked through the
//!   API leave no task failure: `TaskFailure.scala`);
//! - a task on a new agent whose health check has failed (Marathon counts
//!   no failure during the check's grace period, so one counted is real);
//! - a launch delay on Marathon's queue for an app the roll moved (its
//!   `RateLimiter` delays an app's launches only after failed tasks).
//!
//! Apps the operator allowed to be unhealthy are left out, and so is any
//! failure an operator has already acknowledged (by resuming a roll it
//! paused with `--acknowledge-failure`): acknowledging a failure of an
//! app acknowledges the app (`acknowledged_app`), whose other tasks may
//! have failed the same way before it was healed; its health waits still
//! count it.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime};

use crate::roll::ports::marathon::{App, QueuedLaunch};

/// Marathon's message for a task it killed for failing its health checks
/// (`TaskFailure.FromUnhealthyTaskKillEvent`).
const HEALTH_KILL: &str = "Task was killed since health check failed";

/// A new agent, as the roll recorded it when it registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NewAgentRef<'a> {
    pub(crate) instance: &'a str,
    pub(crate) agent_id: &'a str,
    pub(crate) hostname: &'a str,
}

/// What failed, with the evidence a human needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Evidence {
    /// Names this failure, so one acknowledged is never reported again.
    pub(crate) key: String,
    pub(crate) app: Option<String>,
    pub(crate) task: Option<String>,
    pub(crate) agent: Option<String>,
    pub(crate) instance: Option<String>,
    /// What failed, as a phrase ("TASK_FAILED: Abnormal executor
    /// termination", "health check failed 2 time(s) in a row").
    pub(crate) what: String,
    /// When it failed, by Marathon's clock, when Marathon says.
    pub(crate) since: Option<SystemTime>,
}

/// What the watch looks at.
pub(crate) struct Watched<'a> {
    pub(crate) apps: &'a [App],
    pub(crate) queue: &'a [QueuedLaunch],
    pub(crate) new_agents: &'a [NewAgentRef<'a>],
    /// Apps whose tasks the roll moved (a wave's or a surge's).
    pub(crate) moved: &'a HashSet<String>,
    /// Apps allowed to be unhealthy (`--allow-unhealthy`).
    pub(crate) allowed: &'a [String],
    /// Keys of failures already acknowledged.
    pub(crate) acknowledged: &'a [String],
    /// New agents' instances that have left their group (terminated or
    /// terminating by another hand than the roll's: a Spot interruption,
    /// an EC2 failure) or that the group marks unhealthy.
    pub(crate) departed: &'a HashSet<String>,
}

/// The new agents by agent id and by host name (lower case), built once
/// per look: every task of every app is looked up (17,600 tasks against
/// 2,000 new agents at scale, where a search of the list for each was a
/// tenth of roller's CPU).
struct NewAgents<'w, 'a> {
    by_id: HashMap<&'a str, &'w NewAgentRef<'a>>,
    by_host: HashMap<String, &'w NewAgentRef<'a>>,
}

impl<'w, 'a> NewAgents<'w, 'a> {
    fn of(agents: &'w [NewAgentRef<'a>]) -> NewAgents<'w, 'a> {
        let mut by_id = HashMap::new();
        let mut by_host = HashMap::new();
        for agent in agents {
            by_id.entry(agent.agent_id).or_insert(agent);
            by_host
                .entry(agent.hostname.to_ascii_lowercase())
                .or_insert(agent);
        }
        NewAgents { by_id, by_host }
    }

    /// The new agent a task ran on: by its agent id, or, when Marathon
    /// gives none, by its host.
    fn find(&self, agent: Option<&str>, host: Option<&str>) -> Option<&'w NewAgentRef<'a>> {
        match (agent, host) {
            (Some(id), _) => self.by_id.get(id).copied(),
            (None, Some(host)) => self.by_host.get(&host.to_ascii_lowercase()).copied(),
            (None, None) => None,
        }
    }
}

impl Watched<'_> {
    /// Whether the failure named `key` is not acknowledged yet.
    fn fresh(&self, key: &str) -> bool {
        !self.acknowledged.iter().any(|k| k == key)
    }

    /// Whether the watch looks at `app`: neither allowed to be unhealthy
    /// nor acknowledged as a whole.
    fn guarded(&self, app: &str) -> bool {
        !self.allowed.iter().any(|a| a == app) && self.fresh(&acknowledged_app(app))
    }
}

/// Every sign that something the roll placed on a new agent failed, none
/// when all is well: failed tasks first, then failing health checks, then
/// launch delays, each in the order Marathon lists apps. The first is the
/// one a roll without a failure limit acts on (`failure_limit::judge`
/// weighs them all).
pub(crate) fn detect(watched: &Watched<'_>) -> Vec<Evidence> {
    let agents = NewAgents::of(watched.new_agents);
    let mut found = failed_tasks(watched, &agents);
    found.extend(failing_health_checks(watched, &agents));
    found.extend(launch_delays(watched));
    found
}

/// Task states that say the task's agent went, not that the task
/// failed: Mesos' lost and gone states, and the partition-aware
/// unreachable and dropped ones.
const AGENT_WENT: &[&str] = &[
    "TASK_LOST",
    "TASK_GONE",
    "TASK_GONE_BY_OPERATOR",
    "TASK_UNREACHABLE",
    "TASK_DROPPED",
];

/// Each app's last task failure on a new agent: failed, lost, or killed
/// for failing its health checks. A task lost with its agent when the
/// agent's instance left the group (reclaimed, failed in EC2) says
/// nothing of the image.
fn failed_tasks(watched: &Watched<'_>, agents: &NewAgents<'_, '_>) -> Vec<Evidence> {
    let mut found = Vec::new();
    for app in watched.apps.iter().filter(|a| watched.guarded(&a.id)) {
        let Some(failure) = &app.last_task_failure else {
            continue;
        };
        let failed = matches!(
            failure.state.as_str(),
            "TASK_FAILED" | "TASK_ERROR" | "TASK_LOST"
        ) || (failure.state == "TASK_KILLED"
            && failure.message.starts_with(HEALTH_KILL));
        let Some(agent) = agents.find(failure.agent_id.as_deref(), failure.host.as_deref()) else {
            continue;
        };
        if watched.departed.contains(agent.instance) && AGENT_WENT.contains(&failure.state.as_str())
        {
            continue;
        }
        let key = format!("task-failure/{}", failure.task_id);
        if failed && watched.fresh(&key) {
            found.push(Evidence {
                key,
                app: Some(app.id.clone()),
                task: Some(failure.task_id.clone()),
                agent: Some(agent.agent_id.to_string()),
                instance: Some(agent.instance.to_string()),
                what: if failure.message.is_empty() {
                    failure.state.clone()
                } else {
                    format!("{}: {}", failure.state, failure.message)
                },
                since: failure.at,
            });
        }
    }
    found
}

/// Each task on a new agent whose health check has failed at least once
/// in a row.
fn failing_health_checks(watched: &Watched<'_>, agents: &NewAgents<'_, '_>) -> Vec<Evidence> {
    let mut found = Vec::new();
    for app in watched.apps.iter().filter(|a| watched.guarded(&a.id)) {
        for task in &app.tasks {
            let Some(agent) = agents.find(task.agent_id.as_deref(), task.host.as_deref()) else {
                continue;
            };
            let Some(result) = task
                .health_results
                .iter()
                .find(|r| r.consecutive_failures > 0)
            else {
                continue;
            };
            let key = format!("failing-checks/{}", task.id);
            if !watched.fresh(&key) {
                continue;
            }
            // Marathon records an empty cause for Mesos-level checks.
            let cause = result
                .last_failure_cause
                .as_deref()
                .filter(|c| !c.is_empty())
                .map(|c| format!(" ({c})"))
                .unwrap_or_default();
            found.push(Evidence {
                key,
                app: Some(app.id.clone()),
                task: Some(task.id.clone()),
                agent: Some(agent.agent_id.to_string()),
                instance: Some(agent.instance.to_string()),
                what: format!(
                    "health check failed {} time(s) in a row{cause}",
                    result.consecutive_failures
                ),
                since: result.last_failure,
            });
        }
    }
    found
}

/// Each launch delay on Marathon's queue for an app the roll moved.
fn launch_delays(watched: &Watched<'_>) -> Vec<Evidence> {
    let mut found = Vec::new();
    for queued in watched.queue {
        if queued.delay_left == Duration::ZERO
            || !watched.moved.contains(&queued.app)
            || !watched.guarded(&queued.app)
        {
            continue;
        }
        let key = format!("launch-delay/{}", queued.app);
        if watched.fresh(&key) {
            found.push(Evidence {
                key,
                app: Some(queued.app.clone()),
                task: None,
                agent: None,
                instance: None,
                what: format!(
                    "Marathon holds back its launches for {} s more (a launch delay: its tasks keep failing)",
                    queued.delay_left.as_secs()
                ),
                since: None,
            });
        }
    }
    found
}

/// The longest a new instance may be in service without its Mesos agent
/// registering before that counts as a failure of the new image: 10
/// minutes (an agent usually registers within a few minutes of boot), or
/// half the scale-up timeout when that is shorter, so the failure is
/// found before the wait times out.
pub(crate) fn register_grace(scale_up_timeout: Duration) -> Duration {
    Duration::from_secs(600).min(scale_up_timeout / 2)
}

/// A new instance that has not registered as a Mesos agent although the
/// scale-up has waited `waited` (at least `grace`): the first one in
/// `unregistered` whose failure is not acknowledged, `None` before the
/// grace is out. `failed_launch` is the group's last failed launch, if
/// any, added to the evidence.
pub(crate) fn unregistered(
    unregistered: &[String],
    waited: Duration,
    grace: Duration,
    failed_launch: Option<&str>,
    acknowledged: &[String],
) -> Option<Evidence> {
    if waited < grace {
        return None;
    }
    let instance = unregistered
        .iter()
        .find(|i| !acknowledged.iter().any(|k| *k == register_key(i)))?;
    let launch = failed_launch
        .map(|m| format!("; the group's last failed launch: {m}"))
        .unwrap_or_default();
    Some(Evidence {
        key: register_key(instance),
        app: None,
        task: None,
        agent: None,
        instance: Some(instance.clone()),
        what: format!(
            "in service, but no Mesos agent registered for it after {} s of the scale-up (grace {} s){launch}",
            waited.as_secs(),
            grace.as_secs()
        ),
        since: None,
    })
}

/// The group's launches failing (`launch`: the last failed launch's
/// activity id and message) while the scale-up has waited `waited`,
/// at least `grace`, with fewer new instances in service than it needs:
/// the new launch template cannot start instances, and the roll cannot
/// go on. `None` before the grace, or when acknowledged.
pub(crate) fn launches_failing(
    launch: (&str, &str),
    in_service: usize,
    expected: usize,
    waited: Duration,
    grace: Duration,
    acknowledged: &[String],
) -> Option<Evidence> {
    let (activity, message) = launch;
    let key = format!("launch-failed/{activity}");
    if waited < grace || in_service >= expected || acknowledged.contains(&key) {
        return None;
    }
    Some(Evidence {
        key,
        app: None,
        task: None,
        agent: None,
        instance: None,
        what: format!(
            "the group's launches fail ({in_service} of {expected} new instances in service after {} s): {message}",
            waited.as_secs()
        ),
        since: None,
    })
}

/// What a failed launch says of the new image, read from EC2's reason in
/// the scaling activity's status message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaunchCause {
    /// EC2 had no room for the instance: no capacity of the type in the
    /// AZ (On-Demand or Spot), a vCPU or instance quota, no free address
    /// in a subnet. Nothing to do with the image: it passes, or a human
    /// frees room.
    Capacity,
    /// Anything else (the template's AMI gone or pending, an architecture
    /// that does not match, a key pair or profile that does not exist):
    /// the new launch template cannot start instances.
    Template,
}

/// The phrases and EC2 error codes of launches refused for room, as the
/// Auto Scaling user guide (troubleshooting capacity limits) and EC2's
/// error codes word them; matched without regard to case.
const CAPACITY_SIGNS: &[&str] = &[
    "insufficientinstancecapacity",
    "do not have sufficient",
    "no spot capacity available",
    "vcpulimitexceeded",
    "vcpu limit",
    "instancelimitexceeded",
    "your quota allows for",
    "maxspotinstancecountexceeded",
    "max spot instance count exceeded",
    "insufficientfreeaddressesinsubnet",
    "not enough free addresses",
    "instance(s) are already running",
];

/// Why the launch whose status message is `message` failed.
pub(crate) fn launch_cause(message: &str) -> LaunchCause {
    let message = message.to_lowercase();
    if CAPACITY_SIGNS.iter().any(|sign| message.contains(sign)) {
        LaunchCause::Capacity
    } else {
        LaunchCause::Template
    }
}

/// The group's launches failing for room (`message`: EC2's reason) while
/// this run has waited `waited`, at least `grace`, with fewer new
/// instances in service than it needs: not the image, so the roll pauses
/// and pages with what AWS said, and rolls nothing back. The sentence of
/// the pause; `None` before the grace or once enough are in service.
pub(crate) fn capacity_shortage(
    message: &str,
    in_service: usize,
    expected: usize,
    waited: Duration,
    grace: Duration,
) -> Option<String> {
    if waited < grace || in_service >= expected {
        return None;
    }
    Some(format!(
        "the group cannot launch its new instances for want of room in EC2, not for the new image \
         ({in_service} of {expected} new instances in service after {} s): {message}; nothing is \
         rolled back, and the group keeps retrying its launches. Free room (a quota increase, \
         another instance type or AZ, addresses in the subnet) or wait, then rerun: the scale-up \
         waits again",
        waited.as_secs()
    ))
}

fn register_key(instance: &str) -> String {
    format!("unregistered/{instance}")
}

/// The key that acknowledges every failure of `app` (`--acknowledge-failure`
/// on a failure of that app).
pub(crate) fn acknowledged_app(app: &str) -> String {
    format!("app/{app}")
}

impl Evidence {
    /// What an operator's `--acknowledge-failure` records: the app, when
    /// the failure has one, else this failure's own key.
    pub(crate) fn acknowledgement(app: Option<&str>, key: &str) -> String {
        app.map_or_else(|| key.to_string(), acknowledged_app)
    }

    /// One line: what failed where, as the pause, the page and the log say
    /// it.
    pub(crate) fn sentence(&self) -> String {
        let mut parts = Vec::new();
        if let Some(app) = &self.app {
            parts.push(format!("app {app}"));
        }
        if let Some(task) = &self.task {
            parts.push(format!("task {task}"));
        }
        if let Some(agent) = &self.agent {
            parts.push(format!("new agent {agent}"));
        }
        if let Some(instance) = &self.instance {
            parts.push(format!("instance {instance}"));
        }
        if parts.is_empty() {
            // A failure of no one agent or app (an alarm).
            return self.what.clone();
        }
        format!("{}: {}", parts.join(", "), self.what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roll::decide::test_apps::{app, task};
    use crate::roll::ports::marathon::{HealthResult, TaskFailure};

    fn agents() -> Vec<NewAgentRef<'static>> {
        vec![NewAgentRef {
            instance: "i-new",
            agent_id: "S-new",
            hostname: "new-host",
        }]
    }

    fn watch<'a>(
        apps: &'a [App],
        queue: &'a [QueuedLaunch],
        agents: &'a [NewAgentRef<'a>],
        moved: &'a HashSet<String>,
        allowed: &'a [String],
        acknowledged: &'a [String],
    ) -> Option<Evidence> {
        detect(&Watched {
            apps,
            queue,
            new_agents: agents,
            moved,
            allowed,
            acknowledged,
            departed: &HashSet::new(),
        })
        .into_iter()
        .next()
    }

    fn failed(agent: Option<&str>, host: &str, state: &str, message: &str) -> TaskFailure {
        TaskFailure {
            task_id: "t-1".to_string(),
            agent_id: agent.map(str::to_string),
            host: Some(host.to_string()),
            state: state.to_string(),
            message: message.to_string(),
            at: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000)),
        }
    }

    #[test]
    fn a_task_that_failed_on_a_new_agent_is_a_failure_with_its_evidence() {
        let agents = agents();
        let mut a = app("/web", 2, vec![]);
        a.last_task_failure = Some(failed(Some("S-new"), "new-host", "TASK_FAILED", "exit 1"));
        let found = watch(&[a], &[], &agents, &HashSet::new(), &[], &[]).expect("a failure");
        assert_eq!(found.app.as_deref(), Some("/web"));
        assert_eq!(found.task.as_deref(), Some("t-1"));
        assert_eq!(found.instance.as_deref(), Some("i-new"));
        assert_eq!(found.what, "TASK_FAILED: exit 1");
        assert_eq!(
            found.sentence(),
            "app /web, task t-1, new agent S-new, instance i-new: TASK_FAILED: exit 1"
        );
    }

    /// A Spot interruption or an EC2 failure takes a new instance away:
    /// the tasks lost with its agent are not the image's doing, and the
    /// same loss on an agent whose instance is still in service is.
    #[test]
    fn a_task_lost_with_an_agent_whose_instance_left_the_group_is_no_failure() {
        let agents = agents();
        let moved = HashSet::new();
        let look = |state: &str, departed: &[&str]| {
            let mut a = app("/web", 2, vec![]);
            a.last_task_failure = Some(failed(
                Some("S-new"),
                "new-host",
                state,
                "Agent S-new removed: agent lost",
            ));
            detect(&Watched {
                apps: &[a],
                queue: &[],
                new_agents: &agents,
                moved: &moved,
                allowed: &[],
                acknowledged: &[],
                departed: &departed.iter().map(|s| s.to_string()).collect(),
            })
            .into_iter()
            .next()
        };
        assert_eq!(look("TASK_LOST", &["i-new"]), None);
        let found = look("TASK_LOST", &[]).expect("lost on an agent still in the group");
        assert!(found.what.starts_with("TASK_LOST"), "{}", found.what);
        // A task that failed on its own before its instance went still
        // counts: the image may have failed it.
        assert!(look("TASK_FAILED", &["i-new"]).is_some());
    }

    #[test]
    fn only_failures_on_new_agents_of_apps_not_allowed_and_not_acknowledged_count() {
        let agents = agents();
        let moved = HashSet::new();
        // On an old agent: not the new image's doing.
        let mut old = app("/web", 2, vec![]);
        old.last_task_failure = Some(failed(Some("S-old"), "old-host", "TASK_FAILED", ""));
        assert_eq!(watch(&[old], &[], &agents, &moved, &[], &[]), None);
        // Killed through the API (no task failure is recorded for those,
        // but a kill with another message is not a health kill either).
        let mut killed = app("/web", 2, vec![]);
        killed.last_task_failure = Some(failed(Some("S-new"), "new-host", "TASK_KILLED", ""));
        assert_eq!(watch(&[killed], &[], &agents, &moved, &[], &[]), None);
        // Killed for failing its health checks: a failure. Matched by host
        // when Marathon (< 0.8) does not give the agent.
        let mut health = app("/web", 2, vec![]);
        health.last_task_failure = Some(failed(
            None,
            "NEW-HOST",
            "TASK_KILLED",
            "Task was killed since health check failed. Reason: 503",
        ));
        let apps = [health];
        let found = watch(&apps, &[], &agents, &moved, &[], &[]).expect("a health kill");
        assert_eq!(found.agent.as_deref(), Some("S-new"));
        // Allowed, or acknowledged: not again.
        let allowed = ["/web".to_string()];
        assert_eq!(watch(&apps, &[], &agents, &moved, &allowed, &[]), None);
        let acknowledged = [found.key.clone()];
        assert_eq!(watch(&apps, &[], &agents, &moved, &[], &acknowledged), None);
        // Acknowledging the app leaves its other failures alone too.
        let mut other = apps[0].clone();
        other.tasks = vec![{
            let mut t = task("t-9", "S-new", false);
            t.health_results = vec![HealthResult {
                alive: false,
                consecutive_failures: 1,
                ..HealthResult::default()
            }];
            t
        }];
        let other = [other];
        assert!(watch(&other, &[], &agents, &moved, &[], &acknowledged).is_some());
        let app_acknowledged = [Evidence::acknowledgement(Some("/web"), &found.key)];
        assert_eq!(
            watch(&other, &[], &agents, &moved, &[], &app_acknowledged),
            None
        );
    }

    #[test]
    fn a_failing_health_check_on_a_new_agent_is_a_failure_and_one_elsewhere_is_not() {
        let agents = agents();
        let moved = HashSet::new();
        let failing = |agent: &str| {
            let mut t = task("t-2", agent, false);
            t.health_results = vec![HealthResult {
                alive: false,
                consecutive_failures: 2,
                last_failure_cause: Some("503 Service Unavailable".to_string()),
                ..HealthResult::default()
            }];
            t
        };
        let elsewhere = [app(
            "/api",
            2,
            vec![failing("S-old"), task("t-3", "S-new", true)],
        )];
        assert_eq!(watch(&elsewhere, &[], &agents, &moved, &[], &[]), None);
        let here = [app("/api", 2, vec![failing("S-new")])];
        let found = watch(&here, &[], &agents, &moved, &[], &[]).expect("failing checks");
        assert_eq!(
            found.what,
            "health check failed 2 time(s) in a row (503 Service Unavailable)"
        );
        assert_eq!(found.task.as_deref(), Some("t-2"));
    }

    #[test]
    fn a_launch_delay_counts_only_for_an_app_the_roll_moved() {
        let agents = agents();
        let queue = [QueuedLaunch {
            app: "/jobs".to_string(),
            count: 1,
            delay_left: Duration::from_secs(40),
        }];
        assert_eq!(watch(&[], &queue, &agents, &HashSet::new(), &[], &[]), None);
        let moved: HashSet<String> = ["/jobs".to_string()].into();
        let found = watch(&[], &queue, &agents, &moved, &[], &[]).expect("a delay");
        assert_eq!(found.app.as_deref(), Some("/jobs"));
        let over = [QueuedLaunch {
            delay_left: Duration::ZERO,
            ..queue[0].clone()
        }];
        assert_eq!(watch(&[], &over, &agents, &moved, &[], &[]), None);
    }

    #[test]
    fn an_instance_unregistered_past_the_grace_is_a_failure_unless_acknowledged() {
        let grace = register_grace(Duration::from_secs(20 * 60));
        assert_eq!(grace, Duration::from_secs(600));
        assert_eq!(
            register_grace(Duration::from_secs(6 * 60)),
            Duration::from_secs(180)
        );
        let waiting = vec!["i-a".to_string(), "i-b".to_string()];
        let early = Duration::from_secs(599);
        assert_eq!(unregistered(&waiting, early, grace, None, &[]), None);
        let late = Duration::from_secs(600);
        let found = unregistered(&waiting, late, grace, Some("no capacity"), &[]).expect("found");
        assert_eq!(found.instance.as_deref(), Some("i-a"));
        assert!(found.what.contains("no capacity"), "{}", found.what);
        assert!(found.sentence().starts_with("instance i-a: in service"));
        let acked = vec![found.key.clone()];
        let next = unregistered(&waiting, late, grace, None, &acked).expect("the other");
        assert_eq!(next.instance.as_deref(), Some("i-b"));
        assert_eq!(unregistered(&waiting[..1], late, grace, None, &acked), None);
    }

    /// Status messages of failed launches as AWS words them (the Auto
    /// Scaling user guide's troubleshooting pages; EC2's error codes as
    /// Auto Scaling prefixes them in mixed-instances groups).
    #[test]
    fn a_launch_refused_for_room_is_told_from_one_the_template_breaks() {
        let capacity = [
            "We currently do not have sufficient m5.xlarge capacity in the Availability Zone you requested (us-east-1a). Our system will be working on provisioning additional capacity. You can currently get m5.xlarge capacity by not specifying an Availability Zone in your request or choosing us-east-1b, us-east-1c. Launching EC2 instance failed.",
            "Could not launch On-Demand Instances. VcpuLimitExceeded - You have requested more vCPU capacity than your current vCPU limit of 32 allows for the instance bucket that the specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an adjustment to this limit. Launching EC2 instance failed.",
            "Could not launch Spot Instances. InsufficientInstanceCapacity - There is no Spot capacity available that matches your request. Launching EC2 instance failed.",
            "Could not launch Spot Instances. MaxSpotInstanceCountExceeded - Max spot instance count exceeded. Launching EC2 instance failed.",
            "Your quota allows for 0 more running instance(s). You requested at least 1. Launching EC2 instance failed.",
            "There are not enough free addresses in subnet 'subnet-0a1b2c3d' to satisfy the requested number of instances. Launching EC2 instance failed.",
            "5 instance(s) are already running. Launching EC2 instance failed.",
        ];
        for message in capacity {
            assert_eq!(launch_cause(message), LaunchCause::Capacity, "{message}");
        }
        let template = [
            "The AMI ID ami-0bad0bad0bad0bad0 does not exist. Launching EC2 instance failed.",
            "AMI ami-0123 is pending, and cannot be run. Launching EC2 instance failed.",
            "The requested instance type's architecture (i386) does not match the architecture in the manifest for ami-6622f00f (x86_64). Launching ec2 instance failed.",
            "The key pair 'ops' does not exist. Launching EC2 instance failed.",
        ];
        for message in template {
            assert_eq!(launch_cause(message), LaunchCause::Template, "{message}");
        }
    }

    #[test]
    fn a_capacity_shortage_pauses_after_the_grace_with_what_aws_said() {
        let grace = Duration::from_secs(600);
        let said = "Your quota allows for 0 more running instance(s).";
        let early = Duration::from_secs(599);
        let late = Duration::from_secs(600);
        assert_eq!(capacity_shortage(said, 0, 6, early, grace), None);
        assert_eq!(capacity_shortage(said, 6, 6, late, grace), None);
        let why = capacity_shortage(said, 2, 6, late, grace).expect("past the grace");
        assert!(
            why.contains("2 of 6 new instances in service after 600 s"),
            "{why}"
        );
        assert!(
            why.contains(said) && why.contains("nothing is rolled back"),
            "{why}"
        );
    }

    #[test]
    fn launches_failing_past_the_grace_is_a_failure_unless_enough_are_in_service() {
        let grace = Duration::from_secs(600);
        let late = Duration::from_secs(601);
        let failed = ("act-1", "No AMI");
        assert_eq!(
            launches_failing(failed, 0, 6, Duration::from_secs(10), grace, &[]),
            None
        );
        assert_eq!(launches_failing(failed, 6, 6, late, grace, &[]), None);
        let found = launches_failing(failed, 2, 6, late, grace, &[]).expect("found");
        assert!(found.what.contains("2 of 6") && found.what.contains("No AMI"));
        let acked = vec![found.key.clone()];
        assert_eq!(launches_failing(failed, 2, 6, late, grace, &acked), None);
    }
}
