//! Runs a roll's plan as a reconcile loop. Each tick takes the plan
//! engine's candidates (assets honoured, `DELAYED` steps never offered),
//! builds the tick's context (`TickContext`: what the tick reads of the
//! world, each thing at most once, whatever group each step acts on),
//! advances every candidate by one tick of its step (`steps::tick` on
//! the kind the plan stores for it, over a `StepContext` lent for the
//! step's group: the step looks, acts if it must, and says `Done` or what
//! it waits for), saves the checkpoint if anything changed, and sleeps
//! one poll interval unless a step completed. No step owns a loop; the
//! runner owns every deadline, and no step's logic. The bookkeeping
//! around one step's tick (its start, wait, completion, failure) is
//! `runner/advance.rs`.
//!
//! Between ticks it applies the operator operations queued for it
//! (`inbox.rs`) and honours a stop signal; a signal never cuts an API call
//! short. When a wait outlives its timeout the roll pauses (`paging.rs`):
//! the step reads `DELAYED`, a page goes out if a pager is configured, and
//! the run returns `Outcome::Paused` (exit 3). A rerun clears only such a
//! pause; an operator's interrupt holds until `roller plan continue`.

use std::sync::Arc;

use tokio::sync::watch;

use super::clock::{self, RollClock};
use super::inbox;
use super::journal::Journal;
use super::outcome::{Ended, Outcome};
use super::paging::{self, PageOrigin};
use super::run_options::RunOptions;
use super::step_context::Lent;
use super::steps::{self, Memory, StepContext, Tick};
use super::tick_context::{Observation, TickContext};
use super::wait;
use crate::plan::{Status, StepIndex, plan_candidates};
use crate::roll::decide::failure::Evidence;
use crate::roll::decide::roll_plan::{self, continue_command};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore, EventKind};
use crate::roll::record::env::Environment;
use crate::roll::record::kinds::{GroupIndex, GroupStep};

mod advance;
mod on_failure;

use advance::Advanced;

/// What a tick's candidates came to, as the loop sees it.
enum Round {
    /// Every candidate was ticked (or a stop came between two): whether
    /// one completed, and whether one is under way.
    Ticked { finished: bool, begun: bool },
    /// The step at the index found the new image failing; the candidates
    /// after it were not ticked.
    Failed(StepIndex, Evidence),
    /// The step at the index must stop and call a human.
    Pause(StepIndex, String),
    /// The step at the index found that the run may not go on.
    Refused(StepIndex, String),
}

pub(crate) struct Runner<'a, P> {
    ports: P,
    env: &'a Environment,
    options: RunOptions,
    clock: RollClock,
    stop: watch::Receiver<bool>,
    /// The checkpoint, where it is written, and who watches each write.
    journal: Journal<'a>,
    /// What this process has sent that the checkpoint does not keep.
    memory: Memory,
    /// What the last tick observed (`TickContext::following`).
    last_seen: Option<Arc<Observation>>,
}

impl<'a, P: Ports> Runner<'a, P> {
    pub(crate) fn new(
        ports: P,
        env: &'a Environment,
        options: RunOptions,
        checkpoint: Checkpoint,
        store: CheckpointStore,
        stop: watch::Receiver<bool>,
        observer: Box<dyn FnMut(&Checkpoint) + Send + 'a>,
    ) -> Result<Self, RollError> {
        if let Some(live) = &options.live {
            live.observe(&checkpoint);
        }
        let clock = RollClock::new(env.time_scale);
        Ok(Runner {
            ports,
            env,
            options,
            clock: clock.clone(),
            stop,
            journal: Journal::new(checkpoint, store, clock, observer),
            memory: Memory::default(),
            last_seen: None,
        })
    }

    fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Runs until the plan is complete, paused, held or stopped.
    #[cfg(test)]
    pub(crate) async fn run(self) -> Result<(Outcome, Checkpoint), RollError> {
        let (outcome, checkpoint, _) = self.run_keeping_store().await?;
        Ok((outcome, checkpoint))
    }

    /// `run`, handing back the store (to archive a completed checkpoint).
    pub(crate) async fn run_keeping_store(mut self) -> Result<Ended, RollError> {
        self.take_operations().await?;
        if self.options.rollback_ordered {
            self.rollback_ordered().await?;
        }
        // An operator's hold outranks a pause: the rerun changes nothing.
        if let Some(reason) = self.held_reason(true) {
            return self.held(reason).await;
        }
        if let Some(outcome) = self.failure_on_resume().await? {
            return Ok(self.end(outcome));
        }
        paging::resume_after_pause(&mut self.journal, &self.clock).await?;
        loop {
            // Ticks begin every poll interval: the wait after one is what
            // is left of the interval (`clock::pause_after`).
            let tick_began = tokio::time::Instant::now();
            if self.stopped() {
                return self.stopped_between_ticks().await;
            }
            self.take_operations().await?;
            paging::resolve_settled_page(&mut self.journal, self.ports.pager()).await?;
            if self.journal.checkpoint.plan.is_complete() {
                return self.completed().await;
            }
            let candidates = plan_candidates(&self.journal.checkpoint.plan);
            if candidates.is_empty() {
                if let Some(err) = self.step_in_error() {
                    return Err(err);
                }
                let reason = self
                    .held_reason(false)
                    .unwrap_or_else(|| self.continue_command());
                return self.held(reason).await;
            }
            let began = (std::time::Instant::now(), crate::metrics::process_cpu());
            let mut tick = TickContext::new(self.ports).following(self.last_seen.take());
            self.prefetch(&mut tick).await;
            self.record_late_agents(&mut tick).await?;
            if let Some(found) = self.watch(&mut tick).await? {
                if let Some(reason) = self.failure_found(found).await? {
                    return self.pause(candidates[0], reason).await;
                }
                // Turned around: the next tick runs the rollback phase.
                continue;
            }
            let steps_before = self.journal.checkpoint.plan.steps().count();
            let offered = candidates.clone();
            let (mut finished, begun) = match self.advance_all(candidates, &mut tick).await? {
                Round::Ticked { finished, begun } => (finished, begun),
                Round::Failed(at, found) => {
                    if let Some(reason) = self.failure_found(found).await? {
                        return self.pause(at, reason).await;
                    }
                    continue;
                }
                Round::Pause(at, reason) => return self.pause(at, reason).await,
                Round::Refused(at, reason) => return self.refused(at, reason).await,
            };
            self.last_seen = tick.observed();
            // A step added this tick (the drain's next wave) runs at once.
            finished |= self.journal.checkpoint.plan.steps().count() != steps_before;
            self.journal.save().await?;
            crate::metrics::tick(
                crate::metrics::process_cpu().saturating_sub(began.1),
                began.0.elapsed(),
            );
            // Every step offered is waiting for another to begin (the
            // drain's terminations while an operator or a canary holds the
            // drain): nothing moves until the hold is released.
            if !finished && !begun && !self.stopped() {
                let plan = &self.journal.checkpoint.plan;
                let waits: Vec<String> = offered
                    .iter()
                    .map(|at| plan.step(*at))
                    .map(|s| format!("{}: {}", s.id, s.message))
                    .collect();
                let reason = format!(
                    "the plan is held (an operator's `roller plan interrupt`, or a canary waiting): \
                     no step can begin ({}); let it go on with: {}",
                    waits.join("; "),
                    self.continue_command()
                );
                return self.held(reason).await;
            }
            if !finished {
                let took = self.clock.elapsed(tick_began);
                let pause = clock::pause_after(self.env.poll_interval, took);
                wait::sleep_poll(&self.clock, &mut self.stop, pause).await;
            }
        }
    }

    /// Advances every candidate by one tick of its step, in order, until
    /// a stop comes or a step ends the round: a failure found stops the
    /// round there, a pause or a refusal ends the run.
    async fn advance_all(
        &mut self,
        candidates: Vec<StepIndex>,
        tick: &mut TickContext<P>,
    ) -> Result<Round, RollError> {
        let (mut finished, mut begun) = (false, false);
        for at in candidates {
            if self.stopped() {
                break;
            }
            match self.advance(at, tick).await? {
                Advanced::Done => finished = true,
                Advanced::Waiting => begun = true,
                Advanced::NotYet => {}
                Advanced::Pause(reason) => return Ok(Round::Pause(at, reason)),
                Advanced::Failed(found) => return Ok(Round::Failed(at, found)),
                Advanced::Refused(reason) => return Ok(Round::Refused(at, reason)),
            }
        }
        Ok(Round::Ticked { finished, begun })
    }

    /// One tick of the step at `at` (`None`: a step run outside the
    /// plan, by `roller abandon`), of `kind`, over `tick`, with the
    /// context the runner lends it for the step's group.
    async fn tick(
        &mut self,
        at: Option<StepIndex>,
        kind: &GroupStep,
        tick: &mut TickContext<P>,
    ) -> Result<Tick, RollError> {
        steps::tick(&kind.kind, &mut self.context(tick, at, kind.group)).await
    }

    /// What the runner lends the step at `at`, of the group `group`, for
    /// one tick over `tick`.
    fn context<'r>(
        &'r mut self,
        tick: &'r mut TickContext<P>,
        at: Option<StepIndex>,
        group: GroupIndex,
    ) -> StepContext<'r, 'a, P> {
        let lent = Lent {
            ports: self.ports,
            env: self.env,
            options: &self.options,
            clock: &self.clock,
            tick,
            memory: &mut self.memory,
            stop: &mut self.stop,
        };
        StepContext::new(lent, &mut self.journal, at, group)
    }

    /// Applies the operations queued since the last tick (files, then the
    /// plan API's).
    async fn take_operations(&mut self) -> Result<(), RollError> {
        let handed = match &self.options.live {
            Some(live) => live.take_operations(),
            None => Vec::new(),
        };
        inbox::take_operations(&mut self.journal, handed, &self.clock).await?;
        Ok(())
    }

    /// Why the plan offers no step, with the command that releases it;
    /// `None` when it is not held. With `past_pause`, the paused step
    /// counts as running again (what a rerun would make of it).
    fn held_reason(&self, past_pause: bool) -> Option<String> {
        let mut plan = self.journal.checkpoint.plan.clone();
        if let Some(at) = self.paused_step().filter(|_| past_pause) {
            plan.step_mut(at).status = Status::Started;
        }
        let held = !plan.is_complete()
            && plan_candidates(&plan).is_empty()
            && !plan.steps().any(|(_, s)| s.status == Status::Error);
        held.then(|| {
            format!(
                "the plan is held (an operator's `roller plan interrupt`, or a canary waiting); \
                 let it go on with: {}",
                continue_command(&plan, &self.journal.store().for_command())
            )
        })
    }

    fn continue_command(&self) -> String {
        continue_command(
            &self.journal.checkpoint.plan,
            &self.journal.store().for_command(),
        )
    }

    /// A stop signal came between two ticks: the run ends, saved.
    async fn stopped_between_ticks(mut self) -> Result<Ended, RollError> {
        self.journal
            .log(EventKind::Stop, "stopped by a signal between ticks");
        self.journal.save().await?;
        Ok(self.end(Outcome::Stopped))
    }

    /// The plan is complete: its page resolved, the run ends rolled back
    /// or complete, with the roll's summary.
    async fn completed(mut self) -> Result<Ended, RollError> {
        paging::resolve_open_page(&mut self.journal, self.ports.pager()).await?;
        if roll_plan::rolling_back(&self.journal.checkpoint.plan) {
            return self.rolled_back().await;
        }
        let mut summary = self.journal.checkpoint.summary.clone().unwrap_or_default();
        for note in self
            .journal
            .checkpoint
            .groups
            .iter()
            .filter_map(|g| g.above_target())
        {
            if !summary.is_empty() {
                summary.push('\n');
            }
            summary.push_str(&note);
        }
        Ok(self.end(Outcome::Complete { summary }))
    }

    /// A step of the plan in error, which is why the plan offers none: the
    /// run ends with it.
    fn step_in_error(&self) -> Option<RollError> {
        let plan = &self.journal.checkpoint.plan;
        let (_, step) = plan.steps().find(|(_, s)| s.status == Status::Error)?;
        Some(RollError::StepInError {
            step: step.id.clone(),
            message: step.message.clone(),
        })
    }

    async fn held(mut self, reason: String) -> Result<Ended, RollError> {
        self.journal.log(EventKind::Held, reason.clone());
        self.journal.save().await?;
        Ok(self.end(Outcome::Held { reason }))
    }

    /// A wait outlived its timeout: pause (the step reads DELAYED, so no
    /// tick offers it), page, and stop with exit 3.
    async fn pause(mut self, at: StepIndex, reason: String) -> Result<Ended, RollError> {
        let step = self.journal.checkpoint.step_name(at);
        let source = (self.env.pager.source.clone()).unwrap_or_else(paging::host_name);
        let origin = PageOrigin {
            source: &source,
            resume_command: &self.options.resume_command,
        };
        let since = self.clock.utc();
        let paged = paging::pause(
            &mut self.journal,
            self.ports.pager(),
            at,
            &reason,
            since,
            origin,
        )
        .await?;
        Ok(self.end(Outcome::Paused {
            step,
            reason,
            paged,
        }))
    }

    /// The run ends with `outcome`, the checkpoint as last saved.
    /// The run ends refused at step `at`, having changed nothing: the
    /// step says why, and the checkpoint records it before it is set
    /// aside.
    async fn refused(mut self, at: StepIndex, reason: String) -> Result<Ended, RollError> {
        let checkpoint = &mut self.journal.checkpoint;
        let name = checkpoint.step_name(at);
        checkpoint.plan.step_mut(at).message = format!("refused: {reason}");
        self.journal
            .log(EventKind::Failure, format!("{name} refused: {reason}"));
        if let Some(event) = self.journal.checkpoint.events.last_mut() {
            event.label = Some("cluster_held".to_string());
        }
        self.journal.save().await?;
        Ok(self.end(Outcome::Refused { reason }))
    }

    fn end(self, outcome: Outcome) -> Ended {
        let (checkpoint, store) = self.journal.into_parts();
        (outcome, checkpoint, store)
    }

    fn paused_step(&self) -> Option<StepIndex> {
        let checkpoint = &self.journal.checkpoint;
        paging::paused_step(checkpoint, &checkpoint.pause.as_ref()?.step)
    }

    /// One tick of the step `kind` (on its group) outside the loop, with
    /// a tick context of its own: what `roller abandon` runs its finish
    /// steps with.
    pub(crate) async fn tick_alone(&mut self, kind: &GroupStep) -> Result<Tick, RollError> {
        let mut tick = TickContext::new(self.ports);
        self.tick(None, kind, &mut tick).await
    }

    /// Every surge of the group `group` not finished set back to its
    /// app's instance count before it (`roller abandon`): what was set
    /// back, and what could not be.
    pub(crate) async fn undo_surges(
        &mut self,
        group: GroupIndex,
    ) -> Result<steps::Undone, RollError> {
        let mut tick = TickContext::new(self.ports);
        Ok(self.context(&mut tick, None, group).undo_surges().await?)
    }

    /// `roller abandon`: roller's termination hooks completed for the
    /// instances the roll terminated that a hook still holds, the other
    /// held instances said (see `StepContext::release_hooks`).
    pub(crate) async fn release_hooks(
        &mut self,
        group: GroupIndex,
    ) -> Result<Vec<String>, RollError> {
        let mut tick = TickContext::new(self.ports);
        self.context(&mut tick, None, group).release_hooks().await
    }

    /// `roller abandon`: the group's old agents that the roll deactivated
    /// (for pods) or drained (other frameworks' tasks) reactivated, so
    /// Mesos offers them again; how many were.
    pub(crate) async fn reactivate_old_agents(
        &mut self,
        group: GroupIndex,
    ) -> Result<usize, RollError> {
        let mut tick = TickContext::new(self.ports);
        self.context(&mut tick, None, group)
            .reactivate_old_agents()
            .await
    }

    /// `<asg>: ` before what is said of the group `group` in a roll of
    /// several groups; nothing for one.
    pub(crate) fn group_label(&self, group: GroupIndex) -> String {
        let checkpoint = &self.journal.checkpoint;
        if checkpoint.groups.len() > 1 {
            format!("{}: ", checkpoint.group(group).asg)
        } else {
            String::new()
        }
    }

    /// Resolves the roll's page, a paused one's included (`roller
    /// abandon`); the event it logged, if there was a page.
    pub(crate) async fn resolve_page(&mut self) -> Result<Option<String>, RollError> {
        Ok(paging::resolve_page_of_abandoned(&mut self.journal, self.ports.pager()).await?)
    }

    pub(crate) fn into_checkpoint(self) -> Checkpoint {
        self.journal.checkpoint
    }
}
