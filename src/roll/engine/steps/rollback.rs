//! The rollback phase, run after a failure on the new agents turned the
//! plan around (`roll_plan::turn_around`): the cluster goes back to the
//! old agents and the group back to what it was.
//!
//! - `RollbackWindows`: the new agents under maintenance (Marathon places
//!   nothing more there), the old agents' windows lifted (downed machines
//!   brought up), so that what moves goes back to the old agents.
//! - `RollbackMoves` (`rollback/moves.rs`): surges set back (a surge's deployment still running
//!   is cancelled, which makes Marathon deploy the count before it), then
//!   every task on a new agent that goes is killed (`scale=false`) within
//!   its app's floor: unhealthy ones at once, healthy ones while the
//!   others keep the app at its floor. Launch delays of the apps moving
//!   are dropped. Done when no task is left there and every app is
//!   healthy.
//! - `RollbackTerminate`: the new instances terminated with decrement, so
//!   the group ends at its original size; it waits for them to leave the
//!   group and Mesos.
//! - `RollbackLaunchSource`: the group's launch template (or launch
//!   configuration) set back to the one the old instances run, when they
//!   all run one; a mixed instances policy set back to the versions they
//!   run, its overrides and distribution as they are.
//!
//! If old instances were already terminated when the failure was found,
//! as many new instances as were terminated stay (the first registered),
//! so that the group keeps its size: the steps say which.
//!
//! The finish phase runs after this one (processes, MaxSize, the roll's
//! maintenance windows, the tag), as for any roll.

mod moves;

pub(super) use moves::RollbackMoves;

use std::collections::HashSet;

use super::lifecycle_waits;
use super::pods;
use super::terminate::machines_down;
use super::{StepAction, StepContext, Tick};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{
    AutoScaling, AutoScalingGroup, GroupInstance, LaunchSource,
};
use crate::roll::ports::mesos::{MachineId, MesosMaster};
use crate::roll::ports::mixed_instances::TemplateRef;
use crate::roll::record::checkpoint::{EventKind, GroupRoll, MaintenanceRecord, NewAgent};
use crate::roll::record::kinds::WaitKind;

/// Who the rollback's own surges belong to (`Surge::instance`).
const ROLLBACK_OWNER: &str = "rollback";

/// The new agents the rollback keeps (as many as old instances were
/// terminated, in the order they registered) and those that go.
fn kept_and_going(checkpoint: &GroupRoll) -> (Vec<&NewAgent>, Vec<&NewAgent>) {
    let terminated = checkpoint
        .instances
        .iter()
        .filter(|i| i.terminate_sent)
        .count();
    let keep = terminated.min(checkpoint.new_agents.len());
    let (kept, going) = checkpoint.new_agents.split_at(keep);
    (kept.iter().collect(), going.iter().collect())
}

/// ` (kept to stay at N: i-1, i-2)`, or nothing.
fn kept_note(checkpoint: &GroupRoll) -> String {
    let (kept, _) = kept_and_going(checkpoint);
    if kept.is_empty() {
        return String::new();
    }
    let ids: Vec<&str> = kept.iter().map(|a| a.instance.as_str()).collect();
    format!(
        "; {} new instance(s) kept, as {} old one(s) were already terminated: {}",
        ids.len(),
        ids.len(),
        ids.join(", ")
    )
}

/// Puts the new agents that go under maintenance and lifts the old
/// agents' windows (bringing downed ones up).
///
/// Safe to re-run: the new machines are recorded first (finish removes
/// their windows), merging machines already scheduled changes nothing,
/// only DOWN machines are brought up, and removing an absent window is a
/// no-op.
pub(crate) struct RollbackWindows;

impl StepAction for RollbackWindows {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let checkpoint = cx.group_mut();
        let (_, going) = kept_and_going(checkpoint);
        let new: Vec<MaintenanceRecord> = going.iter().map(|a| a.machine()).collect();
        let old: Vec<MachineId> = checkpoint
            .instances
            .iter()
            .filter(|i| !i.terminate_sent && !i.hostname.is_empty())
            .map(|i| i.machine().machine_id())
            .collect();
        for machine in &new {
            if !checkpoint.maintenance.contains(machine) {
                checkpoint.maintenance.push(machine.clone());
            }
        }
        cx.intend(format!(
            "rollback: {} new agent(s) under maintenance, windows of {} old agent(s) lifted",
            new.len(),
            old.len()
        ))
        .await?;
        if !new.is_empty() {
            let ids: Vec<MachineId> = new.iter().map(MaintenanceRecord::machine_id).collect();
            cx.schedule_windows(&ids).await?;
        }
        let mesos = cx.ports.mesos();
        let status = mesos.maintenance_status().await?;
        let down: Vec<MachineId> = status
            .down
            .into_iter()
            .filter(|d| old.iter().any(|m| m.same_machine(d)))
            .collect();
        if !down.is_empty() {
            mesos.machines_up(&down).await?;
        }
        if !old.is_empty() {
            mesos.cancel_maintenance(&old).await?;
        }
        let reactivated = reactivate_old(cx).await?;
        let note = kept_note(cx.group());
        Ok(Tick::Done(format!(
            "{} new agent(s) under maintenance; {} old agent(s) open again ({} brought up, \
             {reactivated} reactivated){note}",
            new.len(),
            old.len(),
            down.len()
        )))
    }
}

impl<P: Ports> StepContext<'_, '_, P> {
    /// `roller abandon`: the group's old agents the roll deactivated or
    /// drained, reactivated (see `reactivate_old`); how many were.
    pub(crate) async fn reactivate_old_agents(&mut self) -> Result<usize, RollError> {
        reactivate_old(self).await
    }
}

/// `REACTIVATE_AGENT` for this group's old agents that the roll
/// deactivated (for the services' pods, or to drain other frameworks'
/// tasks) and Mesos still lists deactivated: the tasks going back need
/// their offers. How many were.
async fn reactivate_old<P: Ports>(cx: &mut StepContext<'_, '_, P>) -> Result<usize, RollError> {
    let ours: HashSet<&String> = cx.roll().services.deactivated.iter().collect();
    let wanted: Vec<String> = cx
        .group()
        .instances
        .iter()
        .filter(|i| !i.terminate_sent)
        .filter(|i| ours.contains(&i.agent_id) || i.other_tasks.drain_sent)
        .map(|i| i.agent_id.clone())
        .collect();
    if wanted.is_empty() {
        return Ok(0);
    }
    let agents = cx.tick.agents().await?;
    let mut done = 0;
    for agent in agents
        .iter()
        .filter(|a| a.deactivated && wanted.contains(&a.id.0))
    {
        cx.ports.mesos().reactivate_agent(&agent.id).await?;
        done += 1;
    }
    Ok(done)
}

/// New agents that go and are not under the rollback's maintenance yet:
/// those recorded after `RollbackWindows` ran (the group's replacement of
/// an instance EC2 took away registers whenever it boots). Their machines
/// are recorded first (finish removes their windows), then scheduled, so
/// Marathon places nothing there while the tasks move back.
///
/// Safe to re-run: a machine recorded is not scheduled again by this
/// function, and merging a scheduled machine changes nothing.
pub(super) async fn late_windows<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
) -> Result<(), RollError> {
    let group = cx.group();
    let (_, going) = kept_and_going(group);
    let late: Vec<MaintenanceRecord> = going
        .iter()
        .map(|a| a.machine())
        .filter(|m| !group.maintenance.contains(m))
        .collect();
    if late.is_empty() {
        return Ok(());
    }
    cx.group_mut().maintenance.extend(late.iter().cloned());
    cx.intend(format!(
        "rollback: {} new agent(s) that registered since the rollback began under maintenance: {}",
        late.len(),
        late.iter()
            .map(|m| m.hostname.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ))
    .await?;
    let ids: Vec<MachineId> = late.iter().map(MaintenanceRecord::machine_id).collect();
    cx.schedule_windows(&ids).await
}

/// Puts the new agents that go down, terminates their instances
/// (decrementing the desired capacity), then waits for them to leave the group and their agents
/// to leave Mesos.
///
/// Safe to re-run: a termination is sent only to an instance the group
/// still has in service, and AWS answers one already terminating as such.
pub(crate) struct RollbackTerminate;

impl StepAction for RollbackTerminate {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        if let Some(replacing) = pods_off_going(cx).await? {
            return Ok(replacing);
        }
        let asg = cx.group().asg.clone();
        let group = cx.ports.aws().describe_group(&asg).await?;
        let going = new_instances_going(cx.group(), &group);
        let to_send: Vec<String> = going
            .iter()
            .filter(|id| group.still_has(id))
            .cloned()
            .collect();
        if let Some(want) = lower_desired(cx, &asg, &group, to_send.len()).await?
            && going.is_empty()
        {
            return Ok(Tick::waiting(
                WaitKind::Deregistered,
                format!("desired capacity set to {want}: looking at the group again"),
            ));
        }
        put_going_machines_down(cx, &to_send).await?;
        terminate_going(cx, &asg, &to_send).await?;
        if !going.is_empty() {
            let then = format!(
                "waiting for {} new instance(s) to leave the group: {}",
                going.len(),
                going.join(", ")
            );
            let (_, leaving) = kept_and_going(cx.group());
            let leaving: Vec<(String, String)> = leaving
                .iter()
                .map(|a| (a.instance.clone(), a.agent_id.clone()))
                .collect();
            if let Some(held) =
                lifecycle_waits::terminations_held(cx, &group, &leaving, &then).await?
            {
                return Ok(held);
            }
            return Ok(Tick::waiting(WaitKind::Deregistered, then));
        }
        if let Some(waiting) = going_agents_still_active(cx).await? {
            return Ok(waiting);
        }
        let note = kept_note(cx.group());
        Ok(Tick::Done(format!(
            "new instances terminated; the group is at {} instance(s), desired {}{note}",
            group.instances.len(),
            group.desired_capacity
        )))
    }
}

/// The instances of `group` the rollback terminates: neither one of the
/// originals nor a new one it keeps.
fn new_instances_going(checkpoint: &GroupRoll, group: &AutoScalingGroup) -> Vec<String> {
    let original = checkpoint.original.ids_at_start();
    let (kept, _) = kept_and_going(checkpoint);
    let kept: HashSet<&String> = kept.iter().map(|a| &a.instance).collect();
    group
        .instances
        .iter()
        .filter(|i| !original.contains(i.id.as_str()) && !kept.contains(&i.id))
        .map(|i| i.id.clone())
        .collect()
}

/// Pods of DC/OS SDK services on the new agents that go (replaced there
/// by the roll, or failing there) are replaced onto agents that stay,
/// through their services, before any of them is terminated: a pod
/// terminated with its agent is never replaced by its service.
async fn pods_off_going<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
) -> Result<Option<Tick>, RollError> {
    let (_, going) = kept_and_going(cx.group());
    let going: Vec<NewAgent> = going.into_iter().cloned().collect();
    let forbidden: HashSet<String> = going.iter().map(|a| a.agent_id.clone()).collect();
    let seen = cx.tick.observation().await?;
    for agent in &going {
        let leaving = pods::Leaving {
            agent: &agent.agent_id,
            instance: &agent.instance,
            forbidden: forbidden.clone(),
            rollback: true,
        };
        if let Some(tick) = pods::replace_pods(cx, &leaving, &seen).await? {
            return Ok(Some(tick));
        }
    }
    Ok(None)
}

/// Launches not made yet (failing, or still pending) are not wanted:
/// sets, before the terminations are sent, the desired capacity their
/// decrements bring back to the original (only ever lowered; its intent
/// recorded first). The capacity set, if it was.
async fn lower_desired<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    asg: &str,
    group: &AutoScalingGroup,
    terminations: usize,
) -> Result<Option<u32>, RollError> {
    let want =
        cx.group().original.desired_capacity + u32::try_from(terminations).unwrap_or(u32::MAX);
    if group.desired_capacity <= want {
        return Ok(None);
    }
    cx.intend(format!(
        "rollback: set desired capacity of {asg} to {want} (was {}): no more new instances",
        group.desired_capacity
    ))
    .await?;
    cx.ports.aws().set_desired_capacity(asg, want).await?;
    Ok(Some(want))
}

/// Puts the machines of the new agents of `to_send` down (recorded
/// first), so that Mesos drops them at once.
async fn put_going_machines_down<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    to_send: &[String],
) -> Result<(), RollError> {
    if to_send.is_empty() {
        return Ok(());
    }
    let machines: Vec<MaintenanceRecord> = cx
        .group()
        .new_agents
        .iter()
        .filter(|a| to_send.contains(&a.instance))
        .map(NewAgent::machine)
        .collect();
    if machines.is_empty() {
        return Ok(());
    }
    cx.intend(format!(
        "rollback: put the machines of {} new agent(s) down (Mesos drops them at once)",
        machines.len()
    ))
    .await?;
    machines_down(cx, &machines).await?;
    Ok(())
}

/// Terminates each of `to_send` with a decrement, each recorded first and
/// its answer saved before the next is sent.
async fn terminate_going<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    asg: &str,
    to_send: &[String],
) -> Result<(), RollError> {
    for instance in to_send {
        cx.intend(format!(
            "rollback: terminate new instance {instance} (decrement)"
        ))
        .await?;
        let result = cx.ports.aws().terminate_instance(asg, instance).await?;
        cx.record(
            EventKind::Terminate,
            format!("rollback: {instance}: {result}"),
        );
        cx.save().await?;
    }
    Ok(())
}

/// What the step waits for while Mesos still has an active agent of the
/// new instances that go; `None` once it has none.
async fn going_agents_still_active<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
) -> Result<Option<Tick>, RollError> {
    let (_, going) = kept_and_going(cx.group());
    let going: HashSet<String> = going.iter().map(|a| a.agent_id.clone()).collect();
    let agents = cx.tick.agents().await?;
    let active: Vec<&str> = agents
        .iter()
        .filter(|a| a.active && going.contains(&a.id.0))
        .map(|a| a.id.0.as_str())
        .collect();
    Ok((!active.is_empty()).then(|| {
        Tick::waiting(
            WaitKind::Deregistered,
            format!(
                "waiting for Mesos to drop {} new agent(s): {}",
                active.len(),
                active.join(", ")
            ),
        )
    }))
}

/// Sets the group's launch source back to the one every old instance
/// still in the group runs (on a mixed instances policy: the policy with
/// the versions they run, its overrides and distribution untouched);
/// leaves it, and says why, when they run different ones or none is left.
///
/// Safe to re-run: the value is absolute.
pub(crate) struct RollbackLaunchSource;

impl StepAction for RollbackLaunchSource {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let checkpoint = cx.group();
        let asg = checkpoint.asg.clone();
        let original: HashSet<String> = checkpoint.original.instance_ids.iter().cloned().collect();
        let group = cx.ports.aws().describe_group(&asg).await?;
        let old: Vec<&GroupInstance> = group
            .instances
            .iter()
            .filter(|i| original.contains(&i.id))
            .collect();
        let current = group
            .launch_source
            .as_ref()
            .map_or("none".to_string(), describe);
        let want = match wanted_source(group.launch_source.as_ref(), &old) {
            Ok(want) => want,
            Err(why) => {
                return Ok(Tick::Done(format!(
                    "{why}: the group's launch source is left at {current}"
                )));
            }
        };
        if group.launch_source.as_ref() == Some(&want) {
            return Ok(Tick::Done(format!(
                "the group already launches from {current}, as the old instances"
            )));
        }
        let wanted = describe(&want);
        cx.intend(format!(
            "rollback: the group launches from {wanted} again (was {current})"
        ))
        .await?;
        cx.ports.aws().set_launch_source(&asg, &want).await?;
        Ok(Tick::Done(format!(
            "the group launches from {wanted} again (was {current})"
        )))
    }
}

/// The launch source the group gets back: on a mixed instances policy,
/// the same policy with each template at the version its old instances
/// run (overrides and distribution as they are); else the one source
/// every old instance runs. `Err` says why it is left as it is.
fn wanted_source(
    group_source: Option<&LaunchSource>,
    old: &[&GroupInstance],
) -> Result<LaunchSource, String> {
    if let Some(LaunchSource::MixedInstances(policy)) = group_source {
        let launched: Vec<(&str, TemplateRef)> = old
            .iter()
            .filter_map(|i| Some((i.id.as_str(), i.launch_source.as_ref()?.template()?)))
            .collect();
        return policy
            .with_versions_of(&launched)
            .map(LaunchSource::MixedInstances)
            .map_err(|why| why.to_string());
    }
    let mut sources: Vec<&LaunchSource> = Vec::new();
    for source in old.iter().filter_map(|i| i.launch_source.as_ref()) {
        if !sources.contains(&source) {
            sources.push(source);
        }
    }
    match sources.as_slice() {
        [] => Err("no old instance says what it was launched from".to_string()),
        [one] => Ok((*one).clone()),
        many => {
            let all: Vec<String> = many.iter().map(|s| describe(s)).collect();
            Err(format!(
                "the old instances run different launch sources ({}); set it by hand",
                all.join(", ")
            ))
        }
    }
}

/// `launch template web (lt-1) version 3`, `launch configuration web-v2`,
/// `mixed instances policy of launch template web (lt-1) version 3
/// (overrides m5.xlarge, m6g.xlarge: launch template arm version 2)`.
fn describe(source: &LaunchSource) -> String {
    match source {
        LaunchSource::Template { .. } => source
            .template()
            .map_or_else(String::new, |t| describe_template(&t)),
        LaunchSource::Configuration { name } => format!("launch configuration {name}"),
        LaunchSource::MixedInstances(policy) => {
            let overrides: Vec<String> = policy
                .overrides
                .iter()
                .map(|o| {
                    let kind = o
                        .instance_type
                        .as_deref()
                        .unwrap_or("instance requirements");
                    match &o.template {
                        Some(t) => format!("{kind}: {}", describe_template(t)),
                        None => kind.to_string(),
                    }
                })
                .collect();
            format!(
                "mixed instances policy of {} (overrides {})",
                describe_template(&policy.template),
                overrides.join(", ")
            )
        }
    }
}

fn describe_template(t: &TemplateRef) -> String {
    format!(
        "launch template {}{} version {}",
        t.name.as_deref().or(t.id.as_deref()).unwrap_or("?"),
        match (&t.name, &t.id) {
            (Some(_), Some(id)) => format!(" ({id})"),
            _ => String::new(),
        },
        t.version.as_deref().unwrap_or("$Default")
    )
}
