//! The AWS steps of a roll against moto (`ROLLER_TEST_MOTO_URL`, set by
//! `scripts/with-moto`): lock, suspend, scale-up, terminations, resume and
//! unlock run through the real adapter, and the group is checked after
//! each phase. Mesos and Marathon come from a simulated cluster that has
//! nothing to do with moto's instances (their agents are unknown to it),
//! so its waits pass at once and the test sees AWS alone; the step that
//! waits for new agents is left out of the plan for the same reason.

use std::collections::BTreeMap;

use super::wrapped_aws::WrappedAws;
use crate::aws::contract::moto::Moto;
use crate::aws::contract::{Backend, GroupSetup};
use crate::plan::{Operation, Target};
use crate::roll::decide::roll_plan::{self, PlanOptions, WAIT_REGISTERED};
use crate::roll::engine::{Outcome, RunOptions, Runner};
use crate::roll::ports::PortSet;
use crate::roll::ports::auto_scaling::{
    AutoScaling, AutoScalingGroup, LifecycleState, ScalingProcess,
};
use crate::roll::record::RUN_ID_TAG;
use crate::roll::record::checkpoint::{
    Checkpoint, CheckpointStore, GroupRoll, OriginalGroup, RecordedEnvironment, RolledInstance,
    VERSION,
};
use crate::roll::record::env::{Environment, GroupSpec};
use crate::sim::Scenario;
use crate::simulated::SimulatedCluster;

const N: u32 = 3;

async fn group(moto: &Moto) -> AutoScalingGroup {
    moto.aws()
        .describe_group(moto.group())
        .await
        .expect("describe")
}

fn live(group: &AutoScalingGroup) -> Vec<String> {
    group
        .instances
        .iter()
        .filter(|i| !i.lifecycle_state.is_leaving())
        .map(|i| i.id.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_aws_steps_of_a_roll_leave_the_moto_group_as_each_phase_promises() {
    let moto = Moto::provide(GroupSetup::sized(N, 8, N)).await;
    let start = group(&moto).await;
    let originals = live(&start);
    recorder("reset-recording").await;
    recorder("start-recording").await;
    assert_eq!(originals.len(), N as usize);
    // A process suspended before the roll must stay suspended after it.
    moto.aws()
        .suspend_processes(moto.group(), &[ScalingProcess::HealthCheck])
        .await
        .expect("suspend HealthCheck");

    let dir = tempfile::tempdir().expect("tempdir");
    let sim = SimulatedCluster::start(
        &Scenario::load("demo").expect("demo"),
        1000.0,
        dir.path().to_path_buf(),
    )
    .await
    .expect("simulated cluster");
    let env = Environment {
        groups: vec![GroupSpec::named(moto.group())],
        aws_endpoint_url: Some(crate::aws::contract::moto::moto_url()),
        ..sim.env.clone()
    };
    let instances: Vec<RolledInstance> = start
        .instances
        .iter()
        .map(|i| RolledInstance {
            id: i.id.clone(),
            availability_zone: i.availability_zone.clone(),
            agent_id: format!("not-an-agent-{}", i.id),
            hostname: format!("moto-{}", i.id),
            ip: None,
            terminate_sent: false,
            reclaimed: false,
            replaced: false,
            other_tasks: Default::default(),
            batch: 0,
        })
        .collect();
    let mut plan = roll_plan::build(
        crate::roll::record::kinds::GroupIndex(0),
        env.asg(),
        &instances,
        PlanOptions {
            strategy: roll_plan::RollStrategy::Serial,
            ..PlanOptions::default()
        },
    );
    plan.phases[1].steps.retain(|s| s.id != WAIT_REGISTERED);
    // Gates between phases, so the group can be looked at after each.
    for phase in 1..=3 {
        plan.apply(Operation::Interrupt, Target::Phase(phase));
    }
    let mut zones = BTreeMap::new();
    for i in &start.instances {
        *zones.entry(i.availability_zone.clone()).or_insert(0) += 1;
    }
    let checkpoint = Checkpoint {
        version: VERSION,
        run_id: "moto-run".to_string(),
        environment: RecordedEnvironment::of(&env),
        honor_min_health: false,
        max_unavailable: crate::roll::record::checkpoint::DEFAULT_MAX_UNAVAILABLE,
        failure: None,
        acknowledged_failures: Vec::new(),
        failure_limit: 0,
        alarms: Vec::new(),
        tolerated_failures: Vec::new(),
        standby: Default::default(),
        protected: Default::default(),
        on_failure: Default::default(),
        allow_unhealthy: Vec::new(),
        pause: None,
        open_page: None,
        progress: Default::default(),
        operations_applied: Vec::new(),
        services: Default::default(),
        summary: None,
        plan,
        events: Vec::new(),
        events_dropped: 0,
        events_in_log: 0,
        groups: vec![GroupRoll {
            asg: env.asg().to_string(),
            target: N,
            select: "all".to_string(),
            original: OriginalGroup {
                min_size: start.min_size,
                max_size: start.max_size,
                desired_capacity: start.desired_capacity,
                zones,
                instance_ids: originals.clone(),
                left_out: Vec::new(),
            },
            instances,
            suspended_before: vec!["HealthCheck".to_string()],
            suspended_by_roll: Vec::new(),
            raised_max_from: None,
            maintenance: Vec::new(),
            surges: Vec::new(),
            waves: Vec::new(),
            new_agents: Vec::new(),
            bake_until_unix_ms: None,
            held: Vec::new(),
            surge: None,
            opened_batches: 0,
            by_id: Default::default(),
        }],
    };
    let path = dir.path().join("moto.json");
    let ports = PortSet {
        aws: &WrappedAws::without_refreshes(moto.aws()),
        mesos: &sim.mesos,
        marathon: &sim.marathon,
        pager: &sim.pager,
        services: &crate::roll::ports::services::NoServices,
    };
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let step = |checkpoint: Checkpoint| {
        Runner::new(
            ports,
            &env,
            RunOptions::default(),
            checkpoint,
            CheckpointStore::file(path.clone()),
            stop.clone(),
            Box::new(|_: &Checkpoint| {}),
        )
        .expect("runner")
        .run()
    };

    // prepare: tagged with the run id, the three processes suspended.
    let (outcome, mut record) = step(checkpoint.clone()).await.expect("prepare");
    assert!(matches!(outcome, Outcome::Held { .. }), "{outcome:?}");
    let g = group(&moto).await;
    assert_eq!(g.tag(RUN_ID_TAG), Some("moto-run"));
    for p in [
        "AZRebalance",
        "AlarmNotification",
        "ScheduledActions",
        "HealthCheck",
    ] {
        assert!(
            g.suspended_processes.iter().any(|s| s.as_str() == p),
            "{p} not suspended: {:?}",
            g.suspended_processes
        );
    }
    assert_eq!(record.groups[0].suspended_by_roll.len(), 3);

    // scale-up: desired N + K, moto launches at once.
    record.plan.apply(Operation::Continue, Target::Phase(1));
    let (outcome, mut record) = step(record).await.expect("scale-up");
    assert!(matches!(outcome, Outcome::Held { .. }), "{outcome:?}");
    let g = group(&moto).await;
    assert_eq!(g.desired_capacity, 2 * N);
    assert_eq!(live(&g).len(), 2 * N as usize);

    // replace: every original terminated with a decrement.
    record.plan.apply(Operation::Continue, Target::Phase(2));
    let (outcome, mut record) = step(record).await.expect("replace");
    assert!(matches!(outcome, Outcome::Held { .. }), "{outcome:?}");
    let g = group(&moto).await;
    assert_eq!(g.desired_capacity, N);
    let now = live(&g);
    assert_eq!(now.len(), N as usize, "{now:?}");
    assert!(originals.iter().all(|id| !now.contains(id)), "{now:?}");
    assert!(record.groups[0].instances.iter().all(|i| i.terminate_sent));
    assert!(
        g.instances
            .iter()
            .filter(|i| !originals.contains(&i.id))
            .all(|i| i.lifecycle_state == LifecycleState::InService)
    );

    // finish: only what the roll suspended is resumed; the tag is gone.
    record.plan.apply(Operation::Continue, Target::Phase(3));
    let (outcome, record) = step(record).await.expect("finish");
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let g = group(&moto).await;
    assert_the_iam_policy_covers_the_roll(&moto, &g, &originals).await;
    assert_eq!(g.tag(RUN_ID_TAG), None);
    let mut suspended: Vec<&str> = g.suspended_processes.iter().map(|p| p.as_str()).collect();
    suspended.sort();
    // moto puts a launch batch in one AZ: when the AZs end uneven,
    // AZRebalance stays suspended (it would terminate loaded agents) and
    // the step says how to resume it.
    let mut counts = BTreeMap::new();
    for az in &g.availability_zones {
        counts.insert(az.clone(), 0);
    }
    for i in g
        .instances
        .iter()
        .filter(|i| !i.lifecycle_state.is_leaving())
    {
        *counts.entry(i.availability_zone.clone()).or_insert(0) += 1;
    }
    let uneven = !crate::roll::decide::rebalance::rebalance(&counts)
        .moves
        .is_empty();
    let resume_message = &record.plan.phases[3].steps[0].message;
    if uneven {
        assert_eq!(suspended, ["AZRebalance", "HealthCheck"]);
        assert!(
            resume_message.contains("AZRebalance left suspended"),
            "{resume_message}"
        );
    } else {
        assert_eq!(suspended, ["HealthCheck"]);
    }
    assert_eq!(g.desired_capacity, N);
    assert!(record.plan.is_complete());
    sim.sim.shutdown().await;
}

/// Drives moto's request recorder (`/moto-api/recorder/…`), which
/// `scripts/with-moto` points at a temporary file.
async fn recorder(action: &str) -> String {
    let url = format!(
        "{}/moto-api/recorder/{action}",
        crate::aws::contract::moto::moto_url()
    );
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let request = if action == "download-recording" {
        client.get(&url)
    } else {
        client.post(&url)
    };
    let response = request.send().await.expect("moto's recorder");
    assert!(
        response.status().is_success(),
        "{action}: {}",
        response.status()
    );
    response.text().await.unwrap()
}

/// The actions moto saw for this test's group and instances while the
/// roll ran (other tests share moto: their requests name other groups and
/// instances) must all be in the reference's IAM policy; the policy's other
/// actions are those this roll cannot reach, each for a stated reason.
async fn assert_the_iam_policy_covers_the_roll(
    moto: &Moto,
    end: &AutoScalingGroup,
    originals: &[String],
) {
    recorder("stop-recording").await;
    let recording = recorder("download-recording").await;
    let mut ours: Vec<String> = originals.to_vec();
    ours.extend(end.instances.iter().map(|i| i.id.clone()));
    ours.push(moto.group().to_string());
    let mut seen = std::collections::BTreeSet::new();
    for line in recording.lines().filter(|l| !l.trim().is_empty()) {
        let entry: serde_json::Value = serde_json::from_str(line).expect("a recorded request");
        let body = entry["body"].as_str().unwrap_or_default();
        let body = if entry["body_encoded"] == true {
            String::from_utf8(decode_base64(body)).unwrap_or_default()
        } else {
            body.to_string()
        };
        if !ours.iter().any(|id| body.contains(id.as_str())) {
            continue;
        }
        let Some(action) = body
            .split('&')
            .find_map(|pair| pair.strip_prefix("Action="))
        else {
            continue;
        };
        let authorization = entry["headers"]["Authorization"]
            .as_str()
            .or_else(|| entry["headers"]["authorization"].as_str())
            .unwrap_or_default();
        let service = if authorization.contains("/ec2/") {
            "ec2"
        } else {
            "autoscaling"
        };
        seen.insert(format!("{service}:{action}"));
    }
    let policy = crate::aws::tests::documented_iam_policy();
    assert!(
        seen.len() >= 6,
        "the recording shows too little of the roll: {seen:?}"
    );
    let beyond: Vec<&String> = seen.difference(&policy).collect();
    assert!(
        beyond.is_empty(),
        "called but not in docs/reference.md's policy: {beyond:?}"
    );
    // Not reached here: the activities are read only while new instances
    // are slow to register, EC2 only by the preflight and the
    // registration wait (both left out: moto's instances run no agent),
    // UpdateAutoScalingGroup only with --raise-max; DescribeInstanceRefreshes
    // goes to `WrappedAws::without_refreshes` (moto has no Instance
    // Refresh): the simulator's tests call it. The lifecycle-hook calls
    // only for an instance in a hook's wait, which moto never holds one
    // in (and DescribeLifecycleHooks by the preflight only when the
    // environment names hooks to complete). ExitStandby only with
    // `standby = "terminate"` and an instance in Standby (the contract
    // suite calls it on moto).
    let unreached: std::collections::BTreeSet<&str> = [
        "autoscaling:CompleteLifecycleAction",
        "autoscaling:ExitStandby",
        "autoscaling:DescribeLifecycleHooks",
        "autoscaling:DescribeInstanceRefreshes",
        "autoscaling:DescribeScalingActivities",
        "autoscaling:UpdateAutoScalingGroup",
        "ec2:DescribeInstances",
        // Only for a roll that names alarms; this one names none.
        "cloudwatch:DescribeAlarms",
    ]
    .into();
    let missing: Vec<&String> = policy
        .difference(&seen)
        .filter(|a| !unreached.contains(a.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "in the policy, never called by the roll: {missing:?}"
    );
}

/// Standard base64 (moto's recorder encodes bodies that are bytes).
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0u32);
    for sextet in text.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(sextet);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}
