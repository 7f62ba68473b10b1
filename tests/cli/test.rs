//! The builder every test uses: files to create, arguments, and what the
//! run must produce (exit code, stdout, stderr, files left untouched).
//!
//! ```ignore
//! Test::new()
//!     .file("plan.json", PLAN)
//!     .args(["plan", "show", "--file", "plan.json"])
//!     .stdout_contains("(PENDING)")
//!     .run();
//! ```
//!
//! By default a run must exit 0 with an empty stderr and an empty stdout;
//! every expectation narrows or replaces one of those defaults.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tempfile::TempDir;

/// The modification time given to every file a test creates, far in the
/// past, so that a rewrite (which gets the current time) always shows.
const OLD_MTIME: Duration = Duration::from_secs(1_000_000_000);

enum Expect {
    Exactly(String),
    Containing(Vec<String>),
    Anything,
}

impl Expect {
    fn check(&self, stream: &str, actual: &str, context: &str) {
        match self {
            Expect::Exactly(expected) => assert_eq!(
                actual, expected,
                "{stream} differs from what was expected\n{context}"
            ),
            Expect::Containing(parts) => {
                for part in parts {
                    assert!(
                        actual.contains(part.as_str()),
                        "{stream} does not contain {part:?}\n{context}"
                    );
                }
            }
            Expect::Anything => {}
        }
    }

    fn add(&mut self, part: &str) {
        match self {
            Expect::Containing(parts) => parts.push(part.to_owned()),
            _ => *self = Expect::Containing(vec![part.to_owned()]),
        }
    }
}

/// A file's state before the run, to compare with after it.
struct Snapshot {
    path: PathBuf,
    bytes: Vec<u8>,
    modified: SystemTime,
    #[cfg(unix)]
    inode: u64,
}

impl Snapshot {
    fn take(path: PathBuf) -> Snapshot {
        let metadata = fs::metadata(&path)
            .unwrap_or_else(|err| panic!("cannot stat {}: {err}", path.display()));
        Snapshot {
            bytes: fs::read(&path).unwrap(),
            modified: metadata.modified().unwrap(),
            #[cfg(unix)]
            inode: std::os::unix::fs::MetadataExt::ino(&metadata),
            path,
        }
    }

    fn assert_untouched(&self, context: &str) {
        let after = Snapshot::take(self.path.clone());
        assert!(
            after.bytes == self.bytes,
            "{} was modified:\n--- before\n{}\n--- after\n{}\n{context}",
            self.path.display(),
            String::from_utf8_lossy(&self.bytes),
            String::from_utf8_lossy(&after.bytes),
        );
        assert_eq!(
            after.modified,
            self.modified,
            "{} was rewritten (its mtime changed)\n{context}",
            self.path.display()
        );
        #[cfg(unix)]
        assert_eq!(
            after.inode,
            self.inode,
            "{} was replaced (its inode changed)\n{context}",
            self.path.display()
        );
    }
}

#[must_use]
pub struct Test {
    tempdir: TempDir,
    current_dir: Option<PathBuf>,
    args: Vec<OsString>,
    status: i32,
    stdout: Expect,
    stderr: Expect,
    stdout_absent: Vec<String>,
    untouched: Vec<PathBuf>,
}

impl Test {
    pub fn new() -> Test {
        Test::with_tempdir(tempfile::tempdir().expect("cannot create a temporary folder"))
    }

    /// A test in the folder of an earlier run, to chain operations.
    pub fn with_tempdir(tempdir: TempDir) -> Test {
        Test {
            tempdir,
            current_dir: None,
            args: Vec::new(),
            status: 0,
            stdout: Expect::Exactly(String::new()),
            stderr: Expect::Exactly(String::new()),
            stdout_absent: Vec::new(),
            untouched: Vec::new(),
        }
    }

    /// Writes `contents` to `name` (relative to the temporary folder),
    /// with an old modification time.
    pub fn file(self, name: &str, contents: &str) -> Test {
        let path = self.tempdir.path().join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&path, contents).unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(SystemTime::UNIX_EPOCH + OLD_MTIME)
            .unwrap();
        self
    }

    /// Where `name` is in the temporary folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.tempdir.path().join(name)
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Test {
        self.args.push(arg.into());
        self
    }

    pub fn args<I>(mut self, args: I) -> Test
    where
        I: IntoIterator,
        I::Item: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Runs from `dir` instead of the temporary folder.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Test {
        self.current_dir = Some(dir.into());
        self
    }

    pub fn status(mut self, status: i32) -> Test {
        self.status = status;
        self
    }

    pub fn stdout(mut self, stdout: &str) -> Test {
        self.stdout = Expect::Exactly(stdout.to_owned());
        self
    }

    pub fn stdout_contains(mut self, part: &str) -> Test {
        self.stdout.add(part);
        self
    }

    pub fn stdout_lacks(mut self, part: &str) -> Test {
        self.stdout_absent.push(part.to_owned());
        self
    }

    /// Checks nothing about stdout (the test inspects it itself).
    pub fn any_stdout(mut self) -> Test {
        self.stdout = Expect::Anything;
        self
    }

    pub fn stderr(mut self, stderr: &str) -> Test {
        self.stderr = Expect::Exactly(stderr.to_owned());
        self
    }

    pub fn stderr_contains(mut self, part: &str) -> Test {
        self.stderr.add(part);
        self
    }

    /// `name` (relative to the temporary folder, or absolute) must keep its
    /// bytes, its modification time and its inode.
    pub fn untouched(mut self, name: impl AsRef<Path>) -> Test {
        self.untouched.push(self.tempdir.path().join(name));
        self
    }

    pub fn run(self) -> Output {
        let snapshots: Vec<Snapshot> = self.untouched.into_iter().map(Snapshot::take).collect();
        let dir = self
            .current_dir
            .unwrap_or_else(|| self.tempdir.path().to_path_buf());
        let output = Command::new(env!("CARGO_BIN_EXE_roller"))
            .args(&self.args)
            .current_dir(&dir)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("cannot run roller");
        let stdout = String::from_utf8(output.stdout).expect("stdout is not UTF-8");
        let stderr = String::from_utf8(output.stderr).expect("stderr is not UTF-8");
        let context = format!(
            "command: roller {}\nstatus: {:?}\n--- stdout\n{stdout}--- stderr\n{stderr}---",
            self.args
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            output.status.code(),
        );
        assert_eq!(
            output.status.code(),
            Some(self.status),
            "unexpected exit code\n{context}"
        );
        self.stdout.check("stdout", &stdout, &context);
        self.stderr.check("stderr", &stderr, &context);
        for part in &self.stdout_absent {
            assert!(
                !stdout.contains(part.as_str()),
                "stdout contains {part:?}\n{context}"
            );
        }
        for snapshot in &snapshots {
            snapshot.assert_untouched(&context);
        }
        Output {
            tempdir: self.tempdir,
            stdout,
            stderr,
        }
    }
}

/// What a run produced, and its folder for the next run or for inspection.
pub struct Output {
    pub tempdir: TempDir,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Another run in the same folder.
    pub fn then(self) -> Test {
        Test::with_tempdir(self.tempdir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.tempdir.path().join(name)
    }

    pub fn read(&self, name: &str) -> String {
        fs::read_to_string(self.path(name)).unwrap()
    }

    /// A file of the folder, parsed as JSON.
    pub fn json_file(&self, name: &str) -> Value {
        let text = self.read(name);
        serde_json::from_str(&text)
            .unwrap_or_else(|err| panic!("{name} is not JSON ({err}):\n{text}"))
    }

    /// Stdout, parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|err| panic!("stdout is not JSON ({err}):\n{}", self.stdout))
    }
}

/// The sorted keys of a JSON object.
pub fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    keys
}

/// The stored statuses of every step of a plan document, in tree order.
pub fn stored_statuses(document: &Value) -> Vec<String> {
    document["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|phase| phase["steps"].as_array().unwrap())
        .map(|step| step["status"].as_str().unwrap().to_owned())
        .collect()
}

/// The `interrupted` flags of every step of a plan document, in tree order.
pub fn stored_step_interrupts(document: &Value) -> Vec<bool> {
    document["phases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|phase| phase["steps"].as_array().unwrap())
        .map(|step| step["interrupted"].as_bool().unwrap())
        .collect()
}
