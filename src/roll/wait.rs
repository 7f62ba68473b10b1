//! Waiting, as the runner does it: what a step waits for and since when
//! (recorded in the checkpoint, so a resumed run knows how long it has
//! waited), whether its deadline has passed, and the sleep between ticks,
//! cut short by a stop signal.

use std::time::{Duration, UNIX_EPOCH};

use super::checkpoint::{StepProgress, WaitRecord, utc};
use super::clock::human;
use super::ports::auto_scaling::AutoScaling;
use super::ports::marathon::Marathon;
use super::ports::mesos::MesosMaster;
use super::ports::pager::Pager;
use super::runner::{Advanced, Runner};
use super::steps::Wait;
use crate::plan::{Status, StepIndex};

impl<A, M, K, P> Runner<'_, A, M, K, P>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
{
    /// Records what the step waits for (since when, if the wait is new)
    /// and whether its deadline has passed.
    pub(super) fn waiting(&mut self, at: StepIndex, id: &str, wait: Wait) -> Advanced {
        let now = self.clock.now_unix_ms();
        let progress = self
            .checkpoint
            .progress
            .entry(id.to_string())
            .or_insert(StepProgress {
                started_unix_ms: now,
                wait: None,
            });
        let since = match &progress.wait {
            Some(record) if record.kind == wait.kind => record.since_unix_ms,
            _ => {
                progress.wait = Some(WaitRecord {
                    kind: wait.kind,
                    since_unix_ms: now,
                });
                now
            }
        };
        let since_utc = utc(UNIX_EPOCH + Duration::from_millis(since));
        let message = format!("{} (since {since_utc})", wait.message);
        let step = self.checkpoint.plan.step_mut(at);
        step.status = Status::Started;
        step.message = message.clone();
        let timeout = wait.kind.timeout(&self.env.timeouts);
        if self.clock.since(since) >= timeout {
            Advanced::Pause(format!("timed out after {}: {message}", human(timeout)))
        } else {
            Advanced::Waiting
        }
    }

    /// Sleeps one poll interval, or less if a stop signal comes first.
    pub(super) async fn sleep_poll(&mut self) {
        let clock = self.clock.clone();
        let sleep = clock.sleep(self.env.poll_interval);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                _ = &mut sleep => return,
                changed = self.stop.changed() => match changed {
                    Ok(()) if *self.stop.borrow() => return,
                    Ok(()) => {}
                    // Nobody can signal any more: just wait out the poll.
                    Err(_) => return (&mut sleep).await,
                },
            }
        }
    }
}
