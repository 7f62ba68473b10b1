//! `CheckpointError`: what can go wrong reading, writing or holding a
//! checkpoint, each naming the file and what to do, with a stable label.

use std::io;
use std::path::PathBuf;

use super::VERSION;

#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("cannot read checkpoint '{}': {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error(
        "checkpoint '{}' is not a roller checkpoint this build understands: {reason}; it is left untouched (move it away only after checking what it recorded)",
        path.display()
    )]
    Corrupt { path: PathBuf, reason: String },
    #[error(
        "checkpoint '{}' has schema version {found}, newer than this roller's {VERSION}: use a newer roller; the file is left untouched",
        path.display()
    )]
    Newer { path: PathBuf, found: u64 },
    #[error(
        "checkpoint '{}' belongs to ASG '{found}', not '{expected}': pass --checkpoint with the right file",
        path.display()
    )]
    OtherGroup {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("cannot write checkpoint '{}' (the previous content is intact): {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error(
        "checkpoint '{}' was written by someone else since this run last wrote it ({reason}): \
         another run holds it now, so this one stops before its next action. Check who runs the roll \
         (`roller status --checkpoint {}`) before running it again",
        path.display(),
        path.display()
    )]
    LeaseLost { path: PathBuf, reason: String },
}

impl CheckpointError {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            CheckpointError::Read { .. } => "checkpoint_unreadable",
            CheckpointError::Corrupt { .. } => "checkpoint_corrupt",
            CheckpointError::Newer { .. } => "checkpoint_newer",
            CheckpointError::OtherGroup { .. } => "checkpoint_other_group",
            CheckpointError::Write { .. } => "checkpoint_write",
            CheckpointError::LeaseLost { .. } => "checkpoint_lease_lost",
        }
    }
}
