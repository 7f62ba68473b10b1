//! The live view, in a real pseudo-terminal: `roller demo` with its
//! stdout and stderr on the pty's slave side, read off the master side
//! as a terminal would get it.

use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

/// A pty pair, `columns` wide: (master, slave).
fn pty(columns: u16) -> (File, OwnedFd) {
    let mut master = 0;
    let mut slave = 0;
    let size = libc::winsize {
        ws_row: 50,
        ws_col: columns,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors it opened; each is owned once.
    unsafe {
        let rc = libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        );
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave))
    }
}

/// Everything the terminal got until the demo exited, and its exit code.
fn demo_on_a_terminal(args: &[&str]) -> (String, Option<i32>) {
    let (mut master, slave) = pty(120);
    let mut child = Command::new(env!("CARGO_BIN_EXE_roller"))
        .arg("demo")
        .args(args)
        .env("TERM", "xterm")
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    // The child holds the only slave ends now: reading ends (EIO) when it
    // exits and they close.
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match master.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(err) if err.raw_os_error() == Some(libc::EIO) => break,
            Err(err) => panic!("reading the pty: {err}"),
        }
    }
    let status = child.wait().unwrap();
    (
        String::from_utf8_lossy(&bytes).replace("\r\n", "\n"),
        status.code(),
    )
}

/// The frames drawn: each starts after an erase (`ESC[nF ESC[J`), the
/// first after the demo's header.
fn frames(text: &str) -> Vec<&str> {
    let mut frames: Vec<&str> = text.split("\x1b[J").skip(1).collect();
    if let Some(first) = text.split("\x1b[").next() {
        frames.insert(0, first);
    }
    frames
}

#[test]
fn on_a_terminal_the_demo_redraws_one_frame_in_place_and_ends_with_the_tree_and_report() {
    let (text, code) = demo_on_a_terminal(&[]);
    assert_eq!(code, Some(0), "{text}");
    let frames = frames(&text);
    assert!(frames.len() > 5, "a few frames at least: {text:?}");

    // The first frame: the plan as it begins, nothing replaced yet.
    let first = frames[0];
    let after_header = first
        .split("(checkpoint ")
        .nth(1)
        .unwrap_or_else(|| panic!("the header: {first:?}"));
    assert!(
        after_header
            .contains("\nroll-mesos-agents-demo+mesos-agents-demo-public (dependency strategy) ("),
        "{first:?}"
    );
    assert!(
        after_header.contains("\nagents replaced 0/15, elapsed 00:00:"),
        "{first:?}"
    );

    // Every later frame is drawn over the one before: each erase moves up
    // at most the lines written since the erase before it (the frame, and
    // any warning printed above it), and at least the plan, its five
    // phases and the progress line.
    let pieces: Vec<&str> = text.split("\x1b[").collect();
    let mut written = pieces[0].matches('\n').count();
    for pair in pieces[1..].chunks(2) {
        let up: usize = pair[0]
            .strip_suffix('F')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("an erase: {:?}", pair[0]));
        assert!(
            (7..=written).contains(&up),
            "up {up} of {written}: {text:?}"
        );
        let frame = pair.get(1).and_then(|f| f.strip_prefix('J'));
        written = frame
            .unwrap_or_else(|| panic!("a clear after the move: {pair:?}"))
            .matches('\n')
            .count();
    }

    // The last frame: every agent replaced, the plan complete, then the
    // final tree and the report on stdout.
    let last = frames.last().unwrap();
    assert!(
        last.starts_with(
            "roll-mesos-agents-demo+mesos-agents-demo-public (dependency strategy) (COMPLETE)\n"
        ),
        "{last:?}"
    );
    assert!(
        last.contains("\nagents replaced 15/15, wave ") && last.contains(", elapsed "),
        "{last:?}"
    );
    assert!(last.contains(", ETA 00:00:00\nrecent:\n"), "{last:?}");
    assert!(
        last.contains("\nfinal plan:\nroll-mesos-agents-demo+mesos-agents-demo-public (dependency strategy) (COMPLETE)\n"),
        "{last:?}"
    );
    assert!(
        last.ends_with("\noutages: 0 apps, 0.0 simulated s\n"),
        "{last:?}"
    );
    // No plain log line on a terminal: the frame shows the changes.
    assert!(!text.contains("  INFO "), "{text}");
}

#[test]
fn no_live_on_a_terminal_prints_plain_log_lines() {
    let (text, code) = demo_on_a_terminal(&["--no-live"]);
    assert_eq!(code, Some(0), "{text}");
    // The levels are coloured on a terminal.
    assert!(text.contains("\x1b[32m INFO\x1b[0m"), "{text:?}");
    let text = without_colours(&text);
    assert!(!text.contains("\x1b[J"), "no frame is erased: {text:?}");
    assert!(
        text.contains(" INFO plan roll-mesos-agents-demo+mesos-agents-demo-public COMPLETE\n"),
        "{text}"
    );
    assert!(
        text.ends_with("\noutages: 0 apps, 0.0 simulated s\n"),
        "{text}"
    );
}

/// `text` without SGR sequences (`ESC[…m`).
fn without_colours(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after.find(|c: char| !(c.is_ascii_digit() || c == ';')) {
            Some(end) if after[end..].starts_with('m') => rest = &after[end + 1..],
            _ => {
                out.push_str("\x1b[");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
