//! Runs a roll's plan step by step against the ports, writing the
//! checkpoint before (intent) and after (result) every side effect.
//!
//! Every step is idempotent (each action says why), so a resume re-enters
//! the step that was running. Every wait has a deadline: on timeout the
//! plan is interrupted, the pause recorded, a page sent, and the run
//! returns `Outcome::Paused` (exit 3). A stop signal is honoured between
//! API calls, never in the middle of one.

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::watch;

use super::checkpoint::{
    Checkpoint, CheckpointError, MaintenanceRecord, Pause, Surge, SurgeState, utc,
};
use super::env::Environment;
use super::health;
use super::ports::auto_scaling::{
    AgentIdentity, AutoScaling, AutoScalingGroup, LifecycleState, ScalingProcess, match_agents,
};
use super::ports::marathon::{App, Marathon, MarathonError};
use super::ports::mesos::{MachineId, MesosMaster, Unavailability};
use super::ports::pager::{Page, Pager, Severity};
use super::rebalance;
use super::roll_plan::*;
use super::safety::{self, Move};
use crate::plan::{Operation, Status, StepIndex, Target};

/// The tag that marks a group as being rolled, valued with the run id.
pub const RUN_ID_TAG: &str = "roller:run-id";

/// The outside world, as the roll reaches it.
pub struct Ports<'a, A, M, K, P> {
    pub aws: &'a A,
    pub mesos: &'a M,
    pub marathon: &'a K,
    pub pager: &'a P,
}

impl<A, M, K, P> Clone for Ports<'_, A, M, K, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A, M, K, P> Copy for Ports<'_, A, M, K, P> {}

/// Options of this run that are not in the environment.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Resume AZRebalance even when the final AZ counts are uneven.
    pub resume_az_rebalance: bool,
    /// The command an operator runs to resume (printed and paged).
    pub resume_command: String,
}

#[derive(Debug)]
pub enum Outcome {
    Complete {
        summary: String,
    },
    /// A wait timed out: the plan is interrupted and a human was paged.
    Paused {
        step: String,
        reason: String,
    },
    /// An operator interrupted the plan (or a canary waits): `roller plan
    /// continue` lets it go on.
    Held {
        reason: String,
    },
    /// A stop signal arrived; the checkpoint is consistent.
    Stopped,
}

#[derive(Debug, thiserror::Error)]
pub enum RollError {
    #[error("{0}")]
    Checkpoint(#[from] CheckpointError),
    #[error("AWS {operation}: {message}")]
    Aws {
        operation: &'static str,
        message: String,
    },
    #[error("Mesos: {0}")]
    Mesos(#[from] super::ports::mesos::MesosError),
    #[error("Marathon: {0}")]
    Marathon(#[from] MarathonError),
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    OtherWriter(String),
    #[error("step {step} is in ERROR: {message}; fix the cause, then `roller plan restart` it")]
    StepInError { step: String, message: String },
}

impl RollError {
    pub fn label(&self) -> &'static str {
        match self {
            RollError::Checkpoint(e) => e.label(),
            RollError::Aws { .. } => "aws",
            RollError::Mesos(_) => "mesos",
            RollError::Marathon(_) => "marathon",
            RollError::Refused(_) => "refused",
            RollError::OtherWriter(_) => "other_writer",
            RollError::StepInError { .. } => "step_error",
        }
    }
}

fn aws<E: std::error::Error>(operation: &'static str) -> impl FnOnce(E) -> RollError {
    move |e| RollError::Aws {
        operation,
        message: e.to_string(),
    }
}

/// Why a step did not complete.
enum StepStop {
    Timeout { waited_for: String },
    Stopped,
    Failed(RollError),
}

impl From<RollError> for StepStop {
    fn from(e: RollError) -> StepStop {
        StepStop::Failed(e)
    }
}

impl From<CheckpointError> for StepStop {
    fn from(e: CheckpointError) -> StepStop {
        StepStop::Failed(RollError::Checkpoint(e))
    }
}

pub struct Runner<'a, A, M, K, P> {
    ports: Ports<'a, A, M, K, P>,
    env: &'a Environment,
    options: RunOptions,
    pub checkpoint: Checkpoint,
    path: PathBuf,
    stop: watch::Receiver<bool>,
    observer: Box<dyn FnMut(&Checkpoint) + Send + 'a>,
    /// Tasks this process asked Marathon to kill, per instance being drained.
    killed: HashSet<String>,
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
        path: PathBuf,
        stop: watch::Receiver<bool>,
        observer: Box<dyn FnMut(&Checkpoint) + Send + 'a>,
    ) -> Self {
        Runner {
            ports,
            env,
            options,
            checkpoint,
            path,
            stop,
            observer,
            killed: HashSet::new(),
        }
    }

    fn save(&mut self) -> Result<(), CheckpointError> {
        self.checkpoint.save(&self.path)?;
        (self.observer)(&self.checkpoint);
        Ok(())
    }

    /// The group as it is now (every step that checks before it writes).
    async fn describe(&self, asg: &str) -> Result<AutoScalingGroup, StepStop> {
        Ok(self
            .ports
            .aws
            .describe_group(asg)
            .await
            .map_err(aws("DescribeAutoScalingGroups"))?)
    }

    fn floor(&self) -> safety::Floor {
        if self.checkpoint.honor_min_health {
            safety::Floor::MinHealth
        } else {
            safety::Floor::One
        }
    }

    fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Runs until the plan is complete, paused, held or stopped.
    pub async fn run(mut self) -> Result<(Outcome, Checkpoint), RollError> {
        // A pause set by a timeout is cleared by a rerun; an operator's
        // interrupt is not.
        if let Some(pause) = &self.checkpoint.pause {
            let step = pause.step.clone();
            self.checkpoint
                .plan
                .apply(Operation::Continue, Target::Plan);
            self.checkpoint
                .log("resume", format!("resuming after the pause at {step}"));
            self.save()?;
        }
        loop {
            if self.stopped() {
                self.checkpoint
                    .log("stop", "stopped by a signal between steps");
                self.save()?;
                return Ok((Outcome::Stopped, self.checkpoint));
            }
            if self.checkpoint.plan.is_complete() {
                let summary = self
                    .checkpoint
                    .events
                    .iter()
                    .rev()
                    .find(|e| e.kind == "rebalance")
                    .map(|e| e.message.clone())
                    .unwrap_or_default();
                return Ok((Outcome::Complete { summary }, self.checkpoint));
            }
            let candidates = self.checkpoint.plan.candidate_steps();
            let Some(&at) = candidates.first() else {
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
                let reason = format!(
                    "the plan is interrupted (an operator's `roller plan interrupt`, or a canary waiting); \
                     let it go on with: roller plan continue --file {}",
                    self.path.display()
                );
                return Ok((Outcome::Held { reason }, self.checkpoint));
            };
            let (phase, step) = self.ids(at);
            let started = Instant::now();
            self.set_step(at, Status::Starting, "acting".to_string())?;
            match self.execute(at, &phase, &step).await {
                Ok(message) => {
                    let took = started.elapsed().mul_f64(self.env.time_scale);
                    self.set_step(
                        at,
                        Status::Complete,
                        format!("{message} (took {})", human(took)),
                    )?;
                    self.checkpoint
                        .log("step", format!("{phase}/{step} complete: {message}"));
                    self.resolve_page_of(&format!("{phase}/{step}")).await;
                    self.save()?;
                }
                Err(StepStop::Stopped) => {
                    self.checkpoint
                        .log("stop", format!("stopped by a signal during {phase}/{step}"));
                    self.save()?;
                    return Ok((Outcome::Stopped, self.checkpoint));
                }
                Err(StepStop::Timeout { waited_for }) => {
                    let name = format!("{phase}/{step}");
                    return self.pause(at, name, waited_for).await;
                }
                Err(StepStop::Failed(err)) => {
                    // The step keeps its status (rerunning re-enters it);
                    // its message says what went wrong, for `roller status`.
                    self.checkpoint.plan.step_mut(at).message = format!(
                        "failed at {}: {err}; rerun to retry",
                        utc(SystemTime::now())
                    );
                    self.checkpoint
                        .log("failure", format!("{phase}/{step}: {err}"));
                    self.save()?;
                    return Err(err);
                }
            }
        }
    }

    fn ids(&self, at: StepIndex) -> (String, String) {
        let plan = &self.checkpoint.plan;
        (
            plan.phases[at.phase].id.clone(),
            plan.phases[at.phase].steps[at.step].id.clone(),
        )
    }

    fn set_step(
        &mut self,
        at: StepIndex,
        status: Status,
        message: String,
    ) -> Result<(), CheckpointError> {
        let step = self.checkpoint.plan.step_mut(at);
        let changed = step.status != status || step.message != message;
        // A step that was already waiting keeps its STARTED status when it
        // is re-entered: the message says it acts again.
        step.status = status;
        step.message = message;
        if changed {
            self.save()?;
        }
        Ok(())
    }

    async fn pause(
        mut self,
        at: StepIndex,
        name: String,
        waited_for: String,
    ) -> Result<(Outcome, Checkpoint), RollError> {
        let since = utc(SystemTime::now());
        let dedup_key = format!("roller/{}/{}", self.checkpoint.run_id, name);
        let reason = format!("timed out {waited_for}");
        let message = format!("PAUSED at {since}: {reason}");
        self.checkpoint.plan.step_mut(at).message = message;
        self.checkpoint
            .plan
            .apply(Operation::Interrupt, Target::Plan);
        self.checkpoint.pause = Some(Pause {
            step: name.clone(),
            reason: reason.clone(),
            since,
            dedup_key: dedup_key.clone(),
        });
        self.checkpoint
            .log("pause", format!("{name}: {reason}; paging"));
        self.save()?;
        let page = Page {
            dedup_key,
            summary: format!(
                "roller paused rolling ASG {} at {name}: {reason}. Resume: {}",
                self.checkpoint.asg, self.options.resume_command
            ),
            severity: Severity::Error,
            source: self
                .env
                .pager
                .source
                .clone()
                .unwrap_or_else(|| "roller".to_string()),
            component: Some(self.checkpoint.asg.clone()),
            group: Some("roller".to_string()),
            class: Some("roll_paused".to_string()),
            details: BTreeMap::from([
                ("asg".to_string(), self.checkpoint.asg.clone()),
                ("step".to_string(), name.clone()),
                ("run_id".to_string(), self.checkpoint.run_id.clone()),
                (
                    "resume_command".to_string(),
                    self.options.resume_command.clone(),
                ),
            ]),
        };
        if let Err(err) = self.ports.pager.trigger(&page).await {
            self.checkpoint
                .log("page_failed", format!("the page did not go out: {err}"));
            self.save()?;
            eprintln!("roller: warning: the page did not go out: {err}");
        }
        Ok((Outcome::Paused { step: name, reason }, self.checkpoint))
    }

    async fn resolve_page_of(&mut self, step: &str) {
        let Some(pause) = self.checkpoint.pause.clone() else {
            return;
        };
        if pause.step != step {
            return;
        }
        match self.ports.pager.resolve(&pause.dedup_key).await {
            Ok(()) => self
                .checkpoint
                .log("page_resolved", format!("{step} got past its pause")),
            Err(err) => self
                .checkpoint
                .log("page_failed", format!("resolving the page failed: {err}")),
        }
        self.checkpoint.pause = None;
    }

    async fn execute(
        &mut self,
        at: StepIndex,
        phase: &str,
        step: &str,
    ) -> Result<String, StepStop> {
        match (phase, step) {
            (PREPARE, LOCK) => self.lock().await,
            (PREPARE, SUSPEND) => self.suspend().await,
            (PREPARE, RAISE_MAX) => self.raise_max().await,
            (SCALE_UP, SET_DESIRED) => self.set_desired().await,
            (SCALE_UP, WAIT_REGISTERED) => self.wait_registered(at).await,
            (REPLACE, instance) => self.replace(at, instance.to_string()).await,
            (FINISH, RESUME) => self.resume_processes().await,
            (FINISH, RESTORE_MAX) => self.restore_max().await,
            (FINISH, END_MAINTENANCE) => self.end_maintenance().await,
            (FINISH, REPORT_REBALANCE) => self.report_rebalance().await,
            (FINISH, UNLOCK) => self.unlock().await,
            _ => Err(StepStop::Failed(RollError::Refused(format!(
                "unknown step {phase}/{step} in the checkpoint's plan"
            )))),
        }
    }

    /// Tags the group with the run id, then reads the tag back: another
    /// run's id there (from another host) stops this one. Re-running
    /// writes the same value again.
    async fn lock(&mut self) -> Result<String, StepStop> {
        let asg = self.checkpoint.asg.clone();
        let run_id = self.checkpoint.run_id.clone();
        let group = self.describe(&asg).await?;
        if let Some(other) = group.tag(RUN_ID_TAG).filter(|v| *v != run_id) {
            return Err(RollError::Refused(format!(
                "ASG {asg} is being rolled by run {other} (tag {RUN_ID_TAG}); this run stops"
            ))
            .into());
        }
        let tag = super::ports::auto_scaling::GroupTag {
            key: RUN_ID_TAG.to_string(),
            value: run_id.clone(),
            propagate_at_launch: false,
        };
        self.checkpoint
            .log("intent", format!("tag {asg} {RUN_ID_TAG}={run_id}"));
        self.save()?;
        self.ports
            .aws
            .put_tags(&asg, &[tag])
            .await
            .map_err(aws("CreateOrUpdateTags"))?;
        let group = self.describe(&asg).await?;
        match group.tag(RUN_ID_TAG) {
            Some(v) if v == run_id => Ok(format!("tagged {RUN_ID_TAG}={run_id}")),
            other => Err(RollError::Refused(format!(
                "another writer changed tag {RUN_ID_TAG} on {asg} to {other:?} right after this run wrote it; this run stops without changing capacity"
            ))
            .into()),
        }
    }

    /// Suspends the configured processes that were running. Suspending a
    /// suspended process is a no-op, so re-running is safe; what was
    /// suspended before the roll is recorded and never resumed by it.
    async fn suspend(&mut self) -> Result<String, StepStop> {
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
            return Ok("every process to suspend was already suspended".to_string());
        }
        self.checkpoint.suspended_by_roll = ours.iter().map(|p| p.to_string()).collect();
        self.checkpoint.log(
            "intent",
            format!("suspend {}", self.checkpoint.suspended_by_roll.join(", ")),
        );
        self.save()?;
        let asg = self.checkpoint.asg.clone();
        self.ports
            .aws
            .suspend_processes(&asg, &ours)
            .await
            .map_err(aws("SuspendProcesses"))?;
        Ok(format!(
            "suspended {}",
            self.checkpoint.suspended_by_roll.join(", ")
        ))
    }

    /// Sets MaxSize to N + K (absolute; re-running sets the same value).
    async fn raise_max(&mut self) -> Result<String, StepStop> {
        let needed = self.checkpoint.target + count(self.checkpoint.instances.len());
        let original = self.checkpoint.original.clone();
        if needed <= original.max_size {
            return Ok(format!("MaxSize {} is enough", original.max_size));
        }
        self.checkpoint.raised_max_from = Some(original.max_size);
        self.checkpoint.log(
            "intent",
            format!("raise MaxSize {} -> {needed}", original.max_size),
        );
        self.save()?;
        let asg = self.checkpoint.asg.clone();
        self.ports
            .aws
            .update_size_limits(&asg, original.min_size, needed)
            .await
            .map_err(aws("UpdateAutoScalingGroup"))?;
        Ok(format!("MaxSize raised {} -> {needed}", original.max_size))
    }

    /// Sets the desired capacity to N + K − terminated, computed from the
    /// checkpoint: an absolute value, so no rerun can overshoot.
    async fn set_desired(&mut self) -> Result<String, StepStop> {
        let desired = self.checkpoint.scale_up_desired();
        let asg = self.checkpoint.asg.clone();
        self.checkpoint.log(
            "intent",
            format!("set desired capacity of {asg} to {desired}"),
        );
        self.save()?;
        self.ports
            .aws
            .set_desired_capacity(&asg, desired)
            .await
            .map_err(aws("SetDesiredCapacity"))?;
        Ok(format!("desired capacity {desired}"))
    }

    /// Waits until the new instances (those not in the group when the roll
    /// began) number desired − remaining originals, are in service, and
    /// each matches one active Mesos agent. Read-only: safe to re-run.
    async fn wait_registered(&mut self, at: StepIndex) -> Result<String, StepStop> {
        let expected = self
            .checkpoint
            .scale_up_desired()
            .saturating_sub(self.checkpoint.original_remaining());
        let original: HashSet<String> = self
            .checkpoint
            .original
            .instance_ids
            .iter()
            .cloned()
            .collect();
        let asg = self.checkpoint.asg.clone();
        let how = self.env.agent_match.clone();
        let ports = self.ports;
        let message = format!("waiting for {expected} new instance(s) to register as Mesos agents");
        self.wait(at, message, self.env.timeouts.scale_up, || {
            let original = original.clone();
            let asg = asg.clone();
            let how = how.clone();
            async move {
                let group = ports
                    .aws
                    .describe_group(&asg)
                    .await
                    .map_err(aws("DescribeAutoScalingGroups"))?;
                let new: Vec<String> = group
                    .instances
                    .iter()
                    .filter(|i| !original.contains(&i.id))
                    .filter(|i| i.lifecycle_state == LifecycleState::InService)
                    .map(|i| i.id.clone())
                    .collect();
                if count(new.len()) < expected {
                    let failed = ports
                        .aws
                        .scaling_activities(&asg, 5)
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
                    return Ok(Err(format!(
                        "{} of {expected} new instances in service{failed}",
                        new.len()
                    )));
                }
                let ec2 = ports
                    .aws
                    .describe_instances(&new)
                    .await
                    .map_err(aws("DescribeInstances"))?;
                let agents = active_agents(ports.mesos).await?;
                let matches = match_agents(&how, &ec2, &agents);
                let matched = matches.matched.len();
                if count(matched) < expected {
                    return Ok(Err(format!(
                        "{matched} of {expected} new instances are active Mesos agents"
                    )));
                }
                Ok(Ok(format!("{matched} new agents registered")))
            }
        })
        .await
    }

    /// Replaces one instance: moves what must move, terminates it with a
    /// decrement, waits for Mesos to drop its agent and for Marathon to be
    /// healthy. Re-entering it after a crash is safe: the termination is
    /// recorded before it is sent and checked against the group before it
    /// is sent again, the moves are recomputed from Marathon, and the waits
    /// only read.
    async fn replace(&mut self, at: StepIndex, instance: String) -> Result<String, StepStop> {
        let Some(record) = self
            .checkpoint
            .instances
            .iter()
            .find(|i| i.id == instance)
            .cloned()
        else {
            return Err(RollError::Refused(format!(
                "instance {instance} is in the plan but not in the checkpoint's instance list"
            ))
            .into());
        };
        let asg = self.checkpoint.asg.clone();
        if !record.terminate_sent {
            let group = self.describe(&asg).await?;
            let present = group
                .instance(&instance)
                .is_some_and(|i| !i.lifecycle_state.is_leaving());
            if present {
                self.make_safe(at, &record).await?;
                if self.stopped() {
                    return Err(StepStop::Stopped);
                }
                self.check_no_other_writer(&asg).await?;
            }
            if let Some(r) = self.checkpoint.instance_mut(&instance) {
                r.terminate_sent = true;
            }
            self.checkpoint
                .log("intent", format!("terminate {instance} with decrement"));
            self.save()?;
            let result = self
                .ports
                .aws
                .terminate_instance(&asg, &instance)
                .await
                .map_err(aws("TerminateInstanceInAutoScalingGroup"))?;
            self.checkpoint
                .log("terminate", format!("{instance}: {result:?}"));
            self.save()?;
        }
        let ports = self.ports;
        let agent = record.agent_id.clone();
        self.wait(
            at,
            format!("waiting for Mesos to deregister agent {agent}"),
            self.env.timeouts.deregister,
            || {
                let agent = agent.clone();
                async move {
                    let agents = ports.mesos.agents().await?;
                    let active = agents
                        .registered
                        .iter()
                        .any(|a| a.id.0 == agent && a.active);
                    Ok(if active {
                        Err(format!("agent {agent} still active"))
                    } else {
                        Ok(format!("agent {agent} gone"))
                    })
                }
            },
        )
        .await?;
        self.wait(
            at,
            "waiting for every Marathon app to be healthy".to_string(),
            self.env.timeouts.healthy,
            || async move {
                let (mut apps, deployments) =
                    tokio::try_join!(ports.marathon.apps(), ports.marathon.deployments())?;
                // Marathon learns of a lost agent after Mesos does: until it
                // has replaced the tasks there, they are not healthy, whatever
                // Marathon still says.
                let active = active_agent_ids(ports.mesos).await?;
                let lost = drop_tasks_on_lost_agents(&mut apps, &active);
                if lost > 0 {
                    return Ok(Err(format!(
                        "{lost} task(s) still listed on agents Mesos no longer has"
                    )));
                }
                let verdict = health::judge(&apps, &deployments);
                let unhealthy: Vec<String> = verdict
                    .unhealthy()
                    .take(3)
                    .map(|a| format!("{} ({})", a.id, a.reason().unwrap_or_default()))
                    .collect();
                Ok(if unhealthy.is_empty() {
                    Ok(format!("{} apps healthy", verdict.apps.len()))
                } else {
                    Err(format!("unhealthy: {}", unhealthy.join(", ")))
                })
            },
        )
        .await?;
        Ok(format!("{instance} replaced; Marathon healthy"))
    }

    /// Check before write: the group's desired capacity must be what this
    /// roll left it at (N + K − terminated). Anything else means another
    /// writer (a scaling policy, a human, another tool) changed the group:
    /// terminating now would fight it, so the roll stops and says so.
    async fn check_no_other_writer(&mut self, asg: &str) -> Result<(), StepStop> {
        let group = self.describe(asg).await?;
        let expected = self.checkpoint.scale_up_desired();
        if group.desired_capacity == expected {
            return Ok(());
        }
        Err(RollError::OtherWriter(format!(
            "ASG {asg}: desired capacity is {}, but this roll left it at {expected} (N + K - terminated): \
             another writer changed the group. Nothing was terminated. Find out who, set it back to \
             {expected} (or abandon the roll), then rerun",
            group.desired_capacity
        ))
        .into())
    }

    /// Moves off the agent every task whose app would otherwise fall below
    /// its floor, inside a Mesos maintenance window so that Marathon places
    /// the replacements elsewhere. Each round is recomputed from Marathon.
    async fn make_safe(
        &mut self,
        at: StepIndex,
        record: &super::checkpoint::RolledInstance,
    ) -> Result<(), StepStop> {
        let agent = record.agent_id.clone();
        let mut first = self.ports.marathon.apps().await.map_err(RollError::from)?;
        let active = active_agent_ids(self.ports.mesos).await?;
        drop_tasks_on_lost_agents(&mut first, &active);
        let surging = self
            .checkpoint
            .surges
            .iter()
            .any(|s| s.instance == record.id && s.state != SurgeState::Done);
        if safety::at_risk(&first, &agent, &self.killed, self.floor()).is_empty() && !surging {
            return Ok(());
        }
        self.schedule_maintenance(record).await?;
        let deadline = Instant::now() + self.env.scaled(self.env.timeouts.task_move);
        let since = utc(SystemTime::now());
        loop {
            let mut apps = self.ports.marathon.apps().await.map_err(RollError::from)?;
            let active = active_agent_ids(self.ports.mesos).await?;
            drop_tasks_on_lost_agents(&mut apps, &active);
            let waiting = self.surge_round(record, &apps).await?;
            let risks = safety::at_risk(&apps, &agent, &self.killed, self.floor());
            let mut pending = waiting;
            for risk in &risks {
                if self.checkpoint.surges.iter().any(|s| {
                    s.app == risk.app && s.instance == record.id && s.state != SurgeState::Done
                }) {
                    continue;
                }
                match safety::next_move(risk) {
                    Move::Kill { app, tasks } => {
                        self.checkpoint.log(
                            "intent",
                            format!(
                                "kill {} on {} (scale=false): {}",
                                app,
                                record.id,
                                tasks.join(", ")
                            ),
                        );
                        self.save()?;
                        match self.ports.marathon.kill_tasks(&tasks, false).await {
                            Ok(_) => self.killed.extend(tasks),
                            Err(MarathonError::Conflict { .. }) => {}
                            Err(e) => return Err(RollError::from(e).into()),
                        }
                        pending.push(format!("{app}: moving {}", risk.tasks_here.len()));
                    }
                    Move::Surge {
                        app,
                        instances,
                        task,
                    } => {
                        self.checkpoint.surges.push(Surge {
                            app: app.clone(),
                            instances,
                            instance: record.id.clone(),
                            task,
                            state: SurgeState::ScalingUp,
                        });
                        self.checkpoint.log(
                            "intent",
                            format!("surge {app} {instances} -> {}", instances + 1),
                        );
                        self.save()?;
                        match self.ports.marathon.scale_app(&app, instances + 1).await {
                            Ok(_) | Err(MarathonError::Conflict { .. }) => {}
                            Err(e) => return Err(RollError::from(e).into()),
                        }
                        pending.push(format!("{app}: surging"));
                    }
                    Move::Wait { app, reason } => pending.push(format!("{app}: {reason}")),
                }
            }
            if pending.is_empty() {
                return Ok(());
            }
            let message = format!(
                "moving tasks off {} before termination since {since}: {}",
                record.id,
                pending.join("; ")
            );
            self.set_step(at, Status::Started, message.clone())?;
            if Instant::now() >= deadline {
                return Err(StepStop::Timeout {
                    waited_for: format!("after {} {message}", human(self.env.timeouts.task_move)),
                });
            }
            if self.sleep_poll().await {
                return Err(StepStop::Stopped);
            }
        }
    }

    /// Advances this instance's surges by one round; returns what they
    /// still wait for. A surge is recorded before its scale-up and before
    /// its kill, so a resume finishes it: the scale-up is an absolute
    /// instance count, and the kill is only resent while the old task is
    /// still on the agent.
    async fn surge_round(
        &mut self,
        record: &super::checkpoint::RolledInstance,
        apps: &[App],
    ) -> Result<Vec<String>, StepStop> {
        let mut waiting = Vec::new();
        for n in 0..self.checkpoint.surges.len() {
            let surge = self.checkpoint.surges[n].clone();
            if surge.instance != record.id || surge.state == SurgeState::Done {
                continue;
            }
            let Some(app) = apps.iter().find(|a| a.id == surge.app) else {
                self.checkpoint.surges[n].state = SurgeState::Done;
                self.checkpoint
                    .log("surge", format!("{} is gone; surge dropped", surge.app));
                self.save()?;
                continue;
            };
            // Only the recorded task: killing exactly one task with
            // scale=true takes back the one instance the surge added.
            let old: Vec<String> = app
                .tasks
                .iter()
                .filter(|t| t.id == surge.task)
                .map(|t| t.id.clone())
                .collect();
            // The old task may go once the others keep the app at its
            // floor (counted at the instances before the surge).
            let healthy_without_old = count(
                app.tasks
                    .iter()
                    .filter(|t| t.id != surge.task)
                    .filter(|t| health::task_is_healthy(app, t))
                    .count(),
            );
            let floor = safety::floor(
                &App {
                    instances: surge.instances,
                    ..app.clone()
                },
                self.floor(),
            );
            if old.is_empty() {
                if app.instances > surge.instances {
                    // The old task went some other way (a crash): undo the
                    // extra instance so the app ends where it started.
                    self.checkpoint.log(
                        "intent",
                        format!("surge {}: undo to {}", surge.app, surge.instances),
                    );
                    self.save()?;
                    match self
                        .ports
                        .marathon
                        .scale_app(&surge.app, surge.instances)
                        .await
                    {
                        Ok(_) | Err(MarathonError::Conflict { .. }) => {}
                        Err(e) => return Err(RollError::from(e).into()),
                    }
                }
                self.checkpoint.surges[n].state = SurgeState::Done;
                self.checkpoint
                    .log("surge", format!("{} moved off {}", surge.app, record.id));
                self.save()?;
                continue;
            }
            match surge.state {
                SurgeState::ScalingUp if app.instances <= surge.instances => {
                    // Not applied yet (or lost): send the absolute count again.
                    match self
                        .ports
                        .marathon
                        .scale_app(&surge.app, surge.instances + 1)
                        .await
                    {
                        Ok(_) | Err(MarathonError::Conflict { .. }) => {}
                        Err(e) => return Err(RollError::from(e).into()),
                    }
                    waiting.push(format!("{}: surge sent", surge.app));
                }
                SurgeState::ScalingUp
                    if healthy_without_old < floor || !app.deployments.is_empty() =>
                {
                    waiting.push(format!("{}: surge task not healthy yet", surge.app));
                }
                SurgeState::ScalingUp | SurgeState::Killing => {
                    self.checkpoint.surges[n].state = SurgeState::Killing;
                    self.checkpoint.log(
                        "intent",
                        format!("kill {} of {} (scale=true)", old.join(", "), surge.app),
                    );
                    self.save()?;
                    match self.ports.marathon.kill_tasks(&old, true).await {
                        Ok(_) | Err(MarathonError::Conflict { .. }) => {}
                        Err(e) => return Err(RollError::from(e).into()),
                    }
                    waiting.push(format!("{}: old task killed", surge.app));
                }
                SurgeState::Done => {}
            }
        }
        Ok(waiting)
    }

    /// Puts the agent's machine in a maintenance window (merged into the
    /// schedule; already there is a no-op), recorded first so finish
    /// removes it.
    async fn schedule_maintenance(
        &mut self,
        record: &super::checkpoint::RolledInstance,
    ) -> Result<(), StepStop> {
        let machine = MaintenanceRecord {
            hostname: record.hostname.clone(),
            ip: record.ip.clone(),
        };
        let id = machine.machine_id();
        if !self.checkpoint.maintenance.contains(&machine) {
            self.checkpoint.maintenance.push(machine);
        }
        self.checkpoint.log(
            "intent",
            format!("maintenance window for {}", record.hostname),
        );
        self.save()?;
        // A simulator's clock runs time_scale times faster than the wall
        // clock the window is written in: stretch the window to match.
        let window = Duration::from_secs(4 * 3600).mul_f64(self.env.time_scale.max(1.0));
        let start = SystemTime::now() - Duration::from_secs(60);
        self.ports
            .mesos
            .schedule_maintenance(&[id], Unavailability::new(start, window))
            .await
            .map_err(RollError::from)?;
        Ok(())
    }

    /// Resumes only what the roll suspended, keeping AZRebalance suspended
    /// when the AZs are uneven (unless told otherwise). Resuming a running
    /// process is a no-op: safe to re-run.
    async fn resume_processes(&mut self) -> Result<String, StepStop> {
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
            return Ok(format!("nothing to resume{kept}"));
        }
        self.checkpoint.log(
            "intent",
            format!(
                "resume {}",
                resume
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        self.save()?;
        self.ports
            .aws
            .resume_processes(&asg, &resume)
            .await
            .map_err(aws("ResumeProcesses"))?;
        Ok(format!(
            "resumed {}{kept}",
            resume
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    }

    /// Restores the MaxSize that `--raise-max` raised (absolute: safe to
    /// re-run).
    async fn restore_max(&mut self) -> Result<String, StepStop> {
        let Some(max) = self.checkpoint.raised_max_from else {
            return Ok("MaxSize was not raised".to_string());
        };
        let asg = self.checkpoint.asg.clone();
        let min = self.checkpoint.original.min_size;
        self.ports
            .aws
            .update_size_limits(&asg, min, max)
            .await
            .map_err(aws("UpdateAutoScalingGroup"))?;
        Ok(format!("MaxSize restored to {max}"))
    }

    /// Removes the windows the roll added (removing an absent one is a
    /// no-op: safe to re-run).
    async fn end_maintenance(&mut self) -> Result<String, StepStop> {
        let machines: Vec<MachineId> = self
            .checkpoint
            .maintenance
            .iter()
            .map(MaintenanceRecord::machine_id)
            .collect();
        if machines.is_empty() {
            return Ok("no maintenance window to remove".to_string());
        }
        self.ports
            .mesos
            .cancel_maintenance(&machines)
            .await
            .map_err(RollError::from)?;
        Ok(format!("{} maintenance window(s) removed", machines.len()))
    }

    async fn rebalance_moves(&self) -> Result<rebalance::Rebalance, StepStop> {
        let group = self.describe(&self.checkpoint.asg).await?;
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

    /// Reports the moves AZ rebalancing needs (read-only).
    async fn report_rebalance(&mut self) -> Result<String, StepStop> {
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
        self.checkpoint.log("rebalance", message.clone());
        Ok(message)
    }

    /// Removes the run-id tag if it is still ours (another run's tag is
    /// never touched).
    async fn unlock(&mut self) -> Result<String, StepStop> {
        let asg = self.checkpoint.asg.clone();
        let group = self.describe(&asg).await?;
        match group.tag(RUN_ID_TAG) {
            Some(v) if v == self.checkpoint.run_id => {
                self.ports
                    .aws
                    .delete_tags(&asg, &[RUN_ID_TAG.to_string()])
                    .await
                    .map_err(aws("DeleteTags"))?;
                Ok(format!("tag {RUN_ID_TAG} removed"))
            }
            Some(other) => Ok(format!(
                "tag {RUN_ID_TAG} belongs to run {other}: left alone"
            )),
            None => Ok(format!("tag {RUN_ID_TAG} already gone")),
        }
    }

    /// Sleeps one poll interval; true when a stop signal came first.
    async fn sleep_poll(&mut self) -> bool {
        let sleep = tokio::time::sleep(self.env.scaled(self.env.poll_interval));
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                _ = &mut sleep => return self.stopped(),
                changed = self.stop.changed() => match changed {
                    Ok(()) if *self.stop.borrow() => return true,
                    Ok(()) => {}
                    // Nobody can signal any more: just wait out the poll.
                    Err(_) => {
                        (&mut sleep).await;
                        return self.stopped();
                    }
                },
            }
        }
    }

    /// Polls `check` until it says done (`Ok(Ok(msg))`) or the deadline
    /// passes. A failing look (an API error) is retried until the deadline
    /// and named in the timeout.
    async fn wait<F, Fut>(
        &mut self,
        at: StepIndex,
        what: String,
        timeout: Duration,
        mut check: F,
    ) -> Result<String, StepStop>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Result<String, String>, RollError>>,
    {
        let since = utc(SystemTime::now());
        let deadline = Instant::now() + self.env.scaled(timeout);
        self.set_step(at, Status::Started, format!("{what} (since {since})"))?;
        loop {
            let last = match check().await {
                Ok(Ok(done)) => return Ok(done),
                Ok(Err(not_yet)) => not_yet,
                Err(err) => format!("last look failed: {err}"),
            };
            if Instant::now() >= deadline {
                return Err(StepStop::Timeout {
                    waited_for: format!("after {}: {what} since {since}; {last}", human(timeout)),
                });
            }
            if self.sleep_poll().await {
                return Err(StepStop::Stopped);
            }
        }
    }
}

/// Active agents as identities to match instances against.
pub async fn active_agents<M: MesosMaster>(mesos: &M) -> Result<Vec<AgentIdentity>, RollError> {
    let agents = mesos.agents().await?;
    Ok(agents
        .registered
        .into_iter()
        .filter(|a| a.active)
        .map(|a| AgentIdentity {
            id: a.id.0,
            hostname: a.hostname,
            ip: a.ip,
            attributes: a
                .attributes
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        super::ports::mesos::AttributeValue::Text(t) => t,
                        super::ports::mesos::AttributeValue::Scalar(s) => s.to_string(),
                    };
                    (k, v)
                })
                .collect(),
        })
        .collect())
}

/// Ids of the agents Mesos has active now.
async fn active_agent_ids<M: MesosMaster>(mesos: &M) -> Result<HashSet<String>, RollError> {
    let agents = mesos.agents().await?;
    Ok(agents
        .registered
        .into_iter()
        .filter(|a| a.active)
        .map(|a| a.id.0)
        .collect())
}

/// Removes from Marathon's view the tasks on agents Mesos no longer has
/// active (Marathon lags Mesos), so they count as missing, not healthy;
/// returns how many were removed.
pub fn drop_tasks_on_lost_agents(apps: &mut [App], active: &HashSet<String>) -> usize {
    let mut dropped = 0;
    for app in apps {
        let before = app.tasks.len();
        app.tasks
            .retain(|t| t.agent_id.as_ref().is_none_or(|a| active.contains(a)));
        dropped += before - app.tasks.len();
    }
    dropped
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `1h 2m 3s` style, for messages.
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s}s"),
        (h, m, _) => format!("{h}h {m}m"),
    }
}
