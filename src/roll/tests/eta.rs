//! The live view's ETA against a whole roll: what it said at each
//! checkpoint write, against when the roll really ended.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use super::in_process::{cluster, in_service, settings};
use crate::report::changes::Tracker;
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::engine::clock::RollClock;
use crate::roll::record::checkpoint::Checkpoint;
use crate::roll::record::kinds::StepKind;
use crate::roll::run::{RunResult, run};

/// Each checkpoint write's time, its ETA, and whether the drain's bulk
/// wave (wave-2) had begun, over a whole `msr-55` drain; then the end.
async fn etas_of_an_msr_55_drain() -> (Vec<(SystemTime, Duration, bool)>, SystemTime) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("msr-55", dir.path()).await;
    let target = u32::try_from(in_service(&cluster).await.len()).unwrap();
    let mut settings = settings(&dir.path().join("roll.json"), target, &[]);
    settings.request.strategy = Some(RollStrategy::Drain);
    let clock = RollClock::new(cluster.env.time_scale);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (record, tracker_clock) = (seen.clone(), clock.clone());
    let mut tracker = Tracker::new(cluster.env.timeouts.clone(), move || tracker_clock.now());
    let observer = move |checkpoint: &Checkpoint| {
        tracker.changes(checkpoint);
        let bulk = checkpoint.plan.steps().any(|(_, s)| {
            s.status() != crate::plan::Status::Pending
                && s.kind
                    .as_ref()
                    .is_some_and(|k| matches!(k.kind, StepKind::DrainWave { wave } if wave > 1))
        });
        let eta = tracker
            .progress()
            .eta()
            .expect("an ETA once a checkpoint is seen");
        record.lock().unwrap().push((tracker.now(), eta, bulk));
    };
    let (_stop, stop) = tokio::sync::watch::channel(false);
    let result = run(
        cluster.ports(),
        &cluster.env,
        settings,
        stop,
        Box::new(observer),
    )
    .await
    .expect("the run");
    let RunResult::Finished { outcome, .. } = result else {
        panic!("nothing to do");
    };
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let end = clock.now();
    cluster.sim.shutdown().await;
    let seen = seen.lock().unwrap().clone();
    (seen, end)
}

#[tokio::test(start_paused = true)]
async fn the_eta_of_a_drain_follows_what_is_left_of_the_plan_not_the_agents_replaced() {
    let (seen, end) = etas_of_an_msr_55_drain().await;
    let total = end.duration_since(seen[0].0).unwrap();
    let mut checked = 0;
    for &(at, eta, bulk) in &seen {
        let left = end.duration_since(at).unwrap_or_default();
        // Once the bulk wave runs, the pace of the drain is known: within
        // a third of what is really left, or a minute.
        if bulk {
            let error = eta.abs_diff(left);
            assert!(
                error <= (left / 3).max(Duration::from_secs(60)),
                "ETA {eta:?} with {left:?} left (of {total:?})"
            );
            checked += 1;
        }
        // From the start it is never off by more than the whole roll.
        assert!(
            eta <= total * 2,
            "ETA {eta:?} with {left:?} left (of {total:?})"
        );
    }
    assert!(checked > 10, "{checked} checkpoint(s) after wave-2 began");
    // The last write is the finished plan: nothing left.
    assert_eq!(seen.last().unwrap().1, Duration::ZERO);
}
