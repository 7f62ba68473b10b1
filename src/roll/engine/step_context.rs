//! `StepContext`: everything one tick of one step may use, lent by the
//! runner for that tick. The world (`ports`, and `tick` for what this
//! tick has read of it), the settings, what this process has sent
//! (`memory`), and the step's place in the record: the group it acts on
//! (its own, writable: `group_mut`) and the roll-wide record beside it
//! (read-only: `roll`), with a few narrow ways to write the rest (an
//! intent before a side effect, an event after it, a step appended to the
//! plan, the step's own name, the group's line of the summary).
//!
//! The journal itself is a private field here, in a module of its own:
//! no step can reach the rest of the checkpoint, and nothing of the loop
//! (deadlines, pauses, holds) is reachable either.

use std::collections::HashSet;

use tokio::sync::watch;

use super::clock::{MarathonClock, RollClock};
use super::described::Described;
use super::journal::Journal;
use super::run_options::RunOptions;
use super::tick_context::{Observation, TickContext};
use crate::plan::{Step, StepIndex};
use crate::roll::decide::health::Settle;
use crate::roll::decide::safety::{self, Rules};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::AutoScalingGroup;
use crate::roll::record::checkpoint::{
    CheckpointError, EventKind, GroupRoll, RollView, RolledInstance, ServicesRecord, StepProgress,
    group_phase_id,
};
use crate::roll::record::env::Environment;
use crate::roll::record::kinds::{GroupIndex, GroupStep};

/// What this process has sent that the checkpoint does not keep: a
/// resumed run starts without it and asks again where a call is
/// idempotent.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    /// Tasks this process asked Marathon to kill (a task being killed is
    /// not counted on again while Marathon still lists it).
    pub(crate) killed: HashSet<String>,
    /// Instances whose machine this process put in a maintenance window
    /// (asked once per process: the call is idempotent, a resume asks
    /// again).
    pub(crate) scheduled: HashSet<String>,
    /// Instances whose termination this process has sent again (a call
    /// failing tick after tick is logged once, not once per tick).
    pub(crate) resent: HashSet<String>,
    /// Lifecycle actions (`instance/hook`) this process has completed
    /// (asked once per process: a resume asks again, and AWS answers an
    /// action already done as no longer waiting).
    pub(crate) completed_hooks: HashSet<String>,
    /// Instances whose wait for someone else's lifecycle hook this
    /// process has logged (once, not once per tick).
    pub(crate) hook_waits_logged: HashSet<String>,
    /// Services whose deploy or recovery this process has said it waits
    /// for, by what it waits for (once, not once per tick).
    pub(crate) service_waits_logged: HashSet<String>,
    /// Marathon's clock, as late as its reports so far prove it.
    pub(crate) marathon_clock: MarathonClock,
    /// EC2's descriptions of new instances, once they name what the
    /// instance is matched to its agent by (`described.rs`).
    pub(crate) described: Described,
}

/// Everything a step's tick may use (see the module's doc).
pub(crate) struct StepContext<'r, 'o, P> {
    pub(crate) ports: P,
    pub(crate) env: &'r Environment,
    pub(crate) options: &'r RunOptions,
    pub(crate) clock: &'r RollClock,
    /// What this tick has read of the world.
    pub(crate) tick: &'r mut TickContext<P>,
    pub(crate) memory: &'r mut Memory,
    /// The step being ticked (`None`: a step run outside the plan, by
    /// `roller abandon`).
    at: Option<StepIndex>,
    /// The group it acts on.
    group: GroupIndex,
    journal: &'r mut Journal<'o>,
    stop: &'r mut watch::Receiver<bool>,
}

/// What the runner lends a step besides its place and the journal.
pub(crate) struct Lent<'r, P> {
    pub(crate) ports: P,
    pub(crate) env: &'r Environment,
    pub(crate) options: &'r RunOptions,
    pub(crate) clock: &'r RollClock,
    pub(crate) tick: &'r mut TickContext<P>,
    pub(crate) memory: &'r mut Memory,
    pub(crate) stop: &'r mut watch::Receiver<bool>,
}

impl<'r, 'o, P: Ports> StepContext<'r, 'o, P> {
    /// The context of the step at `at`, acting on `group`.
    pub(crate) fn new(
        lent: Lent<'r, P>,
        journal: &'r mut Journal<'o>,
        at: Option<StepIndex>,
        group: GroupIndex,
    ) -> Self {
        StepContext {
            ports: lent.ports,
            env: lent.env,
            options: lent.options,
            clock: lent.clock,
            tick: lent.tick,
            memory: lent.memory,
            at,
            group,
            journal,
            stop: lent.stop,
        }
    }

    /// Which of the roll's groups this step acts on.
    pub(crate) fn group_index(&self) -> GroupIndex {
        self.group
    }

    /// The group this step acts on, as the roll keeps it.
    pub(crate) fn group(&self) -> &GroupRoll {
        self.journal.checkpoint.group(self.group)
    }

    /// The group's record, to change before an intent is written (what
    /// the roll changes on the group is recorded first).
    pub(crate) fn group_mut(&mut self) -> &mut GroupRoll {
        self.journal.checkpoint.group_mut(self.group)
    }

    /// The roll-wide record of the DC/OS SDK services' side (agents
    /// deactivated, pods replaced), to change before an intent: a
    /// service's pods span groups.
    pub(crate) fn services_mut(&mut self) -> &mut ServicesRecord {
        &mut self.journal.checkpoint.services
    }

    /// The agents of every group's instances being replaced that are not
    /// terminated yet (a pod must land on none of them).
    pub(crate) fn old_agents_everywhere(&self) -> HashSet<String> {
        self.journal
            .checkpoint
            .groups
            .iter()
            .flat_map(|g| &g.instances)
            .filter(|i| !i.terminate_sent && !i.agent_id.is_empty())
            .map(|i| i.agent_id.clone())
            .collect()
    }

    /// The roll-wide record, read-only: the settings fixed for the roll,
    /// the plan, the progress.
    pub(crate) fn roll(&self) -> RollView<'_> {
        self.journal.checkpoint.view()
    }

    /// Records the intent of a side effect in the checkpoint and writes
    /// it, before the effect is sent.
    pub(crate) async fn intend(
        &mut self,
        message: impl Into<String>,
    ) -> Result<(), CheckpointError> {
        self.journal.intend(message).await
    }

    /// Records the intent of one more side effect under an intent already
    /// written (the record it acts on was saved with that one); written
    /// with the next save.
    pub(crate) fn note_intent(&mut self, message: impl Into<String>) {
        self.journal.note_intent(message);
    }

    /// Records what a side effect came to (or a change of the group's
    /// bookkeeping), written with the next save.
    pub(crate) fn record(&mut self, kind: EventKind, message: impl Into<String>) {
        self.journal.log(kind, message);
    }

    /// Writes the checkpoint if it changed.
    pub(crate) async fn save(&mut self) -> Result<(), CheckpointError> {
        self.journal.save().await
    }

    /// Adds `step` to the plan's phase `phase` (the drain's next wave):
    /// the runner dispatches it from the next tick on, on the group its
    /// kind names.
    pub(crate) fn append_step(&mut self, phase: usize, step: Step<GroupStep>) {
        self.journal.checkpoint.plan.phases[phase].steps.push(step);
    }

    /// Renames the step being ticked (a drain wave, once planned, says
    /// what it moves).
    pub(crate) fn name_step(&mut self, name: String) {
        if let Some(at) = self.at {
            self.journal.checkpoint.plan.step_mut(at).name = name;
        }
    }

    /// Keeps `line` as this group's part of the roll's summary (one line
    /// per group, named when there are several; a rerun replaces it).
    pub(crate) fn summarize(&mut self, line: &str) {
        let checkpoint = &mut self.journal.checkpoint;
        if checkpoint.groups.len() == 1 {
            checkpoint.summary = Some(line.to_string());
            return;
        }
        let asg = &checkpoint.group(self.group).asg;
        let prefix = format!("{asg}: ");
        let mut lines: Vec<String> = checkpoint
            .summary
            .iter()
            .flat_map(|s| s.lines())
            .filter(|l| !l.starts_with(&prefix))
            .map(str::to_string)
            .collect();
        lines.push(format!("{prefix}{line}"));
        checkpoint.summary = Some(lines.join("\n"));
    }

    /// The id of this group's phase or fixed-word step `bare` (`drain`,
    /// `wave-1`): `<asg>:drain` in a plan of several groups.
    pub(crate) fn id_of(&self, bare: &str) -> String {
        let checkpoint = &self.journal.checkpoint;
        group_phase_id(&self.group().asg, bare, checkpoint.groups.len())
    }

    /// Where this group's phase `bare` (`drain`) sits in the plan.
    pub(crate) fn phase_of(&self, bare: &str) -> Option<usize> {
        self.journal.checkpoint.phase_of(self.group, bare)
    }

    /// The progress of this group's step `bare` (`wait-registered`), if
    /// it has begun.
    pub(crate) fn progress_of(&self, bare: &str) -> Option<&StepProgress> {
        self.journal.checkpoint.progress.get(&self.id_of(bare))
    }

    /// The group as this tick sees it.
    pub(crate) async fn observed_group(
        &mut self,
    ) -> Result<std::sync::Arc<AutoScalingGroup>, RollError> {
        let asg = self.group().asg.clone();
        self.tick.group(&asg).await
    }

    /// Nobody else changed the group since the roll last did
    /// (`TickContext::check_no_other_writer`), and no Instance Refresh is
    /// at work on it (`TickContext::check_no_refresh`): checked before
    /// every write to the group's capacity.
    pub(crate) async fn check_no_other_writer(&mut self) -> Result<(), RollError> {
        let group = self.journal.checkpoint.group(self.group);
        self.tick.check_no_other_writer(group).await?;
        self.tick.check_no_refresh(&group.asg).await
    }

    /// Old agents of `az` of this group being put down (termination
    /// sent, and still in service or held by a termination hook:
    /// `TickContext::terminating_in`).
    pub(crate) fn terminating_in(&mut self, az: &str, group: &AutoScalingGroup) -> usize {
        let checkpoint = &self.journal.checkpoint;
        self.tick.terminating_in(
            az,
            self.group,
            &checkpoint.plan,
            checkpoint.group(self.group),
            group,
        )
    }

    /// Whether a stop signal has arrived (a step about to send a
    /// termination stops first instead).
    pub(crate) fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// The checkpoint's record of an instance a step of the plan names.
    pub(crate) fn rolled(&self, instance: &str) -> Result<RolledInstance, RollError> {
        self.group()
            .instance(instance)
            .cloned()
            .ok_or_else(|| {
                RollError::refused(format!(
                    "instance {instance} is in the plan but not in the checkpoint's instance list of {}",
                    self.group().asg
                ))
            })
    }

    /// The floor every app is kept at, fixed for the roll.
    pub(crate) fn floor(&self) -> safety::Floor {
        if self.roll().honor_min_health {
            safety::Floor::MinHealth
        } else {
            safety::Floor::One
        }
    }

    /// What apps are kept at, judged as of `seen`: the roll's floor, and
    /// a task of an app without health checks up once it has run
    /// `settle_time` by Marathon's clock (at the latest `seen` proves).
    pub(crate) fn rules(&mut self, seen: &Observation) -> Rules {
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

    /// The agent ids of every instance of this group being replaced.
    pub(crate) fn old_agents(&self) -> HashSet<String> {
        self.group()
            .instances
            .iter()
            .map(|i| i.agent_id.clone())
            .filter(|a| !a.is_empty())
            .collect()
    }

    /// The agents of this group's instances the drain may empty now: every
    /// old agent, or, with a capped surge, those of the batches opened so
    /// far (`GroupRoll::batch_open`).
    pub(crate) fn open_old_agents(&self) -> HashSet<String> {
        let group = self.group();
        group
            .instances
            .iter()
            .filter(|i| group.batch_open(i))
            .map(|i| i.agent_id.clone())
            .filter(|a| !a.is_empty())
            .collect()
    }

    /// Apps the operator allowed to be unhealthy.
    pub(crate) fn allowed_unhealthy(&self) -> &[String] {
        &self.journal.checkpoint.allow_unhealthy
    }
}
