//! The checkpoint directory failing under a running roll (full, or
//! read-only): the run must stop before its next side effect (every
//! intent is written before what it announces), exit 1 naming the file,
//! leave the last good checkpoint whole, and finish once the disk is
//! writable again. Both strategies.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use roller::roll::record::checkpoint::Checkpoint;

use super::cluster::{Cluster, assert_clean_end, text};

/// Every original the simulator no longer has in service must be one the
/// checkpoint says this roll sent a termination for: nothing done that is
/// not recorded.
fn assert_nothing_unrecorded(cluster: &Cluster, originals: &[String], checkpoint: &Path) {
    let record = Checkpoint::load(checkpoint)
        .expect("the last checkpoint written is whole")
        .expect("the checkpoint is still there");
    let group = cluster.group();
    for id in originals {
        let gone = group
            .instance(id)
            .is_none_or(|i| i.lifecycle_state.is_leaving());
        if gone {
            let sent = record.groups[0]
                .instances
                .iter()
                .any(|i| &i.id == id && i.terminate_sent);
            assert!(
                sent,
                "{id} was terminated but the checkpoint does not say so"
            );
        }
    }
}

#[test]
fn a_full_disk_stops_the_roll_with_exit_1_before_its_next_side_effect_and_the_rerun_finishes() {
    for strategy in ["drain", "serial"] {
        let cluster = Cluster::start("demo", "");
        let originals = cluster.live();
        // A file-size limit makes every write past it fail (EFBIG), as a
        // full disk does, for this process only; the checkpoint reaches it
        // part-way through the roll.
        let mut command = cluster.run_command(&["--target", "12", "--strategy", strategy]);
        // SAFETY: only async-signal-safe calls (setrlimit, signal) between
        // fork and exec.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 20 * 1024,
                    rlim_max: 20 * 1024,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
        let full = command.output().unwrap();
        assert_eq!(full.status.code(), Some(1), "{strategy}: {}", text(&full));
        let stderr = String::from_utf8_lossy(&full.stderr);
        assert!(
            stderr.contains(cluster.checkpoint().to_str().unwrap()),
            "{strategy}: the file is not named: {stderr}"
        );
        assert_nothing_unrecorded(&cluster, &originals, &cluster.checkpoint());
        let group = cluster.group();
        assert!(
            originals.iter().any(|id| group.instance(id).is_some()),
            "{strategy}: the roll finished before the disk filled: nothing tested"
        );

        let rerun = cluster.run(&[]);
        assert_eq!(rerun.status.code(), Some(0), "{strategy}: {}", text(&rerun));
        assert_clean_end(&cluster, &originals, 12);
    }
}

#[test]
fn a_read_only_checkpoint_directory_stops_the_roll_with_exit_1_and_the_rerun_finishes() {
    for strategy in ["drain", "serial"] {
        let cluster = Cluster::start("demo", "");
        let originals = cluster.live();
        let dir = cluster.checkpoint().parent().unwrap().to_path_buf();
        let child = cluster
            .run_command(&["--target", "12", "--strategy", strategy])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Once the scale-up is recorded, the directory turns read-only.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let scaled = std::fs::read_to_string(cluster.checkpoint())
                .is_ok_and(|t| t.contains("set desired capacity"));
            if scaled || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let locked = ReadOnly::set(&dir);
        let output = child.wait_with_output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(1),
            "{strategy}: {}",
            text(&output)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(cluster.checkpoint().to_str().unwrap()),
            "{strategy}: the file is not named: {stderr}"
        );
        assert_nothing_unrecorded(&cluster, &originals, &cluster.checkpoint());
        drop(locked);

        let rerun = cluster.run(&[]);
        assert_eq!(rerun.status.code(), Some(0), "{strategy}: {}", text(&rerun));
        assert_clean_end(&cluster, &originals, 12);
    }
}

/// A directory made read-only until dropped: `chattr +i` for root (whom
/// permission bits do not stop), mode 0555 for anyone else.
struct ReadOnly(std::path::PathBuf);

impl ReadOnly {
    fn set(dir: &Path) -> ReadOnly {
        if unsafe { libc::geteuid() } == 0 {
            let done = std::process::Command::new("chattr")
                .arg("+i")
                .arg(dir)
                .status()
                .expect("chattr (e2fsprogs) to make the directory read-only for root");
            assert!(done.success(), "chattr +i {} failed", dir.display());
        } else {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
        }
        ReadOnly(dir.to_path_buf())
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if unsafe { libc::geteuid() } == 0 {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.0)
                .status();
        } else {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
        }
    }
}
