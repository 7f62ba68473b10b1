//! What the operator sees of a roll while it runs. The runner hands every
//! checkpoint it writes to an observer; the one built here turns the
//! difference into state changes (`changes`) and shows each one:
//!
//! - as a log line on stderr (`logging`: `tracing`, text or JSON, stamped
//!   with the cluster's time), which is all a cron job prints;
//! - as one JSON object a line on stdout with `--json` (the event stream);
//! - on a terminal, in a frame redrawn in place (`view`), whose ETA is
//!   what is left of the plan at the pace seen (`eta`).
//!
//! The plan engine and the roll know nothing of this: it only reads
//! checkpoints.

pub(crate) mod changes;
pub(crate) mod eta;
pub mod logging;
pub(crate) mod view;

#[cfg(test)]
mod tests;

use std::io::Write;
use std::sync::Arc;

use changes::{Change, Tracker};
use view::View;

use crate::roll::record::checkpoint::Checkpoint;

/// How a roll is shown.
#[derive(Default)]
pub(crate) struct Output {
    /// `--json`: the event stream on stdout.
    pub(crate) json: bool,
    /// The terminal view, when stderr is a terminal and it is wanted.
    pub(crate) view: Option<Arc<View>>,
}

/// What the runner calls with each checkpoint it writes.
pub(crate) type Observer<'a> = Box<dyn FnMut(&Checkpoint) + Send + 'a>;

/// The observer the runner calls after each checkpoint write.
pub(crate) fn observer<'a>(mut tracker: Tracker, output: &Output) -> Observer<'a> {
    let json = output.json;
    let view = output.view.clone();
    Box::new(move |checkpoint: &Checkpoint| {
        let changes = tracker.changes(checkpoint);
        for change in &changes {
            // On a terminal the frame shows the rest; warnings stay above it.
            if view.is_none() || change.is_warning() {
                logging::emit(change);
            }
        }
        if json {
            let mut stdout = std::io::stdout().lock();
            for change in &changes {
                let _ = writeln!(stdout, "{}", json_line(change));
            }
            let _ = stdout.flush();
        }
        if let Some(view) = &view {
            view.update(checkpoint, &changes, tracker.progress());
        }
    })
}

/// The observer of a roll in `env`, and its terminal view if `live`: the
/// roll's clock stamps the log from now on.
pub(crate) fn for_roll<'a>(
    env: &crate::roll::record::env::Environment,
    json: bool,
    live: bool,
) -> (Observer<'a>, Option<Arc<View>>) {
    let clock = crate::roll::engine::clock::RollClock::new(env.time_scale);
    logging::set_clock(clock.clone());
    let tracker_clock = clock.clone();
    let tracker = Tracker::new(env.timeouts.clone(), move || tracker_clock.now());
    let view = live.then(|| {
        let screen = Arc::new(view::Screen::stderr());
        let view = Arc::new(View::new(screen.clone(), move || clock.now()));
        logging::route_through(Some(screen));
        view.tick_every_second();
        view
    });
    let output = Output {
        json,
        view: view.clone(),
    };
    (observer(tracker, &output), view)
}

/// Stops the terminal view (its last frame stays) and sends log lines
/// straight to stderr again.
pub(crate) fn end_view(view: Option<Arc<View>>) {
    if let Some(view) = view {
        view.stop();
        logging::route_through(None);
    }
}

/// One change as the event stream's object.
pub(crate) fn json_line(change: &Change) -> String {
    serde_json::to_string(change).unwrap_or_default()
}
