//! Job runs in simulated time: placed first-fit on an agent with room
//! that takes offers, using its resources until they finish by
//! themselves, killed by DRAIN_AGENT with their own grace capped by the
//! drain's (the agent DRAINED only then), and lost with their agent.

use crate::sim::scenario::Scenario;
use crate::sim::world::{DrainConfig, JobRunView, MachineId, MaintenanceWindow, SimTime, World};

/// Three agents of 4 cpus and 8 GB, no Marathon app, exact timings.
const AGENTS: &str = r#"
    [group]
    name = "agents"
    min_size = 3
    max_size = 6
    desired_capacity = 3

    [agent]
    cpus = 4
    mem = 8192
"#;

fn world(jobs: &str) -> World {
    let text = format!("{AGENTS}\n{jobs}");
    World::new(&Scenario::from_toml(&text, "test").expect("valid scenario"))
}

fn secs(s: u64) -> SimTime {
    SimTime::from_secs(s)
}

/// The run of job `id` (its only one).
fn run(w: &World, id: &str) -> JobRunView {
    let mut runs: Vec<JobRunView> = w.job_runs().into_iter().filter(|r| r.job == id).collect();
    assert_eq!(runs.len(), 1, "one run of {id}");
    runs.remove(0)
}

/// (used cpus, used mem) of agent `id`, as `/master/slaves` shows them.
fn used(w: &World, id: &str) -> (f64, f64) {
    let a = w.agent(id).expect("a registered agent");
    (a.used_resources.cpus, a.used_resources.mem)
}

fn agent_ids(w: &World) -> Vec<String> {
    w.agents().into_iter().map(|a| a.id).collect()
}

fn drain_state(w: &World, id: &str) -> Option<&'static str> {
    w.agent(id).expect("registered").drain_state
}

/// A maintenance window over `agent`'s machine from now on, for an hour.
fn window_over(w: &mut World, agent: &str) -> MachineId {
    let a = w.agent(agent).expect("registered");
    let machine = MachineId {
        hostname: Some(a.hostname.clone()),
        ip: Some(a.ip.clone()),
    };
    let now_ns = i64::try_from(w.epoch().unix_ns(w.now())).expect("fits");
    w.set_maintenance_schedule(vec![MaintenanceWindow {
        machines: vec![machine.clone()],
        start_unix_ns: now_ns,
        duration_ns: 3_600_000_000_000,
    }])
    .expect("a valid schedule");
    machine
}

#[test]
fn a_run_starts_first_fit_on_an_agent_with_room_and_finishes_by_itself_freeing_it() {
    let mut w = world(
        r#"
        [[jobs]]
        id = "nightly-backup"
        cpus = 2
        mem = 4096
        start_s = 100
        duration_s = 600

        [[jobs]]
        id = "report"
        cpus = 3
        mem = 1024
        start_s = 100
        duration_s = 60
        "#,
    );
    let agents = agent_ids(&w);
    w.advance_to(SimTime::from_millis(99_999));
    let waiting = run(&w, "nightly-backup");
    assert_eq!(waiting.state, None, "not launched before its start");
    assert_eq!(waiting.agent_id, None);
    assert_eq!(waiting.framework, "metronome");
    assert!(agents.iter().all(|a| used(&w, a) == (0.0, 0.0)));

    w.advance_to(secs(100));
    let backup = run(&w, "nightly-backup");
    assert_eq!(backup.state, Some("TASK_RUNNING"));
    assert_eq!(backup.agent_id.as_ref(), Some(&agents[0]), "first fit");
    assert_eq!(backup.started_unix_ms, Some(w.unix_ms(secs(100))));
    // The first agent has 2 cpus left: the 3-cpu report goes to the next.
    let report = run(&w, "report");
    assert_eq!(report.agent_id.as_ref(), Some(&agents[1]));
    assert_eq!(report.framework_id, backup.framework_id);
    assert_eq!(used(&w, &agents[0]), (2.0, 4096.0));
    assert_eq!(used(&w, &agents[1]), (3.0, 1024.0));

    w.advance_to(secs(160));
    assert_eq!(run(&w, "report").state, Some("TASK_FINISHED"));
    assert_eq!(used(&w, &agents[1]), (0.0, 0.0));
    w.advance_to(SimTime::from_millis(699_999));
    assert_eq!(run(&w, "nightly-backup").state, Some("TASK_RUNNING"));
    w.advance_to(secs(700));
    let done = run(&w, "nightly-backup");
    assert_eq!(done.state, Some("TASK_FINISHED"));
    assert_eq!(done.ended_unix_ms, Some(w.unix_ms(secs(700))));
    assert_eq!(done.kill_grace_ms, None);
    assert_eq!(used(&w, &agents[0]), (0.0, 0.0));
}

/// Two runs on the first agent from the start: grace 30 s and 5 s.
const TWO_RUNS: &str = r#"
    [[jobs]]
    id = "long-grace"
    duration_s = 7200
    grace_s = 30

    [[jobs]]
    id = "short-grace"
    duration_s = 7200
    grace_s = 5
"#;

#[test]
fn drain_agent_kills_runs_after_their_grace_capped_by_max_grace_and_only_then_drains() {
    let mut w = world(TWO_RUNS);
    w.advance_to(secs(10));
    let agent = agent_ids(&w).remove(0);
    assert_eq!(run(&w, "long-grace").agent_id.as_ref(), Some(&agent));
    assert_eq!(run(&w, "short-grace").agent_id.as_ref(), Some(&agent));
    w.drain_agent_with(
        &agent,
        DrainConfig {
            max_grace_period_ns: Some(10_000_000_000),
            mark_gone: false,
        },
    )
    .expect("drained");
    assert_eq!(drain_state(&w, &agent), Some("DRAINING"));

    w.advance_to(SimTime::from_millis(14_999));
    assert_ne!(run(&w, "short-grace").state, Some("TASK_KILLED"));
    w.advance_to(secs(15));
    let short = run(&w, "short-grace");
    assert_eq!(
        short.state,
        Some("TASK_KILLED"),
        "its own 5 s, under the cap"
    );
    assert_eq!(short.kill_grace_ms, Some(5_000));
    assert_eq!(short.kill_asked_unix_ms, Some(w.unix_ms(secs(10))));
    assert_eq!(short.ended_unix_ms, Some(w.unix_ms(secs(15))));
    assert_eq!(drain_state(&w, &agent), Some("DRAINING"), "a run is left");
    assert_eq!(used(&w, &agent), (1.0, 128.0));

    w.advance_to(SimTime::from_millis(19_999));
    assert_ne!(run(&w, "long-grace").state, Some("TASK_KILLED"));
    assert_eq!(drain_state(&w, &agent), Some("DRAINING"));
    w.advance_to(secs(20));
    let long = run(&w, "long-grace");
    assert_eq!(long.state, Some("TASK_KILLED"), "30 s capped at 10 s");
    assert_eq!(long.kill_grace_ms, Some(10_000));
    assert_eq!(long.ended_unix_ms, Some(w.unix_ms(secs(20))));
    assert_eq!(drain_state(&w, &agent), Some("DRAINED"), "at its last kill");
    assert_eq!(used(&w, &agent), (0.0, 0.0));
}

#[test]
fn drain_agent_without_max_grace_gives_each_run_its_own_grace() {
    let mut w = world(TWO_RUNS);
    w.advance_to(secs(10));
    let agent = agent_ids(&w).remove(0);
    w.drain_agent(&agent).expect("drained");
    w.advance_to(secs(15));
    assert_eq!(run(&w, "short-grace").state, Some("TASK_KILLED"));
    w.advance_to(SimTime::from_millis(39_999));
    assert_ne!(run(&w, "long-grace").state, Some("TASK_KILLED"));
    assert_eq!(drain_state(&w, &agent), Some("DRAINING"));
    w.advance_to(secs(40));
    let long = run(&w, "long-grace");
    assert_eq!(long.state, Some("TASK_KILLED"));
    assert_eq!(long.kill_grace_ms, Some(30_000));
    assert_eq!(drain_state(&w, &agent), Some("DRAINED"));
}

#[test]
fn drain_agent_is_refused_for_an_agent_in_the_maintenance_schedule_and_kills_nothing() {
    let mut w = world(TWO_RUNS);
    w.advance_to(secs(10));
    let agent = agent_ids(&w).remove(0);
    window_over(&mut w, &agent);
    let err = w.drain_agent(&agent).expect_err("in a schedule");
    assert_eq!(err.label(), "in_maintenance_schedule");
    w.advance_to(secs(100));
    for r in w.job_runs() {
        assert_eq!(r.state, Some("TASK_RUNNING"), "{r:?}");
        assert_eq!(r.kill_grace_ms, None, "{r:?}");
    }
}

#[test]
fn a_run_is_not_placed_on_a_deactivated_draining_or_maintenance_agent() {
    let mut w = world(
        r#"
        [[jobs]]
        id = "nightly-backup"
        start_s = 60
        duration_s = 600
        "#,
    );
    let agents = agent_ids(&w);
    w.deactivate_agent(&agents[0]).expect("known");
    w.drain_agent(&agents[1]).expect("drained at once: empty");
    window_over(&mut w, &agents[2]);
    w.advance_to(secs(120));
    let waiting = run(&w, "nightly-backup");
    assert_eq!(waiting.state, None, "no agent takes it");
    assert!(agents.iter().all(|a| used(&w, a) == (0.0, 0.0)));

    w.reactivate_agent(&agents[0]).expect("deactivated");
    w.advance_to(secs(240));
    let placed = run(&w, "nightly-backup");
    assert_eq!(placed.state, Some("TASK_RUNNING"));
    assert_eq!(placed.agent_id.as_ref(), Some(&agents[0]));
    assert!(placed.started_unix_ms > Some(w.unix_ms(secs(120))));
}

#[test]
fn a_run_is_lost_with_its_machine_brought_down() {
    let mut w = world(TWO_RUNS);
    w.advance_to(secs(10));
    let agent = agent_ids(&w).remove(0);
    let machine = window_over(&mut w, &agent);
    w.machines_down(&[machine]).expect("scheduled");
    for r in w.job_runs() {
        assert_eq!(r.state, Some("TASK_LOST"), "{r:?}");
        assert_eq!(r.ended_unix_ms, Some(w.unix_ms(secs(10))));
    }
    w.advance_to(secs(8000));
    assert!(w.job_runs().iter().all(|r| r.state == Some("TASK_LOST")));
}

#[test]
fn a_run_on_a_terminated_instance_is_lost_with_its_agent_not_finished() {
    let mut w = world(
        r#"
        [[jobs]]
        id = "report"
        duration_s = 30
        "#,
    );
    w.advance_to(secs(1));
    let agent = w.agents().remove(0);
    assert_eq!(run(&w, "report").agent_id.as_ref(), Some(&agent.id));
    let instance = agent.attributes["instance_id"].clone();
    w.terminate_instance(&instance, false).expect("in service");
    // Its end comes on a machine that is gone: nothing reports it.
    w.advance_to(secs(40));
    assert_eq!(run(&w, "report").state, Some("TASK_RUNNING"));
    w.advance_to(secs(600));
    assert_eq!(run(&w, "report").state, Some("TASK_LOST"));
}
