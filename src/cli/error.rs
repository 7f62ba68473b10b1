//! The command line's errors and the exit code each maps to.

use std::io;
use std::path::PathBuf;

use crate::atomic_file::LockError;
use crate::plan::{AddressError, DocumentError};

/// Stable exit codes, documented in `--help` and the README.
pub mod exit_code {
    pub const DONE: u8 = 0;
    pub const FAILED: u8 = 1;
    pub const REFUSED: u8 = 2;
    pub const PAUSED: u8 = 3;
    pub const INTERRUPTED: u8 = 130;
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("cannot read plan file '{}': {source}", path.display())]
    ReadPlan { path: PathBuf, source: io::Error },
    #[error("plan file '{}': {source}", path.display())]
    ParsePlan {
        path: PathBuf,
        source: DocumentError,
    },
    #[error("plan file '{}': {source}", path.display())]
    Address { path: PathBuf, source: AddressError },
    #[error("cannot write plan file '{}' (it is unchanged): {source}", path.display())]
    WritePlan { path: PathBuf, source: io::Error },
    #[error("plan file '{}' is busy: {source}", path.display())]
    Busy { path: PathBuf, source: LockError },
    #[error("cannot write output: {0}")]
    Output(#[from] io::Error),
    #[error("{unhealthy} of {total} Marathon apps unhealthy")]
    Unhealthy { unhealthy: usize, total: usize },
    #[error("no health verdict: {0}")]
    NoVerdict(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::ReadPlan { .. } | CliError::ParsePlan { .. } | CliError::Address { .. } => {
                exit_code::REFUSED
            }
            CliError::WritePlan { .. } | CliError::Busy { .. } | CliError::Output(_) => {
                exit_code::FAILED
            }
            // `roller health`: 1 unhealthy, 2 undecided.
            CliError::Unhealthy { .. } => exit_code::FAILED,
            CliError::NoVerdict(_) => exit_code::REFUSED,
        }
    }
}
