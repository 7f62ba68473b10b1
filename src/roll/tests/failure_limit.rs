//! The failure limit in a whole roll: the `bad-image` scenario's tasks
//! crash on the new image; with `failure_limit = 1` the first failing app
//! (or agent) is tolerated, recorded and logged, and the roll turns around
//! only when a second one fails, and still ends as it began.

use std::collections::HashSet;

use super::in_process::{cluster, roll, settings};
use super::rollback::{all_on_old_agents, shape};
use crate::roll::decide::failure_limit;
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::record::checkpoint::{Checkpoint, EventKind, OnFailure};
use crate::sim::world::ImageEffect;

/// Rolls `bad-image` onto its crashing version 2 with `failure_limit`
/// and the drain; answers the checkpoint the roll ended with, after
/// checking it rolled back to the cluster it began with.
async fn crashing_roll(failure_limit: Option<u32>) -> Checkpoint {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cluster = cluster("bad-image", dir.path()).await;
    cluster.env.failure_limit = failure_limit;
    let before = shape(&cluster).await;
    cluster.sim.world().with(|w| {
        w.set_bad_image("2", ImageEffect::Crash).expect("the fault");
        w.set_launch_template_version("2").expect("version 2");
    });
    let target = u32::try_from(before.instances.len()).unwrap();
    let mut run_settings = settings(&dir.path().join("roll.json"), target, &[]);
    run_settings.request.strategy = Some(RollStrategy::Drain);
    run_settings.request.on_failure = Some(OnFailure::Rollback);
    let (outcome, checkpoint, _) = roll(&cluster, run_settings).await;
    assert!(
        matches!(outcome, Outcome::RolledBack { .. }),
        "{failure_limit:?}: {outcome:?}"
    );
    all_on_old_agents(&cluster, &checkpoint).await;
    assert_eq!(shape(&cluster).await, before, "{failure_limit:?}");
    cluster.sim.shutdown().await;
    checkpoint
}

#[tokio::test(start_paused = true)]
async fn a_failure_within_the_limit_is_tolerated_and_the_one_past_it_rolls_back() {
    let checkpoint = crashing_roll(Some(1)).await;
    assert_eq!(checkpoint.failure_limit, 1);
    assert!(
        !checkpoint.tolerated_failures.is_empty(),
        "the first failure is tolerated: {:?}",
        checkpoint.failure
    );
    assert_eq!(failure_limit::used(&checkpoint.tolerated_failures), 1);
    let failure = checkpoint
        .failure
        .clone()
        .expect("the failure past the limit");
    // The failure past the limit names another app or another agent.
    let apps: HashSet<_> = checkpoint
        .tolerated_failures
        .iter()
        .filter_map(|t| t.app.clone())
        .collect();
    let agents: HashSet<_> = checkpoint
        .tolerated_failures
        .iter()
        .filter_map(|t| t.agent.clone())
        .collect();
    assert!(
        failure.app.is_some_and(|a| !apps.contains(&a))
            || failure.agent.is_some_and(|a| !agents.contains(&a)),
        "{:?} against {:?}",
        checkpoint.failure,
        checkpoint.tolerated_failures
    );
    let logged: Vec<&str> = checkpoint
        .events
        .iter()
        .filter(|e| e.kind == EventKind::FailureTolerated)
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(logged.len(), checkpoint.tolerated_failures.len());
    assert!(
        logged[0].starts_with("failure tolerated (1 of --failure-limit 1 used): app "),
        "{logged:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn without_a_limit_the_first_failure_rolls_back_and_nothing_is_tolerated() {
    let checkpoint = crashing_roll(None).await;
    assert_eq!(checkpoint.failure_limit, 0);
    assert!(checkpoint.tolerated_failures.is_empty());
    assert!(checkpoint.failure.is_some());
    assert!(
        !checkpoint
            .events
            .iter()
            .any(|e| e.kind == EventKind::FailureTolerated)
    );
}
