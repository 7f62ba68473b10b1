//! The scale-up phase: the group's desired capacity goes to N + K
//! (`SetDesired`), the new instances are awaited as active Mesos agents
//! (`WaitRegistered`), and, for the drain, every old agent goes under one
//! maintenance window (`Maintenance`).

use std::collections::HashSet;
use std::time::Duration;

use super::{StepAction, StepContext, Tick};
use super::{batch_room, lifecycle_waits};
use crate::roll::decide::failure;
use crate::roll::decide::roll_plan::WAIT_REGISTERED;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{
    AgentIdentity, AutoScaling, AutoScalingGroup, LifecycleState, match_agents,
};
use crate::roll::record::checkpoint::{
    GroupRoll, MaintenanceRecord, NewAgent, Raised, RolledInstance,
};
use crate::roll::record::kinds::WaitKind;

/// Sets the desired capacity to N + K − terminated.
///
/// Safe to re-run: the value is absolute, computed from the checkpoint,
/// so no rerun can overshoot.
pub(crate) struct SetDesired;

impl StepAction for SetDesired {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let desired = cx.group().scale_up_desired();
        let asg = cx.group().asg.clone();
        // Capped: what the group's desired capacity must be from now on
        // (this, less the decrements since) is recorded with the intent.
        let batch = record_raise(cx, desired);
        cx.intend(format!("set desired capacity of {asg} to {desired}{batch}"))
            .await?;
        cx.ports.aws().set_desired_capacity(&asg, desired).await?;
        Ok(Tick::Done(format!("desired capacity {desired}{batch}")))
    }
}

/// Records the scale-up's raise of the desired capacity to `desired`
/// when the surge is capped (the only raise: later batches' new
/// instances replace old ones without a decrement); what the intent
/// says of it.
fn record_raise<P: Ports>(cx: &mut StepContext<'_, '_, P>, desired: u32) -> String {
    const BATCH: u32 = 1;
    let group = cx.group_mut();
    let terminated = group.terminated();
    let Some(surge) = group.surge.as_mut() else {
        return String::new();
    };
    surge.raised = Some(Raised {
        batch: BATCH,
        desired,
        terminated,
    });
    format!(
        " (batch {BATCH} of {}: at most {} instances, {})",
        surge.batches, surge.ceiling, surge.from
    )
}

/// Waits until the new instances (those not in the group when the roll
/// began) number desired − remaining originals, are in service, and each
/// matches one active Mesos agent.
///
/// Safe to re-run: it only reads.
pub(crate) struct WaitRegistered;

impl StepAction for WaitRegistered {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let registered = wait_registered(cx, WAIT_REGISTERED).await?;
        let Tick::Done(said) = registered else {
            return Ok(registered);
        };
        if cx.group().surge.is_none() {
            return Ok(Tick::Done(said));
        }
        // Capped: the first batch takes in more old agents while the new
        // agents' free resources take their tasks.
        let (_, beyond) = batch_room::take_in(cx, 1).await?;
        let open = cx.open_old_agents().len();
        Ok(Tick::Done(format!(
            "{said}; batch 1: {open} old agent(s) open to the drain{}",
            batch_room::beyond_said(beyond)
        )))
    }
}

/// The new instances the desired capacity asks for, awaited as active
/// Mesos agents and recorded; `step` is the step whose progress times the
/// wait (the scale-up's, or a batch's).
pub(super) async fn wait_registered<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    step: &str,
) -> Result<Tick, RollError> {
    let record = cx.group();
    let expected = record
        .scale_up_desired()
        .saturating_sub(record.original_remaining());
    let asg = record.asg.clone();
    let group = cx.ports.aws().describe_group(&asg).await?;
    let new = new_in_service(cx.group(), &group);
    let progress = cx.progress_of(step);
    let wait = Registering {
        expected,
        waited: progress
            .map(|p| cx.clock.since(p.started_unix_ms))
            .unwrap_or_default(),
        waited_this_run: progress
            .map(|p| {
                let since = p
                    .wait
                    .as_ref()
                    .map_or(p.started_unix_ms, |w| w.since_unix_ms);
                cx.clock.since(since)
            })
            .unwrap_or_default(),
        // A launch hook's hold is no slow boot: the time it may hold
        // the new instances (the wait's extension) is added.
        grace: failure::register_grace(cx.env.timeouts.scale_up)
            + progress
                .and_then(|p| p.wait.as_ref())
                .map(|w| Duration::from_millis(w.extended_ms))
                .unwrap_or_default(),
    };
    if new.len() < expected as usize {
        let held = new_held_at_launch(cx.group(), &group);
        return too_few_in_service(cx, &asg, new.len(), &held, &wait).await;
    }
    let ec2 = cx
        .memory
        .described
        .instances(cx.ports.aws(), &cx.env.agent_match, &new)
        .await?;
    let agents = cx.tick.active_identities().await?;
    let pairs = match_agents(&cx.env.agent_match, &ec2, &agents).matched;
    if pairs.len() < expected as usize {
        return Ok(too_few_registered(cx, &asg, &new, &pairs, &wait).await);
    }
    let matched = pairs.len();
    record_new_agents(cx, pairs, &agents);
    Ok(Tick::Done(format!("{matched} new agents registered")))
}

/// What the scale-up waits for, and how long it has: the new instances
/// are judged failing once `grace` is out, not at the timeout.
struct Registering {
    expected: u32,
    /// Since the step began, across pauses: the image's grace.
    waited: Duration,
    /// Since the wait began or a resume restarted it: the grace of a
    /// capacity shortage, which a rerun gives again.
    waited_this_run: Duration,
    grace: Duration,
}

impl Registering {
    fn waiting(&self, what: String) -> Tick {
        self.waiting_longer(Duration::ZERO, what)
    }

    /// A wait whose deadline is `extension` later (launch hooks).
    fn waiting_longer(&self, extension: Duration, what: String) -> Tick {
        Tick::waiting_longer(
            WaitKind::Registered,
            extension,
            format!(
                "waiting for {} new instance(s) to register as Mesos agents: {what}",
                self.expected
            ),
        )
    }
}

/// The group's new instances (not in it when the roll began) held in
/// `Pending:Wait` by a launch hook.
fn new_held_at_launch(record: &GroupRoll, group: &AutoScalingGroup) -> Vec<String> {
    let original = record.original.ids_at_start();
    group
        .instances
        .iter()
        .filter(|i| !original.contains(i.id.as_str()))
        .filter(|i| i.lifecycle_state == LifecycleState::PendingWait)
        .map(|i| i.id.clone())
        .collect()
}

/// The group's instances in service that were not in it when the roll
/// began.
fn new_in_service(record: &GroupRoll, group: &AutoScalingGroup) -> Vec<String> {
    let original = record.original.ids_at_start();
    group
        .instances
        .iter()
        .filter(|i| !original.contains(i.id.as_str()))
        .filter(|i| i.lifecycle_state == LifecycleState::InService)
        .map(|i| i.id.clone())
        .collect()
}

/// Fewer new instances in service than expected: launches that keep
/// failing for room in EC2 pause the roll (not the image: nothing is
/// rolled back); launches that keep failing otherwise are the new launch
/// template failing; else the step waits, saying the last failed launch.
async fn too_few_in_service<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    asg: &str,
    in_service: usize,
    held: &[String],
    wait: &Registering,
) -> Result<Tick, RollError> {
    let expected = wait.expected;
    let launch = last_failed_launch(cx.ports.aws(), asg).await;
    if let Some((activity, message)) = &launch {
        let judged = match failure::launch_cause(message) {
            failure::LaunchCause::Capacity => failure::capacity_shortage(
                message,
                in_service,
                expected as usize,
                wait.waited_this_run,
                wait.grace,
            )
            .map(Tick::Pause),
            failure::LaunchCause::Template => failure::launches_failing(
                (activity, message),
                in_service,
                expected as usize,
                wait.waited,
                wait.grace,
                cx.roll().acknowledged_failures,
            )
            .map(Tick::Failed),
        };
        if let Some(tick) = judged {
            return Ok(tick);
        }
    }
    let failed = launch
        .map(|(_, m)| format!("; last failed launch: {m}"))
        .unwrap_or_default();
    let what = format!("{in_service} of {expected} new instances in service{failed}");
    // Launch hooks hold new instances for their heartbeat timeout: not a
    // slow boot, and the deadline grows by it.
    Ok(match lifecycle_waits::launch_held(cx, held, &what).await? {
        Some((extension, message)) => wait.waiting_longer(extension, message),
        None => wait.waiting(what),
    })
}

/// Fewer of the `new` instances matched (`pairs`) to an active Mesos
/// agent than expected: an instance in service whose agent never comes
/// is the new image failing; else the step waits.
async fn too_few_registered<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    asg: &str,
    new: &[String],
    pairs: &[(String, String)],
    wait: &Registering,
) -> Tick {
    let registered: HashSet<&String> = pairs.iter().map(|(i, _)| i).collect();
    let missing: Vec<String> = new
        .iter()
        .filter(|i| !registered.contains(i))
        .cloned()
        .collect();
    if wait.waited >= wait.grace {
        let launch = last_failed_launch(cx.ports.aws(), asg).await;
        if let Some(found) = failure::unregistered(
            &missing,
            wait.waited,
            wait.grace,
            launch.as_ref().map(|(_, m)| m.as_str()),
            cx.roll().acknowledged_failures,
        ) {
            return Tick::Failed(found);
        }
    }
    wait.waiting(format!(
        "{} of {} new instances are active Mesos agents",
        pairs.len(),
        wait.expected
    ))
}

/// Records the new agents (`pairs` of instance and agent id) the roll
/// watches for failure from now on; kept across reruns: a rerun of the
/// step records the same agents.
fn record_new_agents<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    pairs: Vec<(String, String)>,
    agents: &[AgentIdentity],
) {
    let recorded = &mut cx.group_mut().new_agents;
    for (instance, agent_id) in pairs {
        let Some(agent) = agents.iter().find(|a| a.id == agent_id) else {
            continue;
        };
        if recorded.iter().any(|r| r.instance == instance) {
            continue;
        }
        recorded.push(NewAgent::registered(instance, agent));
    }
}

/// The group's last failed launch among its latest activities, as its
/// activity id and AWS's reason; `None` when there is none or the look
/// fails (it only adds to what the step says).
async fn last_failed_launch<A: AutoScaling>(aws: &A, asg: &str) -> Option<(String, String)> {
    let activities = aws.scaling_activities(asg, 5).await.ok()?;
    let failed = activities.into_iter().find(|a| a.is_failed())?;
    Some((
        failed.id,
        failed.status_message.unwrap_or(failed.description),
    ))
}

/// The drain's first act once the new agents are up: one maintenance
/// window over every agent to replace (merged into the schedule), so
/// Marathon places no task on an old agent from now on and every task
/// killed there relaunches on a new one.
///
/// Safe to re-run: the machines are recorded first (so finish removes
/// their windows whatever happens next), and merging the same machines
/// into the schedule again changes nothing.
pub(crate) struct Maintenance;

impl StepAction for Maintenance {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let group = cx.group_mut();
        let machines: Vec<MaintenanceRecord> = group
            .instances
            .iter()
            .filter(|i| !i.hostname.is_empty())
            .map(RolledInstance::machine)
            .collect();
        if machines.is_empty() {
            return Ok(Tick::Done(
                "no old agent to put under maintenance".to_string(),
            ));
        }
        for machine in &machines {
            if !group.maintenance.contains(machine) {
                group.maintenance.push(machine.clone());
            }
        }
        cx.intend(format!(
            "one maintenance window for the {} old agent(s)",
            machines.len()
        ))
        .await?;
        let ids: Vec<_> = machines.iter().map(MaintenanceRecord::machine_id).collect();
        cx.schedule_windows(&ids).await?;
        let all: Vec<String> = cx.group().instances.iter().map(|i| i.id.clone()).collect();
        cx.memory.scheduled.extend(all);
        Ok(Tick::Done(format!(
            "{} old agent(s) under one maintenance window: Marathon places no new task on them",
            machines.len()
        )))
    }
}
