//! A job framework beside Marathon's, as the master lists it: the
//! framework and its runs' tasks (with `framework_id` and `slave_id`) in
//! `/master/frameworks`, `/master/state`, `/master/state-summary` and
//! `/master/tasks`, their resources in `/master/slaves`, and the roller's
//! real adapter reading them.

use serde_json::Value;

use super::{Masters, get_json};
use crate::mesos::AgentListing;
use crate::roll::ports::mesos::MesosMaster;
use crate::sim::Scenario;
use crate::sim::http::peer_servers::{PeerServers, keys};
use crate::sim::world::JobRunView;

/// Two agents, one Marathon app, and two jobs started at once: a long
/// backup (30 s grace) and a one-minute report.
const JOBS: &str = r#"
    [group]
    name = "agents"
    min_size = 2
    max_size = 4
    desired_capacity = 2

    [agent]
    cpus = 4
    mem = 8192

    [[apps]]
    id = "/web"
    instances = 1

    [[jobs]]
    id = "nightly-backup"
    cpus = 1
    mem = 2048
    duration_s = 7200
    grace_s = 30

    [[jobs]]
    id = "report"
    cpus = 0.5
    mem = 512
    duration_s = 60
"#;

/// The masters over the `JOBS` world two minutes in: the backup runs,
/// the report has finished.
async fn masters() -> (Masters, JobRunView, JobRunView) {
    let scenario = Scenario::from_toml(JOBS, "jobs").expect("valid");
    let masters = Masters(PeerServers::start_with(&scenario, 1.0, super::super::router).await);
    masters.advance(120_000);
    let runs = masters.world.with(|w| w.job_runs());
    let (backup, report) = (runs[0].clone(), runs[1].clone());
    assert_eq!(
        (backup.state, report.state),
        (Some("TASK_RUNNING"), Some("TASK_FINISHED"))
    );
    (masters, backup, report)
}

/// The object of `list` whose `field` is `value`.
fn find<'a>(list: &'a Value, field: &str, value: &str) -> &'a Value {
    list.as_array()
        .expect("a list")
        .iter()
        .find(|v| v[field] == value)
        .unwrap_or_else(|| panic!("no {field} {value} in {list}"))
}

#[tokio::test]
async fn frameworks_and_state_list_the_job_framework_with_its_runs_as_tasks() {
    let (masters, backup, report) = masters().await;
    let agent = backup.agent_id.clone().expect("placed");
    for path in ["/master/frameworks", "/master/state"] {
        let body = get_json(format!("{}{path}", masters.urls[0])).await;
        let frameworks = &body["frameworks"];
        assert_eq!(frameworks.as_array().map(Vec::len), Some(2), "{path}");
        let marathon = find(frameworks, "name", "marathon");
        let metronome = find(frameworks, "name", "metronome");
        assert_eq!(keys(metronome), keys(marathon), "{path}: one shape");
        assert_eq!(metronome["id"], backup.framework_id.as_str());
        assert_ne!(metronome["id"], marathon["id"]);
        assert_eq!(metronome["active"], true);
        assert_eq!(metronome["role"], "*");
        assert_eq!(metronome["used_resources"]["cpus"], 1.0);
        assert_eq!(metronome["used_resources"]["mem"], 2048.0);

        let tasks = metronome["tasks"].as_array().expect("tasks");
        assert_eq!(tasks.len(), 1, "{path}: the running backup");
        let task = &tasks[0];
        assert_eq!(keys(task), keys(&marathon["tasks"][0]), "{path}");
        assert_eq!(task["id"], backup.task_id.as_str());
        assert_eq!(task["name"], "nightly-backup");
        assert_eq!(task["framework_id"], backup.framework_id.as_str());
        assert_eq!(task["slave_id"], agent.as_str());
        assert_eq!(task["state"], "TASK_RUNNING");
        assert_eq!(task["resources"]["cpus"], 1.0);
        assert_eq!(task["resources"]["mem"], 2048.0);
        assert_eq!(task["statuses"][0]["state"], "TASK_RUNNING");

        let done = find(&metronome["completed_tasks"], "id", &report.task_id);
        assert_eq!(done["state"], "TASK_FINISHED");
        assert_eq!(done["slave_id"], report.agent_id.as_deref().unwrap_or("?"));
        let states: Vec<&Value> = done["statuses"]
            .as_array()
            .expect("statuses")
            .iter()
            .map(|s| &s["state"])
            .collect();
        assert_eq!(states, ["TASK_RUNNING", "TASK_FINISHED"], "{path}");
        // Marathon's framework is unchanged: its one task, none of the runs.
        let marathon_tasks = marathon["tasks"].as_array().expect("tasks");
        assert_eq!(marathon_tasks.len(), 1, "{path}");
        assert_eq!(marathon_tasks[0]["framework_id"], marathon["id"]);
    }
}

#[tokio::test]
async fn state_summary_tasks_and_slaves_count_the_runs_on_their_agents() {
    let (masters, backup, report) = masters().await;
    let agent = backup.agent_id.clone().expect("placed");
    let url = |path: &str| format!("{}{path}", masters.urls[0]);

    let summary = get_json(url("/master/state-summary")).await;
    let metronome = find(&summary["frameworks"], "name", "metronome");
    assert_eq!(metronome["id"], backup.framework_id.as_str());
    assert_eq!(metronome["TASK_RUNNING"], 1);
    assert_eq!(metronome["TASK_FINISHED"], 1);
    let slave_ids = metronome["slave_ids"].as_array().expect("slave ids");
    assert!(
        slave_ids.iter().any(|id| id == agent.as_str()),
        "{slave_ids:?}"
    );
    let slave = find(&summary["slaves"], "id", &agent);
    let on_agent = slave["framework_ids"].as_array().expect("framework ids");
    assert!(
        on_agent.iter().any(|id| id == backup.framework_id.as_str()),
        "{on_agent:?}"
    );
    assert!(slave["TASK_RUNNING"].as_u64() >= Some(1), "{slave}");

    let tasks = get_json(url("/master/tasks")).await;
    let listed = find(&tasks["tasks"], "id", &backup.task_id);
    assert_eq!(listed["framework_id"], backup.framework_id.as_str());
    assert_eq!(listed["slave_id"], agent.as_str());
    assert_eq!(listed["state"], "TASK_RUNNING");
    let finished = find(&tasks["tasks"], "id", &report.task_id);
    assert_eq!(finished["state"], "TASK_FINISHED");

    // The agent's used resources hold the backup's beside Marathon's
    // (the /web app's tasks: Marathon's default 1 cpu and 128 MB each).
    let marathon_here = masters
        .world
        .with(|w| w.tasks().iter().filter(|t| t.slave_id == agent).count())
        as f64;
    let slaves = get_json(url("/master/slaves")).await;
    let used = &find(&slaves["slaves"], "id", &agent)["used_resources"];
    assert_eq!(used["cpus"], 1.0 + marathon_here);
    assert_eq!(used["mem"], 2048.0 + 128.0 * marathon_here);
}

#[tokio::test]
async fn the_adapter_reads_the_job_frameworks_task_on_its_agent() {
    let (masters, backup, _) = masters().await;
    let client = masters.client(&[1, 0], AgentListing::MasterSlaves);
    let frameworks = client.frameworks().await.expect("frameworks");
    let metronome = frameworks
        .iter()
        .find(|f| f.name == "metronome")
        .expect("the job framework");
    assert_eq!(metronome.id, backup.framework_id);
    assert!(metronome.active);
    let task = metronome
        .tasks
        .iter()
        .find(|t| t.id == backup.task_id)
        .expect("the backup's task");
    assert_eq!(Some(&task.agent_id), backup.agent_id.as_ref());
}
