//! The kinds the checkpoint stores: what each step of the plan does and
//! on which group (`GroupStep`: a `StepKind` and a `GroupIndex`, in the
//! plan document's step as `"kind": {"type": "replace", "instance":
//! "i-…", "group": 0}`), and what a step waits for (`WaitKind`, each with
//! its own timeout). The engine dispatches on the first and keeps
//! deadlines by the second; both are plain data.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::env::Timeouts;
use crate::plan::Plan;

/// A roll's plan: every step says what it does and on which group.
pub(crate) type RollPlan = Plan<GroupStep>;

/// Which of the roll's groups a step acts on: its place in the
/// checkpoint's `groups` (plan order). A checkpoint whose steps name a
/// group it does not hold is refused when read, so a step's group is
/// always there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct GroupIndex(pub(crate) usize);

/// A step of a roll's plan: what it does (`kind`) to which group
/// (`group`). Stored as the kind's JSON with the group beside its type,
/// `{"type": "drain-wave", "wave": 1, "group": 0}`, so the plan file and
/// the plan API keep the shape they had.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Value", into = "serde_json::Value")]
pub struct GroupStep {
    pub(crate) group: GroupIndex,
    pub(crate) kind: StepKind,
}

impl GroupStep {
    pub(crate) fn new(group: GroupIndex, kind: StepKind) -> GroupStep {
        GroupStep { group, kind }
    }
}

/// The key of the group beside a step kind's `type`.
const GROUP_KEY: &str = "group";

impl From<GroupStep> for serde_json::Value {
    fn from(step: GroupStep) -> serde_json::Value {
        let mut value = serde_json::to_value(&step.kind).unwrap_or(serde_json::Value::Null);
        if let Some(map) = value.as_object_mut() {
            map.insert(GROUP_KEY.to_string(), serde_json::json!(step.group.0));
        }
        value
    }
}

impl TryFrom<serde_json::Value> for GroupStep {
    type Error = String;

    fn try_from(mut value: serde_json::Value) -> Result<GroupStep, String> {
        let group = value
            .as_object_mut()
            .and_then(|map| map.remove(GROUP_KEY))
            .ok_or_else(|| {
                format!("a step kind needs its \"{GROUP_KEY}\" (the group's place in \"groups\")")
            })?;
        let group = group
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                format!(
                    "\"{GROUP_KEY}\" must be a group's place in \"groups\" (0, 1, …), not {group}"
                )
            })?;
        let kind = serde_json::from_value(value).map_err(|e| e.to_string())?;
        Ok(GroupStep {
            group: GroupIndex(group),
            kind,
        })
    }
}

/// What a step of the roll's plan does. Stored in the plan document
/// (`"kind": {"type": "replace", "instance": "i-…"}`), so the runner
/// dispatches on it and never on ids.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) enum StepKind {
    /// Tag the group with the run id.
    Lock,
    /// Suspend the scaling processes that could change capacity.
    SuspendProcesses,
    /// Raise MaxSize to N + K (`--raise-max`).
    RaiseMaxSize,
    /// Bring the instances held out of the roll into it: out of Standby
    /// (`standby = "terminate"` does it, `"wait"` waits for an operator),
    /// their scale-in protection lifted (`protected = "wait"`).
    HeldInstances,
    /// Replace the warm pool's instances launched from an outdated
    /// source, before the scale-up can draw on them.
    WarmPool,
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
    /// A capped surge's next batch (drain, `--max-surge`): once the batch
    /// before has terminated its old agents, launch this batch's new
    /// instances into the room they left, wait for them as agents, and
    /// open this batch's old agents to the drain.
    OpenBatch { batch: u32 },
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
    /// Rollback: the warm pool's instances launched from the rolled-onto
    /// source replaced, once the launch source is set back.
    RollbackWarmPool,
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
    /// A step of the prepare phase (the group claimed, its processes
    /// suspended, its MaxSize raised).
    pub(crate) fn is_prepare(&self) -> bool {
        matches!(
            self,
            StepKind::Lock
                | StepKind::SuspendProcesses
                | StepKind::RaiseMaxSize
                | StepKind::HeldInstances
        )
    }

    /// A step of the finish phase (the group left as the roll found it).
    pub(crate) fn is_finish(&self) -> bool {
        matches!(
            self,
            StepKind::ResumeProcesses
                | StepKind::RestoreMaxSize
                | StepKind::EndMaintenance
                | StepKind::ReportRebalance
                | StepKind::Unlock
        )
    }

    /// A step of the rollback phase.
    pub(crate) fn is_rollback(&self) -> bool {
        matches!(
            self,
            StepKind::RollbackWindows
                | StepKind::RollbackMoves
                | StepKind::RollbackTerminate
                | StepKind::RollbackLaunchSource
                | StepKind::RollbackWarmPool
        )
    }

    /// A step between prepare and finish: the group's agents being
    /// replaced (its scale-up, canaries, drain, terminations,
    /// replacements, rollback).
    pub(crate) fn is_middle(&self) -> bool {
        !self.is_prepare() && !self.is_finish()
    }
}

/// The kinds of wait, each with its own timeout (`[timeouts]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum WaitKind {
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
    /// An operator handing back instances held out of the roll (Standby,
    /// scale-in protection) under `standby`/`protected = "wait"`.
    Operator,
    /// Other frameworks' tasks on an emptied old agent, waited for
    /// before it is drained with DRAIN_AGENT (or the roll pauses).
    OtherTasks,
    /// A DC/OS SDK service's pod replaced off an old agent: the service
    /// healthy before, the pod running on a new agent after.
    PodReplace,
}

impl WaitKind {
    pub(crate) const ALL: [WaitKind; 8] = [
        WaitKind::Registered,
        WaitKind::TaskMoves,
        WaitKind::Deregistered,
        WaitKind::Healthy,
        WaitKind::Retry,
        WaitKind::Operator,
        WaitKind::OtherTasks,
        WaitKind::PodReplace,
    ];

    /// The name the checkpoint stores (and `/metrics` labels it with).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            WaitKind::Registered => "registered",
            WaitKind::TaskMoves => "task-moves",
            WaitKind::Deregistered => "deregistered",
            WaitKind::Healthy => "healthy",
            WaitKind::Retry => "retry",
            WaitKind::Operator => "operator",
            WaitKind::OtherTasks => "other-tasks",
            WaitKind::PodReplace => "pod-replace",
        }
    }

    pub(crate) fn timeout(self, timeouts: &Timeouts) -> Duration {
        match self {
            WaitKind::Registered => timeouts.scale_up,
            WaitKind::TaskMoves => timeouts.task_move,
            WaitKind::Deregistered => timeouts.deregister,
            WaitKind::Healthy => timeouts.healthy,
            WaitKind::Retry => timeouts.retry,
            WaitKind::Operator => timeouts.operator,
            WaitKind::OtherTasks => timeouts.other_tasks,
            WaitKind::PodReplace => timeouts.pod_replace,
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

    fn read(value: serde_json::Value) -> Result<GroupStep, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn step_kinds_are_stored_as_readable_tagged_json_with_their_group_and_read_back() {
        let step = GroupStep::new(
            GroupIndex(1),
            StepKind::Replace {
                instance: "i-1".to_string(),
            },
        );
        let value = serde_json::to_value(&step).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"type": "replace", "instance": "i-1", "group": 1})
        );
        assert_eq!(read(value), Ok(step));
        assert_eq!(
            serde_json::to_value(GroupStep::new(GroupIndex(0), StepKind::SuspendProcesses))
                .unwrap(),
            serde_json::json!({"type": "suspend-processes", "group": 0})
        );
        let unknown = read(serde_json::json!({"type": "reboot", "group": 0})).unwrap_err();
        assert!(unknown.contains("reboot"), "{unknown}");
        let groupless = read(serde_json::json!({"type": "lock"})).unwrap_err();
        assert!(groupless.contains("\"group\""), "{groupless}");
        let bad = read(serde_json::json!({"type": "lock", "group": "a"})).unwrap_err();
        assert!(bad.contains("\"a\""), "{bad}");
    }
}
