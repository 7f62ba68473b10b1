//! DC/OS SDK data services (the scenario's `[[services]]`, as
//! dcos-commons' hello-world or Kafka): each a framework of its own with
//! Mesos, its pods placed at the start on distinct unreserved agents per
//! pod type, each holding its resources on its agent (reserved: bound to
//! it). Roller reaches a service through its plans and pod API (the
//! admin router facade, `plans`), never by Mesos alone.
//!
//! As dcos-commons does it (without a failure policy):
//! - A pod killed by DRAIN_AGENT, lost with its agent, or failing on a bad
//!   image is failed for good only when someone says so: its recovery
//!   step waits (PENDING) to relaunch it in place, on its own agent's
//!   reserved resources, which a drained or gone agent never offers.
//! - `pod replace` kills its tasks (TASK_KILLED after the kill's
//!   delay), frees its reservation, and only then adds the recovery step,
//!   which relaunches it on any agent with room that offers: registered,
//!   answering, active, not draining, its machine running. Maintenance
//!   windows are ignored (the SDK reads no unavailability), so a replaced
//!   pod can land on an agent a roll is about to take away.
//! - A step goes PENDING → PREPARED (offer accepted) → STARTING (tasks
//!   launched) → COMPLETE (running and ready, `readiness_s` later).
//!
//! Here the state, placement and the hooks the agents call; `lifecycle`
//! the pods' events, `plans` the deploy and recovery plans and the pod
//! API, `watch` the monitor's figures.

mod lifecycle;
mod plans;
mod watch;

#[cfg(test)]
mod tests;

pub(crate) use plans::{
    PhaseView, PlanCommand, PlanView, PodInfoView, PodInstanceStatus, PodTypeStatus, ServiceError,
    StepView,
};
pub use watch::ServiceReport;

use serde::Serialize;

use super::World;
use super::agents::to_milli;
use super::clock::SimTime;
use super::events::{AgentIdx, Event};
use super::jobs::{JobRunView, framework_id};
use crate::sim::scenario::{SDK_API_LABEL, SERVICE_NAME_LABEL, ServiceSpec, millis};

/// Old incarnations of a pod's tasks kept for the master's
/// `completed_tasks` (a pod failing in a loop would grow them forever).
const ENDED_KEPT: usize = 20;

/// Where a pod is in its life, as its recovery (or deploy) step shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub(crate) enum PodState {
    /// Its tasks running and ready: its step COMPLETE.
    Running,
    /// A kill asked (a replace, a drain): its tasks TASK_KILLING.
    Killing,
    /// No live task: failed, killed or lost, waiting for an offer.
    Pending,
    /// An offer accepted, its tasks staged.
    Prepared,
    /// Its tasks launched (TASK_STARTING), not yet ready.
    Starting,
}

impl PodState {
    /// Its step's status in a plan.
    pub(crate) fn step_status(self) -> &'static str {
        match self {
            PodState::Running => "COMPLETE",
            PodState::Killing | PodState::Pending => "PENDING",
            PodState::Prepared => "PREPARED",
            PodState::Starting => "STARTING",
        }
    }
}

/// One pod type of a service, in the world's units.
#[derive(Clone, Debug)]
struct PodType {
    kind: String,
    cpus: u64,
    mem: u64,
    cpus_f: f64,
    mem_f: f64,
    tasks: Vec<String>,
    readiness_ms: u64,
}

/// One incarnation of one of a pod's tasks.
#[derive(Clone, Debug)]
struct PodTask {
    /// `<pod>-<task>`.
    name: String,
    id: String,
    /// The agent it was launched on (its TaskInfo's `slave_id`).
    agent: Option<AgentIdx>,
    /// Its Mesos state; `None` while staged (no status yet).
    state: Option<&'static str>,
    started_at: Option<SimTime>,
    ended_at: Option<SimTime>,
}

impl PodTask {
    fn live(&self) -> bool {
        matches!(
            self.state,
            Some("TASK_STARTING" | "TASK_RUNNING" | "TASK_KILLING")
        ) || (self.state.is_none() && self.agent.is_some())
    }
}

/// One pod instance (`hello-0`).
#[derive(Clone, Debug)]
pub(crate) struct Pod {
    kind: usize,
    name: String,
    /// The agent its resources are reserved on (`None`: none, after a
    /// replace freed them or before its first placement).
    agent: Option<AgentIdx>,
    state: PodState,
    /// Bumped at each change an event was scheduled for: an event of
    /// another epoch is stale.
    epoch: u64,
    /// Launches so far (task ids are derived from it).
    launches: u64,
    /// Replaced: relaunched anywhere once its kill is over.
    permanent: bool,
    /// Its last launch was on a bad image: its tasks fail, never ready.
    crashes: bool,
    /// Its deploy step has been COMPLETE once (a pod that found no room
    /// at the start has not).
    deployed: bool,
    tasks: Vec<PodTask>,
    ended: Vec<PodTask>,
    /// Since when it has not been running and ready (ground truth: from
    /// its host's death, before Mesos knows).
    away_since: Option<SimTime>,
    /// `POST /v1/pod/<pod>/replace` calls it answered (a roll replaces
    /// each pod once).
    replaces: u32,
}

impl Pod {
    fn live(&self) -> bool {
        self.tasks.iter().any(PodTask::live)
    }
}

/// A recovery plan's phase: one pod's relaunch.
#[derive(Clone, Debug)]
struct RecoveryPhase {
    pod: usize,
    /// Serial of the recovery (its ids derive from it).
    serial: u64,
    complete: bool,
}

/// The deploy plan's progress over `deploy_ms` of not interrupted time.
#[derive(Clone, Copy, Debug)]
struct DeployProgress {
    deploy_ms: u64,
    elapsed_before_ms: u64,
    /// When it last proceeded; `None` while interrupted.
    resumed_at: Option<SimTime>,
}

impl DeployProgress {
    fn elapsed_ms(&self, now: SimTime) -> u64 {
        self.elapsed_before_ms + self.resumed_at.map_or(0, |t| now.since(t))
    }
}

/// One service.
#[derive(Clone, Debug)]
pub(crate) struct Service {
    name: String,
    framework_id: String,
    types: Vec<PodType>,
    pods: Vec<Pod>,
    deploy: DeployProgress,
    deploy_errors: Vec<String>,
    recovery: Vec<RecoveryPhase>,
    recovery_interrupted: bool,
    recoveries: u64,
    watch: watch::ServiceWatch,
}

impl Service {
    fn pod_by_name(&self, name: &str) -> Option<usize> {
        self.pods.iter().position(|p| p.name == name)
    }

    /// `hello-0:[server]`, the name of a pod's steps.
    fn step_name(&self, p: usize) -> String {
        let pod = &self.pods[p];
        format!("{}:[{}]", pod.name, self.types[pod.kind].tasks.join(","))
    }
}

/// A pod as the ground truth shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PodView {
    pub service: String,
    /// The pod instance (`kafka-0`).
    pub pod: String,
    pub pod_type: String,
    /// The agent (index, id and instance) its resources are reserved on.
    pub agent: Option<usize>,
    pub agent_id: Option<String>,
    pub instance_id: Option<String>,
    pub(crate) state: PodState,
    /// Its current tasks' ids.
    pub task_ids: Vec<String>,
    /// Since when it has not been running and ready, in Unix ms.
    pub away_since_unix_ms: Option<u64>,
}

impl PodView {
    /// Running and ready.
    pub fn running(&self) -> bool {
        self.state == PodState::Running
    }
}

/// The task id of launch `launch` of `<pod>-<task>`: Mesos' `<name>__<uuid>`,
/// the uuid derived from the names (the world's random stream is left to
/// the rest of the world, so a service changes no other placement).
fn task_id(service: &str, task_name: &str, launch: u64) -> String {
    let uuid = uuid::Uuid::new_v5(
        &uuid::Uuid::NAMESPACE_URL,
        format!("{service}/{task_name}/{launch}").as_bytes(),
    );
    format!("{task_name}__{uuid}")
}

impl World {
    /// The scenario's services, each pod placed on the first agent with
    /// room from a place of the service's own (stable across seeds: no
    /// random number is drawn), one of its type per agent; a pod that
    /// fits nowhere waits for an offer, its deploy step PENDING.
    pub(super) fn add_services(&mut self, specs: &[ServiceSpec]) {
        for spec in specs {
            let s = self.services.len();
            let types: Vec<PodType> = spec
                .pods
                .iter()
                .map(|p| PodType {
                    kind: p.kind.clone(),
                    cpus: to_milli(p.cpus),
                    mem: to_milli(p.mem),
                    cpus_f: p.cpus,
                    mem_f: p.mem,
                    tasks: p.tasks.clone(),
                    readiness_ms: millis(p.readiness_s),
                })
                .collect();
            let mut pods = Vec::new();
            for (kind, p) in spec.pods.iter().enumerate() {
                for n in 0..p.count {
                    pods.push(Pod {
                        kind,
                        name: format!("{}-{n}", p.kind),
                        agent: None,
                        state: PodState::Pending,
                        epoch: 0,
                        launches: 0,
                        permanent: true,
                        crashes: false,
                        deployed: false,
                        tasks: Vec::new(),
                        ended: Vec::new(),
                        away_since: Some(self.now),
                        replaces: 0,
                    });
                }
            }
            let count = pods.len() as u32;
            self.services.push(Service {
                name: spec.name.clone(),
                framework_id: framework_id(&spec.name),
                types,
                pods,
                deploy: DeployProgress {
                    deploy_ms: millis(spec.deploy_s),
                    elapsed_before_ms: 0,
                    resumed_at: Some(self.now),
                },
                deploy_errors: spec.deploy_errors.clone(),
                recovery: Vec::new(),
                recovery_interrupted: false,
                recoveries: 0,
                watch: watch::ServiceWatch::new(count),
            });
            for p in 0..self.services[s].pods.len() {
                self.place_initial_pod(s, p);
            }
            // A pod with no room at the start is away from the start.
            self.services[s].watch.count_unplaced();
        }
    }

    fn place_initial_pod(&mut self, s: usize, p: usize) {
        let Some(agent) = self.pick_pod_agent(s, p) else {
            self.schedule_pod(s, p, self.timing.offer_interval_ms, PodStep::Launch);
            return;
        };
        self.reserve_pod(s, p, agent);
        let now = self.now;
        let service = &mut self.services[s];
        let pod = &mut service.pods[p];
        pod.launches += 1;
        pod.tasks = new_tasks(&service.name, &service.types[pod.kind], pod, agent);
        for t in &mut pod.tasks {
            t.state = Some("TASK_RUNNING");
            t.started_at = Some(now);
        }
        pod.state = PodState::Running;
        pod.permanent = false;
        pod.deployed = true;
        self.set_away(s, p, false);
    }

    /// An agent for pod `p`'s launch anywhere: unreserved, registered,
    /// answering, active, not draining, its machine running, with room,
    /// and holding no other pod of its type. Maintenance is not looked
    /// at: the SDK's schedulers ignore it.
    fn pick_pod_agent(&self, s: usize, p: usize) -> Option<AgentIdx> {
        let service = &self.services[s];
        let pod = &service.pods[p];
        let kind = &service.types[pod.kind];
        let n = self.mesos.agents.len();
        if n == 0 {
            return None;
        }
        let start = service
            .name
            .bytes()
            .map(usize::from)
            .fold(0usize, usize::wrapping_add)
            % n;
        (0..n).map(|k| (start + k) % n).find(|&agent| {
            let a = &self.mesos.agents[agent];
            let taken =
                service.pods.iter().enumerate().any(|(q, other)| {
                    q != p && other.kind == pod.kind && other.agent == Some(agent)
                });
            self.pod_offers_from(agent)
                && self.groups[a.group].role.is_none()
                && a.used_cpus + kind.cpus <= a.cpus
                && a.used_mem + kind.mem <= a.mem
                && !taken
        })
    }

    /// The agent's resources reach an SDK scheduler in offers.
    fn pod_offers_from(&self, agent: AgentIdx) -> bool {
        let a = &self.mesos.agents[agent];
        a.is_registered()
            && a.answering
            && !a.deactivated
            && a.drain.is_none()
            && self.agent_host_alive(agent)
    }

    fn reserve_pod(&mut self, s: usize, p: usize, agent: AgentIdx) {
        let service = &mut self.services[s];
        let pod = &mut service.pods[p];
        let kind = &service.types[pod.kind];
        let a = &mut self.mesos.agents[agent];
        a.used_cpus += kind.cpus;
        a.used_mem += kind.mem;
        pod.agent = Some(agent);
    }

    /// Frees the pod's reservation (a replace).
    fn release_pod(&mut self, s: usize, p: usize) {
        let service = &mut self.services[s];
        let pod = &mut service.pods[p];
        let kind = &service.types[pod.kind];
        if let Some(agent) = pod.agent.take() {
            let a = &mut self.mesos.agents[agent];
            a.used_cpus = a.used_cpus.saturating_sub(kind.cpus);
            a.used_mem = a.used_mem.saturating_sub(kind.mem);
        }
        self.offers_changed();
    }

    fn schedule_pod(&mut self, s: usize, p: usize, ms: u64, step: PodStep) {
        let pod = &mut self.services[s].pods[p];
        pod.epoch += 1;
        let epoch = pod.epoch;
        self.schedule_in(
            ms,
            Event::Pod {
                service: s,
                pod: p,
                epoch,
                step,
            },
        );
    }

    /// Whether a pod has a task launched on `agent` and not ended.
    pub(super) fn pods_live_on(&self, agent: AgentIdx) -> bool {
        self.services
            .iter()
            .flat_map(|s| &s.pods)
            .any(|p| p.agent == Some(agent) && p.live())
    }

    /// A job run or a pod's task is live on `agent`: it is not idle.
    pub(super) fn other_frameworks_live_on(&self, agent: AgentIdx) -> bool {
        self.jobs_live_on(agent) || self.pods_live_on(agent)
    }

    /// The service's scheduler (the Marathon app with its labels) has a
    /// running task: without one nothing answers behind the admin router
    /// and nothing recovers.
    pub(crate) fn scheduler_running(&self, name: &str) -> bool {
        self.marathon
            .apps
            .iter()
            .filter(|app| {
                app.labels.contains_key(SDK_API_LABEL)
                    && app.labels.get(SERVICE_NAME_LABEL).map(String::as_str) == Some(name)
            })
            .flat_map(|app| &app.tasks)
            .filter_map(|k| self.marathon.tasks.get(k))
            .any(|t| t.state == super::marathon::TaskState::Running)
    }

    /// When the service's deploy plan will have run its `deploy_s` (as a
    /// Unix time), if it is not interrupted; `None` for an unknown
    /// service or an interrupted deploy.
    #[cfg(test)]
    pub(crate) fn deploy_done_unix_ms(&self, name: &str) -> Option<u64> {
        let service = self.services.iter().find(|s| s.name == name)?;
        let d = &service.deploy;
        let left = d.deploy_ms.saturating_sub(d.elapsed_before_ms);
        let at = d.resumed_at?;
        Some(self.unix_ms(at) + left)
    }

    /// Every pod, service by service, as the ground truth.
    pub(crate) fn pods(&self) -> Vec<PodView> {
        let mut out = Vec::new();
        for service in &self.services {
            for pod in &service.pods {
                let agent = pod.agent.map(|a| &self.mesos.agents[a]);
                out.push(PodView {
                    service: service.name.clone(),
                    pod: pod.name.clone(),
                    pod_type: service.types[pod.kind].kind.clone(),
                    agent: pod.agent,
                    agent_id: agent.map(|a| a.id.clone()),
                    instance_id: agent.map(|a| a.instance_id.clone()),
                    state: pod.state,
                    task_ids: pod.tasks.iter().map(|t| t.id.clone()).collect(),
                    away_since_unix_ms: pod.away_since.map(|t| self.unix_ms(t)),
                });
            }
        }
        out
    }

    /// Every pod's task that Mesos knows (launched: live or ended), as
    /// tasks of the service's framework, beside the job runs.
    pub(crate) fn pod_tasks(&self) -> Vec<JobRunView> {
        let mut out = Vec::new();
        for service in &self.services {
            for pod in &service.pods {
                let kind = &service.types[pod.kind];
                let share = kind.tasks.len() as f64;
                for t in pod.ended.iter().chain(&pod.tasks) {
                    let Some(agent) = t.agent else { continue };
                    out.push(JobRunView {
                        framework: service.name.clone(),
                        framework_id: service.framework_id.clone(),
                        role: format!("{}-role", service.name),
                        job: t.name.clone(),
                        task_id: t.id.clone(),
                        agent_id: Some(self.mesos.agents[agent].id.clone()),
                        // Staged: Mesos knows it before its first status.
                        state: Some(t.state.unwrap_or("TASK_STAGING")),
                        cpus: kind.cpus_f / share,
                        mem: kind.mem_f / share,
                        started_unix_ms: t.started_at.map(|at| self.unix_ms(at)),
                        ended_unix_ms: t.ended_at.map(|at| self.unix_ms(at)),
                        kill_grace_ms: None,
                        kill_asked_unix_ms: None,
                    });
                }
            }
        }
        out
    }
}

/// A pod's event (`Event::Pod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PodStep {
    /// A kill's delay is over: its tasks are TASK_KILLED.
    Killed,
    /// Look for an offer to relaunch it.
    Launch,
    /// Its staged tasks are launched (TASK_STARTING).
    Starting,
    /// Its tasks run and its readiness check passed.
    Ready,
    /// On a bad image: its tasks fail.
    Crash,
}

/// A fresh incarnation of the pod's tasks on `agent`, staged.
fn new_tasks(service: &str, kind: &PodType, pod: &Pod, agent: AgentIdx) -> Vec<PodTask> {
    kind.tasks
        .iter()
        .map(|task| {
            let name = format!("{}-{task}", pod.name);
            PodTask {
                id: task_id(service, &name, pod.launches),
                name,
                agent: Some(agent),
                state: None,
                started_at: None,
                ended_at: None,
            }
        })
        .collect()
}
