//! Maintenance machines matched and refused as Mesos does, through the
//! roller's real adapter (`schedule_maintenance`, `cancel_maintenance`,
//! `machines_down`, `machines_up`, `maintenance_status`,
//! `maintenance_schedule`) and raw: a `MachineID` is the hostname (any
//! case) and the ip, both as given (`include/mesos/type_utils.hpp`), and
//! every refusal is a 400 with `master/maintenance.cpp`'s or
//! `master/http.cpp`'s text.

use super::*;

/// The 400 body of a refused call.
fn refusal(err: MesosError) -> String {
    match err {
        MesosError::HttpStatus {
            status: 400, body, ..
        } => body,
        other => panic!("expected a 400, got {other:?}"),
    }
}

/// A machine as Mesos names it in its refusals (`JSON::protobuf`).
fn named(m: &MachineId) -> String {
    let mut fields = Vec::new();
    if let Some(hostname) = &m.hostname {
        fields.push(format!(r#""hostname":"{hostname}""#));
    }
    if let Some(ip) = &m.ip {
        fields.push(format!(r#""ip":"{ip}""#));
    }
    format!("{{{}}}", fields.join(","))
}

#[tokio::test]
async fn a_machine_named_with_its_hostname_in_another_case_is_the_agents_machine() {
    let masters = Masters::start().await;
    let client = masters.client(&[0], AgentListing::MasterSlaves);
    let target = client.agents().await.expect("agents").registered[3].clone();
    let announced = target.machine_id();
    let shouted = MachineId {
        hostname: announced.hostname.as_ref().map(|h| h.to_uppercase()),
        ip: announced.ip.clone(),
    };
    assert_ne!(shouted, announced);
    client
        .schedule_maintenance(std::slice::from_ref(&shouted), an_hour_from_now())
        .await
        .expect("scheduled");
    let draining: Vec<MachineId> = client
        .maintenance_status()
        .await
        .expect("status")
        .draining
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(draining, vec![shouted.clone()]);

    // Down by the name the agent announced: the same machine, so DRAINING,
    // and its agent goes.
    client
        .machines_down(std::slice::from_ref(&announced))
        .await
        .expect("down");
    let agents = client.agents().await.expect("agents").registered;
    assert_eq!(agents.len(), 11);
    assert!(agents.iter().all(|a| a.id != target.id));
    let status = client.maintenance_status().await.expect("status");
    assert_eq!(status.down, vec![shouted.clone()]);
    assert!(status.draining.is_empty());

    client
        .machines_up(std::slice::from_ref(&announced))
        .await
        .expect("up");
    assert!(
        client
            .maintenance_schedule()
            .await
            .expect("schedule")
            .windows
            .is_empty()
    );
    masters.advance(60_000);
    let back = client.agents().await.expect("agents").registered;
    assert!(back.iter().any(|a| a.hostname == target.hostname));
}

#[tokio::test]
async fn a_machine_named_without_its_ip_is_not_the_agents_machine() {
    let masters = Masters::start().await;
    let client = masters.client(&[0], AgentListing::MasterSlaves);
    let target = client.agents().await.expect("agents").registered[5].clone();
    let hostname_only = MachineId {
        hostname: Some(target.hostname.clone()),
        ip: None,
    };
    client
        .schedule_maintenance(std::slice::from_ref(&hostname_only), an_hour_from_now())
        .await
        .expect("scheduled");
    // Scheduled, so it goes DOWN; but the agent announced an ip too, so
    // it is another machine and stays.
    client
        .machines_down(std::slice::from_ref(&hostname_only))
        .await
        .expect("down");
    let agents = client.agents().await.expect("agents").registered;
    assert_eq!(agents.len(), 12);
    assert!(agents.iter().any(|a| a.id == target.id));
    assert_eq!(
        client.maintenance_status().await.expect("status").down,
        vec![hostname_only.clone()]
    );
    // The agent's own machine was never scheduled: it is UP.
    let err = client
        .machines_down(&[target.machine_id()])
        .await
        .expect_err("UP");
    assert_eq!(
        refusal(err),
        format!(
            "Machine '{}' is not in DRAINING mode and cannot be brought down",
            named(&target.machine_id())
        )
    );
    client
        .machines_up(std::slice::from_ref(&hostname_only))
        .await
        .expect("up");
}

#[tokio::test]
async fn a_down_machine_stays_in_the_schedule_until_it_is_brought_up() {
    let masters = Masters::start().await;
    let client = masters.client(&[0], AgentListing::MasterSlaves);
    let agents = client.agents().await.expect("agents").registered;
    let (down, draining) = (agents[1].machine_id(), agents[2].machine_id());
    client
        .schedule_maintenance(&[down.clone(), draining.clone()], an_hour_from_now())
        .await
        .expect("scheduled");
    client
        .machines_down(std::slice::from_ref(&down))
        .await
        .expect("down");

    let err = client
        .cancel_maintenance(std::slice::from_ref(&down))
        .await
        .expect_err("DOWN stays scheduled");
    assert_eq!(
        refusal(err),
        format!(
            "Machine '{}' is deactivated and cannot be removed from the schedule",
            named(&down)
        )
    );
    let err = client
        .machines_down(std::slice::from_ref(&down))
        .await
        .expect_err("already DOWN");
    assert_eq!(
        refusal(err),
        format!(
            "Machine '{}' is not in DRAINING mode and cannot be brought down",
            named(&down)
        )
    );
    let err = client
        .machines_up(std::slice::from_ref(&draining))
        .await
        .expect_err("DRAINING, not DOWN");
    assert_eq!(
        refusal(err),
        format!(
            "Machine '{}' is not in DOWN mode and cannot be brought up",
            named(&draining)
        )
    );

    client
        .machines_up(std::slice::from_ref(&down))
        .await
        .expect("up");
    // Up means out of the schedule (the other machine keeps its window)
    // and UP: bringing it up again is refused.
    let schedule = client.maintenance_schedule().await.expect("schedule");
    assert_eq!(schedule.windows.len(), 1);
    assert_eq!(schedule.windows[0].machines, vec![draining.clone()]);
    let err = client
        .machines_up(std::slice::from_ref(&down))
        .await
        .expect_err("UP");
    assert_eq!(
        refusal(err),
        format!(
            "Machine '{}' is not in DOWN mode and cannot be brought up",
            named(&down)
        )
    );
    let change = client
        .cancel_maintenance(&[down.clone(), draining.clone()])
        .await
        .expect("unscheduled");
    assert_eq!(change.changed, vec![draining]);
    assert_eq!(change.unchanged, vec![down]);
}

#[tokio::test]
async fn malformed_machines_and_windows_are_refused_with_mesos_texts() {
    let masters = Masters::start().await;
    let raw = Masters::raw();
    let post = |path: &'static str, body: Value| {
        let url = format!("{}{path}", masters.urls[0]);
        let raw = raw.clone();
        async move {
            let answer = raw.post(url).json(&body).send().await.expect("an answer");
            (
                answer.status().as_u16(),
                answer.text().await.expect("a body"),
            )
        }
    };
    let window = |machines: Value, duration: i64| {
        serde_json::json!({"windows": [{
            "machine_ids": machines,
            "unavailability": {"start": {"nanoseconds": 0}, "duration": {"nanoseconds": duration}},
        }]})
    };
    let cases = [
        (
            "/master/machine/down",
            serde_json::json!([{}]),
            "Both 'hostname' and 'ip' for a machine are empty",
        ),
        (
            "/master/machine/down",
            serde_json::json!([{"hostname": "", "ip": ""}]),
            "Both 'hostname' and 'ip' for a machine are empty",
        ),
        (
            "/master/machine/up",
            serde_json::json!([{"hostname": "h", "ip": "10.0.0"}]),
            "Failed to parse IPv4: 10.0.0",
        ),
        (
            "/master/machine/down",
            serde_json::json!([
                {"hostname": "Machine1", "ip": "10.0.0.1"},
                {"hostname": "machine1", "ip": "10.0.0.1"}
            ]),
            r#"Machine '{"hostname":"machine1","ip":"10.0.0.1"}' appears more than once in the schedule"#,
        ),
        (
            "/master/maintenance/schedule",
            window(serde_json::json!([]), 1),
            "List of machines in the maintenance window is empty",
        ),
        (
            "/master/maintenance/schedule",
            window(serde_json::json!([{"hostname": "m", "ip": "10.0.0.1"}]), -1),
            "Unavailability 'duration' is negative",
        ),
        (
            "/master/maintenance/schedule",
            window(
                serde_json::json!([
                    {"hostname": "M", "ip": "10.0.0.1"},
                    {"hostname": "m", "ip": "10.0.0.1"}
                ]),
                1,
            ),
            r#"Machine '{"hostname":"m","ip":"10.0.0.1"}' appears more than once in the schedule"#,
        ),
        (
            "/api/v1",
            serde_json::json!({"type": "START_MAINTENANCE", "start_maintenance": {"machines": []}}),
            "List of machines is empty",
        ),
    ];
    for (path, body, expected) in cases {
        let (status, text) = post(path, body.clone()).await;
        assert_eq!((status, text.as_str()), (400, expected), "{path} {body}");
    }
    // Nothing was changed by any of them.
    assert!(masters.world.with(|w| w.maintenance_schedule()).is_empty());
    assert_eq!(masters.world.with(|w| w.agents()).len(), 12);
}
