//! The JSON a DC/OS SDK scheduler writes (dcos-commons' `http/types`
//! and `PodQueries`' hand-built objects), built from the world's views.

use serde::Serialize;

use crate::sim::world::{
    PhaseView, PlanView, PodInfoView, PodInstanceStatus, PodTypeStatus, StepView,
};

/// `PlanInfo`.
#[derive(Debug, Serialize)]
pub(super) struct PlanInfo {
    phases: Vec<PhaseInfo>,
    errors: Vec<String>,
    strategy: &'static str,
    status: &'static str,
}

/// `PhaseInfo`.
#[derive(Debug, Serialize)]
struct PhaseInfo {
    id: String,
    name: String,
    steps: Vec<StepInfo>,
    strategy: &'static str,
    status: &'static str,
}

/// `StepInfo`.
#[derive(Debug, Serialize)]
struct StepInfo {
    id: String,
    status: &'static str,
    name: String,
    message: String,
}

impl PlanInfo {
    pub(super) fn from_view(plan: PlanView) -> PlanInfo {
        PlanInfo {
            phases: plan.phases.into_iter().map(PhaseInfo::from_view).collect(),
            errors: plan.errors,
            strategy: plan.strategy,
            status: plan.status,
        }
    }
}

impl PhaseInfo {
    fn from_view(phase: PhaseView) -> PhaseInfo {
        PhaseInfo {
            id: phase.id,
            name: phase.name,
            steps: phase.steps.into_iter().map(StepInfo::from_view).collect(),
            strategy: phase.strategy,
            status: phase.status,
        }
    }
}

impl StepInfo {
    fn from_view(step: StepView) -> StepInfo {
        StepInfo {
            id: step.id,
            status: step.status,
            name: step.name,
            message: step.message,
        }
    }
}

/// `{"message": "Received cmd: interrupt"}`.
#[derive(Debug, Serialize)]
pub(super) struct CommandResult {
    pub(super) message: String,
}

/// `GET /v1/pod/status`.
#[derive(Debug, Serialize)]
pub(super) struct ServicePods {
    pub(super) service: String,
    pub(super) pods: Vec<PodType>,
}

#[derive(Debug, Serialize)]
pub(super) struct PodType {
    name: String,
    instances: Vec<PodInstance>,
}

impl PodType {
    pub(super) fn from_view(pod_type: PodTypeStatus) -> PodType {
        PodType {
            name: pod_type.name,
            instances: pod_type
                .instances
                .into_iter()
                .map(PodInstance::from_view)
                .collect(),
        }
    }
}

/// One pod instance with its tasks' statuses.
#[derive(Debug, Serialize)]
pub(super) struct PodInstance {
    name: String,
    tasks: Vec<PodTask>,
}

#[derive(Debug, Serialize)]
struct PodTask {
    id: String,
    name: String,
    /// The Mesos state without `TASK_`; absent before its first status.
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
}

impl PodInstance {
    pub(super) fn from_view(pod: PodInstanceStatus) -> PodInstance {
        PodInstance {
            name: pod.name,
            tasks: pod
                .tasks
                .into_iter()
                .map(|t| PodTask {
                    id: t.id,
                    name: t.name,
                    status: t
                        .state
                        .map(|s| s.strip_prefix("TASK_").unwrap_or(s).to_string()),
                })
                .collect(),
        }
    }
}

/// `POST /v1/pod/<pod>/replace`.
#[derive(Debug, Serialize)]
pub(super) struct PodCommandResult {
    pub(super) pod: String,
    pub(super) tasks: Vec<String>,
}

/// A protobuf `Value`-wrapped id (`{"value": "..."}`).
#[derive(Debug, Serialize)]
struct Id {
    value: String,
}

#[derive(Debug, Serialize)]
struct Scalar {
    value: f64,
}

/// A reserved scalar resource of a TaskInfo.
#[derive(Debug, Serialize)]
struct Resource {
    name: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    scalar: Scalar,
    role: String,
}

#[derive(Debug, Serialize)]
struct Label {
    key: &'static str,
    value: String,
}

#[derive(Debug, Serialize)]
struct Labels {
    labels: Vec<Label>,
}

/// What of a `TaskInfo` the simulator writes.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskInfo {
    name: String,
    task_id: Id,
    slave_id: Id,
    resources: Vec<Resource>,
    labels: Labels,
}

/// What of a `TaskStatus` the simulator writes.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TaskStatus {
    task_id: Id,
    state: &'static str,
    slave_id: Id,
    /// Seconds since the epoch, as protobuf's `double`.
    timestamp: f64,
    source: &'static str,
}

/// `TaskInfoAndStatus`: `status` null for a task with none yet.
#[derive(Debug, Serialize)]
pub(super) struct TaskInfoAndStatus {
    info: TaskInfo,
    status: Option<TaskStatus>,
}

impl TaskInfoAndStatus {
    pub(super) fn from_view(t: PodInfoView) -> TaskInfoAndStatus {
        let resource = |name, value| Resource {
            name,
            kind: "SCALAR",
            scalar: Scalar { value },
            role: t.role.clone(),
        };
        let status = t.state.map(|state| TaskStatus {
            task_id: Id {
                value: t.task_id.clone(),
            },
            state,
            slave_id: Id {
                value: t.agent_id.clone(),
            },
            timestamp: t.status_unix_ms.unwrap_or(0) as f64 / 1000.0,
            source: "SOURCE_EXECUTOR",
        });
        TaskInfoAndStatus {
            info: TaskInfo {
                resources: vec![resource("cpus", t.cpus), resource("mem", t.mem)],
                labels: Labels {
                    labels: vec![
                        Label {
                            key: "task_type",
                            value: t.pod_type.clone(),
                        },
                        Label {
                            key: "index",
                            value: t.index.to_string(),
                        },
                    ],
                },
                name: t.name,
                task_id: Id { value: t.task_id },
                slave_id: Id { value: t.agent_id },
            },
            status,
        }
    }
}
