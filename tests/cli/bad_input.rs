//! Bad input is refused with exit code 2, a message naming the file and the
//! problem, and the file exactly as it was.

use crate::plans::HAND_WRITTEN;
use crate::test::Test;

/// Runs `plan show` and two operations on `document`; each must be refused
/// with a stderr that names the file and contains every one of `problem`.
fn assert_refused(document: &str, problem: &[&str]) {
    let commands: [&[&str]; 3] = [
        &["plan", "show", "--file", "plan.json", "--json"],
        &["plan", "force-complete", "--file", "plan.json"],
        &["plan", "stop", "--file", "plan.json"],
    ];
    for command in commands {
        let mut test = Test::new()
            .file("plan.json", document)
            .args(command)
            .status(2)
            .stderr_contains("roller: plan file 'plan.json': ")
            .untouched("plan.json");
        if command.contains(&"--json") {
            // The same refusal as a JSON object on stdout.
            test = test.stdout_contains(r#"{"error":{"exit_code":2,"label":"plan_"#);
        }
        for part in problem {
            test = test.stderr_contains(part);
        }
        let output = test.run();
        assert_eq!(
            output.stderr.lines().count(),
            1,
            "one line of error:\n{}",
            output.stderr
        );
    }
}

#[test]
fn a_missing_file_is_refused_and_not_created() {
    for command in ["show", "continue"] {
        let output = Test::new()
            .args(["plan", command, "--file", "missing.json"])
            .status(2)
            .stderr_contains("roller: cannot read plan file 'missing.json': ")
            .stderr_contains("No such file or directory")
            .run();
        assert!(!output.path("missing.json").exists());
    }
}

#[test]
fn malformed_json_is_refused_with_its_line_and_column() {
    assert_refused(
        "{\n  \"name\": \"deploy\",\n  \"phases\": [\n    { \"name\": \"hello\" \"steps\": [] }\n  ]\n}\n",
        &["not a valid plan document: expected `,` or `}` at line 4 column 23"],
    );
}

#[test]
fn a_truncated_file_is_refused() {
    assert_refused(
        &HAND_WRITTEN[..HAND_WRITTEN.len() / 2],
        &["not a valid plan document: EOF while parsing", "at line "],
    );
}

#[test]
fn a_json_array_is_not_a_plan_document() {
    assert_refused(
        r#"[1, "seq"]"#,
        &["the plan document must be a JSON object (with named fields), not an array"],
    );
}

#[test]
fn a_step_written_as_an_array_is_refused_with_where_it_is() {
    assert_refused(
        r#"{ "name": "deploy", "phases": [{ "name": "hello", "steps": [["id", "hello-0"]] }] }"#,
        &["phases[0].steps[0] must be a JSON object"],
    );
}

#[test]
fn an_unknown_strategy_is_refused_and_the_valid_ones_are_listed() {
    assert_refused(
        r#"{ "name": "deploy", "phases": [{ "name": "hello", "strategy": "random" }] }"#,
        &[
            "unknown strategy 'random': expected serial, parallel, serial-canary (or canary), \
             parallel-canary or dependency",
        ],
    );
}

#[test]
fn an_unknown_status_is_refused_and_the_valid_ones_are_listed() {
    assert_refused(
        r#"{ "name": "deploy", "phases": [{ "name": "hello",
             "steps": [{ "name": "hello-0", "status": "DONE" }] }] }"#,
        &[
            "unknown status 'DONE': expected one of ERROR, WAITING, PENDING, PREPARED, \
             STARTING, STARTED, COMPLETE, DELAYED",
        ],
    );
}

#[test]
fn an_unknown_field_is_refused_by_name() {
    assert_refused(
        r#"{ "name": "deploy", "phases": [{ "name": "hello",
             "steps": [{ "name": "hello-0", "stauts": "COMPLETE" }] }] }"#,
        &["unknown field `stauts`, expected one of", "`status`"],
    );
}

#[test]
fn an_unknown_field_of_the_plan_is_refused_by_name() {
    assert_refused(
        r#"{ "name": "deploy", "strategies": "serial", "phases": [] }"#,
        &["unknown field `strategies`"],
    );
}

#[test]
fn in_progress_is_refused_as_a_step_status() {
    assert_refused(
        r#"{ "name": "deploy", "phases": [{ "name": "hello",
             "steps": [{ "name": "hello-0", "status": "IN_PROGRESS" }] }] }"#,
        &["step 'hello-0' has status IN_PROGRESS, which only phases and plans derive"],
    );
}

#[test]
fn a_canary_strategy_on_the_plan_is_refused() {
    assert_refused(
        r#"{ "name": "deploy", "strategy": "canary",
             "phases": [{ "name": "hello", "steps": [{ "name": "hello-0" }] }] }"#,
        &["plan 'deploy' has strategy 'serial-canary': canary strategies apply to phases only"],
    );
}

#[test]
fn duplicate_ids_are_refused() {
    assert_refused(
        r#"{ "name": "deploy", "phases": [
             { "id": "x", "name": "hello", "steps": [{ "id": "h0", "name": "hello-0" }] },
             { "id": "w", "name": "world", "steps": [{ "id": "x", "name": "world-0" }] } ] }"#,
        &["the id 'x' is used by more than one element"],
    );
}

#[test]
fn a_dependency_on_a_missing_sibling_is_refused() {
    assert_refused(
        r#"{ "name": "deploy", "phases": [{ "name": "hello", "strategy": "dependency",
             "steps": [
               { "name": "hello-0" },
               { "name": "hello-1", "depends_on": ["hello-9"] }
             ] }] }"#,
        &["'hello-1' depends on 'hello-9', which is not a sibling step"],
    );
}

#[test]
fn a_dependency_cycle_is_refused() {
    assert_refused(
        r#"{ "name": "deploy", "strategy": "dependency", "phases": [
             { "name": "hello", "depends_on": ["world"] },
             { "name": "world", "depends_on": ["hello"] } ] }"#,
        &["the dependencies of plan 'deploy' form a cycle through 'hello'"],
    );
}

#[test]
fn a_version_2_document_asks_for_a_newer_roller() {
    assert_refused(
        r#"{ "version": 2, "name": "deploy", "phases": [] }"#,
        &[
            "plan document version 2 is not supported: this roller reads version 1",
            "upgrade roller",
        ],
    );
}

#[test]
fn an_unknown_flag_is_a_usage_error() {
    Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "continue", "--file", "plan.json", "--force"])
        .status(2)
        .stderr_contains("unexpected argument '--force'")
        .stderr_contains("Usage: roller plan continue")
        .untouched("plan.json")
        .run();
}

#[test]
fn a_missing_file_flag_is_a_usage_error() {
    Test::new()
        .args(["plan", "show"])
        .status(2)
        .stderr_contains("--file <FILE>")
        .run();
}

#[test]
fn an_unknown_operation_is_a_usage_error() {
    Test::new()
        .file("plan.json", HAND_WRITTEN)
        .args(["plan", "pause", "--file", "plan.json"])
        .status(2)
        .stderr_contains("unrecognized subcommand 'pause'")
        .untouched("plan.json")
        .run();
}
