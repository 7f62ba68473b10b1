//! What the runner does about a failure on the new agents: the new agents
//! that registered late recorded (`late_agents.rs`), the watch's
//! look each tick (`failure_watch.rs` looks, `decide::failure` judges),
//! recording what was found, turning the plan around into its rollback
//! phase or pausing (`--on-failure`), deciding on a rerun of a roll that
//! paused on one, an operator's `roller rollback`, and the end of a
//! rollback (its page, `RolledBack`).

use super::Runner;
use crate::roll::decide::failure::Evidence;
use crate::roll::decide::failure_limit::{self, Verdict};
use crate::roll::decide::roll_plan;
use crate::roll::engine::failure_watch;
use crate::roll::engine::late_agents;
use crate::roll::engine::outcome::{Ended, Outcome};
use crate::roll::engine::paging;
use crate::roll::engine::tick_context::TickContext;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::record::checkpoint::{EventKind, OnFailure};
use crate::roll::record::kinds::StepKind;

impl<P: Ports> Runner<'_, P> {
    /// The failure watch's look this tick (`failure_watch.rs`), while the
    /// roll still moves tasks or terminates old agents: the failure past
    /// the limit, if any; failures within it are recorded as tolerated
    /// (and saved) here. A look that fails for a passing reason is
    /// skipped: the steps' own reads retry.
    pub(super) async fn watch(
        &mut self,
        tick: &mut TickContext<P>,
    ) -> Result<Option<Evidence>, RollError> {
        if !failure_watch::watching(&self.journal.checkpoint, self.moving()) {
            return Ok(None);
        }
        let verdict = match failure_watch::look(&self.journal.checkpoint, tick).await {
            Ok(verdict) => verdict,
            Err(err) if err.is_transient() => return Ok(None),
            Err(err) => return Err(err),
        };
        match verdict {
            Verdict::Nothing => Ok(None),
            Verdict::Decisive(evidence) => Ok(Some(evidence)),
            Verdict::Tolerate(within) => {
                self.tolerate(within).await?;
                Ok(None)
            }
            Verdict::Fail {
                evidence,
                tolerated,
                count,
            } => {
                self.tolerate(tolerated).await?;
                if self.journal.checkpoint.failure_limit > 0 {
                    self.journal.log(
                        EventKind::FailureFound,
                        format!(
                            "{count} apps or new agents failed, past --failure-limit {}",
                            self.journal.checkpoint.failure_limit
                        ),
                    );
                }
                Ok(Some(evidence))
            }
        }
    }

    /// Reads at once what the late agents' record and the failure watch
    /// read this tick, one after the other (`TickContext::prefetch`): the
    /// groups with new agents and, while the watch looks, Marathon's apps,
    /// Mesos' agents and the launch queue.
    pub(super) async fn prefetch(&self, tick: &mut TickContext<P>) {
        let checkpoint = &self.journal.checkpoint;
        let watching = failure_watch::watching(checkpoint, self.moving());
        if !watching && !roll_plan::rolling_back(&checkpoint.plan) {
            return;
        }
        let asgs: Vec<&str> = checkpoint
            .groups
            .iter()
            .filter(|g| !g.new_agents.is_empty())
            .map(|g| g.asg.as_str())
            .collect();
        tick.prefetch(&asgs, watching).await;
    }

    /// Whether a step that moves tasks or terminates an old agent is not
    /// complete: what the watch protects.
    fn moving(&self) -> bool {
        self.journal.checkpoint.plan.steps().any(|(_, step)| {
            step.kind.as_ref().is_some_and(|k| {
                matches!(
                    k.kind,
                    StepKind::Replace { .. }
                        | StepKind::DrainWave { .. }
                        | StepKind::Terminate { .. }
                )
            }) && !step.is_complete()
        })
    }

    /// New agents that registered after their group's scale-up (the
    /// group's replacement of an instance EC2 took away,
    /// `late_agents.rs`): recorded, logged and saved before the watch
    /// looks, while it looks or the roll rolls back. A look that fails for
    /// a passing reason is skipped: the next tick looks again.
    pub(super) async fn record_late_agents(
        &mut self,
        tick: &mut TickContext<P>,
    ) -> Result<(), RollError> {
        let checkpoint = &self.journal.checkpoint;
        if !roll_plan::rolling_back(&checkpoint.plan)
            && !failure_watch::watching(checkpoint, self.moving())
        {
            return Ok(());
        }
        let described = &mut self.memory.described;
        let found =
            match late_agents::unrecorded(checkpoint, self.env, &self.ports, tick, described).await
            {
                Ok(found) => found,
                Err(err) if err.is_transient() => return Ok(()),
                Err(err) => return Err(err),
            };
        if found.is_empty() {
            return Ok(());
        }
        for (g, agent) in found {
            let asg = self.journal.checkpoint.group(g).asg.clone();
            self.journal.log(
                EventKind::NewAgent,
                format!(
                    "{asg}: new agent {} ({}, instance {}) registered after the scale-up, \
                     the group's own launch (a replacement): watched, and terminated by a rollback, \
                     as every new agent",
                    agent.agent_id, agent.hostname, agent.instance
                ),
            );
            self.journal.checkpoint.group_mut(g).new_agents.push(agent);
        }
        self.journal.save().await?;
        Ok(())
    }

    /// Failures within the failure limit: each recorded and logged, the
    /// checkpoint saved, so a resume counts them too.
    async fn tolerate(&mut self, within: Vec<Evidence>) -> Result<(), RollError> {
        if within.is_empty() {
            return Ok(());
        }
        let limit = self.journal.checkpoint.failure_limit;
        for evidence in within {
            let record = failure_watch::record(&evidence, &self.clock);
            self.journal.checkpoint.tolerated_failures.push(record);
            let used = failure_limit::used(&self.journal.checkpoint.tolerated_failures);
            self.journal.log(
                EventKind::FailureTolerated,
                failure_limit::tolerated_line(&evidence, used, limit),
            );
        }
        self.journal.save().await?;
        Ok(())
    }

    /// A failure on the new agents: recorded (nothing is moved, surged or
    /// terminated from now on), then the plan turns around
    /// (`--on-failure rollback`, and `None` is returned: the loop goes
    /// on) or the roll must pause and page with the evidence (the reason
    /// is returned).
    pub(super) async fn failure_found(
        &mut self,
        found: Evidence,
    ) -> Result<Option<String>, RollError> {
        let record = failure_watch::record(&found, &self.clock);
        self.journal.checkpoint.failure = Some(record);
        self.journal.log(
            EventKind::FailureFound,
            format!("failure on a new agent: {}", found.sentence()),
        );
        self.journal.save().await?;
        match self.journal.checkpoint.on_failure {
            OnFailure::Rollback => {
                self.turn_around();
                self.journal.save().await?;
                Ok(None)
            }
            OnFailure::Pause => {
                let reason = format!(
                    "a failure on the new agents ({}); nothing more is moved, surged or terminated. \
                     Resume with --acknowledge-failure to go on with the roll, or with \
                     --on-failure rollback to put the cluster back as it was",
                    found.sentence()
                );
                Ok(Some(reason))
            }
        }
    }

    /// Turns the plan around (`roll_plan::turn_around`): the steps not run
    /// are closed, and a rollback phase added for each group touched.
    fn turn_around(&mut self) {
        let checkpoint = &mut self.journal.checkpoint;
        let why = checkpoint
            .failure
            .as_ref()
            .map_or("an operator's order".to_string(), |f| {
                format!("failure on a new agent: {}", f.what)
            });
        let groups: Vec<String> = checkpoint.groups.iter().map(|g| g.asg.clone()).collect();
        let groups: Vec<&str> = groups.iter().map(String::as_str).collect();
        let closed = roll_plan::turn_around(&mut checkpoint.plan, &groups, &why);
        for id in &closed {
            checkpoint.progress.remove(id);
        }
        self.journal.log(
            EventKind::RollingBack,
            format!(
                "rolling back ({why}): {} step(s) not run; the rollback phase puts the cluster back",
                closed.len()
            ),
        );
    }

    /// `roller rollback` on a paused or held roll: the plan's own hold and
    /// any pause are lifted and the plan turns around, as a failure found
    /// would turn it (its page says the operator ordered it). Refused when
    /// every old instance is already terminated: nothing is left to go
    /// back to. A roll already rolling back just goes on.
    pub(super) async fn rollback_ordered(&mut self) -> Result<(), RollError> {
        let checkpoint = &mut self.journal.checkpoint;
        if roll_plan::rolling_back(&checkpoint.plan) {
            return Ok(());
        }
        // A group whose old instances are all terminated has nothing to go
        // back to (it is kept: `roll_plan::turn_around`); a rollback needs
        // one group that has.
        let gone = |g: &crate::roll::record::checkpoint::GroupRoll| {
            !g.instances.is_empty() && g.instances.iter().all(|i| i.terminate_sent)
        };
        if checkpoint.groups.iter().all(gone) {
            return Err(RollError::refused(format!(
                "every old instance of run {} is already terminated: there is nothing to roll back to. \
                 Resume with `roller run` to finish the roll",
                checkpoint.run_id
            )));
        }
        checkpoint.plan.interrupted = false;
        self.journal.log(
            EventKind::Operator,
            "rollback ordered (roller rollback): the roll turns around".to_string(),
        );
        paging::resume_after_pause(&mut self.journal, &self.clock).await?;
        self.turn_around();
        self.journal.save().await?;
        Ok(())
    }

    /// A rerun of a roll that paused on a failure (`--on-failure pause`):
    /// `--acknowledge-failure` goes on past it, `--on-failure rollback`
    /// turns around; anything else leaves it paused, as it was. `None`
    /// when the run goes on.
    pub(super) async fn failure_on_resume(&mut self) -> Result<Option<Outcome>, RollError> {
        let checkpoint = &mut self.journal.checkpoint;
        let Some(failure) = checkpoint.failure.clone() else {
            return Ok(None);
        };
        if roll_plan::rolling_back(&checkpoint.plan) {
            return Ok(None);
        }
        // An app the operator now allows to be unhealthy has no failure
        // the roll need stop for.
        let allowed = failure
            .app
            .as_ref()
            .is_some_and(|app| checkpoint.allow_unhealthy.contains(app));
        if self.options.acknowledge_failure || allowed {
            checkpoint
                .acknowledged_failures
                .push(Evidence::acknowledgement(
                    failure.app.as_deref(),
                    &failure.key,
                ));
            checkpoint.failure = None;
            let how = if allowed {
                "its app is allowed unhealthy"
            } else {
                "--acknowledge-failure"
            };
            self.journal.log(
                EventKind::Operator,
                format!(
                    "the failure on a new agent ({}) is acknowledged ({how}); the roll goes on",
                    failure.key
                ),
            );
            self.journal.save().await?;
            return Ok(None);
        }
        if checkpoint.on_failure == OnFailure::Rollback {
            paging::resume_after_pause(&mut self.journal, &self.clock).await?;
            self.turn_around();
            self.journal.save().await?;
            return Ok(None);
        }
        let (step, paged) = checkpoint
            .pause
            .as_ref()
            .map_or((String::new(), false), |p| (p.step.clone(), p.paged));
        Ok(Some(Outcome::Paused {
            step,
            reason: format!(
                "still paused on the failure on a new agent ({}: {}); resume with \
                 --acknowledge-failure to go on, or --on-failure rollback to roll back",
                failure.key, failure.what
            ),
            paged,
        }))
    }

    /// The plan is complete after a rollback: the page says what failed
    /// and that the cluster was rolled back.
    pub(super) async fn rolled_back(mut self) -> Result<Ended, RollError> {
        let checkpoint = &self.journal.checkpoint;
        let failure = checkpoint
            .failure
            .as_ref()
            .map_or("an operator's order".to_string(), |f| {
                let whose: Vec<&str> = [f.app.as_deref(), f.instance.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect();
                if whose.is_empty() {
                    // An alarm: no one app or instance.
                    f.what.clone()
                } else {
                    format!("{} ({})", f.what, whose.join(" on "))
                }
            });
        let source = (self.env.pager.source.clone()).unwrap_or_else(paging::host_name);
        let paged =
            paging::rolled_back(&mut self.journal, self.ports.pager(), &failure, &source).await?;
        let summary = self.journal.checkpoint.summary.clone().unwrap_or_default();
        Ok(self.end(Outcome::RolledBack {
            failure,
            summary,
            paged,
        }))
    }
}
