//! `roller demo` (the simulated cluster) and `roller plan demo` (the plan
//! engine walkthrough).

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::mpsc;
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
        // The default scenario is a cluster of two groups, rolled by one
        // plan whose phases and fixed steps name their group.
        " INFO start: roll of mesos-agents-demo to 12 agents",
        "; mesos-agents-demo-public to 3 agents",
        " INFO mesos-agents-demo:scale-up/mesos-agents-demo:wait-registered STARTED: waiting for 12 new instance(s)",
        " INFO mesos-agents-demo-public:scale-up/mesos-agents-demo-public:wait-registered STARTED: waiting for 3 new instance(s)",
        " INFO phase mesos-agents-demo:drain COMPLETE\n",
        " INFO phase mesos-agents-demo-public:drain COMPLETE\n",
        " INFO plan roll-mesos-agents-demo+mesos-agents-demo-public COMPLETE\n",
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
        "roller demo: the `demo-cluster` scenario (",
        "\n  AWS_ENDPOINT_URL=http://127.0.0.1:",
        "\n  MESOS=http://127.0.0.1:",
        "\n  MARATHON=http://127.0.0.1:",
        "\nrolling mesos-agents-demo to 12 and mesos-agents-demo-public to 3 in one plan (checkpoint ",
        // The roll's progress is on stderr: the final tree comes next.
        ":\nfinal plan:\nroll-mesos-agents-demo+mesos-agents-demo-public (dependency strategy) (COMPLETE)\n",
        "├─ mesos-agents-demo:prepare ",
        "\n├─ mesos-agents-demo-public:prepare ",
        "\n├─ mesos-agents-demo:drain ",
        "\n├─ mesos-agents-demo-public:drain ",
        "\n└─ mesos-agents-demo-public:finish ",
        "\naz rebalance: ",
        "\nreport at ",
        // Every app kept at its own floor (capacity floors by default).
        " apps, 0 below their floor at some point (0.0 s in all), 0 with an outage",
        // The monitor's ground truth: every original instance of both
        // groups terminated (12 + 3), as many new ones, balanced AZs,
        // never beyond desired.
        "instances launched 30, terminated 15, failed launches 0\n",
        "final us-east-1a=5 us-east-1b=5 us-east-1c=5; beyond desired: peak 0",
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

/// `roller demo` with `args`, its temporary folder (`TMPDIR`, where the
/// demo keeps its checkpoint) private to the test.
fn demo(args: &[&str], tmp: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_roller"))
        .arg("demo")
        .args(args)
        .env("TMPDIR", tmp)
        .output()
        .unwrap()
}

#[test]
fn demo_rolls_the_msr_55_scenario_at_the_time_scale_it_is_given() {
    let tmp = tempfile::tempdir().unwrap();
    // Below the default 300x (more slack for the roll's waits on a busy
    // machine), and far enough from it that an ignored flag shows.
    let output = demo(&["--scenario", "msr-55", "--time-scale", "200"], tmp.path());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert_log_lines(&stderr);
    assert!(
        stderr.contains(" INFO plan roll-mesos-agents-prod COMPLETE\n"),
        "{stderr}"
    );
    let lines = [
        "roller demo: the `msr-55` scenario (55 agents over 3 AZs, 200 apps",
        "at 200x\n(200 simulated seconds per real second)",
        // The settle honours the scale: 300 simulated s are 1.5 s.
        "\nthe cluster settles for 5 simulated minutes (1.5 s real) before the roll\n",
        "\nrolling mesos-agents-prod to 55 agents",
        "\nfinal plan:\nroll-mesos-agents-prod (dependency strategy) (COMPLETE)\n",
        "instances launched 110, terminated 55, failed launches 0\n",
        "\noutages: 0 apps, 0.0 simulated s\n",
    ];
    let mut from = 0;
    for line in lines {
        let at = stdout[from..]
            .find(line)
            .unwrap_or_else(|| panic!("{line:?} missing or out of order:\n{stdout}"));
        from += at + line.len();
    }
    // So do the waits: the simulated clock ran at 200x, never faster (the
    // ratio is below 200 by the time it took the world to start), and
    // far slower than the default 300x. The report prints real seconds to
    // a tenth, so a roll of a few real seconds may print up to 0.05 s
    // short: the bound allows exactly that rounding, no more.
    let (simulated, real) = report_times(&stdout);
    let ratio = simulated / real;
    let most = 200.0 * (real + 0.05) / real;
    assert!(
        (100.0..=most).contains(&ratio),
        "{ratio} (at most {most}): {stdout}"
    );
    assert_eq!(
        super::cluster::files_in(tmp.path()),
        Vec::<String>::new(),
        "the demo removes its folder"
    );
}

/// `report at S simulated s (R s real):` of the demo's stdout.
fn report_times(stdout: &str) -> (f64, f64) {
    let line = stdout
        .lines()
        .find(|line| line.starts_with("report at "))
        .unwrap_or_else(|| panic!("no report line:\n{stdout}"));
    let numbers: Vec<f64> = line
        .split([' ', '('])
        .filter_map(|word| word.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 2, "{line}");
    (numbers[0], numbers[1])
}

#[test]
fn demo_of_bad_image_rolls_back_and_exits_5_as_roller_run_would() {
    let tmp = tempfile::tempdir().unwrap();
    let output = demo(&["--scenario", "bad-image"], tmp.path());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(5), "{stdout}{stderr}");
    // The group is pointed at the bad image first, as an operator would.
    assert!(
        stdout.contains("\nthe group now launches from version 2 of its launch template"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n├─ rollback (serial strategy) (COMPLETE)\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("\noutages: 0 apps, 0.0 simulated s\n"),
        "{stdout}"
    );
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("roller: demo: the roll found a failure on a new agent and rolled back")
            && last.contains("(exit 5)")
            && last.contains("The cluster is as it was before the roll"),
        "{stderr}"
    );
    assert_eq!(super::cluster::files_in(tmp.path()), Vec::<String>::new());
}

#[test]
fn demo_refuses_an_unknown_scenario_naming_the_built_in_ones_and_starts_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let output = demo(&["--scenario", "msr-56"], tmp.path());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(output.stdout.is_empty(), "nothing started");
    assert!(
        stderr.contains("invalid value 'msr-56' for '--scenario <NAME>'"),
        "{stderr}"
    );
    let names = roller::sim::scenario::builtin_names().join(", ");
    assert!(
        stderr.contains(&format!("[possible values: {names}]")),
        "{stderr}"
    );
    assert_eq!(super::cluster::files_in(tmp.path()), Vec::<String>::new());
}

#[test]
fn demo_refuses_a_time_scale_that_is_not_a_finite_number_above_zero() {
    let tmp = tempfile::tempdir().unwrap();
    for scale in ["0", "-1", "nan", "inf", "-inf", "fast", "", "1e-9", "1e9"] {
        let joined = format!("--time-scale={scale}");
        let mut forms = vec![vec!["--scenario", "demo", joined.as_str()]];
        // `--time-scale -inf` reads as flags to clap, as any word after a
        // dash does (but a number): only the joined form reaches the check.
        if scale != "-inf" {
            forms.push(vec!["--time-scale", scale]);
        }
        for args in forms {
            let output = demo(&args, tmp.path());
            let stderr = String::from_utf8(output.stderr).unwrap();
            assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(output.stdout.is_empty(), "{args:?}: nothing started");
            assert!(
                stderr.contains(&format!("invalid value '{scale}' for '--time-scale <K>'"))
                    && stderr.contains("a number from 0.01 to 10000"),
                "{args:?}: {stderr}"
            );
        }
    }
    assert_eq!(super::cluster::files_in(tmp.path()), Vec::<String>::new());
}

#[test]
fn demo_help_describes_every_built_in_scenario_and_a_time_scale_to_watch_at() {
    let output = Test::new()
        .args(["demo", "--help"])
        .stdout_contains("--scenario <NAME>")
        .stdout_contains("--time-scale <K>")
        .stdout_contains("[default: 300]")
        .stdout_contains("`roller demo --time-scale 10` takes")
        .stdout_contains("  5    rolled back after a failure on the new agents")
        .run();
    let scenarios = output
        .stdout
        .split_once("\nScenarios ")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("no Scenarios section:\n{}", output.stdout));
    for name in roller::sim::scenario::builtin_names() {
        assert!(
            scenarios.contains(&format!("\n  {name}  ")),
            "{name} is not described:\n{scenarios}"
        );
    }
}

#[test]
fn demo_at_a_slow_time_scale_stops_at_ctrl_c_cleans_up_and_exits_130() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_roller"))
        .args(["demo", "--time-scale", "10"])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(child.stdout.take().unwrap());
    // At 10x the settle alone takes half a minute of real time: the
    // demo says so, and is stopped in it.
    let settle = "the cluster settles for 5 simulated minutes (30.0 s real) before the roll";
    let seen = super::cluster::wait_for_line(&lines, settle);
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the demo did not stop within 60 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(seen, "{settle:?} never printed; stderr: {stderr}");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.ends_with(
            "roller: demo: interrupted: the roll stopped at a signal, and the simulated cluster with it\n"
        ),
        "{stderr}"
    );
    assert_eq!(
        super::cluster::files_in(tmp.path()),
        Vec::<String>::new(),
        "the demo removes its folder"
    );
}

/// The lines of `stream`, as they come.
fn lines_of(stream: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    lines
}
