//! The status vocabulary of plan elements, as the DC/OS SDK spells it.
//!
//! Steps store one of the step statuses; phases and plans never store a
//! status: theirs is derived from their children (see `aggregate.rs`), which is
//! why `IN_PROGRESS` exists only as a derived value.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Status {
    Error,
    Waiting,
    Pending,
    Prepared,
    Starting,
    Started,
    Complete,
    Delayed,
    /// Only ever derived for phases and plans; a step never stores it.
    InProgress,
}

impl Status {
    /// Every status a step may store, in the SDK's order.
    pub(crate) const STEP_STATUSES: [Status; 8] = [
        Status::Error,
        Status::Waiting,
        Status::Pending,
        Status::Prepared,
        Status::Starting,
        Status::Started,
        Status::Complete,
        Status::Delayed,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Error => "ERROR",
            Status::Waiting => "WAITING",
            Status::Pending => "PENDING",
            Status::Prepared => "PREPARED",
            Status::Starting => "STARTING",
            Status::Started => "STARTED",
            Status::Complete => "COMPLETE",
            Status::Delayed => "DELAYED",
            Status::InProgress => "IN_PROGRESS",
        }
    }

    /// The SDK's `Status.isRunning()`, extended with `STARTED` (which the
    /// SDK added later without updating this list): an element that reads
    /// as running has work under way, so `continue` on it changes nothing.
    pub(crate) fn is_running(self) -> bool {
        matches!(
            self,
            Status::Pending
                | Status::Prepared
                | Status::Starting
                | Status::Started
                | Status::InProgress
        )
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a status name; it lists the valid names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown status '{0}': expected one of ERROR, WAITING, PENDING, PREPARED, STARTING, STARTED, COMPLETE, DELAYED"
)]
pub(crate) struct UnknownStatus(pub(crate) String);

impl FromStr for Status {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Status::STEP_STATUSES
            .into_iter()
            .chain([Status::InProgress])
            .find(|status| status.as_str() == s)
            .ok_or_else(|| UnknownStatus(s.to_string()))
    }
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_parses_back_from_its_name() {
        for status in Status::STEP_STATUSES
            .into_iter()
            .chain([Status::InProgress])
        {
            assert_eq!(status.as_str().parse::<Status>(), Ok(status));
        }
    }

    #[test]
    fn an_unknown_status_name_is_refused_with_the_valid_names() {
        let err = "DONE".parse::<Status>().unwrap_err();
        assert!(err.to_string().contains("'DONE'"));
        assert!(err.to_string().contains("COMPLETE"));
    }
}
