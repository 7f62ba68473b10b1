//! The operations (continue, interrupt, force-complete, restart, start,
//! stop): what they store, and that "already done" writes nothing.

use std::collections::HashSet;
use std::fs;

use serde_json::{Value, json};

use crate::plans::{HAND_WRITTEN, HAND_WRITTEN_TREE, TWO_PHASES};
use crate::test::{Test, keys, stored_statuses, stored_step_interrupts};

/// Every id of a stored plan document: phases, then their steps.
fn stored_ids(document: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for phase in document["phases"].as_array().unwrap() {
        ids.push(phase["id"].as_str().expect("a stored phase id").to_owned());
        for step in phase["steps"].as_array().unwrap() {
            ids.push(step["id"].as_str().expect("a stored step id").to_owned());
        }
    }
    ids
}

#[test]
fn force_complete_of_a_uniquely_named_step_needs_no_phase() {
    let output = Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--step",
            "world-0",
        ])
        .stdout(
            "\
force-complete step 'world-0' of phase 'world': done
deploy (serial strategy) (PENDING)
├─ hello (serial strategy) (PENDING)
│  └─ hello-0 (PENDING)
└─ world (serial strategy) (IN_PROGRESS)
   ├─ world-0 (COMPLETE)
   └─ world-1 (PENDING)
",
        )
        .run();
    let stored = output.json_file("plan.json");
    assert_eq!(stored_statuses(&stored), ["PENDING", "COMPLETE", "PENDING"]);
    assert_eq!(stored["version"], 1);
}

#[test]
fn a_changed_hand_written_plan_is_stored_with_its_generated_ids() {
    let output = Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--phase",
            "hello",
        ])
        .stdout_contains("force-complete phase 'hello': done\n")
        .run();
    let stored = output.json_file("plan.json");
    let ids = stored_ids(&stored);
    assert_eq!(ids.len(), 5);
    assert!(ids.iter().all(|id| !id.is_empty()), "{ids:?}");
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 5, "{ids:?}");
    // The stored ids are the ids from now on: show reports the same ones.
    let output = output
        .then()
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .untouched("plan.json")
        .run();
    let shown = output.json();
    let mut shown_ids = Vec::new();
    for phase in shown["phases"].as_array().unwrap() {
        shown_ids.push(phase["id"].as_str().unwrap().to_owned());
        for step in phase["steps"].as_array().unwrap() {
            shown_ids.push(step["id"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(shown_ids, ids);
    // And they address the elements.
    output
        .then()
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--step",
            &ids[3],
        ])
        .stdout_contains("force-complete step 'world-0' of phase 'world': done\n")
        .run();
}

#[test]
fn a_rewrite_leaves_no_temporary_file_behind() {
    let output = Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "force-complete", "--file", "plan.json"])
        .stdout_contains("force-complete plan 'deploy': done\n")
        .run();
    let entries: Vec<String> = fs::read_dir(output.tempdir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, ["plan.json"]);
    assert_eq!(
        stored_statuses(&output.json_file("plan.json")),
        ["COMPLETE"; 3]
    );
}

#[cfg(unix)]
#[test]
fn a_rewritten_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let test = Test::new().file("plan.json", HAND_WRITTEN);
    fs::set_permissions(test.path("plan.json"), fs::Permissions::from_mode(0o640)).unwrap();
    let output = test
        .args(["plan", "stop", "--file", "plan.json"])
        .stdout_contains("stop plan 'deploy': done\n")
        .run();
    let mode = fs::metadata(output.path("plan.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
}

#[test]
fn an_operation_that_changes_nothing_says_already_done_and_leaves_the_file_untouched() {
    Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "restart", "--file", "plan.json"])
        .stdout(&format!(
            "already done: restart changes nothing on plan 'deploy' (PENDING); the file is untouched\n{HAND_WRITTEN_TREE}"
        ))
        .untouched("plan.json")
        .run();
}

#[test]
fn force_complete_of_a_complete_step_is_already_done() {
    let output = Test::new()
        .file("plan.json", TWO_PHASES)
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--step",
            "d-1",
        ])
        .stdout_contains("force-complete step 'i-0bbb' of phase 'drain': done\n")
        .run();
    output
        .then()
        .args(["plan", "force-complete", "--file", "plan.json", "--step", "d-1"])
        .stdout_contains(
            "already done: force-complete changes nothing on step 'i-0bbb' of phase 'drain' (COMPLETE)",
        )
        .untouched("plan.json")
        .run();
}

#[test]
fn json_reports_a_change_with_the_plan_after_it() {
    let output = Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--phase",
            "hello",
            "--json",
        ])
        .any_stdout()
        .run();
    let report = output.json();
    assert_eq!(keys(&report), ["plan", "result"]);
    assert_eq!(report["result"], "changed");
    assert_eq!(report["plan"]["name"], "deploy");
    assert_eq!(report["plan"]["status"], "IN_PROGRESS");
    assert_eq!(report["plan"]["phases"][0]["status"], "COMPLETE");
    assert_eq!(
        report["plan"]["phases"][0]["steps"][0]["status"],
        "COMPLETE"
    );
    assert_eq!(report["plan"]["candidates"][0]["name"], "world-0");
    // The report's ids are the ones stored.
    let stored = output.json_file("plan.json");
    assert_eq!(report["plan"]["phases"][1]["id"], stored["phases"][1]["id"]);
    assert_eq!(
        report["plan"]["phases"][1]["steps"][1]["id"],
        stored["phases"][1]["steps"][1]["id"]
    );
}

#[test]
fn json_reports_already_done_and_leaves_the_file_untouched() {
    let output = Test::new()
        .file("plan.json", TWO_PHASES)
        .args(["plan", "continue", "--file", "plan.json", "--json"])
        .any_stdout()
        .untouched("plan.json")
        .run();
    let report = output.json();
    assert_eq!(keys(&report), ["plan", "result"]);
    assert_eq!(report["result"], "already_done");
    assert_eq!(report["plan"]["name"], "roll");
    assert_eq!(report["plan"]["status"], "PENDING");
}

#[test]
fn a_step_name_in_two_phases_is_refused_without_phase_and_both_matches_are_listed() {
    Test::new()
        .file("plan.json", TWO_PHASES)
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--step",
            "check",
        ])
        .status(2)
        .stderr(
            "roller: plan file 'plan.json': 'check' names more than one step: \
             'prepare/check' (id p-2), 'drain/check' (id d-2); give --phase or the step's id\n",
        )
        .untouched("plan.json")
        .run();
}

#[test]
fn a_step_name_in_two_phases_is_found_with_its_phase() {
    let output = Test::new()
        .file("plan.json", TWO_PHASES)
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--phase",
            "ph-2",
            "--step",
            "check",
        ])
        .stdout_contains("force-complete step 'check' of phase 'drain': done\n")
        .run();
    assert_eq!(
        stored_statuses(&output.json_file("plan.json")),
        ["PENDING", "PENDING", "PENDING", "COMPLETE"]
    );
}

#[test]
fn a_phase_id_wins_over_another_phase_named_like_it() {
    // Phase `prepare` has the id `drain`; phase `drain` has the id `ph-2`.
    let output = Test::new()
        .file("plan.json", TWO_PHASES)
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--phase",
            "drain",
        ])
        .stdout_contains("force-complete phase 'prepare': done\n")
        .run();
    assert_eq!(
        stored_statuses(&output.json_file("plan.json")),
        ["COMPLETE", "COMPLETE", "PENDING", "PENDING"]
    );
}

#[test]
fn a_step_is_found_by_its_id() {
    let output = Test::new()
        .file("plan.json", TWO_PHASES)
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--step",
            "p-2",
        ])
        .stdout_contains("force-complete step 'check' of phase 'prepare': done\n")
        .run();
    assert_eq!(
        stored_statuses(&output.json_file("plan.json")),
        ["PENDING", "COMPLETE", "PENDING", "PENDING"]
    );
}

#[test]
fn an_unknown_phase_is_refused_and_lists_the_phases() {
    Test::new()
        .file("plan.json", TWO_PHASES)
        .args([
            "plan",
            "interrupt",
            "--file",
            "plan.json",
            "--phase",
            "replace",
        ])
        .status(2)
        .stderr(
            "roller: plan file 'plan.json': plan 'roll' has no phase 'replace'; \
             its phases are: 'prepare' (id drain), 'drain' (id ph-2)\n",
        )
        .untouched("plan.json")
        .run();
}

#[test]
fn continue_on_an_unknown_step_is_refused_and_lists_the_steps() {
    Test::new()
        .file("plan.json", TWO_PHASES)
        .args([
            "plan",
            "continue",
            "--file",
            "plan.json",
            "--step",
            "i-0ccc",
        ])
        .status(2)
        .stderr(
            "roller: plan file 'plan.json': plan 'roll' has no step 'i-0ccc'; its steps are: \
             'prepare/i-0aaa' (id p-1), 'prepare/check' (id p-2), \
             'drain/i-0bbb' (id d-1), 'drain/check' (id d-2)\n",
        )
        .untouched("plan.json")
        .run();
}

#[test]
fn a_step_of_another_phase_is_unknown_and_only_the_named_phases_steps_are_listed() {
    Test::new()
        .file("plan.json", TWO_PHASES)
        .args([
            "plan",
            "restart",
            "--file",
            "plan.json",
            "--phase",
            "prepare",
            "--step",
            "d-1",
        ])
        .status(2)
        .stderr(
            "roller: plan file 'plan.json': phase 'prepare' has no step 'd-1'; its steps are: \
             'prepare/i-0aaa' (id p-1), 'prepare/check' (id p-2)\n",
        )
        .untouched("plan.json")
        .run();
}

#[test]
fn interrupting_the_plan_then_continuing_it_round_trips() {
    let output = Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "interrupt", "--file", "plan.json"])
        .stdout_contains("interrupt plan 'deploy': done\ndeploy (serial strategy) (WAITING)\n")
        .run();
    let interrupted_text = output.read("plan.json");
    let interrupted = output.json_file("plan.json");
    assert_eq!(interrupted["interrupted"], true);
    let output = output
        .then()
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .run();
    assert_eq!(output.json()["candidates"], json!([]));
    let output = output
        .then()
        .args(["plan", "interrupt", "--file", "plan.json"])
        .stdout_contains("already done: interrupt changes nothing on plan 'deploy' (WAITING)")
        .untouched("plan.json")
        .run();
    let output = output
        .then()
        .args(["plan", "continue", "--file", "plan.json"])
        .stdout(&format!(
            "continue plan 'deploy': done\n{HAND_WRITTEN_TREE}"
        ))
        .run();
    let mut expected = interrupted;
    expected["interrupted"] = json!(false);
    assert_eq!(output.json_file("plan.json"), expected);
    // Storing is deterministic: interrupting again writes the same bytes.
    let output = output
        .then()
        .args(["plan", "interrupt", "--file", "plan.json"])
        .stdout_contains("interrupt plan 'deploy': done\n")
        .run();
    assert_eq!(output.read("plan.json"), interrupted_text);
}

#[test]
fn interrupting_a_step_makes_it_wait_and_blocks_its_serial_phase() {
    let output = Test::new()
        .file("plan.json", TWO_PHASES)
        .args(["plan", "interrupt", "--file", "plan.json", "--step", "p-1"])
        .stdout(
            "\
interrupt step 'i-0aaa' of phase 'prepare': done
roll (serial strategy) (WAITING)
├─ prepare (serial strategy) (WAITING)
│  ├─ i-0aaa (WAITING)
│  └─ check (PENDING)
└─ drain (serial strategy) (PENDING)
   ├─ i-0bbb (PENDING)
   └─ check (PENDING)
",
        )
        .run();
    let stored = output.json_file("plan.json");
    assert_eq!(stored_step_interrupts(&stored), [true, false, false, false]);
    assert_eq!(stored_statuses(&stored), ["PENDING"; 4]);
}

#[test]
fn stop_on_the_plan_sets_every_step_pending_and_interrupts_it() {
    let output = Test::new()
        .file(
            "plan.json",
            r#"{ "name": "deploy", "phases": [
                 { "name": "hello", "steps": [{ "name": "hello-0", "status": "COMPLETE" }] },
                 { "name": "world", "steps": [
                   { "name": "world-0", "status": "STARTING" },
                   { "name": "world-1" }
                 ] } ] }"#,
        )
        .args(["plan", "stop", "--file", "plan.json"])
        .stdout(
            "\
stop plan 'deploy': done
deploy (serial strategy) (WAITING)
├─ hello (serial strategy) (PENDING)
│  └─ hello-0 (PENDING)
└─ world (serial strategy) (PENDING)
   ├─ world-0 (PENDING)
   └─ world-1 (PENDING)
",
        )
        .run();
    let stored = output.json_file("plan.json");
    assert_eq!(stored["interrupted"], true);
    assert_eq!(stored_statuses(&stored), ["PENDING"; 3]);
    assert_eq!(stored_step_interrupts(&stored), [false; 3]);
}

#[test]
fn start_on_a_complete_plan_restarts_it_and_clears_the_interrupt() {
    let output = Test::new()
        .file(
            "plan.json",
            r#"{ "name": "deploy", "interrupted": true, "phases": [
                 { "name": "hello", "steps": [{ "name": "hello-0", "status": "COMPLETE" }] },
                 { "name": "world", "steps": [
                   { "name": "world-0", "status": "COMPLETE" },
                   { "name": "world-1", "status": "COMPLETE" }
                 ] } ] }"#,
        )
        .args(["plan", "start", "--file", "plan.json"])
        .stdout(&format!("start plan 'deploy': done\n{HAND_WRITTEN_TREE}"))
        .run();
    let stored = output.json_file("plan.json");
    assert_eq!(stored["interrupted"], false);
    assert_eq!(stored_statuses(&stored), ["PENDING"; 3]);
}

#[test]
fn start_on_a_pending_plan_that_is_not_interrupted_is_already_done() {
    Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "start", "--file", "plan.json"])
        .stdout_contains("already done: start changes nothing on plan 'deploy' (PENDING)")
        .untouched("plan.json")
        .run();
}

#[test]
fn restart_of_a_complete_step_sets_it_pending() {
    let output = Test::new()
        .file(
            "plan.json",
            r#"{ "name": "deploy", "phases": [
                 { "name": "hello", "steps": [
                   { "id": "h0", "name": "hello-0", "status": "COMPLETE" },
                   { "id": "h1", "name": "hello-1", "status": "COMPLETE" }
                 ] } ] }"#,
        )
        .args([
            "plan",
            "restart",
            "--file",
            "plan.json",
            "--step",
            "hello-1",
        ])
        .stdout_contains("restart step 'hello-1' of phase 'hello': done\n")
        .stdout_contains("   └─ hello-1 (PENDING)\n")
        .run();
    assert_eq!(
        stored_statuses(&output.json_file("plan.json")),
        ["COMPLETE", "PENDING"]
    );
}

#[test]
fn an_operation_on_a_phase_leaves_the_other_phases_alone() {
    let output = Test::new()
        .file("plan.json", TWO_PHASES)
        .args(["plan", "stop", "--file", "plan.json", "--phase", "ph-2"])
        .stdout_contains("stop phase 'drain': done\n")
        .run();
    let stored = output.json_file("plan.json");
    assert_eq!(stored["interrupted"], false);
    assert_eq!(stored["phases"][0]["interrupted"], false);
    assert_eq!(stored["phases"][1]["interrupted"], true);
}

#[test]
fn an_id_shown_for_a_hand_written_plan_names_its_step() {
    let shown = Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .untouched("plan.json")
        .run();
    let id = shown.json()["phases"][1]["steps"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let output = shown
        .then()
        .args([
            "plan",
            "force-complete",
            "--file",
            "plan.json",
            "--step",
            &id,
        ])
        .stdout_contains("force-complete step 'world-0' of phase 'world': done\n")
        .run();
    assert_eq!(stored_ids(&output.json_file("plan.json"))[3], id);
}

#[test]
fn two_steps_of_one_name_in_the_named_phase_ask_for_the_id() {
    let plan = r#"{"name": "roll", "phases": [{"name": "a", "steps": [
        {"id": "s-1", "name": "dup"}, {"id": "s-2", "name": "dup"}]}]}"#;
    Test::new()
        .file("plan.json", plan)
        .args([
            "plan",
            "stop",
            "--file",
            "plan.json",
            "--phase",
            "a",
            "--step",
            "dup",
        ])
        .status(2)
        .stderr_contains("'a/dup' (id s-1), 'a/dup' (id s-2); give the step's id\n")
        .untouched("plan.json")
        .run();
}
