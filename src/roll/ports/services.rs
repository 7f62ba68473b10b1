//! DC/OS SDK data services (Kafka, Cassandra, HDFS, `hello-world`) as
//! the roll sees them: each a scheduler of its own with the v1 plan and
//! pod API of mesosphere/dcos-commons, reached through the DC/OS admin
//! router (`<dcos_url>/service/<name>/v1/…`) or a URL the environment
//! gives. Plain domain types only; the HTTP adapter lives in
//! `crate::dcos`.

use std::future::Future;

/// What the roll asks of the services. Calls name the service by the
/// name it registered with Mesos (`DCOS_SERVICE_NAME`).
pub(crate) trait Services {
    /// Whether roller has a way to reach `service`'s API (a `dcos_url`, or
    /// a `[[service]]` table naming it). Asks nothing.
    fn reachable(&self, service: &str) -> bool;

    /// `GET /v1/plans/<plan>`: the plan's tree, whatever its status
    /// (200 COMPLETE, 202 in progress and 417 with errors all answer one).
    fn plan(
        &self,
        service: &str,
        plan: &str,
    ) -> impl Future<Output = Result<ServicePlan, ServiceError>> + Send;

    /// `GET /v1/pod/status`: every pod instance and its tasks' states.
    fn pods(&self, service: &str) -> impl Future<Output = Result<Vec<Pod>, ServiceError>> + Send;

    /// `GET /v1/pod/<pod>/info`: where each of the pod's tasks runs.
    fn pod_info(
        &self,
        service: &str,
        pod: &str,
    ) -> impl Future<Output = Result<Vec<PodTask>, ServiceError>> + Send;

    /// `POST /v1/pod/<pod>/replace`: the pod's tasks killed, its reserved
    /// resources and volumes given up, the pod relaunched wherever the
    /// service finds room, by its `recovery` plan. Not idempotent: a
    /// second call kills the relaunched pod.
    fn replace_pod(
        &self,
        service: &str,
        pod: &str,
    ) -> impl Future<Output = Result<(), ServiceError>> + Send;
}

/// A plan of a service, as `GET /v1/plans/<plan>` shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ServicePlan {
    /// `COMPLETE`, `IN_PROGRESS`, `WAITING` (interrupted), `ERROR`, …
    pub(crate) status: String,
    pub(crate) strategy: String,
    pub(crate) phases: Vec<ServicePhase>,
    pub(crate) errors: Vec<String>,
}

/// A phase of a service's plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ServicePhase {
    pub(crate) name: String,
    pub(crate) status: String,
    pub(crate) steps: Vec<ServiceStep>,
}

/// A step of a service's plan (`kafka-0:[broker]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ServiceStep {
    pub(crate) name: String,
    pub(crate) status: String,
    pub(crate) message: String,
}

impl ServicePlan {
    pub(crate) fn is_complete(&self) -> bool {
        self.status == "COMPLETE" && self.errors.is_empty()
    }

    /// Errors of its own, or an ERROR anywhere in its tree (the API's 417).
    pub(crate) fn has_errors(&self) -> bool {
        !self.errors.is_empty()
            || self.status == "ERROR"
            || self
                .phases
                .iter()
                .any(|p| p.status == "ERROR" || p.steps.iter().any(|s| s.status == "ERROR"))
    }

    /// An operator (or the service) interrupted it: it waits (`WAITING`).
    pub(crate) fn is_interrupted(&self) -> bool {
        self.status == "WAITING"
    }

    /// The step named after `pod` (`kafka-0:[broker]` for `kafka-0`), in
    /// any phase.
    pub(crate) fn step_of(&self, pod: &str) -> Option<&ServiceStep> {
        let prefix = format!("{pod}:");
        self.phases
            .iter()
            .flat_map(|p| &p.steps)
            .find(|s| s.name.starts_with(&prefix))
    }

    /// Whether a step of the plan relaunches `pod` and is not COMPLETE
    /// (the recovery plan's step for a pod a replace landed on).
    pub(crate) fn recovering(&self, pod: &str) -> bool {
        let prefix = format!("{pod}:");
        self.phases
            .iter()
            .flat_map(|p| &p.steps)
            .any(|s| s.name.starts_with(&prefix) && s.status != "COMPLETE")
    }

    /// The tree as `dcos <service> plan show <plan>` prints it, one line
    /// per element, for a pause's evidence (at most `limit` steps).
    pub(crate) fn tree(&self, name: &str, limit: usize) -> String {
        let mut out = format!("{name} ({}, {})", self.strategy, self.status);
        let mut shown = 0;
        for phase in &self.phases {
            out.push_str(&format!("\n├─ {} ({})", phase.name, phase.status));
            for step in &phase.steps {
                if shown == limit {
                    out.push_str("\n│  └─ …");
                    return out;
                }
                shown += 1;
                let message = if step.message.is_empty() {
                    String::new()
                } else {
                    format!(": {}", step.message)
                };
                out.push_str(&format!("\n│  └─ {} ({}){message}", step.name, step.status));
            }
        }
        for error in &self.errors {
            out.push_str(&format!("\nerror: {error}"));
        }
        out
    }
}

/// A pod instance and its tasks (`GET /v1/pod/status`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pod {
    /// `kafka-0`.
    pub(crate) name: String,
    pub(crate) tasks: Vec<PodTaskStatus>,
}

/// One task of a pod as the status lists it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PodTaskStatus {
    /// The Mesos task id (empty for a task never launched).
    pub(crate) id: String,
    /// `kafka-0-broker`.
    pub(crate) name: String,
    /// The task state without `TASK_` (`RUNNING`), `None` before any.
    pub(crate) status: Option<String>,
}

impl Pod {
    /// Every task of it reported running.
    pub(crate) fn running(&self) -> bool {
        !self.tasks.is_empty()
            && self
                .tasks
                .iter()
                .all(|t| t.status.as_deref() == Some("RUNNING"))
    }
}

/// One task of a pod with where it runs (`GET /v1/pod/<pod>/info`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PodTask {
    pub(crate) name: String,
    pub(crate) task_id: String,
    /// The agent of its latest launch (`info.slaveId`).
    pub(crate) agent_id: Option<String>,
    /// `TASK_RUNNING`, … from its latest status; `None` before any.
    pub(crate) state: Option<String>,
}

/// Why a service could not be asked, or refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ServiceError {
    #[error(
        "roller has no way to reach service {service}'s API: set dcos_url (the DC/OS admin \
         router) or add a [[service]] table with name = \"{service}\" and url = its scheduler"
    )]
    NoRoute { service: String },
    #[error("service {service}'s API cannot be reached: {reason}")]
    Unreachable { service: String, reason: String },
    #[error("service {service} answered {status} to {call}: {body}")]
    Status {
        service: String,
        call: String,
        status: u16,
        body: String,
    },
    #[error("service {service} answered {call} with something roller cannot read: {reason}")]
    Decode {
        service: String,
        call: String,
        reason: String,
    },
}

impl ServiceError {
    /// A passing failure (the scheduler restarting, the admin router's
    /// 502/503, a timeout): the step asks again next tick.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            ServiceError::Unreachable { .. } => true,
            ServiceError::Status { status, .. } => *status >= 500 || *status == 429,
            ServiceError::NoRoute { .. } | ServiceError::Decode { .. } => false,
        }
    }
}

/// No service reachable: the ports of a cluster without DC/OS services,
/// and of tests that have none.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NoServices;

impl Services for NoServices {
    fn reachable(&self, _service: &str) -> bool {
        false
    }

    async fn plan(&self, service: &str, _plan: &str) -> Result<ServicePlan, ServiceError> {
        Err(no_route(service))
    }

    async fn pods(&self, service: &str) -> Result<Vec<Pod>, ServiceError> {
        Err(no_route(service))
    }

    async fn pod_info(&self, service: &str, _pod: &str) -> Result<Vec<PodTask>, ServiceError> {
        Err(no_route(service))
    }

    async fn replace_pod(&self, service: &str, _pod: &str) -> Result<(), ServiceError> {
        Err(no_route(service))
    }
}

fn no_route(service: &str) -> ServiceError {
    ServiceError::NoRoute {
        service: service.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(status: &str, steps: &[(&str, &str)]) -> ServicePlan {
        ServicePlan {
            status: status.to_string(),
            strategy: "parallel".to_string(),
            phases: steps
                .iter()
                .map(|(name, status)| ServicePhase {
                    name: name.to_string(),
                    status: status.to_string(),
                    steps: vec![ServiceStep {
                        name: name.to_string(),
                        status: status.to_string(),
                        message: String::new(),
                    }],
                })
                .collect(),
            errors: Vec::new(),
        }
    }

    #[test]
    fn a_plan_reads_complete_errors_and_interrupted_from_its_tree() {
        assert!(plan("COMPLETE", &[("kafka-0:[broker]", "COMPLETE")]).is_complete());
        let failing = plan("IN_PROGRESS", &[("kafka-0:[broker]", "ERROR")]);
        assert!(failing.has_errors() && !failing.is_complete());
        assert!(plan("WAITING", &[]).is_interrupted());
        let mut with_errors = plan("COMPLETE", &[]);
        with_errors.errors.push("bad config".to_string());
        assert!(!with_errors.is_complete() && with_errors.has_errors());
    }

    #[test]
    fn the_step_of_a_pod_is_found_by_its_name_not_a_longer_ones() {
        let p = plan(
            "IN_PROGRESS",
            &[
                ("kafka-10:[broker]", "COMPLETE"),
                ("kafka-1:[broker]", "STARTING"),
            ],
        );
        assert_eq!(p.step_of("kafka-1").unwrap().status, "STARTING");
        assert!(p.step_of("kafka-2").is_none());
    }

    #[test]
    fn a_pod_is_recovering_while_any_step_of_it_is_not_complete() {
        let p = plan(
            "IN_PROGRESS",
            &[
                ("kafka-1:[broker]", "COMPLETE"),
                ("kafka-10:[broker]", "PENDING"),
                ("kafka-1:[broker]", "PREPARED"),
            ],
        );
        assert!(p.recovering("kafka-1"));
        assert!(p.recovering("kafka-10"));
        let done = plan("COMPLETE", &[("kafka-1:[broker]", "COMPLETE")]);
        assert!(!done.recovering("kafka-1") && !done.recovering("kafka-2"));
    }

    #[test]
    fn the_tree_shows_each_phase_and_step_and_stops_at_its_limit() {
        let p = plan(
            "IN_PROGRESS",
            &[("a-0:[x]", "COMPLETE"), ("a-1:[x]", "STARTING")],
        );
        let tree = p.tree("recovery", 10);
        assert!(
            tree.starts_with("recovery (parallel, IN_PROGRESS)"),
            "{tree}"
        );
        assert!(tree.contains("└─ a-1:[x] (STARTING)"), "{tree}");
        assert!(p.tree("recovery", 1).ends_with("└─ …"));
    }

    #[test]
    fn a_pod_runs_when_every_task_of_it_does() {
        let task = |status: Option<&str>| PodTaskStatus {
            id: "t".to_string(),
            name: "kafka-0-broker".to_string(),
            status: status.map(str::to_string),
        };
        let pod = |tasks| Pod {
            name: "kafka-0".to_string(),
            tasks,
        };
        assert!(pod(vec![task(Some("RUNNING"))]).running());
        assert!(!pod(vec![task(Some("RUNNING")), task(None)]).running());
        assert!(!pod(vec![]).running());
    }
}
