//! The Mesos master's agents: registration after an instance boots, ping
//! timeouts when an instance disappears (15 s × 5 = 75 s, then unreachable
//! and removed, its tasks TASK_UNREACHABLE), re-registration with a new
//! leading master. The operator's calls on an agent (DRAIN_AGENT,
//! DEACTIVATE_AGENT, REACTIVATE_AGENT) are in `operator`. An
//! agent's id is "<master id>-S<n>", its hostname the instance's private
//! DNS name, its pid "slave(1)@IP:5051". Every group's agents register with
//! the same masters, each with its group's shape; a group with a role has
//! all its agents' resources reserved to it (a `slave_public` group's
//! agents are DC/OS public agents, `public_ip = "true"`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::World;
use super::clock::SimTime;
use super::events::{AgentIdx, Event, GroupIdx, InstanceIdx, TaskKey};
use super::faults::ImageEffect;
use super::marathon::TaskEnd;
use crate::sim::scenario::PUBLIC_ROLE;

mod operator;
#[cfg(test)]
mod tests;

pub(crate) use operator::{Drain, agent_capabilities};
pub(crate) use operator::{DrainConfig, MesosError};

/// Resources are kept in thousandths (milli-CPUs, milli-MB) so that adding
/// and removing tasks never drifts.
pub(crate) const MILLI: f64 = 1000.0;

pub(crate) fn to_milli(x: f64) -> u64 {
    (x * MILLI).round() as u64
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AgentState {
    Registered,
    /// Missed its pings: gone from `/master/slaves`.
    Unreachable,
    /// Shut down by `machine/down`.
    Removed,
    /// Drained with `mark_gone`: removed for good.
    Gone,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DrainState {
    Draining,
    Drained,
}

impl DrainState {
    /// Mesos' `DrainState` name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            DrainState::Draining => "DRAINING",
            DrainState::Drained => "DRAINED",
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Agent {
    pub(crate) id: String,
    pub(crate) instance: InstanceIdx,
    /// Its instance's group: its shape and role.
    pub(crate) group: GroupIdx,
    pub(crate) instance_id: String,
    pub(crate) hostname: String,
    pub(crate) ip: String,
    pub(crate) cpus: u64,
    pub(crate) mem: u64,
    pub(crate) used_cpus: u64,
    pub(crate) used_mem: u64,
    pub(crate) registered_at: SimTime,
    /// When it last re-registered (after a leader change); Mesos writes
    /// `reregistered_time` only for such an agent.
    pub(crate) reregistered_at: Option<SimTime>,
    pub(crate) state: AgentState,
    /// False once its instance is gone: the master stops getting pongs.
    pub(crate) answering: bool,
    pub(crate) deactivated: bool,
    pub(crate) drain: Option<Drain>,
    pub(crate) tasks: BTreeSet<TaskKey>,
    /// The maintenance window covering this agent's machine, as
    /// (start, end) in Unix nanoseconds.
    pub(crate) unavailability: Option<(i128, i128)>,
}

impl Agent {
    pub(crate) fn is_registered(&self) -> bool {
        self.state == AgentState::Registered
    }

    /// Registered or unreachable: the master still knows it (its registry
    /// keeps unreachable agents); a removed or gone one it does not.
    pub(crate) fn is_known(&self) -> bool {
        matches!(self.state, AgentState::Registered | AgentState::Unreachable)
    }
}

/// The master's state.
#[derive(Clone, Debug)]
pub(crate) struct Mesos {
    pub(crate) master_id: String,
    pub(crate) agents: Vec<Agent>,
    pub(crate) by_id: HashMap<String, AgentIdx>,
    /// The master that led when a facade last asked (`None` before the
    /// first request): a different one means a failover, after which
    /// every connected agent re-registers with the new leader.
    leader: Option<usize>,
    /// When the current leader was elected (its `elected_time`).
    elected_at: SimTime,
}

impl Mesos {
    pub(crate) fn new(master_id: String) -> Mesos {
        Mesos {
            master_id,
            agents: Vec::new(),
            by_id: HashMap::new(),
            leader: None,
            elected_at: SimTime::ZERO,
        }
    }
}

/// Mesos' default `--agent_reregister_timeout` (10 mins). The simulator's
/// masters share one world, so no agent ever waits for it.
const AGENT_REREGISTER_TIMEOUT_MS: u64 = 600_000;

/// The master flags that shape what the world does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct MasterFlagsView {
    pub(crate) agent_ping_timeout_ms: u64,
    pub(crate) max_agent_ping_timeouts: u32,
    pub(crate) agent_reregister_timeout_ms: u64,
    /// How often offers go out again (the world's offer cycle).
    pub(crate) allocation_interval_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ResourcesView {
    pub(crate) cpus: f64,
    pub(crate) mem: f64,
    pub(crate) disk: f64,
}

/// An agent's drain, as the master lists it (`drain_info` and
/// `estimated_drain_start_time`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct DrainView {
    /// "DRAINING" or "DRAINED".
    pub(crate) state: &'static str,
    pub(crate) config: DrainConfig,
    /// When DRAIN_AGENT was last accepted, in Unix milliseconds.
    pub(crate) asked_unix_ms: u64,
}

/// One registered agent, as `/master/slaves` and GET_AGENTS show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct AgentView {
    pub(crate) id: String,
    pub(crate) hostname: String,
    pub(crate) ip: String,
    pub(crate) port: u16,
    pub(crate) pid: String,
    pub(crate) resources: ResourcesView,
    pub(crate) used_resources: ResourcesView,
    /// TEXT attributes, including the one carrying the instance id (and
    /// a public agent's `public_ip`).
    pub(crate) attributes: BTreeMap<String, String>,
    /// The role all its resources are reserved to (statically); `None`:
    /// unreserved (`*`).
    pub(crate) role: Option<String>,
    pub(crate) registered_unix_ms: u64,
    /// Only for an agent that re-registered (with a new leader).
    pub(crate) reregistered_unix_ms: Option<u64>,
    /// Connected and not deactivated (Mesos' `active`).
    pub(crate) active: bool,
    pub(crate) deactivated: bool,
    /// "DRAINING" or "DRAINED" once drained.
    pub(crate) drain_state: Option<&'static str>,
    /// The drain, once DRAIN_AGENT was accepted (until REACTIVATE_AGENT).
    pub(crate) drain: Option<DrainView>,
    pub(crate) version: String,
    /// What the agent announces it can do (its Mesos version's).
    pub(crate) capabilities: Vec<&'static str>,
    pub(crate) task_count: usize,
    /// The host ports its tasks hold, ascending.
    pub(crate) used_ports: Vec<u16>,
}

impl World {
    // ----- the API the Mesos facade calls -----

    /// The registered agents (unreachable and removed ones are not listed),
    /// in registration order.
    pub(crate) fn agents(&self) -> Vec<AgentView> {
        self.mesos
            .agents
            .iter()
            .filter(|a| a.is_registered())
            .map(|a| self.agent_view(a))
            .collect()
    }

    #[cfg(test)]
    pub(crate) fn agent(&self, agent_id: &str) -> Option<AgentView> {
        let &idx = self.mesos.by_id.get(agent_id)?;
        let a = &self.mesos.agents[idx];
        a.is_registered().then(|| self.agent_view(a))
    }

    /// The master at peer `index` leads and is answering. When it is not
    /// the one that led last, this is a failover: the new leader knows
    /// each agent only once it re-registers, so a connected agent's
    /// `registered_time` and `reregistered_time` both become now (Mesos
    /// builds a new agent record at re-registration); an agent that is
    /// not answering cannot re-register and keeps its old record until
    /// its ping timeout removes it.
    pub(crate) fn master_leads(&mut self, index: usize) {
        match self.mesos.leader {
            Some(led) if led == index => return,
            Some(_) => {
                let now = self.now;
                for agent in &mut self.mesos.agents {
                    if agent.is_registered() && agent.answering {
                        agent.registered_at = now;
                        agent.reregistered_at = Some(now);
                    }
                }
                self.mesos.elected_at = now;
            }
            // The first leader was elected when the world started.
            None => {}
        }
        self.mesos.leader = Some(index);
    }

    /// The current leader's `elected_time`, in Unix milliseconds.
    pub(crate) fn master_elected_unix_ms(&self) -> u64 {
        self.unix_ms(self.mesos.elected_at)
    }

    /// The master flags the world runs with, for `/master/flags`.
    pub(crate) fn master_flags(&self) -> MasterFlagsView {
        MasterFlagsView {
            agent_ping_timeout_ms: self.timing.agent_ping_timeout_ms,
            max_agent_ping_timeouts: self.timing.max_agent_ping_timeouts,
            agent_reregister_timeout_ms: AGENT_REREGISTER_TIMEOUT_MS,
            allocation_interval_ms: self.timing.offer_interval_ms,
        }
    }

    // ----- internals -----

    fn agent_view(&self, a: &Agent) -> AgentView {
        let group = &self.groups[a.group];
        let spec = &group.agent;
        let mut attributes = spec.attributes.clone();
        attributes.insert(spec.instance_id_attribute.clone(), a.instance_id.clone());
        if group.role.as_deref() == Some(PUBLIC_ROLE) {
            // What DC/OS's public agents announce (`--attributes`), unless
            // the scenario says otherwise.
            attributes
                .entry("public_ip".into())
                .or_insert_with(|| "true".into());
        }
        AgentView {
            id: a.id.clone(),
            hostname: a.hostname.clone(),
            ip: a.ip.clone(),
            port: 5051,
            pid: format!("slave(1)@{}:5051", a.ip),
            resources: ResourcesView {
                cpus: a.cpus as f64 / MILLI,
                mem: a.mem as f64 / MILLI,
                disk: spec.disk,
            },
            used_resources: ResourcesView {
                cpus: a.used_cpus as f64 / MILLI,
                mem: a.used_mem as f64 / MILLI,
                disk: 0.0,
            },
            attributes,
            role: group.role.clone(),
            registered_unix_ms: self.unix_ms(a.registered_at),
            reregistered_unix_ms: a.reregistered_at.map(|t| self.unix_ms(t)),
            active: a.answering && !a.deactivated,
            deactivated: a.deactivated,
            drain_state: a.drain.map(|d| d.state.name()),
            drain: a.drain.map(|d| DrainView {
                state: d.state.name(),
                config: d.config,
                asked_unix_ms: self.unix_ms(d.asked_at),
            }),
            version: spec.version.clone(),
            capabilities: agent_capabilities(&spec.version),
            task_count: a.tasks.len(),
            used_ports: self.ports_held(&a.tasks).into_iter().collect(),
        }
    }

    /// Registers the agent of an InService instance (at once: used at
    /// construction and by the `AgentRegisters` event).
    pub(crate) fn register_agent(&mut self, instance: InstanceIdx) -> AgentIdx {
        let serial = self.mesos.agents.len();
        let id = format!("{}-S{serial}", self.mesos.master_id);
        let inst = &self.instances[instance];
        let shape = &self.groups[inst.group].agent;
        let agent = Agent {
            id: id.clone(),
            instance,
            group: inst.group,
            instance_id: inst.id.clone(),
            hostname: inst.private_dns(),
            ip: inst.ip.clone(),
            cpus: to_milli(shape.cpus),
            mem: to_milli(shape.mem),
            used_cpus: 0,
            used_mem: 0,
            registered_at: self.now,
            reregistered_at: None,
            state: AgentState::Registered,
            answering: true,
            deactivated: false,
            drain: None,
            tasks: BTreeSet::new(),
            unavailability: None,
        };
        let idx = self.mesos.agents.len();
        self.mesos.agents.push(agent);
        self.mesos.by_id.insert(id, idx);
        self.instances[instance].agent = Some(idx);
        self.refresh_unavailability(idx);
        idx
    }

    /// What the image of the agent's instance does to tasks placed there
    /// (`None`: a good image).
    pub(crate) fn image_effect_on(&self, agent: AgentIdx) -> Option<ImageEffect> {
        let instance = &self.instances[self.mesos.agents[agent].instance];
        self.faults.image_effect(
            &self.groups[instance.group].name,
            &instance.template_version,
        )
    }

    /// The agent's instance still runs (whatever Mesos believes).
    pub(crate) fn agent_host_alive(&self, agent: AgentIdx) -> bool {
        self.instances[self.mesos.agents[agent].instance]
            .state
            .machine_runs()
    }

    /// Every app with a task on `agent` (to recount after the agent's
    /// instance changed).
    pub(crate) fn apps_on_agent(&self, agent: AgentIdx) -> BTreeSet<usize> {
        self.mesos.agents[agent]
            .tasks
            .iter()
            .filter_map(|k| self.marathon.tasks.get(k).map(|t| t.app))
            .collect()
    }

    pub(crate) fn on_agent_registers(&mut self, instance: InstanceIdx) {
        let inst = &self.instances[instance];
        // A booted machine's agent registers; in Standby it still runs.
        let booted = matches!(
            inst.state,
            super::asg::LifecycleState::InService | super::asg::LifecycleState::Standby
        );
        // A bad image whose agent never comes up, for all or for this
        // instance's launch template version.
        let image_broken = self
            .faults
            .image_effect(&self.groups[inst.group].name, &inst.template_version)
            == Some(ImageEffect::Unregistered);
        if !booted || self.faults.agents_never_register || image_broken {
            return;
        }
        if let Some(a) = inst.agent
            && self.mesos.agents[a].is_registered()
        {
            return;
        }
        let (hostname, ip) = (inst.private_dns(), inst.ip.clone());
        if self.machine_is_down(&hostname, &ip) {
            return;
        }
        self.register_agent(instance);
        self.offers_changed();
    }

    /// The instance under the agent is gone: pings go unanswered, and after
    /// `agent_ping_timeout` × `max_agent_ping_timeouts` the master gives up.
    pub(crate) fn agent_stops_answering(&mut self, agent: AgentIdx) {
        let a = &mut self.mesos.agents[agent];
        if !a.is_registered() || !a.answering {
            return;
        }
        a.answering = false;
        self.pods_host_stopped(agent);
        self.schedule_in(
            self.timing.unreachable_after_ms,
            Event::AgentPingTimeout(agent),
        );
    }

    pub(crate) fn on_agent_ping_timeout(&mut self, agent: AgentIdx) {
        let a = &self.mesos.agents[agent];
        if !a.is_registered() || a.answering {
            return;
        }
        self.remove_agent(agent, AgentState::Unreachable, TaskEnd::Unreachable);
    }

    /// Takes an agent out of the master; its tasks end as `how`.
    pub(crate) fn remove_agent(&mut self, agent: AgentIdx, state: AgentState, how: TaskEnd) {
        let a = &mut self.mesos.agents[agent];
        a.state = state;
        a.answering = false;
        let tasks: Vec<TaskKey> = a.tasks.iter().copied().collect();
        for t in tasks {
            self.end_task(t, how);
        }
        self.lose_jobs_on(agent);
        self.lose_pods_on(agent);
    }
}
