//! A serial-canary phase operated through the CLI, as the DC/OS SDK does
//! it: the first two steps wait for the operator, one `continue` each.

use serde_json::{Value, json};

use crate::plans::CANARY;
use crate::test::{Output, Test, stored_statuses, stored_step_interrupts};

const FRESH_TREE: &str = "\
roll-agents (serial strategy) (WAITING)
└─ replace (serial-canary strategy) (WAITING)
   ├─ i-01 (WAITING)
   ├─ i-02 (WAITING)
   ├─ i-03 (PENDING)
   └─ i-04 (PENDING)
";

fn step_id(document: &Value, index: usize) -> String {
    document["phases"][0]["steps"][index]["id"]
        .as_str()
        .expect("a stored step id")
        .to_owned()
}

/// The canary plan after the first `continue --phase replace`.
fn first_canary_released() -> Output {
    Test::new()
        .file("plan.json", CANARY)
        .args([
            "plan",
            "continue",
            "--file",
            "plan.json",
            "--phase",
            "replace",
        ])
        .stdout(
            "\
continue phase 'replace': done
roll-agents (serial strategy) (PENDING)
└─ replace (serial-canary strategy) (PENDING)
   ├─ i-01 (PENDING)
   ├─ i-02 (WAITING)
   ├─ i-03 (PENDING)
   └─ i-04 (PENDING)
",
        )
        .run()
}

#[test]
fn a_fresh_canary_phase_shows_its_first_two_steps_waiting() {
    Test::new()
        .file("plan.json", CANARY)
        .args(["plan", "show", "--file", "plan.json"])
        .stdout(FRESH_TREE)
        .untouched("plan.json")
        .run();
}

#[test]
fn a_fresh_canary_phase_has_no_candidates() {
    let output = Test::new()
        .file("plan.json", CANARY)
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .untouched("plan.json")
        .run();
    let plan = output.json();
    assert_eq!(plan["candidates"], json!([]));
    assert_eq!(plan["phases"][0]["interrupted"], true);
    assert_eq!(plan["phases"][0]["status"], "WAITING");
}

#[test]
fn continue_releases_the_first_canary_step_and_stores_the_canary_state() {
    let output = first_canary_released();
    let stored = output.json_file("plan.json");
    let phase = &stored["phases"][0];
    assert_eq!(phase["strategy"], "serial-canary");
    assert_eq!(
        phase["canary"],
        json!({ "count": 2, "steps": [step_id(&stored, 0), step_id(&stored, 1)] })
    );
    assert_eq!(stored_step_interrupts(&stored), [false, true, false, false]);
    assert_eq!(stored_statuses(&stored), ["PENDING"; 4]);
    let output = output
        .then()
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .run();
    assert_eq!(
        output.json()["candidates"],
        json!([{ "id": step_id(&stored, 0), "name": "i-01", "phase": "replace" }])
    );
}

#[test]
fn a_second_continue_while_the_first_canary_step_is_pending_is_already_done() {
    first_canary_released()
        .then()
        .args(["plan", "continue", "--file", "plan.json", "--phase", "replace"])
        .stdout_contains(
            "already done: continue changes nothing on phase 'replace' (PENDING); the file is untouched\n",
        )
        .stdout_contains("   ├─ i-02 (WAITING)\n")
        .untouched("plan.json")
        .run();
}

#[test]
fn once_the_first_canary_step_completes_continue_releases_the_second() {
    let output = first_canary_released();
    let first = step_id(&output.json_file("plan.json"), 0);
    let output = output
        .then()
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--step",
            &first,
        ])
        .stdout_contains("force-complete step 'i-01' of phase 'replace': done\n")
        .stdout_contains("└─ replace (serial-canary strategy) (WAITING)\n")
        .run();
    let output = output
        .then()
        .args([
            "plan",
            "continue",
            "--file",
            "plan.json",
            "--phase",
            "replace",
        ])
        .stdout(
            "\
continue phase 'replace': done
roll-agents (serial strategy) (IN_PROGRESS)
└─ replace (serial-canary strategy) (IN_PROGRESS)
   ├─ i-01 (COMPLETE)
   ├─ i-02 (PENDING)
   ├─ i-03 (PENDING)
   └─ i-04 (PENDING)
",
        )
        .run();
    let stored = output.json_file("plan.json");
    assert_eq!(stored_step_interrupts(&stored), [false; 4]);
    assert_eq!(
        stored["phases"][0]["canary"]["steps"],
        json!([step_id(&stored, 0), step_id(&stored, 1)])
    );
}

#[test]
fn after_the_canary_the_phase_runs_serially_and_can_be_interrupted() {
    let output = first_canary_released();
    let stored = output.json_file("plan.json");
    let (first, second) = (step_id(&stored, 0), step_id(&stored, 1));
    let output = output
        .then()
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--step",
            &first,
        ])
        .any_stdout()
        .run()
        .then()
        .args([
            "plan",
            "continue",
            "--file",
            "plan.json",
            "--phase",
            "replace",
        ])
        .stdout_contains("continue phase 'replace': done\n")
        .run()
        .then()
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--step",
            &second,
        ])
        .stdout_contains("force-complete step 'i-02' of phase 'replace': done\n")
        .run()
        .then()
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .run();
    assert_eq!(
        output.json()["candidates"],
        json!([{ "id": step_id(&stored, 2), "name": "i-03", "phase": "replace" }])
    );
    let output = output
        .then()
        .args([
            "plan",
            "interrupt",
            "--file",
            "plan.json",
            "--phase",
            "replace",
        ])
        .stdout_contains("interrupt phase 'replace': done\n")
        .stdout_contains("└─ replace (serial-canary strategy) (WAITING)\n")
        .run();
    assert_eq!(
        output.json_file("plan.json")["phases"][0]["interrupted"],
        true
    );
}

#[test]
fn interrupt_before_the_first_canary_continue_is_already_done() {
    Test::new()
        .file("plan.json", CANARY)
        .args(["plan", "interrupt", "--file", "plan.json", "--phase", "replace"])
        .stdout(&format!(
            "already done: interrupt changes nothing on phase 'replace' (WAITING); the file is untouched\n{FRESH_TREE}"
        ))
        .untouched("plan.json")
        .run();
}

#[test]
fn interrupt_during_the_canary_period_is_already_done() {
    first_canary_released()
        .then()
        .args(["plan", "interrupt", "--file", "plan.json", "--phase", "replace"])
        .stdout_contains(
            "already done: interrupt changes nothing on phase 'replace' (PENDING); the file is untouched\n",
        )
        .untouched("plan.json")
        .run();
}
