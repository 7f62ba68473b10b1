//! The scale-up phase: the group's desired capacity goes to N + K
//! (`SetDesired`), the new instances are awaited as active Mesos agents
//! (`WaitRegistered`), and, for the drain, every old agent goes under one
//! maintenance window (`Maintenance`).

use std::collections::HashSet;
use std::time::SystemTime;

use super::task_moves::WINDOW;
use super::{StepAction, StepContext, Tick};
use crate::roll::decide::failure;
use crate::roll::decide::roll_plan::WAIT_REGISTERED;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{AutoScaling, LifecycleState, match_agents};
use crate::roll::ports::mesos::{MesosMaster, Unavailability};
use crate::roll::record::checkpoint::{MaintenanceRecord, NewAgent, RolledInstance};
use crate::roll::record::kinds::WaitKind;

/// Sets the desired capacity to N + K − terminated.
///
/// Safe to re-run: the value is absolute, computed from the checkpoint,
/// so no rerun can overshoot.
pub(crate) struct SetDesired;

impl StepAction for SetDesired {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let desired = cx.group().scale_up_desired();
        let asg = cx.group().asg.clone();
        cx.intend(format!("set desired capacity of {asg} to {desired}"))
            .await?;
        cx.ports.aws().set_desired_capacity(&asg, desired).await?;
        Ok(Tick::Done(format!("desired capacity {desired}")))
    }
}

/// Waits until the new instances (those not in the group when the roll
/// began) number desired − remaining originals, are in service, and each
/// matches one active Mesos agent.
///
/// Safe to re-run: it only reads.
pub(crate) struct WaitRegistered;

impl StepAction for WaitRegistered {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let record = cx.group();
        let expected = record
            .scale_up_desired()
            .saturating_sub(record.original_remaining());
        let waiting = |what: String| {
            Ok(Tick::waiting(
                WaitKind::Registered,
                format!(
                    "waiting for {expected} new instance(s) to register as Mesos agents: {what}"
                ),
            ))
        };
        let original: HashSet<String> = record.original.instance_ids.iter().cloned().collect();
        let asg = record.asg.clone();
        let asg = asg.as_str();
        let aws = cx.ports.aws();
        let group = aws.describe_group(asg).await?;
        let new: Vec<String> = group
            .instances
            .iter()
            .filter(|i| !original.contains(&i.id))
            .filter(|i| i.lifecycle_state == LifecycleState::InService)
            .map(|i| i.id.clone())
            .collect();
        let waited = cx
            .progress_of(WAIT_REGISTERED)
            .map(|p| cx.clock.since(p.started_unix_ms))
            .unwrap_or_default();
        let grace = failure::register_grace(cx.env.timeouts.scale_up);
        if new.len() < expected as usize {
            let launch = last_failed_launch(aws, asg).await;
            // Launches that keep failing are the new launch template
            // failing: found after the grace, not at the timeout.
            if let Some((activity, message)) = &launch
                && let Some(found) = failure::launches_failing(
                    (activity, message),
                    new.len(),
                    expected as usize,
                    waited,
                    grace,
                    cx.roll().acknowledged_failures,
                )
            {
                return Ok(Tick::Failed(found));
            }
            let failed = launch
                .map(|(_, m)| format!("; last failed launch: {m}"))
                .unwrap_or_default();
            return waiting(format!(
                "{} of {expected} new instances in service{failed}",
                new.len()
            ));
        }
        let ec2 = aws.describe_instances(&new).await?;
        let agents: Vec<_> = cx
            .tick
            .agents()
            .await?
            .iter()
            .filter(|a| a.active)
            .map(|a| a.identity())
            .collect();
        let pairs = match_agents(&cx.env.agent_match, &ec2, &agents).matched;
        let matched = pairs.len();
        if matched < expected as usize {
            // An instance in service whose agent never comes is the new
            // image failing: found after a grace, not at the timeout.
            let registered: HashSet<&String> = pairs.iter().map(|(i, _)| i).collect();
            let missing: Vec<String> = new
                .iter()
                .filter(|i| !registered.contains(i))
                .cloned()
                .collect();
            if waited >= grace {
                let launch = last_failed_launch(aws, asg).await;
                if let Some(found) = failure::unregistered(
                    &missing,
                    waited,
                    grace,
                    launch.as_ref().map(|(_, m)| m.as_str()),
                    cx.roll().acknowledged_failures,
                ) {
                    return Ok(Tick::Failed(found));
                }
            }
            return waiting(format!(
                "{matched} of {expected} new instances are active Mesos agents"
            ));
        }
        // What the roll watches for failure from now on (kept across
        // reruns: a rerun of this step records the same agents).
        let recorded = &mut cx.group_mut().new_agents;
        for (instance, agent_id) in pairs {
            let Some(agent) = agents.iter().find(|a| a.id == agent_id) else {
                continue;
            };
            if recorded.iter().any(|r| r.instance == instance) {
                continue;
            }
            recorded.push(NewAgent {
                instance,
                agent_id,
                hostname: agent.hostname.clone(),
                ip: agent.ip.map(|ip| ip.to_string()),
            });
        }
        Ok(Tick::Done(format!("{matched} new agents registered")))
    }
}

/// The group's last failed launch among its latest activities, as its
/// activity id and AWS's reason; `None` when there is none or the look
/// fails (it only adds to what the step says).
async fn last_failed_launch<A: AutoScaling>(aws: &A, asg: &str) -> Option<(String, String)> {
    let activities = aws.scaling_activities(asg, 5).await.ok()?;
    let failed = activities.into_iter().find(|a| a.is_failed())?;
    Some((
        failed.id,
        failed.status_message.unwrap_or(failed.description),
    ))
}

/// The drain's first act once the new agents are up: one maintenance
/// window over every agent to replace (merged into the schedule), so
/// Marathon places no task on an old agent from now on and every task
/// killed there relaunches on a new one.
///
/// Safe to re-run: the machines are recorded first (so finish removes
/// their windows whatever happens next), and merging the same machines
/// into the schedule again changes nothing.
pub(crate) struct Maintenance;

impl StepAction for Maintenance {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let group = cx.group_mut();
        let machines: Vec<MaintenanceRecord> = group
            .instances
            .iter()
            .filter(|i| !i.hostname.is_empty())
            .map(RolledInstance::machine)
            .collect();
        if machines.is_empty() {
            return Ok(Tick::Done(
                "no old agent to put under maintenance".to_string(),
            ));
        }
        for machine in &machines {
            if !group.maintenance.contains(machine) {
                group.maintenance.push(machine.clone());
            }
        }
        cx.intend(format!(
            "one maintenance window for the {} old agent(s)",
            machines.len()
        ))
        .await?;
        let ids: Vec<_> = machines.iter().map(MaintenanceRecord::machine_id).collect();
        let start = SystemTime::now() - std::time::Duration::from_secs(60);
        cx.ports
            .mesos()
            .schedule_maintenance(
                &ids,
                Unavailability::new(start, cx.clock.window_span(WINDOW)),
            )
            .await?;
        let all: Vec<String> = cx.group().instances.iter().map(|i| i.id.clone()).collect();
        cx.memory.scheduled.extend(all);
        Ok(Tick::Done(format!(
            "{} old agent(s) under one maintenance window: Marathon places no new task on them",
            machines.len()
        )))
    }
}
