//! `RollbackMoves`: the rollback's task moves, back from the new agents
//! that go to the old agents (`rollback.rs` says what the phase does
//! around them).

use std::collections::HashSet;
use std::time::Duration;

use super::{ROLLBACK_OWNER, kept_and_going};
use crate::roll::decide::{health, safety};
use crate::roll::engine::steps::{StepAction, StepContext, Tick};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::marathon::{Marathon, MarathonError};
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
        let mut pending = undo_surges(cx).await?;
        let seen = cx.tick.observation().await?;
        let rules = cx.rules(&seen);
        let (_, going) = kept_and_going(cx.group());
        let going: HashSet<String> = going.iter().map(|a| a.agent_id.clone()).collect();
        let allowed = cx.allowed_unhealthy().to_vec();
        // Apps a surge of the roll still holds: set back first.
        let surged: HashSet<String> = cx
            .group()
            .surges
            .iter()
            .filter(|s| s.state != SurgeState::Done)
            .map(|s| s.app.clone())
            .collect();
        let mut surges: Vec<Surge> = Vec::new();
        let on_going = |t: &crate::roll::ports::marathon::Task| {
            t.agent_id.as_deref().is_some_and(|a| going.contains(a))
        };
        let mut kills: Vec<String> = Vec::new();
        let mut moving: Vec<String> = Vec::new();
        for app in &seen.apps {
            let there: Vec<_> = app.tasks.iter().filter(|t| on_going(t)).collect();
            if there.is_empty() {
                continue;
            }
            moving.push(app.id.clone());
            if surged.contains(&app.id) {
                continue;
            }
            let floor = safety::floor(app, rules.floor);
            let killed = &cx.memory.killed;
            let mut healthy = app
                .tasks
                .iter()
                .filter(|t| !killed.contains(&t.id))
                .filter(|t| health::task_is_healthy(app, t, rules.settle))
                .count();
            let mut sent = 0;
            // Healthy tasks the floor keeps: a surge starts their
            // replacements (on the old agents) first.
            let mut kept = Vec::new();
            for task in there.iter().filter(|t| !killed.contains(&t.id)) {
                if !health::task_is_healthy(app, task, rules.settle) {
                    kills.push(task.id.clone());
                    sent += 1;
                } else if allowed.contains(&app.id) || healthy > floor as usize {
                    kills.push(task.id.clone());
                    healthy -= 1;
                    sent += 1;
                } else {
                    kept.push(task.id.clone());
                }
            }
            if let Some((task, extra)) = kept.split_first() {
                surges.push(Surge {
                    app: app.id.clone(),
                    instances: app.instances,
                    instance: ROLLBACK_OWNER.to_string(),
                    task: task.clone(),
                    extra_tasks: extra.to_vec(),
                    state: SurgeState::ScalingUp,
                    kill_sent: false,
                });
            }
            pending.push(format!(
                "{}: {} task(s) on new agents ({sent} moving now)",
                app.id,
                there.len()
            ));
        }
        // A launch delay earned on the bad agents would hold the moves
        // back on the good ones.
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
        for surge in surges {
            let (app, from, to) = (surge.app.clone(), surge.instances, surge.surged_instances());
            cx.group_mut().surges.push(surge);
            cx.intend(format!("rollback: surge {app} {from} -> {to}"))
                .await?;
            cx.scale(&app, to).await?;
        }
        pending.extend(cx.surge_round(ROLLBACK_OWNER, &seen).await?);
        if !kills.is_empty() {
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
        }
        if !pending.is_empty() {
            return Ok(Tick::waiting(
                WaitKind::TaskMoves,
                format!(
                    "moving tasks back to the old agents: {}",
                    pending.join("; ")
                ),
            ));
        }
        let deployments = cx.ports.marathon().deployments().await?;
        let verdict = health::judge(&seen.apps, &deployments, rules.settle);
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
