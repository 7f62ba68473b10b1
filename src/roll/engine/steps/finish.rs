//! The finish phase, which leaves the group as the roll found it: what the
//! roll suspended resumed (`ResumeProcesses`), MaxSize restored
//! (`RestoreMaxSize`), its maintenance windows removed
//! (`EndMaintenance`), the AZ moves rebalancing needs reported
//! (`ReportRebalance`), and its tag removed (`Unlock`). `roller abandon`
//! runs these steps too (all but the report), so both undo alike.

use std::collections::BTreeMap;

use super::{StepAction, StepContext, Tick};
use crate::roll::decide::rebalance;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{AutoScaling, LifecycleState, ScalingProcess};
use crate::roll::ports::mesos::{MachineId, MesosMaster};
use crate::roll::record::checkpoint::{EventKind, MaintenanceRecord};
use crate::roll::record::{LOCK_STATE_TAG, RUN_ID_TAG};

/// Resumes only what the roll suspended, keeping AZRebalance suspended
/// when the AZs are uneven (unless told otherwise).
///
/// Safe to re-run: resuming a running process is a no-op.
pub(crate) struct ResumeProcesses;

impl StepAction for ResumeProcesses {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let asg = cx.group().asg.clone();
        let moves = rebalance_moves(cx.ports.aws(), &asg).await?;
        let by_roll = &cx.group().suspended_by_roll;
        let mut resume: Vec<ScalingProcess> =
            by_roll.iter().map(|p| ScalingProcess::parse(p)).collect();
        let mut kept = String::new();
        if !moves.moves.is_empty() && !cx.options.resume_az_rebalance {
            resume.retain(|p| *p != ScalingProcess::AZRebalance);
            if by_roll.iter().any(|p| p == "AZRebalance") {
                kept = format!(
                    "; AZRebalance left suspended ({} move(s) needed, it would terminate loaded agents); \
                     resume it with: aws autoscaling resume-processes --auto-scaling-group-name {asg} --scaling-processes AZRebalance",
                    moves.moves.len()
                );
            }
        }
        if resume.is_empty() {
            return Ok(Tick::Done(format!("nothing to resume{kept}")));
        }
        let list = resume
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        cx.intend(format!("resume {list}")).await?;
        cx.ports.aws().resume_processes(&asg, &resume).await?;
        Ok(Tick::Done(format!("resumed {list}{kept}")))
    }
}

/// Restores the MaxSize that `--raise-max` raised. The group must fit:
/// while its desired capacity is still above the old MaxSize (a roll
/// abandoned before its terminations), MaxSize is restored only down to
/// the desired capacity, and the message says so.
///
/// Safe to re-run: the value is absolute.
pub(crate) struct RestoreMaxSize;

impl StepAction for RestoreMaxSize {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let checkpoint = cx.group();
        let Some(max) = checkpoint.raised_max_from else {
            return Ok(Tick::Done("MaxSize was not raised".to_string()));
        };
        let asg = &checkpoint.asg;
        let min = checkpoint.original.min_size;
        let aws = cx.ports.aws();
        let desired = aws.describe_group(asg).await?.desired_capacity;
        let to = max.max(desired);
        aws.update_size_limits(asg, min, to).await?;
        Ok(Tick::Done(if to == max {
            format!("MaxSize restored to {max}")
        } else {
            format!(
                "MaxSize set to {to}, not {max}: the desired capacity is {desired}; lower it, then set MaxSize {max} by hand"
            )
        }))
    }
}

/// Brings up the roll's machines that are DOWN (which also takes them out
/// of the schedule: Mesos refuses a schedule that drops a DOWN machine),
/// then removes the windows the roll added.
///
/// Safe to re-run: only DOWN machines are brought up, and removing an
/// absent window is a no-op.
pub(crate) struct EndMaintenance;

impl StepAction for EndMaintenance {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let machines: Vec<MachineId> = cx
            .group()
            .maintenance
            .iter()
            .map(MaintenanceRecord::machine_id)
            .collect();
        if machines.is_empty() {
            return Ok(Tick::Done("no maintenance window to remove".to_string()));
        }
        let status = cx.ports.mesos().maintenance_status().await?;
        let down: Vec<MachineId> = status
            .down
            .into_iter()
            .filter(|d| machines.iter().any(|m| m.same_machine(d)))
            .collect();
        if !down.is_empty() {
            cx.intend(format!("bring {} downed machine(s) up", down.len()))
                .await?;
            cx.ports.mesos().machines_up(&down).await?;
        }
        cx.ports.mesos().cancel_maintenance(&machines).await?;
        Ok(Tick::Done(format!(
            "{} maintenance window(s) removed ({} machine(s) brought up)",
            machines.len(),
            down.len()
        )))
    }
}

/// Reports the moves AZ rebalancing needs and keeps the report as the
/// roll's summary.
///
/// Safe to re-run: it only reads (and writes the same report again).
pub(crate) struct ReportRebalance;

impl StepAction for ReportRebalance {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let asg = cx.group().asg.clone();
        let moves = rebalance_moves(cx.ports.aws(), &asg).await?;
        let counts = moves
            .balanced
            .iter()
            .map(|(az, n)| format!("{az}={n}"))
            .collect::<Vec<_>>()
            .join(",");
        let message = if moves.moves.is_empty() {
            "AZs balanced: no rebalance move needed".to_string()
        } else {
            let list = moves
                .moves
                .iter()
                .map(|m| format!("{} -> {}", m.from, m.to))
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "{} rebalance move(s): {list} (balanced: {counts})",
                moves.moves.len()
            )
        };
        cx.record(EventKind::Rebalance, message.clone());
        cx.summarize(&message);
        Ok(Tick::Done(message))
    }
}

/// Removes the run-id tag (and the lock state beside it) if it is still
/// this run's (another run's tags are never touched).
///
/// Safe to re-run: the intent is recorded before the tag is removed (the
/// step then reads STARTING), so a resume that finds the tag gone knows
/// this run removed it.
pub(crate) struct Unlock;

impl StepAction for Unlock {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let asg = cx.group().asg.clone();
        let group = cx.ports.aws().describe_group(&asg).await?;
        Ok(Tick::Done(match group.tag(RUN_ID_TAG) {
            Some(v) if v == cx.roll().run_id => {
                cx.intend(format!("remove tag {RUN_ID_TAG}")).await?;
                cx.ports
                    .aws()
                    .delete_tags(&asg, &[RUN_ID_TAG.to_string(), LOCK_STATE_TAG.to_string()])
                    .await?;
                format!("tag {RUN_ID_TAG} removed")
            }
            Some(other) => format!("tag {RUN_ID_TAG} belongs to run {other}: left alone"),
            None => format!("tag {RUN_ID_TAG} already gone"),
        }))
    }
}

/// The AZ moves rebalancing needs, from the group's in-service instances
/// now.
async fn rebalance_moves<A: AutoScaling>(
    aws: &A,
    asg: &str,
) -> Result<rebalance::Rebalance, RollError> {
    let group = aws.describe_group(asg).await?;
    let mut counts: BTreeMap<String, u32> = group
        .availability_zones
        .iter()
        .map(|az| (az.clone(), 0))
        .collect();
    for i in &group.instances {
        if i.lifecycle_state == LifecycleState::InService {
            *counts.entry(i.availability_zone.clone()).or_insert(0) += 1;
        }
    }
    Ok(rebalance::rebalance(&counts))
}
