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

mod agent_listing;
mod drain_rules;
mod job_frameworks;
mod maintenance_matching;
mod sdk_frameworks;

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
    let body_of = |err: MesosError| match err {
        MesosError::HttpStatus { status, body, .. } => {
            assert_eq!(status, 400);
            body
        }
        other => panic!("expected a 400, got {other:?}"),
    };
    // An agent's machine the master knows (UP): not DRAINING.
    let ours = agents[0].machine_id();
    let err = client
        .machines_down(std::slice::from_ref(&ours))
        .await
        .expect_err("refused");
    assert_eq!(
        body_of(err),
        format!(
            r#"Machine '{{"hostname":"{}","ip":"{}"}}' is not in DRAINING mode and cannot be brought down"#,
            ours.hostname.as_deref().unwrap_or(""),
            ours.ip.as_deref().unwrap_or("")
        )
    );
    // A machine no agent ever ran on: unknown to the master.
    let err = client
        .machines_down(&[machine("elsewhere", "10.9.9.9")])
        .await
        .expect_err("refused");
    assert_eq!(
        body_of(err),
        r#"Machine '{"hostname":"elsewhere","ip":"10.9.9.9"}' is not part of a maintenance schedule"#
    );
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

impl Masters {
    /// GET `path` from master `index`, following no redirect.
    async fn get(&self, index: usize, path: &str) -> reqwest::Response {
        Masters::raw()
            .get(format!("{}{path}", self.urls[index]))
            .send()
            .await
            .expect("an answer")
    }

    /// POST a v1 operator call (`{"type": call}`) to master `index`, as
    /// JSON.
    async fn v1_json(&self, index: usize, call: &str) -> Value {
        Masters::raw()
            .post(format!("{}/api/v1", self.urls[index]))
            .json(&serde_json::json!({ "type": call }))
            .send()
            .await
            .expect("an answer")
            .json()
            .await
            .expect("JSON")
    }

    /// GET `path` from the leader (peer 0 unless changed), as JSON.
    async fn get_json(&self, index: usize, path: &str) -> Value {
        let answer = self.get(index, path).await;
        assert_eq!(answer.status(), 200, "{path}");
        answer.json().await.expect("JSON")
    }

    /// A simulated Marathon on the masters' world, serving `/v2/info`.
    async fn marathon(&self) -> (String, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let peers = std::sync::Arc::new(crate::sim::shared::Peers::new(vec![url.clone()]));
        self.world.set_marathons(peers.clone());
        let app = crate::sim::http::marathon::router(self.world.clone(), peers, 0);
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (url, server)
    }
}

/// The keys of the first element of `value[field]`.
fn first_keys(value: &Value, field: &str) -> BTreeSet<String> {
    keys(&value[field][0])
}

fn missing(expected: &BTreeSet<String>, ours: &BTreeSet<String>) -> Vec<String> {
    expected.difference(ours).cloned().collect()
}

#[tokio::test]
async fn the_state_lists_marathons_framework_under_the_v2_info_framework_id() {
    let masters = Masters::start().await;
    let (marathon, server) = masters.marathon().await;
    let read = |path: &'static str| {
        let url = format!("{marathon}{path}");
        async move {
            Masters::raw()
                .get(url)
                .send()
                .await
                .expect("an answer")
                .json::<Value>()
                .await
                .expect("JSON")
        }
    };
    let info = read("/v2/info").await;
    let apps = read("/v2/apps").await;
    let marathon_tasks = read("/v2/tasks").await;
    server.abort();
    let running: u64 = apps["apps"]
        .as_array()
        .expect("apps")
        .iter()
        .map(|a| a["tasksRunning"].as_u64().expect("tasksRunning"))
        .sum();
    assert!(running > 0);

    let state = masters.get_json(0, "/master/state").await;
    let frameworks = state["frameworks"].as_array().expect("frameworks");
    assert_eq!(frameworks.len(), 1);
    let framework = &frameworks[0];
    assert_eq!(framework["id"], info["frameworkId"]);
    assert_eq!(framework["name"], "marathon");
    assert_eq!(framework["active"], true);
    let tasks = framework["tasks"].as_array().expect("tasks");
    let running_tasks = tasks.iter().filter(|t| t["state"] == "TASK_RUNNING");
    assert_eq!(running_tasks.count() as u64, running);
    assert!(
        tasks
            .iter()
            .all(|t| t["framework_id"] == info["frameworkId"])
    );
    for key in ["completed_frameworks", "unregistered_frameworks"] {
        assert!(state[key].is_array(), "{key}");
    }

    // Field names and types of a real master's state (Mesos 0.19, the
    // fields a framework has had since); `pid` is left out for an HTTP
    // framework and `reregistered_time` unless it re-registered.
    let real = fixture("mesos-0.19-master-state-mesosdns.json");
    let expected: BTreeSet<String> = first_keys(&real, "frameworks")
        .into_iter()
        .filter(|k| k != "pid" && k != "reregistered_time")
        .collect();
    let gaps = missing(&expected, &keys(framework));
    assert!(gaps.is_empty(), "framework misses {gaps:?}");
    for key in ["webui_url", "hostname"] {
        assert!(framework[key].is_string(), "{key}");
    }
    // Marathon registers its own address as the framework's web UI.
    assert_eq!(framework["webui_url"], marathon.as_str());
    // Each task holds the host port Marathon names for it, as a RANGES
    // resource; an agent's used resources list its tasks' ports.
    let port_of: std::collections::HashMap<&str, u64> = marathon_tasks["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t["ports"][0].as_u64().unwrap()))
        .collect();
    for task in tasks {
        let port = port_of[task["id"].as_str().unwrap()];
        assert_eq!(
            task["resources"]["ports"],
            format!("[{port}-{port}]"),
            "{task}"
        );
    }
    let slave_id = tasks[0]["slave_id"].as_str().unwrap();
    let slave = state["slaves"]
        .as_array()
        .expect("slaves")
        .iter()
        .find(|s| s["id"] == slave_id)
        .expect("the task's agent");
    let used = slave["used_resources"]["ports"]
        .as_str()
        .expect("used ports");
    let first = port_of[tasks[0]["id"].as_str().unwrap()];
    assert!(
        used.starts_with('[') && used.contains(&first.to_string()),
        "{used}"
    );
    let real_task = &real["frameworks"][0]["tasks"][0];
    let gaps = missing(&keys(real_task), &keys(&tasks[0]));
    assert!(gaps.is_empty(), "task misses {gaps:?}");
    let status = &tasks[0]["statuses"][0];
    assert_eq!(status["state"], "TASK_RUNNING");
    assert!(status["timestamp"].is_f64());
    for name in ["cpus", "mem", "disk"] {
        assert!(tasks[0]["resources"][name].is_number(), "{name}");
    }
    let agent_ids: BTreeSet<&str> = state["slaves"]
        .as_array()
        .expect("slaves")
        .iter()
        .map(|s| s["id"].as_str().expect("an id"))
        .collect();
    assert!(
        tasks
            .iter()
            .all(|t| agent_ids.contains(t["slave_id"].as_str().expect("slave_id")))
    );
}

#[tokio::test]
async fn the_new_endpoints_answer_the_documented_keys_from_the_leader_and_307_from_a_follower() {
    let masters = Masters::start().await;
    let leader = masters.authority(0);
    for path in [
        "/master/state-summary",
        "/master/frameworks",
        "/master/tasks?limit=5",
        "/master/flags",
    ] {
        let answer = masters.get(2, path).await;
        assert_eq!(answer.status(), 307, "{path}");
        assert_eq!(
            answer.headers()["location"],
            format!("//{leader}{path}").as_str()
        );
    }

    let summary = masters.get_json(0, "/master/state-summary").await;
    let real = fixture("mesos-master-state-summary-dcosui.json");
    assert_eq!(keys(&summary), keys(&real));
    let expected: BTreeSet<String> = first_keys(&real, "slaves")
        .into_iter()
        .filter(|k| k != "reregistered_time")
        .collect();
    let gaps = missing(&expected, &first_keys(&summary, "slaves"));
    assert!(gaps.is_empty(), "summary slave misses {gaps:?}");
    let expected: BTreeSet<String> = first_keys(&real, "frameworks")
        .into_iter()
        .filter(|k| k != "pid")
        .collect();
    let gaps = missing(&expected, &first_keys(&summary, "frameworks"));
    assert!(gaps.is_empty(), "summary framework misses {gaps:?}");
    let running = masters.world.with(|w| {
        w.tasks()
            .iter()
            .filter(|t| t.state == "TASK_RUNNING")
            .count()
    });
    assert_eq!(summary["frameworks"][0]["TASK_RUNNING"], running);
    let per_agent: u64 = summary["slaves"]
        .as_array()
        .expect("slaves")
        .iter()
        .map(|s| s["TASK_RUNNING"].as_u64().expect("a count"))
        .sum();
    assert_eq!(per_agent as usize, running);
    let framework_id = &summary["frameworks"][0]["id"];
    assert!(
        summary["slaves"]
            .as_array()
            .expect("slaves")
            .iter()
            .filter(|s| s["TASK_RUNNING"].as_u64() > Some(0))
            .all(|s| s["framework_ids"][0] == *framework_id)
    );

    let frameworks = masters.get_json(0, "/master/frameworks").await;
    assert_eq!(
        keys(&frameworks),
        BTreeSet::from(
            [
                "completed_frameworks",
                "frameworks",
                "unregistered_frameworks"
            ]
            .map(String::from)
        )
    );
    assert_eq!(frameworks["frameworks"][0]["id"], *framework_id);

    let tasks = masters.get_json(0, "/master/tasks").await;
    assert_eq!(keys(&tasks), BTreeSet::from(["tasks".to_string()]));
    let all = tasks["tasks"].as_array().expect("tasks").len();
    assert_eq!(all, running.min(100));

    let flags = masters.get_json(0, "/master/flags").await;
    assert_eq!(keys(&flags), BTreeSet::from(["flags".to_string()]));
    let flags = &flags["flags"];
    assert_eq!(flags["agent_ping_timeout"], "15secs");
    assert_eq!(flags["max_agent_ping_timeouts"], "5");
    assert_eq!(flags["agent_reregister_timeout"], "10mins");
    assert_eq!(flags["allocation_interval"], "1secs");
    assert!(
        flags
            .as_object()
            .expect("an object")
            .values()
            .all(Value::is_string),
        "Mesos writes every flag as a string"
    );
}

#[tokio::test]
async fn the_tasks_endpoint_sorts_by_first_status_and_pages_with_limit_and_offset() {
    let masters = Masters::start().await;
    // A killed task is replaced seconds later: its first status is the
    // newest.
    let victim = masters.world.with(|w| w.tasks())[0].id.clone();
    masters.world.with(|w| w.kill_tasks(&[victim], false));
    masters.advance(60_000);

    let timestamps = |tasks: &Value| -> Vec<f64> {
        tasks["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .map(|t| t["statuses"][0]["timestamp"].as_f64().unwrap_or(0.0))
            .collect()
    };
    let desc = masters.get_json(0, "/master/tasks").await;
    let asc = masters.get_json(0, "/master/tasks?order=asc").await;
    let (desc_ts, asc_ts) = (timestamps(&desc), timestamps(&asc));
    assert!(desc_ts.windows(2).all(|w| w[0] >= w[1]), "{desc_ts:?}");
    assert!(asc_ts.windows(2).all(|w| w[0] <= w[1]), "{asc_ts:?}");
    assert!(desc_ts[0] > asc_ts[0], "the replacement comes first");

    let page = masters.get_json(0, "/master/tasks?limit=2&offset=1").await;
    let page = page["tasks"].as_array().expect("tasks");
    assert_eq!(page.len(), 2);
    assert_eq!(page[0]["id"], desc["tasks"][1]["id"]);
    assert_eq!(page[1]["id"], desc["tasks"][2]["id"]);
    // Not a number: ignored, as Mesos does.
    let ignored = masters.get_json(0, "/master/tasks?limit=x").await;
    assert_eq!(ignored["tasks"], desc["tasks"]);
}

#[tokio::test]
async fn a_get_of_api_v1_is_405_expecting_post_from_the_leader_and_307_from_a_follower() {
    let masters = Masters::start().await;
    let answer = masters.get(0, "/api/v1").await;
    assert_eq!(answer.status(), 405);
    assert_eq!(answer.headers()["allow"], "POST");
    assert_eq!(
        answer.text().await.expect("a body"),
        "405 Method Not Allowed. Expecting one of { 'POST' }, but received 'GET'."
    );

    let answer = masters.get(1, "/api/v1").await;
    assert_eq!(answer.status(), 307);
    assert_eq!(
        answer.headers()["location"],
        format!("//{}/api/v1", masters.authority(0)).as_str()
    );

    let answer = Masters::raw()
        .delete(format!("{}/master/maintenance/schedule", masters.urls[0]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 405);
    assert_eq!(answer.headers()["allow"], "GET, POST");
}

#[tokio::test]
async fn agents_carry_registered_time_and_after_a_failover_reregistered_time() {
    let masters = Masters::start().await;
    let slaves = masters.get_json(0, "/master/slaves").await;
    let now_s = masters.world.with(|w| w.unix_ms(w.now())) as f64 / 1000.0;
    for agent in slaves["slaves"].as_array().expect("slaves") {
        let registered = agent["registered_time"].as_f64().expect("a float");
        assert!(registered > 1e9 && registered <= now_s, "{registered}");
        assert!(agent.get("reregistered_time").is_none(), "{agent}");
    }
    let before = slaves["slaves"][0]["registered_time"]
        .as_f64()
        .expect("a float");

    masters.advance(30_000);
    masters.peers.set_leader(1);
    let state = masters.get_json(1, "/master/state").await;
    let elected = state["elected_time"].as_f64().expect("a float");
    assert!(elected >= before + 30.0, "{elected} vs {before}");
    let slaves = masters.get_json(1, "/master/slaves").await;
    for listing in [&state, &slaves] {
        for agent in listing["slaves"].as_array().expect("slaves") {
            let reregistered = agent["reregistered_time"].as_f64().expect("a float");
            assert!((reregistered - elected).abs() < 1.0, "{agent}");
            assert!(agent["registered_time"].as_f64().expect("a float") <= reregistered);
        }
    }
    let v1 = masters.v1_json(1, "GET_AGENTS").await;
    assert!(v1["get_agents"]["agents"][0]["reregistered_time"]["nanoseconds"].is_i64());
}

#[test]
fn durations_print_as_stout_prints_them() {
    assert_eq!(super::stout_duration(15_000), "15secs");
    assert_eq!(super::stout_duration(600_000), "10mins");
    assert_eq!(super::stout_duration(1_500), "1.5secs");
    assert_eq!(super::stout_duration(500), "500ms");
    assert_eq!(super::stout_duration(1_209_600_000), "2weeks");
}

// ----- what the real-client check found (tests/real_clients/) -----

#[tokio::test]
async fn the_state_has_every_top_level_key_a_1_9_master_writes() {
    let masters = Masters::start().await;
    let state = masters.get_json(0, "/master/state").await;
    // The fixture's keys (Mesos 0.19) that Mesos 1.9 still writes; the
    // per-state task counters moved to /metrics/snapshot, and git_*,
    // log_dir are written only when set.
    let real = fixture("mesos-0.19-master-state-mesosdns.json");
    let dropped = [
        "failed_tasks",
        "finished_tasks",
        "killed_tasks",
        "lost_tasks",
        "staged_tasks",
        "started_tasks",
        "git_sha",
        "git_tag",
        "log_dir",
    ];
    let expected: BTreeSet<String> = keys(&real)
        .into_iter()
        .filter(|k| !dropped.contains(&k.as_str()))
        .collect();
    let gaps = missing(&expected, &keys(&state));
    assert!(gaps.is_empty(), "state misses {gaps:?}");
    // And what 1.9 added (ReadOnlyHandler::state).
    for key in [
        "capabilities",
        "unreachable_slaves",
        "leader_info",
        "cluster",
        "recovered_slaves",
        "orphan_tasks",
    ] {
        assert!(state.get(key).is_some(), "state lacks {key}");
    }
    assert_eq!(
        state["capabilities"],
        serde_json::json!([{"type": "AGENT_UPDATE"}, {"type": "AGENT_DRAINING"}, {"type": "QUOTA_V2"}])
    );
    // The types of the fixture's.
    for key in ["build_date", "build_user"] {
        assert!(state[key].is_string(), "{key}");
    }
    assert!(state["build_time"].is_number());
    assert_eq!(state["unreachable_slaves"], 0);
    // The flags are those /master/flags gives, every value a string.
    let flags = masters.get_json(0, "/master/flags").await;
    assert_eq!(state["flags"], flags["flags"]);
    assert!(
        state["flags"]
            .as_object()
            .unwrap()
            .values()
            .all(Value::is_string)
    );
    assert_eq!(state["cluster"], state["flags"]["cluster"]);
}

#[tokio::test]
async fn get_agents_lists_each_agents_ports_in_its_agent_info_as_in_its_total() {
    let masters = Masters::start().await;
    let ours = masters.v1_json(0, "GET_AGENTS").await;
    let names = |resources: &Value| -> BTreeSet<String> {
        resources
            .as_array()
            .expect("resources")
            .iter()
            .map(|r| r["name"].as_str().expect("a name").to_string())
            .collect()
    };
    let real =
        &fixture("mesos-v1-GET_AGENTS-response-docs-example.json")["get_agents"]["agents"][0];
    assert_eq!(
        names(&real["agent_info"]["resources"]),
        names(&real["total_resources"])
    );
    for agent in ours["get_agents"]["agents"].as_array().expect("agents") {
        assert_eq!(
            names(&agent["agent_info"]["resources"]),
            names(&real["agent_info"]["resources"])
        );
        assert_eq!(agent["agent_info"]["resources"], agent["total_resources"]);
    }
}

/// A raw GET of a leader's JSON.
async fn get_json(url: String) -> Value {
    Masters::raw()
        .get(url)
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON")
}

#[tokio::test]
async fn public_agents_show_their_resources_reserved_to_slave_public_as_dcos_writes_them() {
    let masters = Masters(PeerServers::start_on("demo-cluster", 1.0, router).await);
    let slaves = get_json(format!("{}/master/slaves", masters.urls[0])).await;
    let slaves = slaves["slaves"].as_array().expect("slaves");
    assert_eq!(slaves.len(), 15);
    let (public, private): (Vec<&Value>, Vec<&Value>) = slaves
        .iter()
        .partition(|s| s["attributes"]["public_ip"] == "true");
    assert_eq!((public.len(), private.len()), (3, 12));
    for agent in &public {
        // Everything under the role, nothing unreserved (DC/OS 1.10's
        // public agent: zeros and no ports).
        assert_eq!(
            keys(&agent["reserved_resources"]),
            BTreeSet::from(["slave_public".to_string()])
        );
        let reserved = &agent["reserved_resources"]["slave_public"];
        assert_eq!(reserved, &agent["resources"]);
        assert_eq!(reserved["cpus"], 4.0);
        assert_eq!(reserved["ports"], "[31000-32000]");
        assert_eq!(agent["unreserved_resources"]["cpus"], 0.0);
        assert_eq!(agent["unreserved_resources"]["mem"], 0.0);
        assert!(agent["unreserved_resources"].get("ports").is_none());
        let full = agent["reserved_resources_full"]["slave_public"]
            .as_array()
            .expect("the role's resources");
        let names: BTreeSet<&str> = full.iter().filter_map(|r| r["name"].as_str()).collect();
        assert_eq!(names, BTreeSet::from(["cpus", "mem", "disk", "ports"]));
        for r in full {
            assert_eq!(r["role"], "slave_public");
            assert_eq!(
                r["reservations"],
                serde_json::json!([{"type": "STATIC", "role": "slave_public"}])
            );
        }
        assert_eq!(agent["unreserved_resources_full"], serde_json::json!([]));
    }
    for agent in &private {
        assert_eq!(agent["reserved_resources"], serde_json::json!({}));
        assert_eq!(agent["reserved_resources_full"], serde_json::json!({}));
        assert_eq!(agent["unreserved_resources"], agent["resources"]);
        let full = agent["unreserved_resources_full"]
            .as_array()
            .expect("resources");
        assert!(
            full.iter()
                .all(|r| r["role"] == "*" && r.get("reservations").is_none())
        );
        assert!(agent["attributes"].get("public_ip").is_none());
    }

    let agents = Masters::raw()
        .post(format!("{}/api/v1", masters.urls[0]))
        .json(&serde_json::json!({"type": "GET_AGENTS"}))
        .send()
        .await
        .expect("an answer")
        .json::<Value>()
        .await
        .expect("JSON");
    let agents = agents["get_agents"]["agents"].as_array().expect("agents");
    let public_ip =
        serde_json::json!({"name": "public_ip", "type": "TEXT", "text": {"value": "true"}});
    let public: Vec<&Value> = agents
        .iter()
        .filter(|a| {
            a["agent_info"]["attributes"]
                .as_array()
                .is_some_and(|attrs| attrs.contains(&public_ip))
        })
        .collect();
    assert_eq!(public.len(), 3);
    for agent in public {
        for resources in [&agent["agent_info"]["resources"], &agent["total_resources"]] {
            let resources = resources.as_array().expect("resources");
            assert_eq!(resources.len(), 4);
            for r in resources {
                assert_eq!(r["role"], "slave_public");
                assert_eq!(r["reservations"][0]["type"], "STATIC");
            }
        }
        // The edge app's task, allocated to Marathon's role.
        assert_eq!(agent["allocated_resources"][0]["role"], "slave_public");
    }

    // Marathon registered with DC/OS's role, and its tasks are allocated
    // to it.
    let frameworks = get_json(format!("{}/master/frameworks", masters.urls[0])).await;
    let marathon = &frameworks["frameworks"][0];
    assert_eq!(marathon["role"], "slave_public");
    assert_eq!(marathon["tasks"][0]["role"], "slave_public");
}

#[tokio::test]
async fn an_unreserved_cluster_writes_no_reservation_and_the_role_star() {
    let masters = Masters::start().await;
    let slaves = get_json(format!("{}/master/slaves", masters.urls[0])).await;
    for agent in slaves["slaves"].as_array().expect("slaves") {
        assert_eq!(agent["reserved_resources"], serde_json::json!({}));
        assert!(agent["attributes"].get("public_ip").is_none());
    }
    let frameworks = get_json(format!("{}/master/frameworks", masters.urls[0])).await;
    assert_eq!(frameworks["frameworks"][0]["role"], "*");
}
