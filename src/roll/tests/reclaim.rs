//! Instances EC2 takes away in the middle of a good roll (a Spot
//! interruption, a hardware failure: the simulator's `reclaim_instance`),
//! as an operator met them: the tasks lost with a reclaimed new agent are
//! not the image's failure, the group's replacement is one more new
//! instance, and the roll ends COMPLETE, never rolled back; on a bad
//! image the replacement is rolled back with the other new agents.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::in_process::{app_counts, cluster, in_service, roll, roll_observed, settings};
use super::rollback::{all_on_old_agents, shape};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::ports::auto_scaling::AutoScaling;
use crate::roll::record::checkpoint::{Checkpoint, EventKind, OnFailure};
use crate::sim::shared::SharedWorld;
use crate::sim::world::{ImageEffect, Report};

/// The new agent (of those the roll recorded) running the most tasks,
/// and its instance: the one whose loss costs the most.
fn busiest_new(world: &SharedWorld, checkpoint: &Checkpoint) -> Option<String> {
    let new: BTreeMap<&str, &str> = checkpoint
        .groups
        .iter()
        .flat_map(|g| &g.new_agents)
        .map(|a| (a.agent_id.as_str(), a.instance.as_str()))
        .collect();
    world.with(|w| {
        let mut tasks: BTreeMap<&str, usize> = BTreeMap::new();
        for app in w.apps(true) {
            for task in app.tasks.iter().flatten() {
                if let Some((&agent, _)) = new.get_key_value(task.slave_id.as_str()) {
                    *tasks.entry(agent).or_default() += 1;
                }
            }
        }
        tasks
            .into_iter()
            .max_by_key(|&(agent, n)| (n, std::cmp::Reverse(agent)))
            .filter(|&(_, n)| n > 0)
            .map(|(agent, _)| new[agent].to_string())
    })
}

/// How many DescribeInstances calls the simulated EC2 has answered.
fn ec2_describes(report: &Report) -> u64 {
    report
        .api_calls
        .get("aws:DescribeInstances")
        .copied()
        .unwrap_or(0)
}

/// An observer of checkpoint writes that has EC2 reclaim the instance
/// `pick` names, the first time it names one; and where it says which.
fn reclaiming_once(
    world: SharedWorld,
    pick: impl Fn(&SharedWorld, &Checkpoint) -> Option<String> + Send + 'static,
) -> (
    Arc<Mutex<Option<String>>>,
    impl FnMut(&Checkpoint) + Send + 'static,
) {
    let reclaimed: Arc<Mutex<Option<String>>> = Arc::default();
    let seen = reclaimed.clone();
    let observer = move |c: &Checkpoint| {
        let mut reclaimed = seen.lock().unwrap();
        if reclaimed.is_some() {
            return;
        }
        if let Some(instance) = pick(&world, c) {
            world
                .with(|w| w.reclaim_instance(&instance))
                .expect("reclaimed");
            *reclaimed = Some(instance);
        }
    };
    (reclaimed, observer)
}

/// Rolls `demo` with `strategy` onto a good image; once the first moves
/// are on the new agents, EC2 reclaims the busiest new instance. Checks
/// the roll ends COMPLETE as a clean roll does, and that the reclaimed
/// instance was one the roll had placed tasks on.
async fn roll_losing_a_new_instance(strategy: RollStrategy) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo", dir.path()).await;
    let originals = in_service(&cluster).await;
    let counts = app_counts(&cluster);
    let target = u32::try_from(originals.len()).unwrap();
    let mut run_settings = settings(&dir.path().join("roll.json"), target, &[]);
    run_settings.request.strategy = Some(strategy);
    run_settings.request.on_failure = Some(OnFailure::Rollback);

    let (reclaimed, mut reclaim) = reclaiming_once(cluster.sim.world(), busiest_new);
    // EC2's describes from the reclaim on: the replacement is looked for
    // tick after tick until its agent registers, but described once.
    let described_at_reclaim: Arc<Mutex<Option<u64>>> = Arc::default();
    let observer = {
        let (world, at_reclaim, reclaimed) = (
            cluster.sim.world(),
            described_at_reclaim.clone(),
            reclaimed.clone(),
        );
        move |c: &Checkpoint| {
            reclaim(c);
            let mut at_reclaim = at_reclaim.lock().unwrap();
            if at_reclaim.is_none() && reclaimed.lock().unwrap().is_some() {
                *at_reclaim = Some(world.with(|w| ec2_describes(&w.report())));
            }
        }
    };
    let (outcome, checkpoint) = roll_observed(&cluster, run_settings, Box::new(observer)).await;
    let name = format!("{strategy:?}");
    let reclaimed = reclaimed
        .lock()
        .unwrap()
        .clone()
        .expect("a new instance with tasks was reclaimed");
    assert!(
        matches!(outcome, Outcome::Complete { .. }),
        "{name}: {outcome:?}; failure {:?}",
        checkpoint.failure
    );
    assert_eq!(checkpoint.failure, None, "{name}");
    // The group ends at its target, every original replaced, the
    // reclaimed instance gone and its replacement serving.
    let now = in_service(&cluster).await;
    assert_eq!(now.len(), originals.len(), "{name}: {now:?}");
    assert!(now.is_disjoint(&originals), "{name}: an original is left");
    assert!(!now.contains(&reclaimed), "{name}");
    // The group's replacement serves, recorded (and logged) as one more
    // new agent the watch looked at.
    let logged: Vec<&str> = checkpoint
        .events
        .iter()
        .filter(|e| e.kind == EventKind::NewAgent)
        .map(|e| e.message.as_str())
        .collect();
    let replacement: Vec<&String> = now
        .iter()
        .filter(|i| logged.iter().any(|m| m.contains(i.as_str())))
        .collect();
    assert_eq!(replacement.len(), 1, "{name}: {logged:?} against {now:?}");
    assert!(
        checkpoint.groups[0]
            .new_agents
            .iter()
            .any(|a| &a.instance == replacement[0]),
        "{name}"
    );
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{name}: {}", report.summary());
    assert_eq!(app_counts(&cluster), counts, "{name}: an app is not back");
    let at_reclaim = described_at_reclaim.lock().unwrap().expect("reclaimed");
    assert_eq!(
        ec2_describes(&report) - at_reclaim,
        1,
        "{name}: the replacement is described once, not every tick until it registers"
    );
    let (windows, down) = cluster.sim.world().with(|w| {
        (
            w.maintenance_schedule().len(),
            w.maintenance_status().down.len(),
        )
    });
    assert_eq!((windows, down), (0, 0), "{name}: maintenance left behind");
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_new_instance_reclaimed_mid_drain_is_replaced_and_the_roll_completes() {
    roll_losing_a_new_instance(RollStrategy::Drain).await;
}

#[tokio::test(start_paused = true)]
async fn a_new_instance_reclaimed_mid_serial_roll_is_replaced_and_the_roll_completes() {
    roll_losing_a_new_instance(RollStrategy::Serial).await;
}

/// A bad image, and EC2 reclaims a new instance before the failure is
/// found: the group's replacement runs the new image too, so it is
/// recorded as a new agent (logged), and the rollback puts it under
/// maintenance and terminates it with the others: the cluster ends as it
/// began.
#[tokio::test(start_paused = true)]
async fn a_replacement_of_a_reclaimed_new_instance_is_rolled_back_as_a_new_agent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("bad-image", dir.path()).await;
    let before = shape(&cluster).await;
    let originals = in_service(&cluster).await;
    cluster.sim.world().with(|w| {
        w.set_bad_image("2", ImageEffect::Unhealthy)
            .expect("the fault");
        w.set_launch_template_version("2").expect("version 2");
    });
    let target = u32::try_from(before.instances.len()).unwrap();
    let path = dir.path().join("roll.json");
    let mut first = settings(&path, target, &[]);
    first.request.strategy = Some(RollStrategy::Drain);
    first.request.on_failure = Some(OnFailure::Pause);
    let (reclaimed, observer) = reclaiming_once(cluster.sim.world(), |_, c| {
        c.groups[0].new_agents.first().map(|a| a.instance.clone())
    });
    let (outcome, _) = roll_observed(&cluster, first, Box::new(observer)).await;
    assert!(matches!(outcome, Outcome::Paused { .. }), "{outcome:?}");
    let reclaimed = reclaimed.lock().unwrap().clone().expect("reclaimed");
    // The replacement boots and registers while the roll is paused.
    tokio::time::sleep(Duration::from_secs(300)).await;
    let mut back = settings(&path, target, &[]);
    back.request.target = None;
    back.request.strategy = None;
    back.request.on_failure = Some(OnFailure::Rollback);
    let (outcome, done, _) = roll(&cluster, back).await;
    assert!(matches!(outcome, Outcome::RolledBack { .. }), "{outcome:?}");

    let late: Vec<_> = done.groups[0]
        .new_agents
        .iter()
        .filter(|a| a.instance != reclaimed && !originals.contains(&a.instance))
        .collect();
    let logged: Vec<&str> = done
        .events
        .iter()
        .filter(|e| e.kind == EventKind::NewAgent)
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(logged.len(), 1, "{logged:?}");
    let replacement = late
        .iter()
        .find(|a| logged[0].contains(&a.instance))
        .expect("the replacement recorded as a new agent");
    assert!(
        done.groups[0].maintenance.contains(&replacement.machine()),
        "the rollback put the replacement under maintenance"
    );
    assert_eq!(shape(&cluster).await, before);
    all_on_old_agents(&cluster, &done).await;
    cluster.sim.shutdown().await;
}

/// Rolls `demo` with `strategy` onto a good image; once the first wave
/// has moved tasks, EC2 reclaims an old instance whose agent still runs
/// tasks. Its tasks relaunch on new agents (every old one is under the
/// roll's window), the group's replacement is one more new instance, and
/// the roll ends COMPLETE, with no pause for another writer (the group's
/// own replacement, without a decrement, is not one): every original
/// replaced, every app back, one instance above the target (roller
/// terminates no new agent it has not drained), which the roll says.
async fn roll_losing_an_old_instance(strategy: RollStrategy) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("demo", dir.path()).await;
    let originals = in_service(&cluster).await;
    let counts = app_counts(&cluster);
    let target = u32::try_from(originals.len()).unwrap();
    let mut run_settings = settings(&dir.path().join("roll.json"), target, &[]);
    run_settings.request.strategy = Some(strategy);
    run_settings.request.on_failure = Some(OnFailure::Rollback);

    let (reclaimed, observer) = reclaiming_once(cluster.sim.world(), move |world, c| {
        let group = &c.groups[0];
        if group.new_agents.is_empty() || group.waves.is_empty() && strategy == RollStrategy::Drain
        {
            return None;
        }
        // Agents with tasks, and those whose loss alone would take an app
        // to zero (EC2's doing, not the roll's: not picked).
        let (busy, sole): (Vec<String>, Vec<String>) = world.with(|w| {
            let mut busy = Vec::new();
            let mut sole = Vec::new();
            for app in w.apps(true) {
                let agents: Vec<String> = app
                    .tasks
                    .iter()
                    .flatten()
                    .map(|t| t.slave_id.clone())
                    .collect();
                if agents.iter().all(|a| *a == agents[0]) {
                    sole.extend(agents.first().cloned());
                }
                busy.extend(agents);
            }
            (busy, sole)
        });
        // The last old instance the roll would come to, not yet going.
        group
            .instances
            .iter()
            .rev()
            .find(|i| {
                !i.terminate_sent && busy.contains(&i.agent_id) && !sole.contains(&i.agent_id)
            })
            .map(|i| i.id.clone())
    });
    let (outcome, checkpoint) = roll_observed(&cluster, run_settings, Box::new(observer)).await;
    let name = format!("{strategy:?}");
    let reclaimed = reclaimed
        .lock()
        .unwrap()
        .clone()
        .expect("an old instance reclaimed");
    assert!(originals.contains(&reclaimed), "{name}");
    assert!(
        matches!(outcome, Outcome::Complete { .. }),
        "{name}: {outcome:?}; failure {:?}",
        checkpoint.failure
    );
    let now = in_service(&cluster).await;
    assert!(now.is_disjoint(&originals), "{name}: an original is left");
    assert_eq!(now.len(), originals.len() + 1, "{name}: {now:?}");
    let desired = cluster
        .aws
        .describe_group(cluster.env.asg())
        .await
        .expect("group")
        .desired_capacity;
    assert_eq!(desired, target + 1, "{name}");
    let said: Vec<&str> = checkpoint
        .events
        .iter()
        .map(|e| e.message.as_str())
        .filter(|m| m.contains(&reclaimed) && m.contains("without a decrement"))
        .collect();
    assert_eq!(said.len(), 1, "{name}: {said:?}");
    assert!(
        said[0].contains(&format!("ends at {} instances, not {target}", target + 1)),
        "{name}: {}",
        said[0]
    );
    assert!(
        checkpoint.groups[0]
            .instances
            .iter()
            .any(|i| i.id == reclaimed && i.reclaimed),
        "{name}"
    );
    // And the roll's last words say it.
    let Outcome::Complete { summary } = &outcome else {
        unreachable!()
    };
    assert!(
        summary.contains(&format!(
            "ends at {} instances, not {target}: {reclaimed} left",
            target + 1
        )),
        "{name}: {summary}"
    );
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{name}: {}", report.summary());
    assert_eq!(app_counts(&cluster), counts, "{name}: an app is not back");
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn an_old_instance_reclaimed_mid_drain_is_no_other_writer_and_the_roll_completes() {
    roll_losing_an_old_instance(RollStrategy::Drain).await;
}

#[tokio::test(start_paused = true)]
async fn an_old_instance_reclaimed_mid_serial_roll_is_no_other_writer_and_the_roll_completes() {
    roll_losing_an_old_instance(RollStrategy::Serial).await;
}
