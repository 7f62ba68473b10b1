//! `TickContext`: what one tick of the roll has read of the world, built
//! when the tick starts and handed to every step of it. A drain has a
//! step per old agent, and each would otherwise read the whole cluster on
//! every tick: here Marathon's apps, Mesos' agents, the group and Mesos'
//! maintenance status are each read at most once per tick, on first ask
//! (a tick whose steps need none of them reads none); so is the launch
//! queue the failure watch reads, and the frameworks' tasks per agent
//! (`/master/frameworks`, summed per agent once). A new tick starts
//! with a new context, so nothing read in one tick is trusted in the next.
//!
//! One tick's context serves every step of it, whatever group each acts
//! on: the groups are read by name, each at most once per tick.
//!
//! It also counts what the tick itself does that its reads cannot show
//! yet: the terminations it sent, and the old agents per AZ being
//! terminated (per group). And it holds the check every write to a group
//! is made after: nobody else changed it (`check_no_other_writer`), and
//! no Instance Refresh is at work on it (`check_no_refresh`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use futures_util::future::join_all;

use crate::roll::decide::agent_contents::{self, AgentContents};
use crate::roll::decide::{health, refresh};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{
    AgentIdentity, AlarmState, AutoScaling, AutoScalingGroup, LifecycleState,
};
use crate::roll::ports::marathon::{App, Marathon, QueuedLaunch};
use crate::roll::ports::mesos::{Agent, Framework, MaintenanceStatus, MesosMaster};
use crate::roll::record::checkpoint::GroupRoll;
use crate::roll::record::kinds::{GroupIndex, RollPlan, StepKind};

pub(crate) struct TickContext<P> {
    ports: P,
    agents: Option<Arc<Vec<Agent>>>,
    observation: Option<Arc<Observation>>,
    /// Each group this tick has read, by ASG name.
    groups: HashMap<String, Arc<AutoScalingGroup>>,
    maintenance: Option<Arc<MaintenanceStatus>>,
    queue: Option<Arc<Vec<QueuedLaunch>>>,
    frameworks: Option<Arc<Vec<Framework>>>,
    contents: Option<Arc<BTreeMap<String, AgentContents>>>,
    /// Old agents per AZ being terminated (sent, step not complete), per
    /// group, counted on first ask and kept up to date by this tick's
    /// sends.
    terminating: HashMap<GroupIndex, HashMap<String, usize>>,
    /// Instances whose termination this tick sent (the group this tick
    /// read still shows them in service).
    sent: HashSet<String>,
    /// Groups this tick found no instance refresh at work on.
    no_refresh: HashSet<String>,
    /// The last tick's observation: this tick's when Marathon's answer is
    /// that very answer (the adapter handing out what it kept while
    /// Marathon said nothing changed) and Mesos lists the same agents.
    previous: Option<Arc<Observation>>,
}

impl<P: Ports> TickContext<P> {
    pub(crate) fn new(ports: P) -> TickContext<P> {
        TickContext {
            ports,
            agents: None,
            observation: None,
            groups: HashMap::new(),
            maintenance: None,
            queue: None,
            frameworks: None,
            contents: None,
            terminating: HashMap::new(),
            sent: HashSet::new(),
            no_refresh: HashSet::new(),
            previous: None,
        }
    }

    /// A tick after one that observed `previous`.
    pub(crate) fn following(mut self, previous: Option<Arc<Observation>>) -> TickContext<P> {
        self.previous = previous;
        self
    }

    /// What this tick observed, if it looked (for the next tick).
    pub(crate) fn observed(&self) -> Option<Arc<Observation>> {
        self.observation.clone()
    }

    /// The observation of `apps` and `agents`: the last tick's when it
    /// was of the same answer and agents (worked out again it would be
    /// the same: it depends on nothing else).
    fn observe(&mut self, apps: Arc<Vec<App>>, agents: Arc<Vec<Agent>>) -> Arc<Observation> {
        match self.previous.take() {
            Some(previous) if Arc::ptr_eq(&previous.answer, &apps) && previous.agents == agents => {
                previous
            }
            _ => Arc::new(Observation::new(apps, agents)),
        }
    }

    /// Reads at once, before the tick's first look, what it is known to
    /// read one after the other: the groups `asgs` and, when `observe`,
    /// Marathon's apps, Mesos' agents and the launch queue (the failure
    /// watch's look). A tick's reads would otherwise wait on each other:
    /// at a poll interval of a few seconds and a cluster that answers in
    /// milliseconds, that wait is part of how late the roll sees a change.
    /// Reads nothing twice: what was read is kept as the lazy reads keep
    /// it; a read that fails is left for its first ask, which sends it
    /// again and answers its error where the tick decides what a failure
    /// means.
    pub(crate) async fn prefetch(&mut self, asgs: &[&str], observe: bool) {
        let ports = self.ports;
        let groups = join_all(
            asgs.iter()
                .filter(|asg| !self.groups.contains_key(**asg))
                .map(|asg| async move { (*asg, ports.aws().describe_group(asg).await) }),
        );
        let apps = read_if(
            observe && self.observation.is_none(),
            ports.marathon().apps(),
        );
        let agents = read_if(observe && self.agents.is_none(), ports.mesos().agents());
        let queue = read_if(
            observe && self.queue.is_none(),
            ports.marathon().launch_queue(),
        );
        let (groups, apps, agents, queue) = tokio::join!(groups, apps, agents, queue);
        for (asg, group) in groups {
            if let Ok(group) = group {
                self.groups.insert(asg.to_string(), Arc::new(group));
            }
        }
        if let Some(Ok(agents)) = agents {
            self.agents = Some(Arc::new(agents.registered));
        }
        if let (Some(Ok(apps)), Some(agents)) = (apps, &self.agents) {
            let seen = self.observe(apps, agents.clone());
            self.observation = Some(seen);
        }
        if let Some(Ok(queue)) = queue {
            self.queue = Some(Arc::new(queue));
        }
    }

    /// Every agent Mesos lists as registered, active or not.
    pub(crate) async fn agents(&mut self) -> Result<Arc<Vec<Agent>>, RollError> {
        if let Some(agents) = &self.agents {
            return Ok(agents.clone());
        }
        let agents = Arc::new(self.ports.mesos().agents().await?.registered);
        self.agents = Some(agents.clone());
        Ok(agents)
    }

    /// The agents Mesos lists as active, as far as matching them to
    /// instances needs (`match_agents`).
    pub(crate) async fn active_identities(&mut self) -> Result<Vec<AgentIdentity>, RollError> {
        Ok(self
            .agents()
            .await?
            .iter()
            .filter(|a| a.active)
            .map(|a| a.identity())
            .collect())
    }

    /// Marathon and Mesos as this tick sees them: Marathon's apps and
    /// Mesos' agents (unless this tick has read them) read at once, each
    /// the largest answer of its system. Neither order is safer: tasks on
    /// an agent Mesos does not list are left out either way, which at
    /// worst makes a move wait a tick.
    pub(crate) async fn observation(&mut self) -> Result<Arc<Observation>, RollError> {
        if let Some(seen) = &self.observation {
            return Ok(seen.clone());
        }
        let ports = self.ports;
        let apps = async move { ports.marathon().apps().await.map_err(RollError::from) };
        let (apps, agents) = tokio::try_join!(apps, self.agents())?;
        let seen = self.observe(apps, agents);
        self.observation = Some(seen.clone());
        Ok(seen)
    }

    /// The group `asg` as this tick sees it (a termination this tick is
    /// not in it: `sent` and `check_no_other_writer` account for those).
    pub(crate) async fn group(&mut self, asg: &str) -> Result<Arc<AutoScalingGroup>, RollError> {
        if let Some(group) = self.groups.get(asg) {
            return Ok(group.clone());
        }
        let group = Arc::new(self.ports.aws().describe_group(asg).await?);
        self.groups.insert(asg.to_string(), group.clone());
        Ok(group)
    }

    /// Mesos' maintenance status as this tick sees it.
    pub(crate) async fn maintenance(&mut self) -> Result<Arc<MaintenanceStatus>, RollError> {
        if let Some(status) = &self.maintenance {
            return Ok(status.clone());
        }
        let status = Arc::new(self.ports.mesos().maintenance_status().await?);
        self.maintenance = Some(status.clone());
        Ok(status)
    }

    /// The frameworks and their tasks not yet terminal, as this tick sees
    /// them.
    pub(crate) async fn frameworks(&mut self) -> Result<Arc<Vec<Framework>>, RollError> {
        if let Some(frameworks) = &self.frameworks {
            return Ok(frameworks.clone());
        }
        let frameworks = Arc::new(self.ports.mesos().frameworks().await?);
        self.frameworks = Some(frameworks.clone());
        Ok(frameworks)
    }

    /// What each agent runs, by kind (`agent_contents::by_agent`), as
    /// this tick's frameworks and Marathon's apps show it: worked out once
    /// a tick, however many steps ask. Each terminate step whose agent
    /// Marathon has emptied while Mesos still shows it busy asks: at 2,000
    /// agents, hundreds of them in one tick each built the whole map
    /// (5 s of CPU in one tick of `huge`).
    pub(crate) async fn agent_contents(
        &mut self,
    ) -> Result<Arc<BTreeMap<String, AgentContents>>, RollError> {
        if let Some(contents) = &self.contents {
            return Ok(contents.clone());
        }
        let frameworks = self.frameworks().await?;
        let seen = self.observation().await?;
        let contents = Arc::new(agent_contents::by_agent(
            &frameworks,
            &seen.task_ids(),
            &seen.sdk_services,
        ));
        self.contents = Some(contents.clone());
        Ok(contents)
    }

    /// Marathon's launch queue as this tick sees it.
    pub(crate) async fn queue(&mut self) -> Result<Arc<Vec<QueuedLaunch>>, RollError> {
        if let Some(queue) = &self.queue {
            return Ok(queue.clone());
        }
        let queue = Arc::new(self.ports.marathon().launch_queue().await?);
        self.queue = Some(queue.clone());
        Ok(queue)
    }

    /// Check before write, on this tick's look at the group: its desired
    /// capacity must be N + K minus the terminations that look shows
    /// landed (this roll's instances it no longer has in service). An
    /// intent whose call never landed (a crash) is not counted, nor is a
    /// termination sent since the look. The look is at most one tick old;
    /// the adapter reads the group again right before it terminates (the
    /// instance must still be in service, MinSize kept).
    pub(crate) async fn check_no_other_writer(
        &mut self,
        record: &GroupRoll,
    ) -> Result<(), RollError> {
        let group = self.group(&record.asg).await?;
        let expected = record.expected_desired(record.terminations_landed(&group));
        other_writer(record, &group, expected)
    }

    /// No Instance Refresh at work on group `asg` (read once per tick):
    /// one started since the roll began pauses it, as another writer
    /// does, before the write this is checked for.
    pub(crate) async fn check_no_refresh(&mut self, asg: &str) -> Result<(), RollError> {
        if self.no_refresh.contains(asg) {
            return Ok(());
        }
        let refreshes = self.ports.aws().instance_refreshes(asg).await?;
        if let Some(why) = refresh::at_work(asg, &refreshes, refresh::Found::BeforeTermination) {
            return Err(RollError::OtherWriter(why));
        }
        self.no_refresh.insert(asg.to_string());
        Ok(())
    }

    /// The named CloudWatch alarms' states (the failure watch reads them
    /// once a tick, before any step).
    pub(crate) async fn alarms(&self, names: &[String]) -> Result<Vec<AlarmState>, RollError> {
        Ok(self.ports.aws().describe_alarms(names).await?)
    }

    /// Whether this tick sent `instance`'s termination.
    pub(crate) fn sent(&self, instance: &str) -> bool {
        self.sent.contains(instance)
    }

    /// Counts a termination of the group `g` this tick sends, in `az`.
    pub(crate) fn sending(&mut self, g: GroupIndex, instance: &str, az: &str) {
        if let Some(counts) = self.terminating.get_mut(&g) {
            *counts.entry(az.to_string()).or_default() += 1;
        }
        self.sent.insert(instance.to_string());
    }

    /// Old agents of `az` of the group `g` (`record`) whose termination
    /// is under way (`holds_a_place`), counted once per tick (a drain has
    /// a step per old agent) and kept up to date by this tick's
    /// terminations.
    pub(crate) fn terminating_in(
        &mut self,
        az: &str,
        g: GroupIndex,
        plan: &RollPlan,
        record: &GroupRoll,
        group: &AutoScalingGroup,
    ) -> usize {
        let counts = self.terminating.entry(g).or_insert_with(|| {
            let open: HashSet<&str> = plan
                .steps()
                .filter(|(_, s)| !s.is_complete())
                .filter_map(|(_, s)| match s.kind.as_ref() {
                    Some(k) if k.group == g => match &k.kind {
                        StepKind::Terminate { instance } => Some(instance.as_str()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            let mut counts = HashMap::new();
            for i in &record.instances {
                if i.terminate_sent
                    && open.contains(i.id.as_str())
                    && holds_a_place(record, group, &i.id)
                {
                    *counts.entry(i.availability_zone.clone()).or_default() += 1;
                }
            }
            counts
        });
        counts.get(az).copied().unwrap_or(0)
    }
}

/// `read`'s answer when `wanted`; else nothing is sent (a read is a lazy
/// future: nothing goes out before it is awaited).
async fn read_if<T>(wanted: bool, read: impl Future<Output = T>) -> Option<T> {
    match wanted {
        true => Some(read.await),
        false => None,
    }
}

/// Whether an old agent whose termination was sent (its step not
/// complete: Mesos or the group still has it) still counts against
/// `--max-unavailable`. In an uncapped roll, while the group lists it in
/// service (the call not landed yet) or a termination lifecycle hook
/// holds it (`Terminating:Wait`: the hook's work, which the limit keeps
/// to N at once per AZ); not once it is past the hook, its machine down
/// and empty, only EC2's shutdown left. In a capped roll (its group
/// launches an instance in each one's place), until its step completes,
/// as the batches count it.
fn holds_a_place(record: &GroupRoll, group: &AutoScalingGroup, instance: &str) -> bool {
    if record.surge.is_some() {
        return true;
    }
    group.instance(instance).is_some_and(|i| {
        !matches!(
            i.lifecycle_state,
            LifecycleState::Terminating
                | LifecycleState::TerminatingProceed
                | LifecycleState::Terminated
        )
    })
}

pub(crate) struct Observation {
    /// Marathon's apps, with the tasks on agents Mesos no longer has
    /// taken out (see `health::drop_tasks_on_lost_agents`): Marathon's
    /// answer itself, shared, unless there were such tasks.
    pub(crate) apps: Arc<Vec<App>>,
    /// Marathon's answer as it came (`apps` unless tasks were taken out).
    answer: Arc<Vec<App>>,
    /// Every agent Mesos lists as registered, active or not.
    pub(crate) agents: Arc<Vec<Agent>>,
    /// How many tasks Marathon lists on agents Mesos no longer has active
    /// (taken out of `apps`).
    pub(crate) lost: usize,
    /// Tasks Marathon lists per agent id, before any is taken out: an
    /// agent is empty only once Marathon lists nothing on it.
    tasks_by_agent: HashMap<String, usize>,
    /// Index of each agent in `agents`, by id.
    agent_at: HashMap<String, usize>,
    /// The DC/OS SDK services among the apps (`agent_contents::sdk_services`),
    /// found once a tick: every old agent's step asks.
    pub(crate) sdk_services: BTreeSet<String>,
}

impl Observation {
    pub(crate) fn new(mut apps: Arc<Vec<App>>, agents: Arc<Vec<Agent>>) -> Observation {
        let answer = apps.clone();
        let mut tasks_by_agent: HashMap<String, usize> = HashMap::new();
        for task in apps.iter().flat_map(|a| &a.tasks) {
            // The agent's id is copied once, not once per task.
            let Some(agent) = task.agent_id.as_deref() else {
                continue;
            };
            match tasks_by_agent.get_mut(agent) {
                Some(count) => *count += 1,
                None => {
                    tasks_by_agent.insert(agent.to_string(), 1);
                }
            }
        }
        let active: HashSet<String> = agents
            .iter()
            .filter(|a| a.connected())
            .map(|a| a.id.0.clone())
            .collect();
        // Copied only when something must be taken out.
        let lost = match health::tasks_on_lost_agents(&apps, &active) {
            0 => 0,
            _ => {
                health::drop_tasks_on_lost_agents(Arc::make_mut(&mut apps).as_mut_slice(), &active)
            }
        };
        let sdk_services = agent_contents::sdk_services(&apps);
        let agent_at = agents
            .iter()
            .enumerate()
            .map(|(n, a)| (a.id.0.clone(), n))
            .collect();
        Observation {
            apps,
            answer,
            agents,
            lost,
            tasks_by_agent,
            agent_at,
            sdk_services,
        }
    }

    /// Tasks Marathon lists on `agent` (being killed included).
    pub(crate) fn tasks_on(&self, agent: &str) -> usize {
        self.tasks_by_agent.get(agent).copied().unwrap_or(0)
    }

    pub(crate) fn agent(&self, id: &str) -> Option<&Agent> {
        self.agent_at.get(id).map(|&n| &self.agents[n])
    }

    pub(crate) fn is_active(&self, id: &str) -> bool {
        self.agent(id).is_some_and(|a| a.connected())
    }

    /// Ids of every task Marathon lists.
    pub(crate) fn task_ids(&self) -> HashSet<&str> {
        self.apps
            .iter()
            .flat_map(|a| &a.tasks)
            .map(|t| t.id.as_str())
            .collect()
    }

    /// Why `agent` is not empty yet, or `None` when nothing runs on it:
    /// no task of Marathon's, and no resource in use as Mesos sees it
    /// (another framework's task, which Marathon cannot show).
    pub(crate) fn busy(&self, agent: &str) -> Option<String> {
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

/// The group as the roll left it: desired capacity `expected` (N + K −
/// the terminations landed), MinSize as found, MaxSize as found or as
/// `--raise-max` set it, the processes suspended before the roll and by
/// it. Any difference is another writer's change, all of them said at
/// once: the roll stops and pages, and never changes anything back.
pub(crate) fn other_writer(
    checkpoint: &GroupRoll,
    group: &AutoScalingGroup,
    expected: u32,
) -> Result<(), RollError> {
    let asg = &checkpoint.asg;
    let min = checkpoint.original.min_size;
    // `--raise-max` sets MaxSize to N + K.
    let max = match checkpoint.raised_max_from {
        Some(_) => checkpoint.peak_desired(),
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
            "desired capacity is {}, not {expected} ({})",
            group.desired_capacity,
            if checkpoint.surge.is_some() {
                "what the last batch set, less the terminations since"
            } else {
                "N + K - terminated"
            }
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::roll::tests::in_process::cluster;
    use crate::sim::shared::{ApiFaults, SystemFaults};
    use crate::simulated::SimulatedCluster;

    /// Calls the simulator answered since `before`, by system and route.
    fn since(cluster: &SimulatedCluster, before: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
        cluster
            .sim
            .report()
            .api_calls
            .into_iter()
            .map(|(call, n)| (call.clone(), n - before.get(&call).copied().unwrap_or(0)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Every read a step can ask of the tick, `times` over.
    async fn ask<P: Ports>(tick: &mut TickContext<P>, asg: &str, times: usize) {
        for _ in 0..times {
            tick.observation().await.expect("apps and agents");
            tick.agents().await.expect("agents");
            tick.group(asg).await.expect("the group");
            tick.maintenance().await.expect("maintenance status");
            tick.frameworks().await.expect("frameworks");
            tick.agent_contents().await.expect("what each agent runs");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_tick_reads_each_thing_once_however_often_its_steps_ask_and_the_next_tick_reads_again()
     {
        let dir = tempfile::tempdir().unwrap();
        let mut cluster = cluster("demo", dir.path()).await;
        // Marathon's answer read every tick, not kept while its events
        // are quiet: the reads counted are the tick's own.
        cluster.marathon.stop_keeping_apps();
        let asg = cluster.env.asg().to_string();
        // A first tick, so that whatever the clients do once (finding the
        // leaders) is behind us.
        ask(&mut TickContext::new(cluster.ports()), &asg, 1).await;

        let before = cluster.sim.report().api_calls;
        ask(&mut TickContext::new(cluster.ports()), &asg, 1).await;
        let asked_once = since(&cluster, &before);

        let before = cluster.sim.report().api_calls;
        let mut tick = TickContext::new(cluster.ports());
        ask(&mut tick, &asg, 5).await;
        let asked_five_times = since(&cluster, &before);
        // What each agent runs is summed once, not once per step asking.
        let first = tick.agent_contents().await.unwrap();
        assert!(Arc::ptr_eq(&first, &tick.agent_contents().await.unwrap()));
        assert!(!first.is_empty(), "the demo's agents run Marathon's tasks");

        assert_eq!(asked_five_times, asked_once);
        for system in ["aws:", "mesos:", "marathon:"] {
            assert!(
                asked_once.keys().any(|call| call.starts_with(system)),
                "no {system} call in {asked_once:?}"
            );
        }
        // The next tick trusts nothing the last one read.
        let before = cluster.sim.report().api_calls;
        ask(&mut TickContext::new(cluster.ports()), &asg, 1).await;
        assert_eq!(since(&cluster, &before), asked_once);
        cluster.sim.shutdown().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_prefetch_reads_the_group_marathon_and_mesos_at_once_and_nothing_twice() {
        let dir = tempfile::tempdir().unwrap();
        let mut cluster = cluster("demo", dir.path()).await;
        // Marathon's answer read every tick, not kept while its events
        // are quiet: the reads counted are the tick's own.
        cluster.marathon.stop_keeping_apps();
        let asg = cluster.env.asg().to_string();
        let mut warm = TickContext::new(cluster.ports());
        ask(&mut warm, &asg, 1).await;
        warm.queue().await.expect("the launch queue");
        let before = cluster.sim.report().api_calls;
        let mut tick = TickContext::new(cluster.ports());
        ask(&mut tick, &asg, 1).await;
        tick.queue().await.expect("the launch queue");
        let asked = since(&cluster, &before);

        // Every system a second late: the four reads one after the other
        // would take four seconds (the group, then Marathon's apps and
        // Mesos' agents together, then the queue: three at least).
        let slow = SystemFaults {
            error_rate: 0.0,
            latency_ms: 1_000,
        };
        cluster.sim.world().set_api_faults(ApiFaults {
            aws: slow.clone(),
            mesos: slow.clone(),
            marathon: slow,
            ..ApiFaults::default()
        });
        let before = cluster.sim.report().api_calls;
        let mut tick = TickContext::new(cluster.ports());
        let started = tokio::time::Instant::now();
        tick.prefetch(&[asg.as_str()], true).await;
        let took = started.elapsed();
        assert!(
            took < std::time::Duration::from_millis(1_500),
            "read one after the other: {took:?}"
        );
        // What the prefetch read, the tick's steps find read.
        ask(&mut tick, &asg, 2).await;
        tick.queue().await.expect("the launch queue");
        assert_eq!(since(&cluster, &before), asked);
        cluster.sim.shutdown().await;
    }

    #[tokio::test(start_paused = true)]
    async fn the_last_observation_serves_again_only_for_the_very_same_answer_and_agents() {
        let dir = tempfile::tempdir().unwrap();
        let cluster = cluster("demo", dir.path()).await;
        let apps = cluster.marathon.apps().await.expect("apps");
        let agents = Arc::new(cluster.mesos.agents().await.expect("agents").registered);
        let last = Arc::new(Observation::new(apps.clone(), agents.clone()));
        let again = |previous: &Arc<Observation>| {
            TickContext::new(cluster.ports()).following(Some(previous.clone()))
        };
        // Marathon's kept answer and Mesos' same agents, read again.
        let same = again(&last).observe(apps.clone(), Arc::new((*agents).clone()));
        assert!(Arc::ptr_eq(&same, &last));
        // An equal answer read anew: worked out again (only the adapter
        // knows Marathon said nothing changed).
        let read_again = again(&last).observe(Arc::new((*apps).clone()), agents.clone());
        assert!(!Arc::ptr_eq(&read_again, &last));
        assert_eq!(read_again.apps, last.apps);
        // An agent gone: worked out again, its tasks taken out.
        let mut fewer = (*agents).clone();
        let gone = fewer.remove(0);
        let seen = again(&last).observe(apps.clone(), Arc::new(fewer));
        assert!(!Arc::ptr_eq(&seen, &last));
        assert!(seen.lost > 0, "{} ran tasks", gone.id.0);
        assert!(
            last.lost == 0 && Arc::ptr_eq(&last.apps, &apps),
            "nothing copied"
        );
        cluster.sim.shutdown().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_read_the_prefetch_could_not_make_is_made_by_its_first_ask() {
        let dir = tempfile::tempdir().unwrap();
        let cluster = cluster("demo", dir.path()).await;
        let asg = cluster.env.asg().to_string();
        ask(&mut TickContext::new(cluster.ports()), &asg, 1).await;
        let down = SystemFaults {
            error_rate: 1.0,
            latency_ms: 0,
        };
        cluster.sim.world().set_api_faults(ApiFaults {
            marathon: down,
            ..ApiFaults::default()
        });
        let mut tick = TickContext::new(cluster.ports());
        tick.prefetch(&[asg.as_str()], true).await;
        cluster.sim.world().set_api_faults(ApiFaults::default());
        let before = cluster.sim.report().api_calls;
        // Marathon answered the prefetch 503: its apps are read when asked,
        // the group (read then) is not read again.
        let seen = tick.observation().await.expect("apps read on first ask");
        assert!(!seen.apps.is_empty());
        tick.group(&asg).await.expect("the group");
        let asked = since(&cluster, &before);
        assert_eq!(asked.get("marathon:GET /v2/apps"), Some(&1), "{asked:?}");
        assert!(
            !asked.keys().any(|call| call.starts_with("aws:")),
            "{asked:?}"
        );
        cluster.sim.shutdown().await;
    }
}
