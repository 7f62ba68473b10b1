//! A pod's life after the start: killed (a replace, a drain), lost with
//! its agent, relaunched by its recovery step (in place on its own
//! reservation, or anywhere once replaced), failing on a bad image.
//! Each event carries the pod's epoch; one of an older epoch is stale.

use super::super::World;
use super::super::events::AgentIdx;
use super::super::faults::ImageEffect;
use super::{ENDED_KEPT, PodState, PodStep, RecoveryPhase, new_tasks};

/// From an accepted offer (PREPARED) to the tasks launched (STARTING).
const PREPARE_MS: u64 = 2_000;
/// How long a pod's task on a bad image lives before it fails.
const CRASH_AFTER_MS: u64 = 3_000;

impl World {
    /// `pod replace`: the pod's tasks are killed (TASK_KILLED after the
    /// kill's delay); then its reservation is freed and its recovery step
    /// added, to relaunch it anywhere with room. Returns its tasks'
    /// names.
    pub(super) fn replace_pod_at(&mut self, s: usize, p: usize) -> Vec<String> {
        let pod = &mut self.services[s].pods[p];
        pod.permanent = true;
        let names = pod.tasks.iter().map(|t| t.name.clone()).collect();
        match pod.state {
            // Its kill's end will find it replaced.
            PodState::Killing => {}
            PodState::Pending => self.pod_down(s, p),
            PodState::Running | PodState::Prepared | PodState::Starting => {
                for t in pod.tasks.iter_mut().filter(|t| t.live()) {
                    t.state = Some("TASK_KILLING");
                }
                pod.state = PodState::Killing;
                self.set_away(s, p, true);
                self.schedule_pod(s, p, self.timing.kill_ms, PodStep::Killed);
            }
        }
        names
    }

    /// DRAIN_AGENT on `agent`: its pods' tasks (staged ones too) are
    /// killed within the kill's delay, at most `max_grace_ms`; the pods
    /// stay bound to it.
    pub(in super::super) fn kill_pods_on(&mut self, agent: AgentIdx, max_grace_ms: Option<u64>) {
        let grace = max_grace_ms.map_or(self.timing.kill_ms, |max| self.timing.kill_ms.min(max));
        for s in 0..self.services.len() {
            for p in 0..self.services[s].pods.len() {
                let pod = &mut self.services[s].pods[p];
                let here = pod.agent == Some(agent);
                let launched = matches!(
                    pod.state,
                    PodState::Running | PodState::Prepared | PodState::Starting
                );
                if !here || !launched {
                    continue;
                }
                for t in pod.tasks.iter_mut().filter(|t| t.live()) {
                    t.state = Some("TASK_KILLING");
                }
                pod.state = PodState::Killing;
                self.set_away(s, p, true);
                self.schedule_pod(s, p, grace, PodStep::Killed);
            }
        }
    }

    /// An agent removed: its pods' tasks are lost; each pod waits for its
    /// reservation there, which never comes back.
    pub(in super::super) fn lose_pods_on(&mut self, agent: AgentIdx) {
        let now = self.now;
        for s in 0..self.services.len() {
            for p in 0..self.services[s].pods.len() {
                let pod = &mut self.services[s].pods[p];
                if pod.agent != Some(agent) || !pod.live() {
                    continue;
                }
                end_tasks(pod, "TASK_LOST", now);
                self.pod_down(s, p);
            }
        }
    }

    /// The agent's machine is gone (Mesos does not know yet): its pods
    /// stopped serving.
    pub(in super::super) fn pods_host_stopped(&mut self, agent: AgentIdx) {
        for s in 0..self.services.len() {
            for p in 0..self.services[s].pods.len() {
                if self.services[s].pods[p].agent == Some(agent) {
                    self.set_away(s, p, true);
                }
            }
        }
    }

    pub(in super::super) fn on_pod_event(&mut self, s: usize, p: usize, epoch: u64, step: PodStep) {
        if self.services[s].pods[p].epoch != epoch {
            return;
        }
        match step {
            PodStep::Killed => self.on_pod_killed(s, p),
            PodStep::Launch => self.on_pod_launch(s, p),
            PodStep::Starting => self.on_pod_starting(s, p),
            PodStep::Ready => self.on_pod_ready(s, p),
            PodStep::Crash => self.on_pod_crash(s, p),
        }
    }

    fn on_pod_killed(&mut self, s: usize, p: usize) {
        let now = self.now;
        let pod = &mut self.services[s].pods[p];
        if pod.state != PodState::Killing {
            return;
        }
        end_tasks(pod, "TASK_KILLED", now);
        let agent = pod.agent;
        self.pod_down(s, p);
        // A draining agent whose last task this was is DRAINED now.
        if let Some(agent) = agent {
            let a = &self.mesos.agents[agent];
            let draining = a.is_registered() && a.drain.is_some() && a.tasks.is_empty();
            if draining && !self.other_frameworks_live_on(agent) {
                self.on_agent_drained(agent);
            }
        }
    }

    /// The pod has no live task left: replaced, it frees its reservation;
    /// either way its recovery step waits (PENDING) for an offer.
    fn pod_down(&mut self, s: usize, p: usize) {
        self.services[s].pods[p].state = PodState::Pending;
        self.set_away(s, p, true);
        if self.services[s].pods[p].permanent {
            self.release_pod(s, p);
        }
        if self.services[s].pods[p].deployed {
            self.add_recovery_phase(s, p);
        }
        self.schedule_pod(s, p, self.timing.offer_interval_ms, PodStep::Launch);
    }

    /// A recovery for pod `p` replaces the plan's completed phases and any
    /// earlier one of the pod.
    fn add_recovery_phase(&mut self, s: usize, p: usize) {
        let service = &mut self.services[s];
        service.recovery.retain(|ph| !ph.complete && ph.pod != p);
        service.recoveries += 1;
        let serial = service.recoveries;
        service.recovery.push(RecoveryPhase {
            pod: p,
            serial,
            complete: false,
        });
    }

    /// The recovery step looks for an offer: its own agent's (in place) or,
    /// replaced, any agent's with room. Not while the scheduler is down
    /// or the plan interrupted.
    fn on_pod_launch(&mut self, s: usize, p: usize) {
        let pod = &self.services[s].pods[p];
        if pod.state != PodState::Pending {
            return;
        }
        let proceeds = if pod.deployed {
            !self.services[s].recovery_interrupted
        } else {
            self.services[s].deploy.resumed_at.is_some()
        };
        let target = if !proceeds || !self.scheduler_running(&self.services[s].name) {
            None
        } else if pod.permanent || pod.agent.is_none() {
            self.pick_pod_agent(s, p)
        } else {
            pod.agent.filter(|&a| self.pod_offers_from(a))
        };
        let Some(agent) = target else {
            self.schedule_pod(s, p, self.timing.offer_interval_ms, PodStep::Launch);
            return;
        };
        if self.services[s].pods[p].agent != Some(agent) {
            self.reserve_pod(s, p, agent);
        }
        let crashes = matches!(
            self.image_effect_on(agent),
            Some(ImageEffect::Crash | ImageEffect::Unhealthy)
        );
        let service = &mut self.services[s];
        let pod = &mut service.pods[p];
        pod.launches += 1;
        pod.permanent = false;
        pod.crashes = crashes;
        retire_tasks(pod);
        pod.tasks = new_tasks(&service.name, &service.types[pod.kind], pod, agent);
        pod.state = PodState::Prepared;
        self.schedule_pod(s, p, PREPARE_MS, PodStep::Starting);
    }

    fn on_pod_starting(&mut self, s: usize, p: usize) {
        let now = self.now;
        let service = &mut self.services[s];
        let readiness_ms = service.types[service.pods[p].kind].readiness_ms;
        let pod = &mut service.pods[p];
        if pod.state != PodState::Prepared {
            return;
        }
        for t in &mut pod.tasks {
            t.state = Some("TASK_STARTING");
            t.started_at = Some(now);
        }
        pod.state = PodState::Starting;
        if pod.crashes {
            self.schedule_pod(s, p, CRASH_AFTER_MS, PodStep::Crash);
        } else {
            self.schedule_pod(s, p, readiness_ms, PodStep::Ready);
        }
    }

    fn on_pod_ready(&mut self, s: usize, p: usize) {
        let service = &mut self.services[s];
        let pod = &mut service.pods[p];
        if pod.state != PodState::Starting {
            return;
        }
        for t in &mut pod.tasks {
            t.state = Some("TASK_RUNNING");
        }
        pod.state = PodState::Running;
        pod.deployed = true;
        for phase in service.recovery.iter_mut().filter(|ph| ph.pod == p) {
            phase.complete = true;
        }
        self.set_away(s, p, false);
    }

    /// A task on a bad image exits: the pod is down again, its step back
    /// to PENDING, and relaunched in place (its reservation kept): it
    /// never comes back by itself.
    fn on_pod_crash(&mut self, s: usize, p: usize) {
        let now = self.now;
        let pod = &mut self.services[s].pods[p];
        if pod.state != PodState::Starting {
            return;
        }
        end_tasks(pod, "TASK_FAILED", now);
        pod.state = PodState::Pending;
        let has_phase = self.services[s].recovery.iter().any(|ph| ph.pod == p);
        if self.services[s].pods[p].deployed && !has_phase {
            self.add_recovery_phase(s, p);
        }
        self.schedule_pod(s, p, self.timing.offer_interval_ms, PodStep::Launch);
    }
}

/// The pod's live tasks end in `state` (its statuses stay the pod's
/// until it is relaunched).
fn end_tasks(pod: &mut super::Pod, state: &'static str, now: super::SimTime) {
    for t in pod.tasks.iter_mut().filter(|t| t.live()) {
        t.state = Some(state);
        t.ended_at = Some(now);
    }
}

/// The pod's tasks before a relaunch join the ended ones the master lists
/// (the newest `ENDED_KEPT`).
fn retire_tasks(pod: &mut super::Pod) {
    let launched = std::mem::take(&mut pod.tasks)
        .into_iter()
        .filter(|t| t.agent.is_some());
    pod.ended.extend(launched);
    let excess = pod.ended.len().saturating_sub(ENDED_KEPT);
    pod.ended.drain(..excess);
}
