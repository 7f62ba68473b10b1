//! `roller demo` (the simulated cluster) and `roller plan demo` (the plan
//! engine walkthrough).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::test::Test;

#[test]
fn plan_demo_exits_zero_and_walks_initial_deployment_then_configuration_change_then_canary() {
    let output = Test::new()
        .args(["plan", "demo"])
        .any_stdout()
        .stdout_lacks("(ERROR)")
        .stdout_lacks("(DELAYED)")
        .run();
    let stdout = &output.stdout;
    assert!(
        stdout.starts_with(
            "roller plan demo: the plan engine on the DC/OS SDK's hello-world deploy plan.\n"
        ),
        "{stdout}"
    );
    let sections = [
        "\n== Initial deployment\n",
        "\n== Configuration change\n",
        "\n== Canary: the phase waits for the operator\n",
        "\n-- roller plan continue --phase replace (canary 1 of 2)\n",
        "\n-- roller plan continue --phase replace (canary 2 of 2)\n",
        "\n-- the canary is over: the serial strategy takes the rest\n",
    ];
    let mut from = 0;
    for section in sections {
        let at = stdout[from..]
            .find(section)
            .unwrap_or_else(|| panic!("{section:?} missing or out of order:\n{stdout}"));
        from += at + section.len();
    }
    assert!(
        stdout.ends_with(
            "\
roll-agents (serial strategy) (COMPLETE)
└─ replace (serial-canary strategy) (COMPLETE)
   ├─ i-0a1b2c3d000000001 (COMPLETE)
   ├─ i-0a1b2c3d000000002 (COMPLETE)
   ├─ i-0a1b2c3d000000003 (COMPLETE)
   └─ i-0a1b2c3d000000004 (COMPLETE)
"
        ),
        "{stdout}"
    );
}

#[test]
fn plan_demo_shows_the_canary_phase_waiting_for_the_operator() {
    Test::new()
        .args(["plan", "demo"])
        .stdout_contains(
            "\
== Canary: the phase waits for the operator
roll-agents (serial strategy) (WAITING)
└─ replace (serial-canary strategy) (WAITING)
   ├─ i-0a1b2c3d000000001 (WAITING)
   ├─ i-0a1b2c3d000000002 (WAITING)
   ├─ i-0a1b2c3d000000003 (PENDING)
   └─ i-0a1b2c3d000000004 (PENDING)
",
        )
        .run();
}

#[test]
fn demo_rolls_the_simulated_cluster_without_an_outage_and_ends_with_the_monitors_report() {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_roller"))
        .arg("demo")
        // However the caller's AWS is configured, the demo never uses it.
        .env("AWS_ENDPOINT_URL", "http://192.0.2.1:1")
        .env("AWS_PROFILE", "production")
        .env("AWS_ACCESS_KEY_ID", "AKIAREAL")
        .env("AWS_SECRET_ACCESS_KEY", "real-secret")
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    // Piped: stderr is the log, one timestamped line per state change.
    assert_log_lines(&stderr);
    for line in [
        " INFO start: roll of mesos-agents-demo to 12 agents",
        " INFO scale-up/wait-registered STARTED: waiting for 12 new instance(s)",
        " INFO phase drain COMPLETE\n",
        " INFO plan roll-mesos-agents-demo COMPLETE\n",
    ] {
        assert!(stderr.contains(line), "{line:?} missing:\n{stderr}");
    }
    assert!(!stderr.contains("192.0.2.1") && !stderr.contains("real-secret"));
    assert!(!stdout.contains("192.0.2.1"), "{stdout}");
    assert!(!stdout.contains("real-secret") && !stdout.contains("AKIAREAL"));
    assert!(
        !stdout.contains('\x1b'),
        "no escape codes when not a terminal"
    );
    let lines = [
        "roller demo: the `demo` scenario (",
        "\n  AWS_ENDPOINT_URL=http://127.0.0.1:",
        "\n  MESOS=http://127.0.0.1:",
        "\n  MARATHON=http://127.0.0.1:",
        "\nrolling mesos-agents-demo to 12 agents",
        // The roll's progress is on stderr: the final tree comes next.
        ":\nfinal plan:\nroll-mesos-agents-demo (dependency strategy) (COMPLETE)\n",
        "\naz rebalance: ",
        "\nreport at ",
        // Every app kept at its own floor (capacity floors by default).
        " apps, 0 below their floor at some point (0.0 s in all), 0 with an outage",
        // The monitor's ground truth: every original instance terminated,
        // twelve new ones, balanced AZs, never beyond desired.
        "instances launched 24, terminated 12, failed launches 0\n",
        "final us-east-1a=4 us-east-1b=4 us-east-1c=4; beyond desired: peak 0",
        "\noutages: 0 apps, 0.0 simulated s\n",
    ];
    let mut from = 0;
    for line in lines {
        let at = stdout[from..]
            .find(line)
            .unwrap_or_else(|| panic!("{line:?} missing or out of order:\n{stdout}"));
        from += at + line.len();
    }
    assert_eq!(
        from,
        stdout.len(),
        "the outages line is the last:\n{stdout}"
    );
    assert!(
        elapsed < Duration::from_secs(120),
        "the demo took {elapsed:?}"
    );
}

#[test]
fn demo_whose_reader_stops_at_once_still_exits_zero() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_roller"))
        .arg("demo")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end before the demo writes anything.
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    // It stops at its first line of output, before the roll: no error.
    assert!(!stderr.contains("roller:"), "{stderr}");
}

/// Every line is `<RFC 3339 UTC>  INFO|  WARN <text>` (no error, no
/// escape code), and there are some.
pub fn assert_log_lines(stderr: &str) {
    assert!(stderr.lines().count() > 10, "too few log lines:\n{stderr}");
    for line in stderr.lines() {
        let (stamp, rest) = line.split_at(line.find(' ').unwrap_or(0));
        let shape: String = stamp
            .chars()
            .map(|c| if c.is_ascii_digit() { '0' } else { c })
            .collect();
        assert_eq!(shape, "0000-00-00T00:00:00Z", "not a timestamp: {line:?}");
        assert!(
            rest.starts_with("  INFO ") || rest.starts_with("  WARN "),
            "{line:?}"
        );
        assert!(!line.contains('\x1b'), "{line:?}");
    }
}
