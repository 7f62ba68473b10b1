//! Instances an operator holds out of the group's hands, whole rolls in
//! this process on paused tokio time: one in Standby (`--standby`) and
//! one protected from scale-in (`--protected`), with Instance Refresh's
//! meanings. `terminate` brings the Standby one in and replaces it with
//! its tasks moved; `wait` waits for an operator and pauses when nobody
//! comes, having launched nothing; `ignore` leaves it on the old image
//! and never takes it for a new one.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::in_process::{roll, roll_observed, settings};
use crate::roll::decide::roll_plan::{HELD, RollStrategy};
use crate::roll::engine::Outcome;
use crate::roll::ports::auto_scaling::{AutoScaling, AutoScalingGroup, LifecycleState};
use crate::roll::record::checkpoint::Checkpoint;
use crate::roll::record::held::{ProtectedPolicy, StandbyPolicy};
use crate::sim::Scenario;
use crate::simulated::SimulatedCluster;

const GROUP: &str = "mesos-agents-held";

/// Three agents in service over three AZs, `standby` more in Standby
/// (their agents running tasks), the first `protected` protected from
/// scale-in; two small apps.
fn scenario(standby: u32, protected: u32) -> Scenario {
    let text = format!(
        r#"
description = "three agents, some held out of the group's hands"
seed = 11

[group]
name = "{GROUP}"
min_size = 3
max_size = 8
desired_capacity = 3
standby = {standby}
protected = {protected}

[agent]
cpus = 4
mem = 8192

[[apps]]
id = "/web"
instances = 3
cpus = 0.5
mem = 256
[apps.health_check]
protocol = "HTTP"
interval_s = 10
grace_period_s = 60

[[apps]]
id = "/metrics"
instances = 1
cpus = 0.1
mem = 64
"#
    );
    Scenario::from_toml(&text, "held").expect("valid scenario")
}

async fn cluster(dir: &std::path::Path, standby: u32, protected: u32) -> SimulatedCluster {
    let mut cluster =
        SimulatedCluster::start(&scenario(standby, protected), 1.0, dir.to_path_buf())
            .await
            .expect("simulated cluster");
    cluster.env.poll_interval = Duration::from_secs(30);
    tokio::time::sleep(Duration::from_secs(300)).await;
    cluster
}

async fn group(cluster: &SimulatedCluster) -> AutoScalingGroup {
    cluster.aws.describe_group(GROUP).await.expect("group")
}

fn ids(
    group: &AutoScalingGroup,
    keep: impl Fn(&crate::roll::ports::auto_scaling::GroupInstance) -> bool,
) -> Vec<String> {
    group
        .instances
        .iter()
        .filter(|i| keep(i))
        .map(|i| i.id.clone())
        .collect()
}

fn clean(cluster: &SimulatedCluster) {
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    assert_eq!(report.apps_ever_below_floor, 0, "{}", report.summary());
}

fn held_step_message(checkpoint: &Checkpoint) -> String {
    checkpoint
        .plan
        .steps()
        .find(|(_, s)| s.id.ends_with(HELD))
        .map(|(_, s)| s.message.clone())
        .expect("a held-instances step")
}

#[tokio::test(start_paused = true)]
async fn standby_terminate_takes_the_instance_out_of_standby_and_replaces_it_moving_its_tasks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cluster = cluster(dir.path(), 1, 0).await;
    cluster.env.standby = StandbyPolicy::Terminate;
    let before = group(&cluster).await;
    let standby = ids(&before, |i| i.lifecycle_state == LifecycleState::Standby);
    assert_eq!(standby.len(), 1, "{:?}", before.instances);
    let originals: HashSet<String> = ids(&before, |_| true).into_iter().collect();
    let mut s = settings(&dir.path().join("roll.json"), 3, &[]);
    s.request.strategy = Some(RollStrategy::Drain);

    let (outcome, checkpoint, _) = roll(&cluster, s).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let after = group(&cluster).await;
    let left: Vec<&String> = after
        .instances
        .iter()
        .map(|i| &i.id)
        .filter(|id| originals.contains(*id))
        .collect();
    assert!(left.is_empty(), "originals left: {left:?}");
    assert_eq!(after.desired_capacity, 3);
    let message = held_step_message(&checkpoint);
    assert!(message.contains(&standby[0]), "{message}");
    assert!(
        checkpoint
            .events
            .iter()
            .any(|e| e.message.contains("exit standby") && e.message.contains(&standby[0])),
        "the ExitStandby intent is recorded"
    );
    clean(&cluster);
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn standby_wait_replaces_the_instance_once_an_operator_brings_it_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster(dir.path(), 1, 0).await;
    let before = group(&cluster).await;
    let standby = ids(&before, |i| i.lifecycle_state == LifecycleState::Standby);
    let s = settings(&dir.path().join("roll.json"), 3, &[]);
    // The operator puts it back in service once the roll waits for it.
    let world = cluster.sim.world();
    let back = Arc::new(Mutex::new(false));
    let done = back.clone();
    let instance = standby[0].clone();
    let observer = move |c: &Checkpoint| {
        let mut done = done.lock().unwrap();
        let waiting = c
            .plan
            .steps()
            .any(|(_, s)| s.id.ends_with(HELD) && s.message.contains("(standby = wait)"));
        if !*done && waiting {
            world
                .with(|w| w.exit_standby(GROUP, std::slice::from_ref(&instance)))
                .expect("ExitStandby");
            *done = true;
        }
    };

    let (outcome, checkpoint) = roll_observed(&cluster, s, Box::new(observer)).await;

    assert!(
        *back.lock().unwrap(),
        "the roll never waited for the operator"
    );
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let after = group(&cluster).await;
    assert!(
        after.instance(&standby[0]).is_none(),
        "{:?}",
        after.instances
    );
    assert_eq!(after.desired_capacity, 3);
    assert!(
        held_step_message(&checkpoint).contains("in the roll"),
        "{}",
        held_step_message(&checkpoint)
    );
    clean(&cluster);
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn standby_wait_pauses_naming_the_instance_and_launches_nothing_when_nobody_comes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cluster = cluster(dir.path(), 1, 0).await;
    cluster.env.timeouts.operator = Duration::from_secs(600);
    let before = group(&cluster).await;
    let standby = ids(&before, |i| i.lifecycle_state == LifecycleState::Standby);

    let (outcome, _, _) = roll(&cluster, settings(&dir.path().join("roll.json"), 3, &[])).await;

    let Outcome::Paused { reason, .. } = &outcome else {
        panic!("not paused: {outcome:?}");
    };
    assert!(reason.contains(&standby[0]), "{reason}");
    assert!(reason.contains("exit-standby"), "{reason}");
    let after = group(&cluster).await;
    assert_eq!(after.desired_capacity, 3, "nothing launched while waiting");
    assert_eq!(after.instances.len(), 4);
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn ignore_leaves_the_standby_and_the_protected_instance_on_the_old_image_and_never_new() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cluster = cluster(dir.path(), 1, 1).await;
    cluster.env.standby = StandbyPolicy::Ignore;
    cluster.env.protected = ProtectedPolicy::Ignore;
    let before = group(&cluster).await;
    let standby = ids(&before, |i| i.lifecycle_state == LifecycleState::Standby);
    let protected = ids(&before, |i| i.protected_from_scale_in);
    assert_eq!((standby.len(), protected.len()), (1, 1));
    let s = settings(&dir.path().join("roll.json"), 3, &[]);

    let (outcome, checkpoint, _) = roll(&cluster, s).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let after = group(&cluster).await;
    let state = |id: &str| after.instance(id).map(|i| i.lifecycle_state.clone());
    assert_eq!(state(&standby[0]), Some(LifecycleState::Standby));
    assert_eq!(state(&protected[0]), Some(LifecycleState::InService));
    let in_service = ids(&after, |i| i.lifecycle_state == LifecycleState::InService);
    assert_eq!(in_service.len(), 3, "{:?}", after.instances);
    let record = &checkpoint.groups[0];
    assert_eq!(record.original.left_out, standby);
    assert!(
        record
            .instances
            .iter()
            .all(|i| i.id != protected[0] && i.id != standby[0])
    );
    assert!(
        record.new_agents.iter().all(|a| a.instance != standby[0]),
        "a left-out instance is never taken for a new one"
    );
    clean(&cluster);
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn protected_wait_replaces_the_instance_once_an_operator_lifts_the_protection() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cluster = cluster(dir.path(), 0, 1).await;
    cluster.env.protected = ProtectedPolicy::Wait;
    let before = group(&cluster).await;
    let protected = ids(&before, |i| i.protected_from_scale_in);
    let world = cluster.sim.world();
    let lifted = Arc::new(Mutex::new(false));
    let done = lifted.clone();
    let instance = protected[0].clone();
    let observer = move |c: &Checkpoint| {
        let mut done = done.lock().unwrap();
        let waiting = c
            .plan
            .steps()
            .any(|(_, s)| s.id.ends_with(HELD) && s.message.contains("(protected = wait)"));
        if !*done && waiting {
            world
                .with(|w| w.set_instance_protection(GROUP, std::slice::from_ref(&instance), false))
                .expect("SetInstanceProtection");
            *done = true;
        }
    };

    let (outcome, _) = roll_observed(
        &cluster,
        settings(&dir.path().join("roll.json"), 3, &[]),
        Box::new(observer),
    )
    .await;

    assert!(
        *lifted.lock().unwrap(),
        "the roll never waited for the operator"
    );
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let after = group(&cluster).await;
    assert!(
        after.instance(&protected[0]).is_none(),
        "{:?}",
        after.instances
    );
    clean(&cluster);
    cluster.sim.shutdown().await;
}
