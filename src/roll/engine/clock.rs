//! The roll's clock: the one place `time_scale` is applied.
//!
//! Every duration the roll reasons about (timeouts, the poll interval, how
//! long a step took) is in the cluster's time. Against a real cluster that
//! is the wall clock (`time_scale` 1); against the simulator it runs
//! `time_scale` times faster. The clock follows `tokio::time`, so a test
//! on paused tokio time runs a whole roll, timeouts included, in no real
//! time, and the simulator in the same process (whose clock also follows
//! tokio's) sees the same time pass.
//!
//! Marathon's own clock (`MarathonClock`) is another matter: task start
//! times are Marathon's, and another host's clock (or a simulator that
//! started earlier) may run ahead of or behind this one.

use std::time::{Duration, SystemTime};

use crate::roll::ports::marathon::App;
use crate::roll::record::checkpoint::utc;

#[derive(Clone, Debug)]
pub(crate) struct RollClock {
    /// The wall clock when this process started the roll's clock.
    wall_start: SystemTime,
    tokio_start: tokio::time::Instant,
    time_scale: f64,
}

impl RollClock {
    pub(crate) fn new(time_scale: f64) -> RollClock {
        RollClock {
            wall_start: SystemTime::now(),
            tokio_start: tokio::time::Instant::now(),
            time_scale: if time_scale.is_finite() && time_scale > 0.0 {
                time_scale
            } else {
                1.0
            },
        }
    }

    /// Now, in cluster time: the wall clock at start plus the tokio time
    /// since, scaled.
    pub(crate) fn now(&self) -> SystemTime {
        self.wall_start + self.tokio_start.elapsed().mul_f64(self.time_scale)
    }

    /// Now in milliseconds since the Unix epoch (what the checkpoint
    /// records, so that another process can tell how long a wait has run).
    pub(crate) fn now_unix_ms(&self) -> u64 {
        unix_ms(self.now())
    }

    /// Now as RFC 3339 UTC, for messages.
    pub(crate) fn utc(&self) -> String {
        utc(self.now())
    }

    /// Cluster time since `unix_ms` (zero if that is in the future, as it
    /// may be after a resume against a simulator that ran ahead).
    pub(crate) fn since(&self, unix_ms: u64) -> Duration {
        Duration::from_millis(self.now_unix_ms().saturating_sub(unix_ms))
    }

    /// Cluster time since `began` (a tokio instant: how long a tick took).
    pub(crate) fn elapsed(&self, began: tokio::time::Instant) -> Duration {
        began.elapsed().mul_f64(self.time_scale)
    }

    /// Sleeps `cluster` time (`cluster / time_scale` of tokio time).
    pub(crate) async fn sleep(&self, cluster: Duration) {
        tokio::time::sleep(cluster.div_f64(self.time_scale)).await;
    }

    /// How long a window written from the wall clock's now must last to
    /// cover `cluster` time of a cluster whose clock may run `time_scale`
    /// times faster than the wall (a Mesos maintenance window: a simulator
    /// started at the wall clock and has run ahead of it since).
    pub(crate) fn window_span(&self, cluster: Duration) -> Duration {
        cluster.mul_f64(self.time_scale)
    }
}

/// Marathon's "now", as late as its own reports prove it to be: no clock
/// is shared with Marathon (it need not send a `Date` header), but every
/// time it reports (a task's start, a health check's last success or
/// failure, a task failure) happened before it answered. The largest lead
/// of such a time over this roll's clock at the look, kept across looks,
/// gives a lower bound of Marathon's clock that advances with the roll's.
/// A lower bound is the safe side: a task looks younger than it is, never
/// older, so a crash-looping task is never taken for a settled one.
#[derive(Clone, Debug, Default)]
pub(crate) struct MarathonClock {
    /// Marathon's clock minus the roll's, at least (milliseconds).
    lead_ms: Option<i128>,
}

impl MarathonClock {
    /// Takes every time Marathon reported in `apps`, read at `now` (the
    /// roll's clock).
    pub(crate) fn saw(&mut self, apps: &[App], now: SystemTime) {
        let times = apps.iter().flat_map(|app| {
            let failed = app.last_task_failure.as_ref().and_then(|f| f.at);
            let tasks = app.tasks.iter().flat_map(|task| {
                let checks = task
                    .health_results
                    .iter()
                    .flat_map(|r| [r.last_success, r.last_failure]);
                std::iter::once(task.started_at).chain(checks)
            });
            std::iter::once(failed).chain(tasks).flatten()
        });
        let now = millis(now);
        for at in times {
            let lead = millis(at) - now;
            if self.lead_ms.is_none_or(|known| lead > known) {
                self.lead_ms = Some(lead);
            }
        }
    }

    /// Marathon's clock when the roll's reads `now`, at the latest it can
    /// be; `now` itself before Marathon has reported any time.
    pub(crate) fn now(&self, now: SystemTime) -> SystemTime {
        match self.lead_ms {
            None => now,
            Some(lead) => {
                let at = millis(now) + lead;
                let at = u64::try_from(at.max(0)).unwrap_or(u64::MAX);
                SystemTime::UNIX_EPOCH + Duration::from_millis(at)
            }
        }
    }
}

fn millis(at: SystemTime) -> i128 {
    match at.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i128::try_from(after.as_millis()).unwrap_or(i128::MAX),
        Err(before) => -i128::try_from(before.duration().as_millis()).unwrap_or(i128::MAX),
    }
}

pub(crate) fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// How long to wait before the next tick, when ticks begin every `every`
/// and this one took `took` (both cluster time): the rest of the interval,
/// so that a roll looks every `every` however long its look takes (against
/// a simulator running 300 times faster than the wall, a tick of 13 ms is
/// 4 cluster seconds, most of a 5 s interval); but at least a tenth of it,
/// so that a tick longer than the interval is never followed by another
/// at once and Mesos and Marathon are never read back to back.
pub(crate) fn pause_after(every: Duration, took: Duration) -> Duration {
    every.saturating_sub(took).max(every / 10)
}

/// `1h 2m 3s` style, for messages.
pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m {s}s"),
        (h, m, _) => format!("{h}h {m}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_clock_runs_time_scale_times_faster_than_tokio_time() {
        let clock = RollClock::new(300.0);
        let start = clock.now_unix_ms();
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(clock.since(start), Duration::from_secs(600));
        let before = tokio::time::Instant::now();
        clock.sleep(Duration::from_secs(30)).await;
        assert_eq!(before.elapsed(), Duration::from_millis(100));
    }

    #[test]
    fn a_time_in_the_future_is_zero_time_ago_and_a_bad_scale_is_one() {
        let clock = RollClock::new(f64::NAN);
        assert_eq!(clock.since(u64::MAX), Duration::ZERO);
        assert_eq!(
            clock.window_span(Duration::from_secs(7)),
            Duration::from_secs(7)
        );
    }

    #[test]
    fn a_tick_waits_out_the_rest_of_its_interval_and_at_least_a_tenth_of_it() {
        let every = Duration::from_secs(5);
        assert_eq!(pause_after(every, Duration::ZERO), every);
        assert_eq!(
            pause_after(every, Duration::from_millis(3_900)),
            Duration::from_millis(1_100)
        );
        assert_eq!(
            pause_after(every, Duration::from_secs(5)),
            Duration::from_millis(500)
        );
        assert_eq!(
            pause_after(every, Duration::from_secs(60)),
            Duration::from_millis(500)
        );
        assert_eq!(pause_after(Duration::ZERO, every), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn a_ticks_length_is_cluster_time() {
        let clock = RollClock::new(300.0);
        let began = tokio::time::Instant::now();
        tokio::time::advance(Duration::from_millis(13)).await;
        assert_eq!(clock.elapsed(began), Duration::from_millis(3_900));
    }

    #[test]
    fn human_durations_read_naturally() {
        assert_eq!(human(Duration::from_secs(5)), "5s");
        assert_eq!(human(Duration::from_secs(125)), "2m 5s");
        assert_eq!(human(Duration::from_secs(7_300)), "2h 1m");
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn started(secs: u64) -> App {
        App {
            tasks: vec![crate::roll::ports::marathon::Task {
                started_at: Some(at(secs)),
                ..Default::default()
            }],
            ..App::default()
        }
    }

    #[test]
    fn marathons_clock_is_as_late_as_its_reports_prove_and_advances_with_the_rolls() {
        let mut marathon = MarathonClock::default();
        // Nothing reported yet: the roll's own clock.
        assert_eq!(marathon.now(at(1_000)), at(1_000));
        // Marathon runs 300 s ahead (a simulator that started earlier): a
        // task it started at 1,290 proves it is at least that late.
        marathon.saw(&[started(1_200), started(1_290)], at(1_000));
        assert_eq!(marathon.now(at(1_000)), at(1_290));
        assert_eq!(marathon.now(at(1_030)), at(1_320));
        // An older report changes nothing; a newer, tighter one raises it.
        marathon.saw(&[started(1_100)], at(1_030));
        assert_eq!(marathon.now(at(1_030)), at(1_320));
        marathon.saw(&[started(1_329)], at(1_030));
        assert_eq!(marathon.now(at(1_030)), at(1_329));
        // Behind this host's clock: never ahead of what was reported.
        let mut behind = MarathonClock::default();
        behind.saw(&[started(500)], at(1_000));
        assert_eq!(behind.now(at(1_010)), at(510));
    }
}
