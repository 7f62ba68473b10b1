//! A test hook for the crash harness (`scripts/crash`): makes `roller`
//! kill itself with SIGKILL at a chosen checkpoint write, so every point
//! where a crash can leave the record and the world out of step is
//! reachable on purpose, not by luck of timing.
//!
//! `ROLLER_CRASH_AT` names the point, counting this process's checkpoint
//! writes from 1:
//! - `after:K`: right after the K-th write is durable (an intent recorded,
//!   its side effect not yet sent);
//! - `before:K`: right before the K-th write (the side effects since the
//!   write before it sent, not yet recorded).
//!
//! Unset (as in production) it does nothing but one relaxed atomic
//! increment per write. A malformed value is said on stderr and ignored,
//! which the harness sees as a run that was not killed.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable naming the crash point.
pub const VAR: &str = "ROLLER_CRASH_AT";

/// Where, relative to the K-th checkpoint write, to die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CrashPoint {
    Before(u64),
    After(u64),
}

impl CrashPoint {
    /// `before:K` or `after:K`, K ≥ 1.
    pub(crate) fn parse(text: &str) -> Result<CrashPoint, String> {
        let bad = || format!("{VAR}={text}: expected before:K or after:K with K ≥ 1");
        let (when, k) = text.split_once(':').ok_or_else(bad)?;
        let k: u64 = k.parse().map_err(|_| bad())?;
        if k == 0 {
            return Err(bad());
        }
        match when {
            "before" => Ok(CrashPoint::Before(k)),
            "after" => Ok(CrashPoint::After(k)),
            _ => Err(bad()),
        }
    }
}

static POINT: OnceLock<Option<CrashPoint>> = OnceLock::new();
static WRITES: AtomicU64 = AtomicU64::new(0);

fn point() -> Option<CrashPoint> {
    *POINT.get_or_init(|| {
        let text = std::env::var(VAR).ok()?;
        CrashPoint::parse(&text)
            .map_err(|err| eprintln!("warning: {err}; no crash point set"))
            .ok()
    })
}

/// Called by the checkpoint right before it writes.
pub(crate) fn before_checkpoint_write() {
    let k = WRITES.fetch_add(1, Ordering::Relaxed) + 1;
    if point() == Some(CrashPoint::Before(k)) {
        die();
    }
}

/// Called by the checkpoint once a write is durable.
pub(crate) fn after_checkpoint_write() {
    if point() == Some(CrashPoint::After(WRITES.load(Ordering::Relaxed))) {
        die();
    }
}

fn die() -> ! {
    // SIGKILL, as `kill -9` from outside: no destructor, no flush, no
    // signal handler runs. abort() stays as a fallback should the kill
    // somehow return.
    #[cfg(unix)]
    // SAFETY: kill(2) on our own pid with a constant signal number has no
    // memory-safety preconditions.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort()
}

#[cfg(test)]
mod tests {
    use super::CrashPoint;

    #[test]
    fn crash_points_parse_and_bad_ones_are_refused_with_the_variable_named() {
        assert_eq!(CrashPoint::parse("after:3"), Ok(CrashPoint::After(3)));
        assert_eq!(CrashPoint::parse("before:12"), Ok(CrashPoint::Before(12)));
        for bad in ["", "after", "after:0", "after:-1", "during:3", "after:x"] {
            let err = CrashPoint::parse(bad).expect_err(bad);
            assert!(err.starts_with("ROLLER_CRASH_AT="), "{err}");
        }
    }
}
