//! One roll per cluster, through the real binary: two `roller run`s
//! started at once on the two groups of the served `demo-cluster`.

use std::process::Stdio;

use roller::roll::ports::auto_scaling::AutoScaling;

use crate::cluster::{Cluster, text};

const PUBLIC: &str = "mesos-agents-demo-public";

#[test]
fn two_runs_at_once_on_two_groups_of_a_cluster_one_completes_the_other_exits_2_changing_nothing() {
    let cluster = Cluster::start("demo-cluster", "");
    let aws = cluster.aws();
    let describe = |group: &str| {
        let g = cluster.runtime.block_on(aws.describe_group(group)).unwrap();
        let mut ids: Vec<String> = g.instances.iter().map(|i| i.id.clone()).collect();
        ids.sort();
        let mut tags: Vec<(String, String)> = g
            .tags
            .iter()
            .map(|t| (t.key.clone(), t.value.clone()))
            .collect();
        tags.sort();
        (
            g.desired_capacity,
            g.min_size,
            g.max_size,
            ids,
            g.suspended_processes.len(),
            tags,
        )
    };
    let private_before = describe(&cluster.asg);
    let public_before = describe(PUBLIC);
    let spawn = |target: &str, asg: &str| {
        cluster
            .run_command(&["--target", target, "--no-live"])
            .env("ROLLER_ASG", asg)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let private = spawn("12", &cluster.asg);
    let public = spawn("3", PUBLIC);
    let private = private.wait_with_output().unwrap();
    let public = public.wait_with_output().unwrap();
    let codes = (private.status.code(), public.status.code());
    let (loser, loser_group, before) = match codes {
        (Some(0), Some(2)) => (&public, PUBLIC, public_before),
        (Some(2), Some(0)) => (&private, cluster.asg.as_str(), private_before),
        _ => panic!(
            "exactly one run must complete and the other exit 2: private {}\npublic {}",
            text(&private),
            text(&public)
        ),
    };
    let said = text(loser);
    assert!(said.contains("one roll per cluster"), "{said}");
    assert!(said.contains("roller abandon --run-id"), "{said}");
    assert_eq!(
        describe(loser_group),
        before,
        "the refused run changed its group"
    );
    let report = cluster.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    assert_eq!(report.misplaced_task_ms, 0, "{}", report.summary());
}
