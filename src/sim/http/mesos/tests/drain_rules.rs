//! DRAIN_AGENT, DEACTIVATE_AGENT and REACTIVATE_AGENT as Mesos 1.9's
//! `master/http.cpp` answers them: the refusals with their status and
//! text, and the drain (`drain_info`, the estimated drain start) in both
//! agent listings.

use serde_json::{Value, json};

use super::{Masters, an_hour_from_now, get_json};
use crate::mesos::AgentListing;
use crate::roll::ports::mesos::MesosMaster;

/// A v1 call to the leader: its status and body.
async fn call(masters: &Masters, body: Value) -> (u16, String) {
    let answer = Masters::raw()
        .post(format!("{}/api/v1", masters.urls[0]))
        .json(&body)
        .send()
        .await
        .expect("an answer");
    let status = answer.status().as_u16();
    (status, answer.text().await.expect("a body"))
}

fn drain(agent: &str, extra: Value) -> Value {
    let mut body = json!({"type": "DRAIN_AGENT", "drain_agent": {"agent_id": {"value": agent}}});
    if let (Some(fields), Some(extra)) = (body["drain_agent"].as_object_mut(), extra.as_object()) {
        fields.extend(extra.clone());
    }
    body
}

fn agent_call(kind: &str, agent: &str) -> Value {
    let mut body = json!({"type": kind});
    body[kind.to_lowercase()] = json!({"agent_id": {"value": agent}});
    body
}

/// The agent `id` in GET_AGENTS and in `/master/slaves`.
async fn listed(masters: &Masters, id: &str) -> (Value, Value) {
    let (_, body) = call(masters, json!({"type": "GET_AGENTS"})).await;
    let v1: Value = serde_json::from_str(&body).expect("JSON");
    let v1 = v1["get_agents"]["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .find(|a| a["agent_info"]["id"]["value"] == id)
        .cloned()
        .unwrap_or(Value::Null);
    let v0 = get_json(format!("{}/master/slaves", masters.urls[0])).await;
    let v0 = v0["slaves"]
        .as_array()
        .expect("slaves")
        .iter()
        .find(|a| a["id"] == id)
        .cloned()
        .unwrap_or(Value::Null);
    (v1, v0)
}

/// An agent running tasks, so that its drain takes a kill to finish.
fn busy_agent(masters: &Masters) -> String {
    masters.world.with(|w| {
        w.agents()
            .into_iter()
            .find(|a| a.task_count > 0)
            .expect("an agent with tasks")
            .id
    })
}

#[tokio::test]
async fn drain_info_carries_the_config_asked_and_the_drain_start_in_both_listings() {
    let masters = Masters::start().await;
    let id = busy_agent(&masters);
    let asked_ms = masters.world.with(|w| w.unix_ms(w.now()));
    let extra = json!({"max_grace_period": {"seconds": 600}, "mark_gone": false});
    assert_eq!(call(&masters, drain(&id, extra)).await.0, 200);

    let (v1, v0) = listed(&masters, &id).await;
    let expected = json!({
        "state": "DRAINING",
        "config": {"max_grace_period": {"nanoseconds": 600_000_000_000_i64}, "mark_gone": false}
    });
    assert_eq!(v1["drain_info"], expected);
    assert_eq!(v0["drain_info"], expected);
    assert_eq!(v1["deactivated"], true);
    assert_eq!(v0["active"], false);
    // When the drain was asked: whole seconds in GET_AGENTS, as Mesos
    // writes `Seconds(time.secs()).ns()`; seconds as a float in v0.
    // The world's clock runs with the wall clock here: a few seconds'
    // leeway.
    let start_ns = v1["estimated_drain_start_time"]["nanoseconds"]
        .as_i64()
        .expect("nanoseconds");
    assert_eq!(start_ns % 1_000_000_000, 0);
    let asked_s = asked_ms as f64 / 1000.0;
    assert!((0.0..5.0).contains(&(start_ns as f64 / 1e9 - asked_s.floor())));
    let start_s = v0["estimated_drain_start_time_seconds"]
        .as_f64()
        .expect("seconds");
    assert!(
        (0.0..5.0).contains(&(start_s - asked_s)),
        "{start_s} {asked_s}"
    );
    assert_eq!(start_s.floor() as i64, start_ns / 1_000_000_000);

    masters.advance(60_000);
    let (v1, v0) = listed(&masters, &id).await;
    assert_eq!(v1["drain_info"]["state"], "DRAINED");
    assert_eq!(v0["drain_info"]["state"], "DRAINED");
    assert_eq!(v1["drain_info"]["config"], expected["config"]);

    // Asked again, the drain starts over with the new config; with no
    // task left it is DRAINED at once.
    assert_eq!(call(&masters, drain(&id, json!({}))).await.0, 200);
    let (v1, _) = listed(&masters, &id).await;
    assert_eq!(
        v1["drain_info"],
        json!({"state": "DRAINED", "config": {"mark_gone": false}})
    );
    let restarted = v1["estimated_drain_start_time"]["nanoseconds"]
        .as_i64()
        .expect("nanoseconds");
    assert!(
        restarted >= start_ns + 60_000_000_000,
        "{restarted} vs {start_ns}"
    );
}

#[tokio::test]
async fn drain_agent_of_an_agent_in_the_maintenance_schedule_is_a_400_naming_its_machine() {
    let masters = Masters::start().await;
    let client = masters.client(&[0], AgentListing::MasterSlaves);
    let agent = client.agents().await.expect("agents").registered[2].clone();
    client
        .schedule_maintenance(&[agent.machine_id()], an_hour_from_now())
        .await
        .expect("scheduled");
    let (status, text) = call(&masters, drain(&agent.id.0, json!({}))).await;
    assert_eq!(status, 400, "{text}");
    let ip = agent.ip.expect("an ip");
    assert_eq!(
        text,
        format!(
            "Agent {} is part of a maintenance schedule under Machine {} ({ip})",
            agent.id.0, agent.hostname
        )
    );
    let (v1, _) = listed(&masters, &agent.id.0).await;
    assert_eq!(v1["deactivated"], false, "a refused drain changes nothing");
    assert!(v1.get("drain_info").is_none());
}

#[tokio::test]
async fn operator_calls_on_an_agent_the_master_does_not_know_are_refused_as_mesos_words_it() {
    let masters = Masters::start().await;
    for kind in ["DRAIN_AGENT", "DEACTIVATE_AGENT"] {
        let (status, text) = call(&masters, agent_call(kind, "no-such-agent")).await;
        assert_eq!((status, text.as_str()), (400, "Unknown agent"), "{kind}");
    }
    // REACTIVATE_AGENT only asks whether the agent is deactivated.
    let (status, text) = call(&masters, agent_call("REACTIVATE_AGENT", "no-such-agent")).await;
    assert_eq!((status, text.as_str()), (400, "Agent is not deactivated"));
}

#[tokio::test]
async fn reactivate_agent_is_refused_unless_deactivated_and_while_the_agent_drains() {
    let masters = Masters::start().await;
    let agents = masters.world.with(|w| w.agents());
    let active = &agents[0].id;
    let (status, text) = call(&masters, agent_call("REACTIVATE_AGENT", active)).await;
    assert_eq!((status, text.as_str()), (400, "Agent is not deactivated"));

    let id = busy_agent(&masters);
    assert_eq!(call(&masters, drain(&id, json!({}))).await.0, 200);
    let (status, text) = call(&masters, agent_call("REACTIVATE_AGENT", &id)).await;
    assert_eq!(
        (status, text.as_str()),
        (400, "Agent is still in the DRAINING state")
    );
    let (v1, _) = listed(&masters, &id).await;
    assert_eq!(v1["drain_info"]["state"], "DRAINING", "still draining");

    // Once DRAINED it may come back: drain forgotten, offers again.
    masters.advance(60_000);
    let (status, text) = call(&masters, agent_call("REACTIVATE_AGENT", &id)).await;
    assert_eq!(status, 200, "{text}");
    let (v1, v0) = listed(&masters, &id).await;
    assert!(v1.get("drain_info").is_none() && v0.get("drain_info").is_none());
    assert!(v1.get("estimated_drain_start_time").is_none());
    assert_eq!(
        (v1["active"].clone(), v1["deactivated"].clone()),
        (json!(true), json!(false))
    );

    // A deactivated agent comes back too.
    let other = &agents[1].id;
    assert_eq!(
        call(&masters, agent_call("DEACTIVATE_AGENT", other))
            .await
            .0,
        200
    );
    assert_eq!(
        call(&masters, agent_call("REACTIVATE_AGENT", other))
            .await
            .0,
        200
    );
}

#[tokio::test]
async fn a_drain_with_mark_gone_removes_the_agent_once_drained() {
    let masters = Masters::start().await;
    let id = busy_agent(&masters);
    let extra = json!({"mark_gone": true});
    assert_eq!(call(&masters, drain(&id, extra)).await.0, 200);
    let (v1, _) = listed(&masters, &id).await;
    assert_eq!(v1["drain_info"]["config"]["mark_gone"], true);
    masters.advance(60_000);
    let (v1, v0) = listed(&masters, &id).await;
    assert!(v1.is_null() && v0.is_null(), "gone from both listings");
    let (status, text) = call(&masters, drain(&id, json!({}))).await;
    assert_eq!((status, text.as_str()), (400, "Unknown agent"));
}

#[tokio::test]
async fn an_unreachable_agent_may_be_drained_and_deactivated_but_reactivating_it_is_a_409() {
    let masters = Masters::start().await;
    let agents = masters.world.with(|w| w.agents());
    let (drained, deactivated) = (&agents[0], &agents[1]);
    for agent in [drained, deactivated] {
        let instance = agent.attributes["instance_id"].clone();
        masters
            .world
            .with(|w| w.terminate_instance(&instance, false))
            .expect("terminated");
    }
    // Past the ping timeouts: both unreachable, gone from the listings.
    masters.advance(600_000);
    assert!(listed(&masters, &drained.id).await.0.is_null());

    assert_eq!(call(&masters, drain(&drained.id, json!({}))).await.0, 200);
    let (status, text) = call(&masters, agent_call("DEACTIVATE_AGENT", &deactivated.id)).await;
    assert_eq!(status, 200, "{text}");
    let (status, text) = call(&masters, agent_call("REACTIVATE_AGENT", &deactivated.id)).await;
    assert_eq!(
        (status, text.as_str()),
        (409, "Agent removed while processing the call")
    );
    // Its drain never ends while it is away.
    let (status, text) = call(&masters, agent_call("REACTIVATE_AGENT", &drained.id)).await;
    assert_eq!(
        (status, text.as_str()),
        (400, "Agent is still in the DRAINING state")
    );
}
