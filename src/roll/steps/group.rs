//! The steps on the Auto Scaling group: prepare (lock, suspend, raise
//! MaxSize), scale-up (set desired, wait for the new agents) and finish
//! (resume, restore MaxSize, end maintenance, report rebalance, unlock).
//! `roller abandon` calls the finish steps too, so both undo alike.

use std::collections::{BTreeMap, HashSet};

use super::super::checkpoint::{EventKind, MaintenanceRecord};
use super::super::cluster::{RUN_ID_TAG, active_agents, count, describe};
use super::super::error::RollError;
use super::super::ports::auto_scaling::{
    AutoScaling, GroupTag, LifecycleState, ScalingProcess, match_agents,
};
use super::super::ports::marathon::Marathon;
use super::super::ports::mesos::{MachineId, MesosMaster};
use super::super::ports::pager::Pager;
use super::super::rebalance;
use super::super::runner::Runner;
use super::{Tick, WaitKind};

impl<A, M, K, P> Runner<'_, A, M, K, P>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
{
    /// Tags the group with the run id, then reads the tag back: another
    /// run's id there (from another host) stops this one. Re-running
    /// writes the same value again.
    pub(in crate::roll) async fn lock(&mut self) -> Result<Tick, RollError> {
        let asg = self.checkpoint.asg.clone();
        let run_id = self.checkpoint.run_id.clone();
        let group = describe(self.ports.aws, &asg).await?;
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
        self.checkpoint
            .intend(format!("tag {asg} {RUN_ID_TAG}={run_id}"));
        self.save().await?;
        self.ports.aws.put_tags(&asg, &[tag]).await?;
        let group = describe(self.ports.aws, &asg).await?;
        match group.tag(RUN_ID_TAG) {
            Some(v) if v == run_id => Ok(Tick::Done(format!("tagged {RUN_ID_TAG}={run_id}"))),
            other => Err(RollError::refused(format!(
                "another writer changed tag {RUN_ID_TAG} on {asg} to {other:?} right after this run wrote it; this run stops without changing capacity"
            ))),
        }
    }

    /// Suspends the configured processes that were running. Suspending a
    /// suspended process is a no-op, so re-running is safe; what was
    /// suspended before the roll is recorded and never resumed by it.
    pub(in crate::roll) async fn suspend(&mut self) -> Result<Tick, RollError> {
        let before: HashSet<&str> = self
            .checkpoint
            .suspended_before
            .iter()
            .map(String::as_str)
            .collect();
        let ours: Vec<ScalingProcess> = self
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
        self.checkpoint.suspended_by_roll = ours.iter().map(|p| p.to_string()).collect();
        let list = self.checkpoint.suspended_by_roll.join(", ");
        self.checkpoint.intend(format!("suspend {list}"));
        self.save().await?;
        let asg = self.checkpoint.asg.clone();
        self.ports.aws.suspend_processes(&asg, &ours).await?;
        Ok(Tick::Done(format!("suspended {list}")))
    }

    /// Sets MaxSize to N + K (absolute; re-running sets the same value).
    pub(in crate::roll) async fn raise_max(&mut self) -> Result<Tick, RollError> {
        let needed = self.checkpoint.desired_after(0);
        let original = self.checkpoint.original.clone();
        if needed <= original.max_size {
            return Ok(Tick::Done(format!(
                "MaxSize {} is enough",
                original.max_size
            )));
        }
        self.checkpoint.raised_max_from = Some(original.max_size);
        self.checkpoint
            .intend(format!("raise MaxSize {} -> {needed}", original.max_size));
        self.save().await?;
        let asg = self.checkpoint.asg.clone();
        self.ports
            .aws
            .update_size_limits(&asg, original.min_size, needed)
            .await?;
        Ok(Tick::Done(format!(
            "MaxSize raised {} -> {needed}",
            original.max_size
        )))
    }

    /// Sets the desired capacity to N + K − terminated, computed from the
    /// checkpoint: an absolute value, so no rerun can overshoot.
    pub(in crate::roll) async fn set_desired(&mut self) -> Result<Tick, RollError> {
        let desired = self.checkpoint.scale_up_desired();
        let asg = self.checkpoint.asg.clone();
        self.checkpoint
            .intend(format!("set desired capacity of {asg} to {desired}"));
        self.save().await?;
        self.ports.aws.set_desired_capacity(&asg, desired).await?;
        Ok(Tick::Done(format!("desired capacity {desired}")))
    }

    /// Waits until the new instances (those not in the group when the roll
    /// began) number desired − remaining originals, are in service, and
    /// each matches one active Mesos agent. Read-only: safe to re-run.
    pub(in crate::roll) async fn wait_registered(&mut self) -> Result<Tick, RollError> {
        let expected = self
            .checkpoint
            .scale_up_desired()
            .saturating_sub(self.checkpoint.original_remaining());
        let waiting = |what: String| {
            Ok(Tick::waiting(
                WaitKind::Registered,
                format!(
                    "waiting for {expected} new instance(s) to register as Mesos agents: {what}"
                ),
            ))
        };
        let original: HashSet<&String> = self.checkpoint.original.instance_ids.iter().collect();
        let asg = &self.checkpoint.asg;
        let group = describe(self.ports.aws, asg).await?;
        let new: Vec<String> = group
            .instances
            .iter()
            .filter(|i| !original.contains(&i.id))
            .filter(|i| i.lifecycle_state == LifecycleState::InService)
            .map(|i| i.id.clone())
            .collect();
        if count(new.len()) < expected {
            let failed = self
                .ports
                .aws
                .scaling_activities(asg, 5)
                .await
                .ok()
                .and_then(|a| a.into_iter().find(|a| a.is_failed()))
                .map(|a| {
                    format!(
                        "; last failed launch: {}",
                        a.status_message.unwrap_or(a.description)
                    )
                })
                .unwrap_or_default();
            return waiting(format!(
                "{} of {expected} new instances in service{failed}",
                new.len()
            ));
        }
        let ec2 = self.ports.aws.describe_instances(&new).await?;
        let agents = active_agents(self.ports.mesos).await?;
        let matched = match_agents(&self.env.agent_match, &ec2, &agents)
            .matched
            .len();
        if count(matched) < expected {
            return waiting(format!(
                "{matched} of {expected} new instances are active Mesos agents"
            ));
        }
        Ok(Tick::Done(format!("{matched} new agents registered")))
    }

    /// Resumes only what the roll suspended, keeping AZRebalance suspended
    /// when the AZs are uneven (unless told otherwise). Resuming a running
    /// process is a no-op: safe to re-run.
    pub(in crate::roll) async fn resume_processes(&mut self) -> Result<Tick, RollError> {
        let asg = self.checkpoint.asg.clone();
        let moves = self.rebalance_moves().await?;
        let mut resume: Vec<ScalingProcess> = self
            .checkpoint
            .suspended_by_roll
            .iter()
            .map(|p| ScalingProcess::parse(p))
            .collect();
        let mut kept = String::new();
        if !moves.moves.is_empty() && !self.options.resume_az_rebalance {
            resume.retain(|p| *p != ScalingProcess::AZRebalance);
            if self
                .checkpoint
                .suspended_by_roll
                .iter()
                .any(|p| p == "AZRebalance")
            {
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
        self.checkpoint.intend(format!("resume {list}"));
        self.save().await?;
        self.ports.aws.resume_processes(&asg, &resume).await?;
        Ok(Tick::Done(format!("resumed {list}{kept}")))
    }

    /// Restores the MaxSize that `--raise-max` raised (absolute: safe to
    /// re-run). The group must fit: while its desired capacity is still
    /// above the old MaxSize (a roll abandoned before its terminations),
    /// MaxSize is restored only down to the desired capacity, and the
    /// message says so.
    pub(in crate::roll) async fn restore_max(&mut self) -> Result<Tick, RollError> {
        let Some(max) = self.checkpoint.raised_max_from else {
            return Ok(Tick::Done("MaxSize was not raised".to_string()));
        };
        let asg = self.checkpoint.asg.clone();
        let min = self.checkpoint.original.min_size;
        let desired = describe(self.ports.aws, &asg).await?.desired_capacity;
        let to = max.max(desired);
        self.ports.aws.update_size_limits(&asg, min, to).await?;
        Ok(Tick::Done(if to == max {
            format!("MaxSize restored to {max}")
        } else {
            format!(
                "MaxSize set to {to}, not {max}: the desired capacity is {desired}; lower it, then set MaxSize {max} by hand"
            )
        }))
    }

    /// Brings up the roll's machines that are DOWN (which also takes them
    /// out of the schedule: Mesos refuses a schedule that drops a DOWN
    /// machine), then removes the windows the roll added. Removing an
    /// absent window is a no-op and only DOWN machines are brought up, so
    /// it is safe to re-run.
    pub(in crate::roll) async fn end_maintenance(&mut self) -> Result<Tick, RollError> {
        let machines: Vec<MachineId> = self
            .checkpoint
            .maintenance
            .iter()
            .map(MaintenanceRecord::machine_id)
            .collect();
        if machines.is_empty() {
            return Ok(Tick::Done("no maintenance window to remove".to_string()));
        }
        let status = self.ports.mesos.maintenance_status().await?;
        let down: Vec<MachineId> = status
            .down
            .into_iter()
            .filter(|d| machines.iter().any(|m| m.same_machine(d)))
            .collect();
        if !down.is_empty() {
            self.checkpoint
                .intend(format!("bring {} downed machine(s) up", down.len()));
            self.save().await?;
            self.ports.mesos.machines_up(&down).await?;
        }
        self.ports.mesos.cancel_maintenance(&machines).await?;
        Ok(Tick::Done(format!(
            "{} maintenance window(s) removed ({} machine(s) brought up)",
            machines.len(),
            down.len()
        )))
    }

    async fn rebalance_moves(&self) -> Result<rebalance::Rebalance, RollError> {
        let group = describe(self.ports.aws, &self.checkpoint.asg).await?;
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

    /// Reports the moves AZ rebalancing needs (read-only) and keeps the
    /// report as the roll's summary.
    pub(in crate::roll) async fn report_rebalance(&mut self) -> Result<Tick, RollError> {
        let moves = self.rebalance_moves().await?;
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
        self.checkpoint.log(EventKind::Rebalance, message.clone());
        self.checkpoint.summary = Some(message.clone());
        Ok(Tick::Done(message))
    }

    /// Removes the run-id tag if it is still ours (another run's tag is
    /// never touched).
    pub(in crate::roll) async fn unlock(&mut self) -> Result<Tick, RollError> {
        let asg = self.checkpoint.asg.clone();
        let group = describe(self.ports.aws, &asg).await?;
        Ok(Tick::Done(match group.tag(RUN_ID_TAG) {
            Some(v) if v == self.checkpoint.run_id => {
                // Recorded first (the step then reads STARTING): a resume
                // after a crash between the two finds the tag gone and
                // must know this run removed it.
                self.checkpoint.intend(format!("remove tag {RUN_ID_TAG}"));
                self.save().await?;
                self.ports
                    .aws
                    .delete_tags(&asg, &[RUN_ID_TAG.to_string()])
                    .await?;
                format!("tag {RUN_ID_TAG} removed")
            }
            Some(other) => format!("tag {RUN_ID_TAG} belongs to run {other}: left alone"),
            None => format!("tag {RUN_ID_TAG} already gone"),
        }))
    }
}
