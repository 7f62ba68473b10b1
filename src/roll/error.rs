//! The roll's one error type, and the shape every port's error shares.
//!
//! Each port owns one error enum (`AwsError`, `MesosError`,
//! `MarathonError`, `PagerError`); each says what call failed on what, has
//! a stable `label()` for logs and checkpoints, and says whether trying
//! again later may succeed (`is_transient()`). `RollError` wraps them, plus
//! the roll's own refusals, and maps itself to an exit code, so the CLI
//! delegates to it instead of guessing from messages.

use super::ports::auto_scaling::AutoScalingError;
use super::ports::marathon::MarathonError;
use super::ports::mesos::MesosError;
use super::record::checkpoint::CheckpointError;

/// What every port error can say about itself.
pub(crate) trait PortError: std::error::Error + Send + Sync + 'static {
    /// The call that failed (`SetDesiredCapacity`, `GET /v2/apps`,
    /// `/master/slaves`, `trigger`).
    #[cfg(test)]
    fn operation(&self) -> &str;
    /// What it was about (a group, an app, a master's URL, a sink), when
    /// the error knows.
    #[cfg(test)]
    fn target(&self) -> Option<&str>;
    /// A stable short name (logs, checkpoint events, `--json`).
    #[cfg(test)]
    fn label(&self) -> &'static str;
    /// Whether the same call may succeed later (an unreachable or
    /// leaderless server, a timeout, throttling): a wait retries it until
    /// its deadline instead of failing the roll.
    fn is_transient(&self) -> bool;
}

/// Exit codes the roll maps to (the CLI documents them in `--help`).
pub(crate) mod exit_code {
    pub(crate) const FAILED: u8 = 1;
    pub(crate) const REFUSED: u8 = 2;
}

#[derive(Debug, thiserror::Error)]
pub enum RollError {
    #[error("{0}")]
    Checkpoint(#[from] CheckpointError),
    #[error("AWS: {0}")]
    AutoScaling(#[from] AutoScalingError),
    #[error("Mesos: {0}")]
    Mesos(#[from] MesosError),
    #[error("Marathon: {0}")]
    Marathon(#[from] MarathonError),
    /// The roll will not start or go on, and changed nothing doing so.
    #[error("{0}")]
    Refused(#[from] Refusal),
    /// Another writer changed the group under the roll.
    #[error("{0}")]
    OtherWriter(String),
    /// Marathon refused a write the roll needs (a 4xx other than a
    /// deployment's lock): the sentence says which, why, what the roll
    /// undid, and what to do. The roll pauses.
    #[error("{0}")]
    WriteRefused(String),
    #[error("step {step} is in ERROR: {message}; fix the cause, then `roller plan restart` it")]
    StepInError { step: String, message: String },
}

/// Why the roll refuses: a sentence naming the thing and what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub(crate) String);

impl RollError {
    pub(crate) fn refused(message: impl Into<String>) -> RollError {
        RollError::Refused(Refusal(message.into()))
    }

    pub(crate) fn label(&self) -> &'static str {
        match self {
            RollError::Checkpoint(e) => e.label(),
            RollError::AutoScaling(e) => e.label(),
            RollError::Mesos(e) => e.label(),
            RollError::Marathon(e) => e.label(),
            RollError::Refused(_) => "refused",
            RollError::OtherWriter(_) => "other_writer",
            RollError::WriteRefused(_) => "write_refused",
            RollError::StepInError { .. } => "step_error",
        }
    }

    /// Whether a later look may succeed: waits retry these until their
    /// deadline; anything else fails the step.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            RollError::AutoScaling(e) => e.is_transient(),
            RollError::Mesos(e) => e.is_transient(),
            RollError::Marathon(e) => e.is_transient(),
            _ => false,
        }
    }

    /// 2 when the roll refused and changed nothing (bad checkpoint, failed
    /// preflight, another run's tag), 1 for a failure an operator must fix.
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            RollError::Refused(_) => exit_code::REFUSED,
            RollError::Checkpoint(
                CheckpointError::Write { .. } | CheckpointError::LeaseLost { .. },
            ) => exit_code::FAILED,
            RollError::Checkpoint(_) => exit_code::REFUSED,
            _ => exit_code::FAILED,
        }
    }
}

impl PortError for AutoScalingError {
    #[cfg(test)]
    fn operation(&self) -> &str {
        use AutoScalingError as E;
        match self {
            E::GroupNotFound { operation, .. }
            | E::Refused { operation, .. }
            | E::Validation { operation, .. }
            | E::InProgress { operation, .. }
            | E::Throttled { operation, .. }
            | E::Timeout { operation, .. }
            | E::Unavailable { operation, .. }
            | E::Credentials { operation, .. }
            | E::AccessDenied { operation, .. }
            | E::BadResponse { operation, .. }
            | E::Service { operation, .. } => operation,
            E::Config { .. } => "configuration",
        }
    }
    #[cfg(test)]
    fn target(&self) -> Option<&str> {
        use AutoScalingError as E;
        match self {
            E::GroupNotFound { group: target, .. }
            | E::Refused { target, .. }
            | E::Validation { target, .. }
            | E::InProgress { target, .. }
            | E::Throttled { target, .. }
            | E::Timeout { target, .. }
            | E::Unavailable { target, .. }
            | E::AccessDenied { target, .. }
            | E::BadResponse { target, .. }
            | E::Service { target, .. } => Some(target),
            E::Credentials { .. } | E::Config { .. } => None,
        }
    }
    #[cfg(test)]
    fn label(&self) -> &'static str {
        AutoScalingError::label(self)
    }
    fn is_transient(&self) -> bool {
        AutoScalingError::is_transient(self)
    }
}

impl PortError for MesosError {
    #[cfg(test)]
    fn operation(&self) -> &str {
        match self {
            MesosError::Unreachable { endpoint, .. }
            | MesosError::Timeout { endpoint, .. }
            | MesosError::Transport { endpoint, .. }
            | MesosError::RedirectLoop { endpoint, .. }
            | MesosError::Unauthorized { endpoint, .. }
            | MesosError::HttpStatus { endpoint, .. }
            | MesosError::BadResponse { endpoint, .. } => endpoint,
            MesosError::Unsupported { call, .. } => call,
            MesosError::NoLeader { .. } => "leader",
            MesosError::Config { .. } => "configuration",
        }
    }
    #[cfg(test)]
    fn target(&self) -> Option<&str> {
        match self {
            MesosError::Unreachable { url, .. }
            | MesosError::Timeout { url, .. }
            | MesosError::Transport { url, .. } => Some(url),
            MesosError::NoLeader { masters, .. } => Some(masters),
            _ => None,
        }
    }
    #[cfg(test)]
    fn label(&self) -> &'static str {
        MesosError::label(self)
    }
    fn is_transient(&self) -> bool {
        match self {
            MesosError::NoLeader { .. }
            | MesosError::Unreachable { .. }
            | MesosError::Timeout { .. }
            | MesosError::Transport { .. } => true,
            MesosError::HttpStatus { status, .. } => *status >= 500,
            _ => false,
        }
    }
}

impl PortError for MarathonError {
    #[cfg(test)]
    fn operation(&self) -> &str {
        match self {
            MarathonError::Unavailable { operation, .. }
            | MarathonError::OutcomeUnknown { operation, .. }
            | MarathonError::Conflict { operation, .. }
            | MarathonError::AppNotFound { operation, .. }
            | MarathonError::Unauthorized { operation, .. }
            | MarathonError::Rejected { operation, .. }
            | MarathonError::Unparsable { operation, .. } => operation,
            MarathonError::DeploymentTimeout { .. } => "follow deployment",
        }
    }
    #[cfg(test)]
    fn target(&self) -> Option<&str> {
        match self {
            MarathonError::Conflict { target, .. } => Some(target),
            MarathonError::AppNotFound { app, .. } => Some(app),
            MarathonError::DeploymentTimeout { id, .. } => Some(id),
            _ => None,
        }
    }
    #[cfg(test)]
    fn label(&self) -> &'static str {
        MarathonError::label(self)
    }
    fn is_transient(&self) -> bool {
        // An unknown outcome is transient for the roll: every write it makes
        // is absolute or checked against what it observes on the next tick.
        matches!(
            self,
            MarathonError::Unavailable { .. }
                | MarathonError::OutcomeUnknown { .. }
                | MarathonError::Conflict { .. }
                | MarathonError::DeploymentTimeout { .. }
        )
    }
}

impl PortError for super::ports::pager::PagerError {
    #[cfg(test)]
    fn operation(&self) -> &str {
        use super::ports::pager::PagerError as E;
        match self {
            E::Refused { action, .. } | E::Unreachable { action, .. } => action,
            E::Several(errors) => errors.first().map_or("page", |e| e.operation()),
        }
    }
    #[cfg(test)]
    fn target(&self) -> Option<&str> {
        use super::ports::pager::PagerError as E;
        match self {
            E::Refused { sink, .. } | E::Unreachable { sink, .. } => Some(sink),
            E::Several(_) => None,
        }
    }
    #[cfg(test)]
    fn label(&self) -> &'static str {
        super::ports::pager::PagerError::label(self)
    }
    fn is_transient(&self) -> bool {
        !matches!(self, super::ports::pager::PagerError::Refused { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_port_error_names_its_call_its_target_and_whether_to_try_again() {
        let aws = crate::aws::AwsError::Throttled {
            operation: "SetDesiredCapacity",
            target: "asg".to_string(),
            code: "Throttling".to_string(),
            message: "slow down".to_string(),
        };
        let mesos = MesosError::Timeout {
            endpoint: "/master/slaves".to_string(),
            url: "http://m1:5050".to_string(),
        };
        let marathon = MarathonError::AppNotFound {
            operation: "GET /v2/apps/{id}",
            app: "/web".to_string(),
        };
        let checks: [(&dyn PortError, &str, Option<&str>, bool); 3] = [
            (&aws, "SetDesiredCapacity", Some("asg"), true),
            (&mesos, "/master/slaves", Some("http://m1:5050"), true),
            (&marathon, "GET /v2/apps/{id}", Some("/web"), false),
        ];
        for (error, operation, target, transient) in checks {
            assert_eq!(error.operation(), operation, "{error}");
            assert_eq!(error.target(), target, "{error}");
            assert_eq!(error.is_transient(), transient, "{error}");
            assert!(!error.label().is_empty());
        }
        let wrapped = RollError::from(aws);
        assert_eq!(wrapped.label(), "throttled");
        assert!(wrapped.is_transient());
        assert_eq!(wrapped.exit_code(), exit_code::FAILED);
        assert_eq!(RollError::refused("no").exit_code(), exit_code::REFUSED);
    }
}
