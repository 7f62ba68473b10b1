//! Trees that must match the DC/OS SDK documentation character for character.
//!
//! The files in `tests/cli/golden/` are copied verbatim from the fenced
//! blocks of the DC/OS SDK (dcos-commons) documentation page "Plans and
//! Deployment", as kept in `/work/shared/seeds/dcos-sdk-plans-and-deployment.md`:
//!
//! - `seed-hello-world-1.txt` ... `-6.txt`: "Initial deployment", the six
//!   `deploy (serial strategy)` blocks in page order;
//! - `seed-hello-world-7.txt`, `-8.txt`: "Configuration change", its two
//!   `deploy (serial strategy)` blocks in page order;
//! - `seed-strategies.txt`: "Strategies", the `foo (serial strategy)
//!   (IN_PROGRESS)` block.
//!
//! Each file holds the block's lines, each ending with a newline, and
//! nothing else. Do not edit them to make a test pass.

use std::path::Path;

use crate::test::Test;

pub const HELLO_WORLD: [&str; 8] = [
    include_str!("golden/seed-hello-world-1.txt"),
    include_str!("golden/seed-hello-world-2.txt"),
    include_str!("golden/seed-hello-world-3.txt"),
    include_str!("golden/seed-hello-world-4.txt"),
    include_str!("golden/seed-hello-world-5.txt"),
    include_str!("golden/seed-hello-world-6.txt"),
    include_str!("golden/seed-hello-world-7.txt"),
    include_str!("golden/seed-hello-world-8.txt"),
];

const STRATEGIES: &str = include_str!("golden/seed-strategies.txt");

#[test]
fn the_golden_trees_are_sdk_plan_trees() {
    for tree in HELLO_WORLD {
        assert!(tree.starts_with("deploy (serial strategy) ("), "{tree}");
        assert!(tree.ends_with(")\n") && !tree.ends_with("\n\n"), "{tree}");
    }
    assert!(STRATEGIES.starts_with("foo (serial strategy) (IN_PROGRESS)\n"));
}

#[test]
fn plan_demo_prints_the_eight_hello_world_trees_of_the_sdk_doc_in_order() {
    let output = Test::new().args(["plan", "demo"]).any_stdout().run();
    let mut rest = output.stdout.as_str();
    for (number, tree) in HELLO_WORLD.iter().enumerate() {
        // A whole tree: at the start of a line.
        let at = rest
            .find(&format!("\n{tree}"))
            .unwrap_or_else(|| {
                panic!(
                    "tree {} of the SDK doc is missing (or out of order) after:\n{}\n--- expected\n{tree}",
                    number + 1,
                    &output.stdout[..output.stdout.len() - rest.len()]
                )
            });
        rest = &rest[at + 1 + tree.len()..];
    }
}

#[test]
fn the_strategies_example_shows_as_the_sdk_doc_tree() {
    let root = env!("CARGO_MANIFEST_DIR");
    Test::new()
        .current_dir(root)
        .args(["plan", "show", "--file", "examples/strategies.json"])
        .stdout(STRATEGIES)
        .untouched(Path::new(root).join("examples/strategies.json"))
        .run();
}

#[test]
fn the_hello_world_example_shows_as_the_first_sdk_doc_tree() {
    let root = env!("CARGO_MANIFEST_DIR");
    Test::new()
        .current_dir(root)
        .args(["plan", "show", "--file", "examples/hello-world.json"])
        .stdout(HELLO_WORLD[0])
        .untouched(Path::new(root).join("examples/hello-world.json"))
        .run();
}
