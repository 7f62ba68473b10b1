//! A surge cut short: the `hazards` world's single-instance app must be
//! surged before its agent goes. The run is stopped right after the surge
//! is recorded (as a SIGTERM or crash would leave it), then resumed from
//! what the checkpoint held at that moment; the resumed run must finish
//! the surge (never a second one), put the app back to one instance, and
//! cause no outage. Real clients against the simulator on loopback, on
//! paused tokio time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::roll::engine::{Outcome, RunOptions, Runner};
use crate::roll::ports::marathon::Marathon;
use crate::roll::preflight::{Preflight, Request, preflight};
use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore, SurgeState};
use crate::sim::Scenario;
use crate::simulated::SimulatedCluster;

const SINGLE: &str = "/hazard/single";

#[tokio::test(start_paused = true)]
async fn a_run_stopped_mid_surge_is_finished_by_the_resume_with_the_app_back_to_one_instance() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = SimulatedCluster::start(
        &Scenario::load("hazards").expect("hazards"),
        1.0,
        dir.path().to_path_buf(),
    )
    .await
    .expect("simulated cluster");
    tokio::time::sleep(Duration::from_secs(300)).await;
    let marathon = &cluster.marathon;
    let env = &cluster.env;
    let request = Request {
        target: Some(6),
        floor: Some(crate::roll::decide::safety::Floor::One),
        strategy: Some(crate::roll::decide::roll_plan::RollStrategy::Serial),
        ..Request::default()
    };
    // The never-healthy app may not be relaunched during this test: only
    // the single-instance app's agent is replaced, the first in the plan.
    let Preflight::Ready(first, _) = preflight(cluster.ports(), env, &request, "surge-run".into())
        .await
        .expect("preflight")
    else {
        panic!("nothing selected");
    };
    let single = marathon.app(SINGLE).await.expect("the single app");
    assert_eq!(single.tasks.len(), 1);
    let single_agent = single.tasks[0].agent_id.clone().expect("placed");
    let mut checkpoint = *first;
    let keep = checkpoint.groups[0]
        .instances
        .iter()
        .find(|i| i.agent_id == single_agent)
        .expect("the single app's instance")
        .id
        .clone();
    // Replace only that instance (a selection of one).
    checkpoint.groups[0].instances.retain(|i| i.id == keep);
    checkpoint.plan.phases[2].steps.retain(|s| s.id == keep);

    let path = dir.path().join("surge.json");
    let ports = cluster.ports();

    // First run: stopped as soon as the surge's intent is on disk; the
    // checkpoint as it was then is what a crash would have left.
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let at_intent: Arc<Mutex<Option<Checkpoint>>> = Arc::new(Mutex::new(None));
    let seen = at_intent.clone();
    let observer = Box::new(move |c: &Checkpoint| {
        let mut seen = seen.lock().unwrap();
        if seen.is_none()
            && c.groups[0]
                .surges
                .iter()
                .any(|s| s.state == SurgeState::ScalingUp)
        {
            *seen = Some(c.clone());
            let _ = stop_tx.send(true);
        }
    });
    let (outcome, _) = Runner::new(
        ports,
        env,
        RunOptions::default(),
        checkpoint,
        CheckpointStore::file(path.clone()),
        stop,
        observer,
    )
    .expect("runner")
    .run()
    .await
    .expect("first run");
    assert!(matches!(outcome, Outcome::Stopped), "{outcome:?}");
    let crashed = at_intent
        .lock()
        .unwrap()
        .clone()
        .expect("a surge was recorded");
    assert_eq!(crashed.groups[0].surges.len(), 1);
    assert_eq!(crashed.groups[0].surges[0].app, SINGLE);

    // Resume from the intent-time checkpoint.
    let (_tx, stop) = tokio::sync::watch::channel(false);
    let (outcome, done) = Runner::new(
        ports,
        env,
        RunOptions::default(),
        crashed,
        CheckpointStore::file(path.clone()),
        stop,
        Box::new(|_: &Checkpoint| {}),
    )
    .expect("runner")
    .run()
    .await
    .expect("resume");
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert_eq!(
        done.groups[0].surges.len(),
        1,
        "one surge, finished, never a second"
    );
    assert_eq!(done.groups[0].surges[0].state, SurgeState::Done);
    let report = cluster.sim.report();
    let single = report.apps.iter().find(|a| a.id == SINGLE).unwrap();
    assert_eq!(single.instances, 1);
    assert_eq!(single.at_zero_ms, 0, "{}", report.summary());
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    cluster.sim.shutdown().await;
}
