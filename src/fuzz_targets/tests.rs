//! CI's short pass of the fuzz targets (`scripts/fuzz` runs the long one):
//! every target over its seeds, then over a few thousand random mutations
//! of them. The seeds are the files of `fuzz/seeds/<target>/` (written
//! answers and checkpoints, and every input a fuzz run found) and the
//! repository's own examples and fixtures, as `FIXTURES` lists them
//! (`scripts/fuzz` seeds its corpora from the same places).

use std::path::PathBuf;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::TARGETS;

/// Per target, the repository's files that seed it besides its folder:
/// (folder, file name prefix, file name suffix).
type Places = &'static [(&'static str, &'static str, &'static str)];
const FIXTURES: &[(&str, Places)] = &[
    ("plan_document", &[("examples", "", ".json")]),
    (
        "checkpoint",
        &[("src/roll/record/checkpoint", "v1_", ".json")],
    ),
    ("env_file", &[("examples", "", ".toml")]),
    ("mesos", &[("tests/fixtures", "mesos-", ".json")]),
    ("marathon", &[("tests/fixtures", "marathon-", ".json")]),
];

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fixtures = FIXTURES
        .iter()
        .filter(|(name, _)| *name == target)
        .flat_map(|(_, places)| places.iter().copied());
    let mut paths = Vec::new();
    for (folder, prefix, suffix) in
        std::iter::once((&*format!("fuzz/seeds/{target}"), "", "")).chain(fixtures)
    {
        let dir = root.join(folder);
        for entry in std::fs::read_dir(&dir)
            .unwrap_or_else(|err| panic!("seed folder {}: {err}", dir.display()))
        {
            let path = entry.expect("a seed entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if name.starts_with(prefix) && name.ends_with(suffix) {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .iter()
        .map(|path| std::fs::read(path).expect("a readable seed"))
        .collect()
}

/// Bytes that make parsers take other paths than random bytes do.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b",",
    b":",
    b"=",
    b"\n",
    b"null",
    b"true",
    b"-1",
    b"0",
    b"1e999",
    b"18446744073709551616",
    b"\"\"",
    b"{}",
    b"[]",
    b"\\u0000",
    b"<",
    b">",
    b"</",
];

/// One edit of a seed: where (a fraction of its length) and what.
#[derive(Clone, Debug)]
enum Edit {
    Flip(f64, u8),
    Insert(f64, usize),
    Delete(f64, usize),
    Duplicate(f64, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let at = 0.0..1.0f64;
    prop_oneof![
        (at.clone(), any::<u8>()).prop_map(|(at, byte)| Edit::Flip(at, byte)),
        (at.clone(), 0..TOKENS.len()).prop_map(|(at, token)| Edit::Insert(at, token)),
        (at.clone(), 1..64usize).prop_map(|(at, n)| Edit::Delete(at, n)),
        (at, 1..256usize).prop_map(|(at, n)| Edit::Duplicate(at, n)),
    ]
}

fn apply(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for edit in edits {
        let at = |fraction: f64| ((data.len() as f64) * fraction) as usize;
        match *edit {
            Edit::Flip(fraction, byte) => {
                let i = at(fraction);
                if i < data.len() {
                    data[i] = byte;
                } else {
                    data.push(byte);
                }
            }
            Edit::Insert(fraction, token) => {
                let i = at(fraction);
                data.splice(i..i, TOKENS[token].iter().copied());
            }
            Edit::Delete(fraction, n) => {
                let i = at(fraction);
                let end = (i + n).min(data.len());
                data.drain(i..end);
            }
            Edit::Duplicate(fraction, n) => {
                let i = at(fraction);
                let end = (i + n).min(data.len());
                let copy = data[i..end].to_vec();
                data.splice(i..i, copy);
            }
        }
    }
    data
}

fn body(name: &str) -> super::Body {
    TARGETS
        .iter()
        .find(|(target, _)| *target == name)
        .map(|(_, body)| *body)
        .expect("a known target")
}

/// Runs `name` over its seeds, then `cases` mutations of them.
fn short_pass(name: &str, cases: u32) {
    let run = body(name);
    let seeds = seeds(name);
    assert!(!seeds.is_empty(), "no seeds for {name}");
    for seed in &seeds {
        run(seed);
    }
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let inputs = (0..seeds.len(), prop::collection::vec(edit(), 1..6));
    runner
        .run(&inputs, |(seed, edits)| {
            run(&apply(&seeds[seed], &edits));
            Ok(())
        })
        .unwrap_or_else(|err| panic!("{name}: {err}"));
}

#[test]
fn every_target_has_seeds_and_a_test() {
    let names: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        [
            "plan_document",
            "checkpoint",
            "env_file",
            "counts",
            "mesos",
            "marathon",
            "aws"
        ]
    );
}

#[test]
fn plan_documents_from_seeds_and_mutations() {
    short_pass("plan_document", 10_000);
}

#[test]
fn checkpoints_from_seeds_and_mutations() {
    short_pass("checkpoint", 10_000);
}

#[test]
fn env_files_from_seeds_and_mutations() {
    short_pass("env_file", 10_000);
}

#[test]
fn counts_from_seeds_and_mutations() {
    short_pass("counts", 10_000);
}

#[test]
fn mesos_answers_from_seeds_and_mutations() {
    short_pass("mesos", 10_000);
}

#[test]
fn marathon_answers_from_seeds_and_mutations() {
    short_pass("marathon", 10_000);
}

#[test]
fn aws_answers_from_seeds_and_mutations() {
    short_pass("aws", 5_000);
}

/// Writes the checkpoint seeds: the checkpoint of a serial roll and of a
/// drain with a canary, at a few points of each, as roller writes them.
/// Run by hand when the checkpoint's schema changes:
/// `cargo test --lib write_checkpoint_seeds -- --ignored`.
#[tokio::test(start_paused = true)]
#[ignore = "writes fuzz/seeds/checkpoint; run by hand"]
async fn write_checkpoint_seeds() {
    use crate::roll::decide::roll_plan::RollStrategy;
    use crate::roll::engine::RunOptions;
    use crate::roll::preflight::{Request, Selection};
    use crate::roll::record::checkpoint::Checkpoint;
    use crate::roll::run::{RunSettings, run};
    use crate::sim::Scenario;
    use crate::simulated::SimulatedCluster;

    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/checkpoint");
    for (name, strategy, canary) in [
        ("serial", RollStrategy::Serial, None),
        ("drain-canary", RollStrategy::Drain, Some(1)),
    ] {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let scenario = Scenario::load("demo").expect("the demo scenario");
        let cluster = SimulatedCluster::start(&scenario, 1.0, dir.path().to_path_buf())
            .await
            .expect("a simulated cluster");
        tokio::time::sleep(std::time::Duration::from_secs(300)).await;
        let target = cluster.sim.report().final_state.instances_live;
        let settings = RunSettings {
            checkpoint: crate::roll::record::checkpoint::CheckpointStore::file(
                dir.path().join("roll.json"),
            ),
            request: Request {
                target: Some(target),
                select: Some(Selection::All),
                raise_max: true,
                canary,
                floor: Some(crate::roll::decide::safety::Floor::One),
                strategy: Some(strategy),
                ..Request::default()
            },
            options: RunOptions {
                resume_az_rebalance: false,
                resume_command: "roller run (seeds)".to_string(),
                acknowledge_failure: false,
                rollback_ordered: false,
                live: None,
            },
        };
        let mut written: Vec<Vec<u8>> = Vec::new();
        let observer = Box::new(|checkpoint: &Checkpoint| {
            written.push(checkpoint.to_json(&out).expect("a checkpoint serializes"));
        });
        let (_stop_tx, stop) = tokio::sync::watch::channel(false);
        run(cluster.ports(), &cluster.env, settings, stop, observer)
            .await
            .expect("the run");
        cluster.sim.shutdown().await;
        let count = written.len();
        for (i, at) in [1, count / 3, 2 * count / 3, count - 1]
            .into_iter()
            .enumerate()
        {
            let path = out.join(format!("{name}-{i}.json"));
            std::fs::write(&path, &written[at]).expect("a written seed");
        }
    }
}
