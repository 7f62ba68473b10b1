//! The process's own counts for `GET /metrics` and the line a run ends
//! with: requests sent to each outside system and those that failed
//! (`roller_api_calls_total`, `roller_api_errors_total`), and what the
//! roll loop itself cost (ticks, the CPU they took, checkpoint writes and
//! their bytes). A handful of global atomics: the adapters bump the calls
//! where they send (one place each), the runner its ticks, the journal its
//! writes, and nothing else needs to be threaded through the ports for it.
//!
//! A call is one request sent (each retry counts). An error is a request
//! that got no answer (connection refused, timeout, reset) or a 5xx: the
//! system is unwell. A 4xx is an answer, counted as a call only.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// An outside system roller talks to, as the `system` label names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum System {
    Aws,
    Mesos,
    Marathon,
    PagerDuty,
    Webhook,
}

impl System {
    pub(crate) const ALL: [System; 5] = [
        System::Aws,
        System::Mesos,
        System::Marathon,
        System::PagerDuty,
        System::Webhook,
    ];

    /// The `system` label.
    pub(crate) fn label(self) -> &'static str {
        match self {
            System::Aws => "aws",
            System::Mesos => "mesos",
            System::Marathon => "marathon",
            System::PagerDuty => "pagerduty",
            System::Webhook => "webhook",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

static CALLS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
static ERRORS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

/// One request is about to be sent to `system`.
pub(crate) fn call(system: System) {
    CALLS[system.index()].fetch_add(1, Ordering::Relaxed);
}

/// A request to `system` got no answer, or a 5xx.
pub(crate) fn error(system: System) {
    ERRORS[system.index()].fetch_add(1, Ordering::Relaxed);
}

/// Counts an answer (or its absence) by the rule above: `status` is the
/// HTTP status, `None` when no answer came.
pub(crate) fn answered(system: System, status: Option<u16>) {
    if status.is_none_or(|s| s >= 500) {
        error(system);
    }
}

/// Calls and errors so far, per system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) system: System,
    pub(crate) calls: u64,
    pub(crate) errors: u64,
}

/// Every system's counts, in `System::ALL` order.
pub(crate) fn counts() -> Vec<Counts> {
    System::ALL
        .into_iter()
        .map(|system| Counts {
            system,
            calls: CALLS[system.index()].load(Ordering::Relaxed),
            errors: ERRORS[system.index()].load(Ordering::Relaxed),
        })
        .collect()
}

static TICKS: AtomicU64 = AtomicU64::new(0);
static TICK_CPU_NS: AtomicU64 = AtomicU64::new(0);
static TICK_CPU_MAX_NS: AtomicU64 = AtomicU64::new(0);
static TICK_REAL_NS: AtomicU64 = AtomicU64::new(0);
static TICK_REAL_MAX_NS: AtomicU64 = AtomicU64::new(0);
static CHECKPOINT_WRITES: AtomicU64 = AtomicU64::new(0);
static CHECKPOINT_BYTES: AtomicU64 = AtomicU64::new(0);
static CHECKPOINT_WRITE_MAX: AtomicU64 = AtomicU64::new(0);

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// One tick of the roll loop took `cpu` of the process's CPU (every
/// thread's: the answers it parsed included) and `real` of wall time
/// (the calls' round trips included), its sleep left out.
pub(crate) fn tick(cpu: Duration, real: Duration) {
    TICKS.fetch_add(1, Ordering::Relaxed);
    TICK_CPU_NS.fetch_add(nanos(cpu), Ordering::Relaxed);
    TICK_CPU_MAX_NS.fetch_max(nanos(cpu), Ordering::Relaxed);
    TICK_REAL_NS.fetch_add(nanos(real), Ordering::Relaxed);
    TICK_REAL_MAX_NS.fetch_max(nanos(real), Ordering::Relaxed);
}

/// A checkpoint of `bytes` was written (to its file or its object).
pub(crate) fn checkpoint_written(bytes: usize) {
    let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
    CHECKPOINT_WRITES.fetch_add(1, Ordering::Relaxed);
    CHECKPOINT_BYTES.fetch_add(bytes, Ordering::Relaxed);
    CHECKPOINT_WRITE_MAX.fetch_max(bytes, Ordering::Relaxed);
}

/// The CPU time this process has used so far, every thread's (user and
/// system); zero where the clock cannot be read.
pub(crate) fn process_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec the call fills in; it reads no
    // other memory.
    let read = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if read != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

/// The most memory this process has held resident so far, in bytes
/// (zero where it cannot be read).
pub(crate) fn peak_rss() -> u64 {
    // SAFETY: an all-zero rusage is valid, and getrusage only fills it in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid rusage for the call to fill in.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0;
    }
    // Linux gives kilobytes.
    u64::try_from(usage.ru_maxrss)
        .unwrap_or(0)
        .saturating_mul(1024)
}

/// What the roll loop has cost this process so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LoopCost {
    pub(crate) ticks: u64,
    /// The CPU of every tick, added up, and the most one took.
    pub(crate) tick_cpu: Duration,
    pub(crate) tick_cpu_max: Duration,
    /// The wall time of every tick (its calls' round trips included,
    /// its sleep not), added up, and the most one took.
    pub(crate) tick_real: Duration,
    pub(crate) tick_real_max: Duration,
    pub(crate) checkpoint_writes: u64,
    pub(crate) checkpoint_bytes: u64,
    pub(crate) checkpoint_write_max: u64,
}

pub(crate) fn loop_cost() -> LoopCost {
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    LoopCost {
        ticks: load(&TICKS),
        tick_cpu: Duration::from_nanos(load(&TICK_CPU_NS)),
        tick_cpu_max: Duration::from_nanos(load(&TICK_CPU_MAX_NS)),
        tick_real: Duration::from_nanos(load(&TICK_REAL_NS)),
        tick_real_max: Duration::from_nanos(load(&TICK_REAL_MAX_NS)),
        checkpoint_writes: load(&CHECKPOINT_WRITES),
        checkpoint_bytes: load(&CHECKPOINT_BYTES),
        checkpoint_write_max: load(&CHECKPOINT_WRITE_MAX),
    }
}

impl LoopCost {
    /// The line a run ends with: what roller itself cost, for whoever
    /// sizes its host (and `scripts/bench-roll`, which reads it back).
    pub(crate) fn sentence(&self, process_cpu: Duration, peak_rss: u64) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1_000.0;
        let per = |total: f64, n: u64| if n == 0 { 0.0 } else { total / n as f64 };
        format!(
            "roller's own cost: {ticks} ticks, {tick_cpu:.1} ms of CPU a tick (at most {tick_cpu_max:.1} ms), \
             {tick_real:.1} ms of real time a tick (at most {tick_real_max:.1} ms), \
             {process_cpu:.2} s of CPU in all, peak memory {rss:.1} MB; \
             the checkpoint written {writes} times, {bytes} bytes in all, \
             {per_write:.0} bytes a write (at most {write_max})",
            ticks = self.ticks,
            tick_cpu = per(ms(self.tick_cpu), self.ticks),
            tick_cpu_max = ms(self.tick_cpu_max),
            tick_real = per(ms(self.tick_real), self.ticks),
            tick_real_max = ms(self.tick_real_max),
            process_cpu = process_cpu.as_secs_f64(),
            rss = peak_rss as f64 / (1024.0 * 1024.0),
            writes = self.checkpoint_writes,
            bytes = self.checkpoint_bytes,
            per_write = per(self.checkpoint_bytes as f64, self.checkpoint_writes),
            write_max = self.checkpoint_write_max,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(system: System) -> Counts {
        counts().into_iter().find(|c| c.system == system).unwrap()
    }

    // Other tests of this process send requests too: only growth is
    // checked, never an exact count.
    #[test]
    fn no_answer_and_a_5xx_count_as_errors_and_a_4xx_does_not() {
        let before = of(System::Webhook);
        call(System::Webhook);
        answered(System::Webhook, Some(404));
        let after_404 = of(System::Webhook);
        assert!(after_404.calls > before.calls);
        answered(System::Webhook, Some(503));
        answered(System::Webhook, None);
        let after = of(System::Webhook);
        assert!(after.errors >= after_404.errors + 2, "{before:?} {after:?}");
    }

    #[test]
    fn ticks_and_checkpoint_writes_add_up_and_keep_their_most() {
        let before = loop_cost();
        tick(Duration::from_millis(3), Duration::from_millis(10));
        checkpoint_written(1_000);
        checkpoint_written(5_000_000_000);
        let after = loop_cost();
        assert!(after.ticks > before.ticks);
        assert!(after.tick_cpu >= before.tick_cpu + Duration::from_millis(3));
        assert!(after.tick_real >= before.tick_real + Duration::from_millis(10));
        assert!(after.checkpoint_writes >= before.checkpoint_writes + 2);
        assert!(after.checkpoint_bytes >= before.checkpoint_bytes + 5_000_001_000);
        assert_eq!(after.checkpoint_write_max, 5_000_000_000);
    }

    #[test]
    fn the_process_has_used_cpu_and_memory() {
        let start = process_cpu();
        let mut n = 0u64;
        for i in 0..2_000_000u64 {
            n = std::hint::black_box(n.wrapping_mul(31).wrapping_add(i));
        }
        assert!(process_cpu() > start, "{n}");
        assert!(peak_rss() > 1024 * 1024);
    }

    #[test]
    fn the_run_cost_sentence_gives_means_per_tick_and_per_write() {
        let cost = LoopCost {
            ticks: 4,
            tick_cpu: Duration::from_millis(10),
            tick_cpu_max: Duration::from_millis(7),
            tick_real: Duration::from_millis(100),
            tick_real_max: Duration::from_millis(40),
            checkpoint_writes: 2,
            checkpoint_bytes: 3_000,
            checkpoint_write_max: 2_000,
        };
        assert_eq!(
            cost.sentence(Duration::from_millis(1_500), 30 * 1024 * 1024),
            "roller's own cost: 4 ticks, 2.5 ms of CPU a tick (at most 7.0 ms), \
             25.0 ms of real time a tick (at most 40.0 ms), 1.50 s of CPU in all, \
             peak memory 30.0 MB; the checkpoint written 2 times, 3000 bytes in all, \
             1500 bytes a write (at most 2000)"
        );
        assert!(
            LoopCost::default()
                .sentence(Duration::ZERO, 0)
                .contains("0.0 ms of CPU a tick")
        );
    }
}
