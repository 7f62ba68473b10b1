//! Simulated time: integer milliseconds since the world started, so that
//! hours of simulated time add up exactly (no float drift), and the one
//! conversion to wall-clock (Unix) time the facades need for timestamps.

use serde::Serialize;
use std::fmt;

/// An instant of the simulated world: milliseconds since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub(crate) struct SimTime(pub(crate) u64);

impl SimTime {
    pub(crate) const ZERO: SimTime = SimTime(0);

    pub(crate) fn from_millis(ms: u64) -> SimTime {
        SimTime(ms)
    }

    #[cfg(test)]
    pub(crate) fn from_secs(s: u64) -> SimTime {
        SimTime(s * 1000)
    }

    pub(crate) fn as_millis(self) -> u64 {
        self.0
    }

    /// This instant plus `ms` milliseconds (saturating: a "never" delay of
    /// u64::MAX stays in the far future instead of wrapping).
    pub(crate) fn plus_ms(self, ms: u64) -> SimTime {
        SimTime(self.0.saturating_add(ms))
    }

    /// Milliseconds from `earlier` to `self` (0 if `earlier` is later).
    pub(crate) fn since(self, earlier: SimTime) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}s", self.0 / 1000, self.0 % 1000)
    }
}

/// Where simulated time sits on the wall clock: the Unix time (ms) of
/// `SimTime::ZERO`. Fixed by the scenario so that a seed reproduces every
/// timestamp the facades print, not only the order of events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Epoch {
    pub(crate) unix_ms: u64,
}

impl Epoch {
    pub(crate) fn unix_ms(self, t: SimTime) -> u64 {
        self.unix_ms + t.0
    }

    /// Unix nanoseconds, the unit of Mesos maintenance windows.
    pub(crate) fn unix_ns(self, t: SimTime) -> i128 {
        i128::from(self.unix_ms(t)) * 1_000_000
    }
}
