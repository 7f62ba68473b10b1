//! `Replace`: one instance's replacement, tick by tick (the serial
//! strategy, and the drain's canaries): move what must move off its agent
//! (`task_moves.rs`), check that nobody else changed the group, terminate
//! it with a decrement, then wait for Mesos to drop the agent and for
//! Marathon to report every app healthy.

use super::pods;
use super::terminate::left_without_decrement;
use super::{StepAction, StepContext, Tick, excused_note};
use crate::roll::decide::{health, placement};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{AutoScaling, AutoScalingGroup, LifecycleState};
use crate::roll::ports::marathon::Marathon;
use crate::roll::record::checkpoint::{EventKind, RolledInstance};
use crate::roll::record::kinds::WaitKind;

/// Replaces one instance.
///
/// Safe to re-run after a crash at any point: the termination is recorded
/// before it is sent; a resume (or the tick after a call that failed)
/// sends it again only while the group still has the instance in service,
/// and the adapter reads the group right before it terminates
/// (`AlreadyGone` if the first call landed meanwhile), so the desired
/// capacity is never decremented twice. The moves are recomputed from
/// Marathon each tick, and the waits only read.
pub(crate) struct Replace<'k> {
    pub(crate) instance: &'k str,
}

impl StepAction for Replace<'_> {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let instance = self.instance;
        let record = cx.rolled(instance)?;
        let group = cx.observed_group().await?;
        let present = group.still_has(instance);
        if record.terminate_sent && present {
            return send_termination_again(cx, &record).await;
        }
        if !record.terminate_sent {
            if present && let Some(held) = before_termination(cx, &record).await? {
                return Ok(held);
            }
            return terminate(cx, &record, present).await;
        }
        if let Some(waiting) = wait_for_deregistration(cx, &record, &group).await? {
            return Ok(waiting);
        }
        wait_for_marathon_health(cx, instance).await
    }
}

/// Before the termination of an instance still in service: what holds it
/// back (an app with nowhere to go, tasks still moving off its agent, a
/// stop signal, the first replacement's bake, pods of SDK services being
/// replaced off it); `None` once it may go.
async fn before_termination<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
) -> Result<Option<Tick>, RollError> {
    // Every app on the old agents must have an agent to go to
    // (its roles), or it would be lost with them.
    let seen = cx.tick.observation().await?;
    let old = cx.old_agents();
    let allowed = cx.allowed_unhealthy();
    let stranded = placement::stranded(&seen.apps, &old, &seen.agents, allowed);
    if !stranded.is_empty() {
        return Ok(Some(Tick::Pause(placement::stranded_sentence(
            &stranded,
            &old,
            &seen.agents,
        ))));
    }
    if let Some(moving) = cx.make_safe(record).await? {
        return Ok(Some(Tick::Waiting(moving)));
    }
    if cx.stopped() {
        return Ok(Some(Tick::waiting(
            WaitKind::TaskMoves,
            format!("{} is safe to terminate; stopping first", record.id),
        )));
    }
    // Its tasks are on the new agents now: the first
    // replacement bakes there before its instance goes.
    if let Some(baking) = cx.bake_gate(true).await? {
        return Ok(Some(Tick::Waiting(baking)));
    }
    // Then the pods of DC/OS SDK services it holds, through their APIs.
    pods::replace_off(cx, record, &seen).await
}

/// The termination, recorded before it is sent. Also when the instance
/// is already gone (`present` false): gone by another writer's hand, the
/// group's count says so before it is recorded as this roll's; without a
/// decrement, the group replaces it (`left_without_decrement`).
async fn terminate<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
    present: bool,
) -> Result<Tick, RollError> {
    let instance = record.id.as_str();
    cx.check_no_other_writer().await?;
    if !present {
        left_without_decrement(cx, record);
    }
    if let Some(r) = cx.group_mut().instance_mut(instance) {
        r.terminate_sent = true;
    }
    cx.intend(format!("terminate {instance} with decrement"))
        .await?;
    send_termination(cx, record).await
}

/// The intent was written but the call never landed (a crash between
/// the two, or a call that failed): sends it again, after the same check
/// as the first time. The intent is already recorded; the event says it
/// is sent again, once per run, not once per tick of a failing call.
async fn send_termination_again<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
) -> Result<Tick, RollError> {
    let instance = record.id.as_str();
    cx.check_no_other_writer().await?;
    if cx.memory.resent.insert(instance.to_string()) {
        cx.intend(format!(
            "terminate {instance} with decrement (again: the first call did not land)"
        ))
        .await?;
    }
    send_termination(cx, record).await
}

/// After the termination: what the step waits for while Mesos still
/// lists the agent or the group is still terminating the instance;
/// `None` once both are over.
async fn wait_for_deregistration<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
    group: &AutoScalingGroup,
) -> Result<Option<Tick>, RollError> {
    let (instance, agent) = (&record.id, &record.agent_id);
    if let Some(still) = cx.tick.agents().await?.iter().find(|a| a.id.0 == *agent) {
        let how = if still.active { "active" } else { "inactive" };
        return Ok(Some(Tick::waiting(
            WaitKind::Deregistered,
            format!("waiting for Mesos to drop agent {agent}: still listed ({how})"),
        )));
    }
    if let Some(held) = super::lifecycle_waits::termination_held(cx, group, instance).await? {
        return Ok(Some(held));
    }
    if group
        .instance(instance)
        .is_some_and(|i| i.lifecycle_state != LifecycleState::Terminated)
    {
        return Ok(Some(Tick::waiting(
            WaitKind::Deregistered,
            format!("agent {agent} gone; waiting for the group to finish terminating {instance}"),
        )));
    }
    Ok(None)
}

/// Once the instance is gone: done when Marathon reports every app
/// healthy (those the operator allowed left out), else what it waits for.
async fn wait_for_marathon_health<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    instance: &str,
) -> Result<Tick, RollError> {
    let healthy = "waiting for every Marathon app to be healthy";
    let seen = cx.tick.observation().await?;
    if seen.lost > 0 {
        return Ok(Tick::waiting(
            WaitKind::Healthy,
            format!(
                "{healthy}: {} task(s) still listed on agents Mesos no longer has",
                seen.lost
            ),
        ));
    }
    // `/v2/deployments` can only add reasons to what the apps say of
    // themselves: it is read only once they look healthy.
    let settle = cx.rules(&seen).settle;
    let allowed = cx.allowed_unhealthy().to_vec();
    if let Some(waiting) = still_unhealthy(&health::judge(&seen.apps, &[], settle), &allowed) {
        return Ok(Tick::waiting(
            WaitKind::Healthy,
            format!("{healthy}: {waiting}"),
        ));
    }
    let deployments = cx.ports.marathon().deployments().await?;
    let verdict = health::judge(&seen.apps, &deployments, settle);
    if let Some(waiting) = still_unhealthy(&verdict, &allowed) {
        return Ok(Tick::waiting(
            WaitKind::Healthy,
            format!("{healthy}: {waiting}"),
        ));
    }
    let excused = excused_note(
        verdict
            .unhealthy()
            .map(|a| a.id.as_str())
            .filter(|id| allowed.iter().any(|a| a == id)),
        "",
    );
    Ok(Tick::Done(format!(
        "{instance} replaced; Marathon healthy{excused}"
    )))
}

/// Terminates `record`'s instance with a decrement (its intent
/// recorded), and waits for its agent to go.
async fn send_termination<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
) -> Result<Tick, RollError> {
    let (instance, agent) = (record.id.as_str(), record.agent_id.as_str());
    // Its machine put down first when the roll's window has it (the
    // tasks that had to move are gone), as the drain's terminations do.
    super::terminate::machines_down(cx, &[record.machine()]).await?;
    let asg = cx.group().asg.clone();
    let result = cx.ports.aws().terminate_instance(&asg, instance).await?;
    cx.record(EventKind::Terminate, format!("{instance}: {result}"));
    cx.save().await?;
    Ok(Tick::waiting(
        WaitKind::Deregistered,
        format!("waiting for Mesos to deregister agent {agent}: {instance} terminated"),
    ))
}

/// The apps still unhealthy (those the operator allowed left out), the
/// first three named with why; `None` when there are none.
fn still_unhealthy(verdict: &health::ClusterHealth, allowed: &[String]) -> Option<String> {
    let unhealthy: Vec<String> = verdict
        .unhealthy()
        .filter(|a| !allowed.contains(&a.id))
        .map(|a| format!("{} ({})", a.id, a.reason().unwrap_or_default()))
        .collect();
    (!unhealthy.is_empty()).then(|| {
        let more = unhealthy.len().saturating_sub(3);
        let mut text = format!(
            "unhealthy: {}",
            unhealthy[..unhealthy.len().min(3)].join(", ")
        );
        if more > 0 {
            text.push_str(&format!(" and {more} more"));
        }
        text
    })
}
