//! Faults during whole rolls, for both strategies, in this process on
//! paused tokio time (the simulator's faults: `ApiFaults` on its HTTP
//! facades, `Faults` in its world, leader changes, and another writer's
//! hand on the group). Each ends in a correct roll, checked against the
//! simulator's ground truth, or in a clean pause with a page.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::in_process::{app_counts, cluster, in_service, settings};
use super::wrapped_aws::WrappedAws;
use crate::plan::Status;
use crate::roll::decide::roll_plan::{RollStrategy, WAIT_REGISTERED};
use crate::roll::engine::Outcome;
use crate::roll::ports::PortSet;
use crate::roll::ports::auto_scaling::{AutoScaling, AutoScalingGroup};
use crate::roll::ports::pager::{Page, Pager, PagerError};
use crate::roll::record::checkpoint::Checkpoint;
use crate::roll::run::{RunResult, run};
use crate::sim::shared::{ApiFaults, SystemFaults};
use crate::sim::world::{Faults, LaunchFailure};
use crate::simulated::SimulatedCluster;

const STRATEGIES: [RollStrategy; 2] = [RollStrategy::Drain, RollStrategy::Serial];

/// A pager that keeps every page it is given.
#[derive(Default)]
struct Pages(Mutex<Vec<Page>>);

impl Pager for Pages {
    async fn trigger(&self, page: &Page) -> Result<(), PagerError> {
        self.0.lock().unwrap().push(page.clone());
        Ok(())
    }

    async fn resolve(&self, _dedup_key: &str) -> Result<(), PagerError> {
        Ok(())
    }
}

/// A fresh `demo` cluster and what the roll must keep.
struct Case {
    dir: tempfile::TempDir,
    cluster: SimulatedCluster,
    originals: HashSet<String>,
    counts: BTreeMap<String, u32>,
    target: u32,
    strategy: RollStrategy,
}

async fn case(strategy: RollStrategy) -> Case {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo", dir.path()).await;
    let originals = in_service(&cluster).await;
    let counts = app_counts(&cluster);
    let target = u32::try_from(originals.len()).unwrap();
    Case {
        dir,
        cluster,
        originals,
        counts,
        target,
        strategy,
    }
}

impl Case {
    /// Runs (or resumes) the roll, `observer` called on every checkpoint
    /// write (where a test switches its fault on or off).
    async fn roll(
        &self,
        observer: impl FnMut(&Checkpoint) + Send,
    ) -> (Outcome, Checkpoint, Vec<Page>) {
        self.roll_with(&self.cluster.aws, observer).await
    }

    /// `roll` through `aws` instead of the simulator's own client.
    async fn roll_with<A: AutoScaling + Sync>(
        &self,
        aws: &A,
        observer: impl FnMut(&Checkpoint) + Send,
    ) -> (Outcome, Checkpoint, Vec<Page>) {
        let pages = Pages::default();
        let ports = PortSet {
            aws,
            mesos: &self.cluster.mesos,
            marathon: &self.cluster.marathon,
            pager: &pages,
            services: &crate::roll::ports::services::NoServices,
        };
        let mut settings = settings(&self.dir.path().join("roll.json"), self.target, &[]);
        settings.request.strategy = Some(self.strategy);
        let (_stop_tx, stop) = tokio::sync::watch::channel(false);
        let result = run(ports, &self.cluster.env, settings, stop, Box::new(observer))
            .await
            .expect("the run");
        let RunResult::Finished {
            outcome,
            checkpoint,
            ..
        } = result
        else {
            panic!("nothing to do");
        };
        (outcome, *checkpoint, pages.0.into_inner().unwrap())
    }

    fn name(&self) -> &'static str {
        self.strategy.as_str()
    }

    /// What an uninterrupted roll leaves, as the simulator knows it (read
    /// with the API faults lifted: the check's own calls must not fail).
    async fn assert_clean_end(&self, outcome: &Outcome) {
        self.cluster
            .sim
            .world()
            .set_api_faults(ApiFaults::default());
        let name = self.name();
        assert!(
            matches!(outcome, Outcome::Complete { .. }),
            "{name}: {outcome:?}"
        );
        let now = in_service(&self.cluster).await;
        assert_eq!(now.len(), self.originals.len(), "{name}: {now:?}");
        assert!(now.is_disjoint(&self.originals), "{name}: an original left");
        let report = self.cluster.sim.report();
        assert_eq!(report.apps_with_outage, 0, "{name}: {}", report.summary());
        assert!(
            report.repeated_terminations.is_empty() && report.terminations_of_gone.is_empty(),
            "{name}: terminations sent twice {:?} or for instances gone {:?}",
            report.repeated_terminations,
            report.terminations_of_gone
        );
        assert!(
            report.peak_desired_capacity <= 2 * self.target,
            "{name}: desired reached {}",
            report.peak_desired_capacity
        );
        assert_eq!(app_counts(&self.cluster), self.counts, "{name}: app counts");
        let windows = self
            .cluster
            .sim
            .world()
            .with(|w| w.maintenance_schedule().len());
        assert_eq!(windows, 0, "{name}: maintenance left");
        if self.strategy == RollStrategy::Drain {
            let twice: Vec<_> = report.task_moves.iter().filter(|m| m.moves != 1).collect();
            assert!(twice.is_empty(), "drain: tasks moved twice: {twice:?}");
        }
    }

    /// The roll stopped with a page naming `what`, and nothing of the
    /// originals was terminated after `terminated` (how many the fault
    /// allows).
    fn assert_paused_with_page(
        &self,
        outcome: &Outcome,
        done: &Checkpoint,
        pages: &[Page],
        what: &str,
    ) {
        let name = self.name();
        let Outcome::Paused { reason, paged, .. } = outcome else {
            panic!("{name}: not paused: {outcome:?}");
        };
        assert!(reason.contains(what), "{name}: {reason}");
        assert!(*paged, "{name}: the page did not go out");
        assert_eq!(pages.len(), 1, "{name}: {pages:?}");
        assert!(pages[0].summary.contains(what) || reason.contains(what));
        assert!(done.pause.is_some(), "{name}: no pause recorded");
        assert!(
            done.plan.steps().any(|(_, s)| s.status == Status::Delayed),
            "{name}: no DELAYED step"
        );
    }

    fn instances_terminated(&self) -> usize {
        let report = self.cluster.sim.report();
        usize::try_from(report.instances_terminated).unwrap()
    }
}

fn api_faults(error_rate: f64, throttle: f64, latency_ms: u64) -> ApiFaults {
    let system = SystemFaults {
        error_rate,
        latency_ms,
    };
    ApiFaults {
        aws: system.clone(),
        mesos: system.clone(),
        marathon: system,
        aws_throttle_rate: throttle,
        aws_denied: Vec::new(),
    }
}

/// Switches `faults` on at the roll's first checkpoint write: after the
/// preflight, which refuses on any failure (changing nothing, exit 1).
fn from_the_first_write(
    case: &Case,
    faults: ApiFaults,
) -> impl FnMut(&Checkpoint) + Send + 'static {
    let world = case.cluster.sim.world();
    let mut on = false;
    move |_| {
        if !on {
            on = true;
            world.set_api_faults(faults.clone());
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_fifth_of_every_systems_calls_failing_with_5xx_still_ends_in_a_clean_roll() {
    let mut felt = std::collections::BTreeMap::<&str, u64>::new();
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        let faults = from_the_first_write(&case, api_faults(0.2, 0.0, 0));
        let (outcome, checkpoint, pages) = case.roll(faults).await;
        case.assert_clean_end(&outcome).await;
        // A call failing tick after tick adds no event per tick.
        for pair in checkpoint.events.windows(2) {
            assert!(
                pair[0].message != pair[1].message,
                "{strategy:?}: the same event twice in a row: {}",
                pair[1].message
            );
        }
        assert!(pages.is_empty(), "{pages:?}");
        let report = case.cluster.sim.report();
        let calls: u64 = report.api_calls.values().sum();
        assert!(calls > 100, "the roll made only {calls} calls");
        // Each system's errors were felt, not just switched on: counted
        // over both strategies, as the drain asks Marathon only some fifteen
        // times once the faults are on (none of them failing, one time in
        // thirty), the serial roll hundreds of times.
        for system in ["aws:", "mesos:", "marathon:"] {
            *felt.entry(system).or_default() += report
                .injected_faults
                .iter()
                .filter(|(k, _)| k.starts_with(system))
                .map(|(_, n)| n)
                .sum::<u64>();
        }
    }
    for system in ["aws:", "mesos:", "marathon:"] {
        assert!(
            felt.get(system).is_some_and(|n| *n >= 3),
            "{system} {felt:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn aws_throttling_is_retried_and_the_roll_ends_clean() {
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        let faults = from_the_first_write(&case, api_faults(0.0, 0.3, 0));
        let (outcome, _, _) = case.roll(faults).await;
        case.assert_clean_end(&outcome).await;
        let report = case.cluster.sim.report();
        let throttled = report.injected_faults.get("aws:Throttling").copied();
        assert!(
            throttled.is_some_and(|n| n >= 3),
            "{strategy:?}: throttling was not felt: {:?}",
            report.injected_faults
        );
    }
}

#[tokio::test(start_paused = true)]
async fn latency_past_the_client_timeouts_for_two_minutes_mid_roll_is_waited_out() {
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        let world = case.cluster.sim.world();
        let felt = Arc::new(AtomicBool::new(false));
        let seen = felt.clone();
        let mut writes = 0;
        let (outcome, _, _) = case
            .roll(move |checkpoint| {
                if checkpoint
                    .plan
                    .steps()
                    .any(|(_, s)| s.message.contains("retrying") || s.message.contains("failed"))
                {
                    seen.store(true, Ordering::Relaxed);
                }
                // The observer's first call is the roll as taken up, before
                // any write: the tenth write (the scale-up's first wait,
                // after the warm-pool step's) is its eleventh call.
                writes += 1;
                if writes == 11 {
                    // Every answer 7 s late: past the clients' 5 s timeout.
                    world.set_api_faults(api_faults(0.0, 0.0, 7_000));
                    let world = world.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(std::time::Duration::from_secs(120)).await;
                        world.set_api_faults(ApiFaults::default());
                    });
                }
            })
            .await;
        case.assert_clean_end(&outcome).await;
        assert!(
            felt.load(Ordering::Relaxed),
            "{}: no step ever said a call failed: the latency was not felt",
            case.name()
        );
    }
}

#[tokio::test(start_paused = true)]
async fn mesos_and_marathon_leader_changes_mid_roll_are_followed_without_a_repeated_action() {
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        let mesos = case.cluster.sim.mesos_peers();
        let marathon = case.cluster.sim.marathon_peers();
        let mut writes = 0;
        let (outcome, _, _) = case
            .roll(move |_| {
                // Counted from the roll as taken up (the first call, before
                // any write): the 6th, 9th and 14th writes.
                writes += 1;
                match writes {
                    7 => mesos.set_leader(1),
                    10 => marathon.set_leader(2),
                    // An election: nobody leads for a minute.
                    15 => {
                        mesos.lose_leader();
                        marathon.lose_leader();
                        let (mesos, marathon) = (mesos.clone(), marathon.clone());
                        tokio::spawn(async move {
                            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                            mesos.set_leader(2);
                            marathon.set_leader(0);
                        });
                    }
                    _ => {}
                }
            })
            .await;
        case.assert_clean_end(&outcome).await;
    }
}

/// New instances whose agents never register are the new image failing:
/// after the grace the roll rolls back (the new instances go, nothing old
/// is touched) and pages that it did, before any wait's timeout.
#[tokio::test(start_paused = true)]
async fn new_instances_whose_agents_never_register_are_rolled_back_before_any_termination() {
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        let original = case.cluster.sim.world().with(|w| {
            w.set_faults(Faults {
                agents_never_register: true,
                ..Faults::default()
            })
            .unwrap();
            w.describe_groups(&[]).remove(0).instances.len()
        });
        let (outcome, done, pages) = case.roll(|_| {}).await;
        let name = case.name();
        let Outcome::RolledBack { failure, paged, .. } = &outcome else {
            panic!("{name}: not rolled back: {outcome:?}");
        };
        assert!(
            failure.contains("no Mesos agent registered"),
            "{name}: {failure}"
        );
        assert!(*paged && pages.len() == 1, "{name}: {pages:?}");
        let found = done.failure.as_ref().expect("the failure recorded");
        assert!(found.instance.is_some(), "{name}: {found:?}");
        assert!(
            done.groups[0].instances.iter().all(|i| !i.terminate_sent),
            "{name}"
        );
        let left = case.cluster.sim.world().with(|w| {
            w.describe_groups(&[])
                .remove(0)
                .instances
                .iter()
                .filter(|i| i.lifecycle_state == "InService")
                .count()
        });
        assert_eq!(left, original, "{name}: the group is back at its size");
        assert_eq!(
            case.instances_terminated(),
            original,
            "{name}: only the new instances went"
        );
    }
}

/// Launches of the new instances that keep failing for a reason of the
/// template (its AMI is gone) are the new launch template failing: after
/// the grace the roll rolls back, and the group's desired capacity goes
/// back to what it was (the launches never made are not left for the
/// group to retry).
#[tokio::test(start_paused = true)]
async fn launches_the_template_breaks_are_rolled_back_to_the_original_desired_capacity() {
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        let (original, desired) = case.cluster.sim.world().with(|w| {
            w.set_faults(Faults {
                launches_fail: true,
                launch_failure: LaunchFailure::ImageMissing,
                ..Faults::default()
            })
            .unwrap();
            let group = w.describe_groups(&[]).remove(0);
            (group.instances.len(), group.desired_capacity)
        });
        let (outcome, done, pages) = case.roll(|_| {}).await;
        let name = case.name();
        let Outcome::RolledBack { failure, .. } = &outcome else {
            panic!("{name}: not rolled back: {outcome:?}");
        };
        assert!(failure.contains("launches fail"), "{name}: {failure}");
        assert!(failure.contains("does not exist"), "{name}: {failure}");
        assert_eq!(pages.len(), 1, "{name}: {pages:?}");
        assert!(
            done.groups[0].instances.iter().all(|i| !i.terminate_sent),
            "{name}"
        );
        let group = case
            .cluster
            .sim
            .world()
            .with(|w| w.describe_groups(&[]).remove(0));
        assert_eq!(group.desired_capacity, desired, "{name}");
        assert_eq!(group.instances.len(), original, "{name}");
        assert_eq!(case.instances_terminated(), 0, "{name}: nothing old went");
    }
}

/// Launches refused for room in EC2 (no capacity in the AZ, a vCPU
/// quota, a full subnet) say nothing of the image: after the grace the
/// roll pauses and pages with what AWS said, rolls nothing back and
/// terminates nothing; once there is room, the rerun waits again and
/// the roll ends clean.
#[tokio::test(start_paused = true)]
async fn launches_refused_for_room_pause_without_a_rollback_and_a_rerun_finishes_the_roll() {
    let shortages = [
        (LaunchFailure::Capacity, "do not have sufficient"),
        (LaunchFailure::VcpuLimit, "vCPU limit"),
        (LaunchFailure::SubnetFull, "free addresses"),
    ];
    for (strategy, (shortage, said)) in STRATEGIES.into_iter().zip(shortages.into_iter().cycle()) {
        let case = case(strategy).await;
        let desired_before = case.cluster.sim.world().with(|w| {
            w.set_faults(Faults {
                launches_fail: true,
                launch_failure: shortage,
                ..Faults::default()
            })
            .unwrap();
            w.describe_groups(&[]).remove(0).desired_capacity
        });
        let (outcome, done, pages) = case.roll(|_| {}).await;
        case.assert_paused_with_page(&outcome, &done, &pages, said);
        let name = case.name();
        let reason = &done.pause.as_ref().unwrap().reason;
        assert!(
            reason.contains("nothing is rolled back"),
            "{name}: {reason}"
        );
        assert!(
            done.failure.is_none(),
            "{name}: recorded as the image's failure"
        );
        assert_eq!(case.instances_terminated(), 0, "{name}: nothing old went");
        let desired = case
            .cluster
            .sim
            .world()
            .with(|w| w.describe_groups(&[]).remove(0).desired_capacity);
        assert!(desired > desired_before, "{name}: the scale-up was undone");

        case.cluster
            .sim
            .world()
            .with(|w| w.set_faults(Faults::default()).unwrap());
        let (outcome, _, _) = case.roll(|_| {}).await;
        case.assert_clean_end(&outcome).await;
    }
}

/// An agent that outlives its instance cannot stop either strategy: each
/// puts the machine DOWN (it is in the roll's maintenance window) before
/// terminating its instance, and Mesos removes an agent whose machine goes
/// DOWN, whatever the agent does. (A serial agent outside any window,
/// with nothing to move, would be waited for until Mesos drops it, and
/// that wait pauses and pages.)
#[tokio::test(start_paused = true)]
async fn an_agent_that_never_deregisters_cannot_stop_a_roll_that_puts_its_machine_down() {
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        case.cluster.sim.world().with(|w| {
            w.set_faults(Faults {
                agents_outlive_instances: 1,
                ..Faults::default()
            })
            .unwrap()
        });
        let (outcome, _, _) = case.roll(|_| {}).await;
        case.assert_clean_end(&outcome).await;
    }
}

#[tokio::test(start_paused = true)]
async fn an_app_never_healthy_after_a_move_is_found_and_rolled_back_without_an_outage() {
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        let app = case.counts.keys().next().unwrap().clone();
        case.cluster.sim.world().with(|w| {
            w.set_faults(Faults {
                never_healthy_apps: vec![app.clone()],
                ..Faults::default()
            })
            .unwrap()
        });
        let (outcome, done, pages) = case.roll(|_| {}).await;
        let name = case.name();
        // Found by the watch, not waited out: a surge whose new task never
        // becomes healthy is cancelled (Marathon deploys the count before).
        let Outcome::RolledBack { failure, paged, .. } = &outcome else {
            panic!("{name}: not rolled back: {outcome:?}");
        };
        assert!(failure.contains(&app), "{name}: {failure}");
        assert!(*paged, "{name}");
        assert!(
            pages.iter().any(|p| p.summary.contains("rolled")),
            "{name}: {pages:?}"
        );
        assert!(
            !done.events.iter().any(|e| e.message.contains("timed out")),
            "{name}"
        );
        assert_eq!(app_counts(&case.cluster), case.counts, "{name}");
        let report = case.cluster.sim.report();
        assert_eq!(report.apps_with_outage, 0, "{name}: {}", report.summary());
    }
}

#[tokio::test(start_paused = true)]
async fn healthy_tasks_turning_unhealthy_mid_roll_pause_and_page_naming_the_app() {
    const APP: &str = "/web/frontend";
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        // Once the new agents are registered, before any old one goes, the
        // app's healthy tasks start failing their checks and never recover.
        let (outcome, done, pages) = case
            .roll(once_registered(&case, |w| {
                w.set_faults(Faults {
                    failing_health_checks: vec![APP.into()],
                    ..Faults::default()
                })
                .unwrap()
            }))
            .await;
        case.assert_paused_with_page(&outcome, &done, &pages, "timed out");
        let reason = &done.pause.as_ref().unwrap().reason;
        assert!(reason.contains(APP), "{}: {reason}", case.name());
        let healthy = case
            .cluster
            .sim
            .world()
            .with(|w| w.app(APP, false).unwrap().tasks_healthy);
        assert_eq!(healthy, 0, "{}: the fault held to the end", case.name());
    }
}

/// An observer that makes `change` to the world once, on the checkpoint
/// write that completes the scale-up's registration wait (before any
/// termination).
fn once_registered(
    case: &Case,
    change: impl Fn(&mut crate::sim::World) + Send + 'static,
) -> impl FnMut(&Checkpoint) + Send + 'static {
    let world = case.cluster.sim.world();
    let mut done = false;
    move |checkpoint| {
        let registered = checkpoint
            .plan
            .steps()
            .any(|(_, s)| s.id == WAIT_REGISTERED && s.status == Status::Complete);
        if registered && !done {
            done = true;
            world.with(&change);
        }
    }
}

/// Another writer's change, made on the write that completes the
/// scale-up's registration wait (before any termination).
async fn another_writer(
    strategy: RollStrategy,
    change: impl Fn(&mut crate::sim::World) + Send + 'static,
    says: &str,
    check: impl Fn(&AutoScalingGroup),
) {
    let case = case(strategy).await;
    let (outcome, done, pages) = case.roll(once_registered(&case, change)).await;
    case.assert_paused_with_page(&outcome, &done, &pages, "another writer");
    let reason = &done.pause.as_ref().unwrap().reason;
    assert!(reason.contains(says), "{}: {reason}", case.name());
    assert_eq!(case.instances_terminated(), 0, "{}", case.name());
    let group = case
        .cluster
        .aws
        .describe_group(case.cluster.env.asg())
        .await
        .unwrap();
    check(&group);
}

#[tokio::test(start_paused = true)]
async fn another_writer_changing_desired_min_max_or_processes_pauses_and_pages_and_is_not_undone() {
    for strategy in STRATEGIES {
        another_writer(
            strategy,
            |w| w.set_desired_capacity("mesos-agents-demo", 23).unwrap(),
            "desired capacity is 23",
            |g| assert_eq!(g.desired_capacity, 23),
        )
        .await;
        another_writer(
            strategy,
            |w| {
                w.update_group("mesos-agents-demo", Some(13), None, None)
                    .unwrap()
            },
            "MinSize is 13",
            |g| assert_eq!(g.min_size, 13),
        )
        .await;
        another_writer(
            strategy,
            |w| {
                w.update_group("mesos-agents-demo", None, Some(30), None)
                    .unwrap()
            },
            "MaxSize is 30",
            |g| assert_eq!(g.max_size, 30),
        )
        .await;
        another_writer(
            strategy,
            |w| {
                w.resume_processes("mesos-agents-demo", &["AZRebalance".to_string()])
                    .unwrap()
            },
            "suspended processes",
            |g| {
                assert!(
                    !g.suspended_processes
                        .iter()
                        .any(|p| p.as_str() == "AZRebalance")
                )
            },
        )
        .await;
    }
}

/// A crash between the unlock step's intent and its end (the run-id tag
/// already removed): the resume must know the tag went by this run's hand,
/// not refuse the group as abandoned. Found by `scripts/crash`.
#[tokio::test(start_paused = true)]
async fn a_resume_after_a_crash_once_the_tag_is_removed_finishes_the_roll() {
    let case = case(RollStrategy::Drain).await;
    let mut at_unlock: Option<Checkpoint> = None;
    let (outcome, _, _) = case
        .roll(|checkpoint| {
            let removing = checkpoint
                .events
                .last()
                .is_some_and(|e| e.message.starts_with("remove tag"));
            if removing && at_unlock.is_none() {
                at_unlock = Some(checkpoint.clone());
            }
        })
        .await;
    case.assert_clean_end(&outcome).await;
    // Back to the moment after the intent, the tag removed: as if killed
    // right after the DeleteTags call.
    let record = at_unlock.expect("the unlock step wrote its intent");
    record.save(&case.dir.path().join("roll.json")).unwrap();
    let (outcome, done, _) = case.roll(|_| {}).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert!(done.plan.is_complete());
}

/// Calls that keep failing (every Marathon answer a 5xx from the first
/// write on) are retried until their wait runs out, then the roll pauses
/// and pages, naming the failure: it never ends on an unpaged error.
#[tokio::test(start_paused = true)]
async fn calls_failing_for_good_pause_and_page_once_their_wait_runs_out() {
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        let mut faults = ApiFaults::default();
        faults.marathon.error_rate = 1.0;
        let faults = from_the_first_write(&case, faults);
        let (outcome, done, pages) = case.roll(faults).await;
        case.assert_paused_with_page(&outcome, &done, &pages, "timed out");
        let reason = &done.pause.as_ref().unwrap().reason;
        assert!(
            reason.contains("retrying") || reason.contains("last look failed"),
            "{}: {reason}",
            case.name()
        );
        assert!(reason.contains("Marathon"), "{}: {reason}", case.name());
        let report = case.cluster.sim.report();
        assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    }
}

#[tokio::test(start_paused = true)]
async fn a_termination_failing_tick_after_tick_is_resent_under_one_event() {
    for strategy in STRATEGIES {
        let case = case(strategy).await;
        let aws = WrappedAws::failing_terminations(&case.cluster.aws, 6);
        let (outcome, checkpoint, pages) = case.roll_with(&aws, |_: &Checkpoint| {}).await;
        case.assert_clean_end(&outcome).await;
        assert!(pages.is_empty(), "{pages:?}");
        assert_eq!(aws.failing_terminations.load(Ordering::SeqCst), 0);
        // Each instance's intent at most twice: when first sent, and once
        // when sent again (in the drain, a batch's first intent names them
        // all).
        let intents: Vec<&str> = checkpoint
            .events
            .iter()
            .filter(|e| e.kind == crate::roll::record::checkpoint::EventKind::Intent)
            .map(|e| e.message.as_str())
            .collect();
        for id in &case.originals {
            let naming = intents
                .iter()
                .filter(|m| {
                    m.starts_with(&format!("terminate {id} "))
                        || (m.starts_with("put ") && m.contains(id.as_str()))
                })
                .count();
            assert!(
                (1..=2).contains(&naming),
                "{strategy:?}: {naming} intents name {id}: {intents:#?}"
            );
        }
    }
}
