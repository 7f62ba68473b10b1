//! The Mesos adapter against the real fixtures (every tests/fixtures/mesos-*
//! file goes through the wire types) and against fake masters on loopback:
//! leader discovery and failover, redirects with credentials, bounded
//! failure, the schedule merge on a live master, request bodies.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;

use crate::http::{HttpAuth, HttpSettings, Secret};
use crate::retry::Backoff;
use crate::roll::decide::agent_contents;
use crate::roll::ports::mesos::{
    AgentId, AttributeValue, DrainOptions, DrainState, Framework, InverseOfferAnswer, MachineId,
    MaintenanceSchedule, MesosMaster, Unavailability,
};

use super::client::{AgentListing, MesosClient, MesosSettings};
use super::fake_master::{FakeMaster, Role, fixture};
use super::wire::{
    ClusterStatus, FrameworksResponse, GetAgentsResponse, MachineIdJson, Schedule, SlavesResponse,
    StateLeader, V1Call,
};

/// Milliseconds between attempts, so failure tests take real time but
/// little of it (HTTP over loopback does not mix with paused time).
const FAST: Backoff = Backoff {
    initial: Duration::from_millis(1),
    max: Duration::from_millis(5),
    attempts: 3,
};

fn settings(masters: &[&str]) -> MesosSettings {
    MesosSettings {
        masters: masters.iter().map(|m| m.to_string()).collect(),
        http: HttpSettings {
            request_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(1),
            ..HttpSettings::default()
        },
        backoff: FAST,
        agent_listing: AgentListing::MasterSlaves,
    }
}

fn client(masters: &[&str]) -> MesosClient {
    MesosClient::new(settings(masters)).expect("a valid client")
}

fn machine(hostname: &str, ip: &str) -> MachineId {
    MachineId {
        hostname: Some(hostname.to_string()),
        ip: Some(ip.to_string()),
    }
}

fn json_fixture(name: &str) -> serde_json::Value {
    serde_json::from_str(&fixture(name)).expect("fixture is JSON")
}

fn secs(t: Option<SystemTime>) -> f64 {
    t.expect("a time")
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs_f64()
}

/// A port nothing listens on: connections are refused at once.
async fn closed_port() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{address}")
}

/// Accepts connections and never answers; counts them.
struct SilentServer {
    address: String,
    accepted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl SilentServer {
    async fn start() -> SilentServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                held.push(socket);
            }
        });
        SilentServer {
            address,
            accepted,
            task,
        }
    }
}

impl Drop for SilentServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// ---- fixtures through the wire types

#[test]
fn the_dcos_state_summary_agents_parse_with_ip_times_resources_and_drain_state() {
    let summary: SlavesResponse =
        serde_json::from_str(&fixture("mesos-master-state-summary-dcosui.json")).unwrap();
    let agents = summary.into_agents();
    assert_eq!(agents.registered.len(), 3);
    assert!(agents.recovered.is_empty());

    let first = &agents.registered[0];
    assert_eq!(
        first.id,
        AgentId("20151002-000353-1695027628-5050-1177-S0".into())
    );
    assert_eq!(first.hostname, "dcos-01");
    assert_eq!(first.ip, Some("172.17.8.101".parse().unwrap()));
    assert!(first.active && !first.deactivated && first.drain.is_none());
    assert!((secs(first.registered_at) - 1_443_995_289.199_71).abs() < 1e-5);
    assert!((secs(first.reregistered_at) - 1_443_995_289.199_81).abs() < 1e-5);
    assert_eq!(first.resources.cpus, 4.0);
    assert_eq!(first.resources.mem, 2933.0);
    assert_eq!(first.used_resources.cpus, 0.1);
    assert_eq!(first.machine_id(), machine("dcos-01", "172.17.8.101"));

    assert!(first.reserved_roles.is_empty() && first.unreserved);

    let draining = &agents.registered[1];
    assert!(draining.deactivated);
    assert_eq!(draining.drain, Some(DrainState::Draining));
    assert_eq!(draining.ip, Some("167.114.218.155".parse().unwrap()));
}

#[test]
fn the_mesos_0_19_state_agents_parse_without_active_or_reregistration() {
    let state = fixture("mesos-0.19-master-state-mesosdns.json");
    let agents = serde_json::from_str::<SlavesResponse>(&state)
        .unwrap()
        .into_agents();
    assert_eq!(agents.registered.len(), 4);
    let first = &agents.registered[0];
    assert_eq!(first.id.0, "20140916-194712-631065744-5050-4798-2");
    assert_eq!(first.ip, Some("1.2.3.10".parse().unwrap()));
    assert!(first.active, "0.19 lists registered agents only");
    assert_eq!(first.reregistered_at, None);
    assert_eq!(
        first.attributes.get("host"),
        Some(&AttributeValue::Text("dev-123-1d.c.mesos.internal".into()))
    );
    assert_eq!(first.resources.mem, 30844.0);

    let leader: StateLeader = serde_json::from_str(&state).unwrap();
    assert_eq!(leader.leader_address().as_deref(), Some("1.2.3.4:5050"));
}

#[test]
fn frameworks_and_their_running_tasks_are_read_per_agent_from_a_real_state() {
    // `/master/frameworks` lists frameworks as `/master/state` does.
    let state = fixture("mesos-0.19-master-state-mesosdns.json");
    let frameworks: Vec<Framework> = serde_json::from_str::<FrameworksResponse>(&state)
        .unwrap()
        .into();
    let names: Vec<&str> = frameworks.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ipv6-framework",
            "chronos with a space AND MIXED CASE-2.0.1",
            "no pid",
            "marathon"
        ]
    );
    let marathon = &frameworks[3];
    // Eight listed, one of them already TASK_KILLED: seven run.
    assert_eq!(marathon.tasks.len(), 7);
    assert!(marathon.tasks.iter().all(|t| t.state == "TASK_RUNNING"));
    let chronos_task = &frameworks[1].tasks[0];
    assert_eq!(
        chronos_task.agent_id,
        "20140803-125133-3041283216-5050-2410-0"
    );
    assert_eq!((chronos_task.cpus, chronos_task.mem), (1.0, 1024.0));
    // Told apart per agent (Marathon lists no task here: its framework is
    // known by its name).
    let agents = agent_contents::by_agent(&frameworks, &HashSet::new(), &BTreeSet::new());
    let busy = &agents["20140803-125133-3041283216-5050-2410-0"];
    assert_eq!(busy.marathon, 5);
    assert_eq!(
        busy.others,
        BTreeMap::from([("chronos with a space AND MIXED CASE-2.0.1".to_string(), 1)])
    );
}

#[test]
fn the_v1_get_agents_example_parses_into_the_same_agent_shape() {
    let response: GetAgentsResponse =
        serde_json::from_str(&fixture("mesos-v1-GET_AGENTS-response-docs-example.json")).unwrap();
    let agents = response.into_agents();
    assert_eq!(agents.registered.len(), 1);
    let agent = &agents.registered[0];
    assert_eq!(agent.id.0, "3669ea49-c3c4-4b13-adee-05b8f9cb2562-S0");
    assert_eq!(agent.hostname, "host");
    assert_eq!(agent.port, Some(34626));
    assert_eq!(agent.ip, Some("127.0.1.1".parse().unwrap()));
    assert!(agent.active);
    assert_eq!(agent.resources.cpus, 2.0);
    assert_eq!(agent.resources.mem, 1024.0);
    assert_eq!(agent.version.as_deref(), Some("1.1.0"));
    assert!((secs(agent.registered_at) - 1_470_820_171.393_027).abs() < 1e-3);
    assert!(agent.reserved_roles.is_empty() && agent.unreserved);
}

/// The DC/OS state-summary's first agent made a public agent, as DC/OS
/// registers one: every resource reserved to `slave_public`, nothing
/// unreserved.
#[test]
fn a_public_agent_offers_slave_public_and_nothing_unreserved_in_v0() {
    let mut summary = json_fixture("mesos-master-state-summary-dcosui.json");
    let agent = &mut summary["slaves"][0];
    let resources = agent["resources"].clone();
    agent["reserved_resources"] = serde_json::json!({ "slave_public": resources });
    agent["unreserved_resources"] = serde_json::json!({"cpus": 0, "mem": 0, "disk": 0});
    agent["attributes"] = serde_json::json!({"public_ip": "true"});
    let agents = serde_json::from_value::<SlavesResponse>(summary)
        .unwrap()
        .into_agents();
    let public = &agents.registered[0];
    assert_eq!(public.reserved_roles, ["slave_public".to_string()].into());
    assert!(!public.unreserved);
    // The others stay private.
    assert!(agents.registered[1].reserved_roles.is_empty() && agents.registered[1].unreserved);

    // Before Mesos 1.0 there is no `unreserved_resources`: what the
    // reservations leave of `resources` decides.
    let mut old = json_fixture("mesos-master-state-summary-dcosui.json");
    let agent = &mut old["slaves"][0];
    let resources = agent["resources"].clone();
    agent["reserved_resources"] = serde_json::json!({ "slave_public": resources });
    agent
        .as_object_mut()
        .unwrap()
        .remove("unreserved_resources");
    let agents = serde_json::from_value::<SlavesResponse>(old)
        .unwrap()
        .into_agents();
    assert!(!agents.registered[0].unreserved);
}

/// A v0 agent's resources are read for their CPU, memory and disk only:
/// other resources (ports as a range string, GPUs) are skipped, and a
/// value that is not a number reads as none rather than failing the
/// whole agent list.
#[test]
fn v0_resources_skip_other_resources_and_values_that_are_not_numbers() {
    let mut summary = json_fixture("mesos-master-state-summary-dcosui.json");
    let agent = &mut summary["slaves"][0];
    agent["resources"] = serde_json::json!({
        "cpus": 4, "mem": 2048.5, "disk": "lots", "ports": "[1025-2180, 2182-3887]",
        "gpus": {"odd": [1, 2]}, "network_bandwidth": null
    });
    agent["used_resources"] = serde_json::json!({"cpus": 0.25, "mem": -1, "disk": [1]});
    agent["reserved_resources"] = serde_json::json!({"slave_public": {"cpus": "2"}});
    let agents = serde_json::from_value::<SlavesResponse>(summary)
        .unwrap()
        .into_agents();
    let first = &agents.registered[0];
    assert_eq!(first.resources.cpus, 4.0);
    assert_eq!(first.resources.mem, 2048.5);
    assert_eq!(first.resources.disk, 0.0);
    assert_eq!(first.used_resources.cpus, 0.25);
    assert_eq!(first.used_resources.mem, -1.0);
    assert_eq!(first.used_resources.disk, 0.0);
    // A reservation whose CPU is no number offers nothing.
    assert!(first.reserved_roles.is_empty());
}

/// The v1 example's agent made public both ways Mesos says a reservation:
/// the deprecated `role`, and reservation refinement (`reservations`, the
/// last one the role).
#[test]
fn a_public_agent_offers_slave_public_and_nothing_unreserved_in_v1() {
    let base = json_fixture("mesos-v1-GET_AGENTS-response-docs-example.json");
    let refined = serde_json::json!([{"type": "STATIC", "role": "slave_public"}]);
    for (how, edit) in [
        ("role", serde_json::json!("slave_public")),
        ("reservations", refined),
    ] {
        let mut response = base.clone();
        let agent = &mut response["get_agents"]["agents"][0];
        // `get_mut`: indexing a missing key would insert a null list.
        let mut edited = 0;
        let mut mark = |list: Option<&mut serde_json::Value>| {
            for r in list.and_then(|l| l.as_array_mut()).into_iter().flatten() {
                r[how] = edit.clone();
                edited += 1;
            }
        };
        mark(agent.get_mut("total_resources"));
        mark(
            agent
                .get_mut("agent_info")
                .and_then(|i| i.get_mut("resources")),
        );
        assert!(edited > 0, "the fixture lists no resources");
        let agents = serde_json::from_value::<GetAgentsResponse>(response)
            .unwrap()
            .into_agents();
        let public = &agents.registered[0];
        assert_eq!(
            public.reserved_roles,
            ["slave_public".to_string()].into(),
            "{how}"
        );
        assert!(!public.unreserved, "{how}");
    }
}

#[test]
fn scalar_attributes_are_numbers_and_everything_else_text() {
    let body = json!({"slaves": [{
        "id": "S1", "hostname": "h", "pid": "slave(1)@[::1]:5051",
        "attributes": {"rack": "r1", "cores": 8, "ports": "[1-2]"}
    }], "recovered_slaves": [{"id": "S9", "hostname": "gone", "port": 5051, "attributes": {}}]});
    let agents = serde_json::from_value::<SlavesResponse>(body)
        .unwrap()
        .into_agents();
    let agent = &agents.registered[0];
    assert_eq!(agent.attributes["cores"], AttributeValue::Scalar(8.0));
    assert_eq!(agent.attributes["rack"], AttributeValue::Text("r1".into()));
    assert_eq!(agent.ip, Some("::1".parse().unwrap()));
    assert_eq!(agents.recovered[0].id.0, "S9");
    assert_eq!(agents.recovered[0].port, Some(5051));
}

#[test]
fn the_documented_schedule_round_trips_exactly() {
    let original = json_fixture("mesos-maintenance-schedule-POST-body-docs-example.json");
    let schedule: MaintenanceSchedule = serde_json::from_value::<Schedule>(original.clone())
        .unwrap()
        .into();
    assert_eq!(schedule.windows.len(), 2);
    assert_eq!(
        schedule.windows[0].machines[1],
        machine("machine2", "10.0.0.2")
    );
    assert_eq!(
        schedule.windows[1].unavailability,
        Unavailability {
            start_nanos: 1_443_834_000_000_000_000,
            duration_nanos: Some(3_600_000_000_000),
        }
    );
    assert_eq!(
        serde_json::to_value(Schedule::from(&schedule)).unwrap(),
        original
    );
}

#[test]
fn the_v1_schedule_keeps_partial_machine_ids_and_an_open_ended_window() {
    let response = json_fixture("mesos-v1-GET_MAINTENANCE_SCHEDULE-response-docs-example.json");
    let inner = response["get_maintenance_schedule"]["schedule"].clone();
    let schedule: MaintenanceSchedule = serde_json::from_value::<Schedule>(inner.clone())
        .unwrap()
        .into();
    let window = &schedule.windows[0];
    assert_eq!(window.machines[0].hostname.as_deref(), Some("myhost"));
    assert_eq!(window.machines[0].ip, None);
    assert_eq!(window.machines[1].ip.as_deref(), Some("0.0.0.2"));
    assert_eq!(window.unavailability.duration_nanos, None);
    assert_eq!(
        serde_json::to_value(Schedule::from(&schedule)).unwrap(),
        inner
    );
}

#[test]
fn the_v1_maintenance_status_lists_its_draining_machines() {
    let response = json_fixture("mesos-v1-GET_MAINTENANCE_STATUS-response-docs-example.json");
    let status: ClusterStatus =
        serde_json::from_value(response["get_maintenance_status"]["status"].clone()).unwrap();
    let status: crate::roll::ports::mesos::MaintenanceStatus = status.into();
    assert_eq!(status.draining.len(), 2);
    assert_eq!(status.draining[0].id.ip.as_deref(), Some("0.0.0.2"));
    assert_eq!(status.draining[1].id.hostname.as_deref(), Some("myhost"));
    assert!(status.down.is_empty());
}

#[test]
fn the_start_maintenance_example_names_machines_in_our_shape() {
    let request = json_fixture("mesos-v1-START_MAINTENANCE-request-docs-example.json");
    let machines: Vec<MachineIdJson> =
        serde_json::from_value(request["start_maintenance"]["machines"].clone()).unwrap();
    assert_eq!(
        MachineId::from(machines[0].clone()),
        machine("myhost", "0.0.0.3")
    );
}

#[test]
fn drain_agent_body_matches_the_documented_request() {
    let ours = V1Call::drain_agent(
        &AgentId("3192b9d1-db71-4699-ae25-e28dfbf42de1".into()),
        Some(Duration::from_secs(600)),
        false,
    );
    assert_eq!(
        serde_json::to_value(ours).unwrap(),
        json_fixture("mesos-v1-DRAIN_AGENT-request-docs-example.json")
    );
}

#[test]
fn a_drain_grace_period_keeps_its_fraction_of_a_second() {
    let ours = V1Call::drain_agent(
        &AgentId("a".into()),
        Some(Duration::from_millis(1500)),
        true,
    );
    assert_eq!(
        serde_json::to_value(ours).unwrap()["drain_agent"],
        json!({"agent_id": {"value": "a"}, "max_grace_period": {"seconds": 1, "nanos": 500_000_000}, "mark_gone": true})
    );
}

#[test]
fn deactivate_agent_body_matches_the_documented_request() {
    let ours = V1Call::deactivate_agent(&AgentId("3192b9d1-db71-4699-ae25-e28dfbf42de1".into()));
    assert_eq!(
        serde_json::to_value(ours).unwrap(),
        json_fixture("mesos-v1-DEACTIVATE_AGENT-request-docs-example.json")
    );
}

#[test]
fn reactivate_agent_body_is_deactivate_agents_with_its_own_type() {
    // Mesos' v1 master.proto: `ReactivateAgent { required AgentID agent_id }`
    // in the field `reactivate_agent`, as DeactivateAgent is.
    let id = AgentId("3192b9d1-db71-4699-ae25-e28dfbf42de1".into());
    let mut expected = json_fixture("mesos-v1-DEACTIVATE_AGENT-request-docs-example.json");
    let body = expected["deactivate_agent"].take();
    let expected = json!({"type": "REACTIVATE_AGENT", "reactivate_agent": body});
    assert_eq!(
        serde_json::to_value(V1Call::reactivate_agent(&id)).unwrap(),
        expected
    );
}

// ---- leader discovery and failover

#[tokio::test]
async fn the_leader_is_found_through_a_followers_redirect() {
    let leader = FakeMaster::start(Role::Leader).await;
    let follower = FakeMaster::start(Role::Follower(leader.address.clone())).await;
    let mesos = client(&[&follower.url]);

    let agents = mesos.agents().await.unwrap();

    assert_eq!(agents.registered.len(), 3);
    assert_eq!(mesos.known_leader(), Some(format!("{}/", leader.url)));
    assert_eq!(leader.requests_to("GET", "/master/slaves").len(), 1);
    let asked: Vec<String> = follower.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(asked, vec!["/master/redirect"]);
}

#[tokio::test]
async fn a_master_without_a_leader_is_passed_over_for_the_next() {
    let leaderless = FakeMaster::start(Role::NoLeader).await;
    let leader = FakeMaster::start(Role::Leader).await;
    let mesos = client(&[&leaderless.url, &leader.url]);

    assert_eq!(mesos.agents().await.unwrap().registered.len(), 3);
    assert_eq!(mesos.known_leader(), Some(format!("{}/", leader.url)));
}

#[tokio::test]
async fn after_a_failover_the_next_call_finds_the_new_leader() {
    let a = FakeMaster::start(Role::Leader).await;
    let b = FakeMaster::start(Role::Follower(a.address.clone())).await;
    let mesos = client(&[&a.url, &b.url]);
    mesos.agents().await.unwrap();

    a.set_role(Role::NoLeader);
    b.set_role(Role::Leader);
    mesos.agents().await.unwrap();

    assert_eq!(mesos.known_leader(), Some(format!("{}/", b.url)));
    assert_eq!(b.requests_to("GET", "/master/slaves").len(), 1);
}

#[tokio::test]
async fn a_307_from_a_former_leader_is_followed_with_the_credentials() {
    let a = FakeMaster::start(Role::Leader).await;
    let b = FakeMaster::start(Role::Follower(a.address.clone())).await;
    for master in [&a, &b] {
        master.state().require_authorization = Some("token=s3cret".to_string());
    }
    let mut with_token = settings(&[&a.url, &b.url]);
    with_token.http.auth = HttpAuth::DcosToken(Secret::new("s3cret"));
    let mesos = MesosClient::new(with_token).unwrap();
    mesos.agents().await.unwrap();

    // `a` steps down without the client noticing: its cached leader now
    // answers 307 to `b`, for a read and for a write alike.
    a.set_role(Role::Follower(b.address.clone()));
    b.set_role(Role::Leader);
    mesos.agents().await.unwrap();
    mesos
        .machines_down(&[machine("machine1", "10.0.0.1")])
        .await
        .unwrap();

    // The calls went to `a`, the cached leader, and were redirected: no
    // rediscovery happened.
    assert_eq!(a.requests_to("GET", "/master/slaves").len(), 2);
    assert_eq!(a.requests_to("GET", "/master/redirect").len(), 1);
    let read = b.requests_to("GET", "/master/slaves");
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].authorization.as_deref(), Some("token=s3cret"));
    let write = b.requests_to("POST", "/master/machine/down");
    assert_eq!(write.len(), 1);
    assert_eq!(write[0].authorization.as_deref(), Some("token=s3cret"));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&write[0].body).unwrap(),
        json!([{"hostname": "machine1", "ip": "10.0.0.1"}])
    );
    assert_eq!(mesos.known_leader(), Some(format!("{}/", b.url)));
}

#[tokio::test]
async fn basic_auth_reaches_the_master_and_a_refusal_is_not_retried() {
    let leader = FakeMaster::start(Role::Leader).await;
    leader.state().require_authorization = Some("Basic b3BzOnB3".to_string());
    let mut basic = settings(&[&leader.url]);
    basic.http.auth = HttpAuth::Basic {
        user: "ops".into(),
        password: Secret::new("pw"),
    };
    MesosClient::new(basic).unwrap().agents().await.unwrap();

    let mut wrong = settings(&[&leader.url]);
    wrong.http.auth = HttpAuth::Basic {
        user: "ops".into(),
        password: Secret::new("nope"),
    };
    let before = leader.requests().len();
    let err = MesosClient::new(wrong).unwrap().agents().await.unwrap_err();
    assert_eq!(err.label(), "unauthorized");
    assert!(!err.to_string().contains("nope"));
    assert_eq!(
        leader.requests().len() - before,
        1,
        "one discovery, no retry"
    );
}

#[tokio::test]
async fn when_every_master_is_down_the_call_fails_fast_naming_each_master() {
    let (one, two) = (closed_port().await, closed_port().await);
    let mesos = client(&[&one, &two]);
    let started = Instant::now();

    let err = mesos.agents().await.unwrap_err();

    assert_eq!(err.label(), "unreachable");
    let message = err.to_string();
    assert!(
        message.contains(&one) && message.contains(&two),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn when_no_master_knows_a_leader_the_error_says_so() {
    let a = FakeMaster::start(Role::NoLeader).await;
    let b = FakeMaster::start(Role::NoLeader).await;
    let mesos = client(&[&a.url, &b.url]);

    let err = mesos.agents().await.unwrap_err();

    assert_eq!(err.label(), "no_leader");
    // Each attempt asked both masters, and no more attempts than allowed.
    let asked = a.requests().len() + b.requests().len();
    assert_eq!(asked, 2 * FAST.attempts as usize);
}

#[tokio::test]
async fn a_master_without_a_redirect_endpoint_is_asked_for_its_state() {
    let leader = FakeMaster::start(Role::Leader).await;
    let old = FakeMaster::start(Role::Leader).await;
    let (host, port) = leader.address.rsplit_once(':').unwrap();
    old.script("/master/redirect", 404, "");
    old.script(
        "/master/state",
        200,
        &json!({"leader_info": {"hostname": host, "port": port.parse::<u16>().unwrap()}})
            .to_string(),
    );
    let mesos = client(&[&old.url]);

    mesos.agents().await.unwrap();

    assert_eq!(mesos.known_leader(), Some(format!("{}/", leader.url)));
}

#[tokio::test]
async fn a_silent_leader_times_out_and_only_a_read_is_sent_again() {
    let silent = SilentServer::start().await;
    let pointer = FakeMaster::start(Role::Follower(silent.address.clone())).await;
    let mut short = settings(&[&pointer.url]);
    short.http.request_timeout = Duration::from_millis(300);
    let mesos = MesosClient::new(short).unwrap();

    let err = mesos.agents().await.unwrap_err();
    assert_eq!(err.label(), "timeout");
    assert!(err.to_string().contains("GET /master/slaves"), "{err}");
    assert_eq!(
        silent.accepted.load(Ordering::SeqCst),
        FAST.attempts as usize
    );

    let err = mesos
        .machines_down(&[machine("m", "10.0.0.1")])
        .await
        .unwrap_err();
    assert_eq!(err.label(), "timeout");
    assert_eq!(
        silent.accepted.load(Ordering::SeqCst),
        FAST.attempts as usize + 1,
        "a write that may have landed is not sent twice"
    );
}

#[tokio::test]
async fn a_write_refused_for_lack_of_a_leader_is_sent_again() {
    let leader = FakeMaster::start(Role::Leader).await;
    let mesos = client(&[&leader.url]);
    leader.script("/master/machine/up", 503, "No leader elected");

    mesos
        .machines_up(&[machine("m", "10.0.0.1")])
        .await
        .unwrap();

    assert_eq!(leader.requests_to("POST", "/master/machine/up").len(), 2);
}

// ---- bad answers

#[tokio::test]
async fn a_malformed_body_is_a_bad_response_not_a_panic() {
    let leader = FakeMaster::start(Role::Leader).await;
    let mesos = client(&[&leader.url]);

    leader.script("/master/slaves", 200, "{\"slaves\": [");
    let err = mesos.agents().await.unwrap_err();
    assert_eq!(err.label(), "bad_response");
    assert!(err.to_string().contains("GET /master/slaves"), "{err}");

    leader.script("/master/slaves", 200, r#"{"slaves": [{"id": 5}]}"#);
    assert_eq!(mesos.agents().await.unwrap_err().label(), "bad_response");

    leader.script(
        "/master/maintenance/schedule",
        200,
        "<html>proxy error</html>",
    );
    assert_eq!(
        mesos.maintenance_schedule().await.unwrap_err().label(),
        "bad_response"
    );
}

#[tokio::test]
async fn a_refused_write_names_the_endpoint_status_and_reason() {
    let leader = FakeMaster::start(Role::Leader).await;
    let mesos = client(&[&leader.url]);
    leader.script(
        "/master/machine/down",
        400,
        "Machine 'hostname: \"m\"' is not in DRAINING mode and cannot be brought down",
    );

    let err = mesos
        .machines_down(&[machine("m", "10.0.0.1")])
        .await
        .unwrap_err();

    assert_eq!(
        (err.label(), &err),
        (
            "http_status",
            &crate::roll::ports::mesos::MesosError::HttpStatus {
                endpoint: "POST /master/machine/down".into(),
                status: 400,
                body:
                    "Machine 'hostname: \"m\"' is not in DRAINING mode and cannot be brought down"
                        .into(),
            }
        )
    );
    assert_eq!(leader.requests_to("POST", "/master/machine/down").len(), 1);
}

// ---- maintenance on a live master

#[tokio::test]
async fn scheduling_keeps_another_operators_windows_and_is_idempotent() {
    let leader = FakeMaster::start(Role::Leader).await;
    let foreign = json_fixture("mesos-maintenance-schedule-POST-body-docs-example.json");
    leader.state().schedule = foreign.clone();
    let mesos = client(&[&leader.url]);
    let ours = [machine("agent-7", "10.1.0.7")];
    let window = Unavailability {
        start_nanos: 1_700_000_000_000_000_000,
        duration_nanos: Some(600_000_000_000),
    };

    let first = mesos.schedule_maintenance(&ours, window).await.unwrap();
    let second = mesos.schedule_maintenance(&ours, window).await.unwrap();

    assert_eq!(first.changed, ours.to_vec());
    assert_eq!(second.unchanged, ours.to_vec());
    let on_master = leader.state().schedule.clone();
    let windows = on_master["windows"].as_array().unwrap();
    assert_eq!(windows.len(), 3);
    assert_eq!(windows[..2], foreign["windows"].as_array().unwrap()[..]);
    assert_eq!(
        windows[2],
        json!({"machine_ids": [{"hostname": "agent-7", "ip": "10.1.0.7"}],
               "unavailability": {"start": {"nanoseconds": 1_700_000_000_000_000_000_i64},
                                  "duration": {"nanoseconds": 600_000_000_000_i64}}})
    );
    assert_eq!(
        leader
            .requests_to("POST", "/master/maintenance/schedule")
            .len(),
        1,
        "the second call had nothing to write"
    );

    let cancelled = mesos.cancel_maintenance(&ours).await.unwrap();
    assert_eq!(cancelled.changed, ours.to_vec());
    assert_eq!(leader.state().schedule, foreign);
}

#[tokio::test]
async fn the_schedule_is_read_from_an_empty_master_as_no_windows() {
    let leader = FakeMaster::start(Role::Leader).await;
    let mesos = client(&[&leader.url]);
    assert_eq!(
        mesos.maintenance_schedule().await.unwrap(),
        MaintenanceSchedule::default()
    );
}

#[tokio::test]
async fn maintenance_status_reports_draining_machines_with_framework_answers() {
    let leader = FakeMaster::start(Role::Leader).await;
    leader.state().status = json!({
        "draining_machines": [{
            "id": {"hostname": "agent-7", "ip": "10.1.0.7"},
            "statuses": [{"status": "ACCEPT", "framework_id": {"value": "marathon"},
                          "timestamp": {"nanoseconds": 1}}]
        }],
        "down_machines": [{"hostname": "agent-8", "ip": "10.1.0.8"}]
    })
    .to_string();
    let mesos = client(&[&leader.url]);

    let status = mesos.maintenance_status().await.unwrap();

    assert_eq!(status.draining[0].id, machine("agent-7", "10.1.0.7"));
    assert_eq!(status.draining[0].responses[0].framework_id, "marathon");
    assert_eq!(
        status.draining[0].responses[0].answer,
        InverseOfferAnswer::Accept
    );
    assert_eq!(status.down, vec![machine("agent-8", "10.1.0.8")]);
}

#[tokio::test]
async fn machines_down_and_up_post_the_documented_body() {
    let leader = FakeMaster::start(Role::Leader).await;
    let mesos = client(&[&leader.url]);
    let machines = [
        machine("machine1", "10.0.0.1"),
        machine("machine2", "10.0.0.2"),
    ];

    mesos.machines_down(&machines).await.unwrap();
    mesos.machines_up(&machines).await.unwrap();
    mesos.machines_up(&[]).await.unwrap();

    let documented = json_fixture("mesos-machine-down-POST-body-docs-example.json");
    for path in ["/master/machine/down", "/master/machine/up"] {
        let sent = leader.requests_to("POST", path);
        assert_eq!(sent.len(), 1, "{path}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&sent[0].body).unwrap(),
            documented
        );
        assert_eq!(sent[0].content_type.as_deref(), Some("application/json"));
    }
}

#[tokio::test]
async fn drain_and_deactivate_post_v1_calls_as_json() {
    let leader = FakeMaster::start(Role::Leader).await;
    let mesos = client(&[&leader.url]);
    let agent = AgentId("3192b9d1-db71-4699-ae25-e28dfbf42de1".into());

    mesos
        .drain_agent(
            &agent,
            DrainOptions {
                max_grace_period: Some(Duration::from_secs(600)),
                mark_gone: false,
            },
        )
        .await
        .unwrap();
    mesos.deactivate_agent(&agent).await.unwrap();

    let sent = leader.requests_to("POST", "/api/v1");
    let bodies: Vec<serde_json::Value> = sent
        .iter()
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect();
    assert_eq!(
        bodies,
        vec![
            json_fixture("mesos-v1-DRAIN_AGENT-request-docs-example.json"),
            json_fixture("mesos-v1-DEACTIVATE_AGENT-request-docs-example.json"),
        ]
    );
    assert!(
        sent.iter()
            .all(|r| r.content_type.as_deref() == Some("application/json"))
    );
}

#[tokio::test]
async fn draining_on_a_master_before_1_9_is_unsupported_and_not_retried() {
    let leader = FakeMaster::start(Role::Leader).await;
    leader.state().v1_calls = ["GET_AGENTS"].into();
    let mesos = client(&[&leader.url]);

    let err = mesos
        .drain_agent(&AgentId("a".into()), DrainOptions::default())
        .await
        .unwrap_err();

    assert_eq!(err.label(), "unsupported");
    assert!(err.to_string().contains("1.9"), "{err}");
    assert_eq!(leader.requests_to("POST", "/api/v1").len(), 1);
}

// ---- agent listing choices

#[tokio::test]
async fn agents_come_from_get_agents_where_master_slaves_is_missing() {
    let leader = FakeMaster::start(Role::Leader).await;
    leader.script("/master/slaves", 404, "");
    let mesos = client(&[&leader.url]);

    let agents = mesos.agents().await.unwrap();

    assert_eq!(agents.registered[0].hostname, "host");
    assert_eq!(leader.requests_to("POST", "/api/v1").len(), 1);
}

#[tokio::test]
async fn the_operator_api_listing_falls_back_to_master_slaves_on_an_old_master() {
    let leader = FakeMaster::start(Role::Leader).await;
    leader.script("/api/v1", 404, "");
    let mut v1 = settings(&[&leader.url]);
    v1.agent_listing = AgentListing::OperatorApi;
    let mesos = MesosClient::new(v1).unwrap();

    let agents = mesos.agents().await.unwrap();

    assert_eq!(agents.registered.len(), 3);
    assert_eq!(agents.registered[0].hostname, "dcos-01");
}

#[tokio::test]
async fn the_operator_api_listing_reads_get_agents() {
    let leader = FakeMaster::start(Role::Leader).await;
    let mut v1 = settings(&[&leader.url]);
    v1.agent_listing = AgentListing::OperatorApi;
    let mesos = MesosClient::new(v1).unwrap();

    let agents = mesos.agents().await.unwrap();

    assert_eq!(
        agents.registered[0].id.0,
        "3669ea49-c3c4-4b13-adee-05b8f9cb2562-S0"
    );
    let sent = leader.requests_to("POST", "/api/v1");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&sent[0].body).unwrap(),
        json!({"type": "GET_AGENTS"})
    );
}

#[test]
fn no_master_url_is_a_config_error() {
    assert_eq!(
        MesosClient::new(settings(&[])).unwrap_err().label(),
        "config"
    );
}
