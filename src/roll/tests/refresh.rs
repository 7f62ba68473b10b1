//! Another refresher at work: an Instance Refresh started on the group
//! (by Terraform, the console) refuses a roll before it begins, and one
//! started during a roll pauses it before its next termination; once the
//! refresh has ended, the rerun finishes the roll. In this process on
//! paused tokio time, for both strategies.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::in_process::{cluster, in_service, settings};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::error::RollError;
use crate::roll::ports::PortSet;
use crate::roll::ports::auto_scaling::AutoScaling;
use crate::roll::record::RUN_ID_TAG;
use crate::roll::record::checkpoint::Checkpoint;
use crate::roll::run::{RunError, RunResult, RunSettings, run};
use crate::simulated::SimulatedCluster;

const GROUP: &str = "mesos-agents-demo";

async fn roll(
    cluster: &SimulatedCluster,
    settings: RunSettings,
    observer: impl FnMut(&Checkpoint) + Send,
) -> Result<RunResult, RunError> {
    let ports = PortSet {
        aws: &cluster.aws,
        mesos: &cluster.mesos,
        marathon: &cluster.marathon,
        pager: &cluster.pager,
        services: &crate::roll::ports::services::NoServices,
    };
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    run(ports, &cluster.env, settings, stop, Box::new(observer)).await
}

#[tokio::test(start_paused = true)]
async fn a_refresh_at_work_refuses_the_roll_before_anything_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo", dir.path()).await;
    let before = cluster.aws.describe_group(GROUP).await.expect("describe");
    cluster
        .sim
        .world()
        .with(|w| w.start_instance_refresh(GROUP).expect("started"));
    let path = dir.path().join("roll.json");
    let n = u32::try_from(before.instances.len()).unwrap();
    let result = roll(&cluster, settings(&path, n, &[]), |_| {}).await;
    let Err(RunError::Roll(RollError::Refused(why))) = &result else {
        panic!("not refused: {:?}", result.map(|_| "a result"));
    };
    let why = why.to_string();
    assert!(
        why.contains(&format!("ASG {GROUP} has an instance refresh")),
        "{why}"
    );
    assert!(
        why.contains("InProgress") && why.contains("cancel-instance-refresh"),
        "{why}"
    );
    let after = cluster.aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(after.desired_capacity, before.desired_capacity);
    assert_eq!(after.suspended_processes, before.suspended_processes);
    assert_eq!(after.tag(RUN_ID_TAG), None);
    assert!(!path.exists(), "a refused roll leaves no checkpoint");
}

#[tokio::test(start_paused = true)]
async fn a_refresh_started_during_the_roll_pauses_it_before_a_termination() {
    for strategy in [RollStrategy::Drain, RollStrategy::Serial] {
        let dir = tempfile::tempdir().expect("tempdir");
        let cluster = cluster("demo", dir.path()).await;
        let originals = in_service(&cluster).await;
        let path = dir.path().join("roll.json");
        let n = u32::try_from(originals.len()).unwrap();
        let with = |strategy| {
            let mut s = settings(&path, n, &[]);
            s.request.strategy = Some(strategy);
            s
        };
        // The new agents up, no old instance terminated yet: someone
        // starts a refresh.
        let started = AtomicBool::new(false);
        let world = cluster.sim.world();
        let observer = |c: &Checkpoint| {
            if !c.groups[0].new_agents.is_empty() && !started.swap(true, Ordering::SeqCst) {
                world.with(|w| w.start_instance_refresh(GROUP).expect("started"));
            }
        };
        let result = roll(&cluster, with(strategy), observer)
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
        let name = strategy.as_str();
        let Outcome::Paused { reason, .. } = &outcome else {
            panic!("{name}: not paused: {outcome:?}");
        };
        assert!(reason.contains("instance refresh"), "{name}: {reason}");
        assert!(
            reason.contains("Nothing more is terminated"),
            "{name}: {reason}"
        );
        assert!(
            checkpoint.groups[0]
                .instances
                .iter()
                .all(|i| !i.terminate_sent),
            "{name}: a termination went out beside the refresh"
        );
        assert_eq!(cluster.sim.report().instances_terminated, 0, "{name}");

        // The refresh cancelled and ended: the rerun finishes the roll.
        cluster
            .sim
            .world()
            .with(|w| w.cancel_instance_refresh(GROUP).expect("cancelled"));
        tokio::time::sleep(Duration::from_secs(31)).await;
        let result = roll(&cluster, with(strategy), |_| {})
            .await
            .expect("the rerun");
        let RunResult::Finished { outcome, .. } = result else {
            panic!("nothing to do");
        };
        assert!(
            matches!(outcome, Outcome::Complete { .. }),
            "{name}: {outcome:?}"
        );
        let now = in_service(&cluster).await;
        assert_eq!(now.len(), originals.len(), "{name}");
        assert!(now.is_disjoint(&originals), "{name}: an original is left");
    }
}
