//! A scenario's DC/OS SDK data services (`[[services]]`, as dcos-commons'
//! hello-world or Kafka): each a framework registered under the service's
//! name whose pods hold reserved resources on agents of their own (one
//! pod of a type per agent), managed through the service's plans and pod
//! API behind the admin router. Its scheduler is a Marathon app of the
//! scenario carrying DC/OS' labels.

use serde::Deserialize;

#[cfg(test)]
mod tests;

/// The label DC/OS puts on an SDK scheduler's app (its API version).
pub(crate) const SDK_API_LABEL: &str = "DCOS_COMMONS_API_VERSION";
/// The label naming the service an SDK scheduler's app runs.
pub(crate) const SERVICE_NAME_LABEL: &str = "DCOS_SERVICE_NAME";

/// One service (`[[services]]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServiceSpec {
    /// The service's name: its framework's name with Mesos, its path
    /// behind the admin router (`/service/<name>`), the
    /// `DCOS_SERVICE_NAME` label of its scheduler's app.
    pub(crate) name: String,
    /// How long its deploy plan stays IN_PROGRESS (a configuration update
    /// going through its pods one by one, each still running): 0, the
    /// plan is COMPLETE from the start.
    #[serde(default)]
    pub(crate) deploy_s: f64,
    /// The deploy plan's errors (a configuration update its scheduler
    /// refused, e.g. a pod count lowered): the plan reads ERROR, and
    /// `GET /v1/plans/deploy` answers 417.
    #[serde(default)]
    pub(crate) deploy_errors: Vec<String>,
    /// Its pod types, in the order of its deploy plan's phases.
    #[serde(default)]
    pub(crate) pods: Vec<PodSpec>,
}

/// One pod type of a service (`[[services.pods]]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PodSpec {
    /// The pod type (`hello`, `kafka`): its instances are `<type>-<n>`.
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) count: u32,
    /// What one pod reserves on its agent, its tasks together.
    #[serde(default = "one")]
    pub(crate) cpus: f64,
    /// MB.
    #[serde(default = "default_mem")]
    pub(crate) mem: f64,
    /// The pod's tasks; Mesos names each `<pod>-<task>`.
    #[serde(default = "default_tasks")]
    pub(crate) tasks: Vec<String>,
    /// From its tasks' launch (TASK_STARTING) to running and ready (its
    /// readiness check passed): the recovery step is STARTING until then.
    #[serde(default = "default_readiness_s")]
    pub(crate) readiness_s: f64,
}

fn one() -> f64 {
    1.0
}

fn default_mem() -> f64 {
    1024.0
}

fn default_tasks() -> Vec<String> {
    vec!["server".to_string()]
}

fn default_readiness_s() -> f64 {
    30.0
}

/// A name the admin router's path and Mesos' task names can carry:
/// lowercase letters, digits and dashes, starting with a letter.
fn plain_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

impl ServiceSpec {
    /// Why the service cannot be simulated on its own (before the
    /// cluster is looked at), naming the field under `services[i]`.
    fn invalid(&self) -> Option<(String, String)> {
        if !plain_name(&self.name) {
            return Some((
                "name".to_string(),
                format!(
                    "a service name is lowercase letters, digits and dashes, starting with a \
                     letter; got {:?}",
                    self.name
                ),
            ));
        }
        if !self.deploy_s.is_finite() || self.deploy_s < 0.0 {
            return Some((
                "deploy_s".to_string(),
                format!("must be a number at least 0, got {}", self.deploy_s),
            ));
        }
        if self.deploy_errors.iter().any(|e| e.trim().is_empty()) {
            return Some((
                "deploy_errors".to_string(),
                "an error is a message, not an empty string".to_string(),
            ));
        }
        if self.pods.is_empty() {
            return Some((
                "pods".to_string(),
                "a service needs at least one [[services.pods]] table".to_string(),
            ));
        }
        let mut kinds = std::collections::BTreeSet::new();
        for (j, pod) in self.pods.iter().enumerate() {
            let field = |name: &str| format!("pods[{j}].{name}");
            if let Some((name, why)) = pod.invalid() {
                return Some((field(name), why));
            }
            if !kinds.insert(pod.kind.as_str()) {
                return Some((
                    field("type"),
                    format!("pod type {} appears more than once", pod.kind),
                ));
            }
        }
        None
    }
}

impl PodSpec {
    fn invalid(&self) -> Option<(&'static str, String)> {
        if !plain_name(&self.kind) {
            return Some((
                "type",
                format!(
                    "a pod type is lowercase letters, digits and dashes, starting with a \
                     letter; got {:?}",
                    self.kind
                ),
            ));
        }
        if self.count == 0 {
            return Some(("count", "must be at least 1".to_string()));
        }
        for (name, value) in [("cpus", self.cpus), ("mem", self.mem)] {
            if !value.is_finite() || value <= 0.0 {
                return Some((name, format!("must be a number above 0, got {value}")));
            }
        }
        if !self.readiness_s.is_finite() || self.readiness_s < 0.0 {
            return Some((
                "readiness_s",
                format!("must be a number at least 0, got {}", self.readiness_s),
            ));
        }
        if self.tasks.is_empty() {
            return Some(("tasks", "a pod runs at least one task".to_string()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for task in &self.tasks {
            if !plain_name(task) {
                return Some((
                    "tasks",
                    format!(
                        "a task name is lowercase letters, digits and dashes, starting with a \
                         letter; got {task:?}"
                    ),
                ));
            }
            if !seen.insert(task.as_str()) {
                return Some(("tasks", format!("task {task} appears more than once")));
            }
        }
        None
    }
}

impl super::Scenario {
    /// What a service needs of the cluster: a name of its own (not
    /// Marathon's, not a job framework's, once), its scheduler among the
    /// apps (the labels DC/OS gives it), and room for each pod type's
    /// pods on as many distinct unreserved agents (an SDK service
    /// reserves `*` resources; its pods of a type never share an agent).
    pub(super) fn check_services(&self) -> Result<(), (String, String)> {
        let mut names = std::collections::BTreeSet::new();
        for (i, service) in self.services.iter().enumerate() {
            let field = |name: &str| format!("services[{i}].{name}");
            if let Some((name, why)) = service.invalid() {
                return Err((field(&name), why));
            }
            let clash =
                service.name == "marathon" || self.jobs.iter().any(|j| j.framework == service.name);
            if clash {
                return Err((
                    field("name"),
                    format!(
                        "{} is already the name of another framework (Marathon or a [[jobs]] \
                         framework); a service registers under its own",
                        service.name
                    ),
                ));
            }
            if !names.insert(service.name.as_str()) {
                return Err((
                    field("name"),
                    format!("service {} appears more than once", service.name),
                ));
            }
            let scheduler = self.apps.iter().any(|app| {
                app.labels.contains_key(SDK_API_LABEL)
                    && app.labels.get(SERVICE_NAME_LABEL) == Some(&service.name)
            });
            if !scheduler {
                return Err((
                    field("name"),
                    format!(
                        "no app runs the scheduler of service {}: give one [[apps]] the labels \
                         {SERVICE_NAME_LABEL} = {:?} and {SDK_API_LABEL} = \"v1\"",
                        service.name, service.name
                    ),
                ));
            }
            for (j, pod) in service.pods.iter().enumerate() {
                let fitting: u32 = self
                    .groups()
                    .filter(|g| g.role.is_none())
                    .filter(|g| {
                        let a = self.agent_of(g);
                        pod.cpus <= a.cpus && pod.mem <= a.mem
                    })
                    .map(|g| g.desired_capacity)
                    .sum();
                if fitting < pod.count {
                    return Err((
                        field(&format!("pods[{j}].count")),
                        format!(
                            "{} pods of type {} ({} cpus and {} MB each) need as many distinct \
                             unreserved agents with room for one; the groups have {fitting}",
                            pod.count, pod.kind, pod.cpus, pod.mem
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
