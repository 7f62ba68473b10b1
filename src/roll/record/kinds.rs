//! The kinds the checkpoint stores: what each step of the plan does
//! (`StepKind`, in the plan document's step as `"kind": {"type":
//! "replace", "instance": "i-…"}`), and what a step waits for (`WaitKind`,
//! each with its own timeout). The engine dispatches on the first and
//! keeps deadlines by the second; both are plain data.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::env::Timeouts;

/// What a step of the roll's plan does. Stored in the plan document
/// (`"kind": {"type": "replace", "instance": "i-…"}`), so the runner
/// dispatches on it and never on ids.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum StepKind {
    /// Tag the group with the run id.
    Lock,
    /// Suspend the scaling processes that could change capacity.
    SuspendProcesses,
    /// Raise MaxSize to N + K (`--raise-max`).
    RaiseMaxSize,
    /// Desired capacity = N + K − terminated.
    SetDesired,
    /// Wait for the new instances to be active Mesos agents.
    WaitRegistered,
    /// Post one maintenance window over every agent to replace (drain).
    Maintenance,
    /// Replace one instance (serial, and the drain's canaries).
    Replace { instance: String },
    /// One wave of task moves off every old agent (drain).
    DrainWave { wave: u32 },
    /// Put one emptied agent down and terminate its instance (drain).
    Terminate { instance: String },
    /// Rollback: the new agents under maintenance, the old agents' windows
    /// lifted (machines brought up).
    RollbackWindows,
    /// Rollback: surges set back, every task on a new agent moved back to
    /// the old agents within its app's floor.
    RollbackMoves,
    /// Rollback: the new instances terminated with decrement, down to the
    /// group's original size.
    RollbackTerminate,
    /// Rollback: the group's launch template (or configuration) set back
    /// to the one the old instances run.
    RollbackLaunchSource,
    /// Resume what the roll suspended.
    ResumeProcesses,
    /// Restore the MaxSize `--raise-max` raised.
    RestoreMaxSize,
    /// Remove the roll's maintenance windows.
    EndMaintenance,
    /// Report the AZ moves rebalancing needs.
    ReportRebalance,
    /// Remove the run-id tag.
    Unlock,
}

impl StepKind {
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    pub fn from_value(value: &serde_json::Value) -> Result<StepKind, String> {
        serde_json::from_value(value.clone()).map_err(|e| e.to_string())
    }
}

/// The kinds of wait, each with its own timeout (`[timeouts]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitKind {
    /// New instances in service and registered as agents.
    Registered,
    /// Tasks moving off an agent before it is terminated.
    TaskMoves,
    /// Mesos dropping a terminated agent.
    Deregistered,
    /// Marathon reporting every app healthy.
    Healthy,
    /// A call that failed for a passing reason, tried again each tick.
    Retry,
}

impl WaitKind {
    pub const ALL: [WaitKind; 5] = [
        WaitKind::Registered,
        WaitKind::TaskMoves,
        WaitKind::Deregistered,
        WaitKind::Healthy,
        WaitKind::Retry,
    ];

    /// The name the checkpoint stores (and `/metrics` labels it with).
    pub fn as_str(self) -> &'static str {
        match self {
            WaitKind::Registered => "registered",
            WaitKind::TaskMoves => "task-moves",
            WaitKind::Deregistered => "deregistered",
            WaitKind::Healthy => "healthy",
            WaitKind::Retry => "retry",
        }
    }

    pub fn timeout(self, timeouts: &Timeouts) -> Duration {
        match self {
            WaitKind::Registered => timeouts.scale_up,
            WaitKind::TaskMoves => timeouts.task_move,
            WaitKind::Deregistered => timeouts.deregister,
            WaitKind::Healthy => timeouts.healthy,
            WaitKind::Retry => timeouts.retry,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_kinds_name_is_the_one_the_checkpoint_stores() {
        for kind in WaitKind::ALL {
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::json!(kind.as_str())
            );
        }
    }

    #[test]
    fn step_kinds_are_stored_as_readable_tagged_json_and_read_back() {
        let kind = StepKind::Replace {
            instance: "i-1".to_string(),
        };
        let value = kind.to_value();
        assert_eq!(
            value,
            serde_json::json!({"type": "replace", "instance": "i-1"})
        );
        assert_eq!(StepKind::from_value(&value), Ok(kind));
        assert_eq!(
            StepKind::SuspendProcesses.to_value(),
            serde_json::json!({"type": "suspend-processes"})
        );
        let unknown = StepKind::from_value(&serde_json::json!({"type": "reboot"})).unwrap_err();
        assert!(unknown.contains("reboot"), "{unknown}");
    }
}
