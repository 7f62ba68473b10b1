//! `--help`.

use crate::test::Test;

#[test]
fn help_exits_zero_and_documents_the_exit_codes() {
    Test::new()
        .arg("--help")
        .stdout_contains("Usage: roller [OPTIONS] <COMMAND>")
        .stdout_contains("Exit codes:\n")
        .stdout_contains("  0    done\n")
        .stdout_contains("  1    failed: ")
        .stdout_contains("  2    refused: bad input")
        .stdout_contains("another roll holds this cluster")
        .stdout_contains("  5    rolled back: ")
        .stdout_contains("  130  interrupted")
        .run();
}

#[test]
fn plan_help_exits_zero_and_lists_every_operation() {
    let mut test = Test::new()
        .args(["plan", "--help"])
        .stdout_contains("Usage: roller plan [OPTIONS] <COMMAND>");
    for operation in [
        "show",
        "continue",
        "interrupt",
        "force-complete",
        "restart",
        "start",
        "stop",
    ] {
        test = test.stdout_contains(&format!("\n  {operation} "));
    }
    test.run();
}

#[test]
fn an_operations_help_exits_zero_and_describes_its_flags() {
    Test::new()
        .args(["plan", "continue", "--help"])
        .stdout_contains("Usage: roller plan continue [OPTIONS] <--file <FILE>|--url <URL>>")
        .stdout_contains("--url <URL>")
        .stdout_contains("ROLLER_API_TOKEN")
        .stdout_contains("--phase <PHASE>")
        .stdout_contains("--step <STEP>")
        .stdout_contains("--json")
        .run();
}

#[test]
fn no_command_is_a_usage_error() {
    Test::new()
        .status(2)
        .stderr_contains("Usage: roller [OPTIONS] <COMMAND>")
        .run();
}

#[test]
fn status_help_says_which_exit_code_each_state_of_a_roll_gets() {
    Test::new()
        .args(["status", "--help"])
        .stdout_contains("Usage: roller status [OPTIONS]")
        .stdout_contains("writes nothing, not even its lock file")
        .stdout_contains("  0    the plan is COMPLETE")
        .stdout_contains("  1    the last run failed")
        .stdout_contains(
            "  3    paused (a wait timed out, or another writer changed the group), held",
        )
        .stdout_contains("\"state\"")
        .run();
}

#[test]
fn completions_generate_for_bash_zsh_and_fish() {
    for (shell, marker) in [
        ("bash", "complete -F _roller"),
        ("zsh", "#compdef roller"),
        ("fish", "complete -c roller"),
    ] {
        let output = Test::new()
            .args(["completions", shell])
            .stdout_contains(marker)
            .run();
        // Every command is offered.
        for command in ["run", "status", "abandon", "plan", "demo", "completions"] {
            assert!(output.stdout.contains(command), "{shell}: {command}");
        }
    }
    Test::new()
        .args(["completions", "tcsh"])
        .status(2)
        .stderr_contains("invalid value 'tcsh'")
        .run();
}

#[test]
fn the_man_page_renders_as_roff_with_every_command() {
    let output = Test::new()
        .args(["man"])
        .stdout_contains(".TH roller 1")
        .stdout_contains(".SH SUBCOMMANDS")
        .run();
    for command in ["roller\\-run(1)", "roller\\-status(1)", "roller\\-plan(1)"] {
        assert!(
            output.stdout.contains(command),
            "{command}:\n{}",
            output.stdout
        );
    }
}

#[test]
fn status_json_without_a_checkpoint_prints_a_json_error() {
    let output = Test::new()
        .args(["status", "--checkpoint", "nothing-here.json", "--json"])
        .status(2)
        .any_stdout()
        .stderr_contains("roller: ")
        .run();
    let error = output.json();
    assert_eq!(error["error"]["exit_code"], 2, "{error}");
    assert_eq!(error["error"]["label"], "no_checkpoint", "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nothing-here.json"),
        "{error}"
    );
}

#[test]
fn run_help_says_who_may_call_the_listen_api_and_when_operations_apply() {
    Test::new()
        .args(["run", "--help"])
        .stdout_contains("--listen <IP:PORT>")
        .stdout_contains("ROLLER_API_TOKEN or ROLLER_API_TOKEN_FILE")
        .stdout_contains("Anyone who can reach IP:PORT may call it")
        .stdout_contains("at its next tick")
        .run();
}

#[test]
fn a_plan_command_takes_exactly_one_of_file_and_url() {
    Test::new()
        .args(["plan", "show"])
        .status(2)
        .stderr_contains("<--file <FILE>|--url <URL>>")
        .run();
    Test::new()
        .args([
            "plan",
            "interrupt",
            "--file",
            "plan.json",
            "--url",
            "http://127.0.0.1:1",
        ])
        .status(2)
        .stderr_contains("cannot be used with")
        .run();
}
