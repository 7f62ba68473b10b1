//! The built-in `production` scenario, a whole roll in this process on
//! paused tokio time, both groups in one plan: a mixed instances group
//! with Spot and an instance in Standby, an on-demand group with a warm
//! pool and an instance protected from scale-in, each with a termination
//! hook roller completes and a log shipper's it waits for, with the
//! environment its `[roller]` table gives. Both strategies roll it
//! hands-off: every agent replaced, no outage, no app below its floor,
//! and each group's launch source, hooks and warm pool as they were.

use std::collections::HashSet;

use super::in_process::{roll, settings};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::ports::auto_scaling::{
    AutoScaling, AutoScalingGroup, LifecycleHook, LifecycleState, WarmPool,
};
use crate::roll::ports::marathon::Marathon;
use crate::roll::record::checkpoint::Checkpoint;
use crate::roll::record::env::GroupSpec;
use crate::sim::Scenario;
use crate::sim::world::ImageEffect;
use crate::simulated::SimulatedCluster;

fn events_saying<'c>(checkpoint: &'c Checkpoint, text: &str) -> Vec<&'c str> {
    checkpoint
        .events
        .iter()
        .filter(|e| e.message.contains(text))
        .map(|e| e.message.as_str())
        .collect()
}

/// Each group as the roll found it: its spec, what DescribeAutoScalingGroups,
/// DescribeLifecycleHooks and DescribeWarmPool said.
type Before = Vec<(
    GroupSpec,
    AutoScalingGroup,
    Vec<LifecycleHook>,
    Option<WarmPool>,
)>;

/// The `production` cluster after five settled minutes, its environment
/// naming both groups to their desired capacity, and each group as it is.
async fn production(dir: &std::path::Path) -> (SimulatedCluster, Before) {
    let scenario = Scenario::load("production").expect("built-in scenario");
    let mut cluster = SimulatedCluster::start(&scenario, 1.0, dir.to_path_buf())
        .await
        .expect("simulated cluster");
    tokio::time::sleep(std::time::Duration::from_secs(300)).await;
    let hooks = cluster.env.groups[0].complete_lifecycle_hooks.clone();
    assert_eq!(hooks, ["roller-drain"], "[roller] names roller's hook");
    // One plan for both groups, each to its desired capacity (the
    // instance in Standby comes back as one more to replace, not one more
    // to keep).
    cluster.env.groups = scenario
        .groups()
        .map(|g| GroupSpec {
            asg: g.name.clone(),
            target: Some(g.desired_capacity),
            select: None,
            complete_lifecycle_hooks: hooks.clone(),
        })
        .collect();
    let mut before = Vec::new();
    for spec in &cluster.env.groups {
        let group = cluster.aws.describe_group(&spec.asg).await.expect("group");
        let hooks = cluster.aws.lifecycle_hooks(&spec.asg).await.expect("hooks");
        let pool = cluster.aws.warm_pool(&spec.asg).await.expect("warm pool");
        before.push((spec.clone(), group, hooks, pool));
    }
    assert!(
        before.iter().any(|(_, _, _, pool)| pool.is_some()),
        "the scenario has a warm pool"
    );
    (cluster, before)
}

/// Each group's shape is as it was: launch source (a mixed instances
/// policy's template version, overrides and distribution included),
/// lifecycle hooks, the warm pool's configuration.
async fn shape_as_before(cluster: &SimulatedCluster, before: &Before, name: &str) {
    for (spec, group, hooks, pool) in before {
        let asg = &spec.asg;
        let after = cluster.aws.describe_group(asg).await.expect("group");
        assert_eq!(after.launch_source, group.launch_source, "{name} {asg}");
        let hooks_after = cluster.aws.lifecycle_hooks(asg).await.expect("hooks");
        assert_eq!(&hooks_after, hooks, "{name} {asg}");
        let pool_after = cluster.aws.warm_pool(asg).await.expect("warm pool");
        let config = |p: &WarmPool| {
            (
                p.pool_state.clone(),
                p.min_size,
                p.max_group_prepared_capacity,
            )
        };
        assert_eq!(
            pool_after.as_ref().map(config),
            pool.as_ref().map(config),
            "{name} {asg}: the warm pool's configuration"
        );
    }
}

async fn rolls_hands_off(strategy: RollStrategy) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cluster, before) = production(dir.path()).await;
    let mut s = settings(&dir.path().join("roll.json"), 0, &[]);
    s.request.target = None;
    s.request.strategy = Some(strategy);

    let (outcome, checkpoint, _) = roll(&cluster, s).await;

    let name = format!("{strategy:?}");
    assert!(
        matches!(outcome, Outcome::Complete { .. }),
        "{name}: {outcome:?}"
    );
    for (spec, group, _, _) in &before {
        let asg = &spec.asg;
        let originals: HashSet<&str> = group.instances.iter().map(|i| i.id.as_str()).collect();
        let after = cluster.aws.describe_group(asg).await.expect("group");
        let left: Vec<&str> = after
            .instances
            .iter()
            .map(|i| i.id.as_str())
            .filter(|id| originals.contains(id))
            .collect();
        assert!(left.is_empty(), "{name} {asg}: originals left {left:?}");
        assert_eq!(after.desired_capacity, spec.target.unwrap(), "{name} {asg}");
    }
    shape_as_before(&cluster, &before, &name).await;
    assert!(
        !events_saying(
            &checkpoint,
            "lifecycle hook roller-drain: completed with CONTINUE"
        )
        .is_empty(),
        "{name}: roller's hook was never completed"
    );
    assert!(
        !events_saying(&checkpoint, "exit standby").is_empty(),
        "{name}: the Standby instance was not taken out"
    );
    let report = cluster.sim.report();
    if strategy == RollStrategy::Drain {
        // Every group's old agents are under maintenance before the first
        // move: no task moved off one group lands on an old agent of the
        // other, to be moved again (the serial strategy, the write-up's
        // loop, windows one agent at a time and may).
        let twice: Vec<_> = report.task_moves.iter().filter(|m| m.moves > 1).collect();
        assert!(twice.is_empty(), "{name}: moved more than once: {twice:?}");
        assert!(!report.task_moves.is_empty(), "{name}: no task moved");
    }
    assert_eq!(report.apps_with_outage, 0, "{name}: {}", report.summary());
    assert_eq!(
        report.apps_ever_below_floor,
        0,
        "{name}: {}",
        report.summary()
    );
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_production_group_rolls_hands_off_with_the_drain() {
    rolls_hands_off(RollStrategy::Drain).await;
}

#[tokio::test(start_paused = true)]
async fn the_production_group_rolls_hands_off_one_by_one() {
    rolls_hands_off(RollStrategy::Serial).await;
}

/// A bad image published on both groups (version 2 of each template: the
/// mixed instances policy's and the warm group's) rolls back: every task
/// back on an original agent, each group's launch source, hooks and warm
/// pool as before the operator published it, no instance of the bad
/// image left in the group or waiting warm, and no instance left held by
/// roller's termination hook (the rollback completes it for the new
/// instances it terminates; an hour's wait otherwise).
#[tokio::test(start_paused = true)]
async fn a_bad_image_on_the_production_groups_rolls_back_to_their_shape() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cluster, before) = production(dir.path()).await;
    let old_agents: HashSet<String> = cluster
        .sim
        .world()
        .with(|w| w.agents().into_iter().map(|a| a.id).collect());
    cluster.sim.world().with(|w| {
        w.set_bad_image("2", ImageEffect::Unhealthy)
            .expect("the fault");
        for (spec, _, _, _) in &before {
            w.set_group_launch_template_version(&spec.asg, "2")
                .expect("version 2");
        }
    });
    let mut s = settings(&dir.path().join("roll.json"), 0, &[]);
    s.request.target = None;
    s.request.strategy = Some(RollStrategy::Drain);

    let (outcome, checkpoint, _) = roll(&cluster, s).await;

    let name = "bad image";
    assert!(
        matches!(outcome, Outcome::RolledBack { .. }),
        "{outcome:?}\n{:#?}",
        checkpoint.events.iter().rev().take(12).collect::<Vec<_>>()
    );
    shape_as_before(&cluster, &before, name).await;
    // Past the log shipper's five minutes, within roller-drain's hour.
    tokio::time::sleep(std::time::Duration::from_secs(600)).await;
    for (spec, group, _, _) in &before {
        let asg = &spec.asg;
        let source = group.launch_source.as_ref();
        let originals: HashSet<&str> = group.instances.iter().map(|i| i.id.as_str()).collect();
        let after = cluster.aws.describe_group(asg).await.expect("group");
        for i in &after.instances {
            assert_ne!(
                i.lifecycle_state,
                LifecycleState::TerminatingWait,
                "{asg}: {} still held by a termination hook",
                i.id
            );
            if i.lifecycle_state.is_leaving() {
                continue;
            }
            assert!(originals.contains(i.id.as_str()), "{asg}: {} is new", i.id);
            assert!(
                !i.is_outdated(source),
                "{asg}: {} not on the old image",
                i.id
            );
        }
        let in_service = after
            .instances
            .iter()
            .filter(|i| i.lifecycle_state == LifecycleState::InService)
            .count();
        assert_eq!(in_service, originals.len(), "{asg}: {after:?}");
        if let Some(pool) = cluster.aws.warm_pool(asg).await.expect("warm pool") {
            for w in pool.instances.iter().filter(|w| !w.is_leaving()) {
                assert!(
                    !w.is_outdated(source),
                    "{asg}: {} waits warm on the bad image",
                    w.id
                );
            }
        }
    }
    let apps = cluster.marathon.apps().await.expect("apps");
    for app in apps.iter() {
        for task in &app.tasks {
            let agent = task.agent_id.as_deref().unwrap_or_default();
            assert!(
                old_agents.contains(agent),
                "{} runs on new agent {agent}",
                app.id
            );
        }
    }
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    cluster.sim.shutdown().await;
}
