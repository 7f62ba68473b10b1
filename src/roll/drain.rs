//! Moving tasks off an agent before it goes, one round per tick, inside a
//! Mesos maintenance window so that Marathon places the replacements
//! elsewhere. Which tasks must move is `safety.rs`'s pure answer; here
//! the kills and surges are made, each recorded in the checkpoint first.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use super::checkpoint::{EventKind, MaintenanceRecord, RolledInstance, Surge, SurgeState};
use super::cluster::{apps_as_mesos_sees_them, count};
use super::error::RollError;
use super::health;
use super::ports::auto_scaling::AutoScaling;
use super::ports::marathon::{App, Marathon, MarathonError};
use super::ports::mesos::{MesosMaster, Unavailability};
use super::ports::pager::Pager;
use super::runner::Runner;
use super::safety::{self, Move};
use super::steps::{Tick, Wait, WaitKind};

/// How long a maintenance window lasts (cluster time).
const WINDOW: Duration = Duration::from_secs(4 * 3600);

impl<A, M, K, P> Runner<'_, A, M, K, P>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
{
    pub(super) fn floor(&self) -> safety::Floor {
        if self.checkpoint.honor_min_health {
            safety::Floor::MinHealth
        } else {
            safety::Floor::One
        }
    }

    /// One round of moving tasks off `record`'s agent: `None` when nothing
    /// on it is needed any more (it may go), else what still moves. Every
    /// round is recomputed from Marathon, so re-running it is safe: a kill
    /// is resent only while its task is still listed, a surge is an
    /// absolute instance count.
    pub(super) async fn make_safe(
        &mut self,
        record: &RolledInstance,
    ) -> Result<Option<Wait>, RollError> {
        let agent = record.agent_id.clone();
        let (apps, _) = apps_as_mesos_sees_them(self.ports.mesos, self.ports.marathon).await?;
        // An app the operator allowed to be unhealthy has no floor left to
        // protect: waiting for it to become healthy elsewhere would wait
        // for what the operator said will not come.
        let guarded: Vec<App> = apps
            .iter()
            .filter(|a| !self.checkpoint.allow_unhealthy.contains(&a.id))
            .cloned()
            .collect();
        let surging = self
            .checkpoint
            .surges
            .iter()
            .any(|s| s.instance == record.id && s.state != SurgeState::Done);
        if safety::at_risk(&guarded, &agent, &self.killed, self.floor()).is_empty() && !surging {
            return Ok(None);
        }
        self.schedule_maintenance(record).await?;
        let mut pending = self.surge_round(&record.id, &apps).await?;
        let risks = safety::at_risk(&guarded, &agent, &self.killed, self.floor());
        for risk in &risks {
            if self.checkpoint.surges.iter().any(|s| {
                s.app == risk.app && s.instance == record.id && s.state != SurgeState::Done
            }) {
                continue;
            }
            match safety::next_move(risk) {
                Move::Kill { app, tasks } => {
                    self.checkpoint.intend(format!(
                        "kill {} on {} (scale=false): {}",
                        app,
                        record.id,
                        tasks.join(", ")
                    ));
                    self.save().await?;
                    match self.ports.marathon.kill_tasks(&tasks, false).await {
                        Ok(_) => self.killed.extend(tasks),
                        Err(MarathonError::Conflict { .. }) => {}
                        Err(e) => return Err(e.into()),
                    }
                    pending.push(format!("{app}: moving {}", risk.tasks_here.len()));
                }
                Move::Surge {
                    app,
                    instances,
                    task,
                } => {
                    self.checkpoint.surges.push(Surge {
                        app: app.clone(),
                        instances,
                        instance: record.id.clone(),
                        task,
                        extra_tasks: Vec::new(),
                        state: SurgeState::ScalingUp,
                        kill_sent: false,
                    });
                    self.checkpoint
                        .intend(format!("surge {app} {instances} -> {}", instances + 1));
                    self.save().await?;
                    self.scale(&app, instances + 1).await?;
                    pending.push(format!("{app}: surging"));
                }
                Move::Wait { app, reason } => pending.push(format!("{app}: {reason}")),
            }
        }
        if pending.is_empty() {
            return Ok(None);
        }
        Ok(Some(Wait {
            kind: WaitKind::TaskMoves,
            message: format!(
                "moving tasks off {} before termination: {}",
                record.id,
                pending.join("; ")
            ),
        }))
    }

    /// Scales `app` to an absolute count; a deployment already under way
    /// (409) is left to finish and looked at again next round.
    pub(super) async fn scale(&self, app: &str, instances: u32) -> Result<(), RollError> {
        match self.ports.marathon.scale_app(app, instances).await {
            Ok(_) | Err(MarathonError::Conflict { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Abandon: every surge not finished is set back to the app's instance
    /// count before it (an absolute count: re-running is safe), so no app
    /// is left surged. A surge's scale-up still deploying (409) is waited
    /// for, never forced. `None` when there was none.
    pub(super) async fn undo_surges(&mut self) -> Result<Option<String>, RollError> {
        let open: Vec<usize> = (0..self.checkpoint.surges.len())
            .filter(|&n| self.checkpoint.surges[n].state != SurgeState::Done)
            .collect();
        if open.is_empty() {
            return Ok(None);
        }
        let mut apps = Vec::new();
        for n in open {
            let surge = self.checkpoint.surges[n].clone();
            self.checkpoint.intend(format!(
                "abandon: scale {} back to {}",
                surge.app, surge.instances
            ));
            self.save().await?;
            // The surge's own scale-up may still be deploying (409): wait
            // for it (never forced), for up to the healthy timeout. The tag
            // stays until this succeeds, so abandon can be run again.
            let since = self.clock.now_unix_ms();
            loop {
                match self
                    .ports
                    .marathon
                    .scale_app(&surge.app, surge.instances)
                    .await
                {
                    Ok(_) | Err(MarathonError::AppNotFound { .. }) => break,
                    Err(MarathonError::Conflict { .. })
                        if self.clock.since(since) < self.env.timeouts.healthy
                            && !self.stopped() =>
                    {
                        self.sleep_poll().await;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            self.checkpoint.surges[n].state = SurgeState::Done;
            self.save().await?;
            apps.push(format!("{} -> {}", surge.app, surge.instances));
        }
        Ok(Some(format!(
            "scaled {} surged app(s) back: {}",
            apps.len(),
            apps.join(", ")
        )))
    }

    /// Advances the surges of `owner` (an instance being replaced, or a
    /// drain wave) by one round; returns what they still wait for. A surge is recorded before its scale-up and before
    /// its kill, so a resume finishes it: the scale-up is an absolute
    /// instance count, and the kill is only resent while the old task is
    /// still on the agent.
    pub(super) async fn surge_round(
        &mut self,
        owner: &str,
        apps: &[App],
    ) -> Result<Vec<String>, RollError> {
        let mut waiting = Vec::new();
        // Surges whose old tasks may go (with the tasks their app lists
        // now): killed together, in one call.
        let mut ready: Vec<(usize, HashSet<String>)> = Vec::new();
        for n in 0..self.checkpoint.surges.len() {
            let surge = self.checkpoint.surges[n].clone();
            if surge.instance != owner || surge.state == SurgeState::Done {
                continue;
            }
            let Some(app) = apps.iter().find(|a| a.id == surge.app) else {
                self.checkpoint.surges[n].state = SurgeState::Done;
                self.checkpoint.log(
                    EventKind::Surge,
                    format!("{} is gone; surge dropped", surge.app),
                );
                continue;
            };
            // Only the recorded tasks: killing exactly those with
            // scale=true takes back the instances the surge added.
            let old_listed = app.tasks.iter().any(|t| surge.tasks().any(|o| *o == t.id));
            // The old tasks may go once the others keep the app at its
            // floor (counted at the instances before the surge).
            let healthy_without_old = count(
                app.tasks
                    .iter()
                    .filter(|t| !surge.tasks().any(|o| *o == t.id))
                    .filter(|t| health::task_is_healthy(app, t))
                    .count(),
            );
            let floor = safety::floor(
                &App {
                    instances: surge.instances,
                    ..app.clone()
                },
                self.floor(),
            );
            if !old_listed {
                if app.instances > surge.instances {
                    // An old task went some other way (a crash): undo the
                    // extra instance so the app ends where it started.
                    self.checkpoint
                        .intend(format!("surge {}: undo to {}", surge.app, surge.instances));
                    self.save().await?;
                    self.scale(&surge.app, surge.instances).await?;
                }
                // Bookkeeping only: written with the tick.
                self.checkpoint.surges[n].state = SurgeState::Done;
                self.checkpoint.log(
                    EventKind::Surge,
                    format!("{} moved off the old agents ({owner})", surge.app),
                );
                continue;
            }
            match surge.state {
                SurgeState::ScalingUp if app.instances < surge.surged_instances() => {
                    // Not applied yet (or lost): send the absolute count again.
                    self.scale(&surge.app, surge.surged_instances()).await?;
                    waiting.push(format!("{}: surge sent", surge.app));
                }
                SurgeState::ScalingUp
                    if healthy_without_old < floor || !app.deployments.is_empty() =>
                {
                    waiting.push(format!("{}: surge task not healthy yet", surge.app));
                }
                SurgeState::ScalingUp | SurgeState::Killing => {
                    ready.push((n, app.tasks.iter().map(|t| t.id.clone()).collect()));
                    waiting.push(format!("{}: old task(s) killed", surge.app));
                }
                SurgeState::Done => {}
            }
        }
        self.kill_surged(&ready).await?;
        Ok(waiting)
    }

    /// Kills the old tasks still listed of the surges in `ready` whose kill
    /// Marathon has not accepted yet, with `scale=true`, in one call
    /// (recorded first). Marathon refuses the whole call (409) when a
    /// deployment holds one of the apps: then each app's are sent alone,
    /// so one busy app does not hold back the others.
    async fn kill_surged(&mut self, ready: &[(usize, HashSet<String>)]) -> Result<(), RollError> {
        let mut by_app: Vec<(usize, Vec<String>)> = Vec::new();
        for (n, listed) in ready {
            let surge = &mut self.checkpoint.surges[*n];
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
        let apps: Vec<&str> = by_app
            .iter()
            .map(|(n, _)| self.checkpoint.surges[*n].app.as_str())
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
        self.checkpoint.intend(message);
        self.save().await?;
        match self.ports.marathon.kill_tasks(&tasks, true).await {
            Ok(_) => {
                for (n, _) in &by_app {
                    self.checkpoint.surges[*n].kill_sent = true;
                }
            }
            Err(MarathonError::Conflict { .. }) => {
                for (n, old) in &by_app {
                    match self.ports.marathon.kill_tasks(old, true).await {
                        Ok(_) => self.checkpoint.surges[*n].kill_sent = true,
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

    /// The drain's first act once the new agents are up: one maintenance
    /// window over every agent to replace (merged into the schedule,
    /// recorded first so finish removes it), so Marathon places no task
    /// on an old agent from now on and every task killed there relaunches
    /// on a new one. Re-running merges the same machines again.
    pub(in crate::roll) async fn maintenance(&mut self) -> Result<Tick, RollError> {
        let machines: Vec<MaintenanceRecord> = self
            .checkpoint
            .instances
            .iter()
            .filter(|i| !i.hostname.is_empty())
            .map(|i| MaintenanceRecord {
                hostname: i.hostname.clone(),
                ip: i.ip.clone(),
            })
            .collect();
        if machines.is_empty() {
            return Ok(Tick::Done(
                "no old agent to put under maintenance".to_string(),
            ));
        }
        for machine in &machines {
            if !self.checkpoint.maintenance.contains(machine) {
                self.checkpoint.maintenance.push(machine.clone());
            }
        }
        self.checkpoint.intend(format!(
            "one maintenance window for the {} old agent(s)",
            machines.len()
        ));
        self.save().await?;
        let ids: Vec<_> = machines.iter().map(MaintenanceRecord::machine_id).collect();
        let start = SystemTime::now() - Duration::from_secs(60);
        self.ports
            .mesos
            .schedule_maintenance(
                &ids,
                Unavailability::new(start, self.clock.window_span(WINDOW)),
            )
            .await?;
        let all: Vec<String> = self
            .checkpoint
            .instances
            .iter()
            .map(|i| i.id.clone())
            .collect();
        self.scheduled.extend(all);
        Ok(Tick::Done(format!(
            "{} old agent(s) under one maintenance window: Marathon places no new task on them",
            machines.len()
        )))
    }

    /// Puts the agent's machine in a maintenance window (merged into the
    /// schedule; already there is a no-op), recorded first so finish
    /// removes it. Asked once per process and machine.
    async fn schedule_maintenance(&mut self, record: &RolledInstance) -> Result<(), RollError> {
        if self.scheduled.contains(&record.id) {
            return Ok(());
        }
        let machine = MaintenanceRecord {
            hostname: record.hostname.clone(),
            ip: record.ip.clone(),
        };
        let id = machine.machine_id();
        if !self.checkpoint.maintenance.contains(&machine) {
            self.checkpoint.maintenance.push(machine);
        }
        self.checkpoint
            .intend(format!("maintenance window for {}", record.hostname));
        self.save().await?;
        let start = SystemTime::now() - Duration::from_secs(60);
        self.ports
            .mesos
            .schedule_maintenance(
                &[id],
                Unavailability::new(start, self.clock.window_span(WINDOW)),
            )
            .await?;
        self.scheduled.insert(record.id.clone());
        Ok(())
    }
}
