//! SDK services in simulated time: pods placed at the start on distinct
//! agents holding their resources; `pod replace` killing them, then the
//! recovery step PENDING → PREPARED → STARTING → COMPLETE on an agent that
//! offers (maintenance ignored, DEACTIVATE not); a pod lost with its agent
//! or killed by a drain waiting for a replace; a bad image's relaunches
//! never completing; the plans' interrupt and continue; a deploy in
//! progress; the monitor's figures.

use crate::sim::scenario::Scenario;
use crate::sim::world::{
    DrainConfig, ImageEffect, MachineId, MaintenanceWindow, PlanCommand, PodView, ServiceError,
    SimTime, World,
};

/// Four agents of 4 cpus and 8 GB, the scheduler of `hello-world` (on
/// whichever agent), and its two pods of 1 cpu and 1 GB, ready 10 s after
/// their tasks start. Timings exact: a kill takes 5 s, offers come every
/// second.
const HELLO: &str = r#"
    [group]
    name = "agents"
    min_size = 4
    max_size = 8
    desired_capacity = 4

    [agent]
    cpus = 4
    mem = 8192

    [[apps]]
    id = "/hello-world"
    instances = 1
    cpus = 0.5
    mem = 512
    [apps.labels]
    DCOS_COMMONS_API_VERSION = "v1"
    DCOS_SERVICE_NAME = "hello-world"

    [[services]]
    name = "hello-world"
    {service}

    [[services.pods]]
    type = "hello"
    count = 2
    cpus = 1
    mem = 1024
    readiness_s = 10
"#;

fn world_with(service: &str) -> World {
    let text = HELLO.replace("{service}", service);
    World::new(&Scenario::from_toml(&text, "test").expect("valid scenario"))
}

fn world() -> World {
    world_with("")
}

fn pod(w: &World, name: &str) -> PodView {
    w.pods()
        .into_iter()
        .find(|p| p.pod == name)
        .unwrap_or_else(|| panic!("no pod {name}"))
}

/// The recovery plan's status and its phases' (name, step status).
fn recovery(w: &World) -> (&'static str, Vec<(String, &'static str)>) {
    let plan = w.plan("hello-world", "recovery").expect("a plan");
    let phases = plan
        .phases
        .iter()
        .map(|ph| (ph.name.clone(), ph.steps[0].status))
        .collect();
    (plan.status, phases)
}

/// The pod's tasks' Mesos states, as its status shows them.
fn task_states(w: &World, name: &str) -> Vec<Option<&'static str>> {
    let status = w.pod_status("hello-world", name).expect("a pod");
    status.tasks.iter().map(|t| t.state).collect()
}

fn used_cpus(w: &World, agent_id: &str) -> f64 {
    w.agent(agent_id).expect("registered").used_resources.cpus
}

/// Every agent but `keep` deactivated (no offers).
fn deactivate_all_but(w: &mut World, keep: &[&str]) {
    for a in w.agents() {
        if !keep.contains(&a.id.as_str()) {
            w.deactivate_agent(&a.id).expect("known");
        }
    }
}

fn secs(s: u64) -> SimTime {
    SimTime::from_secs(s)
}

#[test]
fn pods_start_on_distinct_agents_holding_their_resources_and_the_plans_are_complete() {
    let w = world();
    let pods = w.pods();
    assert_eq!(pods.len(), 2);
    let (a, b) = (&pods[0], &pods[1]);
    assert_eq!((a.pod.as_str(), b.pod.as_str()), ("hello-0", "hello-1"));
    assert!(a.running() && b.running());
    assert_ne!(a.agent, b.agent, "one pod of a type per agent");
    assert_eq!(a.away_since_unix_ms, None);
    assert!(a.task_ids[0].starts_with("hello-0-server__"), "{a:?}");
    // Each pod's 1 cpu is on its agent (the scheduler's 0.5 maybe too).
    let agent = a.agent_id.as_deref().expect("placed");
    let held = used_cpus(&w, agent);
    assert!(held == 1.0 || held == 1.5, "{held}");
    // The same seed, the same placement and ids.
    assert_eq!(world().pods(), pods);

    assert_eq!(w.plan_names("hello-world"), Ok(vec!["deploy", "recovery"]));
    let deploy = w.plan("hello-world", "deploy").expect("deploy");
    assert_eq!(deploy.status, "COMPLETE");
    assert_eq!(deploy.phases.len(), 1);
    assert_eq!(deploy.phases[0].name, "hello");
    let steps: Vec<(&str, &str)> = deploy.phases[0]
        .steps
        .iter()
        .map(|s| (s.name.as_str(), s.status))
        .collect();
    assert_eq!(
        steps,
        [
            ("hello-0:[server]", "COMPLETE"),
            ("hello-1:[server]", "COMPLETE")
        ]
    );
    assert_eq!(recovery(&w), ("COMPLETE", vec![]));
    assert_eq!(
        task_states(&w, "hello-0"),
        [Some("TASK_RUNNING")],
        "running from the start"
    );
    assert_eq!(
        w.plan("hello-world", "nope"),
        Err(ServiceError::PlanNotFound("nope".into()))
    );
    assert_eq!(
        w.pod_status("hello-world", "hello-7"),
        Err(ServiceError::PodNotFound("hello-7".into()))
    );
    assert!(matches!(
        w.plan_names("kafka"),
        Err(ServiceError::UnknownService(_))
    ));
}

#[test]
fn a_replaced_pod_is_killed_then_recovered_pending_prepared_starting_complete_elsewhere() {
    let mut w = world();
    let before = pod(&w, "hello-0");
    let other = pod(&w, "hello-1");
    let old_agent = before.agent_id.clone().expect("placed");
    let cpus_before = used_cpus(&w, &old_agent);
    // Only the agents without a pod offer: the replaced pod must move.
    let free: Vec<String> = w
        .agents()
        .into_iter()
        .map(|a| a.id)
        .filter(|id| *id != old_agent && Some(id) != other.agent_id.as_ref())
        .collect();
    deactivate_all_but(&mut w, &[free[0].as_str(), free[1].as_str()]);

    let tasks = w.replace_pod("hello-world", "hello-0").expect("a pod");
    assert_eq!(tasks, ["hello-0-server"]);
    // Until the kill is over the recovery plan has nothing to say.
    assert_eq!(recovery(&w), ("COMPLETE", vec![]));
    assert_eq!(task_states(&w, "hello-0"), [Some("TASK_KILLING")]);
    assert!(!pod(&w, "hello-0").running());

    w.advance_by_ms(4_999);
    assert_eq!(recovery(&w), ("COMPLETE", vec![]));
    w.advance_by_ms(1);
    assert_eq!(task_states(&w, "hello-0"), [Some("TASK_KILLED")]);
    assert_eq!(
        recovery(&w),
        ("PENDING", vec![("hello-0:[server]".to_string(), "PENDING")])
    );
    assert_eq!(pod(&w, "hello-0").agent, None, "its reservation freed");
    assert_eq!(used_cpus(&w, &old_agent), cpus_before - 1.0);

    w.advance_by_ms(1_000);
    let prepared = pod(&w, "hello-0");
    let new_agent = prepared.agent_id.clone().expect("an offer taken");
    assert!(free.contains(&new_agent), "{new_agent} not among {free:?}");
    assert_eq!(recovery(&w).1[0].1, "PREPARED");
    assert_eq!(recovery(&w).0, "IN_PROGRESS");
    assert_eq!(
        task_states(&w, "hello-0"),
        [None],
        "no status before launch"
    );
    assert_ne!(prepared.task_ids, before.task_ids, "new task ids");

    w.advance_by_ms(2_000);
    assert_eq!(
        recovery(&w),
        ("STARTING", vec![("hello-0:[server]".into(), "STARTING")])
    );
    assert_eq!(task_states(&w, "hello-0"), [Some("TASK_STARTING")]);

    w.advance_by_ms(9_999);
    assert_eq!(recovery(&w).0, "STARTING");
    w.advance_by_ms(1);
    assert_eq!(
        recovery(&w),
        ("COMPLETE", vec![("hello-0:[server]".into(), "COMPLETE")])
    );
    let after = pod(&w, "hello-0");
    assert!(after.running());
    assert_eq!(after.agent_id.as_deref(), Some(new_agent.as_str()));
    assert_eq!(task_states(&w, "hello-0"), [Some("TASK_RUNNING")]);

    let report = &w.report().services[0];
    assert_eq!(report.max_pods_not_running, 1);
    assert_eq!(report.pods_not_running_now, 0);
    assert_eq!(report.longest_pod_away_ms, 5_000 + 1_000 + 2_000 + 10_000);
}

#[test]
fn a_replaced_pod_ignores_maintenance_windows_but_not_deactivated_agents() {
    let mut w = world();
    let other = pod(&w, "hello-1").agent_id.expect("placed");
    // Every machine in a window from now on, for an hour.
    let machines: Vec<MachineId> = w
        .agents()
        .iter()
        .map(|a| MachineId {
            hostname: Some(a.hostname.clone()),
            ip: Some(a.ip.clone()),
        })
        .collect();
    let now_ns = i64::try_from(w.epoch().unix_ns(w.now())).expect("fits");
    w.set_maintenance_schedule(vec![MaintenanceWindow {
        machines,
        start_unix_ns: now_ns,
        duration_ns: 3_600_000_000_000,
    }])
    .expect("a valid schedule");
    // Every agent deactivated but hello-1's (taken by its own type).
    deactivate_all_but(&mut w, &[other.as_str()]);
    w.replace_pod("hello-world", "hello-0").expect("a pod");
    w.advance_by_ms(5_000 + 120_000);
    assert_eq!(recovery(&w).1[0].1, "PENDING", "no agent offers");
    assert_eq!(pod(&w, "hello-0").agent, None);

    // One agent takes offers again, in its maintenance window.
    let back = w
        .agents()
        .into_iter()
        .map(|a| a.id)
        .find(|id| *id != other)
        .expect("another agent");
    w.reactivate_agent(&back).expect("deactivated");
    w.advance_by_ms(1_000);
    assert_eq!(pod(&w, "hello-0").agent_id.as_deref(), Some(back.as_str()));
    w.advance_by_ms(12_000);
    assert!(pod(&w, "hello-0").running());
}

#[test]
fn a_pod_lost_with_its_agent_waits_pending_until_it_is_replaced() {
    let mut w = world();
    let lost = pod(&w, "hello-0");
    let instance = lost.instance_id.clone().expect("placed");
    w.terminate_instance(&instance, false)
        .expect("in the group");
    // Gone from EC2, its agent unanswering: Mesos still lists the task...
    w.advance_by_ms(30_000);
    assert_eq!(task_states(&w, "hello-0"), [Some("TASK_RUNNING")]);
    // ...but the pod serves nothing since its machine died.
    assert!(pod(&w, "hello-0").away_since_unix_ms.is_some());
    // The ping timeout removes the agent: the task is lost, the pod waits
    // for its reservation there, which never comes back.
    w.advance_by_ms(60_000);
    assert_eq!(task_states(&w, "hello-0"), [Some("TASK_LOST")]);
    assert_eq!(
        recovery(&w),
        ("PENDING", vec![("hello-0:[server]".into(), "PENDING")])
    );
    w.advance_by_ms(600_000);
    assert_eq!(recovery(&w).1[0].1, "PENDING");
    assert_eq!(pod(&w, "hello-0").agent, lost.agent, "still bound to it");

    // Replaced: nothing left to kill, so the recovery starts over at once.
    w.replace_pod("hello-world", "hello-0").expect("a pod");
    w.advance_by_ms(1_000 + 2_000 + 10_000);
    let back = pod(&w, "hello-0");
    assert!(back.running(), "{back:?}");
    assert_ne!(back.agent, lost.agent);
    let report = &w.report().services[0];
    assert!(report.longest_pod_away_ms >= 690_000, "{report:?}");
}

#[test]
fn drain_agent_kills_a_pods_tasks_and_its_recovery_waits_for_a_replace() {
    let mut w = world();
    let drained = pod(&w, "hello-0").agent_id.expect("placed");
    w.drain_agent_with(
        &drained,
        DrainConfig {
            max_grace_period_ns: Some(2_000_000_000),
            mark_gone: false,
        },
    )
    .expect("drainable");
    assert_eq!(task_states(&w, "hello-0"), [Some("TASK_KILLING")]);
    w.advance_by_ms(1_999);
    assert_eq!(
        w.agent(&drained).and_then(|a| a.drain_state),
        Some("DRAINING")
    );
    w.advance_by_ms(1);
    assert_eq!(task_states(&w, "hello-0"), [Some("TASK_KILLED")]);
    // The pod was the last thing on it (a Marathon task there was killed
    // at once and is gone within the kill's delay).
    w.advance_by_ms(5_000);
    assert_eq!(
        w.agent(&drained).and_then(|a| a.drain_state),
        Some("DRAINED")
    );
    // Its recovery waits for the drained agent's reservation.
    w.advance_by_ms(300_000);
    assert_eq!(
        recovery(&w).1,
        [("hello-0:[server]".to_string(), "PENDING")]
    );
    assert_eq!(
        pod(&w, "hello-0").agent_id.as_deref(),
        Some(drained.as_str())
    );

    w.replace_pod("hello-world", "hello-0").expect("a pod");
    w.advance_by_ms(1_000 + 2_000 + 10_000);
    let back = pod(&w, "hello-0");
    assert!(back.running());
    assert_ne!(back.agent_id.as_deref(), Some(drained.as_str()));
}

#[test]
fn a_pod_relaunched_on_a_bad_image_fails_over_and_over_and_never_completes() {
    let mut w = world();
    w.set_bad_image("1", ImageEffect::Crash).expect("version 1");
    w.replace_pod("hello-world", "hello-0").expect("a pod");
    w.advance_by_ms(5_000);
    let mut states = std::collections::BTreeSet::new();
    for _ in 0..300 {
        w.advance_by_ms(1_000);
        let (_, phases) = recovery(&w);
        assert_ne!(phases[0].1, "COMPLETE", "at {:?}", w.now());
        states.insert(task_states(&w, "hello-0")[0]);
        assert!(!pod(&w, "hello-0").running());
    }
    assert!(states.contains(&Some("TASK_FAILED")), "{states:?}");
    assert!(states.contains(&Some("TASK_STARTING")), "{states:?}");
    let failed = w
        .pod_tasks()
        .into_iter()
        .filter(|t| t.state == Some("TASK_FAILED"))
        .count();
    assert!(failed > 10, "{failed} failures in 5 minutes");
    assert_eq!(w.report().services[0].pods_not_running_now, 1);
}

#[test]
fn an_interrupted_recovery_launches_nothing_until_it_is_continued() {
    let mut w = world();
    let cmd = |w: &mut World, c| w.plan_command("hello-world", "recovery", c);
    // A complete plan cannot be interrupted or continued: "already reported".
    assert_eq!(cmd(&mut w, PlanCommand::Interrupt), Ok(false));
    assert_eq!(cmd(&mut w, PlanCommand::Continue), Ok(false));
    w.replace_pod("hello-world", "hello-0").expect("a pod");
    w.advance_by_ms(5_000);
    assert_eq!(cmd(&mut w, PlanCommand::Interrupt), Ok(true));
    assert_eq!(cmd(&mut w, PlanCommand::Interrupt), Ok(false));
    w.advance_by_ms(60_000);
    assert_eq!(
        recovery(&w),
        ("WAITING", vec![("hello-0:[server]".into(), "PENDING")])
    );
    assert_eq!(cmd(&mut w, PlanCommand::Continue), Ok(true));
    w.advance_by_ms(1_000);
    assert_eq!(recovery(&w).0, "IN_PROGRESS", "PREPARED");
    assert_eq!(cmd(&mut w, PlanCommand::Continue), Ok(false), "running");
    w.advance_by_ms(12_000);
    assert_eq!(recovery(&w).0, "COMPLETE");
}

#[test]
fn a_deploy_in_progress_completes_its_steps_one_by_one_over_deploy_s_unless_interrupted() {
    let mut w = world_with("deploy_s = 60");
    let steps = |w: &World| -> Vec<&'static str> {
        let plan = w.plan("hello-world", "deploy").expect("deploy");
        let mut out = vec![plan.status, plan.phases[0].status];
        out.extend(plan.phases[0].steps.iter().map(|s| s.status));
        out
    };
    assert_eq!(steps(&w), ["STARTING", "STARTING", "STARTING", "PENDING"]);
    w.advance_by_ms(30_000);
    assert_eq!(
        steps(&w),
        ["IN_PROGRESS", "IN_PROGRESS", "COMPLETE", "STARTING"]
    );
    assert!(w.pods().iter().all(PodView::running), "pods keep running");
    let cmd = |w: &mut World, c| w.plan_command("hello-world", "deploy", c);
    assert_eq!(cmd(&mut w, PlanCommand::Interrupt), Ok(true));
    w.advance_by_ms(600_000);
    assert_eq!(steps(&w)[0], "WAITING");
    assert_eq!(cmd(&mut w, PlanCommand::Continue), Ok(true));
    w.advance_by_ms(29_999);
    assert_eq!(steps(&w)[0], "IN_PROGRESS");
    w.advance_by_ms(1);
    assert_eq!(steps(&w), ["COMPLETE", "COMPLETE", "COMPLETE", "COMPLETE"]);
    assert_eq!(cmd(&mut w, PlanCommand::Interrupt), Ok(false));
}

#[test]
fn a_deploy_with_errors_reads_error() {
    let w = world_with(r#"deploy_errors = ["Field 'count' cannot decrease"]"#);
    let plan = w.plan("hello-world", "deploy").expect("deploy");
    assert_eq!(plan.status, "ERROR");
    assert_eq!(plan.errors, ["Field 'count' cannot decrease"]);
}

#[test]
fn nothing_recovers_while_the_scheduler_has_no_running_task() {
    let mut w = world();
    assert!(w.scheduler_running("hello-world"));
    w.replace_pod("hello-world", "hello-0").expect("a pod");
    w.advance_by_ms(5_000);
    // The scheduler's app scaled to zero (its task killed).
    w.update_app_instances("/hello-world", 0, true)
        .expect("an app");
    w.advance_by_ms(60_000);
    assert!(!w.scheduler_running("hello-world"));
    assert_eq!(recovery(&w).1[0].1, "PENDING");
    w.update_app_instances("/hello-world", 1, true)
        .expect("an app");
    w.advance_by_ms(120_000);
    assert!(w.scheduler_running("hello-world"));
    assert!(pod(&w, "hello-0").running());
    assert_eq!(w.now(), secs(185));
}
