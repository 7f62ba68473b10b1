//! `AutoScalingError`: the Auto Scaling port's one error type.

/// What can go wrong reaching Auto Scaling and EC2, one variant a kind,
/// each naming the call and what it was about. The adapter maps the SDK's
/// errors into it; the roll reads only this.
#[derive(Debug, thiserror::Error)]
pub enum AutoScalingError {
    #[error("{operation}: Auto Scaling group '{group}' not found")]
    GroupNotFound {
        operation: &'static str,
        group: String,
    },
    /// Refused by the adapter before any write: AWS would refuse it too
    /// (or, for an empty process list, do far more than asked).
    #[error("{operation} on '{target}' refused: {reason}")]
    Refused {
        operation: &'static str,
        target: String,
        reason: String,
    },
    #[error("{operation} on '{target}' rejected by AWS ({code}): {message}")]
    Validation {
        operation: &'static str,
        target: String,
        code: String,
        message: String,
    },
    #[error("{operation} on '{target}': a scaling activity is in progress ({code}): {message}")]
    InProgress {
        operation: &'static str,
        target: String,
        code: String,
        message: String,
    },
    /// Throttling, or ResourceContention (another update to the group is
    /// pending): the request was rejected unprocessed, so retrying is safe.
    #[error("{operation} on '{target}' throttled ({code}): {message}")]
    Throttled {
        operation: &'static str,
        target: String,
        code: String,
        message: String,
    },
    #[error(
        "{operation} on '{target}' timed out (no answer within the configured timeouts; is the endpoint reachable?)"
    )]
    Timeout {
        operation: &'static str,
        target: String,
    },
    #[error("{operation} on '{target}': AWS unavailable: {message}")]
    Unavailable {
        operation: &'static str,
        target: String,
        message: String,
    },
    #[error("{operation}: AWS credentials: {message}")]
    Credentials {
        operation: &'static str,
        message: String,
    },
    #[error("{operation} on '{target}' denied ({code}): {message}")]
    AccessDenied {
        operation: &'static str,
        target: String,
        code: String,
        message: String,
    },
    #[error("{operation} on '{target}': unexpected response: {message}")]
    BadResponse {
        operation: &'static str,
        target: String,
        message: String,
    },
    #[error("{operation} on '{target}' failed ({code}): {message}")]
    Service {
        operation: &'static str,
        target: String,
        code: String,
        message: String,
    },
    #[error("AWS configuration: {message}")]
    Config { message: String },
}

impl AutoScalingError {
    /// A short name that never changes, for logs, checkpoints and tests.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            AutoScalingError::GroupNotFound { .. } => "group_not_found",
            AutoScalingError::Refused { .. } => "refused",
            AutoScalingError::Validation { .. } => "validation",
            AutoScalingError::InProgress { .. } => "in_progress",
            AutoScalingError::Throttled { .. } => "throttled",
            AutoScalingError::Timeout { .. } => "timeout",
            AutoScalingError::Unavailable { .. } => "unavailable",
            AutoScalingError::Credentials { .. } => "credentials",
            AutoScalingError::AccessDenied { .. } => "access_denied",
            AutoScalingError::BadResponse { .. } => "bad_response",
            AutoScalingError::Service { .. } => "service",
            AutoScalingError::Config { .. } => "config",
        }
    }

    /// Worth trying again later (the SDK has already retried within its
    /// bounded attempts); says nothing about whether a write happened.
    pub(crate) fn is_transient(&self) -> bool {
        matches!(
            self,
            AutoScalingError::Throttled { .. }
                | AutoScalingError::InProgress { .. }
                | AutoScalingError::Timeout { .. }
                | AutoScalingError::Unavailable { .. }
        )
    }
}
