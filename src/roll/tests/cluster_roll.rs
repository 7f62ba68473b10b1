//! A whole cluster as one roll: the `demo-cluster` and `cluster`
//! scenarios' private and public groups under one Mesos and one Marathon,
//! rolled by one plan, with the ground truth checked on the simulator.
//! In-process on paused tokio time.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use super::in_process::{app_counts, cluster, roll_observed, settings};
use crate::plan;
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::ports::auto_scaling::{AutoScaling, LifecycleState};
use crate::roll::record::checkpoint::Checkpoint;
use crate::roll::record::env::{GroupSpec, MaxSurge};
use crate::roll::run::RunSettings;
use crate::simulated::SimulatedCluster;

async fn in_service_of(cluster: &SimulatedCluster, group: &str) -> HashSet<String> {
    cluster
        .aws
        .describe_group(group)
        .await
        .expect("group")
        .instances
        .into_iter()
        .filter(|i| i.lifecycle_state == LifecycleState::InService)
        .map(|i| i.id)
        .collect()
}

/// The cluster's groups as the environment lists them, each with its
/// size before the roll as its target, and the instances it has now.
async fn groups_of(cluster: &SimulatedCluster) -> Vec<(GroupSpec, HashSet<String>)> {
    let names: Vec<String> = cluster
        .sim
        .report()
        .groups
        .iter()
        .map(|g| g.name.clone())
        .collect();
    let mut out = Vec::new();
    for name in names {
        let now = in_service_of(cluster, &name).await;
        let spec = GroupSpec {
            asg: name,
            target: Some(u32::try_from(now.len()).unwrap()),
            select: None,
            complete_lifecycle_hooks: Vec::new(),
        };
        out.push((spec, now));
    }
    out
}

fn drain_settings(path: &std::path::Path) -> RunSettings {
    let mut settings = settings(path, 0, &[]);
    // The tables carry every group's target.
    settings.request.target = None;
    settings.request.strategy = Some(RollStrategy::Drain);
    settings
}

/// A fresh, settled `scenario` whose environment lists every group (each
/// to its size now), its groups with their instances, and each app's
/// instance count.
struct WholeCluster {
    dir: tempfile::TempDir,
    cluster: SimulatedCluster,
    groups: Vec<(GroupSpec, HashSet<String>)>,
    counts: BTreeMap<String, u32>,
}

async fn whole_cluster(scenario: &str) -> WholeCluster {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cluster = cluster(scenario, dir.path()).await;
    let groups = groups_of(&cluster).await;
    assert!(groups.len() > 1, "{scenario} has one group");
    cluster.env.groups = groups.iter().map(|(g, _)| g.clone()).collect();
    let counts = app_counts(&cluster);
    WholeCluster {
        dir,
        cluster,
        groups,
        counts,
    }
}

/// `group` has as many instances in service as `originals`, none of them.
async fn assert_replaced(cluster: &SimulatedCluster, group: &str, originals: &HashSet<String>) {
    let now = in_service_of(cluster, group).await;
    assert_eq!(now.len(), originals.len(), "{group}: {now:?}");
    assert!(
        now.is_disjoint(originals),
        "{group}: an original is still in service"
    );
}

/// `group` has nothing suspended and no `roller:` tag left.
async fn assert_released(cluster: &SimulatedCluster, group: &str) {
    assert_released_but(cluster, group, &[]).await;
}

/// `group` has nothing suspended but `kept`, and no `roller:` tag left.
async fn assert_released_but(cluster: &SimulatedCluster, group: &str, kept: &[&str]) {
    let found = cluster.aws.describe_group(group).await.expect("group");
    assert!(
        found
            .suspended_processes
            .iter()
            .all(|p| kept.contains(&p.as_str())),
        "{group}: {:?}",
        found.suspended_processes
    );
    assert!(
        found.tags.iter().all(|t| !t.key.starts_with("roller:")),
        "{group}: {:?}",
        found.tags
    );
}

/// No outage, no task on an agent of a role its app does not take, every
/// app back at `counts`, and no maintenance window or downed machine left.
fn assert_clean_end(cluster: &SimulatedCluster, counts: &BTreeMap<String, u32>) {
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    assert_eq!(report.misplaced_task_ms, 0, "{}", report.summary());
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
}

/// Every task the roll moved, moved once.
fn assert_moved_once(cluster: &SimulatedCluster) {
    let report = cluster.sim.report();
    assert!(!report.task_moves.is_empty(), "the roll moved no task");
    let moved_twice: Vec<_> = report.task_moves.iter().filter(|m| m.moves != 1).collect();
    assert!(
        moved_twice.is_empty(),
        "tasks that moved more than once: {moved_twice:?}"
    );
}

/// Rolls every group of `scenario` as one plan; checks the ground truth.
async fn roll_whole_cluster(scenario: &str) {
    roll_whole_cluster_capped(scenario, None).await;
}

/// The same, each group's surge capped by `max_surge` when given: no
/// group ever holds more than its size and its cap pending or in
/// service (the simulator's peak), and the capped ones go in batches.
async fn roll_whole_cluster_capped(scenario: &str, max_surge: Option<MaxSurge>) {
    let WholeCluster {
        dir,
        mut cluster,
        groups,
        counts,
    } = whole_cluster(scenario).await;
    cluster.env.max_surge = max_surge;
    // Public apps only on public agents, at every checkpoint write.
    let misplaced = Arc::new(Mutex::new(Vec::new()));
    let seen = misplaced.clone();
    let sim = &cluster.sim;
    let observer = Box::new(move |c: &Checkpoint| {
        let ms = sim.report().misplaced_task_ms;
        if ms > 0 {
            seen.lock()
                .unwrap()
                .push(format!("{ms} ms at {:?}", c.events.last()));
        }
    });
    let (outcome, done) = roll_observed(
        &cluster,
        drain_settings(&dir.path().join("cluster.json")),
        observer,
    )
    .await;

    let tree = plan::tree(&done.plan);
    // What it wrote reads back as it was (a resume takes it up).
    let path = dir.path().join("reread.json");
    let json = done.to_json(&path).expect("json");
    let reread = Checkpoint::parse(&path, std::str::from_utf8(&json).unwrap()).expect("parses");
    assert_eq!(reread, done);
    assert!(
        matches!(outcome, Outcome::Complete { .. }),
        "{outcome:?}\n{tree}"
    );
    assert!(done.plan.is_complete(), "{tree}");
    assert_eq!(done.groups.len(), groups.len(), "{tree}");
    // One plan: every group's phases in it, named by group.
    for (spec, originals) in &groups {
        for phase in ["prepare", "scale-up", "drain", "terminate", "finish"] {
            let id = format!("{}:{phase}", spec.asg);
            assert!(done.plan.phases.iter().any(|p| p.id == id), "{id}\n{tree}");
        }
        // Every agent of every group replaced, each group at its target.
        assert_replaced(&cluster, &spec.asg, originals).await;
        // Capped, the last decrements fall in whichever AZs the last old
        // agents are in: the finish may leave AZRebalance suspended,
        // saying the moves a rebalance needs.
        let said_why = done.events.iter().any(|e| {
            e.message.contains(&spec.asg) && e.message.contains("AZRebalance left suspended")
        });
        let kept: &[&str] = if max_surge.is_some() && said_why {
            &["AZRebalance"]
        } else {
            &[]
        };
        assert_released_but(&cluster, &spec.asg, kept).await;
    }
    let report = cluster.sim.report();
    assert_eq!(report.total_below_floor_ms, 0, "{}", report.summary());
    assert_eq!(*misplaced.lock().unwrap(), Vec::<String>::new());
    assert_moved_once(&cluster);
    assert_clean_end(&cluster, &counts);
    let by_group: BTreeMap<&str, u32> = report
        .groups
        .iter()
        .map(|g| (g.name.as_str(), g.instances_terminated))
        .collect();
    for (spec, originals) in &groups {
        assert_eq!(
            by_group.get(spec.asg.as_str()).copied(),
            Some(u32::try_from(originals.len()).unwrap()),
            "{by_group:?}"
        );
    }
    if max_surge.is_some() {
        for g in &done.groups {
            let surge = g.surge.as_ref().expect("every group capped");
            let found = report
                .groups
                .iter()
                .find(|r| r.name == g.asg)
                .expect("the group in the report");
            assert!(
                found.peak_instances <= surge.ceiling,
                "{}: {} instances at once, above its ceiling {}",
                g.asg,
                found.peak_instances,
                surge.ceiling
            );
            assert!(surge.batches > 1, "{}: {surge:?}", g.asg);
        }
    }
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn one_plan_rolls_both_groups_of_demo_cluster_capped_at_one_never_above_either_ceiling() {
    roll_whole_cluster_capped("demo-cluster", Some(MaxSurge::Instances(1))).await;
}

#[tokio::test(start_paused = true)]
async fn one_plan_rolls_both_groups_of_demo_cluster_public_apps_only_ever_on_public_agents() {
    roll_whole_cluster("demo-cluster").await;
}

#[tokio::test(start_paused = true)]
async fn one_plan_rolls_the_msr_55_private_agents_and_the_five_public_agents_of_cluster() {
    roll_whole_cluster("cluster").await;
}

/// A bad image published for the second group only: the first group is
/// rolled onto its (good) image and kept; the second group's roll is
/// caught by the failure watch and turned around, its old agents kept,
/// its new instances terminated and its launch template set back; every
/// group's processes resumed and tags removed.
#[tokio::test(start_paused = true)]
async fn a_bad_image_in_the_second_group_rolls_that_group_back_and_keeps_the_first_rolled() {
    use crate::sim::world::{BadImage, ImageEffect};
    const PRIVATE: &str = "mesos-agents-demo";
    const PUBLIC: &str = "mesos-agents-demo-public";
    let WholeCluster {
        dir,
        cluster,
        groups,
        counts,
    } = whole_cluster("demo-cluster").await;
    let template = |cluster: &SimulatedCluster, group: &str| {
        let group = group.to_string();
        cluster.sim.world().with(move |w| {
            w.describe_groups(std::slice::from_ref(&group))
                .remove(0)
                .launch_template
                .version
        })
    };
    let public_template = template(&cluster, PUBLIC);
    cluster.sim.world().with(|w| {
        let mut faults = w.faults().clone();
        faults.bad_image.push(BadImage {
            version: "6".to_string(),
            effect: ImageEffect::Unhealthy,
            group: Some(PUBLIC.to_string()),
        });
        w.set_faults(faults).expect("the fault");
        w.set_group_launch_template_version(PUBLIC, "6")
            .expect("version 6");
    });
    let (outcome, done) = roll_observed(
        &cluster,
        drain_settings(&dir.path().join("cluster.json")),
        Box::new(|_: &Checkpoint| {}),
    )
    .await;

    let tree = plan::tree(&done.plan);
    assert!(
        matches!(outcome, Outcome::RolledBack { .. }),
        "{outcome:?}\n{tree}"
    );
    let failure = done.failure.as_ref().expect("the failure is recorded");
    let public_new: HashSet<&str> = done.groups[1]
        .new_agents
        .iter()
        .map(|a| a.agent_id.as_str())
        .collect();
    assert!(
        public_new.contains(failure.agent.as_deref().unwrap_or_default()),
        "found on a new public agent: {failure:?}"
    );
    // Only the group not done is turned around.
    let rollbacks: Vec<&str> = done
        .plan
        .phases
        .iter()
        .filter(|p| p.id.ends_with(":rollback"))
        .map(|p| p.id.as_str())
        .collect();
    assert_eq!(rollbacks, [format!("{PUBLIC}:rollback")], "{tree}");
    let (private_before, public_before) = (&groups[0].1, &groups[1].1);
    // The first group is rolled.
    assert_replaced(&cluster, PRIVATE, private_before).await;
    assert_eq!(
        &in_service_of(&cluster, PUBLIC).await,
        public_before,
        "the second group is back to its old instances"
    );
    assert_eq!(template(&cluster, PUBLIC), public_template);
    for name in [PRIVATE, PUBLIC] {
        assert_released(&cluster, name).await;
    }
    assert_clean_end(&cluster, &counts);
    cluster.sim.shutdown().await;
}

/// Stopped at the group boundary (the second group's scale-up begun while
/// the first drains) and resumed by a new run from the checkpoint file:
/// the resumed run takes every group's record up where it was, and the
/// cluster ends as one uninterrupted roll leaves it.
#[tokio::test(start_paused = true)]
async fn a_cluster_roll_stopped_at_the_group_boundary_resumes_from_its_checkpoint_and_completes() {
    use crate::roll::run::{RunResult, run};
    const PUBLIC: &str = "mesos-agents-demo-public";
    let WholeCluster {
        dir,
        cluster,
        groups,
        counts,
    } = whole_cluster("demo-cluster").await;
    let path = dir.path().join("cluster.json");
    let (tx, stop) = tokio::sync::watch::channel(false);
    let boundary = format!("{PUBLIC}:scale-up");
    let at_boundary = {
        let boundary = boundary.clone();
        move |c: &Checkpoint| {
            c.plan.phases.iter().any(|p| {
                p.id == boundary
                    && p.steps
                        .iter()
                        .any(|s| s.status != crate::plan::Status::Pending)
            })
        }
    };
    let stop_there = at_boundary.clone();
    let first = run(
        cluster.ports(),
        &cluster.env,
        drain_settings(&path),
        stop,
        Box::new(move |c: &Checkpoint| {
            if stop_there(c) {
                let _ = tx.send(true);
            }
        }),
    )
    .await
    .expect("the first run");
    let RunResult::Finished {
        outcome,
        checkpoint,
        ..
    } = first
    else {
        panic!("nothing to do")
    };
    assert!(matches!(outcome, Outcome::Stopped), "{outcome:?}");
    assert!(!checkpoint.plan.is_complete());
    let stored = Checkpoint::load(&path).expect("reads").expect("kept");
    assert_eq!(stored.groups.len(), 2);
    assert!(!stored.groups[1].instances.is_empty());
    // Stopped where it was meant to: the second group scaling up, the
    // first group's agents not all gone yet.
    assert!(at_boundary(&stored), "{}", plan::tree(&stored.plan));
    assert!(
        stored.groups[0].instances.iter().any(|i| !i.terminate_sent),
        "{}",
        plan::tree(&stored.plan)
    );

    let mut resume = drain_settings(&path);
    resume.request.target = None;
    resume.request.strategy = None;
    let (outcome, done) = roll_observed(&cluster, resume, Box::new(|_: &Checkpoint| {})).await;
    let tree = plan::tree(&done.plan);
    assert!(
        matches!(outcome, Outcome::Complete { .. }),
        "{outcome:?}\n{tree}"
    );
    assert_eq!(done.run_id, stored.run_id);
    for (spec, originals) in &groups {
        assert_replaced(&cluster, &spec.asg, originals).await;
    }
    let report = cluster.sim.report();
    assert!(
        report.repeated_terminations.is_empty(),
        "{:?}",
        report.repeated_terminations
    );
    assert_moved_once(&cluster);
    assert_clean_end(&cluster, &counts);
    cluster.sim.shutdown().await;
}
