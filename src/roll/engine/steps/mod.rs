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
//! - `held.rs`: `HeldInstances`, instances in Standby or scale-in
//!   protected brought into the roll (`--standby`, `--protected`).
//! - `warm_pool.rs`: `WarmPool` and `RollbackWarmPool`, the warm pool's
//!   outdated instances replaced.
//! - `scale_up.rs`: `SetDesired`, `WaitRegistered`, `Maintenance`.
//! - `replace.rs`: `Replace`, one instance's replacement (moves,
//!   termination, deregistration, health): the serial strategy and the
//!   drain's canaries.
//! - `drain_wave.rs`: `DrainWave`, one wave of task moves off every old
//!   agent at once.
//! - `terminate.rs`: `Terminate`, one emptied agent put down and its
//!   instance terminated.
//! - `batch.rs`: `OpenBatch`, a capped surge's next batch launched and
//!   its old agents opened to the drain.
//! - `finish.rs`: `ResumeProcesses`, `RestoreMaxSize`, `EndMaintenance`,
//!   `ReportRebalance`, `Unlock` (also what `roller abandon` runs).
//! - `rollback.rs`: `RollbackWindows`, `RollbackMoves` (in
//!   `rollback/moves.rs`),
//!   `RollbackTerminate`, `RollbackLaunchSource`: the rollback phase after
//!   a failure on the new agents.
//! - `lifecycle_waits.rs`: instances held by lifecycle hooks: roller's
//!   termination hooks completed, others' waited for with a longer
//!   deadline.
//! - `bake.rs`: no old agent goes before the first moves have stayed up
//!   on the new agents for a bake time.
//! - `task_moves.rs`: moving tasks off an agent (kills, surges, a
//!   maintenance window), shared by `Replace` and `DrainWave`.
//! - `other_tasks.rs`: other frameworks' tasks (job runs) on an agent
//!   that goes, waited for, then drained (`DRAIN_AGENT`).
//! - `pods.rs`: DC/OS SDK services' pods on an agent that goes, replaced
//!   through the service's API one pod of a service at a time (the
//!   replace under way in `pods/replace.rs`).
//!
//! May import: what the engine may, but never the runner or the journal:
//! a step gets all it uses through its `StepContext`
//! (`engine/step_context.rs`), which lends it its group's record and
//! narrow ways to write the rest.

mod bake;
mod batch;
mod batch_room;
mod drain_wave;
mod finish;
mod held;
mod lifecycle_waits;
mod other_tasks;
mod pods;
mod prepare;
mod replace;
mod rollback;
mod scale_up;
mod task_moves;
mod terminate;
mod warm_pool;
mod windows;

use std::future::Future;
use std::time::Duration;

pub(crate) use super::step_context::{Memory, StepContext};
use crate::roll::decide::failure::Evidence;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::record::kinds::{StepKind, WaitKind};
pub(crate) use task_moves::Undone;

/// What one step of the plan does each tick.
pub(crate) trait StepAction {
    /// One tick of the step: look, act if it must (intent first), and say
    /// whether it is done, what it waits for, or that it may not begin
    /// yet. Safe to run again after a crash at any point.
    fn tick<P: Ports>(
        &self,
        cx: &mut StepContext<'_, '_, P>,
    ) -> impl Future<Output = Result<Tick, RollError>> + Send;
}

/// One tick of the step `kind` names.
pub(crate) async fn tick<P: Ports>(
    kind: &StepKind,
    cx: &mut StepContext<'_, '_, P>,
) -> Result<Tick, RollError> {
    match kind {
        StepKind::Lock => prepare::Lock.tick(cx).await,
        StepKind::SuspendProcesses => prepare::SuspendProcesses.tick(cx).await,
        StepKind::RaiseMaxSize => prepare::RaiseMaxSize.tick(cx).await,
        StepKind::HeldInstances => held::HeldInstances.tick(cx).await,
        StepKind::WarmPool => {
            warm_pool::ReplaceWarmPool { rollback: false }
                .tick(cx)
                .await
        }
        StepKind::SetDesired => scale_up::SetDesired.tick(cx).await,
        StepKind::WaitRegistered => scale_up::WaitRegistered.tick(cx).await,
        StepKind::Maintenance => scale_up::Maintenance.tick(cx).await,
        StepKind::Replace { instance } => replace::Replace { instance }.tick(cx).await,
        StepKind::DrainWave { wave } => drain_wave::DrainWave { wave: *wave }.tick(cx).await,
        StepKind::Terminate { instance } => terminate::Terminate { instance }.tick(cx).await,
        StepKind::OpenBatch { batch } => batch::OpenBatch { batch: *batch }.tick(cx).await,
        StepKind::RollbackWindows => rollback::RollbackWindows.tick(cx).await,
        StepKind::RollbackMoves => rollback::RollbackMoves.tick(cx).await,
        StepKind::RollbackTerminate => rollback::RollbackTerminate.tick(cx).await,
        StepKind::RollbackLaunchSource => rollback::RollbackLaunchSource.tick(cx).await,
        StepKind::RollbackWarmPool => warm_pool::ReplaceWarmPool { rollback: true }.tick(cx).await,
        StepKind::ResumeProcesses => finish::ResumeProcesses.tick(cx).await,
        StepKind::RestoreMaxSize => finish::RestoreMaxSize.tick(cx).await,
        StepKind::EndMaintenance => finish::EndMaintenance.tick(cx).await,
        StepKind::ReportRebalance => finish::ReportRebalance.tick(cx).await,
        StepKind::Unlock => finish::Unlock.tick(cx).await,
    }
}

/// What one tick of a step found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tick {
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
pub(crate) struct Wait {
    pub(crate) kind: WaitKind,
    /// What it waits for now, for `roller status` and the page.
    pub(crate) message: String,
    /// Added to the kind's timeout this tick: the heartbeat timeout of a
    /// lifecycle hook that holds the instance waited for, which is
    /// someone else's to end (recomputed each tick, never stored).
    pub(crate) extension: Duration,
}

impl Tick {
    pub(crate) fn waiting(kind: WaitKind, message: impl Into<String>) -> Tick {
        Tick::waiting_longer(kind, Duration::ZERO, message)
    }

    /// A wait whose deadline is `extension` later than its kind's.
    pub(crate) fn waiting_longer(
        kind: WaitKind,
        extension: Duration,
        message: impl Into<String>,
    ) -> Tick {
        Tick::Waiting(Wait {
            kind,
            message: message.into(),
            extension,
        })
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
