//! The Marathon fuzz target's body (see `crate::fuzz_targets`): one answer
//! of Marathon, read as every response the adapter reads (apps with their
//! embedded tasks, one app, deployments, the leader, a scale's and a
//! kill's answer, a 409's deployments, an error's message), with the very
//! functions `client.rs` reads them with.

use super::client::{message, parse};
use super::wire::{self, fixture_only};
use crate::roll::ports::marathon::{KillOutcome, Task};

pub(crate) fn responses(body: &[u8]) {
    let _ = wire::parse_apps(body);
    let _ = wire::parse_app(body);
    let _ = wire::parse_deployments(body);
    let _ = parse::<wire::Leader>("GET /v2/leader", body);
    let _ = parse::<wire::DeploymentResult>("PUT /v2/apps", body);
    if let Ok(kill) = parse::<wire::KillResult>("POST /v2/tasks/delete", body) {
        let _ = KillOutcome::from(kill);
    }
    let _: wire::Locked = serde_json::from_slice(body).unwrap_or_default();
    let _ = message(body);
    // The task shape of `GET /v2/tasks`, which the adapter reads embedded
    // in its apps; `/v2/info` only proves the fixtures' shape.
    if let Ok(list) = serde_json::from_slice::<fixture_only::TaskList>(body) {
        let _: Vec<Task> = list.tasks.into_iter().map(Task::from).collect();
    }
    if let Ok(info) = serde_json::from_slice::<fixture_only::Info>(body) {
        let _ = (info.version, info.elected, info.leader);
    }
}
