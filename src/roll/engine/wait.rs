//! Waiting, as the runner does it: what a step waits for and since when
//! (recorded in the checkpoint, so a resumed run knows how long it has
//! waited), whether its deadline has passed, and the sleep between ticks,
//! cut short by a stop signal.

use std::time::{Duration, UNIX_EPOCH};

use tokio::sync::watch;

use super::clock::{RollClock, human};
use crate::plan::{Status, StepIndex};
use crate::roll::record::checkpoint::{Checkpoint, StepProgress, WaitRecord, utc};
use crate::roll::record::env::Timeouts;
use crate::roll::record::kinds::WaitKind;

/// Records what the step at `at` (id `id`) waits for (`wait`: its kind,
/// what it waits for now, and how much later than the kind's timeout its
/// deadline is) (since when, if the wait is new) in its message and
/// progress; `Some(reason)` once its deadline has passed, the reason as
/// the pause and the page say it.
pub(crate) fn record_wait(
    checkpoint: &mut Checkpoint,
    at: StepIndex,
    id: &str,
    wait: (WaitKind, &str, Duration),
    clock: &RollClock,
    timeouts: &Timeouts,
) -> Option<String> {
    let (kind, message, extension) = wait;
    let now = clock.now_unix_ms();
    let progress = checkpoint
        .progress
        .entry(id.to_string())
        .or_insert(StepProgress {
            started_unix_ms: now,
            wait: None,
        });
    let extension_ms = u64::try_from(extension.as_millis()).unwrap_or(u64::MAX);
    let (since, extended_ms) = match &mut progress.wait {
        Some(record) if record.kind == kind => {
            // Once a hook's timeout has extended the wait, it stays
            // extended: the time the hook held it counts against it.
            record.extended_ms = record.extended_ms.max(extension_ms);
            (record.since_unix_ms, record.extended_ms)
        }
        _ => {
            progress.wait = Some(WaitRecord {
                kind,
                since_unix_ms: now,
                extended_ms: extension_ms,
            });
            (now, extension_ms)
        }
    };
    let since_utc = utc(UNIX_EPOCH + Duration::from_millis(since));
    let message = format!("{message} (since {since_utc})");
    let step = checkpoint.plan.step_mut(at);
    step.status = Status::Started;
    step.message = message.clone();
    let timeout = kind.timeout(timeouts) + Duration::from_millis(extended_ms);
    (clock.since(since) >= timeout)
        .then(|| format!("timed out after {}: {message}", human(timeout)))
}

/// Sleeps `poll` of cluster time, or less if a stop signal comes first.
pub(crate) async fn sleep_poll(
    clock: &RollClock,
    stop: &mut watch::Receiver<bool>,
    poll: Duration,
) {
    let sleep = clock.sleep(poll);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = &mut sleep => return,
            changed = stop.changed() => match changed {
                Ok(()) if *stop.borrow() => return,
                Ok(()) => {}
                // Nobody can signal any more: just wait out the poll.
                Err(_) => return (&mut sleep).await,
            },
        }
    }
}
