//! Runs a roll's plan as a reconcile loop. Each tick takes the plan
//! engine's candidates (assets honoured, `DELAYED` steps never offered),
//! advances every one of them by one tick of its step (which observes the
//! cluster, acts if it must, and says `Done` or what it waits for), saves
//! the checkpoint if anything changed, and sleeps one poll interval unless
//! a step completed. No step owns a loop; the runner owns every deadline.
//!
//! Between ticks it applies the operator operations queued for it
//! (`inbox.rs`) and honours a stop signal; a signal never cuts an API call
//! short. When a wait outlives its timeout the roll pauses (`paging.rs`):
//! the step reads `DELAYED`, a page goes out if a pager is configured, and
//! the run returns `Outcome::Paused` (exit 3). A rerun clears only such a
//! pause; an operator's interrupt holds until `roller plan continue`.

use std::collections::{BTreeMap, HashSet};

use std::sync::Arc;

use tokio::sync::watch;

use super::checkpoint::{Checkpoint, CheckpointError, CheckpointStore, EventKind, StepProgress};
use super::clock::{RollClock, human};
use super::env::Environment;
use super::error::RollError;
use super::live::Live;
use super::observation::Observation;
use super::ports::auto_scaling::AutoScaling;
use super::ports::auto_scaling::AutoScalingGroup;
use super::ports::marathon::Marathon;
use super::ports::mesos::MesosMaster;
use super::ports::pager::Pager;
use super::steps::{StepKind, Tick, Wait, WaitKind};
use crate::plan::{Plan, Status, Step, StepIndex, plan_candidates};

pub use super::cluster::{Ports, RUN_ID_TAG};

/// Options of this run that are not in the environment.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Resume AZRebalance even when the final AZ counts are uneven.
    pub resume_az_rebalance: bool,
    /// The command an operator runs to resume (printed and paged).
    pub resume_command: String,
    /// Shared with the plan API (`--listen`): the runner keeps its
    /// snapshot current, drains its operations at each tick with the
    /// queued files, and reports step durations to it.
    pub live: Option<Arc<Live>>,
}

#[derive(Debug)]
pub enum Outcome {
    Complete {
        /// The AZ rebalance report.
        summary: String,
    },
    /// A wait timed out: the step reads DELAYED; `paged` says whether a
    /// configured pager accepted the page.
    Paused {
        step: String,
        reason: String,
        paged: bool,
    },
    /// An operator interrupted the plan, a phase or a step, or a canary
    /// waits: `reason` ends with the exact `roller plan continue` command.
    Held { reason: String },
    /// A stop signal arrived; the checkpoint is consistent.
    Stopped,
}

/// How a run ended: the outcome, the checkpoint as last written, and the
/// store it was written to.
pub type Ended = (Outcome, Checkpoint, CheckpointStore);

/// What one step's tick came to, as the loop sees it.
pub(super) enum Advanced {
    Done,
    Waiting,
    /// The step may not begin yet (`Tick::NotYet`).
    NotYet,
    /// The step must stop and call a human: a wait ran out, or another
    /// writer changed the group. The reason, as the page says it.
    Pause(String),
}

pub struct Runner<'a, A, M, K, P> {
    pub(super) ports: Ports<'a, A, M, K, P>,
    pub(super) env: &'a Environment,
    pub(super) options: RunOptions,
    pub checkpoint: Checkpoint,
    pub(super) store: CheckpointStore,
    pub(super) clock: RollClock,
    pub(super) stop: watch::Receiver<bool>,
    observer: Box<dyn FnMut(&Checkpoint) + Send + 'a>,
    /// Tasks this process asked Marathon to kill (a task being killed is
    /// not counted on again while Marathon still lists it).
    pub(super) killed: HashSet<String>,
    /// Machines this process has put in a maintenance window (asked once
    /// per process: the call is idempotent, a resume asks again).
    pub(super) scheduled: HashSet<String>,
    /// Instances whose termination this process has sent again (a call
    /// failing tick after tick is logged once, not once per tick).
    pub(super) resent: HashSet<String>,
    /// Each step's kind, read once from the checkpoint: dispatch cannot
    /// meet an unknown step.
    kinds: BTreeMap<StepIndex, StepKind>,
    /// The checkpoint as last written, so a tick that changed nothing
    /// writes nothing.
    saved: Vec<u8>,
    /// What this tick has read of Marathon and Mesos, shared by every
    /// step of the tick (read at most once per tick).
    pub(super) seen: Option<Arc<Observation>>,
    /// The group as this tick read it.
    pub(super) group: Option<Arc<AutoScalingGroup>>,
    /// Old agents per AZ being terminated (sent, step not complete), as
    /// this tick counts them.
    pub(super) terminating: Option<std::collections::HashMap<String, usize>>,
    /// Instances whose termination this tick sent (the group this tick
    /// read still shows them in service).
    pub(super) sent_this_tick: HashSet<String>,
    /// Mesos' maintenance status as this tick read it.
    pub(super) maintenance_seen: Option<Arc<super::ports::mesos::MaintenanceStatus>>,
}

impl<'a, A, M, K, P> Runner<'a, A, M, K, P>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
{
    pub fn new(
        ports: Ports<'a, A, M, K, P>,
        env: &'a Environment,
        options: RunOptions,
        checkpoint: Checkpoint,
        store: CheckpointStore,
        stop: watch::Receiver<bool>,
        observer: Box<dyn FnMut(&Checkpoint) + Send + 'a>,
    ) -> Result<Self, RollError> {
        let kinds = checkpoint
            .step_kinds()
            .map_err(|reason| CheckpointError::Corrupt {
                path: store.location().to_path_buf(),
                reason,
            })?
            .into_iter()
            .collect();
        if let Some(live) = &options.live {
            live.observe(&checkpoint);
        }
        Ok(Runner {
            ports,
            env,
            options,
            checkpoint,
            store,
            clock: RollClock::new(env.time_scale),
            stop,
            observer,
            killed: HashSet::new(),
            scheduled: HashSet::new(),
            resent: HashSet::new(),
            kinds,
            saved: Vec::new(),
            seen: None,
            group: None,
            maintenance_seen: None,
            terminating: None,
            sent_this_tick: HashSet::new(),
        })
    }

    /// Writes the checkpoint if it changed since the last write (intent
    /// before a side effect always changes it: it adds an event).
    pub(super) async fn save(&mut self) -> Result<(), CheckpointError> {
        let bytes = self.checkpoint.to_json(self.store.location())?;
        if bytes != self.saved {
            self.store.write(&self.checkpoint, &bytes).await?;
            self.saved = bytes;
            (self.observer)(&self.checkpoint);
        }
        Ok(())
    }

    pub(super) fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Runs until the plan is complete, paused, held or stopped.
    pub async fn run(self) -> Result<(Outcome, Checkpoint), RollError> {
        let (outcome, checkpoint, _) = self.run_keeping_store().await?;
        Ok((outcome, checkpoint))
    }

    /// `run`, handing back the store (to archive a completed checkpoint).
    pub async fn run_keeping_store(mut self) -> Result<Ended, RollError> {
        self.take_operations().await?;
        // An operator's hold outranks a pause: the rerun changes nothing.
        if let Some(reason) = self.held_reason(true) {
            return self.held(reason).await;
        }
        self.resume_after_pause().await?;
        loop {
            if self.stopped() {
                self.checkpoint
                    .log(EventKind::Stop, "stopped by a signal between ticks");
                self.save().await?;
                return Ok((Outcome::Stopped, self.checkpoint, self.store));
            }
            self.take_operations().await?;
            self.seen = None;
            self.group = None;
            self.maintenance_seen = None;
            self.terminating = None;
            self.sent_this_tick.clear();
            self.resolve_settled_page().await?;
            if self.checkpoint.plan.is_complete() {
                self.resolve_open_page().await?;
                let summary = self.checkpoint.summary.clone().unwrap_or_default();
                return Ok((Outcome::Complete { summary }, self.checkpoint, self.store));
            }
            let candidates = plan_candidates(&self.checkpoint.plan);
            if candidates.is_empty() {
                if let Some((_, step)) = self
                    .checkpoint
                    .plan
                    .steps()
                    .find(|(_, s)| s.status == Status::Error)
                {
                    return Err(RollError::StepInError {
                        step: step.id.clone(),
                        message: step.message.clone(),
                    });
                }
                let reason = self
                    .held_reason(false)
                    .unwrap_or_else(|| self.continue_command());
                return self.held(reason).await;
            }
            let mut finished = false;
            let mut begun = false;
            let steps_before = self.kinds.len();
            for at in candidates {
                if self.stopped() {
                    break;
                }
                match self.advance(at).await? {
                    Advanced::Done => finished = true,
                    Advanced::Waiting => begun = true,
                    Advanced::NotYet => {}
                    Advanced::Pause(reason) => return self.pause(at, reason).await,
                }
            }
            // A step added this tick (the drain's next wave) runs at once.
            finished |= self.kinds.len() != steps_before;
            self.save().await?;
            // Every step offered is waiting for another to begin (the
            // drain's terminations while an operator or a canary holds the
            // drain): nothing moves until the hold is released.
            if !finished && !begun && !self.stopped() {
                let reason = format!(
                    "the plan is held (an operator's `roller plan interrupt`, or a canary waiting): \
                     no step can begin; let it go on with: {}",
                    self.continue_command()
                );
                return self.held(reason).await;
            }
            if !finished {
                self.sleep_poll().await;
            }
        }
    }

    /// One tick of one step, with the bookkeeping around it: the step's
    /// start, its wait and deadline, its completion or failure.
    async fn advance(&mut self, at: StepIndex) -> Result<Advanced, RollError> {
        let Some(kind) = self.kinds.get(&at).cloned() else {
            return Err(RollError::refused(format!(
                "the plan's step at {at:?} was not in the checkpoint when the run began"
            )));
        };
        let id = self.checkpoint.plan.step(at).id.clone();
        let now = self.clock.now_unix_ms();
        let began = !self.checkpoint.progress.contains_key(&id);
        self.checkpoint
            .progress
            .entry(id.clone())
            .or_insert(StepProgress {
                started_unix_ms: now,
                wait: None,
            });
        let step = self.checkpoint.plan.step_mut(at);
        let before = step.status;
        if !matches!(step.status, Status::Starting | Status::Started) {
            step.status = Status::Starting;
            step.message = "acting".to_string();
        }
        let name = self.step_name(at);
        match self.tick(&kind).await {
            // Nothing was done: the step has not begun.
            Ok(Tick::NotYet(why)) => {
                if began {
                    self.checkpoint.progress.remove(&id);
                }
                let step = self.checkpoint.plan.step_mut(at);
                step.status = before;
                step.message = why;
                Ok(Advanced::NotYet)
            }
            Ok(Tick::Done(message)) => {
                let took = self
                    .checkpoint
                    .progress
                    .remove(&id)
                    .map(|p| self.clock.since(p.started_unix_ms))
                    .unwrap_or_default();
                if let Some(live) = &self.options.live {
                    live.step_took(took);
                }
                let step = self.checkpoint.plan.step_mut(at);
                step.status = Status::Complete;
                step.message = format!("{message} (took {})", human(took));
                self.checkpoint
                    .log(EventKind::Step, format!("{name} complete: {message}"));
                self.save().await?;
                Ok(Advanced::Done)
            }
            Ok(Tick::Waiting(wait)) => Ok(self.waiting(at, &id, wait)),
            // A call that failed for a passing reason counts against the
            // wait the step is in; outside a wait it starts one of its own
            // (`retry`): every step is safe to run again (intent first),
            // so the next tick does what a rerun would.
            Err(err) if err.is_transient() => {
                let kind = self
                    .checkpoint
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
                let step = self.checkpoint.plan.step_mut(at);
                step.status = Status::Started;
                Ok(Advanced::Pause(reason))
            }
            Err(err) => self.fail(at, &name, err).await,
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
        self.checkpoint.plan.step_mut(at).message =
            format!("failed at {}: {err}; rerun to retry", self.clock.utc());
        self.checkpoint
            .log(EventKind::Failure, format!("{name}: {err}"));
        if let Some(event) = self.checkpoint.events.last_mut() {
            event.label = Some(err.label().to_string());
        }
        self.save().await?;
        Err(err)
    }

    pub(super) async fn tick(&mut self, kind: &StepKind) -> Result<Tick, RollError> {
        match kind {
            StepKind::Lock => self.lock().await,
            StepKind::SuspendProcesses => self.suspend().await,
            StepKind::RaiseMaxSize => self.raise_max().await,
            StepKind::SetDesired => self.set_desired().await,
            StepKind::WaitRegistered => self.wait_registered().await,
            StepKind::Maintenance => self.maintenance().await,
            StepKind::Replace { instance } => self.replace(instance).await,
            StepKind::DrainWave { wave } => self.drain_wave(*wave).await,
            StepKind::Terminate { instance } => self.terminate(instance).await,
            StepKind::ResumeProcesses => self.resume_processes().await,
            StepKind::RestoreMaxSize => self.restore_max().await,
            StepKind::EndMaintenance => self.end_maintenance().await,
            StepKind::ReportRebalance => self.report_rebalance().await,
            StepKind::Unlock => self.unlock().await,
        }
    }

    /// Adds a step to a phase while the roll runs (the drain's next wave),
    /// with its kind, so the loop can dispatch it.
    pub(super) fn append_step(&mut self, phase: usize, step: Step, kind: StepKind) {
        let steps = &mut self.checkpoint.plan.phases[phase].steps;
        steps.push(step);
        let at = StepIndex {
            phase,
            step: steps.len() - 1,
        };
        self.kinds.insert(at, kind);
    }

    /// `phase/step`, as pauses, pages and events name a step.
    pub(super) fn step_name(&self, at: StepIndex) -> String {
        let plan = &self.checkpoint.plan;
        format!(
            "{}/{}",
            plan.phases[at.phase].id, plan.phases[at.phase].steps[at.step].id
        )
    }

    /// Why the plan offers no step, with the command that releases it;
    /// `None` when it is not held. With `past_pause`, the paused step
    /// counts as running again (what a rerun would make of it).
    fn held_reason(&self, past_pause: bool) -> Option<String> {
        let mut plan = self.checkpoint.plan.clone();
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
                continue_command(&plan, &self.store.for_command())
            )
        })
    }

    fn continue_command(&self) -> String {
        continue_command(&self.checkpoint.plan, &self.store.for_command())
    }

    async fn held(mut self, reason: String) -> Result<Ended, RollError> {
        self.checkpoint.log(EventKind::Held, reason.clone());
        self.save().await?;
        Ok((Outcome::Held { reason }, self.checkpoint, self.store))
    }

    fn paused_step(&self) -> Option<StepIndex> {
        self.paused_step_of(&self.checkpoint.pause.as_ref()?.step)
    }

    /// A rerun after a timeout: the paused step runs again with a fresh
    /// deadline (a human chose to give it more time), and the page stays
    /// open until the step completes.
    async fn resume_after_pause(&mut self) -> Result<(), RollError> {
        let Some(pause) = self.checkpoint.pause.take() else {
            return Ok(());
        };
        if let Some(at) = self.paused_step_of(&pause.step) {
            let id = self.checkpoint.plan.step(at).id.clone();
            let step = self.checkpoint.plan.step_mut(at);
            step.status = Status::Started;
            step.message = format!("resuming after the pause of {}", pause.since);
            let now = self.clock.now_unix_ms();
            if let Some(wait) = self
                .checkpoint
                .progress
                .get_mut(&id)
                .and_then(|p| p.wait.as_mut())
            {
                wait.since_unix_ms = now;
            }
        }
        if pause.paged {
            self.checkpoint.open_page = Some(super::checkpoint::OpenPage {
                step: pause.step.clone(),
                dedup_key: pause.dedup_key.clone(),
            });
        }
        self.checkpoint.log(
            EventKind::Resume,
            format!("resuming after the pause at {}", pause.step),
        );
        self.save().await?;
        Ok(())
    }

    fn paused_step_of(&self, name: &str) -> Option<StepIndex> {
        self.checkpoint
            .find_step(name)
            .filter(|&at| self.checkpoint.plan.step(at).status == Status::Delayed)
    }
}

/// The exact `roller plan continue` that releases what holds `plan`: the
/// plan's own interrupt, else the first unfinished phase that is
/// interrupted (or whose canary waits), else its first interrupted step.
/// `file` as a command must name it (`CheckpointStore::for_command`).
pub fn continue_command(plan: &Plan, file: &str) -> String {
    let base = format!("roller plan continue --file {file}");
    if plan.interrupted {
        return base;
    }
    for phase in plan
        .phases
        .iter()
        .filter(|p| p.status() != Status::Complete)
    {
        if phase.is_interrupted() {
            return format!("{base} --phase {}", phase.id);
        }
        if let Some(step) = phase
            .steps
            .iter()
            .find(|s| s.interrupted && !s.is_complete())
        {
            return format!("{base} --phase {} --step {}", phase.id, step.id);
        }
    }
    base
}
