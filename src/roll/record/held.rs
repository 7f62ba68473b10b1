//! What the roll does with the instances an operator holds out of the
//! ASG's hands on purpose: those in `Standby` (key `standby`, flag
//! `--standby`) and those protected from scale-in (key `protected`, flag
//! `--protected`), with the meanings Instance Refresh gives its
//! `StandbyInstances` and `ScaleInProtectedInstances` preferences.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Instances in `Standby` when the roll starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StandbyPolicy {
    /// Left out of the roll, still in Standby and on the old image when
    /// it ends; the roll reports them.
    Ignore,
    /// The roll waits (`timeouts.operator`, one hour as Instance Refresh
    /// does) for an operator to put them back in service, then replaces
    /// them as any old instance; past the deadline it pauses and pages.
    #[default]
    Wait,
    /// The roll takes them out of Standby itself (`ExitStandby`), then
    /// drains and replaces them as any old instance: their agents run all
    /// along, so their tasks are moved first.
    Terminate,
}

/// Instances protected from scale-in when the roll starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ProtectedPolicy {
    /// Drained and replaced as any old instance: protection guards
    /// against the group's own scale-in, which terminates without a
    /// drain, not against a drained replacement (Instance Refresh calls
    /// this `Refresh`).
    #[default]
    Replace,
    /// Left out of the roll, on the old image when it ends; the roll
    /// reports them.
    Ignore,
    /// The roll waits (`timeouts.operator`) for an operator to lift the
    /// protection, then replaces them; past the deadline it pauses and
    /// pages.
    Wait,
}

impl StandbyPolicy {
    pub(crate) const NAMES: [&'static str; 3] = ["ignore", "wait", "terminate"];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StandbyPolicy::Ignore => "ignore",
            StandbyPolicy::Wait => "wait",
            StandbyPolicy::Terminate => "terminate",
        }
    }
}

impl ProtectedPolicy {
    pub(crate) const NAMES: [&'static str; 3] = ["replace", "ignore", "wait"];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ProtectedPolicy::Replace => "replace",
            ProtectedPolicy::Ignore => "ignore",
            ProtectedPolicy::Wait => "wait",
        }
    }
}

impl FromStr for StandbyPolicy {
    type Err = ();

    fn from_str(text: &str) -> Result<StandbyPolicy, ()> {
        match text.trim() {
            "ignore" => Ok(StandbyPolicy::Ignore),
            "wait" => Ok(StandbyPolicy::Wait),
            "terminate" => Ok(StandbyPolicy::Terminate),
            _ => Err(()),
        }
    }
}

impl FromStr for ProtectedPolicy {
    type Err = ();

    fn from_str(text: &str) -> Result<ProtectedPolicy, ()> {
        match text.trim() {
            "replace" => Ok(ProtectedPolicy::Replace),
            "ignore" => Ok(ProtectedPolicy::Ignore),
            "wait" => Ok(ProtectedPolicy::Wait),
            _ => Err(()),
        }
    }
}

impl fmt::Display for StandbyPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ProtectedPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An instance the roll replaces only once it is in service and
/// unprotected as its policy wants (recorded at preflight, in the
/// group's checkpoint): the `held-instances` step brings it in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HeldInstance {
    pub(crate) id: String,
    /// In Standby when the roll started.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) standby: bool,
    /// Protected from scale-in when the roll started, under
    /// `protected = "wait"`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) protected: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_policy_reads_back_its_own_name_and_nothing_else() {
        for name in StandbyPolicy::NAMES {
            let policy: StandbyPolicy = name.parse().expect(name);
            assert_eq!(policy.to_string(), name);
        }
        for name in ProtectedPolicy::NAMES {
            let policy: ProtectedPolicy = name.parse().expect(name);
            assert_eq!(policy.to_string(), name);
        }
        assert!("refresh".parse::<ProtectedPolicy>().is_err());
        assert!("Terminate".parse::<StandbyPolicy>().is_err());
        assert_eq!(StandbyPolicy::default(), StandbyPolicy::Wait);
        assert_eq!(ProtectedPolicy::default(), ProtectedPolicy::Replace);
    }
}
