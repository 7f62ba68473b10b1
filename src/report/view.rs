//! The live view on a terminal: a frame at the bottom of stderr, redrawn
//! in place at every change and once a second (elapsed times move): the
//! plan and its phases, the working steps with their message and how long
//! they have run, a progress line with an ETA, and the last few events.
//! Log lines (warnings) are printed above the frame, which is drawn again
//! under them. Plain escape codes, no terminal library: move up, clear.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::changes::{Change, Progress, clock_span};
use crate::plan::Status;
use crate::roll::engine::clock::human;
use crate::roll::record::checkpoint::Checkpoint;

/// Working steps listed at most; the rest are counted.
const MAX_WORKING: usize = 8;
/// Events kept for the frame.
const RECENT: usize = 5;

/// The bottom of a terminal, owned by a frame.
pub(crate) struct Screen {
    inner: Mutex<ScreenInner>,
}

struct ScreenInner {
    out: Box<dyn Write + Send>,
    frame: Vec<String>,
    /// Lines of the frame now on the terminal.
    drawn: usize,
    width: usize,
}

impl Screen {
    pub(crate) fn new(out: Box<dyn Write + Send>, width: usize) -> Screen {
        Screen {
            inner: Mutex::new(ScreenInner {
                out,
                frame: Vec::new(),
                drawn: 0,
                width: width.max(20),
            }),
        }
    }

    /// stderr, as wide as the terminal says.
    pub(crate) fn stderr() -> Screen {
        Screen::new(Box::new(std::io::stderr()), terminal_width().unwrap_or(100))
    }

    /// Replaces the frame.
    pub(crate) fn draw(&self, frame: Vec<String>) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.frame = frame;
            inner.erase();
            inner.paint();
        }
    }

    /// Writes `bytes` (whole lines) above the frame.
    pub(crate) fn print_above(&self, bytes: &[u8]) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.erase();
            let _ = inner.out.write_all(bytes);
            inner.paint();
        }
    }
}

impl ScreenInner {
    fn erase(&mut self) {
        if self.drawn > 0 {
            // To the start of the frame's first line, then clear below.
            let _ = write!(self.out, "\x1b[{}F\x1b[J", self.drawn);
            self.drawn = 0;
        }
    }

    fn paint(&mut self) {
        let width = self.width - 1;
        for line in &self.frame {
            // A wrapped line would throw the count of lines to erase off.
            let shown: String = line.chars().take(width).collect();
            let _ = writeln!(self.out, "{shown}");
        }
        self.drawn = self.frame.len();
        let _ = self.out.flush();
    }
}

/// The terminal's width in columns, from stderr.
pub(crate) fn terminal_width() -> Option<usize> {
    // SAFETY: TIOCGWINSZ fills the winsize it is given, nothing else.
    unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        if libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) == 0 && size.ws_col > 0 {
            Some(usize::from(size.ws_col))
        } else {
            None
        }
    }
}

/// A working step as the frame shows it.
#[derive(Clone, Debug)]
struct Working {
    name: String,
    status: Status,
    message: String,
    started_unix_ms: Option<u64>,
}

#[derive(Clone, Debug, Default)]
struct State {
    plan: String,
    phases: Vec<(String, Status)>,
    working: Vec<Working>,
    progress: Progress,
    recent: VecDeque<String>,
    /// When `progress` was taken, to move its clocks on between changes.
    progress_at: Option<SystemTime>,
}

/// The live view: its state, and a thread that redraws it every second.
pub(crate) struct View {
    screen: Arc<Screen>,
    state: Mutex<State>,
    now: Box<dyn Fn() -> SystemTime + Send + Sync>,
    stopped: AtomicBool,
}

impl View {
    pub(crate) fn new(
        screen: Arc<Screen>,
        now: impl Fn() -> SystemTime + Send + Sync + 'static,
    ) -> View {
        View {
            screen,
            state: Mutex::new(State::default()),
            now: Box::new(now),
            stopped: AtomicBool::new(false),
        }
    }

    /// Starts the once-a-second redraw; it ends at `stop`.
    pub(crate) fn tick_every_second(self: &Arc<Self>) {
        let view = Arc::downgrade(self);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                let Some(view) = view.upgrade() else { return };
                if view.stopped.load(Ordering::Relaxed) {
                    return;
                }
                view.redraw();
            }
        });
    }

    /// Draws the last frame once more and stops redrawing (it stays on
    /// the terminal).
    pub(crate) fn stop(&self) {
        self.redraw();
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Takes in a checkpoint and the changes it brought.
    pub(crate) fn update(&self, checkpoint: &Checkpoint, changes: &[Change], progress: &Progress) {
        let now = (self.now)();
        if let Ok(mut state) = self.state.lock() {
            let plan = &checkpoint.plan;
            state.plan = format!(
                "{} ({} strategy) ({})",
                plan.name,
                plan.strategy,
                plan.status()
            );
            state.phases = plan
                .phases
                .iter()
                .map(|p| (p.id.clone(), p.status()))
                .collect();
            state.working = plan
                .steps()
                .filter(|(_, s)| {
                    matches!(
                        s.status(),
                        Status::Starting | Status::Started | Status::Delayed | Status::Error
                    )
                })
                .map(|(at, s)| Working {
                    name: format!("{}/{}", plan.phases[at.phase].id, s.id),
                    status: s.status(),
                    message: s.message.clone(),
                    started_unix_ms: checkpoint.progress.get(&s.id).map(|p| p.started_unix_ms),
                })
                .collect();
            state.progress = progress.clone();
            state.progress_at = Some(now);
            for change in changes {
                if matches!(change, Change::Step { .. } | Change::Event { .. }) {
                    let at = match change {
                        Change::Step { at, .. } | Change::Event { at, .. } => time_of_day(at),
                        _ => String::new(),
                    };
                    state.recent.push_back(format!("{at} {}", change.line()));
                    while state.recent.len() > RECENT {
                        state.recent.pop_front();
                    }
                }
            }
        }
        self.redraw();
    }

    fn redraw(&self) {
        let now = (self.now)();
        let frame = match self.state.lock() {
            Ok(state) => frame(&state, now),
            Err(_) => return,
        };
        self.screen.draw(frame);
    }
}

/// `03:10:02` of an RFC 3339 time.
fn time_of_day(at: &str) -> String {
    at.split('T')
        .nth(1)
        .map(|t| t.trim_end_matches('Z').to_string())
        .unwrap_or_default()
}

fn frame(state: &State, now: SystemTime) -> Vec<String> {
    let mut lines = Vec::new();
    if state.plan.is_empty() {
        return vec!["roller: starting…".to_string()];
    }
    lines.push(state.plan.clone());
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    for (phase, status) in &state.phases {
        lines.push(format!("  {phase} ({status})"));
        let prefix = format!("{phase}/");
        let working: Vec<&Working> = state
            .working
            .iter()
            .filter(|w| w.name.starts_with(&prefix))
            .collect();
        for w in working.iter().take(MAX_WORKING) {
            let took = w
                .started_unix_ms
                .map(|s| human(Duration::from_millis(now_ms.saturating_sub(s))))
                .unwrap_or_default();
            lines.push(format!(
                "    {} ({}) {took}  {}",
                &w.name[prefix.len()..],
                w.status,
                w.message
            ));
        }
        if working.len() > MAX_WORKING {
            lines.push(format!(
                "    … and {} more working",
                working.len() - MAX_WORKING
            ));
        }
    }
    let mut p = state.progress.clone();
    // The clocks move on between changes.
    let since = state
        .progress_at
        .and_then(|at| now.duration_since(at).ok())
        .unwrap_or_default();
    p.elapsed += since;
    let eta = p.eta().map(|eta| eta.saturating_sub(since));
    let mut line = format!("agents replaced {}/{}", p.replaced, p.agents);
    if p.batches.1 > 0 {
        line.push_str(&format!(", batch {}/{}", p.batches.0, p.batches.1));
    }
    if p.waves > 0 {
        line.push_str(&format!(", wave {}", p.waves));
    }
    line.push_str(&format!(", elapsed {}", clock_span(p.elapsed)));
    match eta {
        Some(eta) => line.push_str(&format!(", ETA {}", clock_span(eta))),
        None => line.push_str(", ETA --:--:--"),
    }
    lines.push(line);
    if !state.recent.is_empty() {
        lines.push("recent:".to_string());
        lines.extend(state.recent.iter().map(|r| format!("  {r}")));
    }
    lines
}
