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
use crate::roll::record::checkpoint::{Checkpoint, CheckpointError, CheckpointStore, EventKind};

pub(crate) struct Journal<'o> {
    /// The record: read and changed by the engine, written by `save`.
    pub(crate) checkpoint: Checkpoint,
    store: CheckpointStore,
    /// The time events are stamped with: the roll's, as step messages
    /// and waits are told in.
    clock: RollClock,
    /// The checkpoint as last written.
    saved: Vec<u8>,
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
            checkpoint,
            store,
            clock,
            saved: Vec::new(),
            observer,
        }
    }

    /// Writes the checkpoint if it changed since the last write (intent
    /// before a side effect always changes it: it adds an event), without
    /// what no step reads again of the moves that are over.
    pub(crate) async fn save(&mut self) -> Result<(), CheckpointError> {
        self.checkpoint.forget_finished_moves();
        let bytes = self.checkpoint.to_json(self.store.location())?;
        if bytes != self.saved {
            self.store.write(&self.checkpoint, &bytes).await?;
            crate::metrics::checkpoint_written(bytes.len());
            self.saved = bytes;
            (self.observer)(&self.checkpoint);
        }
        Ok(())
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
