//! One wave of the drain: every old agent at once. The old agents are all
//! under one maintenance window (the scale-up's last step), so Marathon
//! relaunches every task killed there on a new agent: each task moves
//! once. Which tasks a wave kills is `drain_plan::next_wave`'s pure answer
//! from live placement: per app, as many as keep it at its floor; apps
//! that cannot spare one are surged. The first wave is only a sample of
//! that (`drain_plan::sample`: one task each of a tenth of the apps), and
//! the next waits until the sample has baked on the new agents
//! (`bake.rs`), so a bad image costs a few tasks, not a wave. The wave is recorded (its task ids
//! and apps) before any kill is sent, and ends when every app it moved is
//! back to all its instances healthy; then, if any task is left on an old
//! agent, it appends the next wave to the drain phase.

use std::collections::{BTreeSet, HashSet};

use futures_util::future::join_all;

use super::{StepAction, StepContext, Tick, excused_note};
use crate::roll::decide::drain_plan::{Partial, Wave, next_wave, sample};
use crate::roll::decide::health::{Settle, task_is_healthy};
use crate::roll::decide::placement;
use crate::roll::decide::roll_plan::{DRAIN, wave_id, wave_step};
use crate::roll::engine::tick_context::Observation;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::marathon::{App, Marathon, MarathonError};
use crate::roll::record::checkpoint::{EventKind, Surge, SurgeState, WaveRecord};
use crate::roll::record::kinds::WaitKind;

/// One wave of the drain.
///
/// Safe to re-run after a crash at any point: a wave not yet recorded is
/// planned afresh from what Marathon lists now; a recorded one resends its
/// kills only for tasks still listed and only if Marathon never accepted
/// them, and its surges are absolute instance counts (`task_moves.rs`).
pub(crate) struct DrainWave {
    pub(crate) wave: u32,
}

impl StepAction for DrainWave {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let wave = self.wave;
        let id = cx.id_of(&wave_id(wave));
        // The first wave's moves bake on the new agents before the next.
        if wave > 1
            && let Some(baking) = cx.bake_gate(true).await?
        {
            return Ok(Tick::Waiting(baking));
        }
        let seen = cx.tick.observation().await?;
        let Some(n) = cx.group().waves.iter().position(|w| w.step == id) else {
            return plan_wave(cx, wave, &seen).await;
        };
        follow_wave(cx, wave, n, &seen).await
    }
}

/// A wave already recorded (the `n`th of the group's): its kills sent if
/// Marathon never accepted them, its surges one round on, and what it
/// still waits for; once nothing, its end.
async fn follow_wave<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    wave: u32,
    n: usize,
    seen: &Observation,
) -> Result<Tick, RollError> {
    let id = cx.id_of(&wave_id(wave));
    let record = cx.group().waves[n].clone();
    let listed = seen.task_ids();
    let still: Vec<String> = record
        .kills
        .iter()
        .filter(|t| listed.contains(t.as_str()))
        .cloned()
        .collect();
    let mut waiting = Vec::new();
    if !record.sent && !send_recorded_kills(cx, n, &still).await? {
        waiting.push("Marathon refused the kills for now (a deployment holds an app)".to_string());
    }
    waiting.extend(cx.surge_round(&id, seen).await?);
    let rules = cx.rules(seen);
    if !still.is_empty() {
        waiting.push(format!("{} killed task(s) still listed", still.len()));
    }
    waiting.extend(moved_apps_not_healthy(cx, &record, seen, rules.settle));
    if !waiting.is_empty() {
        let more = waiting.len().saturating_sub(3);
        let mut text = waiting[..waiting.len().min(3)].join("; ");
        if more > 0 {
            text.push_str(&format!("; and {more} more"));
        }
        return Ok(Tick::waiting(
            WaitKind::TaskMoves,
            format!("{id}: waiting for the moved tasks to be healthy on new agents: {text}"),
        ));
    }
    Ok(end_wave(cx, wave, &record, seen))
}

/// Sends the kills of the recorded wave `n` still listed, and marks the
/// wave sent (saved) once Marathon accepts them; `false` when it refused
/// them for now.
async fn send_recorded_kills<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    n: usize,
    still: &[String],
) -> Result<bool, RollError> {
    if !send_kills(cx, still).await? {
        return Ok(false);
    }
    cx.group_mut().waves[n].sent = true;
    cx.save().await?;
    Ok(true)
}

/// `app: h of n healthy` for each app the wave moved that is not back to
/// all its instances healthy (those the operator allowed left out).
fn moved_apps_not_healthy<P: Ports>(
    cx: &StepContext<'_, '_, P>,
    record: &WaveRecord,
    seen: &Observation,
    settle: Settle,
) -> Vec<String> {
    let allowed = cx.allowed_unhealthy();
    let mut waiting = Vec::new();
    // A set: a wave of 2,000 agents moves thousands of apps, and each of
    // Marathon's apps is looked up in it every tick the wave waits.
    let moved: HashSet<&str> = record.apps.iter().map(String::as_str).collect();
    for app in seen.apps.iter().filter(|a| moved.contains(a.id.as_str())) {
        if allowed.contains(&app.id) {
            continue;
        }
        let healthy = app
            .tasks
            .iter()
            .filter(|t| task_is_healthy(app, t, settle))
            .count();
        if healthy < app.instances as usize {
            waiting.push(format!(
                "{}: {healthy} of {} healthy",
                app.id, app.instances
            ));
        }
    }
    waiting
}

/// The wave is over: what it moved, and the next wave appended when
/// tasks are left on old agents.
fn end_wave<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    wave: u32,
    record: &WaveRecord,
    seen: &Observation,
) -> Tick {
    let left = tasks_on_old_agents(cx, seen);
    let allowed = cx.allowed_unhealthy();
    let excused = excused_note(
        record
            .apps
            .iter()
            .filter(|a| allowed.contains(a))
            .map(String::as_str),
        ", not waited for",
    );
    let moved = format!(
        "{} task(s) moved and {} app(s) moved in all{excused}",
        record.kills.len(),
        record.apps.len()
    );
    if left == 0 {
        return Tick::Done(format!("{moved}; the old agents are empty"));
    }
    append_wave(cx, wave + 1);
    Tick::Done(format!(
        "{moved}; {left} task(s) left on old agents for wave-{}",
        wave + 1
    ))
}

/// Plans wave `wave` from live placement, records it, then sends its
/// kills (one call, `scale=false`) and its surges.
async fn plan_wave<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    wave: u32,
    seen: &Observation,
) -> Result<Tick, RollError> {
    // Before the first move: every app on the old agents must have an
    // agent to go to (its roles), or it would be lost with them.
    if wave == 1
        && let Some(sentence) = stranded_pause(cx, seen)
    {
        return Ok(Tick::Pause(sentence));
    }
    let chosen = choose_moves(cx, wave, seen);
    if chosen.kills.is_empty() && chosen.planned.surges.is_empty() {
        return Ok(nothing_to_move(cx, wave, &chosen, seen));
    }
    let title = record_wave(cx, wave, &chosen).await?;
    send_wave(cx, &chosen).await?;
    Ok(Tick::waiting(
        WaitKind::TaskMoves,
        format!("{title}: sent; waiting for the replacements to be healthy on new agents"),
    ))
}

/// What a wave not recorded yet moves, chosen from live placement.
struct ChosenMoves {
    /// `drain_plan`'s answer for the apps with a floor to keep (the
    /// sample's, for the first wave): its surges, and the apps that wait.
    planned: Wave,
    /// Every task the wave kills (`scale=false`): the planned ones, and
    /// those of the apps the operator allowed to be unhealthy.
    kills: Vec<String>,
    /// Every app the wave moves, surged ones included.
    apps: BTreeSet<String>,
    /// Apps with a surge of the roll under way.
    surging: HashSet<String>,
}

/// The sentence a pause says when an app on the old agents has no agent
/// to go to (its roles); `None` when every app has one.
fn stranded_pause<P: Ports>(cx: &StepContext<'_, '_, P>, seen: &Observation) -> Option<String> {
    let old = cx.old_agents();
    let stranded = placement::stranded(&seen.apps, &old, &seen.agents, cx.allowed_unhealthy());
    (!stranded.is_empty()).then(|| placement::stranded_sentence(&stranded, &old, &seen.agents))
}

/// Chooses wave `wave`'s moves: `drain_plan::next_wave` for the apps
/// with a floor to keep (a sample of it for the first wave), and every
/// task on old agents of the apps the operator allowed to be unhealthy.
fn choose_moves<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    wave: u32,
    seen: &Observation,
) -> ChosenMoves {
    // With a capped surge, only the open batches' old agents are emptied
    // (every old agent is under maintenance all the same).
    let old = cx.open_old_agents();
    let allowed = cx.allowed_unhealthy().to_vec();
    let (guarded, free): (Vec<App>, Vec<App>) = seen
        .apps
        .iter()
        .cloned()
        .partition(|a| !allowed.contains(&a.id));
    let in_flight: HashSet<String> = cx
        .group()
        .waves
        .iter()
        .flat_map(|w| w.kills.iter().cloned())
        .chain(cx.memory.killed.iter().cloned())
        .collect();
    let surging: HashSet<String> = cx.group().open_surges().map(|s| s.app.clone()).collect();
    let rules = cx.rules(seen);
    // The first wave is a sample: the new image's first moves, which bake
    // on the new agents before anything else moves. It kills what an app
    // can spare (the cheapest probe); later waves surge an app whose old
    // tasks it cannot all spare now, rather than leave them for another
    // wave.
    let first = wave == 1;
    let partial = if first {
        Partial::KillSpare
    } else {
        Partial::SurgeAll
    };
    let mut planned = next_wave(&guarded, &old, &in_flight, &surging, rules, partial);
    if first {
        planned = sample(planned, &guarded);
    }
    let mut kills: Vec<String> = planned.kills.values().flatten().cloned().collect();
    let mut apps: BTreeSet<String> = planned.kills.keys().cloned().collect();
    // An app the operator allowed to be unhealthy has no floor to keep:
    // all its tasks on old agents go in this wave, but not in a sample
    // (when there is one: with no guarded app to sample they go at once).
    let hold_free = first && (!planned.kills.is_empty() || !planned.surges.is_empty());
    for app in free.iter().filter(|_| !hold_free) {
        let here = tasks_to_move(app, &old, &in_flight);
        if !here.is_empty() {
            apps.insert(app.id.clone());
            kills.extend(here);
        }
    }
    apps.extend(planned.surges.iter().map(|s| s.app.clone()));
    ChosenMoves {
        planned,
        kills,
        apps,
        surging,
    }
}

/// `app`'s tasks on the `old` agents not already asked to die.
fn tasks_to_move(app: &App, old: &HashSet<String>, in_flight: &HashSet<String>) -> Vec<String> {
    app.tasks
        .iter()
        .filter(|t| !in_flight.contains(&t.id))
        .filter(|t| t.agent_id.as_ref().is_some_and(|a| old.contains(a)))
        .map(|t| t.id.clone())
        .collect()
}

/// What a wave that may move nothing comes to: the drain is done when
/// nothing is left on the old agents, nothing waits and no surge is under
/// way; else it waits, saying for which apps.
fn nothing_to_move<P: Ports>(
    cx: &StepContext<'_, '_, P>,
    wave: u32,
    chosen: &ChosenMoves,
    seen: &Observation,
) -> Tick {
    let planned = &chosen.planned;
    let idle = planned.waiting.is_empty() && chosen.surging.is_empty();
    if idle && tasks_on_old_agents(cx, seen) == 0 {
        return Tick::Done("nothing left on the old agents".to_string());
    }
    let open = cx.open_old_agents();
    if idle && open.iter().map(|a| seen.tasks_on(a)).sum::<usize>() == 0 {
        // Not begun: a batch still to open holds what is left, which may
        // take a batch's terminations and launches (no deadline of its own).
        let group = cx.group();
        return Tick::NotYet(format!(
            "{}: the open batches' old agents are empty; the rest wait for batch {} of {}",
            cx.id_of(&wave_id(wave)),
            group.opened_batches + 1,
            group.surge.as_ref().map_or(0, |s| s.batches)
        ));
    }
    let why: Vec<String> = planned
        .waiting
        .iter()
        .take(3)
        .map(|(app, why)| format!("{app}: {why}"))
        .collect();
    Tick::waiting(
        WaitKind::TaskMoves,
        format!(
            "{}: no task can move yet ({} app(s) waiting: {})",
            cx.id_of(&wave_id(wave)),
            planned.waiting.len(),
            why.join("; ")
        ),
    )
}

/// Records the wave (its kills, its apps, its surges), names its step
/// after what it moves, and writes the intent, before anything is sent.
/// The step's new name.
async fn record_wave<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    wave: u32,
    chosen: &ChosenMoves,
) -> Result<String, RollError> {
    let id = cx.id_of(&wave_id(wave));
    let (planned, kills, apps) = (&chosen.planned, &chosen.kills, &chosen.apps);
    let surges = planned.surges.len();
    let group = cx.group_mut();
    group.waves.push(WaveRecord {
        step: id.clone(),
        kills: kills.clone(),
        apps: apps.iter().cloned().collect(),
        sent: false,
    });
    for s in &planned.surges {
        let (first, rest) = s.tasks.split_first().expect("a planned surge has a task");
        group.surges.push(Surge {
            app: s.app.clone(),
            instances: s.instances,
            instance: id.clone(),
            task: first.clone(),
            extra_tasks: rest.to_vec(),
            state: SurgeState::ScalingUp,
            kill_sent: false,
        });
    }
    let title = format!("{id}: {} tasks, {surges} surges", kills.len());
    cx.name_step(title.clone());
    let relaunches = if planned.relaunches.is_empty() {
        String::new()
    } else {
        let named: Vec<String> = planned
            .relaunches
            .iter()
            .map(|(app, why)| format!("{app} ({})", why.reason()))
            .collect();
        format!(
            "; {} of them relaunched with no second task, each down until its relaunch is up: {}",
            named.len(),
            named.join(", ")
        )
    };
    cx.intend(format!(
        "{id}: kill {} task(s) of {} app(s) on old agents (scale=false){relaunches}, surge {surges} app(s){}",
        kills.len(),
        apps.len().saturating_sub(surges),
        if planned.waiting.is_empty() {
            String::new()
        } else {
            format!("; {} app(s) wait for the next wave", planned.waiting.len())
        }
    ))
    .await?;
    Ok(title)
}

/// How many of a wave's surges are scaled up at once: a wave of a large
/// cluster surges hundreds of apps, one call each, and one after the other
/// they cost a tick of their own; Marathon takes a few at a time in its
/// stride (each starts a deployment of one app).
const SURGES_AT_ONCE: usize = 8;

/// Sends the recorded wave: its kills in one call (the wave marked sent
/// once Marathon accepts them), then each surge's scale-up (an absolute
/// count, noted under the wave's intent; `SURGES_AT_ONCE` at a time, what
/// Marathon answered read in the wave's order), and saves. Whatever
/// of it landed before a crash or an error, the wave's record has every
/// surge: each is looked at again next tick and scaled up if it is not.
async fn send_wave<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    chosen: &ChosenMoves,
) -> Result<(), RollError> {
    if send_kills(cx, &chosen.kills).await?
        && let Some(record) = cx.group_mut().waves.last_mut()
    {
        record.sent = true;
    }
    let surges: Vec<(&str, u32)> = chosen
        .planned
        .surges
        .iter()
        .map(|s| {
            let to = s.instances + u32::try_from(s.tasks.len()).unwrap_or(u32::MAX);
            cx.note_intent(format!("surge {} {} -> {to}", s.app, s.instances));
            (s.app.as_str(), to)
        })
        .collect();
    let ports = cx.ports;
    for some in surges.chunks(SURGES_AT_ONCE) {
        let mut calls = Vec::with_capacity(some.len());
        for &(app, to) in some {
            calls.push(ports.marathon().scale_app(app, to));
        }
        let answers = join_all(calls).await;
        for (&(app, to), answer) in some.iter().zip(answers) {
            cx.scale_answered(app, to, answer).await?;
        }
    }
    cx.save().await?;
    Ok(())
}

/// Kills `tasks` with `scale=false` in one call; `false` when Marathon
/// refused it for now (409: a deployment holds an app).
async fn send_kills<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    tasks: &[String],
) -> Result<bool, RollError> {
    if tasks.is_empty() {
        return Ok(true);
    }
    match cx.ports.marathon().kill_tasks(tasks, false).await {
        Ok(_) => {
            cx.memory.killed.extend(tasks.iter().cloned());
            Ok(true)
        }
        Err(MarathonError::Conflict { .. }) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Appends wave `wave` to this group's drain phase.
fn append_wave<P: Ports>(cx: &mut StepContext<'_, '_, P>, wave: u32) {
    if let Some(phase) = cx.phase_of(DRAIN) {
        let step = wave_step(cx.group_index(), wave, |bare| cx.id_of(bare));
        cx.append_step(phase, step);
    }
}

/// Reopens a drain that ended with tasks left on old agents (an
/// operator force-completed a wave, or the phase): appends the next
/// wave, once. Returns its id.
pub(super) fn extend_drain<P: Ports>(cx: &mut StepContext<'_, '_, P>) -> Option<String> {
    let phase = &cx.roll().plan.phases[cx.phase_of(DRAIN)?];
    if !phase.steps.iter().all(|s| s.is_complete()) {
        return None;
    }
    let next = u32::try_from(phase.steps.len()).ok()?.checked_add(1)?;
    append_wave(cx, next);
    let id = cx.id_of(&wave_id(next));
    cx.record(
        EventKind::Step,
        format!("drain: tasks are left on old agents; {id} appended"),
    );
    Some(id)
}

/// Tasks Marathon lists on old agents (being killed included).
fn tasks_on_old_agents<P: Ports>(cx: &StepContext<'_, '_, P>, seen: &Observation) -> usize {
    cx.old_agents().iter().map(|a| seen.tasks_on(a)).sum()
}
