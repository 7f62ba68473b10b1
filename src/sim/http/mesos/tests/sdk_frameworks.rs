//! A DC/OS SDK service as the master lists it: a framework named after
//! the service, registered with the service's role, its pods' tasks
//! (`<pod>-<task>`) as its tasks on their agents, a replaced pod's old
//! task among its completed ones, and the roller's real adapter reading
//! them.

use serde_json::Value;

use super::{Masters, get_json};
use crate::mesos::AgentListing;
use crate::roll::ports::mesos::MesosMaster;
use crate::sim::Scenario;
use crate::sim::http::peer_servers::{PeerServers, keys};
use crate::sim::world::PodView;

/// Three agents, the scheduler of `hello-world` and its two pods.
const HELLO: &str = r#"
    [group]
    name = "agents"
    min_size = 3
    max_size = 6
    desired_capacity = 3

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

    [[services.pods]]
    type = "hello"
    count = 2
    cpus = 1
    mem = 1024
    tasks = ["server", "sidecar"]
    readiness_s = 10
"#;

async fn masters() -> (Masters, Vec<PodView>) {
    let scenario = Scenario::from_toml(HELLO, "hello").expect("valid");
    let masters = Masters(PeerServers::start_with(&scenario, 1.0, super::super::router).await);
    let pods = masters.world.with(|w| w.pods());
    (masters, pods)
}

fn find<'a>(list: &'a Value, field: &str, value: &str) -> &'a Value {
    list.as_array()
        .expect("a list")
        .iter()
        .find(|v| v[field] == value)
        .unwrap_or_else(|| panic!("no {field} {value} in {list}"))
}

#[tokio::test]
async fn frameworks_and_state_list_the_service_as_a_framework_with_its_pods_tasks() {
    let (masters, pods) = masters().await;
    for path in ["/master/frameworks", "/master/state"] {
        let body = get_json(format!("{}{path}", masters.urls[0])).await;
        let frameworks = &body["frameworks"];
        let marathon = find(frameworks, "name", "marathon");
        let service = find(frameworks, "name", "hello-world");
        assert_eq!(keys(service), keys(marathon), "{path}: one shape");
        assert_ne!(service["id"], marathon["id"]);
        assert_eq!(service["role"], "hello-world-role");
        assert_eq!(service["used_resources"]["cpus"], 2.0);
        assert_eq!(service["used_resources"]["mem"], 2048.0);
        let tasks = service["tasks"].as_array().expect("tasks");
        assert_eq!(tasks.len(), 4, "{path}: two tasks of two pods");
        for pod in &pods {
            for (i, task_name) in ["server", "sidecar"].iter().enumerate() {
                let task = find(&service["tasks"], "id", &pod.task_ids[i]);
                assert_eq!(task["name"], format!("{}-{task_name}", pod.pod));
                assert_eq!(task["framework_id"], service["id"]);
                assert_eq!(task["slave_id"], pod.agent_id.as_deref().unwrap_or("?"));
                assert_eq!(task["state"], "TASK_RUNNING");
                assert_eq!(task["role"], "hello-world-role");
                assert_eq!(task["resources"]["cpus"], 0.5, "the pod's share");
            }
        }
    }
}

#[tokio::test]
async fn a_replaced_pods_old_task_is_completed_and_its_new_one_staged_then_running() {
    let (masters, pods) = masters().await;
    masters
        .world
        .with(|w| w.replace_pod("hello-world", "hello-0").expect("a pod"));
    masters.advance(5_000 + 1_000);
    let url = format!("{}/master/frameworks", masters.urls[0]);
    let body = get_json(url.clone()).await;
    let service = find(&body["frameworks"], "name", "hello-world");
    let old = find(&service["completed_tasks"], "id", &pods[0].task_ids[0]);
    assert_eq!(old["state"], "TASK_KILLED");
    let new_id = masters.world.with(|w| w.pods())[0].task_ids[0].clone();
    let staged = find(&service["tasks"], "id", &new_id);
    assert_eq!(staged["state"], "TASK_STAGING");
    assert_eq!(staged["statuses"], serde_json::json!([]));

    masters.advance(2_000);
    let body = get_json(url.clone()).await;
    let service = find(&body["frameworks"], "name", "hello-world");
    let starting = find(&service["tasks"], "id", &new_id);
    assert_eq!(starting["state"], "TASK_STARTING");
    assert_eq!(starting["statuses"][0]["state"], "TASK_STARTING");

    masters.advance(10_000);
    let summary = get_json(format!("{}/master/state-summary", masters.urls[0])).await;
    let service = find(&summary["frameworks"], "name", "hello-world");
    assert_eq!(service["TASK_RUNNING"], 4);
    assert_eq!(service["TASK_KILLED"], 2);
}

#[tokio::test]
async fn the_adapter_reads_the_services_tasks_on_their_agents() {
    let (masters, pods) = masters().await;
    let client = masters.client(&[1, 0], AgentListing::MasterSlaves);
    let frameworks = client.frameworks().await.expect("frameworks");
    let service = frameworks
        .iter()
        .find(|f| f.name == "hello-world")
        .expect("the service's framework");
    for pod in &pods {
        let task = service
            .tasks
            .iter()
            .find(|t| t.id == pod.task_ids[0])
            .expect("the pod's task");
        assert_eq!(Some(&task.agent_id), pod.agent_id.as_ref());
    }
}
