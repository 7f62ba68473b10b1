//! Advancing one step of the plan by one tick: the bookkeeping the
//! runner keeps around a step's own tick (`steps::tick`): its start and
//! progress, its wait and deadline, its completion, its failure.

use super::Runner;
use crate::plan::{Status, StepIndex};
use crate::roll::decide::failure::Evidence;
use crate::roll::engine::clock::human;
use crate::roll::engine::steps::{Tick, Wait};
use crate::roll::engine::tick_context::TickContext;
use crate::roll::engine::wait;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::record::checkpoint::{CheckpointError, EventKind, StepProgress};
use crate::roll::record::kinds::{GroupStep, WaitKind};

/// What one step's tick came to, as the loop sees it.
pub(super) enum Advanced {
    Done,
    Waiting,
    /// The step may not begin yet (`Tick::NotYet`).
    NotYet,
    /// The step must stop and call a human: a wait ran out, or another
    /// writer changed the group. The reason, as the page says it.
    Pause(String),
    /// The step found the new image failing (`Tick::Failed`).
    Failed(Evidence),
    /// The run may not go on and changed nothing (`Tick::Refused`).
    Refused(String),
}

/// A step as it was when its tick began.
struct Started {
    id: String,
    /// Whether this tick is its first (it had no progress yet).
    began: bool,
    /// Its status before the tick.
    before: Status,
    /// Its name, for events.
    name: String,
}

impl<P: Ports> Runner<'_, P> {
    /// One tick of one step, with the bookkeeping around it: the step's
    /// start, its wait and deadline, its completion or failure.
    pub(super) async fn advance(
        &mut self,
        at: StepIndex,
        tick: &mut TickContext<P>,
    ) -> Result<Advanced, RollError> {
        let kind = self.kind_of(at)?;
        let start = self.start(at);
        let ticked = self.tick(Some(at), &kind, tick).await;
        self.outcome(at, &start, ticked).await
    }

    /// The kind the plan stores for the step at `at`; a step without one
    /// is a corrupt checkpoint.
    fn kind_of(&self, at: StepIndex) -> Result<GroupStep, RollError> {
        let step = self.journal.checkpoint.plan.step(at);
        step.kind.clone().ok_or_else(|| {
            CheckpointError::Corrupt {
                path: self.journal.store().location().to_path_buf(),
                reason: format!("step '{}' of the plan has no \"kind\"", step.id),
            }
            .into()
        })
    }

    /// Marks the step at `at` as acting before its tick: its progress
    /// (when it started) kept from its first tick, its status `STARTING`
    /// unless it has begun.
    fn start(&mut self, at: StepIndex) -> Started {
        let checkpoint = &mut self.journal.checkpoint;
        let id = checkpoint.plan.step(at).id.clone();
        let now = self.clock.now_unix_ms();
        let began = !checkpoint.progress.contains_key(&id);
        checkpoint
            .progress
            .entry(id.clone())
            .or_insert(StepProgress {
                started_unix_ms: now,
                wait: None,
            });
        let step = checkpoint.plan.step_mut(at);
        let before = step.status;
        if !matches!(step.status, Status::Starting | Status::Started) {
            step.status = Status::Starting;
            step.message = "acting".to_string();
        }
        let name = checkpoint.step_name(at);
        Started {
            id,
            began,
            before,
            name,
        }
    }

    /// What the step's tick came to, recorded on the step: its status,
    /// message, progress and wait.
    async fn outcome(
        &mut self,
        at: StepIndex,
        start: &Started,
        ticked: Result<Tick, RollError>,
    ) -> Result<Advanced, RollError> {
        let checkpoint = &mut self.journal.checkpoint;
        match ticked {
            // Nothing was done: the step has not begun.
            Ok(Tick::NotYet(why)) => {
                if start.began {
                    checkpoint.progress.remove(&start.id);
                }
                let step = checkpoint.plan.step_mut(at);
                step.status = start.before;
                step.message = why;
                Ok(Advanced::NotYet)
            }
            Ok(Tick::Done(message)) => Ok(self.complete(at, start, message)),
            Ok(Tick::Waiting(wait)) => Ok(self.waiting(at, &start.id, wait)),
            Ok(Tick::Failed(found)) => {
                checkpoint.plan.step_mut(at).status = Status::Started;
                Ok(Advanced::Failed(found))
            }
            Ok(Tick::Pause(reason)) => {
                checkpoint.plan.step_mut(at).status = Status::Started;
                Ok(Advanced::Pause(reason))
            }
            Ok(Tick::Refused(reason)) => {
                checkpoint.plan.step_mut(at).status = start.before;
                Ok(Advanced::Refused(reason))
            }
            Err(err) if err.is_transient() => Ok(self.retry(at, &start.id, &err)),
            // Another writer changed the group: stop and call a human,
            // never change it back. Marathon refusing a write: the same,
            // once the step has undone what it started.
            Err(RollError::OtherWriter(reason) | RollError::WriteRefused(reason)) => {
                checkpoint.plan.step_mut(at).status = Status::Started;
                Ok(Advanced::Pause(reason))
            }
            Err(err) => self.fail(at, &start.name, err).await,
        }
    }

    /// The step at `at` is complete: how long it took, its message, and an
    /// event, written with the tick. A completion is a result, not an
    /// intent: a crash before the write runs the step again, which every
    /// step is safe to do (and the next intent writes it first). A write
    /// per completion made a tick that ended a thousand terminations
    /// write the whole checkpoint a thousand times.
    fn complete(&mut self, at: StepIndex, start: &Started, message: String) -> Advanced {
        let checkpoint = &mut self.journal.checkpoint;
        let took = checkpoint
            .progress
            .remove(&start.id)
            .map(|p| self.clock.since(p.started_unix_ms))
            .unwrap_or_default();
        if let Some(live) = &self.options.live {
            live.step_took(took);
        }
        let step = checkpoint.plan.step_mut(at);
        step.status = Status::Complete;
        step.message = format!("{message} (took {})", human(took));
        self.journal.log(
            EventKind::Step,
            format!("{} complete: {message}", start.name),
        );
        Advanced::Done
    }

    /// A call that failed for a passing reason counts against the wait
    /// the step is in; outside a wait it starts one of its own (`retry`):
    /// every step is safe to run again (intent first), so the next tick
    /// does what a rerun would.
    fn retry(&mut self, at: StepIndex, id: &str, err: &RollError) -> Advanced {
        let kind = self
            .journal
            .checkpoint
            .progress
            .get(id)
            .and_then(|p| p.wait.as_ref())
            .map_or(WaitKind::Retry, |record| record.kind);
        let message = match kind {
            WaitKind::Retry => format!("retrying: {err}"),
            _ => format!("last look failed: {err}"),
        };
        let extension = std::time::Duration::ZERO;
        self.waiting(
            at,
            id,
            Wait {
                kind,
                message,
                extension,
            },
        )
    }

    /// Records the wait and checks its deadline.
    fn waiting(&mut self, at: StepIndex, id: &str, wait: Wait) -> Advanced {
        match wait::record_wait(
            &mut self.journal.checkpoint,
            at,
            id,
            (wait.kind, &wait.message, wait.extension),
            &self.clock,
            &self.env.timeouts,
        ) {
            Some(reason) => Advanced::Pause(reason),
            None => Advanced::Waiting,
        }
    }

    /// The step keeps its status (a rerun re-enters it); its message says
    /// what went wrong, for `roller status`.
    async fn fail(
        &mut self,
        at: StepIndex,
        name: &str,
        err: RollError,
    ) -> Result<Advanced, RollError> {
        let checkpoint = &mut self.journal.checkpoint;
        checkpoint.plan.step_mut(at).message =
            format!("failed at {}: {err}; rerun to retry", self.clock.utc());
        self.journal
            .log(EventKind::Failure, format!("{name}: {err}"));
        if let Some(event) = self.journal.checkpoint.events.last_mut() {
            event.label = Some(err.label().to_string());
        }
        self.journal.save().await?;
        Err(err)
    }
}
