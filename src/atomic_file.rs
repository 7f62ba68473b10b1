//! Replacing a file so that a crash at any instant leaves either the old
//! content or the new, never a mix: write a temporary file beside it, fsync
//! it, rename it over the original, fsync the folder.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Atomically replaces (or creates) `path` with `contents`. An existing
/// file's permissions are kept; a new file gets `new_file_mode` (Unix).
pub fn replace(path: &Path, contents: &[u8], new_file_mode: u32) -> io::Result<()> {
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
