//! Marathon's framework as the master lists it, built from the world's
//! Marathon tasks under the framework id Marathon's `/v2/info` gives: the
//! `frameworks` of `/master/state`, `/master/frameworks` and
//! `/master/state-summary`, and the tasks of `/master/tasks`; after it,
//! the frameworks of the world's job runs (`[[jobs]]`) and of its DC/OS
//! SDK services (`[[services]]`, each named after its service, its pods'
//! tasks as its tasks), in every one of those endpoints.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::sim::world::{AgentView, JobRunView, TaskView, World};

use super::wire::{
    Framework, FrameworkSummary, Slave, SummaryFramework, SummarySlave, TaskCounts, TaskStatus,
    V0Resources, V0Task,
};

/// Marathon's name in its FrameworkInfo (and `/v2/info`'s `frameworkName`).
const NAME: &str = "marathon";

/// What Marathon ≥ 1.5 announces: it understands TASK_KILLING and
/// partition-aware states (TASK_UNREACHABLE).
const CAPABILITIES: [&str; 2] = ["TASK_KILLING_STATE", "PARTITION_AWARE"];

/// Marathon's default `--failover_timeout` (one week), in seconds.
const FAILOVER_TIMEOUT_S: f64 = 604_800.0;

/// What the leading master knows of agents and tasks at one instant, read
/// under one lock of the world.
pub(crate) struct Snapshot {
    pub(crate) agents: Vec<AgentView>,
    tasks: Vec<TaskView>,
    /// One task's (cpus, mem), by app id.
    per_task: HashMap<String, (f64, f64)>,
    framework_id: String,
    now_unix_ms: u64,
    elected_unix_ms: u64,
    /// The leading Marathon's URL, as Marathon registers its framework.
    webui_url: String,
    /// The role Marathon registered with: its tasks' resources are
    /// allocated to it.
    role: String,
    /// Every job run of the other frameworks (launched or not), then
    /// every SDK service's pods' tasks Mesos knows.
    runs: Vec<JobRunView>,
}

impl Snapshot {
    pub(crate) fn read(w: &World, webui_url: String) -> Snapshot {
        Snapshot {
            webui_url,
            agents: w.agents(),
            tasks: w.tasks(),
            per_task: w
                .apps(false)
                .into_iter()
                .map(|app| (app.id, (app.cpus, app.mem)))
                .collect(),
            framework_id: w.marathon_framework_id(),
            now_unix_ms: w.unix_ms(w.now()),
            elected_unix_ms: w.master_elected_unix_ms(),
            role: w.marathon_role().to_string(),
            runs: w.job_runs().into_iter().chain(w.pod_tasks()).collect(),
        }
    }

    /// Every framework as `/master/state` and `/master/frameworks` list
    /// them: Marathon's, then the job frameworks with a launched run.
    pub(crate) fn frameworks(&self, hostname: &str) -> Vec<Framework> {
        let mut all = vec![self.framework(hostname)];
        all.extend(job_frameworks(&self.runs, hostname, self.now_unix_ms));
        all
    }

    /// Every framework as `/master/state-summary` lists them: each with
    /// its tasks' counts by state and the agents they are (or were) on.
    pub(crate) fn summary_frameworks(&self, hostname: &str) -> Vec<SummaryFramework> {
        let mut all = vec![self.summary_framework(hostname)];
        for f in job_frameworks(&self.runs, hostname, self.now_unix_ms) {
            let mut counts = TaskCounts::default();
            let mut slave_ids = BTreeSet::new();
            for t in f.tasks.iter().chain(&f.completed_tasks) {
                counts.count(t.state);
                slave_ids.insert(t.slave_id.clone());
            }
            all.push(SummaryFramework {
                summary: f.summary,
                counts,
                slave_ids: slave_ids.into_iter().collect(),
            });
        }
        all
    }

    /// The launched job runs, as tasks of their frameworks.
    fn job_tasks(&self) -> impl Iterator<Item = V0Task> + '_ {
        self.runs
            .iter()
            .filter(|r| r.state.is_some())
            .map(|r| job_task(r, self.now_unix_ms))
    }

    /// Marathon's framework with its tasks, as `/master/state` and
    /// `/master/frameworks` list it. `hostname` is where Marathon runs:
    /// the simulated Marathons listen where the masters do.
    pub(crate) fn framework(&self, hostname: &str) -> Framework {
        let mut tasks = Vec::new();
        let mut unreachable_tasks = Vec::new();
        let mut completed_tasks = Vec::new();
        for task in self.tasks.iter().map(|t| self.task(t)) {
            match task.state {
                "TASK_STAGING" | "TASK_STARTING" | "TASK_RUNNING" | "TASK_KILLING" => {
                    tasks.push(task)
                }
                "TASK_UNREACHABLE" => unreachable_tasks.push(task),
                _ => completed_tasks.push(task),
            }
        }
        let summary = self.summary(hostname);
        Framework {
            resources: summary.used_resources.clone(),
            summary,
            user: "root",
            failover_timeout: FAILOVER_TIMEOUT_S,
            checkpoint: true,
            role: self.role.clone(),
            // Marathon (re-)registers with each newly elected master.
            registered_time: self.elected_unix_ms as f64 / 1000.0,
            unregistered_time: 0.0,
            tasks,
            unreachable_tasks,
            completed_tasks,
            offers: Vec::new(),
            executors: Vec::new(),
        }
    }

    /// `/master/state-summary`'s frameworks.
    pub(crate) fn summary_framework(&self, hostname: &str) -> SummaryFramework {
        let mut counts = TaskCounts::default();
        let mut slave_ids = BTreeSet::new();
        for t in &self.tasks {
            counts.count(t.state);
            slave_ids.insert(t.slave_id.clone());
        }
        SummaryFramework {
            summary: self.summary(hostname),
            counts,
            slave_ids: slave_ids.into_iter().collect(),
        }
    }

    /// `/master/state-summary`'s slaves: each agent with its tasks' counts
    /// (job runs' too) and the frameworks running them.
    pub(crate) fn summary_slaves(&self) -> Vec<SummarySlave> {
        self.agents
            .iter()
            .map(|agent| {
                let mut counts = TaskCounts::default();
                let mut framework_ids = Vec::new();
                for t in self.tasks.iter().filter(|t| t.slave_id == agent.id) {
                    counts.count(t.state);
                    if framework_ids.is_empty() {
                        framework_ids.push(self.framework_id.clone());
                    }
                }
                let here = self.job_tasks().filter(|t| t.slave_id == agent.id);
                for t in here {
                    counts.count(t.state);
                    if !framework_ids.contains(&t.framework_id) {
                        framework_ids.push(t.framework_id);
                    }
                }
                SummarySlave {
                    slave: Slave::from_view(agent),
                    counts,
                    framework_ids,
                }
            })
            .collect()
    }

    /// `/master/tasks`: every task (Marathon's and the job runs'), sorted by its first status update
    /// (newest first unless `ascending`; a task without one, still
    /// staging, comes last, or first when ascending), then
    /// `offset`/`limit` applied, as Mesos does.
    pub(crate) fn tasks(&self, ascending: bool, offset: usize, limit: usize) -> Vec<V0Task> {
        let mut tasks: Vec<V0Task> = self.tasks.iter().map(|t| self.task(t)).collect();
        tasks.extend(self.job_tasks());
        let first = |t: &V0Task| t.statuses.first().map(|s| s.timestamp);
        tasks.sort_by(|a, b| match (first(a), first(b)) {
            (Some(x), Some(y)) if ascending => x.total_cmp(&y),
            (Some(x), Some(y)) => y.total_cmp(&x),
            (None, Some(_)) if ascending => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) if ascending => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (None, None) => Ordering::Equal,
        });
        tasks.into_iter().skip(offset).take(limit).collect()
    }

    fn summary(&self, hostname: &str) -> FrameworkSummary {
        let mut used = V0Resources::default();
        for t in &self.tasks {
            let (cpus, mem) = self.resources_of(t);
            used.cpus += cpus;
            used.mem += mem;
        }
        FrameworkSummary {
            id: self.framework_id.clone(),
            name: NAME.to_string(),
            used_resources: used,
            offered_resources: V0Resources::default(),
            capabilities: CAPABILITIES.to_vec(),
            hostname: hostname.to_string(),
            webui_url: self.webui_url.clone(),
            active: true,
            connected: true,
            recovered: false,
        }
    }

    fn resources_of(&self, t: &TaskView) -> (f64, f64) {
        self.per_task.get(&t.app_id).copied().unwrap_or((0.0, 0.0))
    }

    /// A task as `json(const Task&)` writes it. Its status updates: the
    /// TASK_RUNNING of its start, then the state it is in now if it has
    /// ended (the world keeps no time for that, so now: it is expunged
    /// within seconds anyway).
    fn task(&self, t: &TaskView) -> V0Task {
        let (cpus, mem) = self.resources_of(t);
        let mut statuses = Vec::new();
        if let Some(started) = t.started_unix_ms {
            statuses.push(TaskStatus {
                state: "TASK_RUNNING",
                timestamp: started as f64 / 1000.0,
            });
        }
        if !matches!(t.state, "TASK_STAGING" | "TASK_RUNNING") {
            statuses.push(TaskStatus {
                state: t.state,
                timestamp: self.now_unix_ms as f64 / 1000.0,
            });
        }
        V0Task {
            id: t.id.clone(),
            // Marathon names a task after its app id, reversed and dotted
            // (`/shop/api` runs tasks named `api.shop`).
            name: t
                .app_id
                .trim_start_matches('/')
                .rsplit('/')
                .collect::<Vec<_>>()
                .join("."),
            framework_id: self.framework_id.clone(),
            executor_id: String::new(),
            slave_id: t.slave_id.clone(),
            state: t.state,
            resources: V0Resources {
                cpus,
                gpus: 0.0,
                mem,
                disk: 0.0,
                ports: super::wire::port_ranges(&[t.host_port]),
            },
            role: self.role.clone(),
            statuses,
        }
    }
}

/// The frameworks of the world's job runs (`[[jobs]]`), as the master
/// lists them beside Marathon's: each with its live runs as `tasks` and
/// its ended ones as `completed_tasks`; a framework registers once its
/// first run is launched.
fn job_frameworks(runs: &[JobRunView], hostname: &str, now_unix_ms: u64) -> Vec<Framework> {
    let mut by_name: BTreeMap<&str, Vec<&JobRunView>> = BTreeMap::new();
    for run in runs.iter().filter(|r| r.state.is_some()) {
        by_name.entry(run.framework.as_str()).or_default().push(run);
    }
    by_name
        .into_iter()
        .map(|(name, runs)| {
            let (live, ended): (Vec<&JobRunView>, Vec<&JobRunView>) =
                runs.into_iter().partition(|r| {
                    matches!(
                        r.state,
                        Some("TASK_STAGING" | "TASK_STARTING" | "TASK_RUNNING" | "TASK_KILLING")
                    )
                });
            let mut used = V0Resources::default();
            for r in &live {
                used.cpus += r.cpus;
                used.mem += r.mem;
            }
            let first = live
                .iter()
                .chain(&ended)
                .filter_map(|r| r.started_unix_ms)
                .min()
                .unwrap_or(now_unix_ms);
            Framework {
                summary: FrameworkSummary {
                    id: framework_id_of(&live, &ended),
                    name: name.to_string(),
                    used_resources: used.clone(),
                    offered_resources: V0Resources::default(),
                    capabilities: Vec::new(),
                    hostname: hostname.to_string(),
                    webui_url: String::new(),
                    active: true,
                    connected: true,
                    recovered: false,
                },
                user: "root",
                failover_timeout: FAILOVER_TIMEOUT_S,
                checkpoint: true,
                role: live
                    .iter()
                    .chain(&ended)
                    .map(|r| r.role.clone())
                    .next()
                    .unwrap_or_else(|| "*".to_string()),
                registered_time: first as f64 / 1000.0,
                unregistered_time: 0.0,
                resources: used,
                tasks: live.iter().map(|r| job_task(r, now_unix_ms)).collect(),
                unreachable_tasks: Vec::new(),
                completed_tasks: ended.iter().map(|r| job_task(r, now_unix_ms)).collect(),
                offers: Vec::new(),
                executors: Vec::new(),
            }
        })
        .collect()
}

fn framework_id_of(live: &[&JobRunView], ended: &[&JobRunView]) -> String {
    live.iter()
        .chain(ended)
        .map(|r| r.framework_id.clone())
        .next()
        .unwrap_or_default()
}

/// A job run (or a pod's task) as `json(const Task&)` writes it: named
/// after its job (task), its status updates oldest first: none while
/// staging, TASK_STARTING alone while starting (a pod's task starts before
/// it runs), else TASK_RUNNING at its start and the state it ended in.
fn job_task(r: &JobRunView, now_unix_ms: u64) -> V0Task {
    let state = r.state.unwrap_or("TASK_STAGING");
    let mut statuses = Vec::new();
    if let Some(started) = r.started_unix_ms.filter(|_| state != "TASK_STAGING") {
        statuses.push(TaskStatus {
            state: if state == "TASK_STARTING" {
                "TASK_STARTING"
            } else {
                "TASK_RUNNING"
            },
            timestamp: started as f64 / 1000.0,
        });
    }
    if !matches!(state, "TASK_RUNNING" | "TASK_STARTING" | "TASK_STAGING") {
        statuses.push(TaskStatus {
            state,
            timestamp: r.ended_unix_ms.unwrap_or(now_unix_ms) as f64 / 1000.0,
        });
    }
    V0Task {
        id: r.task_id.clone(),
        name: r.job.clone(),
        framework_id: r.framework_id.clone(),
        executor_id: String::new(),
        slave_id: r.agent_id.clone().unwrap_or_default(),
        state,
        resources: V0Resources {
            cpus: r.cpus,
            mem: r.mem,
            ..V0Resources::default()
        },
        role: r.role.clone(),
        statuses,
    }
}
