//! The one place where SDK errors are turned into the Auto Scaling port's
//! error (`AutoScalingError`, known here as `AwsError`), so that no SDK
//! type leaves the adapter.

use aws_sdk_autoscaling::config::http::HttpResponse;
use aws_sdk_autoscaling::error::{ProvideErrorMetadata, SdkError};

pub(crate) use crate::roll::ports::auto_scaling::AutoScalingError as AwsError;

impl AwsError {
    /// AWS answered that it did not act on the request: the only failures
    /// after which a non-idempotent call may be sent again.
    pub(crate) fn proves_not_acted_upon(&self) -> bool {
        matches!(self, AwsError::Throttled { .. })
    }

    pub(crate) fn bad_response(
        operation: &'static str,
        target: &str,
        message: impl Into<String>,
    ) -> AwsError {
        AwsError::BadResponse {
            operation,
            target: target.to_string(),
            message: message.into(),
        }
    }

    /// Maps an SDK error of `operation` on `target` (a group name or
    /// instance ids).
    pub(crate) fn from_sdk<E>(
        operation: &'static str,
        target: &str,
        err: SdkError<E, HttpResponse>,
    ) -> AwsError
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        let target_owned = target.to_string();
        let status = err.raw_response().map(|r| r.status().as_u16());
        match &err {
            SdkError::ServiceError(context) => {
                let e = context.err();
                let code = e.code().unwrap_or("").to_string();
                let message = e.message().unwrap_or("").to_string();
                from_code(operation, target, code, message, status)
            }
            SdkError::TimeoutError(_) => AwsError::Timeout {
                operation,
                target: target_owned,
            },
            SdkError::DispatchFailure(failure) => {
                let text = crate::sentence::sentence(&err);
                if failure.is_timeout() {
                    AwsError::Timeout {
                        operation,
                        target: target_owned,
                    }
                } else if failure.is_user() || text.to_ascii_lowercase().contains("credential") {
                    // Credentials are resolved just before sending, and
                    // their failure surfaces as a dispatch failure.
                    AwsError::Credentials {
                        operation,
                        message: text,
                    }
                } else {
                    AwsError::Unavailable {
                        operation,
                        target: target_owned,
                        message: text,
                    }
                }
            }
            SdkError::ResponseError(_) => {
                let message = crate::sentence::sentence(&err);
                match status {
                    Some(s) if s >= 500 => AwsError::Unavailable {
                        operation,
                        target: target_owned,
                        message: format!("HTTP {s}: {message}"),
                    },
                    _ => AwsError::BadResponse {
                        operation,
                        target: target_owned,
                        message,
                    },
                }
            }
            SdkError::ConstructionFailure(_) => AwsError::Config {
                message: format!("{operation}: {}", crate::sentence::sentence(&err)),
            },
            _ => AwsError::BadResponse {
                operation,
                target: target_owned,
                message: crate::sentence::sentence(&err),
            },
        }
    }
}

/// Service error codes of Auto Scaling and EC2 (Query protocol), by kind.
fn from_code(
    operation: &'static str,
    target: &str,
    code: String,
    message: String,
    status: Option<u16>,
) -> AwsError {
    let target = target.to_string();
    match code.as_str() {
        // AWS answers writes on an unknown group with a ValidationError
        // naming it; reads answer an empty list (handled by the caller).
        "ValidationError" if message.contains("AutoScalingGroup name not found") => {
            AwsError::GroupNotFound {
                operation,
                group: target,
            }
        }
        "ScalingActivityInProgress" | "ResourceInUse" => AwsError::InProgress {
            operation,
            target,
            code,
            message,
        },
        "Throttling" | "ThrottlingException" | "RequestLimitExceeded" | "ResourceContention" => {
            AwsError::Throttled {
                operation,
                target,
                code,
                message,
            }
        }
        "InvalidClientTokenId"
        | "SignatureDoesNotMatch"
        | "ExpiredToken"
        | "ExpiredTokenException"
        | "AuthFailure"
        | "UnrecognizedClientException"
        | "MissingAuthenticationToken"
        | "InvalidAccessKeyId" => AwsError::Credentials {
            operation,
            message: format!("{code}: {message}"),
        },
        "AccessDenied" | "AccessDeniedException" | "UnauthorizedOperation" => {
            AwsError::AccessDenied {
                operation,
                target,
                code,
                message,
            }
        }
        "ValidationError"
        | "InvalidParameterValue"
        | "InvalidParameterCombination"
        | "MissingParameter"
        | "LimitExceeded"
        | "AlreadyExists" => AwsError::Validation {
            operation,
            target,
            code,
            message,
        },
        "InternalFailure" | "InternalError" | "ServiceUnavailable" | "Unavailable" => {
            AwsError::Unavailable {
                operation,
                target,
                message: format!("{code}: {message}"),
            }
        }
        _ => match status {
            // Includes bodies that are not AWS errors at all (moto's HTML
            // 500 page): no code, a 5xx status.
            Some(s) if s >= 500 => AwsError::Unavailable {
                operation,
                target,
                message: format!("HTTP {s} {code}: {message}"),
            },
            _ => AwsError::Service {
                operation,
                target,
                code: if code.is_empty() {
                    format!("HTTP {}", status.unwrap_or(0))
                } else {
                    code
                },
                message,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(code: &str, message: &str, status: u16) -> AwsError {
        from_code(
            "Op",
            "grp",
            code.to_string(),
            message.to_string(),
            Some(status),
        )
    }

    #[test]
    fn service_error_codes_map_to_stable_labels() {
        let cases = [
            (
                "ValidationError",
                "AutoScalingGroup name not found - x",
                400,
                "group_not_found",
            ),
            (
                "ValidationError",
                "Desired capacity:9 must be between",
                400,
                "validation",
            ),
            ("ScalingActivityInProgress", "", 400, "in_progress"),
            ("ResourceContention", "pending update", 500, "throttled"),
            ("Throttling", "Rate exceeded", 400, "throttled"),
            ("RequestLimitExceeded", "", 503, "throttled"),
            ("InvalidClientTokenId", "", 403, "credentials"),
            ("AuthFailure", "", 401, "credentials"),
            ("UnauthorizedOperation", "", 403, "access_denied"),
            ("InternalFailure", "", 500, "unavailable"),
            ("", "<html>500</html>", 500, "unavailable"),
            ("SomethingElse", "", 400, "service"),
        ];
        for (c, m, s, label) in cases {
            assert_eq!(code(c, m, s).label(), label, "code {c:?} status {s}");
        }
    }

    #[test]
    fn only_throttling_proves_a_request_was_not_acted_upon() {
        assert!(code("Throttling", "", 400).proves_not_acted_upon());
        assert!(code("ResourceContention", "", 500).proves_not_acted_upon());
        assert!(!code("InternalFailure", "", 500).proves_not_acted_upon());
        assert!(!code("", "", 500).proves_not_acted_upon());
    }

    #[test]
    fn group_not_found_names_the_group() {
        let e = code(
            "ValidationError",
            "AutoScalingGroup name not found - nope",
            400,
        );
        assert_eq!(e.to_string(), "Op: Auto Scaling group 'grp' not found");
    }
}
