//! The operator's calls on one agent, with the rules of Mesos 1.9's
//! `master/http.cpp` (`drainAgent`, `_deactivateAgent`,
//! `_reactivateAgent`):
//!
//! - DRAIN_AGENT is refused (400) for a registered agent whose machine is
//!   in the maintenance schedule, for one that does not announce the
//!   `AGENT_DRAINING` capability (older than Mesos 1.9), and for an agent
//!   the master does not know (neither registered nor unreachable). Asked
//!   again, it replaces the drain config and starts over. The agent is
//!   deactivated, its tasks killed; with none left it is DRAINED, and
//!   with `mark_gone` then removed for good.
//! - DEACTIVATE_AGENT is refused only for an unknown agent.
//! - REACTIVATE_AGENT is refused unless the agent is deactivated, and
//!   while it is still DRAINING; it clears the drain. An unreachable agent
//!   is reactivated in the registry but answered 409, as Mesos does.
//!
//! The time of the last accepted DRAIN_AGENT is Mesos'
//! `estimatedDrainStartTime`, which the master lists with the drain.

use serde::Serialize;

use super::super::World;
use super::super::clock::SimTime;
use super::super::events::{AgentIdx, Event, TaskKey};
use super::super::marathon::TaskEnd;
use super::{AgentState, DrainState};

/// What DRAIN_AGENT asked (Mesos' `DrainConfig`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct DrainConfig {
    /// The cap on the kill grace period of the agent's tasks, in
    /// nanoseconds (Mesos' `DurationInfo`); `None`: each task's own.
    pub(crate) max_grace_period_ns: Option<i64>,
    /// Remove the agent for good once DRAINED, as MARK_AGENT_GONE would.
    pub(crate) mark_gone: bool,
}

/// An agent's drain, as the master keeps it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Drain {
    pub(crate) state: DrainState,
    pub(crate) config: DrainConfig,
    /// When DRAIN_AGENT was last accepted (Mesos' `estimatedDrainStartTime`).
    pub(crate) asked_at: SimTime,
}

/// A Mesos master refusal of an operator call on an agent (the facade
/// answers it with Mesos' status and text); maintenance refusals are
/// `MaintenanceError`s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MesosError {
    #[error("{action}: unknown agent {agent_id}")]
    UnknownAgent {
        action: &'static str,
        agent_id: String,
    },
    #[error("Agent {agent_id} is part of a maintenance schedule under Machine {machine}")]
    InMaintenanceSchedule { agent_id: String, machine: String },
    #[error("Agent {agent_id} is not capable of draining")]
    NotCapableOfDraining { agent_id: String },
    #[error("Agent is not deactivated")]
    NotDeactivated { agent_id: String },
    #[error("Agent is still in the DRAINING state")]
    StillDraining { agent_id: String },
    /// The registry was updated, but the agent is not registered (it is
    /// unreachable): Mesos answers 409.
    #[error("Agent removed while processing the call")]
    NotRegistered { agent_id: String },
}

impl MesosError {
    #[cfg(test)]
    pub(crate) fn label(&self) -> &'static str {
        match self {
            MesosError::UnknownAgent { .. } => "unknown_agent",
            MesosError::InMaintenanceSchedule { .. } => "in_maintenance_schedule",
            MesosError::NotCapableOfDraining { .. } => "not_capable_of_draining",
            MesosError::NotDeactivated { .. } => "not_deactivated",
            MesosError::StillDraining { .. } => "still_draining",
            MesosError::NotRegistered { .. } => "not_registered",
        }
    }
}

impl World {
    /// DRAIN_AGENT with Mesos' defaults (no grace period cap, not gone).
    #[cfg(test)]
    pub(crate) fn drain_agent(&mut self, agent_id: &str) -> Result<(), MesosError> {
        self.drain_agent_with(agent_id, DrainConfig::default())
    }

    /// DRAIN_AGENT: the agent gets no new tasks and its tasks are killed
    /// (Marathon relaunches them elsewhere); once none is left it is
    /// DRAINED. An unreachable agent's drain is recorded for when it
    /// comes back.
    pub(crate) fn drain_agent_with(
        &mut self,
        agent_id: &str,
        config: DrainConfig,
    ) -> Result<(), MesosError> {
        let idx = self.known_agent("DRAIN_AGENT", agent_id)?;
        let agent = &self.mesos.agents[idx];
        if agent.is_registered() {
            let in_window = self
                .maintenance
                .windows
                .iter()
                .flat_map(|w| &w.machines)
                .find(|m| m.matches(&agent.hostname, &agent.ip));
            if let Some(machine) = in_window {
                return Err(MesosError::InMaintenanceSchedule {
                    agent_id: agent_id.to_string(),
                    machine: machine.display(),
                });
            }
            let version = &self.groups[agent.group].agent.version;
            if !agent_capabilities(version).contains(&AGENT_DRAINING) {
                return Err(MesosError::NotCapableOfDraining {
                    agent_id: agent_id.to_string(),
                });
            }
        }
        let now = self.now;
        let agent = &mut self.mesos.agents[idx];
        agent.drain = Some(Drain {
            state: DrainState::Draining,
            config,
            asked_at: now,
        });
        agent.deactivated = true;
        if !agent.is_registered() {
            return Ok(());
        }
        let tasks: Vec<TaskKey> = agent.tasks.iter().copied().collect();
        let max_grace_ms = config
            .max_grace_period_ns
            .map(|ns| u64::try_from(ns.max(0) / 1_000_000).unwrap_or(u64::MAX));
        self.kill_jobs_on(idx, max_grace_ms);
        self.kill_pods_on(idx, max_grace_ms);
        if tasks.is_empty() && !self.other_frameworks_live_on(idx) {
            // Mesos' `checkAndTransitionDrainingAgent`, right away.
            self.on_agent_drained(idx);
            return Ok(());
        }
        for t in tasks {
            self.end_task(t, TaskEnd::Killed);
        }
        self.schedule_in(self.timing.kill_ms, Event::AgentDrained(idx));
        Ok(())
    }

    /// DEACTIVATE_AGENT: no new tasks; running ones stay.
    pub(crate) fn deactivate_agent(&mut self, agent_id: &str) -> Result<(), MesosError> {
        let idx = self.known_agent("DEACTIVATE_AGENT", agent_id)?;
        self.mesos.agents[idx].deactivated = true;
        Ok(())
    }

    /// REACTIVATE_AGENT: offers again, the drain (DRAINED) forgotten.
    pub(crate) fn reactivate_agent(&mut self, agent_id: &str) -> Result<(), MesosError> {
        let deactivated = self.mesos.by_id.get(agent_id).copied().filter(|&idx| {
            let a = &self.mesos.agents[idx];
            a.is_known() && a.deactivated
        });
        let Some(idx) = deactivated else {
            return Err(MesosError::NotDeactivated {
                agent_id: agent_id.to_string(),
            });
        };
        let agent = &mut self.mesos.agents[idx];
        if agent.drain.is_some_and(|d| d.state == DrainState::Draining) {
            return Err(MesosError::StillDraining {
                agent_id: agent_id.to_string(),
            });
        }
        agent.drain = None;
        agent.deactivated = false;
        if !agent.is_registered() {
            return Err(MesosError::NotRegistered {
                agent_id: agent_id.to_string(),
            });
        }
        self.offers_changed();
        Ok(())
    }

    /// A draining agent whose tasks are all gone is DRAINED (and, asked
    /// with `mark_gone`, removed for good); one with tasks left is looked
    /// at again after another kill.
    pub(crate) fn on_agent_drained(&mut self, agent: AgentIdx) {
        let others_live = self.other_frameworks_live_on(agent);
        let a = &mut self.mesos.agents[agent];
        let registered = a.is_registered();
        let idle = a.tasks.is_empty() && !others_live;
        let Some(drain) = a.drain.as_mut() else {
            return;
        };
        if !registered || drain.state != DrainState::Draining {
            return;
        }
        if !idle {
            self.schedule_in(self.timing.kill_ms.max(1), Event::AgentDrained(agent));
            return;
        }
        drain.state = DrainState::Drained;
        if drain.config.mark_gone {
            self.remove_agent(agent, AgentState::Gone, TaskEnd::Killed);
        }
    }

    /// An agent the master knows: registered, or unreachable (it keeps
    /// those in its registry); a removed or gone one is unknown.
    fn known_agent(&self, action: &'static str, agent_id: &str) -> Result<AgentIdx, MesosError> {
        match self.mesos.by_id.get(agent_id) {
            Some(&idx) if self.mesos.agents[idx].is_known() => Ok(idx),
            _ => Err(MesosError::UnknownAgent {
                action,
                agent_id: agent_id.to_string(),
            }),
        }
    }
}

/// The capability an agent needs for DRAIN_AGENT.
const AGENT_DRAINING: &str = "AGENT_DRAINING";

/// The capabilities an agent of Mesos `version` announces, in the order
/// the master lists them (`Capabilities::toRepeatedPtrField`): Mesos 1.9's
/// `AGENT_CAPABILITIES()` adds `AGENT_OPERATION_FEEDBACK` and
/// `AGENT_DRAINING` to the earlier ones, 1.10's `TASK_RESOURCE_LIMITS`.
/// A version that does not parse is taken as the simulator's 1.9.
pub(crate) fn agent_capabilities(version: &str) -> Vec<&'static str> {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    let (major, minor) = match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor),
        _ => (1, 9),
    };
    let at_least = |m: u32, n: u32| (major, minor) >= (m, n);
    let mut capabilities = vec![
        "MULTI_ROLE",
        "HIERARCHICAL_ROLE",
        "RESERVATION_REFINEMENT",
        "RESOURCE_PROVIDER",
        "RESIZE_VOLUME",
    ];
    if at_least(1, 9) {
        capabilities.extend(["AGENT_OPERATION_FEEDBACK", AGENT_DRAINING]);
    }
    if at_least(1, 10) {
        capabilities.push("TASK_RESOURCE_LIMITS");
    }
    capabilities
}
