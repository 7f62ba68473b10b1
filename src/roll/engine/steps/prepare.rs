//! The prepare phase: the group, and with it the cluster, is claimed for
//! this run (`Lock`), the
//! scaling processes that could change its capacity are suspended
//! (`SuspendProcesses`), and MaxSize is raised when `--raise-max` asks
//! (`RaiseMaxSize`).

use std::collections::HashSet;

use super::{StepAction, StepContext, Tick};
use crate::roll::decide::cluster_lock::{LockState, Verdict, judge, refusal};
use crate::roll::engine::cluster_lock;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{AutoScaling, GroupTag, ScalingProcess};
use crate::roll::record::kinds::WaitKind;
use crate::roll::record::{LOCK_STATE_TAG, RUN_ID_TAG};

/// Claims the group, and with it the cluster: one roll per cluster at a
/// time (`decide::cluster_lock`). Tags the group with the run id and the
/// lock state `pending`, reads the tag back (another run's id there, from
/// another host, stops this one), looks for other runs holding a group of
/// this cluster, and only when it finds none sets the state `held`. When
/// another run holds the cluster, or started at the same moment and wins
/// the tie, it removes its own tags and the run ends refused (exit 2),
/// having changed nothing else; a tie it wins waits for the other run to
/// back off.
///
/// Safe to re-run: the same values are written again, the read-back and
/// the look are made whatever the first attempt did, and a lock already
/// `held` by this run is done.
pub(crate) struct Lock;

impl StepAction for Lock {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let asg = cx.group().asg.clone();
        let run_id = cx.roll().run_id.to_string();
        let group = cx.ports.aws().describe_group(&asg).await?;
        match group.tag(RUN_ID_TAG) {
            Some(other) if other != run_id => {
                return Err(RollError::refused(format!(
                    "ASG {asg} is being rolled by run {other} (tag {RUN_ID_TAG}); this run stops"
                )));
            }
            Some(_) if LockState::parse(group.tag(LOCK_STATE_TAG)) == LockState::Held => {
                return Ok(Tick::Done(format!("{asg} already held by this run")));
            }
            Some(_) => {}
            // The preflight looked for other runs just before; a run
            // found now is untagged from below.
            None => {
                cx.intend(format!(
                    "tag {asg} {RUN_ID_TAG}={run_id}, {LOCK_STATE_TAG}=pending"
                ))
                .await?;
                cx.ports
                    .aws()
                    .put_tags(&asg, &lock_tags(&run_id, LockState::Pending))
                    .await?;
                let group = cx.ports.aws().describe_group(&asg).await?;
                match group.tag(RUN_ID_TAG) {
                    Some(v) if v == run_id => {}
                    other => {
                        return Err(RollError::refused(format!(
                            "another writer changed tag {RUN_ID_TAG} on {asg} to {other:?} right after this run wrote it; this run stops without changing capacity"
                        )));
                    }
                }
            }
        }
        // This run's pending tag is on the group: look again.
        let others = cluster_lock::other_runs(cx.ports, cx.env, &[&asg], &run_id).await?;
        match judge(&run_id, &others) {
            Verdict::Clear => {
                cx.intend(format!("{LOCK_STATE_TAG}=held on {asg}")).await?;
                cx.ports
                    .aws()
                    .put_tags(&asg, &lock_tags(&run_id, LockState::Held))
                    .await?;
                Ok(Tick::Done(format!(
                    "tagged {RUN_ID_TAG}={run_id}; no other roll on this cluster"
                )))
            }
            Verdict::Wait(other) => Ok(Tick::waiting(
                WaitKind::Retry,
                format!(
                    "run {} started on ASG {} at the same moment and backs off (its id is the larger); looking again",
                    other.run_id, other.group
                ),
            )),
            Verdict::Refuse(other) => {
                cx.intend(format!(
                    "untag {asg}: run {} holds this cluster",
                    other.run_id
                ))
                .await?;
                cx.ports
                    .aws()
                    .delete_tags(&asg, &[RUN_ID_TAG.to_string(), LOCK_STATE_TAG.to_string()])
                    .await?;
                Ok(Tick::Refused(refusal(&other)))
            }
        }
    }
}

/// The run id and the lock state, as the group carries them.
fn lock_tags(run_id: &str, state: LockState) -> [GroupTag; 2] {
    let tag = |key: &str, value: &str| GroupTag {
        key: key.to_string(),
        value: value.to_string(),
        propagate_at_launch: false,
    };
    [tag(RUN_ID_TAG, run_id), tag(LOCK_STATE_TAG, state.as_str())]
}

/// Suspends the configured processes that were running; what was
/// suspended before the roll is recorded (at preflight) and never resumed
/// by it.
///
/// Safe to re-run: which processes are the roll's is recorded before the
/// call, and suspending a suspended process is a no-op.
pub(crate) struct SuspendProcesses;

impl StepAction for SuspendProcesses {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let env = cx.env;
        let group = cx.group_mut();
        let before: HashSet<&str> = group.suspended_before.iter().map(String::as_str).collect();
        let ours: Vec<ScalingProcess> = env
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
        group.suspended_by_roll = ours.iter().map(|p| p.to_string()).collect();
        let list = group.suspended_by_roll.join(", ");
        let asg = group.asg.clone();
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
pub(crate) struct RaiseMaxSize;

impl StepAction for RaiseMaxSize {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let group = cx.group_mut();
        let needed = group.peak_desired();
        let original = group.original.clone();
        if needed <= original.max_size {
            return Ok(Tick::Done(format!(
                "MaxSize {} is enough",
                original.max_size
            )));
        }
        group.raised_max_from = Some(original.max_size);
        let asg = group.asg.clone();
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
