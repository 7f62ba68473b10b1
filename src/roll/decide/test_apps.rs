//! Marathon apps and tasks for the roll's pure tests (`safety`,
//! `drain_plan`): a task is running on an agent, healthy or failing its
//! one health check.

use crate::roll::ports::marathon::{App, HealthResult, Task};

pub(crate) fn task(id: &str, agent: &str, healthy: bool) -> Task {
    Task {
        id: id.to_string(),
        agent_id: Some(agent.to_string()),
        host: Some(agent.to_string()),
        state: Some("TASK_RUNNING".to_string()),
        started: true,
        started_at: None,
        health_results: vec![HealthResult {
            alive: healthy,
            consecutive_failures: u32::from(!healthy),
            ..HealthResult::default()
        }],
    }
}

/// An app with one health check that wants `instances` tasks.
pub(crate) fn app(id: &str, instances: u32, tasks: Vec<Task>) -> App {
    App {
        id: id.to_string(),
        instances,
        health_checks: 1,
        health_check_interval: Some(std::time::Duration::from_secs(10)),
        tasks,
        ..App::default()
    }
}
