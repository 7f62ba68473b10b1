//! `roller demo`.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::test::Test;

#[test]
fn demo_exits_zero_and_walks_initial_deployment_then_configuration_change_then_canary() {
    let output = Test::new()
        .arg("demo")
        .any_stdout()
        .stdout_lacks("(ERROR)")
        .stdout_lacks("(DELAYED)")
        .run();
    let stdout = &output.stdout;
    assert!(
        stdout.starts_with(
            "roller demo: the plan engine on the DC/OS SDK's hello-world deploy plan.\n"
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
fn demo_shows_the_canary_phase_waiting_for_the_operator() {
    Test::new()
        .arg("demo")
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
    assert_eq!(stderr, "");
}
