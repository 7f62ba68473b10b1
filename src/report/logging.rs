//! The log: `tracing` events on stderr, one line each, stamped with the
//! cluster's time (RFC 3339 UTC; against the simulator it runs at the
//! time scale, so a log reads as the roll's own timeline).
//!
//! The level comes from `-q` / `-v` / `-vv`, unless `RUST_LOG` says
//! otherwise; `--log-format json` prints one JSON object a line (for
//! journald or a cloud log). While the terminal view is drawn, every line
//! goes through it, above the frame.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

use super::changes::Change;
use super::view::Screen;
use crate::roll::engine::clock::RollClock;
use crate::roll::record::checkpoint::utc;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum LogFormat {
    #[default]
    Text,
    Json,
}

impl LogFormat {
    pub(crate) fn parse(text: &str) -> Result<LogFormat, String> {
        match text {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!(
                "unknown log format '{other}': expected text or json"
            )),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct LogSettings {
    /// -1 quiet (warnings and errors), 0 information, 1 debug, 2 trace.
    pub(crate) verbosity: i8,
    pub(crate) format: LogFormat,
    /// `RUST_LOG`, which beats the verbosity when set.
    pub(crate) rust_log: Option<String>,
}

impl LogSettings {
    /// The filter: `RUST_LOG` when set (an unreadable one is named on
    /// stderr and the default used), else roller's own lines at the
    /// verbosity's level and other crates' warnings.
    pub(crate) fn filter(&self) -> EnvFilter {
        if let Some(directives) = self.rust_log.as_deref().filter(|s| !s.trim().is_empty()) {
            match EnvFilter::try_new(directives) {
                Ok(filter) => return filter,
                Err(err) => {
                    eprintln!(
                        "roller: warning: RUST_LOG={directives:?} is not understood ({err}); using the default level"
                    )
                }
            }
        }
        let directives = match self.verbosity {
            ..=-1 => "warn",
            0 => "warn,roller=info",
            1 => "warn,roller=debug",
            _ => "info,roller=trace",
        };
        EnvFilter::new(directives)
    }
}

/// The cluster's clock for timestamps: the roll's once it is set, the
/// wall clock before.
static CLOCK: Mutex<Option<RollClock>> = Mutex::new(None);

pub(crate) fn set_clock(clock: RollClock) {
    if let Ok(mut slot) = CLOCK.lock() {
        *slot = Some(clock);
    }
}

pub(crate) fn cluster_now() -> SystemTime {
    CLOCK
        .lock()
        .ok()
        .and_then(|slot| slot.as_ref().map(RollClock::now))
        .unwrap_or_else(SystemTime::now)
}

/// Timestamps in cluster time.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClusterTime;

impl FormatTime for ClusterTime {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        w.write_str(&utc(cluster_now()))
    }
}

/// The terminal view's screen while one is drawn: log lines go above it.
static SCREEN: Mutex<Option<Arc<Screen>>> = Mutex::new(None);

/// Log lines go above `screen`'s frame from now on (`None`: straight to
/// stderr again).
pub(crate) fn route_through(screen: Option<Arc<Screen>>) {
    if let Ok(mut slot) = SCREEN.lock() {
        *slot = screen;
    }
}

/// Where log lines go: stderr, or through the terminal view drawn there.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stderr;

/// One line, written whole when the logger drops it.
pub(crate) struct StderrLine {
    buffer: Vec<u8>,
}

impl Write for StderrLine {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for StderrLine {
    fn drop(&mut self) {
        let bytes = std::mem::take(&mut self.buffer);
        let screen = SCREEN.lock().ok().and_then(|s| s.clone());
        match screen {
            Some(screen) => screen.print_above(&bytes),
            None => {
                let mut stderr = io::stderr().lock();
                let _ = stderr.write_all(&bytes);
                let _ = stderr.flush();
            }
        }
    }
}

impl<'a> MakeWriter<'a> for Stderr {
    type Writer = StderrLine;
    fn make_writer(&'a self) -> StderrLine {
        StderrLine { buffer: Vec::new() }
    }
}

/// The subscriber for `settings`, its lines stamped by `timer` and
/// written to `writer`.
pub(crate) fn subscriber<T, W>(
    settings: &LogSettings,
    timer: T,
    writer: W,
    ansi: bool,
) -> Box<dyn tracing::Subscriber + Send + Sync>
where
    T: FormatTime + Send + Sync + 'static,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt()
        .with_env_filter(settings.filter())
        .with_timer(timer)
        .with_writer(writer)
        .with_target(false);
    match settings.format {
        LogFormat::Json => Box::new(
            builder
                .json()
                .flatten_event(false)
                .with_current_span(false)
                .finish(),
        ),
        // The line is the message: fields are for the JSON format.
        LogFormat::Text => Box::new(
            builder
                .with_ansi(ansi)
                .fmt_fields(tracing_subscriber::fmt::format::debug_fn(
                    |w, field, value| {
                        if field.name() == "message" {
                            write!(w, "{value:?}")
                        } else {
                            Ok(())
                        }
                    },
                ))
                .finish(),
        ),
    }
}

/// Installs the process's logger (once; later calls change nothing).
pub fn init(settings: &LogSettings) {
    use std::io::IsTerminal;
    let ansi = io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ =
        tracing::subscriber::set_global_default(subscriber(settings, ClusterTime, Stderr, ansi));
}

/// Logs one state change: a warning for pauses, failures and holds, else
/// information. The step (or phase, or plan) it is about is a field too,
/// for the JSON format's readers; an event about none has none.
pub(crate) fn emit(change: &Change) {
    let line = change.line();
    match (change.is_warning(), change.subject()) {
        (true, "") => tracing::warn!("{line}"),
        (true, step) => tracing::warn!(step, "{line}"),
        (false, "") => tracing::info!("{line}"),
        (false, step) => tracing::info!(step, "{line}"),
    }
}
