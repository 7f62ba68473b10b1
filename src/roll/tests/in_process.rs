//! Whole serial rolls (`--strategy serial`) in this process, on paused
//! tokio time (the drain's are in `drain_tests.rs`): the simulator's
//! clock and the roll's both follow tokio's, so a roll of hours of
//! cluster time runs in a fraction of a second of real time and cannot
//! flake on a loaded machine. roller's real clients talk HTTP to the
//! simulator on loopback, as in production.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::plan::{self, Status};
use crate::roll::decide::safety::Floor;
use crate::roll::engine::{Outcome, RunOptions};
use crate::roll::ports::auto_scaling::{AutoScaling, LifecycleState};
use crate::roll::preflight::Request;
use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore, EventKind, OnFailure};
use crate::roll::run::{RunResult, RunSettings, run};
use crate::sim::Scenario;
use crate::simulated::SimulatedCluster;

/// Boots `scenario` at cluster speed (time_scale 1: paused time needs no
/// compression) and lets it settle for five minutes.
pub(crate) async fn cluster(scenario: &str, dir: &Path) -> SimulatedCluster {
    let scenario = Scenario::load(scenario).expect("built-in scenario");
    let cluster = SimulatedCluster::start(&scenario, 1.0, dir.to_path_buf())
        .await
        .expect("simulated cluster");
    tokio::time::sleep(Duration::from_secs(300)).await;
    cluster
}

pub(crate) fn settings(path: &Path, target: u32, allow_unhealthy: &[&str]) -> RunSettings {
    RunSettings {
        checkpoint: CheckpointStore::file(path),
        request: Request {
            target: Some(target),
            allow_unhealthy: allow_unhealthy.iter().map(|s| s.to_string()).collect(),
            strategy: Some(crate::roll::decide::roll_plan::RollStrategy::Serial),
            ..Request::default()
        },
        options: RunOptions {
            resume_az_rebalance: false,
            resume_command: "roller run (test)".to_string(),
            acknowledge_failure: false,
            rollback_ordered: false,
            live: None,
        },
    }
}

/// Runs the roll to its outcome; also says how often the checkpoint was
/// written (the observer sees every write).
pub(super) async fn roll(
    cluster: &SimulatedCluster,
    settings: RunSettings,
) -> (Outcome, Checkpoint, usize) {
    let writes = Arc::new(AtomicUsize::new(0));
    let counted = writes.clone();
    let observer = Box::new(move |_: &Checkpoint| {
        counted.fetch_add(1, Ordering::Relaxed);
    });
    let (outcome, checkpoint) = roll_observed(cluster, settings, observer).await;
    // The observer's first call is the roll as taken up, not a write.
    let writes = writes.load(Ordering::Relaxed).saturating_sub(1);
    (outcome, checkpoint, writes)
}

/// Runs the roll to its outcome, `observer` seeing every checkpoint write.
pub(super) async fn roll_observed(
    cluster: &SimulatedCluster,
    settings: RunSettings,
    observer: Box<dyn FnMut(&Checkpoint) + Send + '_>,
) -> (Outcome, Checkpoint) {
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    roll_stoppable(cluster, settings, stop, observer).await
}

/// `roll_observed` that stops (as at SIGTERM) once `stop` says so.
pub(super) async fn roll_stoppable(
    cluster: &SimulatedCluster,
    settings: RunSettings,
    stop: tokio::sync::watch::Receiver<bool>,
    observer: Box<dyn FnMut(&Checkpoint) + Send + '_>,
) -> (Outcome, Checkpoint) {
    let result = run(cluster.ports(), &cluster.env, settings, stop, observer)
        .await
        .expect("the run");
    match result {
        RunResult::Finished {
            outcome,
            checkpoint,
            ..
        } => (outcome, *checkpoint),
        RunResult::NothingToDo(message) => panic!("nothing to do: {message}"),
    }
}

/// Runs a roll with `ports` and `env` to its outcome (no stop signal,
/// no observer).
pub(super) async fn roll_to_end<P: crate::roll::ports::Ports>(
    ports: P,
    env: &crate::roll::record::env::Environment,
    settings: RunSettings,
) -> (Outcome, Checkpoint) {
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let result = run(ports, env, settings, stop, Box::new(|_: &Checkpoint| {}))
        .await
        .expect("the run");
    match result {
        RunResult::Finished {
            outcome,
            checkpoint,
            ..
        } => (outcome, *checkpoint),
        RunResult::NothingToDo(message) => panic!("nothing to do: {message}"),
    }
}

/// Each app's instance count, as the simulator has it.
pub(super) fn app_counts(cluster: &SimulatedCluster) -> std::collections::BTreeMap<String, u32> {
    cluster.sim.world().with(|w| {
        w.apps(false)
            .into_iter()
            .map(|a| (a.id, a.instances))
            .collect()
    })
}

pub(crate) async fn in_service(cluster: &SimulatedCluster) -> HashSet<String> {
    cluster
        .aws
        .describe_group(cluster.env.asg())
        .await
        .expect("group")
        .instances
        .into_iter()
        .filter(|i| i.lifecycle_state == LifecycleState::InService)
        .map(|i| i.id)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_whole_demo_roll_on_paused_time_replaces_every_agent_without_an_outage() {
    let real = std::time::Instant::now();
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo", dir.path()).await;
    let originals = in_service(&cluster).await;
    let target = u32::try_from(originals.len()).unwrap();
    let path = dir.path().join("demo.json");
    let started = tokio::time::Instant::now();

    let (outcome, done, writes) = roll(&cluster, settings(&path, target, &[])).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let tree = plan::tree(&done.plan);
    assert!(
        tree.starts_with("roll-mesos-agents-demo (serial strategy) (COMPLETE)"),
        "{tree}"
    );
    assert!(done.plan.steps().all(|(_, s)| s.status == Status::Complete));
    assert!(done.progress.is_empty(), "{:?}", done.progress);
    let now = in_service(&cluster).await;
    assert_eq!(now.len(), originals.len(), "{now:?}");
    assert!(
        now.is_disjoint(&originals),
        "an original is still in service"
    );
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    // The defaults keep every app at its own floor.
    assert_eq!(report.apps_ever_below_floor, 0, "{}", report.summary());
    assert!(done.summary.is_some());
    eprintln!(
        "demo roll: {:.0} cluster s in {:.3} s of real time; {writes} checkpoint writes; API calls {:?}",
        started.elapsed().as_secs_f64(),
        real.elapsed().as_secs_f64(),
        report.api_calls
    );
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_never_healthy_app_pauses_the_roll_and_allow_unhealthy_on_the_resume_lets_it_finish() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("hazards", dir.path()).await;
    let originals = in_service(&cluster).await;
    let target = u32::try_from(originals.len()).unwrap();
    let path = dir.path().join("hazards.json");
    // One-task floors: with capacity floors the never-healthy app is
    // surged, and its surge's deployment can never finish; getting past it
    // once the app is allowed needs a deployment cancel (not yet done).
    let one = |mut s: RunSettings| {
        s.request.floor = Some(Floor::One);
        // Pause on the failure (the default would roll back).
        s.request.on_failure = Some(OnFailure::Pause);
        s
    };

    let (outcome, paused, _) = roll(&cluster, one(settings(&path, target, &[]))).await;
    let Outcome::Paused {
        step,
        reason,
        paged,
    } = outcome
    else {
        panic!("expected a pause: {outcome:?}");
    };
    assert!(step.starts_with("replace/"), "{step}");
    assert!(reason.contains("/hazard/never-healthy"), "{reason}");
    assert!(!paged, "no pager is configured: no page can have gone out");
    let at = paused.find_step(&step).expect("the paused step");
    assert_eq!(paused.plan.step(at).status, Status::Delayed);
    assert_eq!(paused.plan.status(), Status::Delayed);

    // The operator lets the broken app be; the resume records it and every
    // health wait after it leaves that app out.
    let mut resume = settings(&path, target, &["/hazard/never-healthy"]);
    resume.request.target = None;
    resume.request.strategy = None;
    let (outcome, done, _) = roll(&cluster, resume).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert_eq!(done.allow_unhealthy, ["/hazard/never-healthy"]);
    assert!(
        done.events
            .iter()
            .any(|e| e.kind == EventKind::Operator && e.message.contains("--allow-unhealthy"))
    );
    assert!(
        done.plan
            .steps()
            .any(|(_, s)| s.message.contains("allowed unhealthy by --allow-unhealthy")),
        "{}",
        plan::tree(&done.plan)
    );
    assert!(in_service(&cluster).await.is_disjoint(&originals));
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn honoring_min_health_keeps_every_app_at_its_own_floor_through_the_roll() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo", dir.path()).await;
    let originals = in_service(&cluster).await;
    let target = u32::try_from(originals.len()).unwrap();
    let mut honor = settings(&dir.path().join("demo.json"), target, &[]);
    honor.request.floor = Some(Floor::MinHealth);

    let (outcome, done, _) = roll(&cluster, honor).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert!(done.honor_min_health);
    assert!(in_service(&cluster).await.is_disjoint(&originals));
    // The monitor's floor is ceil(instances x minimumHealthCapacity): with
    // the flag, every task moves before its agent goes.
    let report = cluster.sim.report();
    assert_eq!(report.apps_ever_below_floor, 0, "{}", report.summary());
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_standby_instance_under_standby_ignore_is_named_and_left_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut scenario = Scenario::load("demo").expect("built-in scenario");
    scenario.group.standby = 1;
    let mut cluster = SimulatedCluster::start(&scenario, 1.0, dir.path().to_path_buf())
        .await
        .expect("simulated cluster");
    tokio::time::sleep(Duration::from_secs(300)).await;
    let group = cluster
        .aws
        .describe_group(cluster.env.asg())
        .await
        .expect("group");
    let standby: Vec<String> = group
        .instances
        .iter()
        .filter(|i| i.lifecycle_state == LifecycleState::Standby)
        .map(|i| i.id.clone())
        .collect();
    assert_eq!(standby.len(), 1, "{:?}", group.instances);
    let originals = in_service(&cluster).await;
    let target = u32::try_from(originals.len()).unwrap();
    assert_eq!(target, group.desired_capacity);
    let path = dir.path().join("standby.json");

    cluster.env.standby = crate::roll::record::held::StandbyPolicy::Ignore;
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let result = run(
        cluster.ports(),
        &cluster.env,
        settings(&path, target, &[]),
        stop,
        Box::new(|_: &Checkpoint| {}),
    )
    .await
    .expect("the run");
    let RunResult::Finished { outcome, notes, .. } = result else {
        panic!("nothing to do");
    };
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("left out of the roll") && n.contains(&standby[0])),
        "{notes:?}"
    );
    assert!(in_service(&cluster).await.is_disjoint(&originals));
    let after = cluster
        .aws
        .describe_group(cluster.env.asg())
        .await
        .expect("group");
    let left = after.instance(&standby[0]).expect("still in the group");
    assert_eq!(left.lifecycle_state, LifecycleState::Standby);
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
}
