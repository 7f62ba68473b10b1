//! Moving tasks off an agent before it goes, one round per tick, inside a
//! Mesos maintenance window so that Marathon places the replacements
//! elsewhere. Which tasks must move is `safety.rs`'s pure answer; here
//! the kills and surges are made, each recorded in the checkpoint first.

use std::collections::HashSet;
use std::time::Duration;

use super::{StepContext, Wait};
use crate::roll::decide::health;
use crate::roll::decide::safety::{self, Move, Rules};
use crate::roll::engine::tick_context::Observation;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::marathon::{App, Marathon, MarathonError};
use crate::roll::record::checkpoint::{
    CheckpointError, EventKind, RolledInstance, Surge, SurgeState,
};
use crate::roll::record::kinds::WaitKind;

/// What an abandon's undo did, and what it could not do (each with what
/// to do by hand), one line each.
#[derive(Debug, Default)]
pub(crate) struct Undone {
    pub(crate) done: Vec<String>,
    pub(crate) failed: Vec<String>,
}

impl<P: Ports> StepContext<'_, '_, P> {
    /// One round of moving tasks off `record`'s agent: `None` when nothing
    /// on it is needed any more (it may go), else what still moves. Every
    /// round is recomputed from Marathon, so re-running it is safe: a kill
    /// is resent only while its task is still listed, a surge is an
    /// absolute instance count.
    pub(crate) async fn make_safe(
        &mut self,
        record: &RolledInstance,
    ) -> Result<Option<Wait>, RollError> {
        let agent = record.agent_id.clone();
        let seen = self.tick.observation().await?;
        let apps = &seen.apps;
        // An app the operator allowed to be unhealthy has no floor left to
        // protect: waiting for it to become healthy elsewhere would wait
        // for what the operator said will not come.
        let guarded: Vec<App> = apps
            .iter()
            .filter(|a| !self.allowed_unhealthy().contains(&a.id))
            .cloned()
            .collect();
        let surging = self
            .group()
            .surges
            .iter()
            .any(|s| s.instance == record.id && s.state != SurgeState::Done);
        let rules = self.rules(&seen);
        if safety::at_risk(&guarded, &agent, &self.memory.killed, rules).is_empty() && !surging {
            return Ok(None);
        }
        self.schedule_maintenance(record).await?;
        let mut pending = self.surge_round(&record.id, &seen).await?;
        let risks = safety::at_risk(&guarded, &agent, &self.memory.killed, rules);
        for risk in &risks {
            if self.group().surges.iter().any(|s| {
                s.app == risk.app && s.instance == record.id && s.state != SurgeState::Done
            }) {
                continue;
            }
            pending.push(self.make_move(record, risk).await?);
        }
        if pending.is_empty() {
            return Ok(None);
        }
        Ok(Some(Wait {
            kind: WaitKind::TaskMoves,
            extension: Duration::ZERO,
            message: format!(
                "moving tasks off {} before termination: {}",
                record.id,
                pending.join("; ")
            ),
        }))
    }

    /// The next move of `risk` off `record`'s agent, made (its intent
    /// written first): a kill, a surge, or nothing yet; what it waits for.
    async fn make_move(
        &mut self,
        record: &RolledInstance,
        risk: &safety::AtRisk,
    ) -> Result<String, RollError> {
        Ok(match safety::next_move(risk) {
            Move::Kill { app, tasks } => {
                self.intend(format!(
                    "kill {} on {} (scale=false): {}",
                    app,
                    record.id,
                    tasks.join(", ")
                ))
                .await?;
                self.kill_to_relaunch(tasks).await?;
                format!("{app}: moving {}", risk.tasks_here.len())
            }
            Move::Surge {
                app,
                instances,
                task,
            } => {
                self.group_mut().surges.push(Surge {
                    app: app.clone(),
                    instances,
                    instance: record.id.clone(),
                    task,
                    extra_tasks: Vec::new(),
                    state: SurgeState::ScalingUp,
                    kill_sent: false,
                });
                self.intend(format!("surge {app} {instances} -> {}", instances + 1))
                    .await?;
                self.scale(&app, instances + 1).await?;
                format!("{app}: surging")
            }
            Move::Relaunch { app, tasks, why } => {
                self.intend(format!(
                    "relaunch {app} off {} ({}): kill {} (scale=false); it is down until \
                     Marathon's relaunch on another agent is up",
                    record.id,
                    why.reason(),
                    tasks.join(", ")
                ))
                .await?;
                self.kill_to_relaunch(tasks).await?;
                format!("{app}: relaunching (no second task allowed)")
            }
            Move::Wait { app, reason } => format!("{app}: {reason}"),
        })
    }

    /// Kills `tasks` with `scale=false` (Marathon relaunches them
    /// elsewhere); a deployment holding the app (409) is looked at again
    /// next round.
    async fn kill_to_relaunch(&mut self, tasks: Vec<String>) -> Result<(), RollError> {
        match self.ports.marathon().kill_tasks(&tasks, false).await {
            Ok(_) => self.memory.killed.extend(tasks),
            Err(MarathonError::Conflict { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }

    /// Scales `app` to an absolute count; a deployment already under way
    /// (409) is left to finish and looked at again next round.
    /// Marathon refusing it (4xx: a single-instance app, a validation)
    /// undoes the surges of the same owner not yet killed, then pauses the
    /// roll naming the app and Marathon's reason (`refused_surge`).
    pub(crate) async fn scale(&mut self, app: &str, instances: u32) -> Result<(), RollError> {
        let answer = self.ports.marathon().scale_app(app, instances).await;
        self.scale_answered(app, instances, answer).await
    }

    /// What Marathon's `answer` to scaling `app` to `instances` for a
    /// surge comes to (see `scale`).
    pub(crate) async fn scale_answered(
        &mut self,
        app: &str,
        instances: u32,
        answer: Result<String, MarathonError>,
    ) -> Result<(), RollError> {
        match answer {
            Ok(_) | Err(MarathonError::Conflict { .. }) => Ok(()),
            Err(refused @ MarathonError::Rejected { .. }) => {
                Err(self.refused_surge(app, instances, &refused).await?)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Marathon refused to scale `app` to `instances` for a surge: that
    /// surge is closed (nothing of it was applied), and every other open
    /// surge of the same owner (the wave, the instance, the rollback)
    /// whose old tasks were not killed yet is set back to its count, each
    /// recorded first, so that no app is left scaled up. The error to
    /// pause with names the app, Marathon's reason and the way out.
    async fn refused_surge(
        &mut self,
        app: &str,
        instances: u32,
        refused: &MarathonError,
    ) -> Result<RollError, RollError> {
        let surges = &self.group().surges;
        let refused_at = surges
            .iter()
            .rposition(|s| s.app == app && s.state != SurgeState::Done);
        let owner = refused_at.map(|n| surges[n].instance.clone());
        if let Some(n) = refused_at {
            self.close_surge(
                n,
                format!("Marathon refused to scale {app} to {instances}: {refused}"),
            );
        }
        let others: Vec<usize> = (0..self.group().surges.len())
            .filter(|&n| {
                let s = &self.group().surges[n];
                Some(&s.instance) == owner.as_ref()
                    && s.state == SurgeState::ScalingUp
                    && !s.kill_sent
            })
            .collect();
        let mut undone = Vec::new();
        for n in others {
            let surge = self.group().surges[n].clone();
            self.intend(format!(
                "surge {}: undo to {} (Marathon refused the surge of {app})",
                surge.app, surge.instances
            ))
            .await?;
            self.undo_surge(&surge.app, surge.instances, "").await?;
            self.close_surge(
                n,
                format!("{}: surge undone, back at {}", surge.app, surge.instances),
            );
            undone.push(format!("{} -> {}", surge.app, surge.instances));
        }
        self.save().await?;
        let undone = if undone.is_empty() {
            String::new()
        } else {
            format!(
                "; the other surges it started were undone ({})",
                undone.join(", ")
            )
        };
        Ok(RollError::WriteRefused(format!(
            "Marathon refused to scale {app} to {instances} for a surge ({refused}){undone}. \
             An app that must never run a second task moves by kill and relaunch when Marathon \
             says so (the label MARATHON_SINGLE_INSTANCE_APP, or upgradeStrategy \
             minimumHealthCapacity 0 and maximumOverCapacity 0); give it one, or fix what \
             Marathon names, then rerun"
        )))
    }

    /// Abandon: every surge of this group not finished is set back to
    /// the app's instance count before it (an absolute count: re-running
    /// is safe), so no app is left surged. A deployment holding the app
    /// (409: the surge's own, which never ends when its new task is never
    /// healthy) is cancelled, each cancel recorded first, which makes
    /// Marathon deploy the count before it, as the roll's own undo does
    /// (`undo_surge`). A surge that cannot be set back is said, with what
    /// to do by hand, and the others go on.
    pub(crate) async fn undo_surges(&mut self) -> Result<Undone, CheckpointError> {
        let open: Vec<usize> = (0..self.group().surges.len())
            .filter(|&n| self.group().surges[n].state != SurgeState::Done)
            .collect();
        let mut undone = Undone::default();
        let mut apps = Vec::new();
        for n in open {
            let surge = self.group().surges[n].clone();
            self.intend(format!(
                "abandon: scale {} back to {}",
                surge.app, surge.instances
            ))
            .await?;
            if let Err(err) = self
                .undo_surge(&surge.app, surge.instances, "abandon: ")
                .await
            {
                undone.failed.push(format!(
                    "{} is still surged (it had {} instance(s) before the roll's surge): {err}; \
                     set it back by hand once Marathon answers",
                    surge.app, surge.instances
                ));
                continue;
            }
            self.group_mut().surges[n].state = SurgeState::Done;
            self.save().await?;
            apps.push(format!("{} -> {}", surge.app, surge.instances));
        }
        if !apps.is_empty() {
            undone.done.push(format!(
                "scaled {} surged app(s) back: {}",
                apps.len(),
                apps.join(", ")
            ));
        }
        Ok(undone)
    }

    /// Advances the surges of `owner` (an instance being replaced, or a
    /// drain wave) by one round; returns what they still wait for. A
    /// surge is recorded before its scale-up and before its kill, so a
    /// resume finishes it: the scale-up is an absolute instance count, and
    /// the kill is only resent while the old task is still on the agent.
    pub(crate) async fn surge_round(
        &mut self,
        owner: &str,
        seen: &Observation,
    ) -> Result<Vec<String>, RollError> {
        let rules = self.rules(seen);
        let mut waiting = Vec::new();
        // Surges whose old tasks may go (with the tasks their app lists
        // now): killed together, in one call.
        let mut ready: Vec<(usize, HashSet<String>)> = Vec::new();
        for n in 0..self.group().surges.len() {
            let surge = self.group().surges[n].clone();
            if surge.instance != owner || surge.state == SurgeState::Done {
                continue;
            }
            match self.surge_turn(n, &surge, owner, &seen.apps, rules).await? {
                SurgeTurn::Over => {}
                SurgeTurn::Waits(why) => waiting.push(why),
                SurgeTurn::Kill(listed) => {
                    ready.push((n, listed));
                    waiting.push(format!("{}: old task(s) killed", surge.app));
                }
            }
        }
        self.kill_surged(&ready).await?;
        Ok(waiting)
    }

    /// One round of the open surge `surge`, the `n`th of the group's.
    async fn surge_turn(
        &mut self,
        n: usize,
        surge: &Surge,
        owner: &str,
        apps: &[App],
        rules: Rules,
    ) -> Result<SurgeTurn, RollError> {
        let Some(app) = apps.iter().find(|a| a.id == surge.app) else {
            self.close_surge(n, format!("{} is gone; surge dropped", surge.app));
            return Ok(SurgeTurn::Over);
        };
        // Only the recorded tasks: killing exactly those with
        // scale=true takes back the instances the surge added.
        if !app.tasks.iter().any(|t| surge.tasks().any(|o| *o == t.id)) {
            return self.end_surge_without_old_tasks(n, surge, app, owner).await;
        }
        // An app the operator allowed to be unhealthy has no floor to
        // keep: its old tasks go once the scale-up is applied.
        let allowed = self.allowed_unhealthy().contains(&app.id);
        if allowed
            && !surge.kill_sent
            && let Some(turn) = self.undo_allowed_surge(n, surge, app).await?
        {
            return Ok(turn);
        }
        Ok(match surge.state {
            SurgeState::ScalingUp if app.instances < surge.surged_instances() => {
                // Not applied yet (or lost): send the absolute count again.
                self.scale(&surge.app, surge.surged_instances()).await?;
                SurgeTurn::Waits(format!("{}: surge sent", surge.app))
            }
            SurgeState::ScalingUp if !allowed && !surge_settled(surge, app, rules) => {
                SurgeTurn::Waits(format!("{}: surge task not healthy yet", surge.app))
            }
            SurgeState::ScalingUp | SurgeState::Killing => {
                SurgeTurn::Kill(app.tasks.iter().map(|t| t.id.clone()).collect())
            }
            SurgeState::Done => SurgeTurn::Over,
        })
    }

    /// A surge whose old tasks Marathon no longer lists: an old task went
    /// some other way (a crash), so the extra instance is undone, for the
    /// app to end where it started, and the surge ends. A deployment
    /// holding the app (409) is waited for: the surge stays open until
    /// the undo is accepted.
    async fn end_surge_without_old_tasks(
        &mut self,
        n: usize,
        surge: &Surge,
        app: &App,
        owner: &str,
    ) -> Result<SurgeTurn, RollError> {
        if app.instances > surge.instances {
            self.intend(format!("surge {}: undo to {}", surge.app, surge.instances))
                .await?;
            match self
                .ports
                .marathon()
                .scale_app(&surge.app, surge.instances)
                .await
            {
                Ok(_) | Err(MarathonError::AppNotFound { .. }) => {}
                Err(MarathonError::Conflict { .. }) => {
                    return Ok(SurgeTurn::Waits(format!(
                        "{}: undoing its surge once its deployment ends",
                        surge.app
                    )));
                }
                Err(e) => return Err(e.into()),
            }
        }
        // Bookkeeping only: written with the tick.
        self.close_surge(
            n,
            format!("{} moved off the old agents ({owner})", surge.app),
        );
        Ok(SurgeTurn::Over)
    }

    /// The surge of an app the operator allowed to be unhealthy, its kill
    /// not sent yet. While a deployment holds the app, the surge cannot
    /// finish (its new tasks never get healthy, which is why the app was
    /// allowed) and Marathon refuses the kill: the surge is undone instead
    /// (the count set back, the deployment cancelled if it holds the app)
    /// and its tasks move as any allowed app's do; once undone (or never
    /// applied) it ends. The count is absolute and a cancel is sent only
    /// on a 409, so a rerun repeats nothing. `None` when the surge goes on
    /// as any other.
    async fn undo_allowed_surge(
        &mut self,
        n: usize,
        surge: &Surge,
        app: &App,
    ) -> Result<Option<SurgeTurn>, RollError> {
        if !app.deployments.is_empty() {
            if app.instances > surge.instances {
                self.intend(format!(
                    "surge {}: undo to {} (allowed unhealthy: its surge cannot finish; its tasks move as they are)",
                    surge.app, surge.instances
                ))
                .await?;
                self.undo_surge(&surge.app, surge.instances, "").await?;
            }
            return Ok(Some(SurgeTurn::Waits(format!(
                "{}: undoing its surge",
                surge.app
            ))));
        }
        if app.instances <= surge.instances {
            // Undone (or never applied): nothing of it is left.
            self.close_surge(
                n,
                format!(
                    "{} (allowed unhealthy): surge undone, back at {}; its tasks move as they are",
                    surge.app, surge.instances
                ),
            );
            return Ok(Some(SurgeTurn::Over));
        }
        Ok(None)
    }

    /// Marks the `n`th surge done and records why (bookkeeping only:
    /// written with the tick).
    fn close_surge(&mut self, n: usize, why: String) {
        self.group_mut().surges[n].state = SurgeState::Done;
        self.record(EventKind::Surge, why);
    }

    /// Sets `app` back to `instances` (absolute); a deployment holding
    /// it (409) is cancelled, which makes Marathon deploy the count before
    /// it, each cancel recorded first (its intent starting with `prefix`).
    /// The caller records the scale's intent.
    pub(super) async fn undo_surge(
        &mut self,
        app: &str,
        instances: u32,
        prefix: &str,
    ) -> Result<(), RollError> {
        match self.ports.marathon().scale_app(app, instances).await {
            Ok(_) | Err(MarathonError::AppNotFound { .. }) => Ok(()),
            Err(MarathonError::Conflict { deployments, .. }) => {
                for id in deployments {
                    self.intend(format!(
                        "{prefix}cancel deployment {id} of {app} (Marathon deploys the count before it)"
                    ))
                    .await?;
                    self.ports.marathon().cancel_deployment(&id).await?;
                }
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Kills the old tasks still listed of the surges in `ready` whose kill
    /// Marathon has not accepted yet, with `scale=true`, in one call
    /// (recorded first). Marathon refuses the whole call (409) when a
    /// deployment holds one of the apps: then each app's are sent alone,
    /// so one busy app does not hold back the others.
    async fn kill_surged(&mut self, ready: &[(usize, HashSet<String>)]) -> Result<(), RollError> {
        let mut by_app: Vec<(usize, Vec<String>)> = Vec::new();
        for (n, listed) in ready {
            let surge = &mut self.group_mut().surges[*n];
            surge.state = SurgeState::Killing;
            if surge.kill_sent {
                continue;
            }
            let old: Vec<String> = surge
                .tasks()
                .filter(|t| listed.contains(*t))
                .cloned()
                .collect();
            if !old.is_empty() {
                by_app.push((*n, old));
            }
        }
        if by_app.is_empty() {
            return Ok(());
        }
        let apps: Vec<String> = by_app
            .iter()
            .map(|(n, _)| self.group().surges[*n].app.clone())
            .collect();
        let tasks: Vec<String> = by_app.iter().flat_map(|(_, t)| t).cloned().collect();
        let shown = apps.len().min(5);
        let message = format!(
            "kill {} old task(s) of {} surged app(s) (scale=true): {}{}",
            tasks.len(),
            apps.len(),
            apps[..shown].join(", "),
            if apps.len() > shown { ", …" } else { "" }
        );
        self.intend(message).await?;
        match self.ports.marathon().kill_tasks(&tasks, true).await {
            Ok(_) => {
                for (n, _) in &by_app {
                    self.group_mut().surges[*n].kill_sent = true;
                }
            }
            Err(MarathonError::Conflict { .. }) => {
                for (n, old) in &by_app {
                    match self.ports.marathon().kill_tasks(old, true).await {
                        Ok(_) => self.group_mut().surges[*n].kill_sent = true,
                        Err(MarathonError::Conflict { .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            Err(e) => return Err(e.into()),
        }
        self.save().await?;
        Ok(())
    }
}

/// What one round comes to for one surge.
enum SurgeTurn {
    /// Nothing more of it this round (it ended, or was dropped).
    Over,
    /// It waits, for what the line says.
    Waits(String),
    /// Its old tasks may go now (with the tasks its app lists now).
    Kill(HashSet<String>),
}

/// Whether a surge's new tasks have settled: the app's other tasks keep
/// it at its floor (counted at the instances before the surge), and no
/// deployment holds it.
fn surge_settled(surge: &Surge, app: &App, rules: Rules) -> bool {
    let healthy_without_old = u32::try_from(
        app.tasks
            .iter()
            .filter(|t| !surge.tasks().any(|o| *o == t.id))
            .filter(|t| health::task_is_healthy(app, t, rules.settle))
            .count(),
    )
    .unwrap_or(u32::MAX);
    let floor = safety::floor(
        &App {
            instances: surge.instances,
            ..app.clone()
        },
        rules.floor,
    );
    healthy_without_old >= floor && app.deployments.is_empty()
}
