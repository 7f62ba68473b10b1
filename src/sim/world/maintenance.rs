//! The Mesos maintenance primitives: the schedule (posting one replaces the
//! whole schedule), maintenance status (scheduled machines are DRAINING,
//! downed ones DOWN), `machine/down` (only DRAINING machines; their agents
//! are removed at once and their tasks lost) and `machine/up`, with the
//! refusals and texts of Mesos' `master/maintenance.cpp` and
//! `master/http.cpp`.
//!
//! Machines are compared as Mesos' `MachineID` equality compares them
//! (`include/mesos/type_utils.hpp`): the same fields given, the hostname
//! in any case, the ip exactly. An agent's machine is the hostname and ip
//! it announced, both set, so a machine id without an ip never matches an
//! agent (Mesos' maintenance docs: "both the hostname and ip fields must
//! match").
//!
//! The master knows a machine (its `machines` map) once it is scheduled or
//! an agent registered on it, and keeps knowing it in UP mode when it
//! leaves the schedule or is brought up: `machine/down` of such a machine
//! is "not in DRAINING mode", of a machine never seen "not part of a
//! maintenance schedule".

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use super::World;
use super::agents::AgentState;
use super::events::{AgentIdx, Event};
use super::marathon::TaskEnd;

#[cfg(test)]
mod tests;

/// A Mesos `MachineID`: a field left out is unset, which is not the same
/// machine as one with that field set (even to "").
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MachineId {
    pub(crate) hostname: Option<String>,
    pub(crate) ip: Option<String>,
}

impl MachineId {
    /// Mesos' `operator==(MachineID, MachineID)`: both have a hostname or
    /// neither, equal once lowercased; both have an ip or neither, equal.
    pub(crate) fn same_machine(&self, other: &MachineId) -> bool {
        let lower = |m: &MachineId| m.hostname.as_ref().map(|h| h.to_lowercase());
        lower(self) == lower(other) && self.ip == other.ip
    }

    /// Whether this is the machine of an agent that announced `hostname`
    /// and `ip`.
    pub(crate) fn matches(&self, hostname: &str, ip: &str) -> bool {
        self.same_machine(&MachineId {
            hostname: Some(hostname.to_string()),
            ip: Some(ip.to_string()),
        })
    }

    /// How Mesos names a machine in its refusals (`JSON::protobuf(id)`,
    /// stringified): `{"hostname":"h","ip":"10.0.0.1"}`, unset fields left
    /// out.
    fn json(&self) -> String {
        let mut fields = serde_json::Map::new();
        if let Some(hostname) = &self.hostname {
            fields.insert("hostname".into(), hostname.clone().into());
        }
        if let Some(ip) = &self.ip {
            fields.insert("ip".into(), ip.clone().into());
        }
        serde_json::Value::Object(fields).to_string()
    }

    /// How Mesos prints a machine (`operator<<(ostream&, MachineID)`):
    /// `host (10.0.0.1)`, `host`, or `(10.0.0.1)`.
    pub(crate) fn display(&self) -> String {
        match (&self.hostname, &self.ip) {
            (Some(hostname), Some(ip)) => format!("{hostname} ({ip})"),
            (Some(hostname), None) => hostname.clone(),
            (None, ip) => format!("({})", ip.as_deref().unwrap_or("")),
        }
    }

    /// Mesos' `validation::machine`: a hostname or an ip, and an ip that
    /// parses as IPv4.
    fn validate(&self) -> Result<(), MaintenanceError> {
        let hostname = self.hostname.as_deref().unwrap_or("");
        let ip = self.ip.as_deref().unwrap_or("");
        if hostname.is_empty() && ip.is_empty() {
            return Err(MaintenanceError::EmptyMachineId);
        }
        if !ip.is_empty() && ip.parse::<Ipv4Addr>().is_err() {
            return Err(MaintenanceError::BadIp { ip: ip.to_string() });
        }
        Ok(())
    }
}

/// One maintenance window: machines unavailable from `start_unix_ns` for
/// `duration_ns` (Mesos carries both as nanoseconds).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaintenanceWindow {
    pub(crate) machines: Vec<MachineId>,
    pub(crate) start_unix_ns: i64,
    pub(crate) duration_ns: i64,
}

/// `/master/maintenance/status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MaintenanceStatus {
    pub(crate) draining: Vec<MachineId>,
    pub down: Vec<MachineId>,
}

/// Why the master refused a maintenance call: each message is Mesos' own
/// text (400 Bad Request), the machine named as `MachineId::json`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MaintenanceError {
    #[error("List of machines is empty")]
    NoMachines,
    #[error("List of machines in the maintenance window is empty")]
    EmptyWindow,
    #[error("Unavailability 'duration' is negative")]
    NegativeDuration,
    #[error("Both 'hostname' and 'ip' for a machine are empty")]
    EmptyMachineId,
    #[error("Failed to parse IPv4: {ip}")]
    BadIp { ip: String },
    #[error("Machine '{machine}' appears more than once in the schedule")]
    DuplicateMachine { machine: String },
    #[error("Machine '{machine}' is deactivated and cannot be removed from the schedule")]
    DownMachineUnscheduled { machine: String },
    #[error("Machine '{machine}' is not part of a maintenance schedule")]
    MachineNotScheduled { machine: String },
    #[error("Machine '{machine}' is not in DRAINING mode and cannot be brought down")]
    MachineNotDraining { machine: String },
    #[error("Machine '{machine}' is not in DOWN mode and cannot be brought up")]
    MachineNotDown { machine: String },
}

impl MaintenanceError {
    #[cfg(test)]
    pub(crate) fn label(&self) -> &'static str {
        match self {
            MaintenanceError::NoMachines => "no_machines",
            MaintenanceError::EmptyWindow => "empty_window",
            MaintenanceError::NegativeDuration => "negative_duration",
            MaintenanceError::EmptyMachineId => "empty_machine_id",
            MaintenanceError::BadIp { .. } => "bad_ip",
            MaintenanceError::DuplicateMachine { .. } => "duplicate_machine",
            MaintenanceError::DownMachineUnscheduled { .. } => "down_machine_unscheduled",
            MaintenanceError::MachineNotScheduled { .. } => "machine_not_scheduled",
            MaintenanceError::MachineNotDraining { .. } => "machine_not_draining",
            MaintenanceError::MachineNotDown { .. } => "machine_not_down",
        }
    }
}

/// A machine's mode, as the master's `MachineInfo` has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Up,
    Draining,
    Down,
}

/// The master's maintenance state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Maintenance {
    /// The schedule as last posted (less the machines brought up since).
    pub(crate) windows: Vec<MaintenanceWindow>,
    /// DOWN machines, as the schedule names them.
    pub(crate) down: Vec<MachineId>,
    /// Machines that left the schedule or were brought up: the master
    /// keeps them, in UP mode.
    known_up: Vec<MachineId>,
}

impl World {
    // ----- the API the Mesos facade calls -----

    pub fn maintenance_schedule(&self) -> Vec<MaintenanceWindow> {
        self.maintenance.windows.clone()
    }

    /// Replaces the whole schedule, after Mesos' `validation::schedule`:
    /// each window has machines and a duration that is not negative, each
    /// machine is valid and appears once, and no DOWN machine is left out
    /// (it must be brought up first). Refused, nothing changes.
    pub(crate) fn set_maintenance_schedule(
        &mut self,
        windows: Vec<MaintenanceWindow>,
    ) -> Result<(), MaintenanceError> {
        let mut seen: Vec<&MachineId> = Vec::new();
        for window in &windows {
            if window.machines.is_empty() {
                return Err(MaintenanceError::EmptyWindow);
            }
            if window.duration_ns < 0 {
                return Err(MaintenanceError::NegativeDuration);
            }
            for m in &window.machines {
                m.validate()?;
                if seen.iter().any(|s| s.same_machine(m)) {
                    return Err(MaintenanceError::DuplicateMachine { machine: m.json() });
                }
                seen.push(m);
            }
        }
        if let Some(m) = self
            .maintenance
            .down
            .iter()
            .find(|d| !seen.iter().any(|s| s.same_machine(d)))
        {
            return Err(MaintenanceError::DownMachineUnscheduled { machine: m.json() });
        }
        // Machines leaving the schedule go back to UP, still known.
        let leaving: Vec<MachineId> = self
            .maintenance
            .windows
            .iter()
            .flat_map(|w| &w.machines)
            .filter(|m| !seen.iter().any(|s| s.same_machine(m)))
            .cloned()
            .collect();
        self.remember_up(leaving);
        // A DOWN machine stays DOWN, now named as the new schedule names it.
        let down: Vec<MachineId> = self
            .maintenance
            .down
            .iter()
            .filter_map(|d| {
                seen.iter()
                    .find(|s| s.same_machine(d))
                    .map(|s| (*s).clone())
            })
            .collect();
        self.maintenance.down = down;
        self.maintenance.windows = windows;
        self.refresh_all_unavailability();
        Ok(())
    }

    pub fn maintenance_status(&self) -> MaintenanceStatus {
        let draining = self
            .maintenance
            .windows
            .iter()
            .flat_map(|w| &w.machines)
            .filter(|m| !self.is_down(m))
            .cloned()
            .collect();
        MaintenanceStatus {
            draining,
            down: self.maintenance.down.clone(),
        }
    }

    /// `machine/down` (and v1 START_MAINTENANCE): every machine must be
    /// DRAINING. Their agents are removed at once, their tasks LOST
    /// (Marathon replaces them), and they cannot register again until
    /// `machine/up`.
    pub(crate) fn machines_down(&mut self, machines: &[MachineId]) -> Result<(), MaintenanceError> {
        validate_machines(machines)?;
        for m in machines {
            match self.mode(m) {
                None => {
                    return Err(MaintenanceError::MachineNotScheduled { machine: m.json() });
                }
                Some(Mode::Draining) => {}
                Some(Mode::Up | Mode::Down) => {
                    return Err(MaintenanceError::MachineNotDraining { machine: m.json() });
                }
            }
        }
        for m in machines {
            if let Some(scheduled) = self.scheduled(m).cloned() {
                self.maintenance.down.push(scheduled);
            }
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

    /// `machine/up` (and v1 STOP_MAINTENANCE): every machine must be DOWN.
    /// They leave the schedule (a window left empty goes), and an agent on
    /// a still-running instance registers again (with a new id, as a
    /// restarted agent does).
    pub(crate) fn machines_up(&mut self, machines: &[MachineId]) -> Result<(), MaintenanceError> {
        validate_machines(machines)?;
        for m in machines {
            match self.mode(m) {
                None => {
                    return Err(MaintenanceError::MachineNotScheduled { machine: m.json() });
                }
                Some(Mode::Down) => {}
                Some(Mode::Up | Mode::Draining) => {
                    return Err(MaintenanceError::MachineNotDown { machine: m.json() });
                }
            }
        }
        let up = |x: &MachineId| machines.iter().any(|m| m.same_machine(x));
        self.maintenance.down.retain(|d| !up(d));
        for w in &mut self.maintenance.windows {
            w.machines.retain(|x| !up(x));
        }
        self.maintenance.windows.retain(|w| !w.machines.is_empty());
        self.remember_up(machines.to_vec());
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

    /// The machine's mode, `None` when the master does not know it: the
    /// schedule and the DOWN list first, then the machines agents
    /// registered on (every agent the world has had, as the master keeps
    /// a machine once an agent registered on it) and the ones that left
    /// the schedule.
    fn mode(&self, m: &MachineId) -> Option<Mode> {
        if self.is_down(m) {
            return Some(Mode::Down);
        }
        if self.scheduled(m).is_some() {
            return Some(Mode::Draining);
        }
        let seen_agent = self
            .mesos
            .agents
            .iter()
            .any(|a| m.matches(&a.hostname, &a.ip));
        let known = self.maintenance.known_up.iter().any(|k| k.same_machine(m));
        (seen_agent || known).then_some(Mode::Up)
    }

    /// The schedule's entry for the machine, if it is scheduled.
    fn scheduled(&self, m: &MachineId) -> Option<&MachineId> {
        self.maintenance
            .windows
            .iter()
            .flat_map(|w| &w.machines)
            .find(|s| s.same_machine(m))
    }

    fn is_down(&self, m: &MachineId) -> bool {
        self.maintenance.down.iter().any(|d| d.same_machine(m))
    }

    fn remember_up(&mut self, machines: Vec<MachineId>) {
        for m in machines {
            if !self.maintenance.known_up.iter().any(|k| k.same_machine(&m)) {
                self.maintenance.known_up.push(m);
            }
        }
    }

    pub(crate) fn machine_is_down(&self, hostname: &str, ip: &str) -> bool {
        self.maintenance
            .down
            .iter()
            .any(|m| m.matches(hostname, ip))
    }

    fn refresh_all_unavailability(&mut self) {
        for idx in 0..self.mesos.agents.len() {
            if self.mesos.agents[idx].is_registered() {
                self.refresh_unavailability(idx);
            }
        }
        self.offers_changed();
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

/// Mesos' `validation::machines`, for `machine/down` and `machine/up`:
/// some machines, each valid, none twice.
fn validate_machines(machines: &[MachineId]) -> Result<(), MaintenanceError> {
    if machines.is_empty() {
        return Err(MaintenanceError::NoMachines);
    }
    for (i, m) in machines.iter().enumerate() {
        m.validate()?;
        if machines[..i].iter().any(|earlier| earlier.same_machine(m)) {
            return Err(MaintenanceError::DuplicateMachine { machine: m.json() });
        }
    }
    Ok(())
}
