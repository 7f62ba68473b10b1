//! CloudWatch alarms as the roll sees them: an alarm's name, its state
//! (`OK`, `ALARM`, `INSUFFICIENT_DATA`), why, and since when. Plain domain
//! types: the AWS adapter maps DescribeAlarms (metric and composite alarms
//! alike) onto them, through the AWS port (`AutoScaling::describe_alarms`).

use std::fmt;
use std::time::SystemTime;

/// An alarm's state, as CloudWatch's `StateValue` says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AlarmStateValue {
    Ok,
    Alarm,
    InsufficientData,
    /// A state CloudWatch adds later, kept verbatim (never read as ALARM).
    Other(String),
}

impl AlarmStateValue {
    pub(crate) fn parse(text: &str) -> AlarmStateValue {
        match text {
            "OK" => AlarmStateValue::Ok,
            "ALARM" => AlarmStateValue::Alarm,
            "INSUFFICIENT_DATA" => AlarmStateValue::InsufficientData,
            other => AlarmStateValue::Other(other.to_string()),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            AlarmStateValue::Ok => "OK",
            AlarmStateValue::Alarm => "ALARM",
            AlarmStateValue::InsufficientData => "INSUFFICIENT_DATA",
            AlarmStateValue::Other(other) => other,
        }
    }
}

impl fmt::Display for AlarmStateValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One alarm, as DescribeAlarms reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlarmState {
    pub(crate) name: String,
    pub(crate) state: AlarmStateValue,
    /// CloudWatch's `StateReason`: a human's words for the state
    /// ("Threshold Crossed: 1 datapoint [612.0] was greater than …").
    pub(crate) reason: String,
    /// When the state last changed (`StateUpdatedTimestamp`).
    pub(crate) updated: Option<SystemTime>,
}

impl AlarmState {
    pub(crate) fn in_alarm(&self) -> bool {
        self.state == AlarmStateValue::Alarm
    }
}
