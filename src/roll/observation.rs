//! What one tick of the roll reads of Marathon, Mesos and the group,
//! shared by every step of that tick: a drain has a step per old agent,
//! and each would otherwise read the whole cluster on every tick. The
//! runner drops it at the start of each tick, and drops the group after
//! any write to it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use super::checkpoint::Checkpoint;
use super::cluster::describe;
use super::error::RollError;
use super::health;
use super::ports::auto_scaling::{AutoScaling, AutoScalingGroup};
use super::ports::marathon::{App, Marathon};
use super::ports::mesos::{Agent, MesosMaster};
use super::ports::pager::Pager;
use super::runner::Runner;

pub struct Observation {
    /// Marathon's apps, with the tasks on agents Mesos no longer has
    /// taken out (see `health::drop_tasks_on_lost_agents`).
    pub apps: Vec<App>,
    /// Every agent Mesos lists as registered, active or not.
    pub agents: Vec<Agent>,
    /// Tasks Marathon lists per agent id, before any is taken out: an
    /// agent is empty only once Marathon lists nothing on it.
    tasks_by_agent: HashMap<String, usize>,
    /// Index of each agent in `agents`, by id.
    agent_at: HashMap<String, usize>,
}

impl Observation {
    pub fn new(mut apps: Vec<App>, agents: Vec<Agent>) -> Observation {
        let mut tasks_by_agent: HashMap<String, usize> = HashMap::new();
        for task in apps.iter().flat_map(|a| &a.tasks) {
            if let Some(agent) = &task.agent_id {
                *tasks_by_agent.entry(agent.clone()).or_default() += 1;
            }
        }
        let active: HashSet<String> = agents
            .iter()
            .filter(|a| a.active)
            .map(|a| a.id.0.clone())
            .collect();
        health::drop_tasks_on_lost_agents(&mut apps, &active);
        let agent_at = agents
            .iter()
            .enumerate()
            .map(|(n, a)| (a.id.0.clone(), n))
            .collect();
        Observation {
            apps,
            agents,
            tasks_by_agent,
            agent_at,
        }
    }

    /// Tasks Marathon lists on `agent` (being killed included).
    pub fn tasks_on(&self, agent: &str) -> usize {
        self.tasks_by_agent.get(agent).copied().unwrap_or(0)
    }

    pub fn agent(&self, id: &str) -> Option<&Agent> {
        self.agent_at.get(id).map(|&n| &self.agents[n])
    }

    pub fn is_active(&self, id: &str) -> bool {
        self.agent(id).is_some_and(|a| a.active)
    }

    /// Ids of every task Marathon lists.
    pub fn task_ids(&self) -> HashSet<&str> {
        self.apps
            .iter()
            .flat_map(|a| &a.tasks)
            .map(|t| t.id.as_str())
            .collect()
    }

    /// Why `agent` is not empty yet, or `None` when nothing runs on it:
    /// no task of Marathon's, and no resource in use as Mesos sees it
    /// (another framework's task, which Marathon cannot show).
    pub fn busy(&self, agent: &str) -> Option<String> {
        let tasks = self.tasks_on(agent);
        if tasks > 0 {
            return Some(format!("{tasks} Marathon task(s) still on agent {agent}"));
        }
        let used = &self.agent(agent)?.used_resources;
        (used.cpus > 0.0 || used.mem > 0.0).then(|| {
            format!(
                "Marathon lists nothing on agent {agent}, but Mesos reports {} cpus and {} MB in use there (another framework's tasks?)",
                used.cpus, used.mem
            )
        })
    }
}

impl<A, M, K, P> Runner<'_, A, M, K, P>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
{
    /// Marathon and Mesos as this tick sees them (read once per tick).
    pub(super) async fn observe(&mut self) -> Result<Arc<Observation>, RollError> {
        if let Some(seen) = &self.seen {
            return Ok(seen.clone());
        }
        let apps = self.ports.marathon.apps().await?;
        let agents = self.ports.mesos.agents().await?.registered;
        let seen = Arc::new(Observation::new(apps, agents));
        self.seen = Some(seen.clone());
        Ok(seen)
    }

    /// The group as this tick sees it (read once per tick: a termination
    /// this tick is not in it; `check_no_other_writer_this_tick` accounts
    /// for those).
    pub(super) async fn observed_group(&mut self) -> Result<Arc<AutoScalingGroup>, RollError> {
        if let Some(group) = &self.group {
            return Ok(group.clone());
        }
        let group = Arc::new(describe(self.ports.aws, &self.checkpoint.asg).await?);
        self.group = Some(group.clone());
        Ok(group)
    }

    /// Check before write, on this tick's look at the group: its desired
    /// capacity must be N + K minus the terminations that look shows
    /// landed (this roll's instances it no longer has in service). An
    /// intent whose call never landed (a crash) is not counted, nor is a
    /// termination sent since the look. The look is at most one tick old;
    /// the adapter reads the group again right before it terminates (the
    /// instance must still be in service, MinSize kept).
    pub(super) async fn check_no_other_writer_this_tick(&mut self) -> Result<(), RollError> {
        let group = self.observed_group().await?;
        let landed = self
            .checkpoint
            .instances
            .iter()
            .filter(|i| i.terminate_sent)
            .filter(|i| {
                group
                    .instance(&i.id)
                    .is_none_or(|g| g.lifecycle_state.is_leaving())
            })
            .count();
        let expected = self
            .checkpoint
            .desired_after(u32::try_from(landed).unwrap_or(u32::MAX));
        other_writer(&self.checkpoint, &group, expected)
    }

    /// Mesos' maintenance status as this tick sees it (read once per tick).
    pub(super) async fn observed_maintenance(
        &mut self,
    ) -> Result<Arc<super::ports::mesos::MaintenanceStatus>, RollError> {
        if let Some(status) = &self.maintenance_seen {
            return Ok(status.clone());
        }
        let status = Arc::new(self.ports.mesos.maintenance_status().await?);
        self.maintenance_seen = Some(status.clone());
        Ok(status)
    }
}

/// The group as the roll left it: desired capacity `expected` (N + K −
/// the terminations landed), MinSize as found, MaxSize as found or as
/// `--raise-max` set it, the processes suspended before the roll and by
/// it. Any difference is another writer's change, all of them said at
/// once: the roll stops and pages, and never changes anything back.
pub(super) fn other_writer(
    checkpoint: &Checkpoint,
    group: &AutoScalingGroup,
    expected: u32,
) -> Result<(), RollError> {
    let asg = &checkpoint.asg;
    let min = checkpoint.original.min_size;
    // `--raise-max` sets MaxSize to N + K.
    let max = match checkpoint.raised_max_from {
        Some(_) => checkpoint.desired_after(0),
        None => checkpoint.original.max_size,
    };
    let suspended: BTreeSet<&str> = checkpoint
        .suspended_before
        .iter()
        .chain(&checkpoint.suspended_by_roll)
        .map(String::as_str)
        .collect();
    let found: BTreeSet<&str> = group
        .suspended_processes
        .iter()
        .map(|p| p.as_str())
        .collect();
    let mut changes = Vec::new();
    if group.desired_capacity != expected {
        changes.push(format!(
            "desired capacity is {}, not {expected} (N + K - terminated)",
            group.desired_capacity
        ));
    }
    if group.min_size != min {
        changes.push(format!("MinSize is {}, not {min}", group.min_size));
    }
    if group.max_size != max {
        changes.push(format!("MaxSize is {}, not {max}", group.max_size));
    }
    if found != suspended {
        let list = |set: &BTreeSet<&str>| {
            if set.is_empty() {
                "none".to_string()
            } else {
                set.iter().copied().collect::<Vec<_>>().join(", ")
            }
        };
        changes.push(format!(
            "the suspended processes are {}, not {}",
            list(&found),
            list(&suspended)
        ));
    }
    if changes.is_empty() {
        return Ok(());
    }
    Err(RollError::OtherWriter(format!(
        "ASG {asg}: {}, as this roll left it: another writer changed the group. Nothing was \
         terminated and nothing is changed back. Find out who, set it back (or abandon the roll), \
         then rerun",
        changes.join("; ")
    )))
}
