//! Operator operations queued for a live run. While a run holds a
//! checkpoint, `roller plan interrupt|continue|…` does not write it (the
//! run owns it); it drops the operation, one file each, into
//! `<checkpoint>.operations/`. The run applies them between ticks, in
//! the order they were queued, logs each with the operator's name, saves,
//! and only then deletes the files; an id recorded in the checkpoint keeps
//! a crash between the save and the delete from applying one twice.
//! Operations handed in through the plan API (`live.rs`) are applied at
//! the same point, the same way, after the files.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::clock::RollClock;
use super::journal::Journal;
use crate::plan::{Operation, Outcome};
use crate::roll::record::checkpoint::{Checkpoint, CheckpointError, Event, EventKind};

/// One queued operation, as `roller plan` addressed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueuedOperation {
    pub id: String,
    /// `interrupt`, `continue`, …
    pub operation: String,
    pub phase: Option<String>,
    pub step: Option<String>,
    pub user: String,
    /// UTC, RFC 3339.
    pub at: String,
}

/// `<checkpoint>.operations`
pub fn folder(checkpoint: &Path) -> PathBuf {
    let mut name = checkpoint.as_os_str().to_os_string();
    name.push(".operations");
    PathBuf::from(name)
}

/// Queues `operation` for the run that holds `checkpoint`; the file's name
/// sorts in queuing order.
pub fn queue(checkpoint: &Path, operation: &QueuedOperation) -> io::Result<PathBuf> {
    let dir = folder(checkpoint);
    std::fs::create_dir_all(&dir)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let path = dir.join(format!("{nanos:024}-{}.json", operation.id));
    let json = serde_json::to_vec_pretty(operation).map_err(io::Error::other)?;
    crate::atomic_file::replace(&path, &json, 0o600)?;
    Ok(path)
}

/// The queued operations, oldest first. A file that does not parse is an
/// error naming it (it is left in place for a human to read).
pub fn pending(checkpoint: &Path) -> io::Result<Vec<(PathBuf, QueuedOperation)>> {
    let dir = folder(checkpoint);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err),
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)?;
            let op = serde_json::from_str(&text).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("queued operation {} does not parse: {e}", path.display()),
                )
            })?;
            Ok((path, op))
        })
        .collect()
}

/// Removes the folder once it is empty (a completed roll leaves nothing).
pub fn tidy(checkpoint: &Path) {
    let _ = std::fs::remove_dir(folder(checkpoint));
}

/// Applies the operations queued since the last tick: the files of a
/// local checkpoint's queue, then `handed`, those handed in through the
/// plan API (`Live::take_operations`). Only a local checkpoint has a file queue: `roller plan
/// --file` refuses to operate on one in S3 (a live run there is stopped
/// with a signal, or operated through `--listen`). The checkpoint is
/// saved before the files are deleted.
pub async fn take_operations(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_operations_come_back_in_queuing_order_and_garbage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let checkpoint = dir.path().join("asg.json");
        assert!(pending(&checkpoint).unwrap().is_empty());
        for (id, operation) in [("a", "interrupt"), ("b", "continue")] {
            let op = QueuedOperation {
                id: id.to_string(),
                operation: operation.to_string(),
                phase: None,
                step: None,
                user: "ops".to_string(),
                at: "2026-11-23T00:00:00Z".to_string(),
            };
            queue(&checkpoint, &op).unwrap();
        }
        let ids: Vec<String> = pending(&checkpoint)
            .unwrap()
            .into_iter()
            .map(|(_, op)| op.id)
            .collect();
        assert_eq!(ids, ["a", "b"]);
        std::fs::write(folder(&checkpoint).join("zz.json"), "{").unwrap();
        let err = pending(&checkpoint).unwrap_err();
        assert!(err.to_string().contains("zz.json"), "{err}");
    }
}
