//! The Mesos maintenance primitives: the schedule (posting one replaces the
//! whole schedule), maintenance status (scheduled machines are DRAINING,
//! downed ones DOWN), `machine/down` (only scheduled machines; their agents
//! are removed at once and their tasks lost) and `machine/up`.
//!
//! Machines are matched to agents by the fields given: a machine id with
//! both hostname and ip must match both (as Mesos compares them); one with
//! only a hostname or only an ip matches on that field alone.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::World;
use super::agents::{AgentState, MesosError};
use super::events::{AgentIdx, Event};
use super::marathon::TaskEnd;

/// A Mesos `MachineID`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MachineId {
    pub hostname: Option<String>,
    pub ip: Option<String>,
}

impl MachineId {
    fn matches(&self, hostname: &str, ip: &str) -> bool {
        let host_ok = self.hostname.as_deref().is_none_or(|h| h == hostname);
        let ip_ok = self.ip.as_deref().is_none_or(|i| i == ip);
        (self.hostname.is_some() || self.ip.is_some()) && host_ok && ip_ok
    }

    fn describe(&self) -> String {
        format!(
            "{}/{}",
            self.hostname.as_deref().unwrap_or(""),
            self.ip.as_deref().unwrap_or("")
        )
    }
}

/// One maintenance window: machines unavailable from `start_unix_ns` for
/// `duration_ns` (Mesos carries both as nanoseconds).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaintenanceWindow {
    pub machines: Vec<MachineId>,
    pub start_unix_ns: i64,
    pub duration_ns: i64,
}

/// `/master/maintenance/status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MaintenanceStatus {
    pub draining: Vec<MachineId>,
    pub down: Vec<MachineId>,
}

/// The master's maintenance state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Maintenance {
    pub(crate) windows: Vec<MaintenanceWindow>,
    pub(crate) down: BTreeSet<MachineId>,
}

impl World {
    // ----- the API the Mesos facade calls -----

    pub fn maintenance_schedule(&self) -> Vec<MaintenanceWindow> {
        self.maintenance.windows.clone()
    }

    /// Replaces the whole schedule. Refused (changing nothing) when a
    /// machine id is empty, a machine appears twice, or a DOWN machine is
    /// left out (it must be brought up first).
    pub fn set_maintenance_schedule(
        &mut self,
        windows: Vec<MaintenanceWindow>,
    ) -> Result<(), MesosError> {
        const ACTION: &str = "maintenance/schedule";
        let mut seen = BTreeSet::new();
        for m in windows.iter().flat_map(|w| &w.machines) {
            if m.hostname.is_none() && m.ip.is_none() {
                return Err(MesosError::EmptyMachineId { action: ACTION });
            }
            if !seen.insert(m.clone()) {
                return Err(MesosError::DuplicateMachine {
                    action: ACTION,
                    machine: m.describe(),
                });
            }
        }
        if let Some(m) = self.maintenance.down.iter().find(|m| !seen.contains(*m)) {
            return Err(MesosError::DownMachineUnscheduled {
                action: ACTION,
                machine: m.describe(),
            });
        }
        self.maintenance.windows = windows;
        for idx in 0..self.mesos.agents.len() {
            if self.mesos.agents[idx].is_registered() {
                self.refresh_unavailability(idx);
            }
        }
        self.offers_changed();
        Ok(())
    }

    pub fn maintenance_status(&self) -> MaintenanceStatus {
        let draining = self
            .maintenance
            .windows
            .iter()
            .flat_map(|w| &w.machines)
            .filter(|m| !self.maintenance.down.contains(*m))
            .cloned()
            .collect();
        MaintenanceStatus {
            draining,
            down: self.maintenance.down.iter().cloned().collect(),
        }
    }

    /// `machine/down`: every machine must be scheduled and DRAINING. Their
    /// agents are removed at once, their tasks LOST (Marathon replaces
    /// them), and they cannot register again until `machine/up`.
    pub fn machines_down(&mut self, machines: &[MachineId]) -> Result<(), MesosError> {
        const ACTION: &str = "machine/down";
        for m in machines {
            if !self.is_scheduled(m) {
                return Err(MesosError::MachineNotScheduled {
                    action: ACTION,
                    machine: m.describe(),
                });
            }
            if self.maintenance.down.contains(m) {
                return Err(MesosError::MachineNotDraining {
                    action: ACTION,
                    machine: m.describe(),
                });
            }
        }
        for m in machines {
            self.maintenance.down.insert(m.clone());
            let hit: Vec<AgentIdx> = (0..self.mesos.agents.len())
                .filter(|&a| {
                    let agent = &self.mesos.agents[a];
                    agent.is_registered() && m.matches(&agent.hostname, &agent.ip)
                })
                .collect();
            for a in hit {
                self.remove_agent(a, AgentState::Removed, TaskEnd::Lost);
            }
        }
        Ok(())
    }

    /// `machine/up`: every machine must be DOWN. They leave the schedule,
    /// and an agent on a still-running instance registers again (with a new
    /// id, as a restarted agent does).
    pub fn machines_up(&mut self, machines: &[MachineId]) -> Result<(), MesosError> {
        const ACTION: &str = "machine/up";
        if let Some(m) = machines
            .iter()
            .find(|m| !self.maintenance.down.contains(*m))
        {
            return Err(MesosError::MachineNotDown {
                action: ACTION,
                machine: m.describe(),
            });
        }
        for m in machines {
            self.maintenance.down.remove(m);
            for w in &mut self.maintenance.windows {
                w.machines.retain(|x| x != m);
            }
        }
        self.maintenance.windows.retain(|w| !w.machines.is_empty());
        for i in 0..self.instances.len() {
            let inst = &self.instances[i];
            let agent_alive = inst
                .agent
                .is_some_and(|a| self.mesos.agents[a].is_registered());
            if matches!(
                inst.state,
                super::asg::LifecycleState::InService | super::asg::LifecycleState::Standby
            ) && !agent_alive
                && machines
                    .iter()
                    .any(|m| m.matches(&inst.private_dns(), &inst.ip))
            {
                self.schedule_in(self.timing.register_ms, Event::AgentRegisters(i));
            }
        }
        Ok(())
    }

    // ----- internals -----

    fn is_scheduled(&self, m: &MachineId) -> bool {
        self.maintenance
            .windows
            .iter()
            .any(|w| w.machines.contains(m))
    }

    pub(crate) fn machine_is_down(&self, hostname: &str, ip: &str) -> bool {
        self.maintenance
            .down
            .iter()
            .any(|m| m.matches(hostname, ip))
    }

    /// Recomputes the window that covers an agent's machine (the earliest).
    pub(crate) fn refresh_unavailability(&mut self, agent: AgentIdx) {
        let a = &self.mesos.agents[agent];
        let window = self
            .maintenance
            .windows
            .iter()
            .filter(|w| w.machines.iter().any(|m| m.matches(&a.hostname, &a.ip)))
            .map(|w| {
                let start = i128::from(w.start_unix_ns);
                (start, start + i128::from(w.duration_ns))
            })
            .min();
        self.mesos.agents[agent].unavailability = window;
    }

    /// Marathon's maintenance mode: an agent whose window has begun (less
    /// `--draining_seconds`) and not ended gets no new tasks.
    pub(crate) fn in_maintenance(&self, agent: AgentIdx) -> bool {
        let Some((start, end)) = self.mesos.agents[agent].unavailability else {
            return false;
        };
        let now = self.epoch.unix_ns(self.now);
        let draining = i128::from(self.timing.draining_ms) * 1_000_000;
        now >= start - draining && now < end
    }
}
