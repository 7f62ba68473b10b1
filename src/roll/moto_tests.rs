//! The AWS steps of a roll against moto (`ROLLER_TEST_MOTO_URL`, set by
//! `scripts/with-moto`): lock, suspend, scale-up, terminations, resume and
//! unlock run through the real adapter, and the group is checked after
//! each phase. Mesos and Marathon come from a simulated cluster that has
//! nothing to do with moto's instances (their agents are unknown to it),
//! so its waits pass at once and the test sees AWS alone; the step that
//! waits for new agents is left out of the plan for the same reason.

use std::collections::BTreeMap;

use super::checkpoint::{Checkpoint, OriginalGroup, RecordedEnvironment, RolledInstance, VERSION};
use super::env::Environment;
use super::ports::auto_scaling::{AutoScaling, AutoScalingGroup, LifecycleState, ScalingProcess};
use super::roll_plan::{self, PlanOptions, WAIT_REGISTERED};
use super::runner::{Outcome, Ports, RUN_ID_TAG, RunOptions, Runner};
use crate::aws::contract::moto::Moto;
use crate::aws::contract::{Backend, GroupSetup};
use crate::plan::{Operation, Target};
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
        asg: moto.group().to_string(),
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
        })
        .collect();
    let mut plan = roll_plan::build(
        &env.asg,
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
        asg: env.asg.clone(),
        environment: RecordedEnvironment::of(&env),
        target: N,
        select: "all".to_string(),
        honor_min_health: false,
        original: OriginalGroup {
            min_size: start.min_size,
            max_size: start.max_size,
            desired_capacity: start.desired_capacity,
            zones,
            instance_ids: originals.clone(),
        },
        instances,
        suspended_before: vec!["HealthCheck".to_string()],
        suspended_by_roll: Vec::new(),
        raised_max_from: None,
        maintenance: Vec::new(),
        surges: Vec::new(),
        waves: Vec::new(),
        max_unavailable: crate::roll::checkpoint::DEFAULT_MAX_UNAVAILABLE,
        allow_unhealthy: Vec::new(),
        pause: None,
        open_page: None,
        progress: Default::default(),
        operations_applied: Vec::new(),
        summary: None,
        plan,
        events: Vec::new(),
    };
    let path = dir.path().join("moto.json");
    let ports = Ports {
        aws: moto.aws(),
        mesos: &sim.mesos,
        marathon: &sim.marathon,
        pager: &sim.pager,
    };
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let step = |checkpoint: Checkpoint| {
        Runner::new(
            ports,
            &env,
            RunOptions::default(),
            checkpoint,
            path.clone(),
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
    assert_eq!(record.suspended_by_roll.len(), 3);

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
    assert!(record.instances.iter().all(|i| i.terminate_sent));
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
    let uneven = !super::rebalance::rebalance(&counts).moves.is_empty();
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
