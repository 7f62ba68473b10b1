//! Tests of the world: timing, placement, faults and the monitor, all in
//! simulated time (nothing sleeps; the world only moves by `advance_to`).

use std::time::Instant;

use super::*;
use crate::sim::scenario::{Scenario, builtin_names};

/// Three agents, one per AZ, exact timings (no jitter), AZRebalance on.
const SMALL: &str = r#"
    [group]
    name = "agents"
    min_size = 2
    max_size = 6
    desired_capacity = 3

    [agent]
    cpus = 4
    mem = 8192
"#;

fn world(extra: &str) -> World {
    let text = format!("{SMALL}\n{extra}");
    World::new(&Scenario::from_toml(&text, "test").expect("valid scenario"))
}

fn secs(s: u64) -> SimTime {
    SimTime::from_secs(s)
}

fn group(w: &World) -> GroupView {
    w.describe_groups(&[]).remove(0)
}

fn app(w: &World, id: &str) -> AppView {
    w.app(id, true).expect("app exists")
}

/// The instance id under the agent running the app's first task.
fn instance_of_first_task(w: &World, id: &str) -> String {
    let task = app(w, id).tasks.expect("embedded")[0].clone();
    let agent = w.agent(&task.slave_id).expect("agent registered");
    agent.attributes["instance_id"].clone()
}

#[test]
fn a_launch_is_in_service_after_90_s_and_its_agent_registers_30_s_later() {
    let mut w = world("");
    w.set_desired_capacity("agents", 4).expect("within bounds");
    let new = group(&w)
        .instances
        .into_iter()
        .find(|i| i.lifecycle_state == "Pending")
        .expect("one instance pending");
    assert_eq!(
        new.availability_zone, "us-east-1a",
        "ties go to the first AZ"
    );

    w.advance_to(SimTime::from_millis(89_999));
    assert_eq!(
        group(&w)
            .instances
            .iter()
            .filter(|i| i.lifecycle_state == "InService")
            .count(),
        3
    );
    w.advance_to(secs(90));
    assert_eq!(
        group(&w)
            .instances
            .iter()
            .filter(|i| i.lifecycle_state == "InService")
            .count(),
        4
    );
    assert_eq!(w.agents().len(), 3, "the agent is not registered yet");

    w.advance_to(SimTime::from_millis(119_999));
    assert_eq!(w.agents().len(), 3);
    w.advance_to(secs(120));
    let agents = w.agents();
    assert_eq!(agents.len(), 4);
    let agent = agents.last().expect("new agent");
    let ec2 = w
        .ec2_instances(std::slice::from_ref(&new.instance_id))
        .expect("known")[0]
        .clone();
    assert_eq!(agent.attributes["instance_id"], new.instance_id);
    assert_eq!(agent.hostname, ec2.private_dns_name);
    assert_eq!(
        agent.pid,
        format!("slave(1)@{}:5051", ec2.private_ip_address)
    );
    assert!(agent.id.ends_with("-S3"), "{}", agent.id);
    assert_eq!(ec2.state, "running");
    assert_eq!(agent.registered_unix_ms, w.unix_ms(secs(120)));
}

#[test]
fn a_terminated_agent_is_unreachable_after_75_s_and_its_task_relaunches_3_s_later_elsewhere() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/solo"
        instances = 1
        "#,
    );
    let old_task = app(&w, "/solo").tasks.expect("embedded")[0].clone();
    let instance = instance_of_first_task(&w, "/solo");
    w.terminate_instance(&instance, true).expect("terminates");
    assert_eq!(group(&w).desired_capacity, 2);

    w.advance_to(SimTime::from_millis(74_999));
    let agent = w.agent(&old_task.slave_id).expect("still registered");
    assert!(!agent.active, "a disconnected agent is not active");
    assert_eq!(
        app(&w, "/solo").tasks_running,
        1,
        "Marathon does not know yet"
    );

    w.advance_to(secs(75));
    assert!(
        w.agent(&old_task.slave_id).is_none(),
        "removed after 15 s × 5"
    );
    let tasks = app(&w, "/solo").tasks.expect("embedded");
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].state, "TASK_UNREACHABLE");

    w.advance_to(SimTime::from_millis(77_999));
    assert_eq!(app(&w, "/solo").tasks.expect("embedded")[0].id, old_task.id);
    w.advance_to(secs(78));
    let tasks = app(&w, "/solo").tasks.expect("embedded");
    assert_eq!(tasks.len(), 1);
    assert_ne!(tasks[0].id, old_task.id, "replaced");
    assert_eq!(tasks[0].state, "TASK_STAGING");
    assert_ne!(tasks[0].slave_id, old_task.slave_id, "on another agent");
    assert_eq!(tasks[0].staged_unix_ms, w.unix_ms(secs(78)));
    assert_eq!(w.launch_delay(0), None, "TASK_UNREACHABLE adds no delay");

    w.advance_to(secs(83));
    assert_eq!(
        app(&w, "/solo").tasks_running,
        1,
        "running after its 5 s start"
    );
    let report = w.report();
    assert_eq!(report.apps[0].relaunches, 1);
    assert_eq!(report.task_moves[0].first_task_id, old_task.id);
    assert_eq!(report.task_moves[0].moves, 1);
}

#[test]
fn the_monitor_counts_a_single_instance_outage_exactly() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/single"
        instances = 1
        task_start_s = 5
        ready_after_s = 10
        [apps.health_check]
        interval_s = 10
        grace_period_s = 60
        "#,
    );
    w.advance_to(secs(100));
    let instance = instance_of_first_task(&w, "/single");
    w.terminate_instance(&instance, true).expect("terminates");
    w.advance_to(secs(1000));
    // Down from the termination: 75 s until Mesos gives up, 3 s until
    // Marathon relaunches, 5 s to start, 10 s to the first health check.
    let report = w.report();
    let single = &report.apps[0];
    assert_eq!(single.at_zero_ms, 93_000);
    assert_eq!(single.below_floor_ms, 93_000);
    assert_eq!(report.apps_with_outage, 1);
    assert_eq!(single.serving, 1);
    assert!(
        report.summary().contains("/single at zero for 93.0 s"),
        "{}",
        report.summary()
    );
}

#[test]
fn an_app_above_its_floor_has_no_outage_and_one_below_is_counted_while_it_lasts() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/half"
        instances = 2
        min_health_capacity = 0.5
        constraints = [["hostname", "UNIQUE"]]
        "#,
    );
    let instance = instance_of_first_task(&w, "/half");
    w.terminate_instance(&instance, true).expect("terminates");
    w.advance_to(secs(1000));
    let half = &w.report().apps[0];
    assert_eq!(half.floor, 1);
    assert_eq!((half.below_floor_ms, half.at_zero_ms), (0, 0));
    assert_eq!(half.relaunches, 1);
}

#[test]
fn az_rebalance_launches_in_the_low_az_then_terminates_in_the_high_one_by_itself() {
    let mut w = world("");
    w.set_desired_capacity("agents", 6).expect("within bounds");
    w.advance_to(secs(200));
    assert_eq!(w.az_counts(), vec![2, 2, 2]);
    let in_a: Vec<String> = group(&w)
        .instances
        .iter()
        .filter(|i| i.availability_zone == "us-east-1a")
        .map(|i| i.instance_id.clone())
        .collect();
    w.update_group("agents", Some(3), None, None)
        .expect("valid");
    let t0 = w.now();
    for id in &in_a {
        w.terminate_instance(id, true).expect("terminates");
    }
    assert_eq!(w.az_counts(), vec![0, 2, 2]);

    // The check comes 60 s after the change and launches in the low AZ.
    w.advance_to(t0.plus_ms(59_999));
    assert_eq!(w.az_counts(), vec![0, 2, 2]);
    w.advance_to(t0.plus_ms(60_000));
    assert_eq!(w.az_counts(), vec![1, 2, 2], "launched in the low AZ first");
    assert_eq!(group(&w).desired_capacity, 4, "desired is unchanged");

    // Once it serves (90 s later), one in a high AZ goes.
    w.advance_to(t0.plus_ms(150_000));
    assert_eq!(w.az_counts(), vec![1, 1, 2]);
    let report = w.report();
    assert_eq!(report.peak_instances_beyond_desired, 1);
    assert_eq!(report.ms_beyond_desired, 90_000);
    let activities = w.scaling_activities("agents", 2).expect("group");
    assert!(
        activities[0]
            .description
            .starts_with("Terminating EC2 instance")
    );
    assert!(
        activities[0].cause.contains("AZRebalance"),
        "{}",
        activities[0].cause
    );

    w.advance_to(t0.plus_ms(3_600_000));
    assert_eq!(w.az_counts(), vec![1, 1, 2], "balanced: nothing more to do");
}

#[test]
fn az_rebalance_does_nothing_while_suspended() {
    let mut w = world("");
    w.set_desired_capacity("agents", 6).expect("within bounds");
    w.advance_to(secs(200));
    w.suspend_processes("agents", &["AZRebalance".to_string()])
        .expect("valid process");
    w.update_group("agents", Some(3), None, None)
        .expect("valid");
    let in_a: Vec<String> = group(&w)
        .instances
        .iter()
        .filter(|i| i.availability_zone == "us-east-1a")
        .map(|i| i.instance_id.clone())
        .collect();
    for id in &in_a {
        w.terminate_instance(id, true).expect("terminates");
    }
    w.advance_by_ms(3_600_000);
    assert_eq!(w.az_counts(), vec![0, 2, 2]);
    assert_eq!(w.report().peak_instances_beyond_desired, 0);

    // Resuming it lets it balance.
    w.resume_processes("agents", &["AZRebalance".to_string()])
        .expect("valid process");
    w.advance_by_ms(200_000);
    assert_eq!(w.az_counts(), vec![1, 1, 2]);
}

#[test]
fn desired_capacity_beyond_max_or_below_min_is_a_validation_error() {
    let mut w = world("");
    let err = w.set_desired_capacity("agents", 7).expect_err("above max");
    assert_eq!(err.code(), "ValidationError");
    assert_eq!(
        err.aws_message(),
        "New SetDesiredCapacity value 7 is above max value 6 for the AutoScalingGroup."
    );
    let err = w.set_desired_capacity("agents", 1).expect_err("below min");
    assert!(err.aws_message().contains("below min value 2"), "{err}");
    assert_eq!(group(&w).desired_capacity, 3, "unchanged");
    let err = w
        .set_desired_capacity("nope", 3)
        .expect_err("unknown group");
    assert_eq!(err.label(), "group_not_found");
}

#[test]
fn terminating_with_decrement_at_min_size_and_an_unknown_instance_are_refused() {
    let mut w = world("");
    let ids: Vec<String> = group(&w)
        .instances
        .iter()
        .map(|i| i.instance_id.clone())
        .collect();
    w.terminate_instance(&ids[0], true).expect("3 → 2 is fine");
    let err = w
        .terminate_instance(&ids[1], true)
        .expect_err("2 is MinSize");
    assert_eq!(err.code(), "ValidationError");
    assert!(err.aws_message().contains("min size constraint"), "{err}");
    let err = w
        .terminate_instance("i-0000000000000000", true)
        .expect_err("unknown");
    assert_eq!(err.label(), "instance_not_found");
    assert!(
        err.aws_message().starts_with("Instance Id not found"),
        "{err}"
    );

    // Without decrement the group replaces the instance.
    w.terminate_instance(&ids[1], false).expect("replaced");
    assert_eq!(group(&w).desired_capacity, 2);
    assert_eq!(
        group(&w)
            .instances
            .iter()
            .filter(|i| i.lifecycle_state == "Pending")
            .count(),
        1
    );
    let again = w
        .terminate_instance(&ids[1], false)
        .expect("already terminating");
    assert!(again.description.contains(&ids[1]));
    w.advance_to(secs(60));
    let err = w
        .ec2_instances(&["i-nope".to_string()])
        .expect_err("unknown to EC2");
    assert_eq!(err.code(), "InvalidInstanceID.NotFound");
    assert_eq!(
        w.ec2_instances(std::slice::from_ref(&ids[0]))
            .expect("kept")[0]
            .state,
        "terminated",
        "EC2 still lists terminated instances"
    );
}

#[test]
fn suspending_an_empty_list_suspends_all_nine_processes() {
    let mut w = world("");
    w.suspend_processes("agents", &[]).expect("all");
    assert_eq!(group(&w).suspended_processes.len(), 9);
    let err = w
        .suspend_processes("agents", &["Rebalance".to_string()])
        .expect_err("unknown process");
    assert_eq!(err.code(), "ValidationError");
    w.resume_processes("agents", &[]).expect("all");
    assert!(group(&w).suspended_processes.is_empty());
}

#[test]
fn a_unique_app_gets_one_task_per_agent_and_waits_for_a_fourth_agent() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/unique"
        instances = 4
        cpus = 0.1
        mem = 64
        constraints = [["hostname", "UNIQUE"]]
        "#,
    );
    let tasks = app(&w, "/unique").tasks.expect("embedded");
    assert_eq!(tasks.len(), 3, "three agents, three tasks");
    let hosts: std::collections::BTreeSet<&str> = tasks.iter().map(|t| t.host.as_str()).collect();
    assert_eq!(hosts.len(), 3);
    assert_eq!(w.apps_waiting_for_offers(), vec!["/unique".to_string()]);

    w.set_desired_capacity("agents", 4).expect("within bounds");
    w.advance_to(secs(121));
    let tasks = app(&w, "/unique").tasks.expect("embedded");
    assert_eq!(tasks.len(), 4);
    let hosts: std::collections::BTreeSet<&str> = tasks.iter().map(|t| t.host.as_str()).collect();
    assert_eq!(hosts.len(), 4);
    assert!(w.apps_waiting_for_offers().is_empty());
}

#[test]
fn no_task_is_placed_on_an_agent_inside_a_maintenance_window() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/spread"
        instances = 6
        cpus = 0.1
        mem = 64
        "#,
    );
    let agents = w.agents();
    let free = &agents[2];
    let now_ns = (w.unix_ms(w.now()) * 1_000_000) as i64;
    let window = |a: &AgentView| MachineId {
        hostname: Some(a.hostname.clone()),
        ip: Some(a.ip.clone()),
    };
    w.set_maintenance_schedule(vec![MaintenanceWindow {
        machines: vec![window(&agents[0]), window(&agents[1])],
        start_unix_ns: now_ns,
        duration_ns: 3_600 * 1_000_000_000,
    }])
    .expect("valid schedule");
    assert_eq!(w.maintenance_status().draining.len(), 2);
    let ids: Vec<String> = app(&w, "/spread")
        .tasks
        .expect("embedded")
        .into_iter()
        .map(|t| t.id)
        .collect();
    w.kill_tasks(&ids, false);
    w.advance_to(secs(60));
    let tasks = app(&w, "/spread").tasks.expect("embedded");
    assert_eq!(tasks.len(), 6);
    assert!(tasks.iter().all(|t| t.slave_id == free.id), "{tasks:?}");

    // A window that starts in an hour blocks nothing yet.
    w.set_maintenance_schedule(vec![MaintenanceWindow {
        machines: vec![window(&agents[2])],
        start_unix_ns: now_ns + 7_200 * 1_000_000_000,
        duration_ns: 3_600 * 1_000_000_000,
    }])
    .expect("valid schedule");
    let ids: Vec<String> = app(&w, "/spread")
        .tasks
        .expect("embedded")
        .into_iter()
        .map(|t| t.id)
        .collect();
    w.kill_tasks(&ids, false);
    w.advance_to(secs(120));
    let tasks = app(&w, "/spread").tasks.expect("embedded");
    assert_eq!(tasks.len(), 6);
    assert!(tasks.iter().any(|t| t.slave_id != free.id));
}

#[test]
fn machine_down_removes_the_agent_at_once_and_only_for_scheduled_machines() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/web"
        instances = 3
        constraints = [["hostname", "UNIQUE"]]
        "#,
    );
    let agent = w.agents()[0].clone();
    let machine = MachineId {
        hostname: Some(agent.hostname.clone()),
        ip: Some(agent.ip.clone()),
    };
    // Known to the master (an agent registered on it) but UP, as Mesos'
    // `machines` map has it: not DRAINING, so it cannot go down.
    let err = w
        .machines_down(std::slice::from_ref(&machine))
        .expect_err("not scheduled");
    assert_eq!(err.label(), "machine_not_draining");
    w.set_maintenance_schedule(vec![MaintenanceWindow {
        machines: vec![machine.clone()],
        start_unix_ns: 0,
        duration_ns: 1,
    }])
    .expect("valid");
    w.machines_down(std::slice::from_ref(&machine))
        .expect("draining machine");
    assert!(w.agent(&agent.id).is_none(), "removed at once");
    assert_eq!(w.maintenance_status().down, vec![machine.clone()]);
    let lost = app(&w, "/web").tasks.expect("embedded");
    assert_eq!(lost.iter().filter(|t| t.state == "TASK_LOST").count(), 1);
    // Taken as GONE (the harder case): the app's launch delay starts.
    assert_eq!(w.launch_delay(0).map(|(ms, _)| ms), Some(1000.0));
    let err = w
        .set_maintenance_schedule(Vec::new())
        .expect_err("down must stay scheduled");
    assert_eq!(err.label(), "down_machine_unscheduled");

    w.machines_up(std::slice::from_ref(&machine))
        .expect("down machine");
    assert!(w.maintenance_schedule().is_empty());
    w.advance_to(secs(30));
    assert_eq!(w.agents().len(), 3, "the agent registers again");
    // The lost task waited for a UNIQUE-free agent: offered 1 s later,
    // running 5 s after that.
    w.advance_to(secs(36));
    assert_eq!(app(&w, "/web").tasks_running, 3);
}

#[test]
fn drain_kills_the_agents_tasks_and_ends_drained_while_deactivate_keeps_them() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/web"
        instances = 3
        constraints = [["hostname", "UNIQUE"]]
        "#,
    );
    let agents = w.agents();
    w.deactivate_agent(&agents[1].id).expect("known");
    assert!(w.agent(&agents[1].id).expect("listed").deactivated);
    assert_eq!(w.agent(&agents[1].id).expect("listed").task_count, 1);

    w.drain_agent(&agents[0].id).expect("known");
    assert_eq!(
        w.agent(&agents[0].id).expect("listed").drain_state,
        Some("DRAINING")
    );
    w.advance_to(secs(5));
    let drained = w.agent(&agents[0].id).expect("listed");
    assert_eq!(drained.drain_state, Some("DRAINED"));
    assert_eq!(drained.task_count, 0);
    // Nowhere to go: agent 0 drained, agent 1 deactivated, agent 2 taken.
    assert_eq!(app(&w, "/web").tasks_running, 2);
    w.reactivate_agent(&agents[1].id).expect("known");
    assert_eq!(
        w.drain_agent("nope").expect_err("unknown").label(),
        "unknown_agent"
    );
}

#[test]
fn a_deployment_ends_when_the_app_is_healthy_and_a_second_change_conflicts() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/web"
        instances = 2
        cpus = 0.1
        mem = 64
        task_start_s = 5
        ready_after_s = 10
        [apps.health_check]
        interval_s = 10
        "#,
    );
    let deployment = w.update_app_instances("/web", 4, false).expect("starts");
    assert_eq!(app(&w, "/web").deployments, vec![deployment.clone()]);
    assert_eq!(w.deployments()[0].affected_apps, vec!["/web".to_string()]);
    let err = w
        .update_app_instances("web", 5, false)
        .expect_err("conflict");
    assert_eq!(err.label(), "deployment_conflict");

    // Staged now, running at 5 s, healthy at the first check (15 s).
    w.advance_to(SimTime::from_millis(14_999));
    let web = app(&w, "/web");
    assert_eq!((web.tasks_running, web.tasks_healthy), (4, 2));
    assert_eq!(w.deployments().len(), 1);
    w.advance_to(secs(15));
    assert_eq!(app(&w, "/web").tasks_healthy, 4);
    assert!(w.deployments().is_empty());
    assert!(app(&w, "/web").deployments.is_empty());

    // Scaling down is a deployment too, finished once the surplus is gone.
    w.update_app_instances("/web", 1, false).expect("starts");
    w.advance_to(secs(30));
    assert_eq!(app(&w, "/web").tasks.expect("embedded").len(), 1);
    assert!(w.deployments().is_empty());
    assert_eq!(
        w.update_app_instances("/nope", 1, false)
            .expect_err("unknown")
            .label(),
        "app_not_found"
    );
}

#[test]
fn an_app_without_health_checks_never_reports_healthy_tasks() {
    let w = world(
        r#"
        [[apps]]
        id = "/plain"
        instances = 2
        "#,
    );
    let plain = app(&w, "/plain");
    assert_eq!((plain.tasks_running, plain.tasks_healthy), (2, 0));
    assert!(plain.health_checks.is_empty());
}

#[test]
fn killing_with_scale_lowers_instances_and_without_scale_replaces_the_task() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/web"
        instances = 3
        cpus = 0.1
        mem = 64
        "#,
    );
    let ids: Vec<String> = app(&w, "/web")
        .tasks
        .expect("embedded")
        .into_iter()
        .map(|t| t.id)
        .collect();
    let result = w.kill_tasks(&[ids[0].clone(), "nope".to_string()], false);
    assert_eq!(result.killed.len(), 1);
    assert_eq!(result.unknown, vec!["nope".to_string()]);
    assert!(result.deployment_id.is_none());
    w.advance_to(secs(20));
    assert_eq!(app(&w, "/web").tasks_running, 3);

    let result = w.kill_tasks(std::slice::from_ref(&ids[1]), true);
    assert!(result.deployment_id.is_some());
    w.advance_to(secs(40));
    let web = app(&w, "/web");
    assert_eq!((web.instances, web.tasks_running), (2, 2));
    assert!(w.deployments().is_empty());
}

#[test]
fn the_launch_delay_starts_at_the_backoff_grows_by_1_15_per_failure_and_caps() {
    use super::marathon::next_delay_ms;
    let mut delays = Vec::new();
    let mut previous = None;
    for _ in 0..45 {
        let next = next_delay_ms(previous, 1000.0, 1.15, 300_000);
        delays.push(next.round() as u64);
        previous = Some(next);
    }
    assert_eq!(&delays[..2], &[1000, 1150]);
    // Each is the previous × 1.15, as Marathon multiplies: the closed
    // form differs only by float rounding, never more than 1 ms.
    for (i, delay) in delays.iter().enumerate() {
        let exact = (1000.0 * 1.15f64.powi(i as i32)).min(300_000.0);
        assert!(
            (*delay as f64 - exact).abs() <= 1.0,
            "failure {}: {delay} vs {exact}",
            i + 1
        );
    }
    assert_eq!(delays[41], 300_000, "capped after 42 failures");
    assert!(delays[40] < 300_000);
    assert_eq!(
        next_delay_ms(Some(f64::MAX), 1000.0, 1.15, 300_000),
        300_000.0
    );
    // A backoff above the cap starts at the cap, as Marathon's `min`.
    assert_eq!(next_delay_ms(None, 9000.0, 1.15, 5_000), 5_000.0);
}

/// One app whose tasks fail 5 s after staging while `never_healthy_apps`
/// names it (no health checks), with a small `maxLaunchDelaySeconds` when
/// `max_delay_s` is given.
fn failing_app_world(max_delay_s: Option<u32>) -> World {
    let max = max_delay_s
        .map(|s| format!("max_launch_delay_s = {s}"))
        .unwrap_or_default();
    world(&format!(
        r#"
        [[apps]]
        id = "/flaky"
        instances = 1
        cpus = 0.1
        mem = 64
        task_start_s = 5
        {max}
        "#
    ))
}

fn set_never_healthy(w: &mut World, on: bool) {
    w.set_faults(Faults {
        never_healthy_apps: if on {
            vec!["/flaky".into()]
        } else {
            Vec::new()
        },
        ..Faults::default()
    })
    .expect("valid faults");
}

fn only_task(w: &World) -> String {
    app(w, "/flaky").tasks.expect("embedded")[0].id.clone()
}

/// Waits (in 100 ms steps, up to `limit_s`) until a task other than `old`
/// stages; returns its id and the simulated ms from now until it staged.
fn next_task(w: &mut World, old: &str, limit_s: u64) -> (String, u64) {
    let from = w.now();
    let until = from.plus_ms(limit_s * 1000);
    while w.now() < until {
        w.advance_by_ms(100);
        if let Some(t) = app(w, "/flaky")
            .tasks
            .expect("embedded")
            .into_iter()
            .find(|t| t.id != old)
        {
            return (t.id, t.staged_unix_ms - w.unix_ms(from));
        }
    }
    panic!("no task but {old} within {limit_s} s");
}

/// Waits (in 100 ms steps) until task `id` has failed and is gone.
fn wait_until_gone(w: &mut World, id: &str) {
    for _ in 0..1000 {
        w.advance_by_ms(100);
        if app(w, "/flaky")
            .tasks
            .expect("embedded")
            .iter()
            .all(|t| t.id != id)
        {
            return;
        }
    }
    panic!("task {id} never ended");
}

#[test]
fn kills_add_no_launch_delay() {
    // An operator's kill: replaced after the kill grace, no delay, however
    // often it happens.
    let mut w = failing_app_world(None);
    let grace = w.timing.kill_ms;
    for _ in 0..3 {
        let old = only_task(&w);
        w.kill_tasks(std::slice::from_ref(&old), false);
        assert_eq!(next_task(&mut w, &old, 60).1, grace);
        w.advance_by_ms(10_000);
    }
    assert_eq!(w.launch_delay(0), None);
}

#[test]
fn a_failure_delays_the_next_launch_and_a_scale_keeps_the_delay() {
    let mut w = failing_app_world(None);
    set_never_healthy(&mut w, true);
    let first = only_task(&w);
    w.kill_tasks(std::slice::from_ref(&first), false);
    // The kill adds nothing; the doomed replacement fails 5 s after staging.
    let (doomed, _) = next_task(&mut w, &first, 60);
    wait_until_gone(&mut w, &doomed);
    let (delay_ms, _) = w.launch_delay(0).expect("a delay after TASK_FAILED");
    assert_eq!(delay_ms, 1000.0);
    // Scaling is not a config change: Marathon keeps the delay, and the
    // next failure grows it to 1.15 s.
    w.update_app_instances("/flaky", 1, true).expect("scale");
    let (doomed, _) = next_task(&mut w, &doomed, 60);
    wait_until_gone(&mut w, &doomed);
    assert_eq!(w.launch_delay(0).expect("still delayed").0, 1150.0);
}

#[test]
fn a_task_staging_or_running_restarts_the_delay_and_only_time_drops_it() {
    let mut w = failing_app_world(Some(20));
    set_never_healthy(&mut w, true);
    let first = only_task(&w);
    w.kill_tasks(std::slice::from_ref(&first), false);
    let (doomed, _) = next_task(&mut w, &first, 60);
    wait_until_gone(&mut w, &doomed);
    let seen_at = w.now();
    // Healthy relaunches from here on; the failure's delay holds the first.
    set_never_healthy(&mut w, false);
    let (healthy, waited) = next_task(&mut w, &doomed, 60);
    assert!(
        (900..=1000).contains(&waited),
        "staged {waited} ms after the failure was seen"
    );
    let (current, deadline) = w.launch_delay(0).expect("kept while young");
    assert_eq!(current, 1000.0);
    // Staging moved the delay's start to the launch (`advanceDelay`).
    assert!(deadline >= seen_at.plus_ms(1900), "{deadline:?}");
    // Running fine does not reset it.
    w.advance_by_ms(10_000);
    assert_eq!(
        app(&w, "/flaky").tasks.expect("embedded")[0].state,
        "TASK_RUNNING"
    );
    assert!(w.launch_delay(0).is_some());
    // 20 s (maxLaunchDelaySeconds) after its last start it is gone: the
    // next failure starts again from backoffSeconds.
    w.advance_by_ms(20_000);
    assert_eq!(w.launch_delay(0), None);
    set_never_healthy(&mut w, true);
    w.kill_tasks(std::slice::from_ref(&healthy), false);
    let (doomed, _) = next_task(&mut w, &healthy, 60);
    wait_until_gone(&mut w, &doomed);
    assert_eq!(w.launch_delay(0).expect("delayed").0, 1000.0);
}

#[test]
fn a_never_healthy_app_keeps_failing_with_a_growing_delay_between_launches() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/broken"
        instances = 1
        cpus = 0.1
        mem = 64
        task_start_s = 5
        never_healthy_after_relaunch = true
        "#,
    );
    assert_eq!(
        app(&w, "/broken").tasks_running,
        1,
        "the initial task is fine"
    );
    let ids: Vec<String> = app(&w, "/broken")
        .tasks
        .expect("embedded")
        .into_iter()
        .map(|t| t.id)
        .collect();
    w.kill_tasks(&ids, false);
    // Watch each new task's staging time.
    let mut staged = Vec::new();
    let mut last = String::new();
    while w.now() < secs(200) {
        w.advance_by_ms(100);
        if let Some(t) = app(&w, "/broken").tasks.expect("embedded").first()
            && t.id != last
            && t.state == "TASK_STAGING"
        {
            last = t.id.clone();
            staged.push(t.staged_unix_ms - w.unix_ms(SimTime::ZERO));
        }
    }
    assert!(staged.len() > 5, "{staged:?}");
    let gaps: Vec<u64> = staged.windows(2).map(|p| p[1] - p[0]).collect();
    // Each launch fails 5 s after staging; the delay after it grows.
    assert_eq!(gaps[0], 5_000 + 1_000);
    assert_eq!(gaps[1], 5_000 + 1_150);
    assert!(gaps.windows(2).all(|g| g[1] > g[0]), "{gaps:?}");
    assert_eq!(app(&w, "/broken").tasks_running, 0);
    assert!(w.report().apps[0].at_zero_ms > 190_000);
}

#[test]
fn a_never_healthy_app_with_health_checks_is_killed_after_its_grace_and_failures() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/sick"
        instances = 1
        cpus = 0.1
        mem = 64
        task_start_s = 5
        [apps.health_check]
        interval_s = 10
        grace_period_s = 30
        max_consecutive_failures = 3

        [faults]
        never_healthy_apps = ["/sick"]
        "#,
    );
    let ids: Vec<String> = app(&w, "/sick")
        .tasks
        .expect("embedded")
        .into_iter()
        .map(|t| t.id)
        .collect();
    w.kill_tasks(&ids, false);
    // Killed at 5 s (kill grace), staged, running at 10 s; checks at 20, 30
    // (grace), 40, 50, 60 fail; killed at 60 s.
    w.advance_to(secs(45));
    let sick = app(&w, "/sick");
    assert_eq!(
        (sick.tasks_running, sick.tasks_healthy, sick.tasks_unhealthy),
        (1, 0, 1)
    );
    w.advance_to(secs(60));
    assert_eq!(
        app(&w, "/sick").tasks.expect("embedded")[0].state,
        "TASK_KILLING"
    );
}

#[test]
fn instances_booting_while_agents_never_register_serve_in_the_group_but_not_in_mesos() {
    let mut w = world("");
    w.set_faults(Faults {
        agents_never_register: true,
        ..Faults::default()
    })
    .expect("valid faults");
    w.set_desired_capacity("agents", 4).expect("within bounds");
    w.advance_to(secs(600));
    let in_service = group(&w)
        .instances
        .iter()
        .filter(|i| i.lifecycle_state == "InService")
        .count();
    assert_eq!(in_service, 4);
    assert_eq!(w.agents().len(), 3, "the new agent never registered");
    // Lifting the fault does not bring it back: its boot is over.
    w.set_faults(Faults::default()).expect("valid faults");
    w.advance_to(secs(1200));
    assert_eq!(w.agents().len(), 3);
}

#[test]
fn failing_launches_show_as_failed_activities_and_are_retried() {
    let mut w = world("");
    w.set_faults(Faults {
        launches_fail: true,
        ..Faults::default()
    })
    .expect("valid faults");
    w.set_desired_capacity("agents", 4).expect("within bounds");
    w.advance_to(secs(25));
    let activities = w.scaling_activities("agents", 10).expect("group");
    let failed = activities
        .iter()
        .filter(|a| a.status_code == "Failed")
        .count();
    assert_eq!(failed, 3, "at 0, 10 and 20 s");
    assert_eq!(group(&w).instances.len(), 3);
    let said = activities[0].status_message.as_deref().unwrap_or_default();
    assert!(
        said.starts_with("We currently do not have sufficient"),
        "{said}"
    );
    assert!(said.ends_with("Launching EC2 instance failed."), "{said}");

    w.set_faults(Faults::default()).expect("valid faults");
    w.advance_to(secs(31 + 90));
    assert_eq!(
        group(&w)
            .instances
            .iter()
            .filter(|i| i.lifecycle_state == "InService")
            .count(),
        4
    );
    assert_eq!(w.report().launch_failures, 3);
}

#[test]
fn each_launch_failure_says_its_reason_as_aws_words_it() {
    let reasons = [
        (
            LaunchFailure::Capacity,
            "We currently do not have sufficient",
        ),
        (
            LaunchFailure::VcpuLimit,
            "You have requested more vCPU capacity",
        ),
        (
            LaunchFailure::SubnetFull,
            "There are not enough free addresses in subnet",
        ),
        (LaunchFailure::ImageMissing, "The AMI ID ami-"),
    ];
    for (failure, opening) in reasons {
        let mut w = world("");
        w.set_faults(Faults {
            launches_fail: true,
            launch_failure: failure,
            ..Faults::default()
        })
        .expect("valid faults");
        w.set_desired_capacity("agents", 4).expect("within bounds");
        w.advance_to(secs(5));
        let activities = w.scaling_activities("agents", 10).expect("group");
        let failed = activities
            .iter()
            .find(|a| a.status_code == "Failed")
            .expect("a failed launch");
        let said = failed.status_message.as_deref().unwrap_or_default();
        assert!(said.starts_with(opening), "{failure:?}: {said}");
        // Named as the AWS facade names them.
        let azs = group(&w).availability_zones;
        let named = match failure {
            LaunchFailure::Capacity => said.contains(ids::INSTANCE_TYPE),
            LaunchFailure::SubnetFull => azs
                .iter()
                .any(|az| said.contains(&format!("'{}'", ids::subnet_id(az)))),
            _ => true,
        };
        assert!(
            named,
            "{failure:?}: {said} names another type or subnet than the facade"
        );
        assert!(
            failed.description.ends_with(said),
            "{failure:?}: {}",
            failed.description
        );
    }
}

#[test]
fn an_agent_that_outlives_its_instance_stays_registered_and_its_tasks_count_as_down() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/solo"
        instances = 1

        [faults]
        agents_outlive_instances = 1
        "#,
    );
    let slave = app(&w, "/solo").tasks.expect("embedded")[0]
        .slave_id
        .clone();
    let instance = instance_of_first_task(&w, "/solo");
    w.terminate_instance(&instance, true).expect("terminates");
    w.advance_to(secs(600));
    assert!(w.agent(&slave).expect("still registered").active);
    assert_eq!(
        app(&w, "/solo").tasks_running,
        1,
        "Marathon believes it runs"
    );
    assert_eq!(
        w.report().apps[0].at_zero_ms,
        600_000,
        "the monitor knows better"
    );
    assert_eq!(
        w.faults().agents_outlive_instances,
        0,
        "the fault was used up"
    );
}

#[test]
fn the_same_seed_replays_the_same_run() {
    let run = || {
        let mut w = World::new(&Scenario::load("demo").expect("demo"));
        let ids: Vec<String> = group(&w)
            .instances
            .iter()
            .take(3)
            .map(|i| i.instance_id.clone())
            .collect();
        for id in &ids {
            w.terminate_instance(id, false).expect("terminates");
        }
        w.advance_to(secs(900));
        (
            serde_json::to_string(&w.report()).expect("serializes"),
            serde_json::to_string(&w.tasks()).expect("serializes"),
        )
    };
    assert_eq!(run(), run());
}

#[test]
fn every_shipped_scenario_builds_a_world_of_the_right_size() {
    for name in builtin_names() {
        let scenario = Scenario::load(name).expect("loads");
        let start = Instant::now();
        let w = World::new(&scenario);
        let built = start.elapsed();
        let mut agents = 0;
        for spec in scenario.groups() {
            let g = w
                .describe_groups(std::slice::from_ref(&spec.name))
                .remove(0);
            let size = spec.desired_capacity + spec.standby;
            assert_eq!(g.instances.len() as u32, size, "{name}: {}", spec.name);
            let counts = w.az_counts_of(&spec.name).expect("a group");
            let spread = counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0);
            assert!(spread <= 1, "{name}: {} balanced {counts:?}", spec.name);
            agents += size;
        }
        assert_eq!(w.agents().len() as u32, agents, "{name}");
        assert_eq!(
            w.apps(false).len(),
            scenario.expanded_apps().len(),
            "{name}"
        );
        assert_eq!(
            w.tasks().len() as u64,
            scenario.task_count(),
            "{name}: every task placed"
        );
        assert!(w.apps_waiting_for_offers().is_empty(), "{name}");
        let report = w.report();
        assert_eq!(report.apps_ever_below_floor, 0, "{name} starts steady");
        assert_eq!(report.misplaced_task_ms, 0, "{name}");
        println!("{name}: built in {built:?}");
    }
}

#[test]
fn the_colocated_hazard_puts_every_task_of_its_app_on_one_agent() {
    let w = World::new(&Scenario::load("hazards").expect("hazards"));
    let tasks = app(&w, "/hazard/colocated").tasks.expect("embedded");
    assert_eq!(tasks.len(), 3);
    assert!(tasks.iter().all(|t| t.slave_id == tasks[0].slave_id));
    assert!(
        w.faults()
            .never_healthy_apps
            .contains(&"/hazard/never-healthy".to_string())
    );
}

#[test]
fn the_big_world_builds_and_lists_every_app_with_its_tasks_quickly() {
    let scenario = Scenario::load("big").expect("big");
    let start = Instant::now();
    let mut w = World::new(&scenario);
    let built = start.elapsed();
    let start = Instant::now();
    let apps = w.apps(true);
    let listed = start.elapsed();
    let tasks: usize = apps
        .iter()
        .map(|a| a.tasks.as_ref().map_or(0, Vec::len))
        .sum();
    assert_eq!(tasks, 10_000);
    assert_eq!(w.agents().len(), 1_000);
    // A roll's worth of churn: ten instances replaced, an hour simulated.
    let ids: Vec<String> = group(&w)
        .instances
        .iter()
        .take(10)
        .map(|i| i.instance_id.clone())
        .collect();
    let start = Instant::now();
    for id in &ids {
        w.terminate_instance(id, false).expect("terminates");
    }
    w.advance_to(secs(3_600));
    let simulated = start.elapsed();
    assert_eq!(w.report().final_state.tasks, 10_000);
    println!(
        "big: built in {built:?}, listed {} apps with {tasks} tasks in {listed:?}, simulated an hour of churn ({} events) in {simulated:?}; {}",
        apps.len(),
        w.events_processed(),
        peak_memory()
    );
}

#[test]
fn msr_55_replaces_ten_agents_and_idles_four_simulated_hours_in_bounded_time() {
    let mut w = World::new(&Scenario::load("msr-55").expect("msr-55"));
    let start = Instant::now();
    w.suspend_processes("mesos-agents-prod", &["AZRebalance".to_string()])
        .expect("valid process");
    w.set_desired_capacity("mesos-agents-prod", 65)
        .expect("within bounds");
    w.advance_to(secs(180));
    assert_eq!(w.agents().len(), 65);
    let old: Vec<String> = group(&w)
        .instances
        .iter()
        .take(10)
        .map(|i| i.instance_id.clone())
        .collect();
    for id in &old {
        w.terminate_instance(id, true).expect("terminates");
        let at = w.now().plus_ms(240_000);
        w.advance_to(at);
    }
    w.advance_to(secs(4 * 3_600));
    let report = w.report();
    assert_eq!(report.final_state.agents_registered, 55);
    assert_eq!(
        report.final_state.apps_below_floor_now,
        0,
        "{}",
        report.summary()
    );
    assert!(report.relaunches > 0);
    println!(
        "msr-55: 10 agents replaced and 4 simulated hours in {:?} ({} events)\n{}",
        start.elapsed(),
        w.events_processed(),
        report.summary()
    );
}

/// The process's peak resident memory, where Linux tells it (tests share
/// the process, so this is an upper bound for one world).
fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        })
        .map_or_else(
            || "peak memory unknown".to_string(),
            |m| format!("process peak RSS {m}"),
        )
}

#[test]
fn failing_health_checks_turn_healthy_tasks_unhealthy_then_killed_and_lifting_heals_survivors() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/svc"
        instances = 3
        cpus = 0.1
        mem = 64
        task_start_s = 5
        [apps.health_check]
        interval_s = 10
        grace_period_s = 30
        max_consecutive_failures = 3
        "#,
    );
    w.advance_to(secs(100));
    let svc = app(&w, "/svc");
    assert_eq!((svc.tasks_healthy, svc.tasks_unhealthy), (3, 0));
    let before: Vec<String> = svc
        .tasks
        .expect("embedded")
        .into_iter()
        .map(|t| t.id)
        .collect();

    w.set_faults(Faults {
        failing_health_checks: vec!["/svc".into()],
        ..Faults::default()
    })
    .expect("valid faults");
    // The first check after the switch (10 s) fails: healthy no more.
    w.advance_to(secs(111));
    let svc = app(&w, "/svc");
    assert_eq!(
        (svc.tasks_running, svc.tasks_healthy, svc.tasks_unhealthy),
        (3, 0, 3)
    );
    let result = &svc.tasks.expect("embedded")[0].health_check_results[0];
    assert!(!result.alive);
    assert_eq!(result.consecutive_failures, 1);
    assert!(
        result.first_success_unix_ms.is_some(),
        "it had been healthy"
    );
    // The third failure (30 s) kills them, as Marathon does; the kills add
    // no launch delay, and the replacements stage after the kill grace.
    w.advance_to(secs(131));
    let svc = app(&w, "/svc");
    assert!(
        svc.tasks
            .expect("embedded")
            .iter()
            .all(|t| t.state != "TASK_RUNNING" || !before.contains(&t.id)),
        "no original task still running"
    );
    assert_eq!(w.launch_delay(0), None);
    assert!(
        w.report().apps[0].at_zero_ms > 0,
        "the monitor saw the app down"
    );

    // Replacements pass their grace, then fail too while the fault holds.
    w.advance_to(secs(200));
    assert_eq!(app(&w, "/svc").tasks_healthy, 0);
    // Lifted: tasks still running pass their next check.
    w.set_faults(Faults::default()).expect("valid faults");
    w.advance_to(secs(400));
    let svc = app(&w, "/svc");
    assert_eq!(
        (svc.tasks_running, svc.tasks_healthy, svc.tasks_unhealthy),
        (3, 3, 0)
    );
}

#[test]
fn failing_health_checks_refuse_unknown_apps_and_apps_without_checks() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/plain"
        instances = 1
        cpus = 0.1
        mem = 64
        "#,
    );
    for (ids, expected) in [
        (vec!["/nope"], "failing_health_checks: /nope is not an app"),
        (vec!["/plain"], "/plain has no health check"),
    ] {
        let err = w
            .set_faults(Faults {
                failing_health_checks: ids.into_iter().map(String::from).collect(),
                ..Faults::default()
            })
            .expect_err("refused");
        assert!(err.contains(expected), "{err}");
    }
    assert_eq!(w.faults(), &Faults::default(), "nothing changed");
}

// ----- launch template versions and bad images -----

/// Three versions of the template, the group on version 1.
const THREE_VERSIONS: &str = r#"
    [group.launch_template]
    name = "agent-image"
    version = "1"
    latest_version = 3
"#;

fn versions(w: &World) -> Vec<(String, String)> {
    group(w)
        .instances
        .into_iter()
        .map(|i| (i.instance_id, i.launch_template.version))
        .collect()
}

#[test]
fn a_new_template_version_goes_to_instances_launched_after_it_and_running_ones_keep_theirs() {
    let mut w = world(THREE_VERSIONS);
    let old: Vec<String> = versions(&w).into_iter().map(|(id, _)| id).collect();
    w.set_launch_template_version("2")
        .expect("version 2 exists");
    assert_eq!(group(&w).launch_template.version, "2");
    assert!(versions(&w).iter().all(|(_, v)| v == "1"), "running keep 1");
    w.set_desired_capacity("agents", 4).expect("within bounds");
    // `$Latest` shows as set on the group; an instance shows the number
    // it launched from.
    w.set_launch_template_version("$Latest").expect("an alias");
    w.set_desired_capacity("agents", 5).expect("within bounds");
    w.set_launch_template_version("$Default").expect("an alias");
    w.set_desired_capacity("agents", 6).expect("within bounds");
    let g = group(&w);
    assert_eq!(g.launch_template.version, "$Default");
    assert_eq!(g.launch_template.name, "agent-image");
    assert!(
        g.launch_template.id.starts_with("lt-0"),
        "{:?}",
        g.launch_template
    );
    let by_launch: Vec<String> = versions(&w)
        .into_iter()
        .filter(|(id, _)| !old.contains(id))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(by_launch, ["2", "3", "1"]);
    for i in &g.instances {
        assert_eq!(i.launch_template.id, g.launch_template.id);
    }
    // EC2 reports the same version as the group does for each instance.
    let ec2 = w.ec2_instances(&[]).expect("all");
    for (id, version) in versions(&w) {
        let seen = ec2.iter().find(|e| e.instance_id == id).expect("listed");
        assert_eq!(seen.launch_template.version, version);
    }
    // The agents of the new instances register as any other.
    w.advance_to(secs(120));
    assert_eq!(w.agents().len(), 6);
}

#[test]
fn a_launch_template_aws_would_refuse_is_refused_and_changes_nothing() {
    let mut w = world(THREE_VERSIONS);
    let id = group(&w).launch_template.id;
    let choice = |id: Option<&str>, name: Option<&str>, version: Option<&str>| GroupUpdate {
        desired: Some(4),
        launch_template: Some(LaunchTemplateChoice {
            id: id.map(String::from),
            name: name.map(String::from),
            version: version.map(String::from),
        }),
        ..GroupUpdate::default()
    };
    let cases = [
        (
            choice(Some(&id), Some("agent-image"), Some("2")),
            "Valid requests must contain either launchTemplateId or LaunchTemplateName",
        ),
        (
            choice(None, None, Some("2")),
            "Valid requests must contain either launchTemplateId or LaunchTemplateName",
        ),
        (
            choice(Some("lt-0123456789abcdef0"), None, Some("2")),
            "with template ID lt-0123456789abcdef0, does not exist",
        ),
        (
            choice(None, Some("other"), Some("2")),
            "with template name other, does not exist",
        ),
        (
            choice(Some(&id), None, Some("4")),
            "version 4 does not exist",
        ),
        (
            choice(Some(&id), None, Some("0")),
            "version 0 does not exist",
        ),
        (
            choice(Some(&id), None, Some("02")),
            "version 02 does not exist",
        ),
        (
            choice(Some(&id), None, Some("latest")),
            "version latest does not exist",
        ),
    ];
    for (update, expected) in cases {
        let err = w
            .update_group_with("agents", update.clone())
            .expect_err("refused");
        assert_eq!(err.code(), "ValidationError");
        assert!(err.aws_message().contains(expected), "{update:?}: {err}");
    }
    let g = group(&w);
    assert_eq!(
        (g.desired_capacity, g.launch_template.version.as_str()),
        (3, "1"),
        "nothing changed"
    );
    // By id without a version: `$Default`, as AWS takes it; the desired
    // capacity in the same call launches from it.
    w.update_group_with("agents", choice(Some(&id), None, None))
        .expect("valid");
    let g = group(&w);
    assert_eq!(g.launch_template.version, "$Default");
    assert_eq!(g.instances.len(), 4);
    assert_eq!(
        w.set_launch_template_version("9")
            .expect_err("no version 9")
            .label(),
        "validation"
    );
}

#[test]
fn a_scale_in_takes_the_oldest_template_version_first_counting_10_after_9() {
    let mut w = world(
        r#"
        [group.launch_template]
        version = "9"
        latest_version = 10
        "#,
    );
    w.set_launch_template_version("10").expect("exists");
    w.set_desired_capacity("agents", 4).expect("within bounds");
    let new = group(&w)
        .instances
        .into_iter()
        .find(|i| i.launch_template.version == "10")
        .expect("launched from 10")
        .instance_id;
    w.advance_to(secs(120));
    // us-east-1a now holds a 9 and a 10: the 9 goes.
    w.set_desired_capacity("agents", 3).expect("within bounds");
    let leaving: Vec<(String, &str)> = group(&w)
        .instances
        .into_iter()
        .filter(|i| i.lifecycle_state == "Terminating")
        .map(|i| (i.launch_template.version, i.lifecycle_state))
        .collect();
    assert_eq!(leaving, [("9".to_string(), "Terminating")]);
    assert!(
        group(&w)
            .instances
            .iter()
            .any(|i| i.instance_id == new && i.lifecycle_state == "InService")
    );
}

/// A world whose template has a version 2 with a bad image (`effect`), an
/// app with an HTTP check (2 tasks) and one without (1 task).
fn bad_image_world(effect: &str) -> World {
    world(&format!(
        r#"
        [group.launch_template]
        version = "1"
        latest_version = 2

        [[apps]]
        id = "/checked"
        instances = 2
        cpus = 0.5
        mem = 256
        task_start_s = 5
        [apps.health_check]
        protocol = "HTTP"
        interval_s = 10
        grace_period_s = 30
        max_consecutive_failures = 3

        [[apps]]
        id = "/plain"
        instances = 1
        cpus = 0.5
        mem = 256
        task_start_s = 5

        [faults]
        bad_image = {{ version = "2", effect = "{effect}" }}
        "#
    ))
}

/// Puts the group on version 2, adds an instance and waits for its agent;
/// then deactivates the old agents and kills one task of each app so that
/// the replacements land on the new agent. Returns the new agent's id and
/// the ids of the tasks left on old agents.
fn move_one_task_of_each_app_to_version_2(w: &mut World) -> (String, Vec<String>) {
    w.set_launch_template_version("2").expect("exists");
    w.set_desired_capacity("agents", 4).expect("within bounds");
    w.advance_to(secs(120));
    let agents = w.agents();
    assert_eq!(agents.len(), 4, "the version 2 agent registered");
    let new_agent = agents[3].id.clone();
    for old in &agents[..3] {
        w.deactivate_agent(&old.id).expect("known");
    }
    let mut killed = Vec::new();
    let mut kept = Vec::new();
    for id in ["/checked", "/plain"] {
        let tasks = app(w, id).tasks.expect("embedded");
        killed.push(tasks[0].id.clone());
        kept.extend(tasks[1..].iter().map(|t| t.id.clone()));
    }
    w.kill_tasks(&killed, false);
    assert!(
        app(w, "/checked").last_task_failure.is_none(),
        "a kill asked through the API is no failure"
    );
    (new_agent, kept)
}

#[test]
fn on_an_unhealthy_image_checks_fail_until_marathon_kills_the_task_and_old_agents_stay_healthy() {
    let mut w = bad_image_world("unhealthy");
    let (new_agent, kept) = move_one_task_of_each_app_to_version_2(&mut w);
    // Relaunched after the kill grace (5 s), running 5 s later, checked
    // every 10 s; failures inside the 30 s grace are ignored.
    w.advance_to(secs(150));
    let checked = app(&w, "/checked");
    let moved = checked
        .tasks
        .as_ref()
        .expect("embedded")
        .iter()
        .find(|t| t.slave_id == new_agent)
        .expect("the replacement is on the version 2 agent")
        .clone();
    assert_eq!(moved.state, "TASK_RUNNING");
    assert!(moved.health_check_results.is_empty(), "no verdict in grace");
    // Past the grace: failing, counted, then killed at the third.
    w.advance_to(secs(171));
    let checked = app(&w, "/checked");
    let result = checked
        .tasks
        .as_ref()
        .expect("embedded")
        .iter()
        .find(|t| t.id == moved.id)
        .expect("still there")
        .health_check_results[0]
        .clone();
    assert!(!result.alive);
    assert!(result.consecutive_failures >= 1, "{result:?}");
    assert_eq!(
        result.last_failure_cause.as_deref(),
        Some("503 Service Unavailable")
    );
    assert_eq!(checked.tasks_unhealthy, 1);
    assert!(checked.last_task_failure.is_none(), "not killed yet");
    w.advance_to(secs(200));
    let failure = app(&w, "/checked")
        .last_task_failure
        .expect("the health kill is recorded");
    assert_eq!(failure.task_id, moved.id);
    assert_eq!(failure.state, "TASK_KILLED");
    assert_eq!(
        failure.message,
        "Task was killed since health check failed. Reason: 503 Service Unavailable"
    );
    assert_eq!(failure.slave_id, new_agent);
    assert_eq!(failure.host, moved.host);
    assert_eq!(failure.app_id, "/checked");
    // A health kill adds no launch delay (TASK_KILLED).
    assert_eq!(w.launch_delay(0), None);
    // The app without checks crashed on the new image instead: FAILED.
    let failure = app(&w, "/plain")
        .last_task_failure
        .expect("the crash is recorded");
    assert_eq!(
        (failure.state, failure.message.as_str()),
        ("TASK_FAILED", "Command exited with status 1")
    );
    assert_eq!(failure.slave_id, new_agent);
    // The task left on an old agent never stopped passing.
    let survivor = app(&w, "/checked")
        .tasks
        .expect("embedded")
        .into_iter()
        .find(|t| kept.contains(&t.id))
        .expect("still running");
    assert_eq!(survivor.state, "TASK_RUNNING");
    assert!(survivor.health_check_results[0].alive);
}

#[test]
fn on_a_crashing_image_every_task_fails_soon_after_it_starts_and_the_delay_grows() {
    let mut w = bad_image_world("crash");
    let (new_agent, _) = move_one_task_of_each_app_to_version_2(&mut w);
    // Killed at 120 s, gone 5 s later, staged then, running 5 s after:
    // 130 s; it crashes 3 s later.
    w.advance_to(SimTime::from_millis(132_900));
    let checked = app(&w, "/checked");
    assert_eq!(checked.tasks_running, 2, "running for now");
    assert!(checked.last_task_failure.is_none());
    w.advance_to(secs(133));
    for id in ["/checked", "/plain"] {
        let failure = app(&w, id).last_task_failure.expect("recorded");
        assert_eq!(failure.state, "TASK_FAILED", "{id}");
        assert_eq!(failure.slave_id, new_agent, "{id}");
        assert_eq!(failure.timestamp_unix_ms, w.unix_ms(secs(133)), "{id}");
    }
    // TASK_FAILED is limit-worthy: the next launch waits `backoffSeconds`.
    let queued: Vec<(String, u64)> = w
        .queue()
        .into_iter()
        .map(|q| (q.app.id, q.delay_left_ms))
        .collect();
    assert_eq!(
        queued,
        [("/checked".to_string(), 1000), ("/plain".to_string(), 1000)]
    );
}

#[test]
fn on_an_unregistered_image_the_instance_serves_in_the_group_but_its_agent_never_registers() {
    let mut w = bad_image_world("unregistered");
    w.set_launch_template_version("2").expect("exists");
    w.set_desired_capacity("agents", 4).expect("within bounds");
    w.advance_to(secs(600));
    assert_eq!(
        group(&w)
            .instances
            .iter()
            .filter(|i| i.lifecycle_state == "InService")
            .count(),
        4
    );
    assert_eq!(w.agents().len(), 3, "only the version 1 agents");
    // Back on version 1: the next instance's agent registers.
    w.set_launch_template_version("1").expect("exists");
    w.set_desired_capacity("agents", 5).expect("within bounds");
    w.advance_to(secs(800));
    assert_eq!(w.agents().len(), 4);
}

#[test]
fn a_bad_image_must_name_a_version_of_the_template_once_and_is_switched_on_at_runtime() {
    let mut w = world(THREE_VERSIONS);
    for (bad, expected) in [
        (
            vec![("4", ImageEffect::Crash)],
            "bad_image: version \"4\" is not a version of the launch template (1 to 3)",
        ),
        (
            vec![("$Latest", ImageEffect::Crash)],
            "\"$Latest\" is not a version",
        ),
        (
            vec![("2", ImageEffect::Crash), ("2", ImageEffect::Unhealthy)],
            "version 2 appears more than once",
        ),
    ] {
        let err = w
            .set_faults(Faults {
                bad_image: bad
                    .into_iter()
                    .map(|(version, effect)| BadImage {
                        version: version.into(),
                        effect,
                        group: None,
                    })
                    .collect(),
                ..Faults::default()
            })
            .expect_err("refused");
        assert!(err.contains(expected), "{err}");
    }
    assert_eq!(w.faults(), &Faults::default(), "nothing changed");
    w.set_bad_image("3", ImageEffect::Crash).expect("valid");
    w.set_bad_image("3", ImageEffect::Unregistered)
        .expect("replaces");
    w.set_bad_image("2", ImageEffect::Unhealthy).expect("valid");
    assert_eq!(
        w.faults().image_effect("agents", "3"),
        Some(ImageEffect::Unregistered)
    );
    assert_eq!(
        w.faults().image_effect("agents", "2"),
        Some(ImageEffect::Unhealthy)
    );
    assert_eq!(w.faults().image_effect("agents", "1"), None);
}

#[test]
fn only_failures_marathon_records_become_the_apps_last_task_failure() {
    let mut w = world(
        r#"
        [[apps]]
        id = "/web"
        instances = 3
        constraints = [["hostname", "UNIQUE"]]
        "#,
    );
    let tasks = app(&w, "/web").tasks.expect("embedded");
    // A kill with scale, a drain, an unreachable agent: none is a failure.
    w.kill_tasks(std::slice::from_ref(&tasks[0].id), true);
    w.drain_agent(&tasks[1].slave_id).expect("known");
    let instance =
        w.agent(&tasks[2].slave_id).expect("registered").attributes["instance_id"].clone();
    w.terminate_instance(&instance, false).expect("terminates");
    // Unreachable after 75 s of missed pings, expunged 3 s later.
    w.advance_to(secs(76));
    assert!(
        app(&w, "/web")
            .tasks
            .expect("embedded")
            .iter()
            .any(|t| t.id == tasks[2].id && t.state == "TASK_UNREACHABLE"),
        "the third task was unreachable"
    );
    w.advance_to(secs(100));
    assert!(app(&w, "/web").last_task_failure.is_none());
    // A machine brought down loses its task: TASK_LOST, which Marathon
    // records.
    let agent = w
        .agents()
        .into_iter()
        .find(|a| a.task_count > 0)
        .expect("an agent with a task");
    let machine = MachineId {
        hostname: Some(agent.hostname.clone()),
        ip: Some(agent.ip.clone()),
    };
    w.set_maintenance_schedule(vec![MaintenanceWindow {
        machines: vec![machine.clone()],
        start_unix_ns: 0,
        duration_ns: 1,
    }])
    .expect("valid");
    w.machines_down(std::slice::from_ref(&machine))
        .expect("draining machine");
    let failure = app(&w, "/web").last_task_failure.expect("recorded");
    assert_eq!(failure.state, "TASK_LOST");
    assert_eq!(failure.slave_id, agent.id);
    assert_eq!(
        failure.message,
        format!(
            "Slave {} removed: Operator initiated 'Machine DOWN'",
            agent.hostname
        )
    );
}

#[test]
fn in_the_bad_image_scenario_version_2_breaks_every_app_and_version_1_heals_them() {
    let mut w = World::new(&Scenario::load("bad-image").expect("shipped"));
    w.set_launch_template_version("2").expect("published");
    w.set_desired_capacity("mesos-agents-bad-image", 12)
        .expect("within bounds");
    w.advance_to(secs(120));
    let agents = w.agents();
    assert_eq!(agents.len(), 12, "an unhealthy image still registers");
    let (old, new) = agents.split_at(6);
    for agent in old {
        w.deactivate_agent(&agent.id).expect("known");
    }
    let every_task: Vec<String> = w.tasks().into_iter().map(|t| t.id).collect();
    w.kill_tasks(&every_task, false);
    w.advance_to(secs(600));
    let causes = [
        ("/shop/web", "Reason: 503 Service Unavailable"),
        ("/shop/billing", "Reason: 503 Service Unavailable"),
        ("/shop/cart", "Reason: ConnectException: Connection refused"),
        ("/shop/api", "Reason: "),
    ];
    for (id, reason) in causes {
        let a = app(&w, id);
        assert_eq!(a.tasks_healthy, 0, "{id}");
        let failure = a.last_task_failure.expect("killed on the bad image");
        assert_eq!(failure.state, "TASK_KILLED", "{id}");
        assert!(
            failure.message.ends_with(reason),
            "{id}: {}",
            failure.message
        );
        assert!(new.iter().any(|n| n.id == failure.slave_id), "{id}");
    }
    let worker = app(&w, "/shop/worker").last_task_failure.expect("crashed");
    assert_eq!(worker.state, "TASK_FAILED");
    // Back to the old agents: every app serves again.
    for agent in old {
        w.reactivate_agent(&agent.id).expect("known");
    }
    for agent in new {
        w.drain_agent(&agent.id).expect("known");
    }
    w.advance_to(secs(1800));
    for a in w.apps(true) {
        let up = if a.health_checks.is_empty() {
            a.tasks_running
        } else {
            a.tasks_healthy
        };
        assert_eq!(up, a.instances, "{}", a.id);
        for t in a.tasks.expect("embedded") {
            assert!(
                old.iter().any(|o| o.id == t.slave_id),
                "{} on {}",
                t.id,
                t.slave_id
            );
        }
    }
}

#[test]
fn standby_takes_an_instance_out_of_desired_keeps_its_agent_and_exit_brings_it_back() {
    let mut w = world("");
    let first = group(&w).instances[0].instance_id.clone();
    let agents = w.agents().len();

    // With decrement: desired 3 -> 2, nothing launched, the agent stays.
    let activities = w
        .enter_standby("agents", std::slice::from_ref(&first), true)
        .expect("entered");
    assert_eq!(activities.len(), 1);
    assert_eq!(
        activities[0].description,
        format!("Moving EC2 instance to Standby: {first}")
    );
    assert!(
        activities[0]
            .cause
            .contains("shrinking the capacity from 3 to 2")
    );
    assert_eq!(activities[0].status_code, "InProgress");
    w.advance_to(secs(600));
    let g = group(&w);
    assert_eq!(g.desired_capacity, 2);
    let states: Vec<&str> = g.instances.iter().map(|i| i.lifecycle_state).collect();
    assert_eq!(
        states.iter().filter(|s| **s == "Standby").count(),
        1,
        "{states:?}"
    );
    assert_eq!(
        states.len(),
        3,
        "nothing launched or terminated: {states:?}"
    );
    assert_eq!(
        w.agents().len(),
        agents,
        "a Standby machine's agent runs on"
    );
    let ec2 = w
        .ec2_instances(std::slice::from_ref(&first))
        .expect("known");
    assert_eq!(ec2[0].state, "running");

    // Refused as a whole: already in Standby, or not in the group.
    for (ids, expected) in [
        (
            vec![first.clone()],
            format!("The instance {first} is not in InService."),
        ),
        (
            vec!["i-0nope".to_string()],
            "is not part of Auto Scaling group agents".to_string(),
        ),
    ] {
        let err = w.enter_standby("agents", &ids, false).expect_err("refused");
        assert!(
            err.aws_message().contains(&expected),
            "{}",
            err.aws_message()
        );
        assert_eq!(err.code(), "ValidationError");
    }
    // Below MinSize (2) with decrement: refused, nothing moved.
    let second = group(&w)
        .instances
        .iter()
        .find(|i| i.lifecycle_state == "InService")
        .expect("in service")
        .instance_id
        .clone();
    assert!(
        w.enter_standby("agents", std::slice::from_ref(&second), true)
            .is_err()
    );
    // Without decrement: the group launches a replacement.
    w.enter_standby("agents", std::slice::from_ref(&second), false)
        .expect("entered");
    w.advance_to(secs(1200));
    let g = group(&w);
    assert_eq!(g.desired_capacity, 2);
    assert_eq!(
        g.instances
            .iter()
            .filter(|i| i.lifecycle_state == "InService")
            .count(),
        2
    );

    // ExitStandby: back in service, desired grows; refused above MaxSize.
    let activities = w
        .exit_standby("agents", std::slice::from_ref(&first))
        .expect("exited");
    assert_eq!(activities[0].status_code, "PreInService");
    assert!(
        activities[0]
            .cause
            .contains("increasing the capacity from 2 to 3")
    );
    assert_eq!(group(&w).desired_capacity, 3);
    w.update_group("agents", None, Some(3), None)
        .expect("max 3");
    let err = w
        .exit_standby("agents", std::slice::from_ref(&second))
        .expect_err("above max");
    assert!(
        err.aws_message().contains("max size 3"),
        "{}",
        err.aws_message()
    );
}

#[test]
fn tasks_on_one_agent_hold_distinct_host_ports_freed_when_they_are_gone() {
    use std::collections::{BTreeMap, BTreeSet};
    let w = world(
        r#"
        [[apps]]
        id = "/many"
        instances = 12
        cpus = 0.1
        mem = 64
        "#,
    );
    let mut by_agent: BTreeMap<String, Vec<u16>> = BTreeMap::new();
    for t in w.tasks() {
        assert!(super::marathon::AGENT_PORTS.contains(&t.host_port));
        by_agent.entry(t.slave_id).or_default().push(t.host_port);
    }
    for (agent, ports) in &by_agent {
        let distinct: BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len(), "{agent}: {ports:?}");
        let listed = w.agent(agent).expect("registered").used_ports;
        assert_eq!(listed, distinct.into_iter().collect::<Vec<_>>());
    }
    // A killed task's port is free again once it is gone: its replacement
    // on the same agent (or another task there) may take it.
    let mut w = w;
    let victim = w.tasks().into_iter().next().expect("a task");
    w.kill_tasks(std::slice::from_ref(&victim.id), false);
    assert!(
        w.agent(&victim.slave_id)
            .unwrap()
            .used_ports
            .contains(&victim.host_port)
    );
    w.advance_to(secs(120));
    assert!(w.tasks().iter().all(|t| t.id != victim.id), "gone");
    let held_by_another = w
        .tasks()
        .iter()
        .any(|t| t.slave_id == victim.slave_id && t.host_port == victim.host_port);
    assert_eq!(
        w.agent(&victim.slave_id)
            .unwrap()
            .used_ports
            .contains(&victim.host_port),
        held_by_another,
        "the gone task's port is released"
    );
}

/// A DC/OS-style cluster: three private agents, two public ones (all
/// their resources reserved to `slave_public`), exact timings.
const CLUSTER: &str = r#"
    [[groups]]
    name = "private"
    min_size = 3
    max_size = 6
    desired_capacity = 3
    [groups.tags]
    Tier = "private"

    [[groups]]
    name = "public"
    min_size = 2
    max_size = 4
    desired_capacity = 2
    role = "slave_public"
    availability_zones = ["us-east-1a", "us-east-1b"]
    [groups.agent]
    cpus = 4
    mem = 8192

    [agent]
    cpus = 8
    mem = 16384
"#;

fn cluster(apps: &str) -> World {
    let text = format!("{CLUSTER}\n{apps}");
    World::new(&Scenario::from_toml(&text, "cluster").expect("valid scenario"))
}

/// Agent id → the role its resources are reserved to.
fn agent_roles(w: &World) -> std::collections::HashMap<String, Option<String>> {
    w.agents().into_iter().map(|a| (a.id, a.role)).collect()
}

/// The roles of the agents the app's live tasks run on.
fn roles_under(w: &World, id: &str) -> Vec<Option<String>> {
    let roles = agent_roles(w);
    app(w, id)
        .tasks
        .expect("embedded")
        .iter()
        .map(|t| roles[&t.slave_id].clone())
        .collect()
}

#[test]
fn public_agents_are_reserved_to_slave_public_and_say_public_ip() {
    let w = cluster("");
    let agents = w.agents();
    assert_eq!(agents.len(), 5);
    let public: Vec<&AgentView> = agents.iter().filter(|a| a.role.is_some()).collect();
    assert_eq!(public.len(), 2);
    for a in &public {
        assert_eq!(a.role.as_deref(), Some("slave_public"));
        assert_eq!(a.attributes["public_ip"], "true");
        assert_eq!((a.resources.cpus, a.resources.mem), (4.0, 8192.0));
    }
    for a in agents.iter().filter(|a| a.role.is_none()) {
        assert!(
            !a.attributes.contains_key("public_ip"),
            "{:?}",
            a.attributes
        );
        assert_eq!(a.resources.cpus, 8.0);
    }
    assert_eq!(w.marathon_role(), "slave_public");
}

#[test]
fn a_public_app_runs_only_on_public_agents_and_a_default_app_never_there() {
    // Six tasks of the default app would fit on the public agents too (1
    // cpu each); none may go there. The edge app has room only there.
    let w = cluster(
        r#"
        [[apps]]
        id = "/web"
        instances = 12
        [[apps]]
        id = "/edge/lb"
        instances = 2
        constraints = [["hostname", "UNIQUE"]]
        accepted_resource_roles = ["slave_public"]
        "#,
    );
    let web = roles_under(&w, "/web");
    assert_eq!(web.len(), 12);
    assert!(web.iter().all(Option::is_none), "{web:?}");
    let edge = roles_under(&w, "/edge/lb");
    assert_eq!(edge, vec![Some("slave_public".to_string()); 2]);
    assert_eq!(w.report().misplaced_task_ms, 0);
}

#[test]
fn an_app_accepting_both_roles_spreads_over_both_kinds_of_agent() {
    // UNIQUE over five agents: it needs every agent, public ones included.
    let w = cluster(
        r#"
        [[apps]]
        id = "/status"
        instances = 5
        constraints = [["hostname", "UNIQUE"]]
        accepted_resource_roles = ["*", "slave_public"]
        "#,
    );
    let roles = roles_under(&w, "/status");
    assert_eq!(roles.len(), 5, "every instance placed");
    assert_eq!(roles.iter().filter(|r| r.is_some()).count(), 2, "{roles:?}");
    assert_eq!(
        app(&w, "/status").accepted_resource_roles.as_deref(),
        Some(&["*".to_string(), "slave_public".to_string()][..])
    );
}

#[test]
fn a_public_task_whose_agent_is_gone_waits_rather_than_go_to_a_private_agent() {
    let mut w = cluster(
        r#"
        [[apps]]
        id = "/edge/lb"
        instances = 2
        constraints = [["hostname", "UNIQUE"]]
        accepted_resource_roles = ["slave_public"]
        "#,
    );
    let public = w
        .describe_groups(&["public".to_string()])
        .remove(0)
        .instances[0]
        .instance_id
        .clone();
    // No replacement instance: the public group launches nothing.
    w.suspend_processes("public", &["Launch".to_string()])
        .expect("a group");
    w.terminate_instance(&public, false).expect("terminates");
    // Gone after the ping timeout (75 s), relaunched 3 s later: the one
    // public agent left already runs a task of the UNIQUE app, and the
    // private agents, with room to spare, are not the app's.
    w.advance_to(secs(120));
    assert_eq!(w.apps_waiting_for_offers(), ["/edge/lb"]);
    let roles = roles_under(&w, "/edge/lb");
    assert_eq!(
        roles,
        [Some("slave_public".to_string())],
        "none on a private agent"
    );
    assert_eq!(w.report().misplaced_task_ms, 0);
}

#[test]
fn a_scale_up_of_one_group_leaves_the_other_untouched() {
    let mut w = cluster("");
    let private_before = w.describe_groups(&["private".to_string()]).remove(0);
    let activities_before = w
        .scaling_activities("private", usize::MAX)
        .expect("a group");
    w.set_desired_capacity("public", 3).expect("within bounds");
    w.advance_to(secs(600));

    let public = w.describe_groups(&["public".to_string()]).remove(0);
    assert_eq!((public.desired_capacity, public.instances.len()), (3, 3));
    assert_eq!(public.role.as_deref(), Some("slave_public"));
    assert_eq!(
        w.az_counts_of("public"),
        Some(vec![2, 1]),
        "the emptiest AZ first"
    );
    assert_eq!(
        w.describe_groups(&["private".to_string()]).remove(0),
        private_before
    );
    assert_eq!(
        w.scaling_activities("private", usize::MAX)
            .expect("a group"),
        activities_before
    );
    // The new agent joined the same masters, reserved as its group says.
    let agents = w.agents();
    assert_eq!(agents.len(), 6);
    assert_eq!(agents.iter().filter(|a| a.role.is_some()).count(), 3);

    let report = w.report();
    let by_name = |name: &str| {
        report
            .groups
            .iter()
            .find(|g| g.name == name)
            .expect("a group report")
            .clone()
    };
    let (private, public) = (by_name("private"), by_name("public"));
    assert_eq!(public.final_state.desired_capacity, 3);
    assert_eq!(public.final_state.agents_registered, 3);
    assert_eq!(public.instances_launched, 3);
    assert_eq!(public.peak_desired_capacity, 3);
    assert_eq!(public.az_final["us-east-1a"], 2);
    assert_eq!(private.instances_launched, 3);
    assert_eq!(private.peak_desired_capacity, 3);
    assert_eq!(private.peak_instances_beyond_desired, 0);
    // The cluster-wide fields sum the groups (by AZ name).
    assert_eq!(report.final_state.desired_capacity, 6);
    assert_eq!(report.final_state.instances_live, 6);
    assert_eq!(report.az_final["us-east-1a"], 3);
    assert_eq!(report.az_final["us-east-1c"], 1);
    assert_eq!(report.peak_desired_capacity, 6);
}

#[test]
fn each_group_answers_for_its_own_instances_and_an_unknown_name_is_awss_answer() {
    let mut w = cluster("");
    let public = w.describe_groups(&["public".to_string()]).remove(0);
    let victim = public.instances[0].instance_id.clone();
    // MinSize 2 of the public group, not the private one's 3.
    let err = w.terminate_instance(&victim, true).expect_err("at MinSize");
    assert!(err.to_string().contains("minSize (2)"), "{err}");
    w.terminate_instance(&victim, false).expect("replaced");
    assert_eq!(w.az_counts_of("private"), Some(vec![1, 1, 1]));
    w.suspend_processes("public", &["AZRebalance".to_string()])
        .expect("a group");
    let g = w.describe_groups(&[]);
    assert_eq!(
        g.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(),
        ["private", "public"]
    );
    assert!(g[0].suspended_processes.is_empty());
    assert_eq!(g[1].suspended_processes.len(), 1);
    let ec2 = w.ec2_instances(&[]).expect("every instance");
    assert_eq!(ec2.iter().filter(|i| i.group_name == "public").count(), 3);
    assert_eq!(ec2.iter().filter(|i| i.group_name == "private").count(), 3);
    let err = w
        .set_desired_capacity("nope", 1)
        .expect_err("no such group");
    assert_eq!(err.code(), "ValidationError");
    assert!(
        err.to_string()
            .contains("AutoScalingGroup 'nope' not found"),
        "{err}"
    );
}

#[test]
fn tasks_left_on_agents_their_new_roles_refuse_count_as_misplaced_time() {
    // The monitor's ground truth must be able to see a misplacement:
    // changing the roles leaves the running tasks where they are (the
    // world does not model Marathon's restart).
    let mut w = cluster(
        r#"
        [[apps]]
        id = "/status"
        instances = 2
        cpus = 3
        accepted_resource_roles = ["slave_public"]
        "#,
    );
    w.advance_by_ms(1_000);
    assert_eq!(w.report().misplaced_task_ms, 0);
    w.update_app(
        "/status",
        AppChange {
            accepted_resource_roles: Some(vec!["*".to_string()]),
            ..AppChange::default()
        },
        false,
    )
    .expect("a config change");
    let changed = app(&w, "/status");
    assert_eq!(changed.config_changed_unix_ms, w.unix_ms(w.now()));
    assert_eq!(changed.accepted_resource_roles, Some(vec!["*".to_string()]));
    assert_eq!(w.app_versions("/status").expect("an app").len(), 2);
    w.advance_by_ms(10_000);
    let report = w.report();
    assert_eq!(report.misplaced_task_ms, 2 * 10_000, "two tasks for 10 s");
    assert_eq!(report.apps[0].misplaced_task_ms, 2 * 10_000);
    // The same roles again are no change of configuration.
    let version = app(&w, "/status").version_unix_ms;
    w.update_app(
        "/status",
        AppChange {
            accepted_resource_roles: Some(vec!["*".to_string()]),
            instances: None,
        },
        true,
    )
    .expect("a scale to the same count");
    assert_eq!(app(&w, "/status").config_changed_unix_ms, version);
}
