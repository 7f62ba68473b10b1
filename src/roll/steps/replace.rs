//! Replacing one instance, tick by tick: move what must move off its
//! agent (`drain.rs`), check that nobody else changed the group, terminate
//! it with a decrement, then wait for Mesos to drop the agent and for
//! Marathon to report every app healthy.

use std::collections::HashSet;

use super::super::checkpoint::{EventKind, RolledInstance};
use super::super::error::RollError;
use super::super::health;
use super::super::ports::auto_scaling::AutoScaling;
use super::super::ports::marathon::Marathon;
use super::super::ports::mesos::MesosMaster;
use super::super::ports::pager::Pager;
use super::super::runner::Runner;
use super::{Tick, WaitKind};

impl<A, M, K, P> Runner<'_, A, M, K, P>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
{
    /// One tick of an instance's replacement. Re-entering it after a crash
    /// is safe: the termination is recorded before it is sent; a resume
    /// (or the tick after a call that failed) sends it again only while
    /// the group still has the instance in service, and the adapter reads
    /// the group right before it terminates (`AlreadyGone` if the first
    /// call landed meanwhile), so the desired capacity is never
    /// decremented twice. The moves are recomputed from Marathon each
    /// tick, and the waits only read.
    pub(in crate::roll) async fn replace(&mut self, instance: &str) -> Result<Tick, RollError> {
        let record = self.rolled(instance)?;
        let group = self.observed_group().await?;
        let present = group
            .instance(instance)
            .is_some_and(|i| !i.lifecycle_state.is_leaving());
        if record.terminate_sent && present {
            // The intent was written but the call never landed (a crash
            // between the two, or a call that failed): send it again,
            // after the same check as the first time.
            // The intent is already recorded; the event says it is sent
            // again, once per run, not once per tick of a failing call.
            self.check_no_other_writer_this_tick().await?;
            if self.resent.insert(instance.to_string()) {
                self.checkpoint.intend(format!(
                    "terminate {instance} with decrement (again: the first call did not land)"
                ));
                self.save().await?;
            }
            return self.send_termination(instance, &record.agent_id).await;
        }
        if !record.terminate_sent {
            if present {
                if let Some(moving) = self.make_safe(&record).await? {
                    return Ok(Tick::Waiting(moving));
                }
                if self.stopped() {
                    return Ok(Tick::waiting(
                        WaitKind::TaskMoves,
                        format!("{instance} is safe to terminate; stopping first"),
                    ));
                }
            }
            // Also when the instance is already gone: gone by another
            // writer's hand, the group's count says so before it is
            // recorded as this roll's.
            self.check_no_other_writer_this_tick().await?;
            if let Some(r) = self.checkpoint.instance_mut(instance) {
                r.terminate_sent = true;
            }
            self.checkpoint
                .intend(format!("terminate {instance} with decrement"));
            self.save().await?;
            return self.send_termination(instance, &record.agent_id).await;
        }
        let agent = &record.agent_id;
        let active: HashSet<String> = self
            .ports
            .mesos
            .agents()
            .await?
            .registered
            .into_iter()
            .filter(|a| a.active)
            .map(|a| a.id.0)
            .collect();
        if active.contains(agent) {
            return Ok(Tick::waiting(
                WaitKind::Deregistered,
                format!("waiting for Mesos to deregister agent {agent}: still active"),
            ));
        }
        let healthy = "waiting for every Marathon app to be healthy";
        let mut apps = self.ports.marathon.apps().await?;
        let lost = health::drop_tasks_on_lost_agents(&mut apps, &active);
        if lost > 0 {
            return Ok(Tick::waiting(
                WaitKind::Healthy,
                format!("{healthy}: {lost} task(s) still listed on agents Mesos no longer has"),
            ));
        }
        // `/v2/deployments` can only add reasons to what the apps say of
        // themselves: it is read only once they look healthy.
        let allowed = &self.checkpoint.allow_unhealthy;
        if let Some(waiting) = still_unhealthy(&health::judge(&apps, &[]), allowed) {
            return Ok(Tick::waiting(
                WaitKind::Healthy,
                format!("{healthy}: {waiting}"),
            ));
        }
        let deployments = self.ports.marathon.deployments().await?;
        let verdict = health::judge(&apps, &deployments);
        if let Some(waiting) = still_unhealthy(&verdict, allowed) {
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

    /// Terminates `instance` with a decrement (its intent recorded), and
    /// waits for its agent to go.
    async fn send_termination(&mut self, instance: &str, agent: &str) -> Result<Tick, RollError> {
        let asg = self.checkpoint.asg.clone();
        let result = self.ports.aws.terminate_instance(&asg, instance).await?;
        self.checkpoint
            .log(EventKind::Terminate, format!("{instance}: {result}"));
        self.save().await?;
        Ok(Tick::waiting(
            WaitKind::Deregistered,
            format!("waiting for Mesos to deregister agent {agent}: {instance} terminated"),
        ))
    }

    /// The checkpoint's record of an instance a step of the plan names.
    pub(in crate::roll) fn rolled(&self, instance: &str) -> Result<RolledInstance, RollError> {
        self.checkpoint
            .instances
            .iter()
            .find(|i| i.id == instance)
            .cloned()
            .ok_or_else(|| {
                RollError::refused(format!(
                    "instance {instance} is in the plan but not in the checkpoint's instance list"
                ))
            })
    }
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

/// ` (N allowed unhealthy by --allow-unhealthy[how]: a, b)` for the apps
/// given, or nothing when there are none.
pub(in crate::roll) fn excused_note<'a>(apps: impl Iterator<Item = &'a str>, how: &str) -> String {
    let apps: Vec<&str> = apps.collect();
    if apps.is_empty() {
        return String::new();
    }
    format!(
        " ({} allowed unhealthy by --allow-unhealthy{how}: {})",
        apps.len(),
        apps.join(", ")
    )
}
