//! A cluster of several groups (the `demo-cluster` scenario: the demo's
//! private agents and three public agents running the edge load
//! balancer) under one Mesos and one Marathon: one roll per cluster at a
//! time, and the placement pause. In-process on paused tokio time.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::in_process::{cluster, roll_observed, settings};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::error::RollError;
use crate::roll::ports::auto_scaling::{AutoScaling, AutoScalingGroup};
use crate::roll::record::checkpoint::Checkpoint;
use crate::roll::record::env::GroupSpec;
use crate::roll::record::{LOCK_STATE_TAG, RUN_ID_TAG};
use crate::roll::run::{RunError, RunResult, run};
use crate::simulated::SimulatedCluster;

const PRIVATE: &str = "mesos-agents-demo";
const PUBLIC: &str = "mesos-agents-demo-public";
const EDGE: &str = "/edge/marathon-lb";
/// Sorts before any run id roller makes (a v4 UUID), and after.
const EARLIER_RUN: &str = "00000000-0000-4000-8000-000000000000";
const LATER_RUN: &str = "ffffffff-ffff-4fff-bfff-ffffffffffff";

/// What a roll may not change on a group it never held.
#[derive(Debug, PartialEq)]
struct Untouched {
    sizes: (u32, u32, u32),
    instances: BTreeSet<String>,
    suspended: Vec<String>,
    tags: Vec<(String, String)>,
}

async fn untouched(cluster: &SimulatedCluster, group: &str) -> Untouched {
    let g: AutoScalingGroup = cluster.aws.describe_group(group).await.expect("group");
    let mut tags: Vec<(String, String)> = g.tags.into_iter().map(|t| (t.key, t.value)).collect();
    tags.sort();
    Untouched {
        sizes: (g.min_size, g.max_size, g.desired_capacity),
        instances: g.instances.into_iter().map(|i| i.id).collect(),
        suspended: g
            .suspended_processes
            .iter()
            .map(|p| p.to_string())
            .collect(),
        tags,
    }
}

fn put_tags(cluster: &SimulatedCluster, group: &str, tags: &[(&str, &str)]) {
    let tags: Vec<(String, String)> = tags
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    cluster
        .sim
        .world()
        .with(|w| w.put_tags(group, &tags))
        .expect("tag");
}

fn delete_roller_tags(cluster: &SimulatedCluster, group: &str) {
    let keys = [RUN_ID_TAG.to_string(), LOCK_STATE_TAG.to_string()];
    cluster
        .sim
        .world()
        .with(|w| w.delete_tags(group, &keys))
        .expect("untag");
}

fn checkpoint_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect()
}

/// One run to its end with no observer and no stop signal.
async fn run_unwatched(
    cluster: &SimulatedCluster,
    env: &crate::roll::record::env::Environment,
    settings: crate::roll::run::RunSettings,
) -> Result<RunResult, RunError> {
    let (_tx, stop) = tokio::sync::watch::channel(false);
    run(
        cluster.ports(),
        env,
        settings,
        stop,
        Box::new(|_: &Checkpoint| {}),
    )
    .await
}

/// The refusal a run ended with (exit 2), or a panic saying what it did.
fn refusal_of(result: &Result<RunResult, RunError>) -> &RollError {
    match result {
        Err(RunError::Roll(err @ RollError::Refused(_))) => err,
        other => panic!(
            "expected a refusal, got {:?}",
            other.as_ref().map(|_| "a result")
        ),
    }
}

/// Whether this write is the one recording the intent to tag the group
/// (`pending`), before the tags are sent.
fn tagging_intent(checkpoint: &Checkpoint) -> bool {
    checkpoint
        .events
        .last()
        .is_some_and(|e| e.message.contains(&format!("{LOCK_STATE_TAG}=pending")))
}

#[tokio::test(start_paused = true)]
async fn two_runs_started_at_once_on_two_groups_of_one_cluster_one_goes_on_the_other_changes_nothing()
 {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo-cluster", dir.path()).await;
    let private_before = untouched(&cluster, PRIVATE).await;
    let public_before = untouched(&cluster, PUBLIC).await;
    let mut public_env = cluster.env.clone();
    public_env.groups = vec![GroupSpec::named(PUBLIC)];
    let (_tx, stop) = tokio::sync::watch::channel(false);
    let private_run = run(
        cluster.ports(),
        &cluster.env,
        settings(&dir.path().join("private.json"), 12, &[]),
        stop.clone(),
        Box::new(|_: &Checkpoint| {}),
    );
    let public_run = run(
        cluster.ports(),
        &public_env,
        settings(&dir.path().join("public.json"), 3, &[]),
        stop,
        Box::new(|_: &Checkpoint| {}),
    );
    let (private, public) = tokio::join!(private_run, public_run);

    // Exactly one completes; the other is refused (at its preflight, or
    // at its lock, when both claimed at once), naming the winner.
    let refused = |result: &Result<RunResult, RunError>| -> Option<String> {
        match result {
            Ok(RunResult::Finished {
                outcome: Outcome::Refused { reason },
                ..
            }) => Some(reason.clone()),
            Err(RunError::Roll(RollError::Refused(reason))) => Some(reason.to_string()),
            _ => None,
        }
    };
    let completed = |result: &Result<RunResult, RunError>| -> Option<String> {
        match result {
            Ok(RunResult::Finished {
                outcome: Outcome::Complete { .. },
                checkpoint,
                ..
            }) => Some(checkpoint.run_id.clone()),
            _ => None,
        }
    };
    let (winner, loser, reason, lost_group, lost_before, lost_file) = match (
        completed(&private),
        refused(&public),
    ) {
        (Some(id), Some(reason)) => (id, PUBLIC, reason, PRIVATE, public_before, "public"),
        _ => match (completed(&public), refused(&private)) {
            (Some(id), Some(reason)) => (id, PRIVATE, reason, PUBLIC, private_before, "private"),
            _ => panic!(
                "exactly one run must complete and the other be refused: private {:?}; public {:?}",
                private.as_ref().map(|_| "finished"),
                public.as_ref().map(|_| "finished")
            ),
        },
    };
    assert!(
        reason.contains(&winner)
            && reason.contains(lost_group)
            && reason.contains("roller abandon"),
        "the refusal names the run holding the cluster, its group and the way out: {reason}"
    );
    // The refused run changed nothing on its group, and left no live
    // checkpoint (at most one set aside as refused).
    assert_eq!(untouched(&cluster, loser).await, lost_before);
    let files = checkpoint_files(dir.path());
    assert!(!files.contains(&format!("{lost_file}.json")), "{files:?}");
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    assert_eq!(report.misplaced_task_ms, 0, "{}", report.summary());
}

#[tokio::test(start_paused = true)]
async fn another_runs_lock_on_a_group_of_the_cluster_refuses_a_fresh_run_before_it_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo-cluster", dir.path()).await;
    // A roller from before the lock state tagged only its run id: held.
    put_tags(&cluster, PUBLIC, &[(RUN_ID_TAG, "run-elsewhere")]);
    let before = untouched(&cluster, PRIVATE).await;
    let path = dir.path().join("private.json");
    let result = run_unwatched(&cluster, &cluster.env, settings(&path, 12, &[])).await;
    let err = refusal_of(&result);
    let text = err.to_string();
    for part in [
        "run-elsewhere",
        PUBLIC,
        "one roll per cluster",
        "roller abandon --run-id run-elsewhere",
    ] {
        assert!(text.contains(part), "{part} not in: {text}");
    }
    assert_eq!(err.exit_code(), 2);
    assert_eq!(untouched(&cluster, PRIVATE).await, before);
    assert!(checkpoint_files(dir.path()).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_run_that_loses_the_tie_removes_its_tags_and_sets_its_checkpoint_aside() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo-cluster", dir.path()).await;
    let before = untouched(&cluster, PRIVATE).await;
    let path = dir.path().join("private.json");
    // Another run claims the public group at the same moment as this one
    // tags the private group, with a smaller run id: it wins the tie.
    let observer = Box::new(|checkpoint: &Checkpoint| {
        if tagging_intent(checkpoint) {
            put_tags(
                &cluster,
                PUBLIC,
                &[(RUN_ID_TAG, EARLIER_RUN), (LOCK_STATE_TAG, "pending")],
            );
        }
    });
    let (outcome, checkpoint) = roll_observed(&cluster, settings(&path, 12, &[]), observer).await;
    let Outcome::Refused { reason } = &outcome else {
        panic!("expected the run refused, got {outcome:?}");
    };
    assert!(
        reason.contains(EARLIER_RUN) && reason.contains(PUBLIC),
        "{reason}"
    );
    assert_eq!(
        untouched(&cluster, PRIVATE).await,
        before,
        "its tags are gone"
    );
    let aside = format!("{PRIVATE}.{}.refused.json", checkpoint.run_id);
    assert_eq!(checkpoint_files(dir.path()), [aside].into());
}

#[tokio::test(start_paused = true)]
async fn a_run_that_wins_the_tie_waits_for_the_other_to_back_off_then_rolls() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo-cluster", dir.path()).await;
    let path = dir.path().join("private.json");
    let waited = Arc::new(Mutex::new(false));
    let seen = waited.clone();
    let observer = Box::new(|checkpoint: &Checkpoint| {
        if tagging_intent(checkpoint) {
            // The other run (a larger id) claims the public group, and
            // backs off a simulated minute later, as it does on seeing
            // this run's smaller id.
            put_tags(
                &cluster,
                PUBLIC,
                &[(RUN_ID_TAG, LATER_RUN), (LOCK_STATE_TAG, "pending")],
            );
            let world = cluster.sim.world();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(60)).await;
                let keys = [RUN_ID_TAG.to_string(), LOCK_STATE_TAG.to_string()];
                world.with(|w| w.delete_tags(PUBLIC, &keys)).expect("untag");
            });
        }
        if checkpoint
            .plan
            .steps()
            .any(|(_, s)| s.message.contains(LATER_RUN) && s.message.contains("backs off"))
        {
            *seen.lock().unwrap() = true;
        }
    });
    let (outcome, _) = roll_observed(&cluster, settings(&path, 12, &[]), observer).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert!(*waited.lock().unwrap(), "the lock never said it waited");
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    delete_roller_tags(&cluster, PUBLIC);
}

/// The public group rolled onto an image that forgot the agents' role:
/// nothing outside the old public agents offers `slave_public`, so the
/// edge app would lose its tasks with them. The roll pauses (paged)
/// before its first move, naming the app and the roles.
async fn placement_pause(strategy: RollStrategy) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo-cluster", dir.path()).await;
    let mut env = cluster.env.clone();
    env.groups = vec![GroupSpec::named(PUBLIC)];
    cluster
        .sim
        .world()
        .with(|w| w.set_group_role(PUBLIC, None))
        .expect("role");
    let edge_tasks = |cluster: &SimulatedCluster| -> BTreeSet<(String, String)> {
        cluster.sim.world().with(|w| {
            w.apps(true)
                .into_iter()
                .filter(|a| a.id == EDGE)
                .flat_map(|a| a.tasks.into_iter().flatten().map(|t| (t.id, t.slave_id)))
                .collect()
        })
    };
    let before = edge_tasks(&cluster);
    assert_eq!(before.len(), 3, "{before:?}");
    let path = dir.path().join("public.json");
    let mut settings = settings(&path, 3, &[]);
    settings.request.strategy = Some(strategy);
    let result = run_unwatched(&cluster, &env, settings)
        .await
        .expect("the run");
    let RunResult::Finished {
        outcome: Outcome::Paused { reason, .. },
        ..
    } = result
    else {
        panic!("{strategy:?}: expected a pause");
    };
    assert!(
        reason.contains(EDGE)
            && reason.contains("slave_public")
            && reason.contains("Nothing was moved"),
        "{strategy:?}: {reason}"
    );
    assert_eq!(
        edge_tasks(&cluster),
        before,
        "{strategy:?}: an edge task moved"
    );
}

#[tokio::test(start_paused = true)]
async fn a_public_app_no_new_agent_can_take_pauses_the_drain_before_its_first_wave() {
    placement_pause(RollStrategy::Drain).await;
}

#[tokio::test(start_paused = true)]
async fn a_public_app_no_new_agent_can_take_pauses_the_serial_roll_before_its_first_move() {
    placement_pause(RollStrategy::Serial).await;
}

#[tokio::test(start_paused = true)]
async fn a_window_someone_else_posted_over_an_agent_to_replace_refuses_a_fresh_run() {
    use crate::roll::ports::mesos::{MesosMaster, Unavailability};
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo-cluster", dir.path()).await;
    let agents = cluster.mesos.agents().await.expect("agents");
    let group = cluster.aws.describe_group(PRIVATE).await.expect("group");
    let ec2 = cluster
        .aws
        .describe_instances(&[group.instances[0].id.clone()])
        .await
        .expect("ec2");
    let ip = ec2[0].private_ip.expect("ip").to_string();
    let agent = agents
        .registered
        .iter()
        .find(|a| a.ip.map(|i| i.to_string()).as_deref() == Some(ip.as_str()))
        .expect("its agent");
    let when = Unavailability::new(std::time::SystemTime::now(), Duration::from_secs(3600));
    cluster
        .mesos
        .schedule_maintenance(&[agent.machine_id()], when)
        .await
        .expect("window");
    let before = untouched(&cluster, PRIVATE).await;
    let path = dir.path().join("private.json");
    let result = run_unwatched(&cluster, &cluster.env, settings(&path, 12, &[])).await;
    let text = refusal_of(&result).to_string();
    assert!(
        text.contains(&group.instances[0].id) && text.contains("did not post"),
        "{text}"
    );
    assert!(
        !text.contains("  "),
        "a run of spaces in the sentence: {text}"
    );
    assert_eq!(untouched(&cluster, PRIVATE).await, before);
    assert!(checkpoint_files(dir.path()).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_tagged_group_counts_only_when_its_instances_are_agents_of_this_cluster() {
    use crate::roll::decide::cluster_lock::LockState;
    use crate::roll::engine::cluster_lock::other_runs;
    use crate::roll::ports::auto_scaling::AgentMatch;
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo-cluster", dir.path()).await;
    put_tags(
        &cluster,
        PUBLIC,
        &[(RUN_ID_TAG, "run-elsewhere"), (LOCK_STATE_TAG, "held")],
    );
    let found = other_runs(cluster.ports(), &cluster.env, &[PRIVATE], "ours")
        .await
        .expect("look");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (
            found[0].run_id.as_str(),
            found[0].group.as_str(),
            found[0].state,
            found[0].agents
        ),
        ("run-elsewhere", PUBLIC, LockState::Held, 3)
    );
    // Its own run id, or its own group, is never another run.
    let own_id = other_runs(cluster.ports(), &cluster.env, &[PRIVATE], "run-elsewhere").await;
    assert!(own_id.expect("look").is_empty());
    let own_group = other_runs(cluster.ports(), &cluster.env, &[PUBLIC], "ours").await;
    assert!(own_group.expect("look").is_empty());
    // Seen from a cluster none of whose agents are its instances (here:
    // agents matched by an attribute no agent has), it is another
    // cluster's business.
    let mut elsewhere = cluster.env.clone();
    elsewhere.agent_match = AgentMatch::Attribute("no-such-attribute".to_string());
    let found = other_runs(cluster.ports(), &elsewhere, &[PRIVATE], "ours").await;
    assert!(found.expect("look").is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_resumed_roll_holding_its_group_is_refused_when_another_run_holds_the_cluster() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo-cluster", dir.path()).await;
    let path = dir.path().join("private.json");
    // The roll stops (a signal) right after its lock is held.
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let observer = Box::new(move |checkpoint: &Checkpoint| {
        let locked = checkpoint.plan.steps().any(|(_, s)| {
            s.id == crate::roll::decide::roll_plan::LOCK
                && s.status == crate::plan::Status::Complete
        });
        if locked {
            let _ = stop_tx.send(true);
        }
    });
    let stopped = run(
        cluster.ports(),
        &cluster.env,
        settings(&path, 12, &[]),
        stop,
        observer,
    )
    .await
    .expect("the run");
    assert!(
        matches!(
            stopped,
            RunResult::Finished {
                outcome: Outcome::Stopped,
                ..
            }
        ),
        "the roll did not stop"
    );
    let before = untouched(&cluster, PRIVATE).await;
    // Meanwhile another run came to hold the public group (by hand, as
    // a roller that skipped the look would).
    put_tags(
        &cluster,
        PUBLIC,
        &[(RUN_ID_TAG, "run-elsewhere"), (LOCK_STATE_TAG, "held")],
    );
    let result = run_unwatched(&cluster, &cluster.env, settings(&path, 12, &[])).await;
    let text = refusal_of(&result).to_string();
    assert!(
        text.contains("run-elsewhere") && text.contains(PUBLIC),
        "{text}"
    );
    assert_eq!(
        untouched(&cluster, PRIVATE).await,
        before,
        "the resume changed the group"
    );
    assert!(path.exists(), "the checkpoint of the stopped roll is kept");
}
