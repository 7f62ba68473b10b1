//! Contract tests: the roller's real Mesos adapter against three simulated
//! masters on loopback over the `demo` world, and the facade's JSON
//! against the real masters' field names (tests/fixtures/mesos-*.json).

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::Value;

use super::router;
use crate::mesos::{AgentListing, MesosClient, MesosError, MesosSettings};
use crate::retry::Backoff;
use crate::roll::ports::mesos::{
    AgentId, DrainOptions, DrainState, MachineId, MesosMaster, Unavailability,
};
use crate::sim::http::peer_servers::{PeerServers, fixture, keys};
use crate::sim::shared::{ApiFaults, SystemFaults};

/// Three masters over one world; peer 0 leads. Servers stop when dropped.
struct Masters(PeerServers);

impl std::ops::Deref for Masters {
    type Target = PeerServers;

    fn deref(&self) -> &PeerServers {
        &self.0
    }
}

impl Masters {
    /// The `demo` world, its clock at real time: tests move simulated
    /// time themselves with `advance`.
    async fn start() -> Masters {
        Masters(PeerServers::start(1.0, router).await)
    }

    /// An adapter given the masters in `order` (indexes into the peers).
    fn client(&self, order: &[usize], listing: AgentListing) -> MesosClient {
        let mut settings =
            MesosSettings::new(order.iter().map(|&i| self.urls[i].clone()).collect());
        settings.backoff = Backoff {
            initial: Duration::from_millis(10),
            max: Duration::from_millis(50),
            attempts: 3,
        };
        settings.agent_listing = listing;
        MesosClient::new(settings).expect("a valid client")
    }

    fn advance(&self, ms: u64) {
        self.world.with(|w| w.advance_by_ms(ms));
    }

    /// A client that follows no redirect, to see the masters' own answers.
    fn raw() -> reqwest::Client {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .expect("a reqwest client")
    }
}

fn machine(hostname: &str, ip: &str) -> MachineId {
    MachineId {
        hostname: Some(hostname.to_string()),
        ip: Some(ip.to_string()),
    }
}

fn an_hour_from_now() -> Unavailability {
    Unavailability::new(std::time::SystemTime::now(), Duration::from_secs(3600))
}

#[tokio::test]
async fn the_adapter_finds_the_leader_through_a_followers_redirect() {
    let masters = Masters::start().await;
    let client = masters.client(&[1, 2, 0], AgentListing::MasterSlaves);
    let agents = client.agents().await.expect("agents");
    assert_eq!(agents.registered.len(), 12);
    assert_eq!(client.known_leader(), Some(format!("{}/", masters.urls[0])));
}

#[tokio::test]
async fn a_follower_redirects_protocol_relative_and_the_leader_redirects_to_itself() {
    let masters = Masters::start().await;
    let raw = Masters::raw();
    let leader = masters.authority(0);

    let answer = raw
        .get(format!("{}/master/slaves?jsonp=x", masters.urls[1]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 307);
    assert_eq!(
        answer.headers()["location"],
        format!("//{leader}/master/slaves?jsonp=x").as_str()
    );

    for index in [0, 2] {
        let answer = raw
            .get(format!("{}/master/redirect", masters.urls[index]))
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), 307);
        assert_eq!(answer.headers()["location"], format!("//{leader}").as_str());
    }

    let health = raw
        .get(format!("{}/health", masters.urls[2]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn the_adapter_lists_the_agents_of_the_world_through_both_listings() {
    let masters = Masters::start().await;
    let world_agents = masters.world.with(|w| w.agents());
    for listing in [AgentListing::MasterSlaves, AgentListing::OperatorApi] {
        let client = masters.client(&[0], listing);
        let agents = client.agents().await.expect("agents");
        assert_eq!(agents.registered.len(), world_agents.len());
        assert!(agents.recovered.is_empty());
        for (seen, truth) in agents.registered.iter().zip(&world_agents) {
            assert_eq!(seen.id.0, truth.id);
            assert_eq!(seen.hostname, truth.hostname);
            assert_eq!(seen.ip.map(|ip| ip.to_string()), Some(truth.ip.clone()));
            assert_eq!(seen.resources.cpus, truth.resources.cpus);
            assert_eq!(seen.resources.mem, truth.resources.mem);
            assert_eq!(seen.used_resources.cpus, truth.used_resources.cpus);
            assert!(seen.active);
            assert!(!seen.deactivated);
            assert_eq!(seen.version.as_deref(), Some(truth.version.as_str()));
            for (name, value) in &truth.attributes {
                assert_eq!(
                    seen.attributes.get(name),
                    Some(&crate::roll::ports::mesos::AttributeValue::Text(
                        value.clone()
                    )),
                    "attribute {name} via {listing:?}"
                );
            }
            let registered = seen
                .registered_at
                .expect("a registration time")
                .duration_since(std::time::UNIX_EPOCH)
                .expect("after the epoch");
            assert_eq!(registered.as_millis() as u64, truth.registered_unix_ms);
        }
    }
}

#[tokio::test]
async fn scheduling_maintenance_merges_into_another_operators_schedule() {
    let masters = Masters::start().await;
    // Another operator's window, posted as Mesos' docs show it.
    let foreign = fixture("mesos-maintenance-schedule-POST-body-docs-example.json");
    let posted = Masters::raw()
        .post(format!("{}/master/maintenance/schedule", masters.urls[0]))
        .json(&foreign)
        .send()
        .await
        .expect("an answer");
    assert_eq!(posted.status(), 200);

    let client = masters.client(&[2], AgentListing::MasterSlaves);
    let agents = client.agents().await.expect("agents").registered;
    let ours: Vec<MachineId> = agents[..2].iter().map(|a| a.machine_id()).collect();
    let change = client
        .schedule_maintenance(&ours, an_hour_from_now())
        .await
        .expect("scheduled");
    assert_eq!(change.changed, ours);
    let again = client
        .schedule_maintenance(&ours, an_hour_from_now())
        .await
        .expect("scheduled again");
    assert_eq!(again.unchanged, ours);

    let schedule = client.maintenance_schedule().await.expect("schedule");
    assert_eq!(schedule.windows.len(), 3);
    assert_eq!(schedule.windows[2].machines, ours);
    assert_eq!(
        schedule.windows[0].machines,
        vec![
            machine("machine1", "10.0.0.1"),
            machine("machine2", "10.0.0.2")
        ]
    );
    assert_eq!(
        schedule.windows[0].unavailability.duration_nanos,
        Some(3_600_000_000_000)
    );
    assert_eq!(masters.world.with(|w| w.maintenance_schedule()).len(), 3);

    let status = client.maintenance_status().await.expect("status");
    assert_eq!(status.draining.len(), 5);
    assert!(status.down.is_empty());

    // Reading it back unchanged is what a merge relies on.
    let raw: Value = Masters::raw()
        .get(format!("{}/master/maintenance/schedule", masters.urls[0]))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    assert_eq!(raw["windows"][0], foreign["windows"][0]);
    assert_eq!(raw["windows"][1], foreign["windows"][1]);
}

#[tokio::test]
async fn a_machine_brought_down_leaves_the_agents_and_comes_back_after_up() {
    let masters = Masters::start().await;
    let client = masters.client(&[0], AgentListing::MasterSlaves);
    let agents = client.agents().await.expect("agents").registered;
    let target = agents[3].clone();
    let machines = [target.machine_id()];
    client
        .schedule_maintenance(&machines, an_hour_from_now())
        .await
        .expect("scheduled");

    client.machines_down(&machines).await.expect("down");
    let after_down = client.agents().await.expect("agents").registered;
    assert_eq!(after_down.len(), 11);
    assert!(after_down.iter().all(|a| a.hostname != target.hostname));
    let status = client.maintenance_status().await.expect("status");
    assert_eq!(status.down, machines.to_vec());
    assert!(status.draining.is_empty());

    client.machines_up(&machines).await.expect("up");
    assert!(
        client
            .maintenance_schedule()
            .await
            .expect("schedule")
            .windows
            .is_empty()
    );
    masters.advance(60_000);
    let after_up = client.agents().await.expect("agents").registered;
    let back = after_up
        .iter()
        .find(|a| a.hostname == target.hostname)
        .expect("the agent registered again");
    assert_ne!(back.id, target.id, "a restarted agent has a new id");
}

#[tokio::test]
async fn machine_down_for_a_machine_not_scheduled_is_a_400_with_the_reason() {
    let masters = Masters::start().await;
    let client = masters.client(&[0], AgentListing::MasterSlaves);
    let agents = client.agents().await.expect("agents").registered;
    let err = client
        .machines_down(&[agents[0].machine_id()])
        .await
        .expect_err("refused");
    match err {
        MesosError::HttpStatus { status, body, .. } => {
            assert_eq!(status, 400);
            assert!(
                body.contains("is not part of a maintenance schedule"),
                "{body}"
            );
        }
        other => panic!("expected a 400, got {other:?}"),
    }
    assert_eq!(masters.world.with(|w| w.agents()).len(), 12);
}

#[tokio::test]
async fn drain_and_deactivate_show_in_the_agent_listing() {
    let masters = Masters::start().await;
    let client = masters.client(&[0], AgentListing::OperatorApi);
    let agents = client.agents().await.expect("agents").registered;
    let (drained, deactivated) = (agents[0].id.clone(), agents[1].id.clone());

    client
        .drain_agent(
            &drained,
            DrainOptions {
                max_grace_period: Some(Duration::from_secs(10)),
                mark_gone: false,
            },
        )
        .await
        .expect("drain");
    client
        .deactivate_agent(&deactivated)
        .await
        .expect("deactivate");

    let find = |agents: &[crate::roll::ports::mesos::Agent], id: &AgentId| {
        agents
            .iter()
            .find(|a| &a.id == id)
            .cloned()
            .expect("still registered")
    };
    let now = client.agents().await.expect("agents").registered;
    let d = find(&now, &drained);
    assert_eq!(d.drain, Some(DrainState::Draining));
    assert!(d.deactivated && !d.active);
    let x = find(&now, &deactivated);
    assert!(x.deactivated && !x.active && x.drain.is_none());

    masters.advance(60_000);
    let later = client.agents().await.expect("agents").registered;
    let d = find(&later, &drained);
    assert_eq!(d.drain, Some(DrainState::Drained));
    assert_eq!(d.used_resources.cpus, 0.0);

    let unknown = client
        .deactivate_agent(&AgentId("no-such-agent".into()))
        .await
        .expect_err("unknown agent");
    assert_eq!(unknown.label(), "http_status");
}

#[tokio::test]
async fn after_a_leader_change_the_adapter_follows_the_new_leader() {
    let masters = Masters::start().await;
    let client = masters.client(&[0, 1, 2], AgentListing::MasterSlaves);
    client.agents().await.expect("agents");
    assert_eq!(client.known_leader(), Some(format!("{}/", masters.urls[0])));

    masters.peers.set_leader(2);
    let agents = client.agents().await.expect("agents after the change");
    assert_eq!(agents.registered.len(), 12);
    assert_eq!(client.known_leader(), Some(format!("{}/", masters.urls[2])));
}

#[tokio::test]
async fn without_a_leader_every_master_answers_503_and_the_adapter_says_no_leader() {
    let masters = Masters::start().await;
    masters.peers.lose_leader();
    let answer = Masters::raw()
        .get(format!("{}/master/slaves", masters.urls[1]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 503);
    assert_eq!(answer.text().await.unwrap(), "No leader elected");
    let client = masters.client(&[0, 1, 2], AgentListing::MasterSlaves);
    let err = client.agents().await.expect_err("no leader");
    assert_eq!(err.label(), "no_leader");

    masters.peers.set_leader(1);
    assert_eq!(client.agents().await.expect("agents").registered.len(), 12);
}

#[tokio::test]
async fn an_unknown_v1_call_is_the_protobuf_conversion_error_mesos_gives() {
    let masters = Masters::start().await;
    let answer = Masters::raw()
        .post(format!("{}/api/v1", masters.urls[0]))
        .json(&serde_json::json!({"type": "NO_SUCH_CALL"}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 400);
    let body = answer.text().await.expect("a body");
    assert!(
        body.starts_with("Failed to convert JSON into Call protobuf"),
        "{body}"
    );
}

#[tokio::test]
async fn an_error_rate_of_one_answers_503_and_the_call_is_still_counted() {
    let masters = Masters::start().await;
    masters.world.set_api_faults(ApiFaults {
        mesos: SystemFaults {
            error_rate: 1.0,
            latency_ms: 20,
        },
        ..ApiFaults::default()
    });
    let started = std::time::Instant::now();
    let answer = Masters::raw()
        .get(format!("{}/master/slaves", masters.urls[0]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 503);
    assert!(started.elapsed() >= Duration::from_millis(20));
    let report = masters.world.with(|w| w.report());
    assert_eq!(report.api_calls.get("mesos:GET /master/slaves"), Some(&1));

    let client = masters.client(&[0], AgentListing::MasterSlaves);
    // A new client looks for the leader first; 503s there read as "no
    // master knows a leader", retried and then reported.
    let err = client.agents().await.expect_err("every call fails");
    assert_eq!(err.label(), "no_leader");
}

#[tokio::test]
async fn the_slaves_json_has_the_field_names_and_types_of_a_real_master() {
    let masters = Masters::start().await;
    let ours: Value = Masters::raw()
        .get(format!("{}/master/slaves", masters.urls[0]))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    let real = fixture("mesos-master-state-summary-dcosui.json");
    let real_agent = &real["slaves"][0];
    let our_agent = &ours["slaves"][0];
    // The state-summary's own counters, and `reregistered_time`, which
    // Mesos writes only for an agent that re-registered.
    let summary_only =
        |k: &String| k.starts_with("TASK_") || k == "framework_ids" || k == "reregistered_time";
    let expected: BTreeSet<String> = keys(real_agent)
        .into_iter()
        .filter(|k| !summary_only(k))
        .collect();
    let missing: Vec<String> = expected.difference(&keys(our_agent)).cloned().collect();
    assert!(missing.is_empty(), "missing {missing:?}");
    assert!(our_agent["registered_time"].is_f64());
    assert!(our_agent["port"].is_u64());
    assert!(
        our_agent["pid"]
            .as_str()
            .expect("pid")
            .starts_with("slave(1)@")
    );
    assert!(our_agent["attributes"].is_object());
    for resources in ["resources", "used_resources"] {
        for name in ["cpus", "mem", "disk"] {
            assert!(our_agent[resources][name].is_number(), "{resources}.{name}");
        }
    }
    assert!(ours["recovered_slaves"].is_array());
}

#[tokio::test]
async fn the_v1_answers_have_the_shapes_of_the_operator_api_docs() {
    let masters = Masters::start().await;
    let client = masters.client(&[0], AgentListing::MasterSlaves);
    let first = client.agents().await.expect("agents").registered[0].machine_id();
    client
        .schedule_maintenance(&[first], an_hour_from_now())
        .await
        .expect("scheduled");
    let call = |kind: &'static str| {
        let url = format!("{}/api/v1", masters.urls[0]);
        async move {
            Masters::raw()
                .post(url)
                .json(&serde_json::json!({ "type": kind }))
                .send()
                .await
                .expect("an answer")
                .json::<Value>()
                .await
                .expect("JSON")
        }
    };

    let ours = call("GET_AGENTS").await;
    let real = fixture("mesos-v1-GET_AGENTS-response-docs-example.json");
    assert_eq!(keys(&ours), keys(&real));
    let (our_agent, real_agent) = (
        &ours["get_agents"]["agents"][0],
        &real["get_agents"]["agents"][0],
    );
    assert!(keys(real_agent).is_subset(&keys(our_agent)));
    assert!(keys(&real_agent["agent_info"]).is_subset(&keys(&our_agent["agent_info"])));
    assert_eq!(
        keys(&real_agent["total_resources"][0]),
        keys(&our_agent["total_resources"][0])
    );
    assert!(our_agent["registered_time"]["nanoseconds"].is_i64());

    let ours = call("GET_MAINTENANCE_SCHEDULE").await;
    let real = fixture("mesos-v1-GET_MAINTENANCE_SCHEDULE-response-docs-example.json");
    assert_eq!(keys(&ours), keys(&real));
    let our_window = &ours["get_maintenance_schedule"]["schedule"]["windows"][0];
    let real_window = &real["get_maintenance_schedule"]["schedule"]["windows"][0];
    assert_eq!(keys(our_window), keys(real_window));
    assert!(our_window["unavailability"]["start"]["nanoseconds"].is_i64());

    let ours = call("GET_MAINTENANCE_STATUS").await;
    let real = fixture("mesos-v1-GET_MAINTENANCE_STATUS-response-docs-example.json");
    assert_eq!(keys(&ours), keys(&real));
    assert_eq!(
        keys(&ours["get_maintenance_status"]["status"]),
        keys(&real["get_maintenance_status"]["status"])
    );
    assert_eq!(
        keys(&ours["get_maintenance_status"]["status"]["draining_machines"][0]),
        keys(&real["get_maintenance_status"]["status"]["draining_machines"][0])
    );
}

#[tokio::test]
async fn the_docs_examples_of_v1_requests_are_accepted() {
    let masters = Masters::start().await;
    let agent = masters.world.with(|w| w.agents())[0].clone();
    let raw = Masters::raw();
    let url = format!("{}/api/v1", masters.urls[0]);
    for (name, field) in [
        (
            "mesos-v1-DRAIN_AGENT-request-docs-example.json",
            "drain_agent",
        ),
        (
            "mesos-v1-DEACTIVATE_AGENT-request-docs-example.json",
            "deactivate_agent",
        ),
    ] {
        let mut request = fixture(name);
        // The docs' agent id, unknown here: a 400 naming it.
        let answer = raw
            .post(&url)
            .json(&request)
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), 400, "{name}");
        assert!(
            answer
                .text()
                .await
                .expect("a body")
                .contains("Unknown agent")
        );
        request[field]["agent_id"]["value"] = Value::from(agent.id.clone());
        let answer = raw
            .post(&url)
            .json(&request)
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), 200, "{name}");
    }
    let agent = masters
        .world
        .with(|w| w.agent(&agent.id))
        .expect("registered");
    assert_eq!(agent.drain_state, Some("DRAINING"));
    assert!(agent.deactivated);

    // START_MAINTENANCE of machines not scheduled: refused as machine/down.
    let start = fixture("mesos-v1-START_MAINTENANCE-request-docs-example.json");
    let answer = raw.post(&url).json(&start).send().await.expect("an answer");
    assert_eq!(answer.status(), 400);
    assert!(
        answer
            .text()
            .await
            .expect("a body")
            .contains("not part of a maintenance schedule")
    );
}

#[tokio::test]
async fn the_machine_down_docs_body_is_parsed_and_an_empty_list_refused() {
    let masters = Masters::start().await;
    let raw = Masters::raw();
    let schedule = fixture("mesos-maintenance-schedule-POST-body-docs-example.json");
    let answer = raw
        .post(format!("{}/master/maintenance/schedule", masters.urls[0]))
        .json(&schedule)
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 200);
    let down = fixture("mesos-machine-down-POST-body-docs-example.json");
    let answer = raw
        .post(format!("{}/master/machine/down", masters.urls[0]))
        .json(&down)
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 200);
    assert_eq!(masters.world.with(|w| w.maintenance_status()).down.len(), 2);

    let answer = raw
        .post(format!("{}/master/machine/up", masters.urls[0]))
        .json(&serde_json::json!([]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 400);
    assert_eq!(
        answer.text().await.expect("a body"),
        "List of machines is empty"
    );
}

#[tokio::test]
async fn the_state_names_the_leader_as_the_adapter_reads_it() {
    let masters = Masters::start().await;
    masters.peers.set_leader(1);
    let state: Value = Masters::raw()
        .get(format!("{}/master/state", masters.urls[1]))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    let leader = masters.authority(1);
    assert_eq!(state["leader"], format!("master@{leader}").as_str());
    let (host, port) = leader.rsplit_once(':').expect("host:port");
    assert_eq!(state["leader_info"]["hostname"], host);
    assert_eq!(
        state["leader_info"]["port"],
        port.parse::<u64>().expect("a port")
    );
    assert_eq!(state["slaves"].as_array().expect("slaves").len(), 12);
    let real = fixture("mesos-0.19-master-state-mesosdns.json");
    for key in [
        "leader",
        "pid",
        "hostname",
        "id",
        "version",
        "slaves",
        "frameworks",
    ] {
        assert!(real.get(key).is_some() && state.get(key).is_some(), "{key}");
    }
}
