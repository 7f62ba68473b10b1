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
use crate::roll::ports::auto_scaling::{AutoScaling, WarmPool};
use crate::roll::record::checkpoint::Checkpoint;
use crate::roll::record::env::GroupSpec;
use crate::sim::Scenario;
use crate::simulated::SimulatedCluster;

fn events_saying<'c>(checkpoint: &'c Checkpoint, text: &str) -> Vec<&'c str> {
    checkpoint
        .events
        .iter()
        .filter(|e| e.message.contains(text))
        .map(|e| e.message.as_str())
        .collect()
}

async fn rolls_hands_off(strategy: RollStrategy) {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = Scenario::load("production").expect("built-in scenario");
    let mut cluster = SimulatedCluster::start(&scenario, 1.0, dir.path().to_path_buf())
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
    let mut s = settings(&dir.path().join("roll.json"), 0, &[]);
    s.request.target = None;
    s.request.strategy = Some(strategy);

    let (outcome, checkpoint, _) = roll(&cluster, s).await;

    let name = format!("{strategy:?}");
    assert!(
        matches!(outcome, Outcome::Complete { .. }),
        "{name}: {outcome:?}"
    );
    for (spec, group, hooks, pool) in &before {
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
    assert!(
        before.iter().any(|(_, _, _, pool)| pool.is_some()),
        "the scenario has a warm pool"
    );
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
