//! `roller abandon` of rolls left in awkward places, in process against
//! the simulator: what it undoes, and that it goes on past what it cannot.

use std::collections::BTreeMap;

use super::in_process::{app_counts, cluster, roll, settings};
use crate::roll::abandon::{Abandoned, abandon, tagged_groups};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::{Outcome, RunOptions, Runner};
use crate::roll::ports::auto_scaling::AutoScaling;
use crate::roll::ports::marathon::Marathon;
use crate::roll::record::RUN_ID_TAG;
use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore, OnFailure, SurgeState};
use crate::simulated::SimulatedCluster;

/// `roller abandon` of `checkpoint` (kept at `path`) on every group that
/// carries its tag, which must undo everything: what it did, and the
/// checkpoint it left.
pub(super) async fn abandon_all(
    cluster: &SimulatedCluster,
    checkpoint: Checkpoint,
    path: &std::path::Path,
) -> (Abandoned, Checkpoint) {
    let groups = tagged_groups(&cluster.aws, &checkpoint)
        .await
        .expect("tagged");
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let runner = Runner::new(
        cluster.ports(),
        &cluster.env,
        RunOptions::default(),
        checkpoint,
        CheckpointStore::file(path.to_path_buf()),
        stop,
        Box::new(|_: &Checkpoint| {}),
    )
    .expect("a runner");
    abandon(runner, &groups).await.expect("abandon undoes all")
}

/// Each app's instance count before the roll, and the roll paused on the
/// `hazards` scenario's failure (`--on-failure pause`) with a surge whose
/// deployment never ends (its new task is never healthy).
async fn paused_with_a_stuck_surge(
    cluster: &SimulatedCluster,
    path: &std::path::Path,
) -> (BTreeMap<String, u32>, Checkpoint) {
    let counts = app_counts(cluster);
    let target = u32::try_from(super::in_process::in_service(cluster).await.len()).unwrap();
    let mut first = settings(path, target, &[]);
    first.request.strategy = Some(RollStrategy::Drain);
    first.request.on_failure = Some(OnFailure::Pause);
    let (outcome, checkpoint, _) = roll(cluster, first).await;
    assert!(matches!(outcome, Outcome::Paused { .. }), "{outcome:?}");
    (counts, checkpoint)
}

// The operator's report: on `hazards` paused with `--on-failure pause`,
// abandon met Marathon's 409 (the surge's own deployment holds the app),
// exited 1 and left the run's tag, so the paused roll still resumed.
#[tokio::test(start_paused = true)]
async fn abandon_cancels_a_surge_deployment_that_never_ends_and_undoes_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("hazards", dir.path()).await;
    let path = dir.path().join("roll.json");
    let (counts, checkpoint) = paused_with_a_stuck_surge(&cluster, &path).await;
    let open: Vec<String> = checkpoint.groups[0]
        .surges
        .iter()
        .filter(|s| s.state != SurgeState::Done)
        .map(|s| s.app.clone())
        .collect();
    assert!(!open.is_empty(), "the pause left no surge open");
    let mut held = false;
    for app in &open {
        held |= !cluster
            .marathon
            .app(app)
            .await
            .expect("app")
            .deployments
            .is_empty();
    }
    assert!(
        held,
        "no open surge is held by a deployment: nothing to cancel"
    );

    let (abandoned, left) = abandon_all(&cluster, checkpoint, &path).await;
    assert!(
        abandoned
            .lines
            .iter()
            .any(|l| l.contains("surged app(s) back")),
        "{:?}",
        abandoned.lines
    );
    assert!(
        left.events
            .iter()
            .any(|e| e.message.contains("cancel deployment")),
        "the deployment's cancel was not recorded first"
    );
    let group = cluster
        .aws
        .describe_group(cluster.env.asg())
        .await
        .expect("group");
    assert_eq!(group.tag(RUN_ID_TAG), None, "the run's tag is left");
    // Marathon deploys the counts before the surges.
    tokio::time::sleep(std::time::Duration::from_secs(120)).await;
    assert_eq!(
        app_counts(&cluster),
        counts,
        "a surged app kept its extra instance"
    );
    let windows = cluster.sim.world().with(|w| w.maintenance_schedule().len());
    assert_eq!(windows, 0, "maintenance left behind");
    cluster.sim.shutdown().await;
}
