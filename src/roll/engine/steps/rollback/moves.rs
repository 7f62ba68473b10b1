//! `RollbackMoves`: the rollback's task moves, back from the new agents
//! that go to the old agents (`rollback.rs` says what the phase does
//! around them).

use std::collections::HashSet;
use std::time::Duration;

use super::{ROLLBACK_OWNER, kept_and_going, late_windows};
use crate::roll::decide::health::{self, Settle};
use crate::roll::decide::safety::{self, Rules};
use crate::roll::engine::steps::{StepAction, StepContext, Tick};
use crate::roll::engine::tick_context::Observation;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::marathon::{App, Marathon, MarathonError, Task};
use crate::roll::record::checkpoint::{EventKind, Surge, SurgeState};
use crate::roll::record::kinds::WaitKind;

/// Sets surges back and moves every task off the new agents that go,
/// back to the old agents, within each app's floor; done when none is
/// left there and every app is healthy.
///
/// Safe to re-run: counts are absolute, a kill is resent only while its
/// task is listed (and not by the process that sent it), a cancel of a
/// deployment already gone is a no-op, and every round is recomputed from
/// what Marathon reports.
pub(crate) struct RollbackMoves;

impl StepAction for RollbackMoves {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        late_windows(cx).await?;
        let mut pending = undo_surges(cx).await?;
        let seen = cx.tick.observation().await?;
        let rules = cx.rules(&seen);
        let moves = moves_back(cx, &seen, rules);
        pending.extend(moves.pending);
        drop_launch_delays(cx, &moves.moving).await?;
        start_surges_back(cx, moves.surges).await?;
        pending.extend(cx.surge_round(ROLLBACK_OWNER, &seen).await?);
        kill_on_new_agents(cx, moves.kills).await?;
        if !pending.is_empty() {
            return Ok(Tick::waiting(
                WaitKind::TaskMoves,
                format!(
                    "moving tasks back to the old agents: {}",
                    pending.join("; ")
                ),
            ));
        }
        healthy_on_old_agents(cx, &seen, rules.settle).await
    }
}

/// What one round of `RollbackMoves` sends off the new agents that go,
/// chosen from what Marathon lists now.
#[derive(Default)]
struct MovesBack {
    /// Tasks killed at once (`scale=false`).
    kills: Vec<String>,
    /// Apps with tasks there (their launch delays are dropped).
    moving: Vec<String>,
    /// Surges for the healthy tasks the floor keeps: their replacements
    /// start on the old agents first.
    surges: Vec<Surge>,
    /// What each of those apps waits for, one line each.
    pending: Vec<String>,
}

/// Chooses this round's moves off the new agents that go. An app a surge
/// of the roll still holds moves nothing yet: that surge is set back
/// first.
fn moves_back<P: Ports>(
    cx: &StepContext<'_, '_, P>,
    seen: &Observation,
    rules: Rules,
) -> MovesBack {
    let (_, going) = kept_and_going(cx.group());
    let going: HashSet<String> = going.iter().map(|a| a.agent_id.clone()).collect();
    let allowed = cx.allowed_unhealthy();
    let surged: HashSet<String> = cx.group().open_surges().map(|s| s.app.clone()).collect();
    let mut moves = MovesBack::default();
    for app in seen.apps.iter() {
        let there: Vec<&Task> = app
            .tasks
            .iter()
            .filter(|t| t.agent_id.as_deref().is_some_and(|a| going.contains(a)))
            .collect();
        if there.is_empty() {
            continue;
        }
        moves.moving.push(app.id.clone());
        if surged.contains(&app.id) {
            continue;
        }
        let excused = allowed.contains(&app.id);
        let (kills, kept) = kills_within_floor(app, &there, &cx.memory.killed, excused, rules);
        moves.pending.push(format!(
            "{}: {} task(s) on new agents ({} moving now)",
            app.id,
            there.len(),
            kills.len()
        ));
        moves.kills.extend(kills);
        if let Some((task, extra)) = kept.split_first() {
            moves.surges.push(Surge {
                app: app.id.clone(),
                instances: app.instances,
                instance: ROLLBACK_OWNER.to_string(),
                task: task.clone(),
                extra_tasks: extra.to_vec(),
                state: SurgeState::ScalingUp,
                kill_sent: false,
            });
        }
    }
    moves
}

/// Which of `app`'s tasks `there` (those not killed yet) go now and
/// which the floor keeps: unhealthy ones go, healthy ones while the
/// others keep the app at its floor (all of them when the operator
/// allowed the app to be unhealthy).
fn kills_within_floor(
    app: &App,
    there: &[&Task],
    killed: &HashSet<String>,
    excused: bool,
    rules: Rules,
) -> (Vec<String>, Vec<String>) {
    let floor = safety::floor(app, rules.floor);
    let mut healthy = app
        .tasks
        .iter()
        .filter(|t| !killed.contains(&t.id))
        .filter(|t| health::task_is_healthy(app, t, rules.settle))
        .count();
    let (mut kills, mut kept) = (Vec::new(), Vec::new());
    for task in there.iter().filter(|t| !killed.contains(&t.id)) {
        if !health::task_is_healthy(app, task, rules.settle) {
            kills.push(task.id.clone());
        } else if excused || healthy > floor as usize || app.no_surge.is_some() {
            // An app that may not be surged moves by kill and relaunch.
            kills.push(task.id.clone());
            healthy -= 1;
        } else {
            kept.push(task.id.clone());
        }
    }
    (kills, kept)
}

/// Drops the launch delays of the apps `moving`: a delay earned on the
/// bad agents would hold the moves back on the good ones. Each reset is
/// recorded first.
async fn drop_launch_delays<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    moving: &[String],
) -> Result<(), RollError> {
    let queue = cx.tick.queue().await?;
    let delayed: Vec<String> = queue
        .iter()
        .filter(|q| q.delay_left > Duration::ZERO && moving.contains(&q.app))
        .map(|q| q.app.clone())
        .collect();
    for app in &delayed {
        cx.intend(format!("rollback: drop the launch delay of {app}"))
            .await?;
        cx.ports.marathon().reset_delay(app).await?;
    }
    Ok(())
}

/// Starts the rollback's own surges, each recorded before its scale-up
/// (an absolute count).
async fn start_surges_back<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    surges: Vec<Surge>,
) -> Result<(), RollError> {
    for surge in surges {
        let (app, from, to) = (surge.app.clone(), surge.instances, surge.surged_instances());
        cx.group_mut().surges.push(surge);
        cx.intend(format!("rollback: surge {app} {from} -> {to}"))
            .await?;
        cx.scale(&app, to).await?;
    }
    Ok(())
}

/// Kills `kills` (`scale=false`) in one call, recorded first; Marathon
/// refusing it for now (409) is looked at again next round.
async fn kill_on_new_agents<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    kills: Vec<String>,
) -> Result<(), RollError> {
    if kills.is_empty() {
        return Ok(());
    }
    cx.intend(format!(
        "rollback: kill {} task(s) on the new agents (scale=false): {}",
        kills.len(),
        kills.join(", ")
    ))
    .await?;
    match cx.ports.marathon().kill_tasks(&kills, false).await {
        Ok(_) => cx.memory.killed.extend(kills),
        Err(MarathonError::Conflict { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// Once nothing is left to move: done when every app is healthy (those
/// the operator allowed left out), else what it waits for.
async fn healthy_on_old_agents<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    seen: &Observation,
    settle: Settle,
) -> Result<Tick, RollError> {
    let deployments = cx.ports.marathon().deployments().await?;
    let verdict = health::judge(&seen.apps, &deployments, settle);
    let allowed = cx.allowed_unhealthy();
    let unhealthy: Vec<String> = verdict
        .unhealthy()
        .filter(|a| !allowed.contains(&a.id))
        .map(|a| format!("{} ({})", a.id, a.reason().unwrap_or_default()))
        .collect();
    if !unhealthy.is_empty() {
        return Ok(Tick::waiting(
            WaitKind::Healthy,
            format!(
                "waiting for every app to be healthy on the old agents: {}",
                unhealthy.join(", ")
            ),
        ));
    }
    Ok(Tick::Done(
        "every task is back on the old agents; Marathon healthy".to_string(),
    ))
}

/// Sets every open surge back to its app's count before it. A deployment
/// still holding the app (the surge's own, whose new task never became
/// healthy) is cancelled: Marathon then deploys the count before it.
/// Returns what the surges still wait for.
async fn undo_surges<P: Ports>(cx: &mut StepContext<'_, '_, P>) -> Result<Vec<String>, RollError> {
    let mut pending = Vec::new();
    for n in 0..cx.group().surges.len() {
        let surge = cx.group().surges[n].clone();
        if surge.state == SurgeState::Done || surge.instance == ROLLBACK_OWNER {
            continue;
        }
        let app = match cx.ports.marathon().app(&surge.app).await {
            Ok(app) => app,
            Err(MarathonError::AppNotFound { .. }) => {
                cx.group_mut().surges[n].state = SurgeState::Done;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if app.instances == surge.instances && app.deployments.is_empty() {
            cx.group_mut().surges[n].state = SurgeState::Done;
            cx.record(
                EventKind::Surge,
                format!("rollback: {} back at {}", surge.app, surge.instances),
            );
            continue;
        }
        pending.push(format!("{}: surge being set back", surge.app));
        if app.instances == surge.instances {
            continue;
        }
        cx.intend(format!(
            "rollback: scale {} back to {}",
            surge.app, surge.instances
        ))
        .await?;
        cx.undo_surge(&surge.app, surge.instances, "rollback: ")
            .await?;
    }
    Ok(pending)
}
