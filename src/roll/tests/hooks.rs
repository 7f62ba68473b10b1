//! Lifecycle hooks on the rolled group, whole rolls in this process on
//! paused tokio time. A termination hook of someone else's (a log
//! shipper's, one hour) holds every terminated instance in
//! `Terminating:Wait` longer than the deregistration wait's ten minutes:
//! the roll waits it out, its deadline extended by the hook's heartbeat
//! timeout, instead of pausing at every termination. A hook the
//! environment names as roller's is completed with CONTINUE once the
//! agent is empty and down, and the roll is faster for it. A launch hook
//! extends the registration wait the same way.

use std::time::Duration;

use super::in_process::{in_service, roll, settings};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::record::checkpoint::{Checkpoint, EventKind};
use crate::sim::Scenario;
use crate::sim::scenario::LifecycleHookSpec;
use crate::simulated::SimulatedCluster;

const GROUP: &str = "mesos-agents-hooks";

/// Three agents over three AZs, two small apps: rolls that wait out
/// hours of hooks stay quick in real time.
const SMALL: &str = r#"
description = "three agents, two apps, for lifecycle hooks"
seed = 7

[group]
name = "mesos-agents-hooks"
min_size = 3
max_size = 6
desired_capacity = 3

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

/// The small cluster with `hooks` on its group, settled for five
/// minutes, polled every 30 s (hours of waiting in few ticks), with the
/// environment naming `roller_hooks` as roller's to complete.
async fn cluster_with(
    dir: &std::path::Path,
    hooks: &[LifecycleHookSpec],
    roller_hooks: &[&str],
) -> SimulatedCluster {
    let scenario = Scenario::from_toml(SMALL, "hooks").expect("valid scenario");
    let mut cluster = SimulatedCluster::start(&scenario, 1.0, dir.to_path_buf())
        .await
        .expect("simulated cluster");
    cluster.sim.world().with(|w| {
        for hook in hooks {
            w.put_lifecycle_hook(GROUP, hook).expect("hook put");
        }
    });
    cluster.env.poll_interval = Duration::from_secs(30);
    cluster.env.groups[0].complete_lifecycle_hooks =
        roller_hooks.iter().map(|s| s.to_string()).collect();
    tokio::time::sleep(Duration::from_secs(300)).await;
    cluster
}

fn termination_hook(name: &str) -> LifecycleHookSpec {
    LifecycleHookSpec {
        name: name.to_string(),
        transition: "autoscaling:EC2_INSTANCE_TERMINATING".to_string(),
        heartbeat_timeout: 3600,
        default_result: "ABANDON".to_string(),
    }
}

/// Rolls every instance of the cluster with `strategy`: its outcome,
/// checkpoint, and how long it took in cluster time.
async fn roll_all(
    cluster: &SimulatedCluster,
    dir: &std::path::Path,
    strategy: RollStrategy,
) -> (Outcome, Checkpoint, Duration) {
    let originals = in_service(cluster).await;
    let path = dir.join("roll.json");
    let mut s = settings(&path, u32::try_from(originals.len()).unwrap(), &[]);
    s.request.strategy = Some(strategy);
    let began = tokio::time::Instant::now();
    let (outcome, checkpoint, _) = roll(cluster, s).await;
    let took = began.elapsed();
    let now = in_service(cluster).await;
    if matches!(outcome, Outcome::Complete { .. }) {
        assert!(now.is_disjoint(&originals), "an original is left");
    }
    (outcome, checkpoint, took)
}

fn events_saying<'c>(checkpoint: &'c Checkpoint, text: &str) -> Vec<&'c str> {
    checkpoint
        .events
        .iter()
        .filter(|e| e.message.contains(text))
        .map(|e| e.message.as_str())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_one_hour_termination_hook_of_someone_elses_is_waited_out_without_a_pause() {
    for strategy in [RollStrategy::Serial, RollStrategy::Drain] {
        let dir = tempfile::tempdir().expect("tempdir");
        let cluster = cluster_with(dir.path(), &[termination_hook("log-shipper")], &[]).await;
        let (outcome, checkpoint, took) = roll_all(&cluster, dir.path(), strategy).await;
        let name = strategy.as_str();
        assert!(
            matches!(outcome, Outcome::Complete { .. }),
            "{name}: {outcome:?}"
        );
        assert!(
            events_saying(&checkpoint, "timed out").is_empty(),
            "{name}: a wait timed out"
        );
        let held = events_saying(&checkpoint, "in Terminating:Wait for hook log-shipper");
        assert!(!held.is_empty(), "{name}: the hook's wait is not logged");
        assert!(held[0].contains("since "), "{name}: {}", held[0]);
        assert!(
            events_saying(&checkpoint, "completed with CONTINUE").is_empty(),
            "{name}: roller completed a hook it does not own"
        );
        // Each termination waited out the hour (ABANDON by default).
        assert!(took > Duration::from_secs(3600), "{name}: {took:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_termination_hook_named_as_rollers_is_completed_with_continue_and_the_roll_is_faster() {
    let dir = tempfile::tempdir().expect("tempdir");
    let owned = cluster_with(
        dir.path(),
        &[termination_hook("drain-agent")],
        &["drain-agent"],
    )
    .await;
    let (outcome, checkpoint, took_owned) =
        roll_all(&owned, dir.path(), RollStrategy::Serial).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let completed = events_saying(
        &checkpoint,
        "lifecycle hook drain-agent: completed with CONTINUE",
    );
    assert_eq!(completed.len(), 3, "{:#?}", checkpoint.events);
    let intents = events_saying(&checkpoint, "complete lifecycle action of hook drain-agent");
    assert_eq!(intents.len(), 3, "the intent is written before each call");
    assert!(
        checkpoint
            .events
            .iter()
            .any(|e| e.kind == EventKind::Intent && e.message.contains("drain-agent"))
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let foreign = cluster_with(dir.path(), &[termination_hook("drain-agent")], &[]).await;
    let (_, _, took_foreign) = roll_all(&foreign, dir.path(), RollStrategy::Serial).await;
    assert!(
        took_owned + Duration::from_secs(3 * 3000) < took_foreign,
        "owned {took_owned:?}, waited out {took_foreign:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn naming_a_hook_that_is_no_termination_hook_of_the_group_refuses_the_roll() {
    let dir = tempfile::tempdir().expect("tempdir");
    let launch = LifecycleHookSpec {
        transition: "autoscaling:EC2_INSTANCE_LAUNCHING".to_string(),
        ..termination_hook("bootstrap")
    };
    let cluster = cluster_with(dir.path(), &[launch], &["bootstrap", "drian-agent"]).await;
    let path = dir.path().join("roll.json");
    let (_stop, stop) = tokio::sync::watch::channel(false);
    let result = crate::roll::run::run(
        cluster.ports(),
        &cluster.env,
        settings(&path, 3, &[]),
        stop,
        Box::new(|_| {}),
    )
    .await;
    let Err(crate::roll::run::RunError::Roll(crate::roll::error::RollError::Refused(why))) =
        &result
    else {
        panic!("not refused: {:?}", result.map(|_| "a result"));
    };
    let why = why.to_string();
    assert!(
        why.contains("complete_lifecycle_hooks names bootstrap, drian-agent"),
        "{why}"
    );
    assert!(why.contains("its termination hooks: none"), "{why}");
    assert!(!path.exists(), "a refused roll leaves no checkpoint");
}

#[tokio::test(start_paused = true)]
async fn a_launch_hook_holding_new_instances_longer_than_the_scale_up_wait_extends_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Held 30 minutes at launch (then CONTINUE), past the 20-minute
    // registration wait.
    let launch = LifecycleHookSpec {
        transition: "autoscaling:EC2_INSTANCE_LAUNCHING".to_string(),
        heartbeat_timeout: 1800,
        default_result: "CONTINUE".to_string(),
        ..termination_hook("bootstrap")
    };
    let cluster = cluster_with(dir.path(), &[launch], &[]).await;
    let (outcome, checkpoint, took) = roll_all(&cluster, dir.path(), RollStrategy::Serial).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let held = events_saying(&checkpoint, "in Pending:Wait for hook bootstrap");
    assert!(!held.is_empty(), "{:#?}", checkpoint.events);
    assert!(took > Duration::from_secs(1800), "{took:?}");
}

/// `roller abandon` of a roll stopped right after a termination, its
/// instance held in `Terminating:Wait` by roller's own hook: nobody will
/// be back to complete it, so the abandon does (CONTINUE: the agent was
/// drained before the termination was sent) and says so; without it the
/// instance would sit out the hook's hour.
#[tokio::test(start_paused = true)]
async fn abandon_completes_rollers_hook_for_an_instance_the_roll_terminated() {
    use super::abandon::abandon_all;
    use super::in_process::roll_stoppable;

    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster_with(
        dir.path(),
        &[termination_hook("drain-agent")],
        &["drain-agent"],
    )
    .await;
    let path = dir.path().join("roll.json");
    let originals = in_service(&cluster).await;
    let mut s = settings(&path, u32::try_from(originals.len()).unwrap(), &[]);
    s.request.strategy = Some(RollStrategy::Serial);
    // Stopped (as by SIGTERM) at the first write that records a
    // termination sent: before any tick could complete the hook.
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let observer = Box::new(move |c: &Checkpoint| {
        if c.groups[0].instances.iter().any(|i| i.terminate_sent) {
            let _ = stop_tx.send(true);
        }
    });
    let (outcome, checkpoint) = roll_stoppable(&cluster, s, stop, observer).await;
    assert!(matches!(outcome, Outcome::Stopped), "{outcome:?}");
    let terminated: Vec<String> = checkpoint.groups[0]
        .instances
        .iter()
        .filter(|i| i.terminate_sent)
        .map(|i| i.id.clone())
        .collect();
    assert_eq!(terminated.len(), 1, "{terminated:?}");
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        held(&cluster, &terminated[0]).await,
        "the stop left nothing held to test"
    );

    let (abandoned, left) = abandon_all(&cluster, checkpoint, &path).await;
    let said: Vec<&String> = abandoned
        .lines
        .iter()
        .filter(|l| l.contains("drain-agent") && l.contains(&terminated[0]))
        .collect();
    assert_eq!(said.len(), 1, "{:?}", abandoned.lines);
    assert!(
        !events_saying(&left, "complete lifecycle action of hook drain-agent").is_empty(),
        "the completion's intent was not recorded first"
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(
        !held(&cluster, &terminated[0]).await,
        "still held by roller's hook after the abandon"
    );
    cluster.sim.shutdown().await;
}

/// Whether the group holds `id` in `Terminating:Wait`.
async fn held(cluster: &SimulatedCluster, id: &str) -> bool {
    use crate::roll::ports::auto_scaling::{AutoScaling, LifecycleState};
    let group = cluster.aws.describe_group(GROUP).await.expect("group");
    group
        .instance(id)
        .is_some_and(|i| i.lifecycle_state == LifecycleState::TerminatingWait)
}
