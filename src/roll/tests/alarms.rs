//! CloudWatch alarms in a whole roll (`alarms`, `--alarm`): a good image
//! whose alarm goes to ALARM mid-bake rolls back with the alarm's reason
//! as the failure; one that goes to ALARM after the bake, before the next
//! termination, rolls back too (as a task failure then would), keeping
//! the old agents not yet terminated; the preflight refuses an unknown
//! name and an alarm already firing; a roll without alarms asks
//! CloudWatch nothing.

use std::sync::{Arc, Mutex};

use super::in_process::{cluster, roll, roll_observed, settings};
use super::rollback::{all_on_old_agents, shape};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::record::checkpoint::{Checkpoint, OnFailure};
use crate::roll::run::{RunSettings, run};
use crate::simulated::SimulatedCluster;

const ALARM: &str = "api-p99-latency";
const REASON: &str = "Threshold Crossed: 3 out of the last 3 datapoints [912.0 (28/11/26 10:41:00), 880.5, 903.1] were greater than the threshold (500.0)";

/// The demo cluster with alarm `ALARM` put (in OK) and named by the
/// environment, and drain settings that roll back on a failure.
async fn watched_cluster(dir: &std::path::Path) -> (SimulatedCluster, RunSettings) {
    let mut cluster = cluster("demo", dir).await;
    put_alarm(&cluster, "OK");
    cluster.env.alarms = Some(vec![ALARM.to_string()]);
    let target = u32::try_from(shape(&cluster).await.instances.len()).unwrap();
    let mut run_settings = settings(&dir.join("roll.json"), target, &[]);
    run_settings.request.strategy = Some(RollStrategy::Drain);
    run_settings.request.on_failure = Some(OnFailure::Rollback);
    (cluster, run_settings)
}

fn put_alarm(cluster: &SimulatedCluster, state: &str) {
    cluster.sim.world().with(|w| {
        w.put_metric_alarm(crate::sim::world::AlarmDefinition {
            name: ALARM.to_string(),
            evaluation_periods: 3,
            comparison_operator: "GreaterThanThreshold".to_string(),
            ..Default::default()
        });
        w.set_alarm_state(ALARM, state, REASON).expect("alarm set");
    });
}

/// Rolls the watched demo cluster; the alarm goes to ALARM at the first
/// checkpoint write `when` holds for. Answers the outcome, the last
/// checkpoint, and the checkpoint as it was when the alarm fired.
async fn roll_firing_when(
    when: impl Fn(&Checkpoint) -> bool + Send + 'static,
) -> (Outcome, Checkpoint, Checkpoint, SimulatedCluster) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cluster, run_settings) = watched_cluster(dir.path()).await;
    let before = shape(&cluster).await;
    let world = cluster.sim.world();
    let fired: Arc<Mutex<Option<Checkpoint>>> = Arc::default();
    let seen = fired.clone();
    let observer = move |c: &Checkpoint| {
        let mut fired = seen.lock().unwrap();
        if fired.is_none() && when(c) {
            world
                .with(|w| w.set_alarm_state(ALARM, "ALARM", REASON))
                .expect("alarm set");
            *fired = Some(c.clone());
        }
    };
    let (outcome, checkpoint) = roll_observed(&cluster, run_settings, Box::new(observer)).await;
    let at_fire = fired.lock().unwrap().clone().expect("the alarm fired");
    assert!(
        matches!(&outcome, Outcome::RolledBack { failure, .. }
            if failure.starts_with(&format!("CloudWatch alarm {ALARM} in ALARM since ")) && failure.ends_with(REASON)),
        "{outcome:?}"
    );
    let failure = checkpoint.failure.clone().expect("the failure recorded");
    assert!(
        failure.key.starts_with("alarm/api-p99-latency/"),
        "{failure:?}"
    );
    assert!(failure.app.is_none() && failure.instance.is_none());
    assert_eq!(cluster.sim.report().apps_with_outage, 0);
    if at_fire.groups[0]
        .instances
        .iter()
        .all(|i| !i.terminate_sent)
    {
        all_on_old_agents(&cluster, &checkpoint).await;
        assert_eq!(shape(&cluster).await, before);
    }
    (outcome, checkpoint, at_fire, cluster)
}

#[tokio::test(start_paused = true)]
async fn a_good_roll_whose_alarm_fires_mid_bake_rolls_back_with_the_alarms_reason() {
    let (_, checkpoint, at_fire, cluster) =
        roll_firing_when(|c| c.groups[0].bake_until_unix_ms.is_some()).await;
    // It fired during the bake: before any old instance went.
    assert!(
        at_fire.groups[0]
            .instances
            .iter()
            .all(|i| !i.terminate_sent)
    );
    assert!(
        checkpoint.groups[0]
            .instances
            .iter()
            .all(|i| !i.terminate_sent),
        "no old instance terminated"
    );
    let report = cluster.sim.report();
    assert!(
        report
            .api_calls
            .get("aws:DescribeAlarms")
            .copied()
            .unwrap_or(0)
            > 1,
        "the preflight and the watch read the alarm: {:?}",
        report.api_calls
    );
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn an_alarm_firing_after_the_bake_stops_the_next_termination_and_rolls_back() {
    let (_, checkpoint, at_fire, cluster) =
        roll_firing_when(|c| c.groups[0].instances.iter().any(|i| i.terminate_sent)).await;
    let sent = |c: &Checkpoint| {
        c.groups[0]
            .instances
            .iter()
            .filter(|i| i.terminate_sent)
            .count()
    };
    assert_eq!(
        sent(&checkpoint),
        sent(&at_fire),
        "no termination after the alarm fired"
    );
    assert!(
        sent(&checkpoint) < checkpoint.groups[0].instances.len(),
        "old agents are left to roll back to"
    );
    cluster.sim.shutdown().await;
}

/// A run's refusal (exit 2), as words.
async fn refused(cluster: &SimulatedCluster, dir: &std::path::Path) -> String {
    let run_settings = settings(&dir.join("roll.json"), 6, &[]);
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let err = run(
        cluster.ports(),
        &cluster.env,
        run_settings,
        stop,
        Box::new(|_: &Checkpoint| {}),
    )
    .await
    .err()
    .expect("refused");
    assert_eq!(err.exit_code(), 2, "{err}");
    err.to_string()
}

#[tokio::test(start_paused = true)]
async fn the_preflight_refuses_an_unknown_alarm_and_one_already_firing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut cluster, _) = watched_cluster(dir.path()).await;
    cluster.env.alarms = Some(vec![ALARM.to_string(), "api-5xx-rte".to_string()]);
    let unknown = refused(&cluster, dir.path()).await;
    assert!(
        unknown.contains("no alarm named api-5xx-rte") && unknown.contains("fix the name"),
        "{unknown}"
    );
    cluster.env.alarms = Some(vec![ALARM.to_string()]);
    put_alarm(&cluster, "ALARM");
    let firing = refused(&cluster, dir.path()).await;
    assert!(
        firing.contains("api-p99-latency (Threshold Crossed")
            && firing.contains("already in ALARM before the roll")
            && firing.contains("cannot tell"),
        "{firing}"
    );
    assert!(!dir.path().join("roll.json").exists(), "nothing written");
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_roll_without_alarms_asks_cloudwatch_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut cluster, run_settings) = watched_cluster(dir.path()).await;
    cluster.env.alarms = None;
    let (outcome, checkpoint, _) = roll(&cluster, run_settings).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert!(checkpoint.alarms.is_empty());
    let report = cluster.sim.report();
    assert_eq!(
        report
            .api_calls
            .get("aws:DescribeAlarms")
            .copied()
            .unwrap_or(0),
        0,
        "{:?}",
        report.api_calls
    );
    cluster.sim.shutdown().await;
}
