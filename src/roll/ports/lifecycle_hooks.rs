//! A group's lifecycle hooks as the roll sees them: which transition each
//! holds instances at (`Pending:Wait` on launch, `Terminating:Wait` on
//! termination), for how long without a heartbeat, and what AWS does when
//! that runs out; and what completing a lifecycle action found. Plain
//! domain types: the AWS adapter maps DescribeLifecycleHooks and
//! CompleteLifecycleAction onto them.

use std::fmt;
use std::time::Duration;

/// The transition a hook holds instances at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookTransition {
    /// `autoscaling:EC2_INSTANCE_LAUNCHING`: new instances wait in
    /// `Pending:Wait` before they go in service.
    Launching,
    /// `autoscaling:EC2_INSTANCE_TERMINATING`: terminated instances wait
    /// in `Terminating:Wait` before they are shut down.
    Terminating,
    /// A transition AWS adds later, kept verbatim.
    Other(String),
}

impl HookTransition {
    pub(crate) const LAUNCHING: &'static str = "autoscaling:EC2_INSTANCE_LAUNCHING";
    pub(crate) const TERMINATING: &'static str = "autoscaling:EC2_INSTANCE_TERMINATING";

    pub(crate) fn parse(text: &str) -> HookTransition {
        match text {
            Self::LAUNCHING => HookTransition::Launching,
            Self::TERMINATING => HookTransition::Terminating,
            other => HookTransition::Other(other.to_string()),
        }
    }
}

/// What ends a lifecycle action: `CONTINUE` or `ABANDON`. On a
/// termination both end in the instance terminated (ABANDON only skips
/// the group's other hooks); on a launch ABANDON terminates the instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LifecycleActionResult {
    Continue,
    Abandon,
}

impl LifecycleActionResult {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LifecycleActionResult::Continue => "CONTINUE",
            LifecycleActionResult::Abandon => "ABANDON",
        }
    }

    /// AWS's spelling; `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<LifecycleActionResult> {
        match text {
            "CONTINUE" => Some(LifecycleActionResult::Continue),
            "ABANDON" => Some(LifecycleActionResult::Abandon),
            _ => None,
        }
    }
}

impl fmt::Display for LifecycleActionResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One lifecycle hook of a group, as DescribeLifecycleHooks reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LifecycleHook {
    pub(crate) name: String,
    pub(crate) transition: HookTransition,
    /// How long an instance waits without a heartbeat before AWS applies
    /// `default_result` (AWS's default: one hour).
    pub(crate) heartbeat_timeout: Duration,
    /// What AWS does when the heartbeat timeout runs out (AWS's default:
    /// ABANDON).
    pub(crate) default_result: LifecycleActionResult,
}

impl LifecycleHook {
    /// AWS's `HeartbeatTimeout` when a hook is put without one.
    pub(crate) const DEFAULT_HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(3600);

    pub(crate) fn on_termination(&self) -> bool {
        self.transition == HookTransition::Terminating
    }

    pub(crate) fn on_launch(&self) -> bool {
        self.transition == HookTransition::Launching
    }
}

/// What a CompleteLifecycleAction found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LifecycleActionCompletion {
    /// The instance was waiting for the hook; it goes on now.
    Completed,
    /// No action of the hook waits for the instance (completed already,
    /// timed out, or never begun): nothing was done. A re-run after a
    /// crash lands here.
    NotWaiting,
}
