//! Other frameworks' tasks on old agents (the `dcos` scenario's
//! Metronome-like job runs): the drain moves Marathon's tasks; an agent
//! still running a job is waited for (`timeouts.other_tasks`), then
//! drained with Mesos' DRAIN_AGENT within the run's kill grace
//! (`other_tasks = "drain"`), or the roll pauses (`"pause"`). Ground truth
//! from the simulator: every job run either finished by itself or was
//! killed with its own grace, no original left, no Marathon outage.

use std::time::Duration;

use super::in_process::{app_counts, cluster, in_service, roll_to_end};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::record::checkpoint::{Checkpoint, EventKind};
use crate::roll::record::env::{Environment, OtherTasksPolicy};
use crate::simulated::SimulatedCluster;

/// Rolls `cluster` with `env` (drain strategy) to its outcome.
async fn roll_with(
    cluster: &SimulatedCluster,
    env: &Environment,
    path: &std::path::Path,
    target: u32,
) -> (Outcome, Checkpoint) {
    let mut settings = super::in_process::settings(path, target, &[]);
    settings.request.strategy = Some(RollStrategy::Drain);
    roll_to_end(cluster.ports(), env, settings).await
}

#[tokio::test(start_paused = true)]
async fn a_job_run_outlasting_the_drain_is_drained_with_its_own_grace_after_the_wait() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("dcos", dir.path()).await;
    let originals = in_service(&cluster).await;
    let counts = app_counts(&cluster);
    let runs = cluster.sim.world().with(|w| w.job_runs());
    let backup = runs
        .iter()
        .find(|r| r.job == "nightly-backup")
        .expect("run");
    assert_eq!(backup.state, Some("TASK_RUNNING"), "{backup:?}");
    let mut env = cluster.env.clone();
    env.timeouts.other_tasks = Duration::from_secs(10 * 60);
    assert_eq!(env.other_tasks, OtherTasksPolicy::Drain, "the default");

    let target = u32::try_from(originals.len()).unwrap();
    let (outcome, done) = roll_with(&cluster, &env, &dir.path().join("dcos.json"), target).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let now = in_service(&cluster).await;
    assert!(now.is_disjoint(&originals), "an original is left");
    assert_eq!(now.len(), originals.len());
    assert_eq!(app_counts(&cluster), counts);
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    // The backup outlasted the drain and the wait: killed by the drain,
    // with its own 30 s of grace (below max_grace_period's 10 min). The
    // report ended by itself.
    let runs = cluster.sim.world().with(|w| w.job_runs());
    let backup = runs.iter().find(|r| r.job == "nightly-backup").unwrap();
    assert_eq!(backup.state, Some("TASK_KILLED"), "{backup:?}");
    assert_eq!(backup.kill_grace_ms, Some(30_000), "{backup:?}");
    let report_run = runs.iter().find(|r| r.job == "hourly-report").unwrap();
    assert_eq!(report_run.state, Some("TASK_FINISHED"), "{report_run:?}");
    // Said: the wait naming the framework, then the drain's intent.
    let events: Vec<&str> = done.events.iter().map(|e| e.message.as_str()).collect();
    assert!(
        events.iter().any(
            |m| m.contains("task(s) of framework metronome") && m.contains("waiting up to 10m")
        ),
        "{events:#?}"
    );
    assert!(
        done.events.iter().any(|e| e.kind == EventKind::Intent
            && e.message.starts_with("drain agent ")
            && e.message.contains("DRAIN_AGENT with max_grace_period 10m")),
        "{events:#?}"
    );
    // No window left behind (the drained machine's was taken out first).
    let windows = cluster.sim.world().with(|w| w.maintenance_schedule().len());
    assert_eq!(windows, 0);
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn with_other_tasks_pause_the_roll_pauses_naming_the_framework_and_kills_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("dcos", dir.path()).await;
    let target = u32::try_from(in_service(&cluster).await.len()).unwrap();
    let mut env = cluster.env.clone();
    env.timeouts.other_tasks = Duration::from_secs(5 * 60);
    env.other_tasks = OtherTasksPolicy::Pause;

    let (outcome, _) = roll_with(&cluster, &env, &dir.path().join("dcos.json"), target).await;

    let Outcome::Paused { reason, .. } = outcome else {
        panic!("expected a pause: {outcome:?}");
    };
    assert!(
        reason.contains("task(s) of framework metronome"),
        "{reason}"
    );
    assert!(reason.contains("other_tasks = \"pause\""), "{reason}");
    let runs = cluster.sim.world().with(|w| w.job_runs());
    let backup = runs.iter().find(|r| r.job == "nightly-backup").unwrap();
    assert_eq!(
        backup.state,
        Some("TASK_RUNNING"),
        "nothing killed: {backup:?}"
    );
    cluster.sim.shutdown().await;
}
