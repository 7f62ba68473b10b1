//! One old agent's end in the drain: released once the drain has begun
//! and its agent is empty (Marathon lists no task there and Mesos sees no
//! resource in use), and while fewer than `--max-unavailable` old agents
//! of its AZ are being terminated. Then its machine is put down (Mesos
//! removes the agent at once instead of waiting out the agent ping
//! timeout) and the instance terminated with a decrement; the step ends
//! when Mesos no longer has the agent and the group no longer has the
//! instance (its termination, lifecycle hooks included, is over). App health is the waves' concern:
//! an empty agent takes no task with it.

use std::collections::{HashMap, HashSet};

use super::super::checkpoint::{EventKind, RolledInstance};
use super::super::error::RollError;
use super::super::ports::auto_scaling::{AutoScaling, LifecycleState};
use super::super::ports::marathon::Marathon;
use super::super::ports::mesos::MesosMaster;
use super::super::ports::pager::Pager;
use super::super::roll_plan::{DRAIN, TERMINATE};
use super::super::runner::Runner;
use super::{Tick, WaitKind};
use crate::plan::Status;

impl<A, M, K, P> Runner<'_, A, M, K, P>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
{
    /// One tick of an emptied agent's termination. Re-entering it after a
    /// crash is safe: the termination is recorded before anything is
    /// sent; a resume sends it again only while the group still has the
    /// instance in service (the adapter answers `AlreadyGone` otherwise,
    /// so the desired capacity is never decremented twice), and puts the
    /// machine down only if Mesos does not already have it DOWN.
    pub(in crate::roll) async fn terminate(&mut self, instance: &str) -> Result<Tick, RollError> {
        let record = self.rolled(instance)?;
        let group = self.observed_group().await?;
        let present = group
            .instance(instance)
            .is_some_and(|i| !i.lifecycle_state.is_leaving());
        if record.terminate_sent {
            if present && !self.sent_this_tick.contains(instance) {
                // The intent was written but the call never landed: sent
                // again, after the same check as the first time.
                self.check_no_other_writer_this_tick().await?;
                let first_resend = self.resent.insert(instance.to_string());
                return self.send_terminations(&[record], first_resend).await;
            }
            let seen = self.observe().await?;
            if present || seen.is_active(&record.agent_id) {
                return Ok(Tick::waiting(
                    WaitKind::Deregistered,
                    format!(
                        "{instance} terminated; waiting for Mesos to drop agent {}",
                        record.agent_id
                    ),
                ));
            }
            let terminating = group
                .instance(instance)
                .is_some_and(|i| i.lifecycle_state != LifecycleState::Terminated);
            if terminating {
                return Ok(Tick::waiting(
                    WaitKind::Deregistered,
                    format!(
                        "agent {} gone; waiting for the group to finish terminating {instance}",
                        record.hostname
                    ),
                ));
            }
            return Ok(Tick::Done(format!(
                "{instance} terminated; agent {} gone",
                record.hostname
            )));
        }
        if !present {
            // Gone some other way: nothing to put down, and the group's
            // count already left it out only if it was decremented; the
            // adapter's answer says which, and the desired capacity check
            // of the next termination catches the other case. Checked
            // first: another writer's decrement shows before this roll
            // counts the instance as its own.
            self.check_no_other_writer_this_tick().await?;
            return self.send_terminations(&[record], true).await;
        }
        let drain = self.phase_status(DRAIN);
        if drain == Some(Status::Pending) || self.drain_held_before_start() {
            return Ok(Tick::NotYet(
                "waiting for the drain to begin (no old agent goes before it does)".to_string(),
            ));
        }
        let seen = self.observe().await?;
        if let Some(why) = seen.busy(&record.agent_id) {
            if drain == Some(Status::Complete) && seen.tasks_on(&record.agent_id) > 0 {
                // The drain ended with Marathon tasks still on an old agent
                // (an operator force-completed a wave): it goes on.
                if let Some(wave) = self.extend_drain() {
                    return Ok(Tick::NotYet(format!(
                        "{why}; the drain goes on with {wave}"
                    )));
                }
            }
            if drain == Some(Status::Complete) {
                // The drain is over and something still runs there: a wait
                // with a deadline, so a human hears of it.
                return Ok(Tick::waiting(
                    WaitKind::TaskMoves,
                    format!(
                        "{why}; the drain is over, so nothing will move it: {instance} is kept"
                    ),
                ));
            }
            return Ok(Tick::NotYet(format!(
                "waiting for the drain to empty it: {why}"
            )));
        }
        let az = &record.availability_zone;
        let going = self.terminating_in(az);
        let limit = self.checkpoint.max_unavailable;
        if going >= limit as usize {
            return Ok(Tick::NotYet(format!(
                "empty; {going} old agent(s) of {az} are being terminated (--max-unavailable {limit})"
            )));
        }
        self.check_no_other_writer_this_tick().await?;
        // Every other agent released now goes with this one: one intent,
        // one `machine/down`.
        let batch = self.releasable_with(record, &seen, &group);
        self.send_terminations(&batch, true).await
    }

    /// `first` and every other old agent whose termination step may go
    /// now by the same rules (not sent, in service, empty, not
    /// interrupted, within `--max-unavailable` per AZ), in plan order.
    fn releasable_with(
        &mut self,
        first: RolledInstance,
        seen: &super::super::observation::Observation,
        group: &super::super::ports::auto_scaling::AutoScalingGroup,
    ) -> Vec<RolledInstance> {
        let limit = self.checkpoint.max_unavailable as usize;
        let mut going: HashMap<String, usize> = HashMap::new();
        let mut batch = vec![first];
        *going
            .entry(batch[0].availability_zone.clone())
            .or_insert_with(|| self.terminating_in(&batch[0].availability_zone)) += 1;
        let Some(phase) = self
            .checkpoint
            .plan
            .phases
            .iter()
            .find(|p| p.id == TERMINATE)
        else {
            return batch;
        };
        let open: Vec<String> = phase
            .steps
            .iter()
            .filter(|s| !s.is_complete() && !s.interrupted && s.id != batch[0].id)
            .map(|s| s.id.clone())
            .collect();
        for id in open {
            let Some(i) = self
                .checkpoint
                .instances
                .iter()
                .find(|i| i.id == id)
                .cloned()
            else {
                continue;
            };
            let in_service = group
                .instance(&i.id)
                .is_some_and(|g| !g.lifecycle_state.is_leaving());
            if i.terminate_sent || !in_service || seen.busy(&i.agent_id).is_some() {
                continue;
            }
            let now = match going.get(&i.availability_zone) {
                Some(&n) => n,
                None => self.terminating_in(&i.availability_zone),
            };
            if now >= limit {
                continue;
            }
            going.insert(i.availability_zone.clone(), now + 1);
            batch.push(i);
        }
        batch
    }

    /// Records the terminations (one intent), puts their machines down
    /// (one call), terminates each instance with a decrement. What the
    /// first of them waits for is returned; the others' steps find them
    /// sent when their turn comes this tick.
    /// `log`: whether to write the intent's event (a termination sent
    /// again tick after tick, already recorded, is logged only once).
    async fn send_terminations(
        &mut self,
        batch: &[RolledInstance],
        log: bool,
    ) -> Result<Tick, RollError> {
        for record in batch {
            if let Some(r) = self.checkpoint.instance_mut(&record.id) {
                r.terminate_sent = true;
            }
        }
        if log {
            let shown: Vec<&str> = batch.iter().take(5).map(|r| r.id.as_str()).collect();
            self.checkpoint.intend(format!(
                "put {} emptied agent(s) down and terminate their instances with decrement: {}{}",
                batch.len(),
                shown.join(", "),
                if batch.len() > shown.len() {
                    ", …"
                } else {
                    ""
                }
            ));
        }
        self.save().await?;
        for record in batch {
            if let Some(counts) = &mut self.terminating {
                *counts.entry(record.availability_zone.clone()).or_default() += 1;
            }
            self.sent_this_tick.insert(record.id.clone());
        }
        self.machines_down(batch).await?;
        let asg = self.checkpoint.asg.clone();
        for record in batch {
            let result = self.ports.aws.terminate_instance(&asg, &record.id).await?;
            // The answer is written with the tick: a crash before that
            // finds the intent, and the group says whether the call landed.
            self.checkpoint
                .log(EventKind::Terminate, format!("{}: {result}", record.id));
        }
        let first = &batch[0];
        Ok(Tick::waiting(
            WaitKind::Deregistered,
            format!(
                "{} terminated; waiting for Mesos to drop agent {}",
                first.id, first.agent_id
            ),
        ))
    }

    /// `machine/down` for the agents' machines that the roll's window has
    /// and Mesos does not have DOWN already (Mesos refuses a second
    /// `down`, and a machine outside any window), in one call.
    async fn machines_down(&mut self, batch: &[RolledInstance]) -> Result<(), RollError> {
        let status = self.observed_maintenance().await?;
        let mut machines = Vec::new();
        for record in batch {
            let Some(machine) = self
                .checkpoint
                .maintenance
                .iter()
                .find(|m| m.hostname == record.hostname && m.ip == record.ip)
                .map(|m| m.machine_id())
            else {
                continue;
            };
            if status.down.iter().any(|d| d.same_machine(&machine)) {
                continue;
            }
            if !status.draining.iter().any(|d| d.id.same_machine(&machine)) {
                self.checkpoint.log(
                    EventKind::Terminate,
                    format!(
                        "{} is not in a maintenance window any more (removed by someone else?): not put down; Mesos drops it after its ping timeout",
                        record.hostname
                    ),
                );
                continue;
            }
            machines.push(machine);
        }
        self.ports.mesos.machines_down(&machines).await?;
        Ok(())
    }

    /// Old agents of `az` whose termination was sent and whose step has
    /// not completed (Mesos has not dropped them yet), counted once per
    /// tick (a drain has a step per old agent) and kept up to date by
    /// this tick's terminations.
    fn terminating_in(&mut self, az: &str) -> usize {
        let counts = self.terminating.get_or_insert_with(|| {
            let plan = &self.checkpoint.plan;
            let open: HashSet<&str> = plan
                .phases
                .iter()
                .filter(|p| p.id == TERMINATE)
                .flat_map(|p| &p.steps)
                .filter(|s| s.status != Status::Complete)
                .map(|s| s.id.as_str())
                .collect();
            let mut counts = HashMap::new();
            for i in &self.checkpoint.instances {
                if i.terminate_sent && open.contains(i.id.as_str()) {
                    *counts.entry(i.availability_zone.clone()).or_default() += 1;
                }
            }
            counts
        });
        counts.get(az).copied().unwrap_or(0)
    }

    fn phase_status(&self, id: &str) -> Option<Status> {
        self.checkpoint
            .plan
            .phases
            .iter()
            .find(|p| p.id == id)
            .map(|p| p.status())
    }

    /// The drain phase is interrupted (a canary roll waits for `roller plan
    /// continue --phase drain`) and has not started a wave.
    fn drain_held_before_start(&self) -> bool {
        self.checkpoint
            .plan
            .phases
            .iter()
            .find(|p| p.id == DRAIN)
            .is_some_and(|p| {
                p.is_interrupted() && p.steps.iter().all(|s| s.status == Status::Pending)
            })
    }
}
