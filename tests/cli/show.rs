//! `roller plan show`: the tree, the JSON view, and never a write.

use serde_json::json;

use crate::plans::{HAND_WRITTEN, HAND_WRITTEN_TREE};
use crate::test::{Test, keys};

#[test]
fn show_prints_the_tree_of_a_hand_written_plan() {
    Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "show", "--file", "plan.json"])
        .stdout(HAND_WRITTEN_TREE)
        .run();
}

#[test]
fn show_exits_zero_when_a_step_is_in_error() {
    Test::new()
        .file(
            "plan.json",
            r#"{
              "name": "deploy",
              "phases": [
                { "name": "hello", "steps": [
                  { "name": "hello-0", "status": "COMPLETE" },
                  { "name": "hello-1", "status": "ERROR", "message": "readiness check failed" }
                ] },
                { "name": "world", "steps": [{ "name": "world-0" }] }
              ]
            }"#,
        )
        .args(["plan", "show", "--file", "plan.json"])
        .stdout(
            "\
deploy (serial strategy) (ERROR)
├─ hello (serial strategy) (ERROR)
│  ├─ hello-0 (COMPLETE)
│  └─ hello-1 (ERROR)
└─ world (serial strategy) (PENDING)
   └─ world-0 (PENDING)
",
        )
        .untouched("plan.json")
        .run();
}

#[test]
fn show_json_exits_zero_when_the_plan_has_errors_of_its_own() {
    let output = Test::new()
        .file(
            "plan.json",
            r#"{ "name": "deploy", "errors": ["invalid request"],
                 "phases": [{ "name": "hello", "steps": [{ "name": "hello-0" }] }] }"#,
        )
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .run();
    let plan = output.json();
    assert_eq!(plan["status"], "ERROR");
    assert_eq!(plan["errors"], json!(["invalid request"]));
}

#[test]
fn show_never_modifies_a_file_that_lacks_ids() {
    let output = Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "show", "--file", "plan.json"])
        .stdout(HAND_WRITTEN_TREE)
        .untouched("plan.json")
        .run();
    output
        .then()
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .untouched("plan.json")
        .run();
}

#[test]
fn show_json_prints_every_key_of_the_plan_info() {
    let output = Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .run();
    let plan = output.json();
    assert_eq!(
        keys(&plan),
        [
            "candidates",
            "errors",
            "interrupted",
            "name",
            "phases",
            "status",
            "strategy"
        ]
    );
    assert_eq!(plan["name"], "deploy");
    assert_eq!(plan["status"], "PENDING");
    assert_eq!(plan["strategy"], "serial");
    assert_eq!(plan["interrupted"], false);
    assert_eq!(plan["errors"], json!([]));
    let phases = plan["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for phase in phases {
        assert_eq!(
            keys(phase),
            ["id", "interrupted", "name", "status", "steps", "strategy"]
        );
        assert!(!phase["id"].as_str().unwrap().is_empty());
        for step in phase["steps"].as_array().unwrap() {
            assert_eq!(
                keys(step),
                ["asset", "id", "interrupted", "message", "name", "status"]
            );
            assert!(!step["id"].as_str().unwrap().is_empty());
        }
    }
    assert_eq!(phases[1]["name"], "world");
    assert_eq!(phases[1]["status"], "PENDING");
    assert_eq!(phases[1]["steps"][1]["name"], "world-1");
    assert_eq!(phases[1]["steps"][1]["status"], "PENDING");
    assert_eq!(phases[1]["steps"][1]["message"], "");
    assert_eq!(phases[1]["steps"][1]["asset"], json!(null));
    // Serial everywhere: only the first step of the first phase runs.
    let candidates = plan["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 1);
    assert_eq!(keys(&candidates[0]), ["id", "name", "phase"]);
    assert_eq!(candidates[0]["name"], "hello-0");
    assert_eq!(candidates[0]["phase"], "hello");
    assert_eq!(candidates[0]["id"], phases[0]["steps"][0]["id"]);
}

#[test]
fn show_json_lists_every_eligible_step_of_a_parallel_phase_as_a_candidate() {
    let output = Test::new()
        .file(
            "plan.json",
            r#"{
              "name": "roll",
              "phases": [
                { "id": "first", "name": "first", "steps": [
                  { "id": "f", "name": "f", "status": "COMPLETE" }
                ] },
                { "id": "fan", "name": "fanout", "strategy": "parallel", "steps": [
                  { "id": "a", "name": "a", "status": "STARTING", "asset": "i-1" },
                  { "id": "b", "name": "b", "message": "waiting for offers" },
                  { "id": "c", "name": "c", "status": "COMPLETE" },
                  { "id": "d", "name": "d", "interrupted": true },
                  { "id": "e", "name": "e", "asset": "i-1" }
                ] }
              ]
            }"#,
        )
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .untouched("plan.json")
        .run();
    let plan = output.json();
    // Not c (COMPLETE), not d (interrupted), not e (a holds asset i-1).
    assert_eq!(
        plan["candidates"],
        json!([
            { "id": "a", "name": "a", "phase": "fanout" },
            { "id": "b", "name": "b", "phase": "fanout" },
        ])
    );
    let fanout = &plan["phases"][1];
    assert_eq!(fanout["strategy"], "parallel");
    assert_eq!(fanout["status"], "IN_PROGRESS");
    assert_eq!(fanout["steps"][0]["asset"], "i-1");
    assert_eq!(fanout["steps"][1]["message"], "waiting for offers");
    assert_eq!(fanout["steps"][3]["status"], "WAITING");
    assert_eq!(fanout["steps"][3]["interrupted"], true);
}

#[test]
fn show_json_of_an_interrupted_plan_has_no_candidates() {
    let output = Test::new()
        .file(
            "plan.json",
            r#"{ "name": "deploy", "interrupted": true,
                 "phases": [{ "name": "hello", "steps": [{ "name": "hello-0" }] }] }"#,
        )
        .args(["plan", "show", "--file", "plan.json", "--json"])
        .any_stdout()
        .run();
    let plan = output.json();
    assert_eq!(plan["status"], "WAITING");
    assert_eq!(plan["interrupted"], true);
    assert_eq!(plan["candidates"], json!([]));
}
