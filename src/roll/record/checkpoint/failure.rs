//! What the roll watches on its new agents, and what it found: the new
//! agents as they registered, a failure found there (the roll stopped
//! moving anything when it was found), and the failures an operator has
//! acknowledged by resuming a roll that paused on them.

use serde::{Deserialize, Serialize};

/// A new instance's Mesos agent, as it registered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewAgent {
    pub instance: String,
    pub agent_id: String,
    pub hostname: String,
    pub ip: Option<String>,
}

/// A failure found on the new agents, with its evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureRecord {
    /// Names the failure (`task-failure/<task id>`, …).
    pub key: String,
    pub app: Option<String>,
    pub task: Option<String>,
    pub agent: Option<String>,
    pub instance: Option<String>,
    /// What failed.
    pub what: String,
    /// When it failed (UTC, RFC 3339, Marathon's clock), when known.
    pub since: Option<String>,
    /// When the roll found it (UTC, RFC 3339).
    pub found: String,
}
