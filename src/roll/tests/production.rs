//! The built-in `production` scenario, a whole roll in this process on
//! paused tokio time: a mixed instances group with Spot, a termination
//! hook roller completes and a log shipper's it waits for, a launch hook,
//! one instance in Standby and one protected from scale-in, all at once,
//! with the environment its `[roller]` table gives. Both strategies roll
//! it hands-off: every agent replaced, no outage, no app below its floor,
//! and the group's launch source and hooks as they were.

use std::collections::HashSet;

use super::in_process::{roll, settings};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::ports::auto_scaling::AutoScaling;
use crate::roll::record::checkpoint::Checkpoint;
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
    let cluster = SimulatedCluster::start(&scenario, 1.0, dir.path().to_path_buf())
        .await
        .expect("simulated cluster");
    tokio::time::sleep(std::time::Duration::from_secs(300)).await;
    let asg = cluster.env.asg().to_string();
    let before = cluster.aws.describe_group(&asg).await.expect("group");
    let hooks_before = cluster.aws.lifecycle_hooks(&asg).await.expect("hooks");
    let originals: HashSet<String> = before.instances.iter().map(|i| i.id.clone()).collect();
    assert_eq!(originals.len(), 7, "six in service and one in Standby");
    let mut s = settings(&dir.path().join("roll.json"), 6, &[]);
    s.request.strategy = Some(strategy);

    let (outcome, checkpoint, _) = roll(&cluster, s).await;

    let name = format!("{strategy:?}");
    assert!(
        matches!(outcome, Outcome::Complete { .. }),
        "{name}: {outcome:?}"
    );
    let after = cluster.aws.describe_group(&asg).await.expect("group");
    let left: Vec<&str> = after
        .instances
        .iter()
        .map(|i| i.id.as_str())
        .filter(|id| originals.contains(*id))
        .collect();
    assert!(left.is_empty(), "{name}: originals left {left:?}");
    assert_eq!(after.desired_capacity, 6, "{name}");
    assert_eq!(after.launch_source, before.launch_source, "{name}");
    let hooks_after = cluster.aws.lifecycle_hooks(&asg).await.expect("hooks");
    assert_eq!(hooks_after, hooks_before, "{name}");
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
