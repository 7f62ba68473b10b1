//! Job runs of frameworks other than Marathon (a Metronome-like job
//! scheduler, the scenario's `[[jobs]]`): each run starts at its time on
//! the first agent with room that takes offers (registered, not
//! deactivated or draining, no maintenance window: Metronome is built on
//! Marathon's scheduler and declines offers with an unavailability, as
//! Marathon does), uses the agent's resources while it runs, and ends by
//! itself after its duration (TASK_FINISHED). Mesos ends it sooner:
//! DRAIN_AGENT kills it after its own kill grace, at most the drain's
//! `max_grace_period` (TASK_KILLED); an agent removed loses it
//! (TASK_LOST). Roller has no API for such a framework: it sees these
//! tasks only through Mesos.

use serde::Serialize;

use super::World;
use super::agents::to_milli;
use super::clock::SimTime;
use super::events::{AgentIdx, Event};
use crate::sim::scenario::{JobSpec, millis};

#[cfg(test)]
mod tests;

/// Where a run is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JobState {
    /// Before its start, or waiting for an agent with room.
    Waiting,
    Running,
    /// Killed by a drain, within its grace.
    Killing,
    Finished,
    Killed,
    Lost,
}

impl JobState {
    /// The Mesos task state it shows as (`None` before it is launched).
    pub(crate) fn mesos(self) -> Option<&'static str> {
        match self {
            JobState::Waiting => None,
            JobState::Running => Some("TASK_RUNNING"),
            JobState::Killing => Some("TASK_KILLING"),
            JobState::Finished => Some("TASK_FINISHED"),
            JobState::Killed => Some("TASK_KILLED"),
            JobState::Lost => Some("TASK_LOST"),
        }
    }

    /// Launched and not ended: on its agent, using its resources.
    fn live(self) -> bool {
        matches!(self, JobState::Running | JobState::Killing)
    }
}

/// One run of a job.
#[derive(Clone, Debug)]
pub(crate) struct JobRun {
    framework: String,
    job: String,
    task_id: String,
    agent: Option<AgentIdx>,
    cpus: u64,
    mem: u64,
    cpus_f: f64,
    mem_f: f64,
    duration_ms: u64,
    grace_ms: u64,
    pub(crate) state: JobState,
    started_at: Option<SimTime>,
    ended_at: Option<SimTime>,
    /// The grace a drain's kill gave it.
    kill_grace_ms: Option<u64>,
    /// When the drain asked for that kill.
    kill_asked_at: Option<SimTime>,
}

/// A run as the ground truth and the master's endpoints show it (and a
/// task of an SDK service's pod, as the master lists it: `job` is then
/// the task's name).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobRunView {
    pub framework: String,
    pub framework_id: String,
    /// The role its framework registered with (its resources' role).
    pub role: String,
    pub job: String,
    pub task_id: String,
    /// The agent it runs (or ran) on.
    pub agent_id: Option<String>,
    /// Its Mesos state; `None` before it is launched.
    pub state: Option<&'static str>,
    pub(crate) cpus: f64,
    pub(crate) mem: f64,
    pub started_unix_ms: Option<u64>,
    pub ended_unix_ms: Option<u64>,
    /// The kill grace a drain gave it (ms), if one killed it.
    pub kill_grace_ms: Option<u64>,
    /// When the drain asked for that kill (its end is the grace later).
    pub kill_asked_unix_ms: Option<u64>,
}

/// The framework id a framework named `name` registered with: stable
/// across runs of a scenario.
pub(crate) fn framework_id(name: &str) -> String {
    format!(
        "{}-0001",
        uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, name.as_bytes())
    )
}

impl World {
    /// The scenario's runs, each waiting for its start.
    pub(super) fn add_jobs(&mut self, specs: &[JobSpec]) {
        for (j, spec) in specs.iter().enumerate() {
            self.jobs.push(JobRun {
                framework: spec.framework.clone(),
                job: spec.id.clone(),
                task_id: format!("{}.{}", spec.id, self.rng.uuid()),
                agent: None,
                cpus: to_milli(spec.cpus),
                mem: to_milli(spec.mem),
                cpus_f: spec.cpus,
                mem_f: spec.mem,
                duration_ms: millis(spec.duration_s),
                grace_ms: millis(spec.grace_s),
                state: JobState::Waiting,
                started_at: None,
                ended_at: None,
                kill_grace_ms: None,
                kill_asked_at: None,
            });
            self.schedule(
                SimTime::from_millis(millis(spec.start_s)),
                Event::JobStarts(j),
            );
        }
    }

    /// A run's start: on the first agent that takes offers and has room,
    /// else looked at again after an offer interval.
    pub(super) fn on_job_starts(&mut self, j: usize) {
        if self.jobs[j].state != JobState::Waiting {
            return;
        }
        let (cpus, mem) = (self.jobs[j].cpus, self.jobs[j].mem);
        let found = self.mesos.agents.iter().position(|a| {
            a.is_registered()
                && a.answering
                && !a.deactivated
                && a.drain.is_none()
                && a.unavailability.is_none()
                && self.groups[a.group].role.is_none()
                && a.used_cpus + cpus <= a.cpus
                && a.used_mem + mem <= a.mem
        });
        let Some(agent) = found else {
            self.schedule_in(self.timing.offer_interval_ms, Event::JobStarts(j));
            return;
        };
        let a = &mut self.mesos.agents[agent];
        a.used_cpus += cpus;
        a.used_mem += mem;
        let now = self.now;
        let run = &mut self.jobs[j];
        run.agent = Some(agent);
        run.state = JobState::Running;
        run.started_at = Some(now);
        let duration = run.duration_ms;
        self.schedule_in(duration, Event::JobEnds(j));
    }

    /// A run's end by itself, if it still runs and its machine does (a
    /// run on an instance that is gone reports nothing: its agent's ping
    /// timeout loses it).
    pub(super) fn on_job_ends(&mut self, j: usize) {
        let Some(agent) = self.jobs[j].agent else {
            return;
        };
        let reports = self.mesos.agents[agent].answering && self.agent_host_alive(agent);
        if self.jobs[j].state == JobState::Running && reports {
            self.end_job(j, JobState::Finished);
        }
    }

    /// A drain's kill of a run, once its grace is over.
    pub(super) fn on_job_killed(&mut self, j: usize) {
        if self.jobs[j].state == JobState::Killing {
            self.end_job(j, JobState::Killed);
        }
    }

    /// DRAIN_AGENT on `agent`: each of its runs is killed after its own
    /// grace, at most `max_grace_ms`.
    pub(super) fn kill_jobs_on(&mut self, agent: AgentIdx, max_grace_ms: Option<u64>) {
        for j in 0..self.jobs.len() {
            let run = &mut self.jobs[j];
            if run.agent != Some(agent) || run.state != JobState::Running {
                continue;
            }
            let grace = max_grace_ms.map_or(run.grace_ms, |max| run.grace_ms.min(max));
            run.state = JobState::Killing;
            run.kill_grace_ms = Some(grace);
            run.kill_asked_at = Some(self.now);
            self.schedule_in(grace, Event::JobKilled(j));
        }
    }

    /// An agent removed: its runs are lost.
    pub(super) fn lose_jobs_on(&mut self, agent: AgentIdx) {
        for j in 0..self.jobs.len() {
            if self.jobs[j].agent == Some(agent) && self.jobs[j].state.live() {
                self.end_job(j, JobState::Lost);
            }
        }
    }

    /// Whether a run is launched on `agent` and not ended.
    pub(super) fn jobs_live_on(&self, agent: AgentIdx) -> bool {
        self.jobs
            .iter()
            .any(|r| r.agent == Some(agent) && r.state.live())
    }

    fn end_job(&mut self, j: usize, state: JobState) {
        let now = self.now;
        let run = &mut self.jobs[j];
        run.state = state;
        run.ended_at = Some(now);
        let (cpus, mem) = (run.cpus, run.mem);
        if let Some(agent) = run.agent {
            let a = &mut self.mesos.agents[agent];
            a.used_cpus = a.used_cpus.saturating_sub(cpus);
            a.used_mem = a.used_mem.saturating_sub(mem);
            // A draining agent whose last task this was is DRAINED now,
            // not at the drain's next look.
            let draining = a.is_registered() && a.drain.is_some() && a.tasks.is_empty();
            if draining && !self.other_frameworks_live_on(agent) {
                self.on_agent_drained(agent);
            }
        }
        self.offers_changed();
    }

    /// Every run, as the ground truth.
    pub(crate) fn job_runs(&self) -> Vec<JobRunView> {
        self.jobs
            .iter()
            .map(|r| JobRunView {
                framework: r.framework.clone(),
                framework_id: framework_id(&r.framework),
                role: "*".to_string(),
                job: r.job.clone(),
                task_id: r.task_id.clone(),
                agent_id: r.agent.map(|a| self.mesos.agents[a].id.clone()),
                state: r.state.mesos(),
                cpus: r.cpus_f,
                mem: r.mem_f,
                started_unix_ms: r.started_at.map(|t| self.unix_ms(t)),
                ended_unix_ms: r.ended_at.map(|t| self.unix_ms(t)),
                kill_grace_ms: r.kill_grace_ms,
                kill_asked_unix_ms: r.kill_asked_at.map(|t| self.unix_ms(t)),
            })
            .collect()
    }
}
