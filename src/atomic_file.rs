//! Replacing a file so that a crash at any instant leaves either the old
//! content or the new, never a mix: write a temporary file beside it, fsync
//! it, rename it over the original, fsync the folder. And updating one so
//! that two processes never lose each other's change (`Locked`).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A file held under an exclusive lock for a read-modify-replace cycle.
///
/// The lock is on the file's inode, and `replace` swaps the inode, so a
/// process that waited for the lock may hold the old one: `open` therefore
/// checks after locking that the path still names the locked inode, and
/// starts again if not. The lock is released when this is dropped.
pub(crate) struct Locked {
    file: File,
    path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("another process has held it for more than {} s; retry when it is done", .0.as_secs())]
    Busy(Duration),
}

impl Locked {
    /// Opens `path` and takes its exclusive lock, waiting at most `patience`.
    pub(crate) fn open(path: &Path, patience: Duration) -> Result<Locked, LockError> {
        let deadline = Instant::now() + patience;
        loop {
            let file = File::open(path)?;
            loop {
                match file.try_lock() {
                    Ok(()) => break,
                    Err(fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(fs::TryLockError::WouldBlock) => return Err(LockError::Busy(patience)),
                    Err(fs::TryLockError::Error(err)) => return Err(err.into()),
                }
            }
            if same_file(&file.metadata()?, &fs::metadata(path)?) {
                return Ok(Locked {
                    file,
                    path: path.to_path_buf(),
                });
            }
        }
    }

    pub(crate) fn read(&mut self) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Atomically replaces the file's content while still holding the lock.
    pub(crate) fn replace(&self, contents: &[u8], new_file_mode: u32) -> io::Result<()> {
        replace(&self.path, contents, new_file_mode)
    }
}

#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    true
}

/// Atomically replaces (or creates) `path` with `contents`. An existing
/// file's permissions are kept; a new file gets `new_file_mode` (Unix).
pub(crate) fn replace(path: &Path, contents: &[u8], new_file_mode: u32) -> io::Result<()> {
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let temp = folder.join(format!(
        ".{}.tmp-{}",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let result = write_then_rename(path, &temp, &folder, contents, new_file_mode);
    if result.is_err() {
        // The original is untouched; do not leave the half-written copy.
        let _ = fs::remove_file(&temp);
    }
    result
}

fn write_then_rename(
    path: &Path,
    temp: &Path,
    folder: &Path,
    contents: &[u8],
    new_file_mode: u32,
) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(new_file_mode);
    }
    #[cfg(not(unix))]
    let _ = new_file_mode;
    let mut file = options.open(temp)?;
    if let Ok(existing) = fs::metadata(path) {
        file.set_permissions(existing.permissions())?;
    }
    file.write_all(contents)?;
    file.sync_all()?;
    drop(file);
    fs::rename(temp, path)?;
    sync_folder(folder)
}

/// Makes the rename itself durable.
fn sync_folder(folder: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(folder)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = folder;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacing_a_file_keeps_its_permissions_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        fs::write(&path, b"old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        }
        replace(&path, b"new", 0o600).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o640);
        }
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_process_that_waited_for_the_lock_reads_the_replaced_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        fs::write(&path, b"first").unwrap();
        let holder = Locked::open(&path, Duration::from_secs(1)).unwrap();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut locked = Locked::open(&path, Duration::from_secs(10)).unwrap();
                String::from_utf8(locked.read().unwrap()).unwrap()
            })
        };
        // Give the waiter time to block on the old inode, so that replacing
        // swaps it under the waiter; had it not opened the file yet, it reads
        // the new content all the same, so the assertion holds either way.
        std::thread::sleep(Duration::from_millis(100));
        holder.replace(b"second", 0o600).unwrap();
        drop(holder);
        assert_eq!(waiter.join().unwrap(), "second");
    }

    #[test]
    fn a_lock_held_too_long_is_reported_as_busy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        fs::write(&path, b"x").unwrap();
        let _holder = Locked::open(&path, Duration::from_secs(1)).unwrap();
        let err = Locked::open(&path, Duration::from_millis(50))
            .err()
            .unwrap();
        assert!(matches!(err, LockError::Busy(_)), "{err}");
    }

    #[test]
    fn a_new_file_gets_the_requested_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.json");
        replace(&path, b"{}", 0o600).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        assert_eq!(fs::read(&path).unwrap(), b"{}");
    }

    #[test]
    fn replacing_into_a_missing_folder_fails_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let missing_folder = dir.path().join("no-such-folder").join("plan.json");
        assert!(replace(&missing_folder, b"new", 0o600).is_err());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
