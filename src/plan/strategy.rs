//! Strategies: which children of a plan or phase may do work now.
//!
//! The selection rules follow the DC/OS SDK (`SerialStrategy`,
//! `ParallelStrategy`, `DependencyStrategy`); the canary gate wraps serial or
//! parallel and lives with the phase (`phase.rs`), because its state is a
//! property of the phase's steps, as in the SDK's `CanaryStrategy`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Strategy {
    Serial,
    Parallel,
    SerialCanary,
    ParallelCanary,
    /// Children run when every sibling named in their `depends_on` is COMPLETE.
    Dependency,
}

impl Strategy {
    pub(crate) const ALL: [Strategy; 5] = [
        Strategy::Serial,
        Strategy::Parallel,
        Strategy::SerialCanary,
        Strategy::ParallelCanary,
        Strategy::Dependency,
    ];

    /// The name the SDK renders, e.g. `serial-canary`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Strategy::Serial => "serial",
            Strategy::Parallel => "parallel",
            Strategy::SerialCanary => "serial-canary",
            Strategy::ParallelCanary => "parallel-canary",
            Strategy::Dependency => "dependency",
        }
    }

    pub(crate) fn is_canary(self) -> bool {
        matches!(self, Strategy::SerialCanary | Strategy::ParallelCanary)
    }

    /// The strategy a canary gate hands over to once the canary is done.
    pub(crate) fn post_canary(self) -> Strategy {
        match self {
            Strategy::SerialCanary => Strategy::Serial,
            Strategy::ParallelCanary => Strategy::Parallel,
            other => other,
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown strategy '{0}': expected serial, parallel, serial-canary (or canary), parallel-canary or dependency"
)]
pub(crate) struct UnknownStrategy(pub(crate) String);

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "canary" {
            return Ok(Strategy::SerialCanary);
        }
        Strategy::ALL
            .into_iter()
            .find(|strategy| strategy.as_str() == s)
            .ok_or_else(|| UnknownStrategy(s.to_string()))
    }
}

impl Serialize for Strategy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Strategy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// What a strategy needs to know about one child to pick candidates.
#[derive(Clone, Debug)]
pub(crate) struct ChildView {
    /// Not COMPLETE, not ERROR, not interrupted (the SDK's `isEligible`).
    pub(crate) eligible: bool,
    pub(crate) complete: bool,
    /// Indices of the siblings this child waits for (dependency strategy).
    pub(crate) depends_on: Vec<usize>,
}

/// Candidates among `children` for a non-canary strategy, in child order.
///
/// An interrupted parent has no candidates. Serial picks only the first
/// child that is not COMPLETE, and only when it is eligible, so an ERROR or
/// interrupted child blocks everything after it.
pub(crate) fn select(strategy: Strategy, interrupted: bool, children: &[ChildView]) -> Vec<usize> {
    if interrupted {
        return Vec::new();
    }
    match strategy.post_canary() {
        Strategy::Serial => children
            .iter()
            .position(|child| !child.complete)
            .filter(|&first| children[first].eligible)
            .into_iter()
            .collect(),
        Strategy::Dependency => (0..children.len())
            .filter(|&i| {
                children[i].eligible && children[i].depends_on.iter().all(|&d| children[d].complete)
            })
            .collect(),
        _ => (0..children.len())
            .filter(|&i| children[i].eligible)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(eligible: bool, complete: bool) -> ChildView {
        ChildView {
            eligible,
            complete,
            depends_on: Vec::new(),
        }
    }

    #[test]
    fn canary_is_an_alias_of_serial_canary() {
        assert_eq!("canary".parse(), Ok(Strategy::SerialCanary));
        assert_eq!(Strategy::SerialCanary.as_str(), "serial-canary");
    }

    #[test]
    fn an_unknown_strategy_is_refused_naming_the_valid_ones() {
        let err = "random".parse::<Strategy>().unwrap_err().to_string();
        assert!(
            err.contains("'random'") && err.contains("parallel-canary"),
            "{err}"
        );
    }

    #[test]
    fn serial_is_blocked_by_an_ineligible_first_incomplete_child() {
        let children = [child(false, true), child(false, false), child(true, false)];
        assert!(select(Strategy::Serial, false, &children).is_empty());
        assert_eq!(select(Strategy::Parallel, false, &children), vec![2]);
    }

    #[test]
    fn dependency_waits_for_every_named_sibling() {
        let mut children = vec![child(true, false), child(false, true), child(true, false)];
        children[2].depends_on = vec![0, 1];
        assert_eq!(select(Strategy::Dependency, false, &children), vec![0]);
        children[0] = child(false, true);
        assert_eq!(select(Strategy::Dependency, false, &children), vec![2]);
    }

    #[test]
    fn an_interrupted_parent_has_no_candidates() {
        let children = [child(true, false)];
        for strategy in Strategy::ALL {
            assert!(select(strategy, true, &children).is_empty(), "{strategy}");
        }
    }
}
