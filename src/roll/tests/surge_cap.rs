//! Capped surges (`--max-surge`, or the group's instance maintenance
//! policy): whole drain rolls in batches, in this process on paused tokio
//! time, checked against the simulator's ground truth (its monitor looks
//! at every change of every group): never more instances pending or in
//! service than the cap allows, every moved task moved exactly once, no
//! app below its floor, no original left.

use std::time::Duration;

use super::in_process::{app_counts, cluster, in_service, settings};
use crate::plan;
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore};
use crate::roll::record::env::{Environment, MaxSurge};
use crate::roll::run::{RunResult, RunSettings, run};
use crate::sim::Scenario;
use crate::sim::scenario::MaintenancePolicySpec;
use crate::simulated::SimulatedCluster;

/// Rolls every agent of `cluster` (drain, the default) with `env`,
/// `observer` seeing every checkpoint write; the outcome and the last
/// checkpoint.
async fn roll_with(
    cluster: &SimulatedCluster,
    env: &Environment,
    target: u32,
    observer: Box<dyn FnMut(&Checkpoint) + Send + '_>,
) -> (Outcome, Checkpoint) {
    let path = cluster.env.checkpoint_dir.join("surge.json");
    let mut settings: RunSettings = settings(&path, target, &[]);
    settings.request.strategy = Some(RollStrategy::Drain);
    settings.checkpoint = CheckpointStore::file(&path);
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let result = run(cluster.ports(), env, settings, stop, observer)
        .await
        .expect("the run");
    let RunResult::Finished {
        outcome,
        checkpoint,
        ..
    } = result
    else {
        panic!("nothing to do");
    };
    (outcome, *checkpoint)
}

/// Rolls every agent of `cluster` with `env` to its end, which must be
/// complete.
async fn roll(cluster: &SimulatedCluster, env: &Environment, target: u32) -> Checkpoint {
    let (outcome, checkpoint) =
        roll_with(cluster, env, target, Box::new(|_: &Checkpoint| {})).await;
    assert!(
        matches!(outcome, Outcome::Complete { .. }),
        "{outcome:?}\n{}",
        plan::tree(&checkpoint.plan)
    );
    checkpoint
}

/// Every Marathon task of `cluster`, with the agent it runs on.
async fn tasks(cluster: &SimulatedCluster) -> Vec<(String, String)> {
    use crate::roll::ports::marathon::Marathon;
    cluster
        .marathon
        .apps()
        .await
        .expect("apps")
        .iter()
        .flat_map(|a| &a.tasks)
        .map(|t| (t.id.clone(), t.agent_id.clone().unwrap_or_default()))
        .collect()
}

/// What every capped roll must leave: the cap never passed, each task
/// moved once, no outage, no app below its floor, every original gone,
/// every app at its count.
async fn assert_capped_end(
    cluster: &SimulatedCluster,
    ceiling: u32,
    originals: &std::collections::HashSet<String>,
    counts: &std::collections::BTreeMap<String, u32>,
) {
    let report = cluster.sim.report();
    let group = &report.groups[0];
    assert!(
        group.peak_instances <= ceiling,
        "{} instances at once, above the ceiling {ceiling}",
        group.peak_instances
    );
    let most = report.task_moves.iter().map(|m| m.moves).max().unwrap_or(0);
    assert_eq!(most, 1, "a task moved more than once");
    assert!(!report.task_moves.is_empty(), "nothing moved");
    assert_eq!(report.apps_with_outage, 0);
    assert_eq!(
        report.total_below_floor_ms, 0,
        "an app went below its floor"
    );
    let now = in_service(cluster).await;
    assert_eq!(now.len(), originals.len());
    assert!(
        now.is_disjoint(originals),
        "an original is still in service"
    );
    assert_eq!(&app_counts(cluster), counts);
}

#[tokio::test(start_paused = true)]
async fn msr_55_capped_at_ten_percent_rolls_in_batches_of_six_never_above_61_instances() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("msr-55", dir.path()).await;
    let originals = in_service(&cluster).await;
    let counts = app_counts(&cluster);
    let mut env = cluster.env.clone();
    env.max_surge = Some(MaxSurge::Percent(10));
    let done = roll(&cluster, &env, 55).await;

    let group = &done.groups[0];
    let surge = group.surge.clone().expect("a capped surge");
    assert_eq!((surge.cap, surge.ceiling, surge.batches), (6, 61, 10));
    let tree = plan::tree(&done.plan);
    for batch in 2..=10 {
        assert!(tree.contains(&format!("batch-{batch}")), "{tree}");
    }
    // The old agents are far from full (about a third of each's CPUs):
    // the first batch took in more than its 6, the batches grew, and far
    // fewer than 10 opened old agents.
    let opened_by = |b: u32| group.instances.iter().filter(|i| i.batch == b).count();
    let sizes: Vec<usize> = (1..=10).map(opened_by).collect();
    assert!(sizes[0] > 6, "the first batch took nothing in: {sizes:?}");
    let opening = sizes.iter().filter(|&&n| n > 0).count();
    assert!(
        opening <= 4,
        "{opening} batches opened old agents: {sizes:?}\n{tree}"
    );
    // Every old agent but the last 6 went without a decrement, the
    // group launching one in its place; the last 6 brought it to 55.
    let replaced = group.instances.iter().filter(|i| i.replaced).count();
    assert_eq!(replaced, 55 - 6, "{sizes:?}");
    assert_capped_end(&cluster, 61, &originals, &counts).await;
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_groups_instance_maintenance_policy_caps_the_surge_when_no_flag_is_given() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut scenario = Scenario::load("demo").expect("demo");
    scenario.group.instance_maintenance_policy = Some(MaintenancePolicySpec {
        min_healthy_percentage: 90,
        max_healthy_percentage: 120,
    });
    let cluster = SimulatedCluster::start(&scenario, 1.0, dir.path().to_path_buf())
        .await
        .expect("simulated cluster");
    tokio::time::sleep(Duration::from_secs(300)).await;
    let originals = in_service(&cluster).await;
    let size = u32::try_from(originals.len()).unwrap();
    let counts = app_counts(&cluster);
    let done = roll(&cluster, &cluster.env.clone(), size).await;

    let surge = done.groups[0].surge.clone().expect("the policy's cap");
    // 20 % of the group's size, rounded down (the policy is a ceiling).
    let cap = (size * 20 / 100).max(1);
    assert_eq!(surge.cap, cap);
    assert!(surge.from.contains("MaxHealthyPercentage 120"), "{surge:?}");
    assert!(surge.batches > 1, "{surge:?}");
    // MinHealthyPercentage 90 of 12 keeps 11 of the 14 at most up: 3
    // terminating at once over 3 AZs, 1 per AZ (below the default 5).
    assert_eq!(surge.min_healthy_bound, Some(1));
    assert_eq!(done.max_unavailable, 1);
    assert_capped_end(&cluster, size + cap, &originals, &counts).await;
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_bad_image_in_the_first_batch_rolls_back_and_leaves_the_later_batches_tasks_where_they_were()
 {
    use super::rollback::{all_on_old_agents, failing_once_registered, shape};
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo", dir.path()).await;
    let before = shape(&cluster).await;
    let size = u32::try_from(before.instances.len()).unwrap();
    // Every task and the agent it runs on, before the roll.
    let tasks_before = tasks(&cluster).await;
    let mut env = cluster.env.clone();
    // One at a time: the first batch's one new agent takes in a few old
    // agents' tasks, not every old agent's.
    env.max_surge = Some(MaxSurge::Instances(1));
    let (outcome, checkpoint) = roll_with(
        &cluster,
        &env,
        size,
        Box::new(failing_once_registered(&cluster, true)),
    )
    .await;
    assert!(
        matches!(outcome, Outcome::RolledBack { .. }),
        "{outcome:?}\n{}",
        plan::tree(&checkpoint.plan)
    );
    let group = &checkpoint.groups[0];
    assert_eq!(group.surge.as_ref().map(|s| s.batches), Some(size));
    assert_eq!(group.opened_batches, 1, "a later batch opened");
    assert!(group.instances.iter().all(|i| !i.terminate_sent));
    assert_eq!(shape(&cluster).await, before);
    all_on_old_agents(&cluster, &checkpoint).await;
    // The later batches' old agents kept every task they had: not one
    // was moved off them and back.
    let later: std::collections::HashSet<&str> = group
        .instances
        .iter()
        .filter(|i| i.batch > 1)
        .map(|i| i.agent_id.as_str())
        .collect();
    let now: std::collections::HashSet<String> = tasks(&cluster)
        .await
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let kept: Vec<&String> = tasks_before
        .iter()
        .filter(|(_, agent)| later.contains(agent.as_str()))
        .map(|(task, _)| task)
        .collect();
    assert!(!kept.is_empty(), "no task on a later batch's agent");
    for task in kept {
        assert!(
            now.contains(task),
            "{task} was moved off a later batch's agent"
        );
    }
    assert_eq!(cluster.sim.report().apps_with_outage, 0);
    assert!(cluster.sim.report().groups[0].peak_instances <= size + 1);
    cluster.sim.shutdown().await;
}
