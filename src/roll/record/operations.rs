//! The operator's queue beside a checkpoint. While a run holds a
//! checkpoint, `roller plan interrupt|continue|…` does not write it (the
//! run owns it); it drops the operation, one file each, into
//! `<checkpoint>.operations/`, for the run to apply between ticks
//! (`engine/inbox.rs`). The folder goes when the checkpoint is archived.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One queued operation, as `roller plan` addressed it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueuedOperation {
    pub(crate) id: String,
    /// `interrupt`, `continue`, …
    pub(crate) operation: String,
    pub(crate) phase: Option<String>,
    pub(crate) step: Option<String>,
    pub(crate) user: String,
    /// UTC, RFC 3339.
    pub(crate) at: String,
}

/// `<checkpoint>.operations`
pub fn folder(checkpoint: &Path) -> PathBuf {
    let mut name = checkpoint.as_os_str().to_os_string();
    name.push(".operations");
    PathBuf::from(name)
}

/// Queues `operation` for the run that holds `checkpoint`; the file's name
/// sorts in queuing order.
pub(crate) fn queue(checkpoint: &Path, operation: &QueuedOperation) -> io::Result<PathBuf> {
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
pub(crate) fn pending(checkpoint: &Path) -> io::Result<Vec<(PathBuf, QueuedOperation)>> {
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
pub(crate) fn tidy(checkpoint: &Path) {
    let _ = std::fs::remove_dir(folder(checkpoint));
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
