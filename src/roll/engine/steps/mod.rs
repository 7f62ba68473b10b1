//! The roll's steps, each its own type behind one trait (`StepAction`):
//! what one tick of a step does, over one context (`StepContext`) that
//! carries what the step may use and nothing of the runner's loop.
//!
//! A step never loops: the runner calls its tick, which looks at the world
//! (through the tick's context: each read at most once per tick), acts if
//! it must (its intent in the checkpoint first), and says whether the step
//! is done or what it waits for (`Tick`). Every tick is safe to run again
//! after a crash at any point; each step type's doc comment says why.
//!
//! - `prepare.rs`: `Lock`, `SuspendProcesses`, `RaiseMaxSize`.
//! - `scale_up.rs`: `SetDesired`, `WaitRegistered`, `Maintenance`.
//! - `replace.rs`: `Replace`, one instance's replacement (moves,
//!   termination, deregistration, health): the serial strategy and the
//!   drain's canaries.
//! - `drain_wave.rs`: `DrainWave`, one wave of task moves off every old
//!   agent at once.
//! - `terminate.rs`: `Terminate`, one emptied agent put down and its
//!   instance terminated.
//! - `finish.rs`: `ResumeProcesses`, `RestoreMaxSize`, `EndMaintenance`,
//!   `ReportRebalance`, `Unlock` (also what `roller abandon` runs).
//! - `rollback.rs`: `RollbackWindows`, `RollbackMoves`,
//!   `RollbackTerminate`, `RollbackLaunchSource`: the rollback phase after
//!   a failure on the new agents.
//! - `bake.rs`: no old agent goes before the first moves have stayed up
//!   on the new agents for a bake time.
//! - `task_moves.rs`: moving tasks off an agent (kills, surges, a
//!   maintenance window), shared by `Replace` and `DrainWave`.
//!
//! May import: what the engine may, but never the runner: a step gets all
//! it uses through its `StepContext`.

mod bake;
mod drain_wave;
mod finish;
mod prepare;
mod replace;
mod rollback;
mod scale_up;
mod task_moves;
mod terminate;

use std::collections::HashSet;
use std::future::Future;

use tokio::sync::watch;

use super::clock::{MarathonClock, RollClock};
use super::journal::Journal;
use super::run_options::RunOptions;
use super::tick_context::Observation;
use super::tick_context::TickContext;
use crate::plan::{Step, StepIndex};
use crate::roll::decide::failure::Evidence;
use crate::roll::decide::health::Settle;
use crate::roll::decide::safety::{self, Rules};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::record::checkpoint::{CheckpointError, RolledInstance};
use crate::roll::record::env::Environment;
use crate::roll::record::kinds::{StepKind, WaitKind};

/// What one step of the plan does each tick.
pub trait StepAction {
    /// One tick of the step: look, act if it must (intent first), and say
    /// whether it is done, what it waits for, or that it may not begin
    /// yet. Safe to run again after a crash at any point.
    fn tick<P: Ports>(
        &self,
        cx: &mut StepContext<'_, '_, P>,
    ) -> impl Future<Output = Result<Tick, RollError>> + Send;
}

/// One tick of the step `kind` names.
pub async fn tick<P: Ports>(
    kind: &StepKind,
    cx: &mut StepContext<'_, '_, P>,
) -> Result<Tick, RollError> {
    match kind {
        StepKind::Lock => prepare::Lock.tick(cx).await,
        StepKind::SuspendProcesses => prepare::SuspendProcesses.tick(cx).await,
        StepKind::RaiseMaxSize => prepare::RaiseMaxSize.tick(cx).await,
        StepKind::SetDesired => scale_up::SetDesired.tick(cx).await,
        StepKind::WaitRegistered => scale_up::WaitRegistered.tick(cx).await,
        StepKind::Maintenance => scale_up::Maintenance.tick(cx).await,
        StepKind::Replace { instance } => replace::Replace { instance }.tick(cx).await,
        StepKind::DrainWave { wave } => drain_wave::DrainWave { wave: *wave }.tick(cx).await,
        StepKind::Terminate { instance } => terminate::Terminate { instance }.tick(cx).await,
        StepKind::RollbackWindows => rollback::RollbackWindows.tick(cx).await,
        StepKind::RollbackMoves => rollback::RollbackMoves.tick(cx).await,
        StepKind::RollbackTerminate => rollback::RollbackTerminate.tick(cx).await,
        StepKind::RollbackLaunchSource => rollback::RollbackLaunchSource.tick(cx).await,
        StepKind::ResumeProcesses => finish::ResumeProcesses.tick(cx).await,
        StepKind::RestoreMaxSize => finish::RestoreMaxSize.tick(cx).await,
        StepKind::EndMaintenance => finish::EndMaintenance.tick(cx).await,
        StepKind::ReportRebalance => finish::ReportRebalance.tick(cx).await,
        StepKind::Unlock => finish::Unlock.tick(cx).await,
    }
}

/// What one tick of a step found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tick {
    /// The step is complete; the message says what it did.
    Done(String),
    /// The step waits; the runner keeps its deadline.
    Waiting(Wait),
    /// The step may not begin yet, and did nothing (a termination whose
    /// agent still holds tasks the drain is moving): it stays PENDING,
    /// with no deadline of its own; the message says what it waits for.
    NotYet(String),
    /// The step found the new image failing (a new instance whose agent
    /// never registered): the runner records it and pauses or rolls back,
    /// as for a failure the watch finds.
    Failed(Evidence),
    /// The run may not go on (another run holds the cluster), and the
    /// step left nothing changed: the run ends refused (exit 2) and its
    /// checkpoint is set aside. The message says who holds it and how to
    /// look at it or give it up.
    Refused(String),
    /// The step found what only a human can settle (an app no agent
    /// outside the old ones can take), and did nothing: the roll pauses
    /// and pages; a resume looks again.
    Pause(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    pub kind: WaitKind,
    /// What it waits for now, for `roller status` and the page.
    pub message: String,
}

impl Tick {
    pub fn waiting(kind: WaitKind, message: impl Into<String>) -> Tick {
        Tick::Waiting(Wait {
            kind,
            message: message.into(),
        })
    }
}

/// What this process has sent that the checkpoint does not keep: a
/// resumed run starts without it and asks again where a call is
/// idempotent.
#[derive(Debug, Default)]
pub struct Memory {
    /// Tasks this process asked Marathon to kill (a task being killed is
    /// not counted on again while Marathon still lists it).
    pub killed: HashSet<String>,
    /// Instances whose machine this process put in a maintenance window
    /// (asked once per process: the call is idempotent, a resume asks
    /// again).
    pub scheduled: HashSet<String>,
    /// Instances whose termination this process has sent again (a call
    /// failing tick after tick is logged once, not once per tick).
    pub resent: HashSet<String>,
    /// Marathon's clock, as late as its reports so far prove it.
    pub marathon_clock: MarathonClock,
}

/// Everything a step's tick may use, lent by the runner for that tick:
/// the world (`ports`, and `tick` for what this tick has read of it), the
/// record (`journal`: intent before effect), what this process has sent
/// (`memory`), the settings, and a way to add a step to the plan. Nothing
/// of the loop (deadlines, pauses, holds) is reachable from here.
pub struct StepContext<'r, 'o, P> {
    pub ports: P,
    pub env: &'r Environment,
    pub options: &'r RunOptions,
    pub clock: &'r RollClock,
    /// What this tick has read of the world.
    pub tick: &'r mut TickContext<P>,
    pub journal: &'r mut Journal<'o>,
    pub memory: &'r mut Memory,
    stop: &'r mut watch::Receiver<bool>,
    /// Steps added to the plan by this tick, with their kinds, for the
    /// runner to dispatch.
    appended: &'r mut Vec<(StepIndex, StepKind)>,
}

impl<'r, 'o, P: Ports> StepContext<'r, 'o, P> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ports: P,
        env: &'r Environment,
        options: &'r RunOptions,
        clock: &'r RollClock,
        tick: &'r mut TickContext<P>,
        journal: &'r mut Journal<'o>,
        memory: &'r mut Memory,
        stop: &'r mut watch::Receiver<bool>,
        appended: &'r mut Vec<(StepIndex, StepKind)>,
    ) -> Self {
        StepContext {
            ports,
            env,
            options,
            clock,
            tick,
            journal,
            memory,
            stop,
            appended,
        }
    }

    /// Records the intent of a side effect in the checkpoint and writes
    /// it, before the effect is sent.
    pub async fn intend(&mut self, message: impl Into<String>) -> Result<(), CheckpointError> {
        self.journal.intend(message).await
    }

    /// Writes the checkpoint if it changed.
    pub async fn save(&mut self) -> Result<(), CheckpointError> {
        self.journal.save().await
    }

    /// Adds `step` of `kind` to the plan's phase `phase` (the drain's next
    /// wave); the runner dispatches it from this tick on.
    pub fn append_step(&mut self, phase: usize, step: Step, kind: StepKind) {
        let steps = &mut self.journal.checkpoint.plan.phases[phase].steps;
        steps.push(step);
        let at = StepIndex {
            phase,
            step: steps.len() - 1,
        };
        self.appended.push((at, kind));
    }

    /// Whether a stop signal has arrived (a step about to send a
    /// termination stops first instead).
    pub fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Sleeps one poll interval, or less if a stop signal comes first.
    pub async fn sleep_poll(&mut self) {
        super::wait::sleep_poll(self.clock, self.stop, self.env.poll_interval).await;
    }

    /// The checkpoint's record of an instance a step of the plan names.
    pub fn rolled(&self, instance: &str) -> Result<RolledInstance, RollError> {
        self.journal
            .checkpoint
            .instances
            .iter()
            .find(|i| i.id == instance)
            .cloned()
            .ok_or_else(|| {
                RollError::refused(format!(
                    "instance {instance} is in the plan but not in the checkpoint's instance list"
                ))
            })
    }

    /// The floor every app is kept at, fixed for the roll.
    pub fn floor(&self) -> safety::Floor {
        if self.journal.checkpoint.honor_min_health {
            safety::Floor::MinHealth
        } else {
            safety::Floor::One
        }
    }

    /// What apps are kept at, judged as of `seen`: the roll's floor, and
    /// a task of an app without health checks up once it has run
    /// `settle_time` by Marathon's clock (at the latest `seen` proves).
    pub fn rules(&mut self, seen: &Observation) -> Rules {
        let now = self.clock.now();
        self.memory.marathon_clock.saw(&seen.apps, now);
        Rules {
            floor: self.floor(),
            settle: Settle {
                at: self.memory.marathon_clock.now(now),
                after: self.env.settle_time,
            },
        }
    }

    /// The agent ids of every instance being replaced.
    pub fn old_agents(&self) -> HashSet<String> {
        self.journal
            .checkpoint
            .instances
            .iter()
            .map(|i| i.agent_id.clone())
            .filter(|a| !a.is_empty())
            .collect()
    }
}

/// ` (N allowed unhealthy by --allow-unhealthy[how]: a, b)` for the apps
/// given, or nothing when there are none.
fn excused_note<'a>(apps: impl Iterator<Item = &'a str>, how: &str) -> String {
    let apps: Vec<&str> = apps.collect();
    if apps.is_empty() {
        return String::new();
    }
    format!(
        " ({} allowed unhealthy by --allow-unhealthy{how}: {})",
        apps.len(),
        apps.join(", ")
    )
}
