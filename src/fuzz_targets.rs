//! The fuzz targets' bodies, one per input roller parses: each hands one
//! input to the function production parses it with, and checks what must
//! hold whatever the input (no panic, no hang; a checkpoint that loads is
//! valid). The cargo-fuzz crate in `fuzz/` calls them (`scripts/fuzz`);
//! the unit tests in `fuzz_targets/tests.rs` run them over the seeds in
//! `fuzz/seeds/` and a few thousand mutations of them, so CI runs a short
//! pass of every target without cargo-fuzz.
//!
//! Built only for tests and with the `fuzzing` feature: no release binary
//! carries it.

use std::path::Path;

use crate::plan::{self, Plan};
use crate::roll::decide::rebalance::{parse_counts, rebalance};
use crate::roll::record::checkpoint::{self, Checkpoint};
use crate::roll::record::env::Environment;
use crate::roll::record::kinds::RollPlan;

/// A target's body: one input, a panic on any finding.
#[cfg(test)]
pub(crate) type Body = fn(&[u8]);

/// Every target: its name (the cargo-fuzz target and the seed folder) and
/// its body.
#[cfg(test)]
pub(crate) const TARGETS: &[(&str, Body)] = &[
    ("plan_document", plan_document),
    ("checkpoint", checkpoint),
    ("env_file", env_file),
    ("counts", counts),
    ("mesos", mesos),
    ("marathon", marathon),
    ("aws", aws),
];

/// A plan document (`roller plan … --file`): one that loads saves to a
/// document that loads as the same plan, and the engine can show it.
pub fn plan_document(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let plan: Plan = match Plan::from_json(text) {
        Ok(plan) => plan,
        Err(err) => {
            let _ = err.to_string();
            return;
        }
    };
    let again: Plan = Plan::from_json(&plan.to_json())
        .unwrap_or_else(|err| panic!("a loaded plan, saved, does not load: {err}"));
    assert_eq!(again, plan, "a loaded plan, saved and loaded, changed");
    let _ = (
        plan::plan_candidates(&plan),
        plan::tree(&plan),
        plan::info(&plan),
    );
}

/// A checkpoint (`roller run`, `status`, `abandon`, `plan` on a roll): one
/// that loads is valid. Its schema is the current one, every step has a
/// kind, its plan is a valid plan document as it stands, it saves to a
/// file that loads as the same checkpoint, and what `roller status` and a
/// resume read of it works.
pub fn checkpoint(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.json");
    let loaded = match Checkpoint::parse(path, text) {
        Ok(loaded) => loaded,
        Err(err) => {
            let _ = (err.to_string(), err.label());
            return;
        }
    };
    assert_eq!(
        loaded.version,
        checkpoint::VERSION,
        "an old schema loaded as is"
    );
    for (_, step) in loaded.plan.steps() {
        let kind = step.kind.as_ref().unwrap_or_else(|| {
            panic!("a loaded checkpoint has a step without a kind: {}", step.id)
        });
        assert!(
            kind.group.0 < loaded.groups.len(),
            "a loaded checkpoint's step {} acts on a group it does not hold",
            step.id
        );
    }
    let as_document = RollPlan::from_json(&loaded.plan.to_json())
        .unwrap_or_else(|err| panic!("a loaded checkpoint's plan is not a valid plan: {err}"));
    assert_eq!(
        as_document, loaded.plan,
        "a loaded checkpoint's plan changes when read as a plan document"
    );
    let json = loaded.to_json(path).expect("a loaded checkpoint saves");
    let text = std::str::from_utf8(&json).expect("a saved checkpoint is UTF-8");
    let again = Checkpoint::parse(path, text)
        .unwrap_or_else(|err| panic!("a loaded checkpoint, saved, does not load: {err}"));
    assert_eq!(
        again, loaded,
        "a loaded checkpoint, saved and loaded, changed"
    );
    if let Some(pause) = &loaded.pause {
        let _ = loaded.find_step(&pause.step);
    }
    let _ = (
        plan::plan_candidates(&loaded.plan),
        plan::tree(&loaded.plan),
        plan::info(&loaded.plan),
        loaded
            .groups
            .iter()
            .map(|g| {
                let surged: Vec<u32> = g.surges.iter().map(|s| s.surged_instances()).collect();
                (g.scale_up_desired(), g.original_remaining(), surged)
            })
            .collect::<Vec<_>>(),
    );
}

/// The keys of the environment file, each given the input as a flag's
/// (or a variable's) text.
const ENV_KEYS: [&str; 14] = [
    "asg",
    "region",
    "aws_endpoint_url",
    "mesos",
    "marathon",
    "match",
    "time_scale",
    "poll_interval",
    "checkpoint_dir",
    "suspend_processes",
    "timeouts.healthy",
    "pager.pagerduty",
    "pager.pagerduty_events_url",
    "pager.source",
];

/// The environment file (`--env`), and the same text as the value of
/// each key given by a flag: every error is one the CLI shows.
pub fn env_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let no_vars = |_: &str| None;
    let file = Path::new("fuzz.env.toml");
    if let Err(err) = Environment::resolve(Some((file, text)), &no_vars, &[]) {
        let _ = err.to_string();
    }
    let required = [
        ("asg", "fuzz-asg".to_string()),
        ("mesos", "http://mesos.fuzz:5050".to_string()),
        ("marathon", "http://marathon.fuzz:8080".to_string()),
    ];
    for key in ENV_KEYS {
        let mut flags = required.to_vec();
        flags.push((key, text.to_string()));
        if let Err(err) = Environment::resolve(None, &no_vars, &flags) {
            let _ = err.to_string();
        }
    }
}

/// `--counts` of `roller rebalance`: counts that parse balance into AZs
/// that differ by at most one, with every instance kept.
pub fn counts(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let counts = match parse_counts(text) {
        Ok(counts) => counts,
        Err(err) => {
            let _ = err.to_string();
            return;
        }
    };
    let result = rebalance(&counts);
    let total = |c: &std::collections::BTreeMap<String, u32>| {
        c.values().map(|&n| u64::from(n)).sum::<u64>()
    };
    assert_eq!(
        total(&result.balanced),
        total(&counts),
        "rebalancing lost instances"
    );
    let (low, high) = (
        result.balanced.values().min().copied().unwrap_or(0),
        result.balanced.values().max().copied().unwrap_or(0),
    );
    assert!(
        high - low <= 1,
        "rebalanced counts {:?} are not balanced",
        result.balanced
    );
}

/// The Mesos master's answers (agents v0 and v1, maintenance schedule and
/// status, the leader in /master/state).
pub fn mesos(data: &[u8]) {
    crate::mesos::fuzz::responses(data);
}

/// Marathon's answers (apps with tasks, one app, deployments, the leader,
/// scale and kill answers, error bodies).
pub fn marathon(data: &[u8]) {
    crate::marathon::fuzz::responses(data);
}

/// AWS's answers, error bodies first, as the SDK and the adapter read them.
pub fn aws(data: &[u8]) {
    crate::aws::fuzz::answers(data);
}

#[cfg(test)]
mod tests;
