//! Retrying calls to outside systems: capped exponential backoff with full
//! jitter, a bounded number of attempts, and only for failures the caller
//! classifies as transient (throttling, 5xx, connection refused).
//!
//! Whether a call may be retried at all is the caller's decision: a
//! non-idempotent call (terminate an instance, kill tasks) is retried only
//! on failures that prove the request was not acted upon.

use std::future::Future;
use std::time::Duration;

/// How often and how patiently to retry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Backoff {
    /// The cap of the first delay; each further attempt doubles it.
    pub(crate) initial: Duration,
    /// No delay is longer than this.
    pub(crate) max: Duration,
    /// Attempts in all, the first included; at least 1.
    pub(crate) attempts: u32,
}

impl Backoff {
    /// Seconds, not minutes: 5 attempts, 0.2 s doubling to at most 2 s,
    /// so a dead endpoint is reported in under ~5 s.
    pub(crate) const DEFAULT: Backoff = Backoff {
        initial: Duration::from_millis(200),
        max: Duration::from_secs(2),
        attempts: 5,
    };

    /// The delay before attempt `retry + 1` (0-based retry count): a random
    /// point in [0, min(max, initial × 2^retry)], "full jitter", so that
    /// many clients failing at once do not retry in lockstep.
    pub(crate) fn delay(&self, retry: u32, unit_random: f64) -> Duration {
        let ceiling = self
            .initial
            .saturating_mul(1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX))
            .min(self.max);
        ceiling.mul_f64(unit_random.clamp(0.0, 1.0))
    }
}

/// Runs `call` until it succeeds, fails with an error `is_transient` does
/// not accept, or runs out of attempts; waits between attempts with
/// `tokio::time`, so tests with paused time run instantly.
pub(crate) async fn retry<T, E, F, Fut>(
    backoff: Backoff,
    is_transient: impl Fn(&E) -> bool,
    mut call: F,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: std::fmt::Display,
{
    let mut retry = 0;
    loop {
        match call().await {
            Ok(value) => return Ok(value),
            Err(err) if retry + 1 < backoff.attempts.max(1) && is_transient(&err) => {
                let delay = backoff.delay(retry, rand::random::<f64>());
                tracing::debug!(
                    "retrying in {} ms (attempt {} of {}): {err}",
                    delay.as_millis(),
                    retry + 2,
                    backoff.attempts
                );
                tokio::time::sleep(delay).await;
                retry += 1;
            }
            Err(err) => return Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[test]
    fn delays_double_up_to_the_cap_and_jitter_stays_below_the_ceiling() {
        let backoff = Backoff::DEFAULT;
        assert_eq!(backoff.delay(0, 1.0), Duration::from_millis(200));
        assert_eq!(backoff.delay(2, 1.0), Duration::from_millis(800));
        assert_eq!(backoff.delay(10, 1.0), Duration::from_secs(2));
        assert_eq!(backoff.delay(40, 1.0), Duration::from_secs(2));
        assert_eq!(backoff.delay(3, 0.5), Duration::from_millis(800));
        assert_eq!(backoff.delay(3, 0.0), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn a_transient_failure_is_retried_until_success() {
        let calls = Cell::new(0);
        let result: Result<u32, &str> = retry(
            Backoff::DEFAULT,
            |_| true,
            || {
                calls.set(calls.get() + 1);
                let n = calls.get();
                async move { if n < 3 { Err("busy") } else { Ok(n) } }
            },
        )
        .await;
        assert_eq!(result, Ok(3));
    }

    /// `-v` shows each retry: one debug line per attempt made again,
    /// with the attempt and the error.
    #[test]
    fn each_retry_is_a_debug_line_naming_the_attempt_and_the_error() {
        use std::sync::{Arc, Mutex};
        let lines = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .without_time()
            .with_ansi(false)
            .with_writer(move || SharedBuffer(sink.clone()))
            .finish();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        tracing::subscriber::with_default(subscriber, || {
            let calls = Cell::new(0);
            let result: Result<u32, &str> = runtime.block_on(retry(
                Backoff::DEFAULT,
                |_| true,
                || {
                    calls.set(calls.get() + 1);
                    let n = calls.get();
                    async move { if n < 3 { Err("busy") } else { Ok(n) } }
                },
            ));
            assert_eq!(result, Ok(3));
        });
        let text = String::from_utf8(lines.lock().unwrap().clone()).unwrap();
        let retries: Vec<&str> = text.lines().collect();
        assert_eq!(retries.len(), 2, "{text}");
        assert!(
            retries[0].contains("DEBUG") && retries[0].contains("(attempt 2 of 5): busy"),
            "{text}"
        );
        assert!(retries[1].contains("(attempt 3 of 5): busy"), "{text}");
    }

    struct SharedBuffer(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for SharedBuffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_permanent_failure_is_not_retried() {
        let calls = Cell::new(0);
        let result: Result<(), &str> = retry(
            Backoff::DEFAULT,
            |e| *e != "bad request",
            || {
                calls.set(calls.get() + 1);
                async { Err("bad request") }
            },
        )
        .await;
        assert_eq!(result, Err("bad request"));
        assert_eq!(calls.get(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn retries_stop_after_the_last_attempt_within_bounded_time() {
        let calls = Cell::new(0);
        let started = tokio::time::Instant::now();
        let result: Result<(), &str> = retry(
            Backoff::DEFAULT,
            |_| true,
            || {
                calls.set(calls.get() + 1);
                async { Err("unavailable") }
            },
        )
        .await;
        assert_eq!(result, Err("unavailable"));
        assert_eq!(calls.get(), Backoff::DEFAULT.attempts);
        // 0.2 + 0.4 + 0.8 + 1.6 s at the most.
        assert!(started.elapsed() <= Duration::from_millis(3000));
    }
}
