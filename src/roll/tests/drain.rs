//! Whole drain rolls (`--strategy drain`, the default) in this process, on
//! paused tokio time, each checked against the simulator's ground truth:
//! N in service and no original left, no outage, every moved task moved
//! exactly once (a task killed on an old agent relaunched on a new one:
//! had Marathon placed it on another old agent, it would have moved
//! again), each app back at its instance count (no surge left), no
//! maintenance window left. Also kills in the middle of a wave (the run's
//! future dropped, as a SIGKILL would), each resumed by a fresh run.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::in_process::{app_counts, cluster, in_service, roll, roll_observed, settings};
use crate::plan::{self, Status};
use crate::roll::decide::roll_plan::{DRAIN, RollStrategy, TERMINATE};
use crate::roll::engine::Outcome;
use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore, OnFailure};
use crate::roll::record::kinds::GroupIndex;
use crate::roll::run::{RunResult, RunSettings, run};
use crate::sim::scenario::LifecycleHookSpec;
use crate::simulated::SimulatedCluster;

fn drain(path: &Path, target: u32) -> RunSettings {
    let mut settings = settings(path, target, &[]);
    settings.request.strategy = Some(RollStrategy::Drain);
    settings
}

/// A fresh simulated cluster, settled, and what the roll must keep.
struct Fixture {
    dir: tempfile::TempDir,
    cluster: SimulatedCluster,
    /// The instances in service before the roll.
    originals: HashSet<String>,
    /// Each app's instance count before the roll.
    counts: BTreeMap<String, u32>,
    target: u32,
}

async fn fixture(scenario: &str) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster(scenario, dir.path()).await;
    let originals = in_service(&cluster).await;
    let counts = app_counts(&cluster);
    let target = u32::try_from(originals.len()).unwrap();
    Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    }
}

/// Runs the roll to completion with `observer` on every checkpoint write.
async fn run_observed(
    cluster: &SimulatedCluster,
    settings: RunSettings,
    observer: Box<dyn FnMut(&Checkpoint) + Send + '_>,
) -> Checkpoint {
    let (outcome, checkpoint) = roll_observed(cluster, settings, observer).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    checkpoint
}

/// The ground truth a finished drain roll must leave.
async fn assert_clean_end(
    cluster: &SimulatedCluster,
    originals: &HashSet<String>,
    counts: &BTreeMap<String, u32>,
    done: &Checkpoint,
) {
    let tree = plan::tree(&done.plan);
    assert!(done.plan.is_complete(), "{tree}");
    assert!(tree.contains("(dependency strategy)"), "{tree}");
    let now = in_service(cluster).await;
    assert_eq!(now.len(), originals.len(), "{now:?}");
    assert!(
        now.is_disjoint(originals),
        "an original is still in service"
    );
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    assert!(!report.task_moves.is_empty(), "the roll moved no task");
    let moved_twice: Vec<_> = report.task_moves.iter().filter(|m| m.moves != 1).collect();
    assert!(
        moved_twice.is_empty(),
        "tasks that moved more than once: {moved_twice:?}"
    );
    assert_eq!(
        &app_counts(cluster),
        counts,
        "an app is not back at its count"
    );
    let (windows, down) = cluster.sim.world().with(|w| {
        (
            w.maintenance_schedule().len(),
            w.maintenance_status().down.len(),
        )
    });
    assert_eq!((windows, down), (0, 0), "maintenance left behind");
    assert!(done.plan.phases.iter().any(|p| p.id == DRAIN), "{tree}");
}

#[tokio::test(start_paused = true)]
async fn a_drain_roll_of_demo_moves_every_task_once_and_terminates_every_old_agent() {
    let Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    } = fixture("demo").await;
    let started = tokio::time::Instant::now();

    let (outcome, done, _) = roll(&cluster, drain(&dir.path().join("demo.json"), target)).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert_clean_end(&cluster, &originals, &counts, &done).await;
    // The defaults keep every app at its own floor.
    let report = cluster.sim.report();
    assert_eq!(report.total_below_floor_ms, 0, "{}", report.summary());
    // One wave step per wave, named with what it moved; one termination
    // step per old agent.
    let drain = done.plan.phases.iter().find(|p| p.id == DRAIN).unwrap();
    assert!(
        drain.steps[0].name.starts_with("wave-1: "),
        "{:?}",
        drain.steps[0]
    );
    let terminate = done.plan.phases.iter().find(|p| p.id == TERMINATE).unwrap();
    assert_eq!(terminate.steps.len(), originals.len());
    assert!(done.groups[0].waves.iter().all(|w| w.sent));
    eprintln!(
        "demo drain: {:.0} cluster s, {} wave(s)\n{}",
        started.elapsed().as_secs_f64(),
        drain.steps.len(),
        cluster.sim.report().summary()
    );
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_drain_roll_of_msr_55_honoring_min_health_never_takes_an_app_below_its_floor() {
    let Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    } = fixture("msr-55").await;
    let mut settings = drain(&dir.path().join("msr.json"), target);
    settings.request.floor = Some(crate::roll::decide::safety::Floor::MinHealth);

    let (outcome, done, _) = roll(&cluster, settings).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert_clean_end(&cluster, &originals, &counts, &done).await;
    let report = cluster.sim.report();
    assert_eq!(report.apps_ever_below_floor, 0, "{}", report.summary());
    assert_eq!(report.total_below_floor_ms, 0, "{}", report.summary());
    // The sample, then one wave for everything else: the apps of two
    // tasks with a floor of one (a hundred of them) are surged by both,
    // not left one task for a third wave.
    let drain = done.plan.phases.iter().find(|p| p.id == DRAIN).unwrap();
    assert_eq!(drain.steps.len(), 2, "{}", plan::tree(&done.plan));
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_drain_of_hazards_pauses_on_the_never_healthy_app_and_finishes_once_it_is_allowed() {
    let Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    } = fixture("hazards").await;
    let path = dir.path().join("hazards.json");
    // Default floors: the never-healthy app is surged, and its surge's
    // deployment can never finish; once the app is allowed the surge is
    // undone (its deployment cancelled) and its tasks move as they are.
    let mut first = drain(&path, target);
    // Pause on the failure (the default would roll back).
    first.request.on_failure = Some(OnFailure::Pause);

    let (outcome, paused, _) = roll(&cluster, first).await;
    let Outcome::Paused { step, reason, .. } = outcome else {
        panic!("expected a pause: {outcome:?}");
    };
    assert!(step.starts_with("drain/wave-"), "{step}");
    assert!(reason.contains("/hazard/never-healthy"), "{reason}");
    let at = paused.find_step(&step).expect("the paused step");
    assert_eq!(paused.plan.step(at).status, Status::Delayed);

    let mut resume = drain(&path, target);
    resume.request.allow_unhealthy = vec!["/hazard/never-healthy".to_string()];
    resume.request.target = None;
    resume.request.strategy = None;
    let (outcome, done, _) = roll(&cluster, resume).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let now = in_service(&cluster).await;
    assert_eq!(now.len(), originals.len());
    assert!(now.is_disjoint(&originals));
    assert_eq!(app_counts(&cluster), counts);
    // The app the operator let be is the only one ever at zero.
    let at_zero: Vec<String> = cluster
        .sim
        .report()
        .apps
        .into_iter()
        .filter(|a| a.at_zero_ms > 0)
        .map(|a| a.id)
        .collect();
    assert!(
        at_zero.iter().all(|id| *id == "/hazard/never-healthy"),
        "{at_zero:?}"
    );
    assert!(done.plan.is_complete());
    assert!(
        done.events.iter().any(|e| e
            .message
            .starts_with("/hazard/never-healthy (allowed unhealthy): surge undone")),
        "the stuck surge was not undone"
    );
    cluster.sim.shutdown().await;
}

/// `hazards` with its broken app allowed from the start: the default roll
/// (drain, floors, sample, bake, the failure watch) completes as it did,
/// and no other app is ever below its floor.
#[tokio::test(start_paused = true)]
async fn a_default_drain_of_hazards_with_its_broken_app_allowed_completes_with_every_other_app_at_its_floor()
 {
    let Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    } = fixture("hazards").await;
    let mut settings = drain(&dir.path().join("hazards.json"), target);
    settings.request.allow_unhealthy = vec!["/hazard/never-healthy".to_string()];
    let (outcome, done, _) = roll(&cluster, settings).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert!(done.failure.is_none(), "{:?}", done.failure);
    let now = in_service(&cluster).await;
    assert_eq!(now.len(), originals.len());
    assert!(now.is_disjoint(&originals));
    assert_eq!(app_counts(&cluster), counts);
    let report = cluster.sim.report();
    let below: Vec<(String, u64)> = report
        .apps
        .iter()
        .filter(|a| a.id != "/hazard/never-healthy" && a.below_floor_ms > 0)
        .map(|a| (a.id.clone(), a.below_floor_ms))
        .collect();
    assert!(below.is_empty(), "{below:?}\n{}", report.summary());
    cluster.sim.shutdown().await;
}

/// Runs the roll until `kill_at` first holds for a written checkpoint,
/// then drops the run (its next await never comes back, as after a
/// SIGKILL). Returns whether it was killed.
pub(super) async fn roll_until(
    cluster: &SimulatedCluster,
    settings: RunSettings,
    kill_at: impl Fn(&Checkpoint) -> bool + Send + 'static,
) -> bool {
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let (hit_tx, mut hit) = tokio::sync::watch::channel(false);
    let seen = Arc::new(Mutex::new(false));
    let observer = Box::new(move |checkpoint: &Checkpoint| {
        let mut seen = seen.lock().unwrap();
        if !*seen && kill_at(checkpoint) {
            *seen = true;
            let _ = hit_tx.send(true);
        }
    });
    let run = run(cluster.ports(), &cluster.env, settings, stop, observer);
    tokio::select! {
        result = run => {
            match result.expect("the run") {
                RunResult::Finished { outcome, .. } => {
                    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}")
                }
                RunResult::NothingToDo(m) => panic!("nothing to do: {m}"),
            }
            false
        }
        _ = hit.wait_for(|hit| *hit) => true,
    }
}

/// `roller abandon` of the first group of the roll checkpointed at
/// `path` (`checkpoint`, as loaded from there), on `cluster`.
pub(super) async fn abandon_first_group(
    cluster: &SimulatedCluster,
    path: &Path,
    checkpoint: Checkpoint,
) -> crate::roll::abandon::Abandoned {
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let runner = crate::roll::engine::Runner::new(
        cluster.ports(),
        &cluster.env,
        crate::roll::engine::RunOptions::default(),
        checkpoint,
        CheckpointStore::file(path.to_path_buf()),
        stop,
        Box::new(|_: &Checkpoint| {}),
    )
    .expect("a runner");
    let (abandoned, _) = crate::roll::abandon::abandon(runner, &[GroupIndex(0)])
        .await
        .expect("abandon");
    abandoned
}

/// Kills the roll at `kill_at`, then resumes it to the end and checks
/// the ground truth.
async fn killed_and_resumed(kill_at: impl Fn(&Checkpoint) -> bool + Send + 'static) {
    let Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    } = fixture("demo").await;
    let path = dir.path().join("demo.json");

    assert!(
        roll_until(&cluster, drain(&path, target), kill_at).await,
        "the kill point never came"
    );
    let mut resume = drain(&path, target);
    resume.request.target = None;
    resume.request.strategy = None;
    let (outcome, done, _) = roll(&cluster, resume).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert_clean_end(&cluster, &originals, &counts, &done).await;
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_kill_after_a_waves_intent_before_its_kills_resumes_correctly() {
    killed_and_resumed(|c| c.groups[0].waves.iter().any(|w| !w.sent)).await;
}

#[tokio::test(start_paused = true)]
async fn a_kill_right_after_a_waves_kills_resumes_correctly() {
    killed_and_resumed(|c| c.groups[0].waves.iter().any(|w| w.sent)).await;
}

#[tokio::test(start_paused = true)]
async fn a_kill_between_terminations_resumes_correctly() {
    killed_and_resumed(|c| {
        let sent = c.groups[0]
            .instances
            .iter()
            .filter(|i| i.terminate_sent)
            .count();
        sent >= 2 && sent < c.groups[0].instances.len()
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_drain_canary_replaces_its_agents_alone_then_waits_for_continue_on_the_drain() {
    let Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    } = fixture("demo").await;
    let path = dir.path().join("demo.json");
    let mut canary = drain(&path, target);
    canary.request.canary = Some(2);

    let (outcome, held, _) = roll(&cluster, canary).await;
    let Outcome::Held { reason } = outcome else {
        panic!("expected the drain held after the canaries: {outcome:?}");
    };
    assert!(reason.contains("--phase drain"), "{reason}");
    // Exactly the two canaries are gone; nothing else was terminated and
    // no wave has started.
    let now = in_service(&cluster).await;
    assert_eq!(originals.difference(&now).count(), 2, "{now:?}");
    let sent: Vec<&str> = held.groups[0]
        .instances
        .iter()
        .filter(|i| i.terminate_sent)
        .map(|i| i.id.as_str())
        .collect();
    assert_eq!(
        sent,
        [
            &held.groups[0].instances[0].id,
            &held.groups[0].instances[1].id
        ]
    );
    assert!(held.groups[0].waves.is_empty());

    // The operator lets the drain go on, as `roller plan continue --phase
    // drain` would, then reruns.
    let mut record = Checkpoint::load(&path).unwrap().expect("the checkpoint");
    let drain_phase = record
        .plan
        .phases
        .iter()
        .position(|p| p.id == DRAIN)
        .unwrap();
    record.plan.apply(
        crate::plan::Operation::Continue,
        crate::plan::Target::Phase(drain_phase),
    );
    record.save(&path).unwrap();
    let mut resume = drain(&path, target);
    resume.request.target = None;
    resume.request.strategy = None;
    let (outcome, done, _) = roll(&cluster, resume).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert_clean_end(&cluster, &originals, &counts, &done).await;
    cluster.sim.shutdown().await;
}

/// Terminations sent per AZ, by instance, in a checkpoint.
fn sent_by_az(c: &Checkpoint) -> BTreeMap<String, HashSet<String>> {
    let mut sent = BTreeMap::<String, HashSet<String>>::new();
    for i in c.groups[0].instances.iter().filter(|i| i.terminate_sent) {
        sent.entry(i.availability_zone.clone())
            .or_default()
            .insert(i.id.clone());
    }
    sent
}

/// Per AZ, the most of `now` over every call (for observers).
fn keep_worst(worst: &Mutex<BTreeMap<String, usize>>, now: BTreeMap<String, usize>) {
    let mut worst = worst.lock().unwrap();
    for (az, n) in now {
        let w = worst.entry(az).or_default();
        *w = (*w).max(n);
    }
}

#[tokio::test(start_paused = true)]
async fn max_unavailable_bounds_the_terminations_sent_at_once_per_az_and_not_ec2s_shutdown_after() {
    let Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    } = fixture("msr-55").await;
    let mut settings = drain(&dir.path().join("msr.json"), target);
    settings.request.max_unavailable = Some(2);
    // On every checkpoint write, per AZ: the terminations sent since the
    // write before (one tick's go in one write: their intent), and those
    // sent whose step has not completed (the group or Mesos still has
    // the instance: EC2 shutting the empty machine down).
    let burst = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    let open = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    let (seen_burst, seen_open) = (burst.clone(), open.clone());
    let mut before = BTreeMap::<String, HashSet<String>>::new();
    let observer = Box::new(move |c: &Checkpoint| {
        let sent = sent_by_az(c);
        let new: BTreeMap<String, usize> = sent
            .iter()
            .map(|(az, ids)| {
                let known = before.get(az);
                let n = ids.iter().filter(|i| known.is_none_or(|k| !k.contains(*i)));
                (az.clone(), n.count())
            })
            .collect();
        keep_worst(&seen_burst, new);
        let not_done: BTreeMap<String, usize> = sent
            .iter()
            .map(|(az, ids)| {
                let n = ids.iter().filter(|id| {
                    !c.find_step(&format!("{TERMINATE}/{id}"))
                        .is_some_and(|at| c.plan.step(at).status == Status::Complete)
                });
                (az.clone(), n.count())
            })
            .collect();
        keep_worst(&seen_open, not_done);
        before = sent;
    });
    let checkpoint = run_observed(&cluster, settings, observer).await;
    assert_clean_end(&cluster, &originals, &counts, &checkpoint).await;
    let burst = burst.lock().unwrap().clone();
    assert_eq!(burst.len(), 3, "{burst:?}");
    // The limit is reached (so the check means something) and never passed.
    assert!(burst.values().all(|&n| n == 2), "{burst:?}");
    // An emptied agent's slot is free once its instance is out of service
    // with no hook holding it: more than 2 per AZ are at some point being
    // shut down by EC2, none waiting for another's shutdown to end.
    let open = open.lock().unwrap().clone();
    assert!(open.values().all(|&n| n > 2), "{open:?}");
    assert_eq!(checkpoint.max_unavailable, 2);
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn max_unavailable_bounds_the_old_agents_a_termination_hook_holds_at_once_per_az() {
    let Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    } = fixture("msr-55").await;
    // Someone else's hook (a log shipper's) holds each terminated
    // instance in `Terminating:Wait` for a minute.
    let world = cluster.sim.world();
    world.with(|w| {
        let hook = LifecycleHookSpec {
            name: "log-shipper".to_string(),
            transition: "autoscaling:EC2_INSTANCE_TERMINATING".to_string(),
            heartbeat_timeout: 60,
            default_result: "CONTINUE".to_string(),
        };
        w.put_lifecycle_hook("mesos-agents-prod", &hook)
            .expect("hook put");
    });
    let mut settings = drain(&dir.path().join("msr.json"), target);
    settings.request.max_unavailable = Some(2);
    // The simulator's ground truth on every checkpoint write: the group's
    // instances held by the hook, per AZ.
    let worst = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    let seen = worst.clone();
    let observer = Box::new(move |_: &Checkpoint| {
        let held = world.with(|w| {
            let mut held = BTreeMap::<String, usize>::new();
            for group in w.describe_groups(&[]) {
                for i in group.instances {
                    if i.lifecycle_state == "Terminating:Wait" {
                        *held.entry(i.availability_zone).or_default() += 1;
                    }
                }
            }
            held
        });
        keep_worst(&seen, held);
    });
    let checkpoint = run_observed(&cluster, settings, observer).await;
    assert_clean_end(&cluster, &originals, &counts, &checkpoint).await;
    let worst = worst.lock().unwrap().clone();
    assert_eq!(worst.len(), 3, "{worst:?}");
    // The limit is reached (so the check means something) and never passed.
    assert!(worst.values().all(|&n| n == 2), "{worst:?}");
    cluster.sim.shutdown().await;
}

/// What the world shows when an abandon test stops the roll.
#[derive(Clone, Copy, PartialEq)]
enum KillPoint {
    /// An app is scaled up by a surge (as the world has it).
    Surged,
    /// Some old agent is down and being terminated.
    Down,
}

/// Rolls `msr-55` with the drain, kills the roll at `at`, abandons it,
/// and checks the cluster ends as it started: app counts, no window, no
/// machine down.
async fn abandoned_at(at: KillPoint) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("msr-55", dir.path()).await;
    let counts = app_counts(&cluster);
    let target = u32::try_from(in_service(&cluster).await.len()).unwrap();
    let path = dir.path().join("msr.json");
    let world = cluster.sim.world();
    let before = counts.clone();
    let killed = roll_until(&cluster, drain(&path, target), move |c| match at {
        KillPoint::Surged => world.with(|w| {
            w.apps(false)
                .iter()
                .any(|a| before.get(&a.id).is_some_and(|&n| a.instances > n))
        }),
        KillPoint::Down => c
            .events
            .iter()
            .any(|e| e.kind == crate::roll::record::checkpoint::EventKind::Terminate),
    })
    .await;
    assert!(killed, "the kill point never came");
    if at == KillPoint::Surged {
        assert_ne!(app_counts(&cluster), counts, "no app was surged");
    }
    let down = cluster
        .sim
        .world()
        .with(|w| w.maintenance_status().down.len());
    if at == KillPoint::Down {
        assert!(down > 0, "no machine was put down");
    }

    let checkpoint = Checkpoint::load(&path).unwrap().expect("the checkpoint");
    let dry = crate::roll::abandon::plan_of(&checkpoint, &[GroupIndex(0)]);
    if at == KillPoint::Surged {
        assert!(
            dry.iter()
                .any(|l| l.starts_with("scale ") && l.contains("surged app(s) back")),
            "{dry:?}"
        );
    }
    let abandoned = abandon_first_group(&cluster, &path, checkpoint).await;
    if at == KillPoint::Surged {
        assert!(
            abandoned
                .lines
                .iter()
                .any(|l| l.contains("surged app(s) back")),
            "{:?}",
            abandoned.lines
        );
    }
    // Marathon applies the scale-downs as deployments.
    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    assert_eq!(
        app_counts(&cluster),
        counts,
        "a surged app kept its extra instance"
    );
    let (windows, down) = cluster.sim.world().with(|w| {
        (
            w.maintenance_schedule().len(),
            w.maintenance_status().down.len(),
        )
    });
    assert_eq!((windows, down), (0, 0), "maintenance left behind");
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn abandoning_a_drain_mid_wave_scales_surged_apps_back() {
    abandoned_at(KillPoint::Surged).await;
}

#[tokio::test(start_paused = true)]
async fn abandoning_a_drain_while_agents_go_brings_downed_machines_up() {
    // Surges are settled before an agent is emptied, so this is a kill
    // point of its own.
    abandoned_at(KillPoint::Down).await;
}

#[tokio::test(start_paused = true)]
async fn after_the_window_marathon_places_no_task_on_an_old_agent() {
    let Fixture {
        dir,
        cluster,
        originals,
        counts,
        target,
    } = fixture("demo").await;
    let world = cluster.sim.world();
    // On every checkpoint write once the window is up: any task staged on
    // an old agent since then is a violation.
    let cutoff: Arc<Mutex<Option<u64>>> = Arc::new(Mutex::new(None));
    let violations = Arc::new(Mutex::new(Vec::<String>::new()));
    let checks = Arc::new(Mutex::new(0usize));
    let (found, counted) = (violations.clone(), checks.clone());
    let observer = Box::new(move |c: &Checkpoint| {
        let windowed = c
            .find_step("scale-up/maintenance")
            .is_some_and(|at| c.plan.step(at).status == Status::Complete);
        if !windowed {
            return;
        }
        let old: HashSet<&str> = c.groups[0]
            .instances
            .iter()
            .map(|i| i.agent_id.as_str())
            .collect();
        let mut cutoff = cutoff.lock().unwrap();
        world.with(|w| {
            let since = *cutoff.get_or_insert_with(|| w.unix_ms(w.now()));
            for t in w.tasks() {
                if old.contains(t.slave_id.as_str()) && t.staged_unix_ms > since {
                    found
                        .lock()
                        .unwrap()
                        .push(format!("{} on {}", t.id, t.host));
                }
            }
        });
        *counted.lock().unwrap() += 1;
    });
    let checkpoint = run_observed(
        &cluster,
        drain(&dir.path().join("demo.json"), target),
        observer,
    )
    .await;
    assert_clean_end(&cluster, &originals, &counts, &checkpoint).await;
    assert!(
        *checks.lock().unwrap() > 10,
        "too few looks to mean anything"
    );
    let violations = violations.lock().unwrap().clone();
    assert!(
        violations.is_empty(),
        "placed on old agents: {violations:?}"
    );
    cluster.sim.shutdown().await;
}
