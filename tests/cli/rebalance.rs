//! `roller rebalance`: the moves AZRebalance would make, as lines or as
//! JSON, and bad `--counts` refused with exit 2, the entry and an example.

use serde_json::json;

use crate::test::{Test, keys};

const EXAMPLE: &str = "e.g. --counts us-east-1a=5,us-east-1b=3,us-east-1c=4";

#[test]
fn uneven_counts_print_one_line_per_move_then_the_balanced_counts() {
    Test::new()
        .args([
            "rebalance",
            "--counts",
            "us-east-1a=6,us-east-1b=2,us-east-1c=4",
        ])
        .stdout(
            "move 1 instance: us-east-1a -> us-east-1b\n\
             move 1 instance: us-east-1a -> us-east-1b\n\
             balanced: us-east-1a=4,us-east-1b=4,us-east-1c=4\n",
        )
        .run();
}

#[test]
fn balanced_counts_print_already_balanced() {
    Test::new()
        .args([
            "rebalance",
            "--counts",
            "us-east-1a=4,us-east-1b=5,us-east-1c=4",
        ])
        .stdout("already balanced: us-east-1a=4,us-east-1b=5,us-east-1c=4\n")
        .run();
}

#[test]
fn json_lists_every_move_and_every_az_including_empty_ones() {
    let output = Test::new()
        .args([
            "rebalance",
            "--counts",
            "us-east-1c=0,us-east-1a=7,us-east-1b=0",
            "--json",
        ])
        .any_stdout()
        .run();
    let report = output.json();
    assert_eq!(keys(&report), ["balanced", "moves"]);
    assert_eq!(
        report,
        json!({
            "moves": [
                {"from": "us-east-1a", "to": "us-east-1b"},
                {"from": "us-east-1a", "to": "us-east-1b"},
                {"from": "us-east-1a", "to": "us-east-1c"},
                {"from": "us-east-1a", "to": "us-east-1c"},
            ],
            "balanced": {"us-east-1a": 3, "us-east-1b": 2, "us-east-1c": 2},
        })
    );
}

#[test]
fn json_of_a_balanced_group_has_no_moves() {
    let output = Test::new()
        .args(["rebalance", "--counts", "us-east-1a=3", "--json"])
        .any_stdout()
        .run();
    assert_eq!(
        output.json(),
        json!({"moves": [], "balanced": {"us-east-1a": 3}})
    );
}

#[test]
fn bad_counts_are_refused_naming_the_entry_with_an_example() {
    let cases = [
        ("us-east-1a=5,us-east-1b", "'us-east-1b' is not AZ=COUNT"),
        (
            "us-east-1a=5,us-east-1a=3",
            "'us-east-1a=3' gives AZ 'us-east-1a' a second count",
        ),
        (
            "us-east-1a=5,us-east-1b=-3",
            "'us-east-1b=-3' has a negative count",
        ),
        (
            "us-east-1a=2.5",
            "'us-east-1a=2.5' has a count that is not a whole number",
        ),
        ("=4", "'=4' names no AZ"),
        (
            "us-east-1a=5,,us-east-1b=3",
            "entry 2 is empty (two commas in a row, or one at an end)",
        ),
        ("", "no counts given"),
    ];
    for (counts, problem) in cases {
        for json in [false, true] {
            let mut test = Test::new()
                .args(["rebalance", "--counts", counts])
                .status(2)
                .stderr_contains(&format!("roller: bad --counts: {problem}; "))
                .stderr_contains(EXAMPLE);
            if json {
                // The error as JSON on stdout too, the same sentence.
                test = test.arg("--json").stdout_contains(
                    r#"{"error":{"exit_code":2,"label":"bad_counts","message":"bad --counts: "#,
                );
            }
            let output = test.run();
            assert_eq!(output.stderr.lines().count(), 1, "{}", output.stderr);
            if json {
                let error = output.json();
                assert_eq!(
                    format!("roller: {}\n", error["error"]["message"].as_str().unwrap()),
                    output.stderr
                );
            }
        }
    }
}

#[test]
fn missing_counts_is_a_usage_error() {
    Test::new()
        .args(["rebalance"])
        .status(2)
        .stderr_contains("--counts <AZ=COUNT[,AZ=COUNT...]>")
        .run();
}

#[test]
fn rebalance_help_teaches_with_an_example() {
    Test::new()
        .args(["rebalance", "--help"])
        .stdout_contains("roller rebalance --counts us-east-1a=5,us-east-1b=3,us-east-1c=4\n")
        .stdout_contains("  move 1 instance: us-east-1a -> us-east-1b\n")
        .stdout_contains("--json")
        .run();
}
