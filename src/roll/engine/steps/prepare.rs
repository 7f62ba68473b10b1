//! The prepare phase: the group is claimed for this run (`Lock`), the
//! scaling processes that could change its capacity are suspended
//! (`SuspendProcesses`), and MaxSize is raised when `--raise-max` asks
//! (`RaiseMaxSize`).

use std::collections::HashSet;

use super::{StepAction, StepContext, Tick};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{AutoScaling, GroupTag, ScalingProcess};
use crate::roll::record::RUN_ID_TAG;

/// Tags the group with the run id, then reads the tag back: another run's
/// id there (from another host) stops this one.
///
/// Safe to re-run: the same value is written again, and the read-back
/// checks it whatever the first attempt did.
pub struct Lock;

impl StepAction for Lock {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let asg = cx.journal.checkpoint.asg.clone();
        let run_id = cx.journal.checkpoint.run_id.clone();
        let group = cx.ports.aws().describe_group(&asg).await?;
        if let Some(other) = group.tag(RUN_ID_TAG).filter(|v| *v != run_id) {
            return Err(RollError::refused(format!(
                "ASG {asg} is being rolled by run {other} (tag {RUN_ID_TAG}); this run stops"
            )));
        }
        let tag = GroupTag {
            key: RUN_ID_TAG.to_string(),
            value: run_id.clone(),
            propagate_at_launch: false,
        };
        cx.intend(format!("tag {asg} {RUN_ID_TAG}={run_id}"))
            .await?;
        cx.ports.aws().put_tags(&asg, &[tag]).await?;
        let group = cx.ports.aws().describe_group(&asg).await?;
        match group.tag(RUN_ID_TAG) {
            Some(v) if v == run_id => Ok(Tick::Done(format!("tagged {RUN_ID_TAG}={run_id}"))),
            other => Err(RollError::refused(format!(
                "another writer changed tag {RUN_ID_TAG} on {asg} to {other:?} right after this run wrote it; this run stops without changing capacity"
            ))),
        }
    }
}

/// Suspends the configured processes that were running; what was
/// suspended before the roll is recorded (at preflight) and never resumed
/// by it.
///
/// Safe to re-run: which processes are the roll's is recorded before the
/// call, and suspending a suspended process is a no-op.
pub struct SuspendProcesses;

impl StepAction for SuspendProcesses {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let checkpoint = &mut cx.journal.checkpoint;
        let before: HashSet<&str> = checkpoint
            .suspended_before
            .iter()
            .map(String::as_str)
            .collect();
        let ours: Vec<ScalingProcess> = cx
            .env
            .suspend_processes
            .iter()
            .filter(|p| !before.contains(p.as_str()))
            .cloned()
            .collect();
        if ours.is_empty() {
            return Ok(Tick::Done(
                "every process to suspend was already suspended".to_string(),
            ));
        }
        checkpoint.suspended_by_roll = ours.iter().map(|p| p.to_string()).collect();
        let list = checkpoint.suspended_by_roll.join(", ");
        let asg = checkpoint.asg.clone();
        cx.intend(format!("suspend {list}")).await?;
        cx.ports.aws().suspend_processes(&asg, &ours).await?;
        Ok(Tick::Done(format!("suspended {list}")))
    }
}

/// Sets MaxSize to N + K when the group's MaxSize would refuse the
/// scale-up (`--raise-max`); the MaxSize it had is recorded first, so
/// finish restores it.
///
/// Safe to re-run: the value is absolute.
pub struct RaiseMaxSize;

impl StepAction for RaiseMaxSize {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let checkpoint = &mut cx.journal.checkpoint;
        let needed = checkpoint.desired_after(0);
        let original = checkpoint.original.clone();
        if needed <= original.max_size {
            return Ok(Tick::Done(format!(
                "MaxSize {} is enough",
                original.max_size
            )));
        }
        checkpoint.raised_max_from = Some(original.max_size);
        let asg = checkpoint.asg.clone();
        cx.intend(format!("raise MaxSize {} -> {needed}", original.max_size))
            .await?;
        cx.ports
            .aws()
            .update_size_limits(&asg, original.min_size, needed)
            .await?;
        Ok(Tick::Done(format!(
            "MaxSize raised {} -> {needed}",
            original.max_size
        )))
    }
}
