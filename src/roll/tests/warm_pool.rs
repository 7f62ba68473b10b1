//! A group with a warm pool, whole rolls in this process on paused
//! tokio time. The pool was filled before the operator moved the group
//! to version 2, so it holds version-1 instances: the roll replaces them
//! before its scale-up, so that no instance of version 1 enters the group
//! as a "new" agent and none waits for the next scale-out. A bad image
//! rolls back and leaves the pool as the restored template fills it,
//! its configuration untouched; a crash between the warm-pool step's
//! intent and its terminations resumes to the same end.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::in_process::{in_service, roll, roll_observed, settings};
use crate::roll::decide::roll_plan::{ROLLBACK_WARM_POOL, WARM_POOL};
use crate::roll::engine::Outcome;
use crate::roll::record::checkpoint::Checkpoint;
use crate::sim::Scenario;
use crate::sim::world::{ImageEffect, WarmPoolView};
use crate::simulated::SimulatedCluster;

const GROUP: &str = "mesos-agents-warm";

/// Three agents of version 1 over three AZs (MaxSize 6: a pool of three,
/// Stopped), two small apps.
const WARM: &str = r#"
description = "three agents, a warm pool of three, two apps"
seed = 11

[group]
name = "mesos-agents-warm"
min_size = 3
max_size = 6
desired_capacity = 3
launch_template = { version = "1", latest_version = 2 }

[group.warm_pool]
min_size = 1

[agent]
cpus = 4
mem = 8192

[[apps]]
id = "/web"
instances = 2
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
"#;

/// The cluster settled for five minutes, its group moved to version 2
/// (`bad`: an image whose tasks fail their health checks).
async fn cluster_on_version_2(dir: &std::path::Path, bad: bool) -> SimulatedCluster {
    let scenario = Scenario::from_toml(WARM, "warm").expect("valid scenario");
    let cluster = SimulatedCluster::start(&scenario, 1.0, dir.to_path_buf())
        .await
        .expect("simulated cluster");
    tokio::time::sleep(Duration::from_secs(300)).await;
    cluster.sim.world().with(|w| {
        if bad {
            w.set_bad_image("2", ImageEffect::Unhealthy)
                .expect("the fault");
        }
        w.set_launch_template_version("2").expect("version 2");
    });
    cluster
}

fn pool(cluster: &SimulatedCluster) -> WarmPoolView {
    cluster
        .sim
        .world()
        .with(|w| w.warm_pool(GROUP))
        .expect("the group")
        .expect("its pool")
}

/// The pool's instances by template version.
fn pool_versions(cluster: &SimulatedCluster) -> BTreeMap<String, usize> {
    let mut versions = BTreeMap::new();
    for i in pool(cluster).instances {
        *versions.entry(i.launch_template.version).or_insert(0) += 1;
    }
    versions
}

/// Watches the group every second while the roll runs: the template
/// version of every instance that entered it after `originals`.
fn watch_new(
    cluster: &SimulatedCluster,
    originals: std::collections::HashSet<String>,
) -> (
    Arc<Mutex<BTreeMap<String, String>>>,
    tokio::task::JoinHandle<()>,
) {
    let seen: Arc<Mutex<BTreeMap<String, String>>> = Arc::default();
    let (world, into) = (cluster.sim.world(), seen.clone());
    let watcher = tokio::spawn(async move {
        loop {
            world.with(|w| {
                for i in w.describe_groups(&[]).remove(0).instances {
                    if !originals.contains(&i.instance_id) {
                        into.lock()
                            .unwrap()
                            .insert(i.instance_id, i.launch_template.version);
                    }
                }
            });
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    (seen, watcher)
}

fn step_message(checkpoint: &Checkpoint, id: &str) -> String {
    checkpoint
        .plan
        .steps()
        .find(|(_, s)| s.id == id || s.id.ends_with(&format!(":{id}")))
        .map(|(_, s)| s.message.clone())
        .unwrap_or_else(|| panic!("no step {id}"))
}

#[tokio::test(start_paused = true)]
async fn a_roll_replaces_the_warm_pools_old_instances_before_its_scale_up_draws_on_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster_on_version_2(dir.path(), false).await;
    assert_eq!(
        pool_versions(&cluster),
        BTreeMap::from([("1".to_string(), 3)])
    );
    let originals = in_service(&cluster).await;
    let (seen, watcher) = watch_new(&cluster, originals.clone());
    let (outcome, checkpoint, _) =
        roll(&cluster, settings(&dir.path().join("roll.json"), 3, &[])).await;
    watcher.abort();
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert!(
        step_message(&checkpoint, WARM_POOL).contains("no instance of the warm pool"),
        "{}",
        step_message(&checkpoint, WARM_POOL)
    );
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() >= 3, "the new instances were watched: {seen:?}");
    assert!(
        seen.values().all(|v| v == "2"),
        "an instance of the old image entered the group as new: {seen:?}"
    );
    let group = cluster
        .sim
        .world()
        .with(|w| w.describe_groups(&[]).remove(0));
    assert!(
        group
            .instances
            .iter()
            .all(|i| i.launch_template.version == "2")
    );
    assert!(in_service(&cluster).await.is_disjoint(&originals));
    // The scale-up drew on the refilled pool: its warm starts are new
    // agents like any other.
    let warm_starts = cluster.sim.world().with(|w| {
        w.scaling_activities(GROUP, 1000)
            .expect("activities")
            .iter()
            .filter(|a| {
                a.description
                    .starts_with("Launching a new EC2 instance from warm pool")
            })
            .count()
    });
    assert!(warm_starts > 0, "no warm start");
    tokio::time::sleep(Duration::from_secs(300)).await;
    let versions = pool_versions(&cluster);
    assert_eq!(
        versions.get("1"),
        None,
        "old instances left warm: {versions:?}"
    );
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    assert_eq!(report.total_below_floor_ms, 0, "{}", report.summary());
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_bad_image_rolls_back_and_leaves_no_bad_instance_warm_and_the_pool_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster_on_version_2(dir.path(), true).await;
    let before = pool(&cluster);
    let (outcome, checkpoint, _) =
        roll(&cluster, settings(&dir.path().join("roll.json"), 3, &[])).await;
    assert!(matches!(outcome, Outcome::RolledBack { .. }), "{outcome:?}");
    let back = step_message(&checkpoint, ROLLBACK_WARM_POOL);
    assert!(back.contains("no instance of the warm pool"), "{back}");
    let group = cluster
        .sim
        .world()
        .with(|w| w.describe_groups(&[]).remove(0));
    assert_eq!(group.launch_template.version, "1");
    let after = pool(&cluster);
    assert_eq!(
        (
            after.min_size,
            after.max_group_prepared_capacity,
            after.pool_state,
            after.reuse_on_scale_in,
            after.status
        ),
        (
            before.min_size,
            before.max_group_prepared_capacity,
            before.pool_state,
            before.reuse_on_scale_in,
            before.status
        ),
        "the pool's configuration untouched"
    );
    let versions = pool_versions(&cluster);
    assert_eq!(
        versions.get("2"),
        None,
        "bad instances left warm: {versions:?}"
    );
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_crash_after_the_warm_pool_steps_intent_resumes_to_a_clean_pool() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster_on_version_2(dir.path(), false).await;
    let path = dir.path().join("roll.json");
    // Killed right after the intent is written (the process dies; the
    // terminations it was sending may or may not have gone out).
    let intent = Arc::new(tokio::sync::Notify::new());
    let seen_intent = intent.clone();
    let observer = Box::new(move |c: &Checkpoint| {
        if c.events
            .last()
            .is_some_and(|e| e.message.contains("warm instance(s)"))
        {
            seen_intent.notify_one();
        }
    });
    tokio::select! {
        _ = roll_observed(&cluster, settings(&path, 3, &[]), observer) => {
            panic!("the roll ended before its warm-pool intent")
        }
        () = intent.notified() => {}
    }
    let record = Checkpoint::load(&path)
        .expect("the checkpoint read")
        .expect("the checkpoint written");
    assert!(
        record
            .events
            .last()
            .is_some_and(|e| e.message.starts_with("terminate 3 warm instance(s)")),
        "{:?}",
        record.events.last()
    );
    let (outcome, done, _) = roll(&cluster, settings(&path, 3, &[])).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert!(done.plan.is_complete());
    tokio::time::sleep(Duration::from_secs(300)).await;
    let versions = pool_versions(&cluster);
    assert_eq!(
        versions.get("1"),
        None,
        "old instances left warm: {versions:?}"
    );
    // Exactly the three old ones were terminated out of the pool, however
    // often the terminations were sent.
    let warm_terminated = cluster.sim.world().with(|w| {
        w.scaling_activities(GROUP, 1000)
            .expect("activities")
            .iter()
            .filter(|a| a.cause.contains("taken out of the warm pool"))
            .count()
    });
    assert_eq!(warm_terminated, 3);
    cluster.sim.shutdown().await;
}
