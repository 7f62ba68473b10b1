//! One old agent's end in the drain: released once the drain has begun
//! and its agent is empty (Marathon lists no task there and Mesos sees no
//! resource in use), and while fewer than `--max-unavailable` old agents
//! of its AZ are being put down (`tick_context::holds_a_place`: sent and
//! still in service, or held by a termination hook). Then its machine is
//! put down (Mesos removes the agent at once instead of waiting out the
//! agent ping timeout) and the instance terminated with a decrement; the
//! step ends when Mesos no longer has the agent and the group no longer
//! has the instance (its termination, lifecycle hooks included, is over:
//! see `lifecycle_waits`). App health is the waves' concern: an empty
//! agent takes no task with it.

use std::collections::HashMap;

use super::drain_wave::extend_drain;
use super::lifecycle_waits::termination_held;
use super::other_tasks;
use super::pods;
use super::{StepAction, StepContext, Tick};
use crate::plan::Status;
use crate::roll::decide::roll_plan::{DRAIN, wave_id};
use crate::roll::engine::tick_context::Observation;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{
    AutoScaling, AutoScalingGroup, LifecycleState, TerminationRequest,
};
use crate::roll::ports::mesos::MesosMaster;
use crate::roll::record::checkpoint::{EventKind, MaintenanceRecord, RolledInstance};
use crate::roll::record::kinds::StepKind;
use crate::roll::record::kinds::WaitKind;

/// One emptied old agent's termination.
///
/// Safe to re-run after a crash at any point: the termination is recorded
/// before anything is sent; a resume sends it again only while the group
/// still has the instance in service (the adapter answers `AlreadyGone`
/// otherwise, so the desired capacity is never decremented twice), and
/// puts the machine down only if Mesos does not already have it DOWN.
pub(crate) struct Terminate<'k> {
    pub(crate) instance: &'k str,
}

impl StepAction for Terminate<'_> {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let instance = self.instance;
        let record = cx.rolled(instance)?;
        let group = cx.observed_group().await?;
        if record.terminate_sent {
            return after_termination(cx, record, &group).await;
        }
        if !group.still_has(instance) {
            // Gone some other way: nothing to put down. Checked first:
            // another writer's decrement shows before this roll counts
            // the instance as its own (a pause). Without one, the group
            // replaces it (EC2 reclaimed it): recorded as such, its
            // capacity is not one of the roll's decrements.
            cx.check_no_other_writer().await?;
            left_without_decrement(cx, &record);
            return send_terminations(cx, &[record], true).await;
        }
        if drain_not_begun(cx) {
            return Ok(Tick::NotYet(
                "waiting for the drain to begin (no old agent goes before it does)".to_string(),
            ));
        }
        if !cx.group().batch_open(&record) {
            // Even empty, it waits for its batch: the group's size goes
            // down only as each batch's new agents take the place of its
            // old ones (a decrement sooner could cross MinSize).
            return Ok(Tick::NotYet(format!(
                "waiting for its batch ({} of {}) to open",
                record.batch,
                cx.group().surge.as_ref().map_or(0, |s| s.batches)
            )));
        }
        let first_wave_done = wave_one_complete(cx);
        if let Some(baking) = cx.bake_gate(first_wave_done).await? {
            return Ok(Tick::Waiting(baking));
        }
        let seen = cx.tick.observation().await?;
        if let Some(tick) = pods::replace_off(cx, &record, &seen).await? {
            return Ok(tick);
        }
        if let Some(why) = seen.busy(&record.agent_id) {
            if drain_over(cx)
                && let Some(tick) = other_tasks::hold(cx, &record, &seen).await?
            {
                return Ok(tick);
            }
            let why = name_other_frameworks(cx, &record.agent_id, why, &seen).await;
            return Ok(not_empty(cx, &record, why, &seen));
        }
        let az = &record.availability_zone;
        let going = cx.terminating_in(az, &group);
        let limit = cx.roll().max_unavailable;
        if going >= limit as usize {
            return Ok(Tick::NotYet(format!(
                "empty; {going} old agent(s) of {az} are being put down (--max-unavailable {limit})"
            )));
        }
        cx.check_no_other_writer().await?;
        // Every other agent released now goes with this one: one intent,
        // one `machine/down`.
        let batch = releasable_with(cx, record, &seen, &group);
        send_terminations(cx, &batch, true).await
    }
}

/// `record`'s instance left the group before this roll terminated it,
/// and the desired capacity is still what the roll left (checked just
/// before): no decrement, so the group replaces it with a new agent.
/// Recorded as reclaimed (its capacity is not one of the roll's
/// decrements) and said: the group ends one instance above its target
/// for each, since roller terminates no new agent it did not drain.
pub(super) fn left_without_decrement<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
) {
    let instance = record.id.as_str();
    match cx.group_mut().instance_mut(instance) {
        Some(r) if !r.reclaimed => r.reclaimed = true,
        _ => return,
    }
    let above = cx.group().above_target().unwrap_or_default();
    cx.record(
        EventKind::Terminate,
        format!(
            "{instance} left the group without this roll's termination and without a \
             decrement (a Spot interruption, a failed instance): its tasks relaunch on new \
             agents, and the group replaces it with a new instance. {above}"
        ),
    );
}

/// Once its termination is recorded: sent again when it never landed,
/// else what the step waits for until Mesos has dropped the agent and
/// the group has finished terminating the instance.
async fn after_termination<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: RolledInstance,
    group: &AutoScalingGroup,
) -> Result<Tick, RollError> {
    let instance = record.id.as_str();
    let present = group.still_has(instance);
    if present && !cx.tick.sent(instance) {
        // The intent was written but the call never landed: sent
        // again, after the same check as the first time.
        cx.check_no_other_writer().await?;
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
    if let Some(held) = termination_held(cx, group, instance).await? {
        return Ok(held);
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
    Ok(Tick::Done(format!(
        "{instance} terminated; agent {} gone",
        record.hostname
    )))
}

/// Whether this group's drain has not begun (pending, or interrupted
/// before any of its steps began): no old agent goes before it does.
fn drain_not_begun<P: Ports>(cx: &StepContext<'_, '_, P>) -> bool {
    let drain = cx.phase_of(DRAIN).map(|p| &cx.roll().plan.phases[p]);
    let held = drain
        .is_some_and(|p| p.is_interrupted() && p.steps.iter().all(|s| s.status == Status::Pending));
    drain.map(|p| p.status()) == Some(Status::Pending) || held
}

/// What an old agent that is not empty yet (`why`) comes to: while the
/// drain runs, it waits for the drain to empty it; once the drain is
/// over, the drain goes on when Marathon tasks are left there, else it
/// is kept, with a deadline so that a human hears of it.
/// `why` an agent Marathon has emptied is still busy, said with what
/// Mesos runs there (an SDK service's pods, another framework's tasks)
/// and that the drain does not move them; `why` as it was when Marathon
/// still lists tasks there, or when Mesos cannot be asked now.
async fn name_other_frameworks<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    agent: &str,
    why: String,
    seen: &Observation,
) -> String {
    if seen.tasks_on(agent) > 0 {
        return why;
    }
    let Ok(contents) = cx.tick.agent_contents().await else {
        return why;
    };
    match contents.get(agent).filter(|c| c.not_marathon() > 0) {
        Some(here) => format!(
            "Marathon lists nothing on agent {agent}, but Mesos runs {} there, which the drain \
             does not move: waiting for them to end",
            here.describe()
        ),
        None => why,
    }
}

/// Whether this group's drain phase is complete: nothing more will move
/// Marathon's tasks off its old agents.
fn drain_over<P: Ports>(cx: &StepContext<'_, '_, P>) -> bool {
    cx.phase_of(DRAIN)
        .map(|p| cx.roll().plan.phases[p].status())
        == Some(Status::Complete)
}

fn not_empty<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
    why: String,
    seen: &Observation,
) -> Tick {
    if !drain_over(cx) {
        // The step is the agent's: its count alone (a drain of 2,000
        // agents keeps this message on 2,000 steps, in every checkpoint
        // write).
        let left = seen.tasks_on(&record.agent_id);
        let why = if left > 0 {
            format!("{left} Marathon task(s) left")
        } else {
            why
        };
        return Tick::NotYet(format!("waiting for the drain to empty it: {why}"));
    }
    // The drain ended with Marathon tasks still on an old agent (an
    // operator force-completed a wave): it goes on.
    if seen.tasks_on(&record.agent_id) > 0
        && let Some(wave) = extend_drain(cx)
    {
        return Tick::NotYet(format!("{why}; the drain goes on with {wave}"));
    }
    // Something still runs there and nothing will move it: a wait with a
    // deadline, so a human hears of it.
    Tick::waiting(
        WaitKind::TaskMoves,
        format!(
            "{why}; the drain is over, so nothing will move it: {} is kept",
            record.id
        ),
    )
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
    let limit = cx.roll().max_unavailable as usize;
    let mut going: HashMap<String, usize> = HashMap::new();
    let first_az = first.availability_zone.clone();
    let first_id = first.id.clone();
    let mut batch = vec![first];
    let now = cx.terminating_in(&first_az, group);
    going.insert(first_az, now + 1);
    // This group's other terminations not begun, in plan order.
    let me = cx.group_index();
    let open: Vec<RolledInstance> = cx
        .roll()
        .plan
        .steps()
        .filter(|(_, s)| !s.is_complete() && !s.interrupted)
        .filter_map(|(_, s)| match s.kind.as_ref() {
            Some(k) if k.group == me => match &k.kind {
                StepKind::Terminate { instance } if *instance != first_id => Some(instance),
                _ => None,
            },
            _ => None,
        })
        .filter_map(|id| cx.group().instance(id).cloned())
        .collect();
    for i in &open {
        if i.terminate_sent
            || !group.still_has(&i.id)
            || !cx.group().batch_open(i)
            || seen.busy(&i.agent_id).is_some()
            || pods::replacing_off(cx, &i.agent_id)
        {
            // Its own step decides when it goes: still holding tasks, or
            // a pod replaced off it not back yet (its step follows it).
            continue;
        }
        let now = match going.get(&i.availability_zone) {
            Some(&n) => n,
            None => cx.terminating_in(&i.availability_zone, group),
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
/// call), terminates each instance with a decrement (`terminate_many`: a
/// tick may release a tenth of every AZ's old agents, hundreds at 2,000
/// agents, checked together and sent several at once). What the first of
/// them waits for is returned; the others' steps find them sent when their
/// turn comes this tick. `log`: whether to write the intent's event (a
/// termination sent again tick after tick, already recorded, is logged
/// only once).
async fn send_terminations<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    batch: &[RolledInstance],
    log: bool,
) -> Result<Tick, RollError> {
    let mut replaced = 0;
    for record in batch {
        let group = cx.group_mut();
        // Decided once, with the intent: a resend goes the same way.
        let replace = match group.instance(&record.id) {
            Some(r) if r.terminate_sent => r.replaced,
            _ => group.replaces_next(),
        };
        if let Some(r) = group.instance_mut(&record.id) {
            r.terminate_sent = true;
            r.replaced = replace;
        }
        replaced += usize::from(replace);
    }
    if log {
        let shown: Vec<&str> = batch.iter().take(5).map(|r| r.id.as_str()).collect();
        let how = match replaced {
            0 => "with decrement".to_string(),
            n if n == batch.len() => {
                "without decrement (the group launches one in each's place, within the surge cap)"
                    .to_string()
            }
            n => format!(
                "{n} without decrement (the group launches one in each's place, within the \
                 surge cap), {} with",
                batch.len() - n
            ),
        };
        cx.note_intent(format!(
            "put {} emptied agent(s) down and terminate their instances {how}: {}{}",
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
    let me = cx.group_index();
    for record in batch {
        cx.tick.sending(me, &record.id, &record.availability_zone);
    }
    let machines: Vec<MaintenanceRecord> = batch.iter().map(RolledInstance::machine).collect();
    machines_down(cx, &machines).await?;
    let asg = cx.group().asg.clone();
    let requests: Vec<TerminationRequest> = batch
        .iter()
        .map(|r| TerminationRequest {
            instance: &r.id,
            replace: cx.group().instance(&r.id).is_some_and(|r| r.replaced),
        })
        .collect();
    let answers = cx.ports.aws().terminate_many(&asg, &requests).await;
    // Each answer is written with the tick: a crash before that finds the
    // intent, and the group says whether the call landed. An error ended
    // the sends; the answers before it (and of its round) are kept.
    let mut failed = None;
    for (request, answer) in requests.iter().zip(answers) {
        match answer {
            Ok(result) => cx.record(
                EventKind::Terminate,
                format!("{}: {result}", request.instance),
            ),
            Err(e) => {
                failed.get_or_insert(e);
            }
        }
    }
    if let Some(e) = failed {
        return Err(e.into());
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
            .group()
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
            cx.record(
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

/// Whether this group's drain's first wave is complete (its bake may
/// begin).
fn wave_one_complete<P: Ports>(cx: &StepContext<'_, '_, P>) -> bool {
    let first = cx.id_of(&wave_id(1));
    cx.phase_of(DRAIN).is_some_and(|p| {
        cx.roll().plan.phases[p]
            .steps
            .iter()
            .any(|s| s.id == first && s.is_complete())
    })
}
