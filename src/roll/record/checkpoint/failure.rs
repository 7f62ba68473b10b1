//! What the roll watches on its new agents, and what it found: the new
//! agents as they registered, a failure found there (the roll stopped
//! moving anything when it was found), and the failures an operator has
//! acknowledged by resuming a roll that paused on them.

use serde::{Deserialize, Serialize};

use crate::roll::ports::auto_scaling::AgentIdentity;

/// A new instance's Mesos agent, as it registered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewAgent {
    pub(crate) instance: String,
    pub(crate) agent_id: String,
    pub(crate) hostname: String,
    pub(crate) ip: Option<String>,
}

impl NewAgent {
    /// Instance `instance`'s agent, as Mesos lists it registered.
    pub(crate) fn registered(instance: String, agent: &AgentIdentity) -> NewAgent {
        NewAgent {
            instance,
            agent_id: agent.id.clone(),
            hostname: agent.hostname.clone(),
            ip: agent.ip.map(|ip| ip.to_string()),
        }
    }

    /// Its machine, as the roll's maintenance windows record it.
    pub(crate) fn machine(&self) -> super::MaintenanceRecord {
        super::MaintenanceRecord {
            hostname: self.hostname.clone(),
            ip: self.ip.clone(),
        }
    }
}

/// A failure found on the new agents, with its evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FailureRecord {
    /// Names the failure (`task-failure/<task id>`, …).
    pub(crate) key: String,
    pub(crate) app: Option<String>,
    pub(crate) task: Option<String>,
    pub(crate) agent: Option<String>,
    pub(crate) instance: Option<String>,
    /// What failed.
    pub(crate) what: String,
    /// When it failed (UTC, RFC 3339, Marathon's clock), when known.
    pub(crate) since: Option<String>,
    /// When the roll found it (UTC, RFC 3339).
    pub(crate) found: String,
}

/// What the roll does when it finds a failure on the new agents
/// (`--on-failure`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum OnFailure {
    /// Turn around: a `rollback` phase puts every task back on the old
    /// agents and the group back as it was.
    #[default]
    Rollback,
    /// Pause and page; a human decides (`roller rollback`, or resume with
    /// `--acknowledge-failure`).
    Pause,
}

impl OnFailure {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OnFailure::Rollback => "rollback",
            OnFailure::Pause => "pause",
        }
    }

    pub(crate) fn parse(text: &str) -> Result<OnFailure, String> {
        match text {
            "rollback" => Ok(OnFailure::Rollback),
            "pause" => Ok(OnFailure::Pause),
            other => Err(format!(
                "--on-failure {other:?}: expected rollback (the default: put the cluster back as it was) or pause (stop and page a human)"
            )),
        }
    }
}
