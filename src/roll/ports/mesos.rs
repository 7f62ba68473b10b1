//! The Mesos master as the roll sees it: the registered agents, the
//! maintenance schedule and status, taking machines down and up, and
//! draining or deactivating one agent. Plain domain types only; the HTTP
//! adapter lives in `crate::mesos`.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::net::IpAddr;
use std::time::{Duration, SystemTime};

/// What the roll asks of the Mesos master. Every call goes to the leading
/// master; the implementation finds it and follows it when it changes.
pub(crate) trait MesosMaster {
    /// The agents the master knows, registered and recovered.
    fn agents(&self) -> impl Future<Output = Result<Agents, MesosError>> + Send;

    /// The whole maintenance schedule, other operators' windows included.
    fn maintenance_schedule(
        &self,
    ) -> impl Future<Output = Result<MaintenanceSchedule, MesosError>> + Send;

    /// Puts `machines` into one new maintenance window, leaving every
    /// window already in the schedule as it is. A machine already in the
    /// schedule (ours from an earlier call, or another operator's) is left
    /// alone and reported as such, so calling this twice is harmless.
    fn schedule_maintenance(
        &self,
        machines: &[MachineId],
        unavailability: Unavailability,
    ) -> impl Future<Output = Result<ScheduleChange, MesosError>> + Send;

    /// Takes `machines` out of the schedule, and nothing else. Mesos
    /// refuses to unschedule a machine that is down: bring it up first
    /// (`machines_up` also removes it from the schedule).
    fn cancel_maintenance(
        &self,
        machines: &[MachineId],
    ) -> impl Future<Output = Result<ScheduleChange, MesosError>> + Send;

    /// Which machines are draining (with the frameworks' answers to the
    /// inverse offers) and which are down.
    fn maintenance_status(
        &self,
    ) -> impl Future<Output = Result<MaintenanceStatus, MesosError>> + Send;

    /// Starts maintenance: the agents on these (scheduled) machines are
    /// shut down and removed, their tasks become LOST.
    fn machines_down(
        &self,
        machines: &[MachineId],
    ) -> impl Future<Output = Result<(), MesosError>> + Send;

    /// Ends maintenance: the machines may register agents again and leave
    /// the schedule.
    fn machines_up(
        &self,
        machines: &[MachineId],
    ) -> impl Future<Output = Result<(), MesosError>> + Send;

    /// The frameworks registered with the master and their tasks not yet
    /// terminal (`/master/frameworks`): who runs what on which agent,
    /// Marathon's tasks and every other framework's.
    fn frameworks(&self) -> impl Future<Output = Result<Vec<Framework>, MesosError>> + Send;

    /// Kills every task on the agent and keeps offers away from it
    /// (v1 `DRAIN_AGENT`, Mesos 1.9 and later).
    fn drain_agent(
        &self,
        agent: &AgentId,
        options: DrainOptions,
    ) -> impl Future<Output = Result<(), MesosError>> + Send;

    /// Stops offers of the agent's resources (v1 `DEACTIVATE_AGENT`).
    fn deactivate_agent(
        &self,
        agent: &AgentId,
    ) -> impl Future<Output = Result<(), MesosError>> + Send;

    /// Offers the agent's resources again, a drain forgotten (v1
    /// `REACTIVATE_AGENT`; Mesos refuses it for an agent that is not
    /// deactivated).
    fn reactivate_agent(
        &self,
        agent: &AgentId,
    ) -> impl Future<Output = Result<(), MesosError>> + Send;
}

/// A framework as the master lists it, with its tasks not yet terminal.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Framework {
    pub(crate) id: String,
    /// The name it registered with: `marathon`, `metronome`, a DC/OS SDK
    /// service's name (`kafka`), `chronos-2.0.1`, …
    pub(crate) name: String,
    /// False while it is disconnected from the master (its tasks run on).
    pub(crate) active: bool,
    pub(crate) tasks: Vec<FrameworkTask>,
}

/// One task of a framework, on one agent.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FrameworkTask {
    pub(crate) id: String,
    pub(crate) name: String,
    /// The agent (`slave_id`) it runs on.
    pub(crate) agent_id: String,
    /// `TASK_RUNNING`, `TASK_STAGING`, `TASK_KILLING`, …
    pub(crate) state: String,
    pub(crate) cpus: f64,
    pub(crate) mem: f64,
}

/// A Mesos agent id, e.g. `20151002-000353-1695027628-5050-1177-S0`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct AgentId(pub(crate) String);

impl std::fmt::Display for AgentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The master's view of its agents.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Agents {
    pub(crate) registered: Vec<Agent>,
    /// Agents known from the registry after a master failover that have
    /// not re-registered yet: neither gone nor usable.
    pub(crate) recovered: Vec<RecoveredAgent>,
}

/// One registered agent.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Agent {
    pub(crate) id: AgentId,
    pub(crate) hostname: String,
    pub(crate) port: Option<u16>,
    /// From the agent's libprocess pid (`slave(1)@10.0.0.5:5051`): the
    /// address the agent announced, which is what maintenance machine ids
    /// and EC2 private IPs are matched against.
    pub(crate) ip: Option<IpAddr>,
    /// False while the agent is disconnected or deactivated.
    pub(crate) active: bool,
    /// Deactivated by an operator (Mesos 1.9 and later; false before).
    pub(crate) deactivated: bool,
    pub(crate) registered_at: Option<SystemTime>,
    pub(crate) reregistered_at: Option<SystemTime>,
    pub(crate) attributes: BTreeMap<String, AttributeValue>,
    pub(crate) resources: Resources,
    pub(crate) used_resources: Resources,
    pub(crate) version: Option<String>,
    /// Set while the agent is draining or drained (Mesos 1.9 and later).
    pub(crate) drain: Option<DrainState>,
    /// Roles its resources are reserved to (DC/OS public agents:
    /// `slave_public`); empty for an agent offering only unreserved
    /// resources.
    pub(crate) reserved_roles: BTreeSet<String>,
    /// Whether it offers resources of no role (`*`): false for an agent
    /// whose every resource is reserved, as a DC/OS public agent's are.
    pub(crate) unreserved: bool,
}

impl Agent {
    /// Registered and connected: active, or deactivated by an operator
    /// (its tasks run on; only its offers stop). A disconnected agent is
    /// neither.
    pub(crate) fn connected(&self) -> bool {
        self.active || self.deactivated
    }

    /// The agent as instances are matched against it
    /// (`auto_scaling::match_agents`), attributes as text.
    pub(crate) fn identity(&self) -> super::auto_scaling::AgentIdentity {
        super::auto_scaling::AgentIdentity {
            id: self.id.0.clone(),
            hostname: self.hostname.clone(),
            ip: self.ip,
            attributes: self
                .attributes
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        AttributeValue::Text(t) => t.clone(),
                        AttributeValue::Scalar(s) => s.to_string(),
                    };
                    (k.clone(), v)
                })
                .collect(),
        }
    }

    /// The maintenance machine id Mesos matches this agent with: the
    /// hostname and IP the agent announced, both of which must match.
    #[cfg(test)]
    pub(crate) fn machine_id(&self) -> MachineId {
        MachineId {
            hostname: Some(self.hostname.clone()),
            ip: self.ip.map(|ip| ip.to_string()),
        }
    }
}

/// An agent the master recovered from its registry but has not heard from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RecoveredAgent {
    pub(crate) id: AgentId,
    pub(crate) hostname: String,
    pub(crate) port: Option<u16>,
}

/// An agent attribute (`--attributes`): Mesos renders SCALAR attributes as
/// numbers and everything else (TEXT, RANGES, SET) as text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum AttributeValue {
    Text(String),
    Scalar(f64),
}

/// The scalar resources the roll reasons about; 0 when absent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Resources {
    pub(crate) cpus: f64,
    /// Megabytes.
    pub(crate) mem: f64,
    /// Megabytes.
    pub(crate) disk: f64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DrainState {
    /// Tasks are being killed.
    Draining,
    /// Every task is gone; the agent stays deactivated.
    Drained,
    /// A state this version of roller does not know.
    Other(String),
}

/// A machine in the maintenance schedule. Mesos matches an agent to a
/// machine when both fields equal what the agent announced (an omitted
/// field is the empty string); hostnames compare case-insensitively.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineId {
    pub(crate) hostname: Option<String>,
    pub(crate) ip: Option<String>,
}

impl MachineId {
    /// The same machine to Mesos.
    pub(crate) fn same_machine(&self, other: &MachineId) -> bool {
        let hostname = |m: &MachineId| m.hostname.clone().unwrap_or_default();
        let ip = |m: &MachineId| m.ip.clone().unwrap_or_default();
        hostname(self).eq_ignore_ascii_case(&hostname(other)) && ip(self) == ip(other)
    }
}

impl std::fmt::Display for MachineId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hostname = self.hostname.as_deref().unwrap_or("");
        let ip = self.ip.as_deref().unwrap_or("");
        write!(f, "{hostname}/{ip}")
    }
}

/// The maintenance schedule: a machine appears in at most one window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MaintenanceSchedule {
    pub(crate) windows: Vec<MaintenanceWindow>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaintenanceWindow {
    pub(crate) machines: Vec<MachineId>,
    pub(crate) unavailability: Unavailability,
}

/// When machines are expected to be unavailable, in nanoseconds since the
/// epoch as Mesos keeps it (kept as integers so that other operators'
/// windows are written back exactly as they were read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unavailability {
    pub(crate) start_nanos: i64,
    /// None: indefinitely.
    pub(crate) duration_nanos: Option<i64>,
}

impl Unavailability {
    /// From `start` for `duration` (saturating far outside the i64 range).
    pub(crate) fn new(start: SystemTime, duration: Duration) -> Unavailability {
        let start_nanos = match start.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_nanos())
                .map(|n| -n)
                .unwrap_or(i64::MIN),
        };
        Unavailability {
            start_nanos,
            duration_nanos: Some(i64::try_from(duration.as_nanos()).unwrap_or(i64::MAX)),
        }
    }
}

/// What a schedule edit did, machine by machine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScheduleChange {
    /// Machines this call added to or removed from the schedule.
    pub(crate) changed: Vec<MachineId>,
    /// Machines that needed nothing: already scheduled when adding (by us
    /// earlier or by another operator), not scheduled when cancelling.
    pub(crate) unchanged: Vec<MachineId>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MaintenanceStatus {
    pub(crate) draining: Vec<DrainingMachine>,
    pub down: Vec<MachineId>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DrainingMachine {
    pub(crate) id: MachineId,
    /// The frameworks' latest answers to the inverse offers for it.
    pub(crate) responses: Vec<InverseOfferResponse>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct InverseOfferResponse {
    pub(crate) framework_id: String,
    pub(crate) answer: InverseOfferAnswer,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum InverseOfferAnswer {
    Unknown,
    Accept,
    Decline,
}

/// How `drain_agent` treats the tasks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DrainOptions {
    /// The longest kill grace period a task gets; None keeps each task's
    /// own.
    pub(crate) max_grace_period: Option<Duration>,
    /// Mark the agent gone once drained (its tasks become GONE_BY_OPERATOR
    /// and it can never re-register).
    pub(crate) mark_gone: bool,
}

/// Why a call to the Mesos master failed. `label` is stable (logs,
/// checkpoints, `--json`); the message names the call and the master.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MesosError {
    #[error("no Mesos master knows a leader (asked {masters}): {detail}")]
    NoLeader { masters: String, detail: String },
    #[error("cannot connect to the Mesos master at {url} for {endpoint}: {reason}")]
    Unreachable {
        endpoint: String,
        url: String,
        reason: String,
    },
    #[error("the Mesos master at {url} did not answer {endpoint} in time")]
    Timeout { endpoint: String, url: String },
    #[error("the connection to the Mesos master at {url} broke during {endpoint}: {reason}")]
    Transport {
        endpoint: String,
        url: String,
        reason: String,
    },
    #[error("the Mesos master sent {endpoint} through more than {hops} redirects (last: {last})")]
    RedirectLoop {
        endpoint: String,
        hops: usize,
        last: String,
    },
    #[error("the Mesos master refused the credentials for {endpoint} (HTTP {status})")]
    Unauthorized { endpoint: String, status: u16 },
    #[error("the Mesos master answered {endpoint} with HTTP {status}: {body}")]
    HttpStatus {
        endpoint: String,
        status: u16,
        /// The start of the body, for the operator.
        body: String,
    },
    #[error("the Mesos master does not support {call}: {detail}")]
    Unsupported { call: String, detail: String },
    #[error("cannot read the Mesos master's answer to {endpoint}: {reason}")]
    BadResponse { endpoint: String, reason: String },
    #[error("the Mesos settings are unusable: {reason}")]
    Config { reason: String },
}

impl MesosError {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            MesosError::NoLeader { .. } => "no_leader",
            MesosError::Unreachable { .. } => "unreachable",
            MesosError::Timeout { .. } => "timeout",
            MesosError::Transport { .. } => "transport",
            MesosError::RedirectLoop { .. } => "redirect_loop",
            MesosError::Unauthorized { .. } => "unauthorized",
            MesosError::HttpStatus { .. } => "http_status",
            MesosError::Unsupported { .. } => "unsupported",
            MesosError::BadResponse { .. } => "bad_response",
            MesosError::Config { .. } => "config",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(hostname: Option<&str>, ip: Option<&str>) -> MachineId {
        MachineId {
            hostname: hostname.map(str::to_string),
            ip: ip.map(str::to_string),
        }
    }

    #[test]
    fn machines_match_on_both_fields_with_hostnames_ignoring_case() {
        let a = machine(Some("Agent-1"), Some("10.0.0.1"));
        assert!(a.same_machine(&machine(Some("agent-1"), Some("10.0.0.1"))));
        assert!(!a.same_machine(&machine(Some("agent-1"), None)));
        assert!(!a.same_machine(&machine(Some("agent-1"), Some("10.0.0.2"))));
        assert!(machine(None, Some("10.0.0.1")).same_machine(&machine(Some(""), Some("10.0.0.1"))));
    }

    #[test]
    fn an_unavailability_counts_nanoseconds_from_the_epoch() {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_443_830_400);
        let window = Unavailability::new(start, Duration::from_secs(3600));
        assert_eq!(window.start_nanos, 1_443_830_400_000_000_000);
        assert_eq!(window.duration_nanos, Some(3_600_000_000_000));
    }
}
