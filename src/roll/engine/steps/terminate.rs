//! One old agent's end in the drain: released once the drain has begun
//! and its agent is empty (Marathon lists no task there and Mesos sees no
//! resource in use), and while fewer than `--max-unavailable` old agents
//! of its AZ are being terminated. Then its machine is put down (Mesos
//! removes the agent at once instead of waiting out the agent ping
//! timeout) and the instance terminated with a decrement; the step ends
//! when Mesos no longer has the agent and the group no longer has the
//! instance (its termination, lifecycle hooks included, is over). App health is the waves' concern:
//! an empty agent takes no task with it.

use std::collections::HashMap;

use super::drain_wave::extend_drain;
use super::{StepAction, StepContext, Tick};
use crate::plan::Status;
use crate::roll::decide::roll_plan::{DRAIN, TERMINATE};
use crate::roll::engine::tick_context::Observation;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{AutoScaling, AutoScalingGroup, LifecycleState};
use crate::roll::ports::mesos::MesosMaster;
use crate::roll::record::checkpoint::{Checkpoint, EventKind, MaintenanceRecord, RolledInstance};
use crate::roll::record::kinds::WaitKind;

/// One emptied old agent's termination.
///
/// Safe to re-run after a crash at any point: the termination is recorded
/// before anything is sent; a resume sends it again only while the group
/// still has the instance in service (the adapter answers `AlreadyGone`
/// otherwise, so the desired capacity is never decremented twice), and
/// puts the machine down only if Mesos does not already have it DOWN.
pub struct Terminate<'k> {
    pub instance: &'k str,
}

impl StepAction for Terminate<'_> {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let instance = self.instance;
        let record = cx.rolled(instance)?;
        let group = cx.tick.group().await?;
        let present = group.still_has(instance);
        if record.terminate_sent {
            if present && !cx.tick.sent(instance) {
                // The intent was written but the call never landed: sent
                // again, after the same check as the first time.
                cx.tick
                    .check_no_other_writer(&cx.journal.checkpoint)
                    .await?;
                let first_resend = cx.memory.resent.insert(instance.to_string());
                return send_terminations(cx, &[record], first_resend).await;
            }
            let seen = cx.tick.observation().await?;
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
            cx.tick
                .check_no_other_writer(&cx.journal.checkpoint)
                .await?;
            return send_terminations(cx, &[record], true).await;
        }
        let checkpoint = &cx.journal.checkpoint;
        let drain = phase_status(checkpoint, DRAIN);
        if drain == Some(Status::Pending) || drain_held_before_start(checkpoint) {
            return Ok(Tick::NotYet(
                "waiting for the drain to begin (no old agent goes before it does)".to_string(),
            ));
        }
        let first_wave_done = wave_one_complete(&cx.journal.checkpoint);
        if let Some(baking) = cx.bake_gate(first_wave_done).await? {
            return Ok(Tick::Waiting(baking));
        }
        let seen = cx.tick.observation().await?;
        if let Some(why) = seen.busy(&record.agent_id) {
            if drain == Some(Status::Complete) && seen.tasks_on(&record.agent_id) > 0 {
                // The drain ended with Marathon tasks still on an old agent
                // (an operator force-completed a wave): it goes on.
                if let Some(wave) = extend_drain(cx) {
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
        let going = cx.tick.terminating_in(az, &cx.journal.checkpoint);
        let limit = cx.journal.checkpoint.max_unavailable;
        if going >= limit as usize {
            return Ok(Tick::NotYet(format!(
                "empty; {going} old agent(s) of {az} are being terminated (--max-unavailable {limit})"
            )));
        }
        cx.tick
            .check_no_other_writer(&cx.journal.checkpoint)
            .await?;
        // Every other agent released now goes with this one: one intent,
        // one `machine/down`.
        let batch = releasable_with(cx, record, &seen, &group);
        send_terminations(cx, &batch, true).await
    }
}

/// `first` and every other old agent whose termination step may go now by
/// the same rules (not sent, in service, empty, not interrupted, within
/// `--max-unavailable` per AZ), in plan order.
fn releasable_with<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    first: RolledInstance,
    seen: &Observation,
    group: &AutoScalingGroup,
) -> Vec<RolledInstance> {
    let checkpoint = &cx.journal.checkpoint;
    let limit = checkpoint.max_unavailable as usize;
    let mut going: HashMap<String, usize> = HashMap::new();
    let first_az = first.availability_zone.clone();
    let first_id = first.id.clone();
    let mut batch = vec![first];
    let now = cx.tick.terminating_in(&first_az, checkpoint);
    going.insert(first_az, now + 1);
    let terminate = checkpoint.phase_id(TERMINATE);
    let Some(phase) = checkpoint.plan.phases.iter().find(|p| p.id == terminate) else {
        return batch;
    };
    let open = phase
        .steps
        .iter()
        .filter(|s| !s.is_complete() && !s.interrupted && s.id != first_id);
    for step in open {
        let Some(i) = checkpoint.instances.iter().find(|i| i.id == step.id) else {
            continue;
        };
        if i.terminate_sent || !group.still_has(&i.id) || seen.busy(&i.agent_id).is_some() {
            continue;
        }
        let now = match going.get(&i.availability_zone) {
            Some(&n) => n,
            None => cx.tick.terminating_in(&i.availability_zone, checkpoint),
        };
        if now >= limit {
            continue;
        }
        going.insert(i.availability_zone.clone(), now + 1);
        batch.push(i.clone());
    }
    batch
}

/// Records the terminations (one intent), puts their machines down (one
/// call), terminates each instance with a decrement. What the first of
/// them waits for is returned; the others' steps find them sent when their
/// turn comes this tick. `log`: whether to write the intent's event (a
/// termination sent again tick after tick, already recorded, is logged
/// only once).
async fn send_terminations<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    batch: &[RolledInstance],
    log: bool,
) -> Result<Tick, RollError> {
    for record in batch {
        if let Some(r) = cx.journal.checkpoint.instance_mut(&record.id) {
            r.terminate_sent = true;
        }
    }
    if log {
        let shown: Vec<&str> = batch.iter().take(5).map(|r| r.id.as_str()).collect();
        cx.journal.checkpoint.intend(format!(
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
    cx.save().await?;
    for record in batch {
        cx.tick.sending(&record.id, &record.availability_zone);
    }
    let machines: Vec<MaintenanceRecord> = batch.iter().map(RolledInstance::machine).collect();
    machines_down(cx, &machines).await?;
    let asg = cx.journal.checkpoint.asg.clone();
    for record in batch {
        let result = cx.ports.aws().terminate_instance(&asg, &record.id).await?;
        // The answer is written with the tick: a crash before that finds
        // the intent, and the group says whether the call landed.
        cx.journal
            .checkpoint
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

/// `machine/down` for the `machines` that the roll's window has and
/// Mesos does not have DOWN already (Mesos refuses a second `down`, and a
/// machine outside any window), in one call: what a termination does
/// first (the drain's, the serial's, the rollback's), so that Mesos drops
/// the agent at once rather than after its ping timeout.
pub(super) async fn machines_down<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    wanted: &[MaintenanceRecord],
) -> Result<(), RollError> {
    let status = cx.tick.maintenance().await?;
    let mut machines = Vec::new();
    for record in wanted {
        let Some(machine) = cx
            .journal
            .checkpoint
            .maintenance
            .iter()
            .find(|m| *m == record)
            .map(|m| m.machine_id())
        else {
            continue;
        };
        if status.down.iter().any(|d| d.same_machine(&machine)) {
            continue;
        }
        if !status.draining.iter().any(|d| d.id.same_machine(&machine)) {
            cx.journal.checkpoint.log(
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
    cx.ports.mesos().machines_down(&machines).await?;
    Ok(())
}

/// The status of the focused group's phase `id` (bare: `drain`).
fn phase_status(checkpoint: &Checkpoint, id: &str) -> Option<Status> {
    let id = checkpoint.phase_id(id);
    checkpoint
        .plan
        .phases
        .iter()
        .find(|p| p.id == id)
        .map(|p| p.status())
}

/// The drain phase is interrupted (a canary roll waits for `roller plan
/// continue --phase drain`) and has not started a wave.
fn drain_held_before_start(checkpoint: &Checkpoint) -> bool {
    checkpoint
        .plan
        .phases
        .iter()
        .find(|p| p.id == checkpoint.phase_id(DRAIN))
        .is_some_and(|p| p.is_interrupted() && p.steps.iter().all(|s| s.status == Status::Pending))
}

/// Whether the drain's first wave is complete (its bake may begin).
fn wave_one_complete(checkpoint: &Checkpoint) -> bool {
    let first = checkpoint.step_id(&crate::roll::decide::roll_plan::wave_id(1));
    checkpoint
        .find_step(&format!("{}/{first}", checkpoint.phase_id(DRAIN)))
        .is_some_and(|at| checkpoint.plan.step(at).is_complete())
}
