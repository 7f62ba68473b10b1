//! The v1 API's JSON as dcos-commons writes it (`PlanInfo`, `PhaseInfo`,
//! `StepInfo`; `PodQueries`' status objects; `TaskInfoAndStatus` with
//! Mesos' protobufs in their JSON form), read leniently: a field roller
//! does not use may be absent or new.

use serde::Deserialize;

use crate::roll::ports::services::{
    Pod, PodTask, PodTaskStatus, ServicePhase, ServicePlan, ServiceStep,
};

#[derive(Debug, Deserialize)]
pub(super) struct PlanInfo {
    #[serde(default)]
    phases: Vec<PhaseInfo>,
    #[serde(default)]
    strategy: String,
    #[serde(default)]
    errors: Vec<String>,
    status: String,
}

#[derive(Debug, Deserialize)]
struct PhaseInfo {
    name: String,
    status: String,
    #[serde(default)]
    steps: Vec<StepInfo>,
}

#[derive(Debug, Deserialize)]
struct StepInfo {
    name: String,
    status: String,
    #[serde(default)]
    message: Option<String>,
}

impl From<PlanInfo> for ServicePlan {
    fn from(plan: PlanInfo) -> ServicePlan {
        ServicePlan {
            status: plan.status,
            strategy: plan.strategy,
            errors: plan.errors,
            phases: plan
                .phases
                .into_iter()
                .map(|p| ServicePhase {
                    name: p.name,
                    status: p.status,
                    steps: p
                        .steps
                        .into_iter()
                        .map(|s| ServiceStep {
                            name: s.name,
                            status: s.status,
                            message: s.message.unwrap_or_default(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// `GET /v1/pod/status`.
#[derive(Debug, Deserialize)]
pub(super) struct PodStatuses {
    #[serde(default)]
    pods: Vec<PodType>,
}

#[derive(Debug, Deserialize)]
struct PodType {
    #[serde(default)]
    instances: Vec<PodInstance>,
}

#[derive(Debug, Deserialize)]
struct PodInstance {
    name: String,
    #[serde(default)]
    tasks: Vec<PodInstanceTask>,
}

#[derive(Debug, Deserialize)]
struct PodInstanceTask {
    #[serde(default)]
    id: String,
    name: String,
    #[serde(default)]
    status: Option<String>,
}

impl PodStatuses {
    pub(super) fn into_pods(self) -> Vec<Pod> {
        self.pods
            .into_iter()
            .flat_map(|t| t.instances)
            .map(|i| Pod {
                name: i.name,
                tasks: i
                    .tasks
                    .into_iter()
                    .map(|t| PodTaskStatus {
                        id: t.id,
                        name: t.name,
                        status: t.status,
                    })
                    .collect(),
            })
            .collect()
    }
}

/// One element of `GET /v1/pod/<pod>/info`: Mesos' `TaskInfo` and its
/// latest `TaskStatus` in protobuf JSON (`taskId`, `slaveId`).
#[derive(Debug, Deserialize)]
pub(super) struct TaskInfoAndStatus {
    info: TaskInfo,
    #[serde(default)]
    status: Option<TaskStatus>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskInfo {
    name: String,
    #[serde(default)]
    task_id: Option<Value>,
    #[serde(default)]
    slave_id: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskStatus {
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    slave_id: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Value {
    value: String,
}

impl From<TaskInfoAndStatus> for PodTask {
    fn from(t: TaskInfoAndStatus) -> PodTask {
        let status_agent = t.status.as_ref().and_then(|s| s.slave_id.as_ref());
        PodTask {
            name: t.info.name,
            task_id: t.info.task_id.map(|v| v.value).unwrap_or_default(),
            agent_id: t
                .info
                .slave_id
                .as_ref()
                .or(status_agent)
                .map(|v| v.value.clone())
                .filter(|v| !v.is_empty()),
            state: t.status.and_then(|s| s.state),
        }
    }
}
