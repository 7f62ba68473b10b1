//! What the roll did through DC/OS SDK services and to Mesos agents for
//! them, roll-wide (a service's pods span groups): the old agents it
//! deactivated, each pod it replaced.

use serde::{Deserialize, Serialize};

/// Roll-wide record of the services' side of the roll.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServicesRecord {
    /// Old agents the roll sent `DEACTIVATE_AGENT` for (recorded before
    /// the calls): no framework gets their offers, so a replaced pod never
    /// lands on an agent the roll will empty. A rollback reactivates those
    /// it keeps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) deactivated: Vec<String>,
    /// Every pod replace the roll decided, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) replaces: Vec<PodReplace>,
}

impl ServicesRecord {
    pub(crate) fn is_empty(&self) -> bool {
        *self == ServicesRecord::default()
    }
}

/// One `pod replace` the roll decided: recorded (intent) before the POST,
/// so that a crash never replaces a pod twice; its tasks' ids then tell a
/// resume whether the POST landed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PodReplace {
    pub(crate) service: String,
    /// `kafka-0`.
    pub(crate) pod: String,
    /// The old agent it ran on, and that agent's instance.
    pub(crate) from_agent: String,
    pub(crate) instance: String,
    /// Its tasks' ids before the replace (a relaunch gives new ones).
    pub(crate) task_ids: Vec<String>,
    /// When it was decided (Unix ms).
    pub(crate) decided_unix_ms: u64,
    /// Whether the service answered the POST (a resume that finds it
    /// unset and the pod still on its old agent with the same tasks sends
    /// it again).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) sent: bool,
    /// When the pod was seen running on a new agent with its recovery
    /// plan COMPLETE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) done_unix_ms: Option<u64>,
    /// The agent it runs on since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) to_agent: Option<String>,
    /// A rollback's replace (off a new agent that goes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) rollback: bool,
}
