//! `Journal`: the checkpoint as a run keeps it. The record itself, the
//! store it is written to, the bytes last written (a tick that changed
//! nothing writes nothing), the roll's clock its events are stamped by,
//! and whoever watches each write (the log, the live view, the plan API).
//!
//! Only the engine holds the journal: the runner changes the plan and
//! the roll-wide record; a step reaches it only through the narrow
//! operations of its `StepContext` (its group's record, an intent before
//! a side effect, a result after it, a step appended).
//!
//! Every side effect of the roll is preceded by `intend`: its intent is
//! in the checkpoint, on disk (or in S3), before the call is sent. That
//! is what makes every step safe to run again after a crash: a resumed run
//! finds the intent and asks the world whether the call landed.

use super::clock::RollClock;
use crate::roll::record::checkpoint::{
    Checkpoint, CheckpointError, CheckpointStore, EventKind, KEPT_EVENTS,
};

pub(crate) struct Journal<'o> {
    /// The record: read and changed by the engine, written by `save`.
    pub(crate) checkpoint: Checkpoint,
    store: CheckpointStore,
    /// The time events are stamped with: the roll's, as step messages
    /// and waits are told in.
    clock: RollClock,
    /// The checkpoint as last written.
    saved: Vec<u8>,
    /// The buffer the next save serializes into (the one before last's,
    /// kept so that a save does not grow a new one).
    spare: Vec<u8>,
    /// How many of `checkpoint.events` (all this run logged, after those
    /// it loaded) are in the event log beside the checkpoint: the file
    /// leaves their routine ones out (`Checkpoint::events_as_written`).
    events_cut: usize,
    /// Events the loaded checkpoint had left out already.
    events_dropped_before: u64,
    /// Called with the checkpoint after each write.
    observer: Box<dyn FnMut(&Checkpoint) + Send + 'o>,
}

impl<'o> Journal<'o> {
    pub(crate) fn new(
        checkpoint: Checkpoint,
        store: CheckpointStore,
        clock: RollClock,
        observer: Box<dyn FnMut(&Checkpoint) + Send + 'o>,
    ) -> Journal<'o> {
        Journal {
            events_cut: usize::try_from(checkpoint.events_in_log).unwrap_or(0),
            events_dropped_before: checkpoint.events_dropped,
            checkpoint,
            store,
            clock,
            saved: Vec::new(),
            spare: Vec::new(),
            observer,
        }
    }

    /// Writes the checkpoint if it changed since the last write (intent
    /// before a side effect always changes it: it adds an event), without
    /// what no step reads again of the moves that are over.
    pub(crate) async fn save(&mut self) -> Result<(), CheckpointError> {
        self.checkpoint.forget_finished_moves();
        let mut bytes = std::mem::take(&mut self.spare);
        self.as_written(&mut bytes)?;
        if bytes != self.saved {
            let written = self.store.write(&self.checkpoint, &bytes).await?;
            crate::metrics::checkpoint_written(written);
            std::mem::swap(&mut self.saved, &mut bytes);
            (self.observer)(&self.checkpoint);
        }
        self.spare = bytes;
        Ok(())
    }

    /// The checkpoint's JSON, its old routine events left out once twice
    /// `KEPT_EVENTS` are newer than the event log beside it (every event
    /// up to the last `KEPT_EVENTS` is appended to it first, so a crash
    /// between the two repeats some in the log rather than losing them).
    /// The run keeps every event in memory.
    fn as_written(&mut self, json: &mut Vec<u8>) -> Result<(), CheckpointError> {
        let events = &self.checkpoint.events;
        if events.len() >= self.events_cut + 2 * KEPT_EVENTS {
            let cut = events.len() - KEPT_EVENTS;
            self.store
                .append_events(&self.checkpoint, &events[self.events_cut..cut])?;
            self.events_cut = cut;
        }
        if self.events_cut == 0 {
            return self.checkpoint.to_json_into(self.store.location(), json);
        }
        let (view, in_log) = self.checkpoint.events_as_written(self.events_cut);
        let dropped = self.events_dropped_before + (self.events_cut - in_log) as u64;
        let checkpoint = &mut self.checkpoint;
        let all = std::mem::replace(&mut checkpoint.events, view);
        let loaded = (checkpoint.events_dropped, checkpoint.events_in_log);
        (checkpoint.events_dropped, checkpoint.events_in_log) = (dropped, in_log as u64);
        let written = checkpoint.to_json_into(self.store.location(), json);
        checkpoint.events = all;
        (checkpoint.events_dropped, checkpoint.events_in_log) = loaded;
        written
    }

    /// Records the intent of a side effect and writes it, before the
    /// effect is sent (an intent repeated tick after tick is recorded
    /// once: `Checkpoint::intend`).
    pub(crate) async fn intend(
        &mut self,
        message: impl Into<String>,
    ) -> Result<(), CheckpointError> {
        self.note_intent(message);
        self.save().await
    }

    /// Records the intent of a side effect, written with the next save
    /// (one of several sent under an intent already written).
    pub(crate) fn note_intent(&mut self, message: impl Into<String>) {
        self.checkpoint.intend(self.clock.now(), message);
    }

    /// Records an event, stamped now by the roll's clock; written with
    /// the next save.
    pub(crate) fn log(&mut self, kind: EventKind, message: impl Into<String>) {
        self.checkpoint.log(self.clock.now(), kind, message);
    }

    pub(crate) fn store(&self) -> &CheckpointStore {
        &self.store
    }

    /// The record and its store, once the run is over.
    pub(crate) fn into_parts(self) -> (Checkpoint, CheckpointStore) {
        (self.checkpoint, self.store)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::roll::record::checkpoint::Event;

    fn log_lines(path: &Path) -> Vec<Event> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// A save that changed nothing writes nothing, and each change is
    /// written once, what was written last being what the next save is
    /// compared with (the journal serializes into the buffer before).
    #[tokio::test]
    async fn a_save_writes_only_what_changed_since_the_last_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let text = include_str!("../../../fuzz/seeds/checkpoint/serial-1.json");
        let checkpoint = Checkpoint::parse(&path, text).unwrap();
        let writes = std::sync::atomic::AtomicUsize::new(0);
        let mut run = Journal::new(
            checkpoint,
            CheckpointStore::file(&path),
            RollClock::new(1.0),
            Box::new(|_: &Checkpoint| {
                writes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }),
        );
        let written = || writes.load(std::sync::atomic::Ordering::SeqCst);
        run.save().await.unwrap();
        run.save().await.unwrap();
        assert_eq!(written(), 1, "the second save changed nothing");
        for n in 0..3 {
            run.log(EventKind::Operator, format!("change {n}"));
            run.save().await.unwrap();
            run.save().await.unwrap();
            assert_eq!(written(), 2 + n, "each change once");
            let on_disk = Checkpoint::load(&path).unwrap().unwrap();
            let last = on_disk.events.last().unwrap();
            assert_eq!(last.message, format!("change {n}"));
        }
    }

    /// Issue 32: every intent, completion, termination and surge of a
    /// 2,000-agent roll was written on every write. The old routine ones
    /// go to the event log beside the checkpoint instead, each once, also
    /// across a resume; the run itself keeps them all.
    #[tokio::test]
    async fn old_routine_events_move_to_the_log_beside_and_a_resume_appends_only_what_came_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let text = include_str!("../../../fuzz/seeds/checkpoint/serial-1.json");
        let checkpoint = Checkpoint::parse(&path, text).unwrap();
        let logged_before = checkpoint.events.len();
        let log = dir.path().join(format!(
            "{}.{}.events.jsonl",
            checkpoint.name(),
            checkpoint.run_id
        ));
        let journal = |c: Checkpoint| {
            Journal::new(
                c,
                CheckpointStore::file(&path),
                RollClock::new(1.0),
                Box::new(|_: &Checkpoint| {}),
            )
        };

        let mut run = journal(checkpoint);
        run.log(EventKind::Failure, "a failure, kept");
        for n in 0..3 * KEPT_EVENTS {
            run.log(EventKind::Surge, format!("surge {n}"));
            run.save().await.unwrap();
        }
        assert_eq!(
            run.checkpoint.events.len(),
            logged_before + 1 + 3 * KEPT_EVENTS
        );
        let (written, _) = run.into_parts();
        let on_disk = Checkpoint::load(&path).unwrap().unwrap();
        assert!(
            on_disk.events.len() < 2 * KEPT_EVENTS + 2,
            "{}",
            on_disk.events.len()
        );
        assert!(
            on_disk
                .events
                .iter()
                .any(|e| e.message == "a failure, kept")
        );
        let in_log = log_lines(&log);
        let all = |c: &Checkpoint, in_log: &[Event]| -> Vec<String> {
            let kept_before = usize::try_from(c.events_in_log).unwrap();
            in_log
                .iter()
                .chain(&c.events[kept_before..])
                .map(|e| e.message.clone())
                .collect()
        };
        let expected: Vec<String> = written.events.iter().map(|e| e.message.clone()).collect();
        assert_eq!(all(&on_disk, &in_log), expected);
        assert_eq!(
            on_disk.events_dropped + on_disk.events.len() as u64,
            expected.len() as u64
        );

        // A resume: what it logs after the loaded events is appended, and
        // nothing of before is appended again.
        let mut resumed = journal(on_disk);
        for n in 0..2 * KEPT_EVENTS {
            resumed.log(EventKind::Step, format!("step {n}"));
            resumed.save().await.unwrap();
        }
        let (written, _) = resumed.into_parts();
        let on_disk = Checkpoint::load(&path).unwrap().unwrap();
        let mut expected = expected;
        let loaded = written.events.len() - 2 * KEPT_EVENTS;
        expected.extend(written.events[loaded..].iter().map(|e| e.message.clone()));
        assert_eq!(all(&on_disk, &log_lines(&log)), expected);
        assert_eq!(
            on_disk.events_dropped + on_disk.events.len() as u64,
            expected.len() as u64
        );
    }
}
