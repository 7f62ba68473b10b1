//! Instances held by the group's lifecycle hooks, as the steps that wait
//! for them see it. A terminated instance in `Terminating:Wait`: the
//! hooks the environment names as roller's (`complete_lifecycle_hooks`)
//! are completed with CONTINUE (its agent is empty and down by then), and
//! the others (a log shipper's) are waited for, the deregistration wait's
//! deadline extended by their heartbeat timeout. A new instance in
//! `Pending:Wait`: the registration wait is extended the same way.
//!
//! The hooks are read only while an instance is in a wait state: a group
//! without hooks costs no call.

use std::time::Duration;

use super::{StepContext, Tick};
use crate::roll::engine::clock::human;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{
    AutoScaling, AutoScalingGroup, LifecycleActionCompletion, LifecycleActionResult, LifecycleHook,
    LifecycleState,
};
use crate::roll::record::checkpoint::EventKind;
use crate::roll::record::kinds::WaitKind;

/// What the step waits for while the group holds `instance` (whose agent
/// is gone from Mesos) in `Terminating:Wait`; `None` when it is not in
/// that state.
///
/// Safe to run again: completing an action that no longer waits (done
/// by an earlier run, or timed out) is answered `NotWaiting`, logged and
/// not an error; the intent is written before each completion.
pub(super) async fn termination_held<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    group: &AutoScalingGroup,
    instance: &str,
) -> Result<Option<Tick>, RollError> {
    let held = group
        .instance(instance)
        .is_some_and(|i| i.lifecycle_state == LifecycleState::TerminatingWait);
    if !held {
        return Ok(None);
    }
    let theirs = complete_rollers_hooks(cx, &[instance], "its agent is empty and down").await?;
    let theirs: Vec<&LifecycleHook> = theirs.iter().collect();
    let (extension, message) = held_by(
        cx,
        instance,
        LifecycleState::TerminatingWait,
        &theirs,
        "waiting for the group to finish terminating it",
    );
    Ok(Some(Tick::waiting_longer(
        WaitKind::Deregistered,
        extension,
        message,
    )))
}

/// The rollback's terminations: of the instances `going` (with their
/// agents, by id), those the group holds in `Terminating:Wait` whose
/// agents Mesos no longer has active get roller's hooks completed; what
/// the step waits for while any is held (deadline extended by the others'
/// hooks), `None` when none is.
pub(super) async fn terminations_held<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    group: &AutoScalingGroup,
    going: &[(String, String)],
    then: &str,
) -> Result<Option<Tick>, RollError> {
    let held: Vec<&(String, String)> = going
        .iter()
        .filter(|(id, _)| {
            group
                .instance(id)
                .is_some_and(|i| i.lifecycle_state == LifecycleState::TerminatingWait)
        })
        .collect();
    if held.is_empty() {
        return Ok(None);
    }
    let active: Vec<String> = cx
        .tick
        .agents()
        .await?
        .iter()
        .filter(|a| a.active)
        .map(|a| a.id.0.clone())
        .collect();
    let down: Vec<&str> = held
        .iter()
        .filter(|(_, agent)| !active.contains(agent))
        .map(|(id, _)| id.as_str())
        .collect();
    let theirs = complete_rollers_hooks(cx, &down, "its agent is empty and down").await?;
    let theirs: Vec<&LifecycleHook> = theirs.iter().collect();
    let ids: Vec<&str> = held.iter().map(|(id, _)| id.as_str()).collect();
    let (extension, message) = held_by(
        cx,
        &ids.join(", "),
        LifecycleState::TerminatingWait,
        &theirs,
        then,
    );
    Ok(Some(Tick::waiting_longer(
        WaitKind::Deregistered,
        extension,
        message,
    )))
}

impl<P: Ports> StepContext<'_, '_, P> {
    /// `roller abandon`: the group's instances held in a lifecycle hook's
    /// wait. Those the roll terminated (an old instance after its drain, a
    /// new one the rollback emptied) get roller's termination hooks
    /// completed with CONTINUE, since no roller will be back to do it and
    /// each would otherwise sit out the hook's heartbeat timeout; every
    /// other held instance (a launch hook's, a termination the roll did not
    /// send) is left to its hooks and said. One line per kind.
    pub(crate) async fn release_hooks(&mut self) -> Result<Vec<String>, RollError> {
        let asg = self.group().asg.clone();
        let group = self.ports.aws().describe_group(&asg).await?;
        let rolls: Vec<&str> = self
            .group()
            .instances
            .iter()
            .filter(|i| i.terminate_sent)
            .map(|i| i.id.as_str())
            .chain(self.group().new_agents.iter().map(|a| a.instance.as_str()))
            .collect();
        let owned = roller_hooks(self);
        let mut mine = Vec::new();
        let mut left = Vec::new();
        for i in &group.instances {
            match i.lifecycle_state {
                LifecycleState::TerminatingWait
                    if !owned.is_empty() && rolls.contains(&i.id.as_str()) =>
                {
                    mine.push(i.id.as_str());
                }
                LifecycleState::TerminatingWait | LifecycleState::PendingWait => {
                    left.push(format!("{} ({})", i.id, i.lifecycle_state.as_aws()));
                }
                _ => {}
            }
        }
        let mut lines = Vec::new();
        if !mine.is_empty() {
            let theirs =
                complete_rollers_hooks(self, &mine, "it was terminated by the roll").await?;
            let mut line = format!(
                "completed roller's lifecycle hook(s) {} for {} (terminated by the roll)",
                owned.join(", "),
                mine.join(", ")
            );
            let theirs: Vec<&LifecycleHook> = theirs.iter().collect();
            if !theirs.is_empty() {
                let names: Vec<&str> = theirs.iter().map(|h| h.name.as_str()).collect();
                line.push_str(&format!(
                    "; hook(s) {} of someone else's may hold them up to {}",
                    names.join(", "),
                    human(longest_heartbeat(&theirs))
                ));
            }
            lines.push(line);
        }
        if !left.is_empty() {
            lines.push(format!(
                "left to their lifecycle hooks (not roller's to complete): {}",
                left.join(", ")
            ));
        }
        Ok(lines)
    }
}

/// Completes, with CONTINUE, the actions of roller's termination hooks
/// for `instances` (held in `Terminating:Wait`; `why` CONTINUE is safe:
/// their agents empty and down), each once per process, its intent
/// written first; answers the group's termination hooks that are someone
/// else's.
///
/// Safe to run again: completing an action that no longer waits (done by
/// an earlier run, or timed out) is answered `NotWaiting`, logged and not
/// an error.
async fn complete_rollers_hooks<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    instances: &[&str],
    why: &str,
) -> Result<Vec<LifecycleHook>, RollError> {
    let asg = cx.group().asg.clone();
    let hooks = group_hooks(cx, LifecycleHook::on_termination).await?;
    let owned = roller_hooks(cx);
    let (mine, theirs): (Vec<LifecycleHook>, Vec<LifecycleHook>) =
        hooks.into_iter().partition(|h| owned.contains(&h.name));
    for instance in instances {
        for hook in &mine {
            let key = format!("{instance}/{}", hook.name);
            if cx.memory.completed_hooks.contains(&key) {
                continue;
            }
            cx.intend(format!(
                "complete lifecycle action of hook {} for {instance} with CONTINUE ({why})",
                hook.name
            ))
            .await?;
            let answer = cx
                .ports
                .aws()
                .complete_lifecycle_action(
                    &asg,
                    &hook.name,
                    instance,
                    LifecycleActionResult::Continue,
                )
                .await?;
            let said = match answer {
                LifecycleActionCompletion::Completed => "completed with CONTINUE",
                LifecycleActionCompletion::NotWaiting => {
                    "no action waits any more (completed already or timed out): nothing sent"
                }
            };
            cx.record(
                EventKind::Terminate,
                format!("{instance}: lifecycle hook {}: {said}", hook.name),
            );
            cx.memory.completed_hooks.insert(key);
        }
    }
    Ok(theirs)
}

/// What the registration wait says, and how much longer it may last,
/// while new instances (`held`, by id) are in `Pending:Wait`: the
/// group's launch hooks' longest heartbeat timeout. `None` when none is
/// held. Roller completes no launch hook: the instance's own bootstrap
/// does.
pub(super) async fn launch_held<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    held: &[String],
    then: &str,
) -> Result<Option<(Duration, String)>, RollError> {
    if held.is_empty() {
        return Ok(None);
    }
    let hooks = group_hooks(cx, LifecycleHook::on_launch).await?;
    let hooks: Vec<&LifecycleHook> = hooks.iter().collect();
    Ok(Some(held_by(
        cx,
        &held.join(", "),
        LifecycleState::PendingWait,
        &hooks,
        then,
    )))
}

/// How much longer than its kind's timeout a step may wait for
/// `instance` in `state` for `hooks` (others' to complete): their
/// longest heartbeat timeout; and the message naming them. Logged once
/// per instance and run.
fn held_by<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    instance: &str,
    state: LifecycleState,
    hooks: &[&LifecycleHook],
    then: &str,
) -> (Duration, String) {
    if hooks.is_empty() {
        let message = format!(
            "{instance} in {} (no hook of someone else's holds it); {then}",
            state.as_aws()
        );
        return (Duration::ZERO, message);
    }
    let names: Vec<&str> = hooks.iter().map(|h| h.name.as_str()).collect();
    let extension = longest_heartbeat(hooks);
    let message = format!(
        "{instance} in {} for hook {} (heartbeat timeout {}: the deadline is extended by it); {then}",
        state.as_aws(),
        names.join(", "),
        human(extension),
    );
    if cx.memory.hook_waits_logged.insert(instance.to_string()) {
        cx.record(
            EventKind::Step,
            format!("{message} (since {})", cx.clock.utc()),
        );
    }
    (extension, message)
}

/// The group's lifecycle hooks of one transition (`on`), as AWS lists
/// them now.
async fn group_hooks<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    on: fn(&LifecycleHook) -> bool,
) -> Result<Vec<LifecycleHook>, RollError> {
    let asg = cx.group().asg.clone();
    let hooks = cx.ports.aws().lifecycle_hooks(&asg).await?;
    Ok(hooks.into_iter().filter(on).collect())
}

/// The termination hooks of this step's group that are roller's to
/// complete.
fn roller_hooks<P: Ports>(cx: &StepContext<'_, '_, P>) -> Vec<String> {
    let asg = &cx.group().asg;
    cx.env
        .groups
        .iter()
        .find(|g| g.asg == *asg)
        .map(|g| g.complete_lifecycle_hooks.clone())
        .unwrap_or_default()
}

/// The longest heartbeat timeout of `hooks` (zero for none).
fn longest_heartbeat(hooks: &[&LifecycleHook]) -> Duration {
    hooks
        .iter()
        .map(|h| h.heartbeat_timeout)
        .max()
        .unwrap_or(Duration::ZERO)
}
