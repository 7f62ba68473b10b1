//! The Mesos master's agents: registration after an instance boots, ping
//! timeouts when an instance disappears (15 s × 5 = 75 s, then unreachable
//! and removed, its tasks TASK_UNREACHABLE), DRAIN_AGENT and
//! DEACTIVATE_AGENT. An agent's id is "<master id>-S<n>", its hostname the
//! instance's private DNS name, its pid "slave(1)@IP:5051".

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::World;
use super::clock::SimTime;
use super::events::{AgentIdx, Event, InstanceIdx, TaskKey};
use super::marathon::TaskEnd;
use crate::sim::scenario::AgentSpec;

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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DrainState {
    Draining,
    Drained,
}

#[derive(Clone, Debug)]
pub(crate) struct Agent {
    pub(crate) id: String,
    pub(crate) instance: InstanceIdx,
    pub(crate) instance_id: String,
    pub(crate) hostname: String,
    pub(crate) ip: String,
    pub(crate) cpus: u64,
    pub(crate) mem: u64,
    pub(crate) used_cpus: u64,
    pub(crate) used_mem: u64,
    pub(crate) registered_at: SimTime,
    pub(crate) state: AgentState,
    /// False once its instance is gone: the master stops getting pongs.
    pub(crate) answering: bool,
    pub(crate) deactivated: bool,
    pub(crate) drain: Option<DrainState>,
    pub(crate) tasks: BTreeSet<TaskKey>,
    /// The maintenance window covering this agent's machine, as
    /// (start, end) in Unix nanoseconds.
    pub(crate) unavailability: Option<(i128, i128)>,
}

impl Agent {
    pub(crate) fn is_registered(&self) -> bool {
        self.state == AgentState::Registered
    }
}

/// The master's state.
#[derive(Clone, Debug)]
pub(crate) struct Mesos {
    pub(crate) master_id: String,
    pub(crate) agents: Vec<Agent>,
    pub(crate) by_id: HashMap<String, AgentIdx>,
    pub(crate) spec: AgentSpec,
    disk: f64,
}

impl Mesos {
    pub(crate) fn new(master_id: String, spec: &AgentSpec) -> Mesos {
        Mesos {
            master_id,
            agents: Vec::new(),
            by_id: HashMap::new(),
            spec: spec.clone(),
            disk: spec.disk,
        }
    }
}

/// A Mesos master error (the facade maps them to 400/404).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MesosError {
    #[error("{action}: unknown agent {agent_id}")]
    UnknownAgent {
        action: &'static str,
        agent_id: String,
    },
    #[error("{action}: a machine id needs a hostname or an ip")]
    EmptyMachineId { action: &'static str },
    #[error("{action}: Machine '{machine}' appears more than once in the schedule")]
    DuplicateMachine {
        action: &'static str,
        machine: String,
    },
    #[error("{action}: Machine '{machine}' is DOWN and must stay in the schedule")]
    DownMachineUnscheduled {
        action: &'static str,
        machine: String,
    },
    #[error("{action}: Machine '{machine}' is not part of a maintenance schedule")]
    MachineNotScheduled {
        action: &'static str,
        machine: String,
    },
    #[error("{action}: Machine '{machine}' is not in DRAINING mode and cannot be brought down")]
    MachineNotDraining {
        action: &'static str,
        machine: String,
    },
    #[error("{action}: Machine '{machine}' is not in DOWN mode and cannot be brought up")]
    MachineNotDown {
        action: &'static str,
        machine: String,
    },
}

impl MesosError {
    pub fn label(&self) -> &'static str {
        match self {
            MesosError::UnknownAgent { .. } => "unknown_agent",
            MesosError::EmptyMachineId { .. } => "empty_machine_id",
            MesosError::DuplicateMachine { .. } => "duplicate_machine",
            MesosError::DownMachineUnscheduled { .. } => "down_machine_unscheduled",
            MesosError::MachineNotScheduled { .. } => "machine_not_scheduled",
            MesosError::MachineNotDraining { .. } => "machine_not_draining",
            MesosError::MachineNotDown { .. } => "machine_not_down",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResourcesView {
    pub cpus: f64,
    pub mem: f64,
    pub disk: f64,
}

/// One registered agent, as `/master/slaves` and GET_AGENTS show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentView {
    pub id: String,
    pub hostname: String,
    pub ip: String,
    pub port: u16,
    pub pid: String,
    pub resources: ResourcesView,
    pub used_resources: ResourcesView,
    /// TEXT attributes, including the one carrying the instance id.
    pub attributes: BTreeMap<String, String>,
    pub registered_unix_ms: u64,
    /// Connected and not deactivated (Mesos' `active`).
    pub active: bool,
    pub deactivated: bool,
    /// "DRAINING" or "DRAINED" once drained.
    pub drain_state: Option<&'static str>,
    pub version: String,
    pub task_count: usize,
}

impl World {
    // ----- the API the Mesos facade calls -----

    /// The registered agents (unreachable and removed ones are not listed),
    /// in registration order.
    pub fn agents(&self) -> Vec<AgentView> {
        self.mesos
            .agents
            .iter()
            .filter(|a| a.is_registered())
            .map(|a| self.agent_view(a))
            .collect()
    }

    pub fn agent(&self, agent_id: &str) -> Option<AgentView> {
        let &idx = self.mesos.by_id.get(agent_id)?;
        let a = &self.mesos.agents[idx];
        a.is_registered().then(|| self.agent_view(a))
    }

    /// DRAIN_AGENT: the agent gets no new tasks, its tasks are killed
    /// (Marathon relaunches them elsewhere), then it is DRAINED.
    pub fn drain_agent(&mut self, agent_id: &str) -> Result<(), MesosError> {
        let idx = self.registered_agent("DRAIN_AGENT", agent_id)?;
        let agent = &mut self.mesos.agents[idx];
        if agent.drain.is_some() {
            return Ok(());
        }
        agent.drain = Some(DrainState::Draining);
        agent.deactivated = true;
        let tasks: Vec<TaskKey> = agent.tasks.iter().copied().collect();
        for t in tasks {
            self.end_task(t, TaskEnd::Killed);
        }
        self.schedule_in(self.timing.kill_ms, Event::AgentDrained(idx));
        Ok(())
    }

    /// DEACTIVATE_AGENT: no new tasks; running ones stay.
    pub fn deactivate_agent(&mut self, agent_id: &str) -> Result<(), MesosError> {
        let idx = self.registered_agent("DEACTIVATE_AGENT", agent_id)?;
        self.mesos.agents[idx].deactivated = true;
        Ok(())
    }

    /// REACTIVATE_AGENT: offers again (a draining agent stays unavailable).
    pub fn reactivate_agent(&mut self, agent_id: &str) -> Result<(), MesosError> {
        let idx = self.registered_agent("REACTIVATE_AGENT", agent_id)?;
        let agent = &mut self.mesos.agents[idx];
        agent.deactivated = false;
        agent.drain = None;
        Ok(())
    }

    // ----- internals -----

    fn registered_agent(
        &self,
        action: &'static str,
        agent_id: &str,
    ) -> Result<AgentIdx, MesosError> {
        match self.mesos.by_id.get(agent_id) {
            Some(&idx) if self.mesos.agents[idx].is_registered() => Ok(idx),
            _ => Err(MesosError::UnknownAgent {
                action,
                agent_id: agent_id.to_string(),
            }),
        }
    }

    fn agent_view(&self, a: &Agent) -> AgentView {
        let spec = &self.mesos.spec;
        let mut attributes = spec.attributes.clone();
        attributes.insert(spec.instance_id_attribute.clone(), a.instance_id.clone());
        AgentView {
            id: a.id.clone(),
            hostname: a.hostname.clone(),
            ip: a.ip.clone(),
            port: 5051,
            pid: format!("slave(1)@{}:5051", a.ip),
            resources: ResourcesView {
                cpus: a.cpus as f64 / MILLI,
                mem: a.mem as f64 / MILLI,
                disk: self.mesos.disk,
            },
            used_resources: ResourcesView {
                cpus: a.used_cpus as f64 / MILLI,
                mem: a.used_mem as f64 / MILLI,
                disk: 0.0,
            },
            attributes,
            registered_unix_ms: self.unix_ms(a.registered_at),
            active: a.answering && !a.deactivated,
            deactivated: a.deactivated,
            drain_state: a.drain.map(|d| match d {
                DrainState::Draining => "DRAINING",
                DrainState::Drained => "DRAINED",
            }),
            version: spec.version.clone(),
            task_count: a.tasks.len(),
        }
    }

    /// Registers the agent of an InService instance (at once: used at
    /// construction and by the `AgentRegisters` event).
    pub(crate) fn register_agent(&mut self, instance: InstanceIdx) -> AgentIdx {
        let serial = self.mesos.agents.len();
        let id = format!("{}-S{serial}", self.mesos.master_id);
        let inst = &self.instances[instance];
        let agent = Agent {
            id: id.clone(),
            instance,
            instance_id: inst.id.clone(),
            hostname: inst.private_dns(),
            ip: inst.ip.clone(),
            cpus: to_milli(self.mesos.spec.cpus),
            mem: to_milli(self.mesos.spec.mem),
            used_cpus: 0,
            used_mem: 0,
            registered_at: self.now,
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

    /// The agent's instance still runs (whatever Mesos believes).
    pub(crate) fn agent_host_alive(&self, agent: AgentIdx) -> bool {
        let inst = &self.instances[self.mesos.agents[agent].instance];
        matches!(
            inst.state,
            super::asg::LifecycleState::Pending | super::asg::LifecycleState::InService
        )
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
        if inst.state != super::asg::LifecycleState::InService || self.faults.agents_never_register
        {
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
    }

    pub(crate) fn on_agent_drained(&mut self, agent: AgentIdx) {
        let a = &mut self.mesos.agents[agent];
        if a.is_registered() && a.drain == Some(DrainState::Draining) && a.tasks.is_empty() {
            a.drain = Some(DrainState::Drained);
        } else if a.is_registered() && a.drain == Some(DrainState::Draining) {
            self.schedule_in(self.timing.kill_ms.max(1), Event::AgentDrained(agent));
        }
    }
}
