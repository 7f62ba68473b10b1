//! The run lock: `<checkpoint>.lock`, held by a running roll for its
//! whole life (one run per checkpoint), and looked at, never created, by
//! whoever only wants to know (`roller status`).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The lock a running roll holds for its whole life: `<checkpoint>.lock`.
/// Plan operations on a checkpoint refuse to act while it is held.
pub(crate) struct RunLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum RunLockError {
    #[error(
        "another roller run holds '{}' (one run per checkpoint); wait for it, or check with `roller status`",
        path.display()
    )]
    Held { path: PathBuf },
    #[error("cannot open the lock file '{}': {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

impl RunLock {
    pub(crate) fn path_for(checkpoint: &Path) -> PathBuf {
        let mut name = checkpoint.as_os_str().to_os_string();
        name.push(".lock");
        PathBuf::from(name)
    }

    /// Takes the lock at once or says who holds it: a second run on the
    /// same checkpoint must not wait and then act on stale state.
    pub(crate) fn acquire(checkpoint: &Path) -> Result<RunLock, RunLockError> {
        let path = RunLock::path_for(checkpoint);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| RunLockError::Io {
                path: path.clone(),
                source,
            })?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).truncate(false).write(true);
        // Beside a 0600 checkpoint, its lock is 0600 too: who may see
        // that a roll runs is who may read its record.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(&path).map_err(|source| RunLockError::Io {
            path: path.clone(),
            source,
        })?;
        match file.try_lock() {
            Ok(()) => Ok(RunLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(RunLockError::Held { path }),
            Err(std::fs::TryLockError::Error(source)) => Err(RunLockError::Io { path, source }),
        }
    }

    /// Whether some process holds the lock now. Only looks: the lock file
    /// is never created (absent means no run holds it), so `roller status`
    /// leaves the folder as it found it.
    pub(crate) fn is_held(checkpoint: &Path) -> bool {
        match open_existing(&RunLock::path_for(checkpoint)) {
            // Taken and at once released when `probe` drops.
            Some(probe) => matches!(probe.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
            None => false,
        }
    }
}

/// The lock file, opened read-only without creating it; `None` when it is
/// absent or cannot be opened (counted as not held, as before).
fn open_existing(path: &Path) -> Option<File> {
    std::fs::OpenOptions::new().read(true).open(path).ok()
}
