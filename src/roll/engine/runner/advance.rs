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
use crate::roll::record::kinds::WaitKind;

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

impl<P: Ports> Runner<'_, P> {
    /// One tick of one step, with the bookkeeping around it: the step's
    /// start, its wait and deadline, its completion or failure.
    pub(super) async fn advance(
        &mut self,
        at: StepIndex,
        tick: &mut TickContext<P>,
    ) -> Result<Advanced, RollError> {
        let Some(kind) = self.journal.checkpoint.plan.step(at).kind.clone() else {
            return Err(CheckpointError::Corrupt {
                path: self.journal.store().location().to_path_buf(),
                reason: format!(
                    "step '{}' of the plan has no \"kind\"",
                    self.journal.checkpoint.plan.step(at).id
                ),
            }
            .into());
        };
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
        let ticked = self.tick(Some(at), &kind, tick).await;
        let checkpoint = &mut self.journal.checkpoint;
        match ticked {
            // Nothing was done: the step has not begun.
            Ok(Tick::NotYet(why)) => {
                if began {
                    checkpoint.progress.remove(&id);
                }
                let step = checkpoint.plan.step_mut(at);
                step.status = before;
                step.message = why;
                Ok(Advanced::NotYet)
            }
            Ok(Tick::Done(message)) => {
                let took = checkpoint
                    .progress
                    .remove(&id)
                    .map(|p| self.clock.since(p.started_unix_ms))
                    .unwrap_or_default();
                if let Some(live) = &self.options.live {
                    live.step_took(took);
                }
                let step = checkpoint.plan.step_mut(at);
                step.status = Status::Complete;
                step.message = format!("{message} (took {})", human(took));
                self.journal
                    .log(EventKind::Step, format!("{name} complete: {message}"));
                self.journal.save().await?;
                Ok(Advanced::Done)
            }
            Ok(Tick::Waiting(wait)) => Ok(self.waiting(at, &id, wait)),
            Ok(Tick::Failed(found)) => {
                checkpoint.plan.step_mut(at).status = Status::Started;
                Ok(Advanced::Failed(found))
            }
            Ok(Tick::Pause(reason)) => {
                checkpoint.plan.step_mut(at).status = Status::Started;
                Ok(Advanced::Pause(reason))
            }
            Ok(Tick::Refused(reason)) => {
                checkpoint.plan.step_mut(at).status = before;
                Ok(Advanced::Refused(reason))
            }
            // A call that failed for a passing reason counts against the
            // wait the step is in; outside a wait it starts one of its own
            // (`retry`): every step is safe to run again (intent first),
            // so the next tick does what a rerun would.
            Err(err) if err.is_transient() => {
                let kind = checkpoint
                    .progress
                    .get(&id)
                    .and_then(|p| p.wait.as_ref())
                    .map_or(WaitKind::Retry, |record| record.kind);
                let message = match kind {
                    WaitKind::Retry => format!("retrying: {err}"),
                    _ => format!("last look failed: {err}"),
                };
                Ok(self.waiting(at, &id, Wait { kind, message }))
            }
            // Another writer changed the group: stop and call a human,
            // never change it back.
            Err(RollError::OtherWriter(reason)) => {
                checkpoint.plan.step_mut(at).status = Status::Started;
                Ok(Advanced::Pause(reason))
            }
            Err(err) => self.fail(at, &name, err).await,
        }
    }

    /// Records the wait and checks its deadline.
    fn waiting(&mut self, at: StepIndex, id: &str, wait: Wait) -> Advanced {
        match wait::record_wait(
            &mut self.journal.checkpoint,
            at,
            id,
            (wait.kind, &wait.message),
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
