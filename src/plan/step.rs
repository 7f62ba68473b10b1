//! A step: the leaf of a plan, the only element that stores a status.

use serde::{Deserialize, Serialize};

use super::status::Status;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(bound(serialize = "K: Serialize", deserialize = "K: Deserialize<'de>"))]
pub struct Step<K = serde_json::Value> {
    /// Stable handle for operators and checkpoints. Generated when a hand-written document leaves it out (see
    /// `Plan::from_json`); unique within the plan.
    #[serde(default)]
    pub(crate) id: String,
    pub(crate) name: String,
    #[serde(default = "pending")]
    pub(crate) status: Status,
    /// Kept apart from `status` as in the SDK, so that `continue` restores
    /// exactly the status the step had when it was interrupted.
    #[serde(default)]
    pub(crate) interrupted: bool,
    /// What the step works on (an instance id): two steps on one asset are
    /// never candidates at once (see `coordinator.rs`).
    #[serde(default)]
    pub(crate) asset: Option<String>,
    /// Sibling steps (id or name) that must be COMPLETE first; only the
    /// `dependency` strategy reads it.
    #[serde(default)]
    pub(crate) depends_on: Vec<String>,
    /// What the step is doing or waiting for, for humans.
    #[serde(default)]
    pub message: String,
    /// What the step does, for the program that runs the plan: a roll's
    /// plan holds its typed steps here (`Plan<GroupStep>`), a hand-written
    /// document whatever JSON it carries. The engine never reads it; it
    /// only keeps it through every operation and round trip.
    #[serde(default = "no_kind", skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<K>,
}

pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A step read without a kind (a path, so that serde asks no `K:
/// Default`).
fn no_kind<K>() -> Option<K> {
    None
}

fn pending() -> Status {
    Status::Pending
}

impl<K> Step<K> {
    pub(crate) fn new(name: impl Into<String>) -> Step<K> {
        Step {
            id: new_id(),
            name: name.into(),
            status: Status::Pending,
            interrupted: false,
            asset: None,
            depends_on: Vec::new(),
            message: String::new(),
            kind: None,
        }
    }

    /// The status as the SDK reports it: an interrupted step that has not
    /// started acting (PENDING or PREPARED) reads WAITING.
    pub(crate) fn status(&self) -> Status {
        if self.interrupted && matches!(self.status, Status::Pending | Status::Prepared) {
            Status::Waiting
        } else {
            self.status
        }
    }

    pub fn is_complete(&self) -> bool {
        self.status == Status::Complete
    }

    /// The SDK's `PlanUtils.isEligible` without assets: may this step be
    /// handed work now?
    pub(crate) fn is_eligible(&self) -> bool {
        !self.interrupted && !matches!(self.status, Status::Complete | Status::Error)
    }

    /// Holds its asset: it has acted on it and not finished (the SDK's dirty
    /// assets are PREPARED and STARTING steps; STARTED waits on the asset too).
    pub(crate) fn is_working(&self) -> bool {
        matches!(
            self.status,
            Status::Prepared | Status::Starting | Status::Started
        )
    }
}
