//! Operator operations queued for a live run (`record/operations.rs`: the
//! files `roller plan` drops beside the checkpoint), applied between
//! ticks in the order they were queued: each is logged with the
//! operator's name, the checkpoint saved, and only then the files
//! deleted; an id recorded in the checkpoint keeps
//! a crash between the save and the delete from applying one twice.
//! Operations handed in through the plan API (`live.rs`) are applied at
//! the same point, the same way, after the files.

use super::clock::RollClock;
use super::journal::Journal;
use crate::plan::{Operation, Outcome};
use crate::roll::record::checkpoint::{Checkpoint, CheckpointError, Event, EventKind};
use crate::roll::record::operations::{QueuedOperation, folder, pending};

/// Applies the operations queued since the last tick: the files of a
/// local checkpoint's queue, then `handed`, those handed in through the
/// plan API (`Live::take_operations`). Only a local checkpoint has a
/// file queue: `roller plan --file` refuses to operate on one in S3 (a live run there is stopped
/// with a signal, or operated through `--listen`). The checkpoint is
/// saved before the files are deleted.
pub(crate) async fn take_operations(
    journal: &mut Journal<'_>,
    handed: Vec<QueuedOperation>,
    clock: &RollClock,
) -> Result<(), CheckpointError> {
    let queued = match journal.store().file_path() {
        Some(file) => pending(file).map_err(|source| CheckpointError::Read {
            path: folder(file),
            source,
        })?,
        None => Vec::new(),
    };
    if queued.is_empty() && handed.is_empty() {
        return Ok(());
    }
    for op in queued.iter().map(|(_, op)| op).chain(&handed) {
        if !journal.checkpoint.operations_applied.contains(&op.id) {
            apply(&mut journal.checkpoint, op, clock.utc());
        }
    }
    journal.save().await?;
    for (path, _) in queued {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// One queued operation applied to the plan and logged at `now` with who
/// asked for it; its id is recorded so that it is never applied twice.
fn apply(checkpoint: &mut Checkpoint, op: &QueuedOperation, now: String) {
    let result = op
        .operation
        .parse::<Operation>()
        .map_err(|e| e.to_string())
        .and_then(|operation| {
            let plan = &mut checkpoint.plan;
            let target = plan
                .find(op.phase.as_deref(), op.step.as_deref())
                .map_err(|e| e.to_string())?;
            Ok(plan.apply(operation, target))
        });
    let on = match (&op.phase, &op.step) {
        (Some(phase), Some(step)) => format!("step '{step}' of phase '{phase}'"),
        (None, Some(step)) => format!("step '{step}'"),
        (Some(phase), None) => format!("phase '{phase}'"),
        (None, None) => "the plan".to_string(),
    };
    let message = match result {
        Ok(Outcome::Changed) => format!("{} {on} (queued at {})", op.operation, op.at),
        Ok(Outcome::AlreadyDone) => format!(
            "{} {on} (queued at {}): already done, nothing changed",
            op.operation, op.at
        ),
        Err(err) => format!("{} {on} (queued at {}) ignored: {err}", op.operation, op.at),
    };
    checkpoint.events.push(Event {
        at: now,
        kind: EventKind::Operator,
        message,
        user: Some(op.user.clone()),
        label: None,
    });
    checkpoint.operations_applied.push(op.id.clone());
}
