//! A failure on the new agents, found by the watch: the roll stops moving
//! at once and rolls back (or pauses, `--on-failure pause`), and the
//! cluster ends as it started. Checked through the real clients against
//! the simulator's answers, on paused tokio time.

use std::collections::{BTreeMap, HashSet};

use super::in_process::{app_counts, cluster, in_service, roll, settings};
use crate::plan::Status;
use crate::roll::decide::roll_plan::{ROLLBACK, RollStrategy, WAIT_REGISTERED};
use crate::roll::engine::Outcome;
use crate::roll::ports::auto_scaling::{AutoScaling, AutoScalingGroup};
use crate::roll::ports::marathon::Marathon;
use crate::roll::ports::mesos::MesosMaster;
use crate::roll::record::checkpoint::{Checkpoint, EventKind, OnFailure};
use crate::sim::world::Faults;
use crate::simulated::SimulatedCluster;

/// What must be as it was after a rollback: the group (size, instances,
/// MaxSize, processes, tags, launch source) and every app's count.
#[derive(Debug, PartialEq)]
pub(super) struct Shape {
    desired: u32,
    min_size: u32,
    max_size: u32,
    pub(super) instances: HashSet<String>,
    /// Mesos agents registered, maintenance windows and machines down.
    mesos: (usize, usize, usize),
    suspended: Vec<String>,
    tags: Vec<(String, String)>,
    counts: BTreeMap<String, u32>,
}

pub(super) async fn shape(cluster: &SimulatedCluster) -> Shape {
    let group: AutoScalingGroup = cluster
        .aws
        .describe_group(cluster.env.asg())
        .await
        .expect("group");
    let mut suspended: Vec<String> = group
        .suspended_processes
        .iter()
        .map(|p| p.to_string())
        .collect();
    suspended.sort();
    let mut tags: Vec<(String, String)> = group
        .tags
        .iter()
        .map(|t| (t.key.clone(), t.value.clone()))
        .collect();
    tags.sort();
    let mesos = cluster.sim.world().with(|w| {
        (
            w.agents().len(),
            w.maintenance_schedule().len(),
            w.maintenance_status().down.len(),
        )
    });
    Shape {
        desired: group.desired_capacity,
        min_size: group.min_size,
        max_size: group.max_size,
        instances: in_service(cluster).await,
        mesos,
        suspended,
        tags,
        counts: app_counts(cluster),
    }
}

/// An observer that switches `never_healthy_apps` on for every app once the
/// new agents are registered (before anything moves), and off again once
/// the plan has turned around when `heal_on_rollback`: the tasks started
/// from then on (those put on the new agents) fail their checks, as on a
/// bad image, while the old ones stay healthy.
pub(super) fn failing_once_registered(
    cluster: &SimulatedCluster,
    heal_on_rollback: bool,
) -> impl FnMut(&Checkpoint) + Send + 'static {
    let world = cluster.sim.world();
    let (mut broken, mut healed) = (false, false);
    move |checkpoint| {
        let registered = checkpoint
            .plan
            .steps()
            .any(|(_, s)| s.id == WAIT_REGISTERED && s.status == Status::Complete);
        if registered && !broken {
            broken = true;
            world.with(|w| {
                let every_app = w.apps(false).into_iter().map(|a| a.id).collect();
                w.set_faults(Faults {
                    never_healthy_apps: every_app,
                    ..Faults::default()
                })
                .unwrap()
            });
        }
        let turned = checkpoint.plan.phases.iter().any(|p| p.id == ROLLBACK);
        if heal_on_rollback && turned && !healed {
            healed = true;
            world.with(|w| w.set_faults(Faults::default()).unwrap());
        }
    }
}

/// Every Marathon task runs on an agent of the roll's old instances, and
/// the schedule holds no window.
pub(super) async fn all_on_old_agents(cluster: &SimulatedCluster, checkpoint: &Checkpoint) {
    let old: HashSet<&str> = checkpoint.groups[0]
        .instances
        .iter()
        .map(|i| i.agent_id.as_str())
        .collect();
    let apps = cluster.marathon.apps().await.expect("apps");
    for app in apps.iter() {
        for task in &app.tasks {
            let agent = task.agent_id.as_deref().unwrap_or_default();
            assert!(
                old.contains(agent),
                "{} runs {} on {agent}",
                app.id,
                task.id
            );
        }
        // Healthy as Marathon counts it; running for an app without checks.
        let up = if app.has_health_checks() {
            app.tasks_healthy
        } else {
            app.tasks_running
        };
        assert_eq!(up, app.instances, "{}", app.id);
    }
    let schedule = cluster
        .mesos
        .maintenance_schedule()
        .await
        .expect("schedule");
    assert!(schedule.windows.is_empty(), "{schedule:?}");
}

#[tokio::test(start_paused = true)]
async fn a_failure_on_the_new_agents_rolls_back_to_the_start_with_both_strategies() {
    for strategy in [RollStrategy::Drain, RollStrategy::Serial] {
        let dir = tempfile::tempdir().expect("tempdir");
        let cluster = cluster("demo", dir.path()).await;
        let before = shape(&cluster).await;
        let target = u32::try_from(before.instances.len()).unwrap();
        let mut run = settings(&dir.path().join("roll.json"), target, &[]);
        run.request.strategy = Some(strategy);
        let (_stop, stop) = tokio::sync::watch::channel(false);
        let result = crate::roll::run::run(
            cluster.ports(),
            &cluster.env,
            run,
            stop,
            Box::new(failing_once_registered(&cluster, true)),
        )
        .await
        .expect("the run");
        let crate::roll::run::RunResult::Finished {
            outcome,
            checkpoint,
            ..
        } = result
        else {
            panic!("nothing to do");
        };
        let Outcome::RolledBack { failure, .. } = &outcome else {
            panic!("{strategy:?}: expected a rollback: {outcome:?}");
        };
        let found = checkpoint.failure.as_ref().expect("the failure recorded");
        let app = found.app.as_deref().expect("the failure names its app");
        assert!(before.counts.contains_key(app), "{strategy:?}: {app}");
        assert!(failure.contains(app), "{strategy:?}: {failure}");
        assert!(checkpoint.plan.is_complete());
        assert!(
            checkpoint
                .events
                .iter()
                .any(|e| e.kind == EventKind::RollingBack),
            "{strategy:?}"
        );
        // No old instance was terminated; the new ones are gone.
        assert!(
            checkpoint.groups[0]
                .instances
                .iter()
                .all(|i| !i.terminate_sent),
            "{strategy:?}"
        );
        assert_eq!(shape(&cluster).await, before, "{strategy:?}");
        all_on_old_agents(&cluster, &checkpoint).await;
        let report = cluster.sim.report();
        assert_eq!(
            report.apps_with_outage,
            0,
            "{strategy:?}: {}",
            report.summary()
        );
        cluster.sim.shutdown().await;
    }
}

#[tokio::test(start_paused = true)]
async fn on_failure_pause_stops_at_the_failure_and_a_rerun_decides() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo", dir.path()).await;
    let before = shape(&cluster).await;
    let target = u32::try_from(before.instances.len()).unwrap();
    let path = dir.path().join("roll.json");
    let mut first = settings(&path, target, &[]);
    first.request.strategy = Some(RollStrategy::Drain);
    first.request.on_failure = Some(OnFailure::Pause);
    let (_stop, stop) = tokio::sync::watch::channel(false);
    let result = crate::roll::run::run(
        cluster.ports(),
        &cluster.env,
        first,
        stop,
        Box::new(failing_once_registered(&cluster, false)),
    )
    .await
    .expect("the run");
    let crate::roll::run::RunResult::Finished {
        outcome,
        checkpoint,
        ..
    } = result
    else {
        panic!("nothing to do");
    };
    let Outcome::Paused { reason, .. } = &outcome else {
        panic!("expected a pause: {outcome:?}");
    };
    assert!(reason.contains("failure on the new agents"), "{reason}");
    let app = checkpoint
        .failure
        .as_ref()
        .unwrap()
        .app
        .clone()
        .expect("its app");
    assert!(reason.contains(&app), "{reason}");
    assert!(
        !reason.contains("timed out"),
        "found, not waited out: {reason}"
    );
    assert!(
        checkpoint.groups[0]
            .instances
            .iter()
            .all(|i| !i.terminate_sent)
    );

    // A plain rerun changes nothing: still paused on the same failure.
    let mut again = settings(&path, target, &[]);
    again.request.target = None;
    again.request.strategy = None;
    let (outcome, still, _) = roll(&cluster, again).await;
    let Outcome::Paused { reason, .. } = &outcome else {
        panic!("expected the pause to hold: {outcome:?}");
    };
    assert!(reason.contains("still paused"), "{reason}");
    assert_eq!(still.events.len(), checkpoint.events.len());

    // The operator heals the app and orders the rollback.
    cluster
        .sim
        .world()
        .with(|w| w.set_faults(Faults::default()).unwrap());
    let mut back = settings(&path, target, &[]);
    back.request.target = None;
    back.request.strategy = None;
    back.request.on_failure = Some(OnFailure::Rollback);
    let (outcome, done, _) = roll(&cluster, back).await;
    assert!(matches!(outcome, Outcome::RolledBack { .. }), "{outcome:?}");
    assert_eq!(shape(&cluster).await, before);
    all_on_old_agents(&cluster, &done).await;
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn an_operators_rollback_of_a_stopped_roll_keeps_a_new_instance_for_the_old_one_gone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo", dir.path()).await;
    let before = shape(&cluster).await;
    let target = u32::try_from(before.instances.len()).unwrap();
    let path = dir.path().join("roll.json");
    // A serial roll stopped (as by SIGTERM) once its first replacement is
    // complete: one old instance is gone.
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let observer = move |c: &Checkpoint| {
        if c.groups[0].instances.iter().any(|i| i.terminate_sent)
            && c.plan
                .steps()
                .any(|(_, s)| s.id.starts_with("i-") && s.status == Status::Complete)
        {
            let _ = stop_tx.send(true);
        }
    };
    let result = crate::roll::run::run(
        cluster.ports(),
        &cluster.env,
        settings(&path, target, &[]),
        stop,
        Box::new(observer),
    )
    .await
    .expect("the run");
    let crate::roll::run::RunResult::Finished {
        outcome,
        checkpoint: stopped,
        ..
    } = result
    else {
        panic!("nothing to do");
    };
    assert!(matches!(outcome, Outcome::Stopped), "{outcome:?}");
    let gone: Vec<&str> = stopped.groups[0]
        .instances
        .iter()
        .filter(|i| i.terminate_sent)
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(gone.len(), 1, "one instance replaced before the stop");

    let mut back = settings(&path, target, &[]);
    back.request.target = None;
    back.request.strategy = None;
    back.options.rollback_ordered = true;
    let (outcome, done, _) = roll(&cluster, back).await;
    assert!(matches!(outcome, Outcome::RolledBack { .. }), "{outcome:?}");
    assert!(
        done.events
            .iter()
            .any(|e| e.kind == EventKind::Operator && e.message.contains("roller rollback")),
        "the order is in the log"
    );
    // One new instance stays for the old one gone, and the step says which.
    let kept = done.groups[0].new_agents[0].instance.clone();
    let windows = done
        .plan
        .steps()
        .find(|(_, s)| s.id == crate::roll::decide::roll_plan::ROLLBACK_WINDOWS)
        .map(|(_, s)| s.message.clone())
        .expect("the windows step");
    assert!(windows.contains(&kept), "{windows}");
    let after = shape(&cluster).await;
    let mut expected: HashSet<String> = before.instances.clone();
    expected.remove(gone[0]);
    expected.insert(kept);
    assert_eq!(after.instances, expected);
    assert_eq!(
        (
            after.desired,
            after.max_size,
            &after.suspended,
            &after.tags,
            &after.counts
        ),
        (
            before.desired,
            before.max_size,
            &before.suspended,
            &before.tags,
            &before.counts
        )
    );
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    // The checkpoint was archived: a second order finds no roll.
    let mut again = settings(&path, target, &[]);
    again.request.target = None;
    again.request.strategy = None;
    again.options.rollback_ordered = true;
    let (_stop, stop) = tokio::sync::watch::channel(false);
    let refused = crate::roll::run::run(
        cluster.ports(),
        &cluster.env,
        again,
        stop,
        Box::new(|_: &Checkpoint| {}),
    )
    .await;
    let Err(err) = refused else {
        panic!("a rollback with no roll in progress must be refused");
    };
    assert!(err.to_string().contains("no roll in progress"), "{err}");
    assert_eq!(err.exit_code(), crate::roll::error::exit_code::REFUSED);
    cluster.sim.shutdown().await;
}
