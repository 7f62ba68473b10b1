//! A service's plans and pods as its scheduler's API shows them, the
//! calls the admin router facade makes:
//! - the deploy plan: a phase per pod type (named after it), a step per
//!   pod (`hello-0:[server]`), both serial; with `deploy_s`, its steps
//!   complete one by one over that time (pods keep running: a
//!   configuration update going through them);
//! - the recovery plan (parallel): a phase of one step per pod being
//!   recovered, named like its step; completed ones stay until the next
//!   recovery;
//! - statuses aggregated as dcos-commons' `PlanUtils.getAggregateStatus`
//!   does; an interrupted plan reads WAITING;
//! - interrupt and continue answer "already reported" (208) as
//!   `PlansQueries` does: interrupt of an interrupted or complete plan,
//!   continue of a running or complete one;
//! - pods listed by name, their tasks' statuses, a pod's TaskInfos, and
//!   `pod replace`.

use std::collections::BTreeSet;

use super::super::World;

/// The plans every SDK service has.
const PLANS: [&str; 2] = ["deploy", "recovery"];

/// Why a call on a service was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ServiceError {
    #[error("Service {0} not found")]
    UnknownService(String),
    #[error("Plan {0} not found")]
    PlanNotFound(String),
    #[error("Pod {0} not found")]
    PodNotFound(String),
}

/// `POST /v1/plans/<plan>/interrupt` or `/continue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PlanCommand {
    Interrupt,
    Continue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strategy {
    Serial,
    Parallel,
}

impl Strategy {
    fn name(self) -> &'static str {
        match self {
            Strategy::Serial => "serial",
            Strategy::Parallel => "parallel",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StepView {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) status: &'static str,
    pub(crate) message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PhaseView {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) strategy: &'static str,
    pub(crate) status: &'static str,
    pub(crate) steps: Vec<StepView>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PlanView {
    pub(crate) strategy: &'static str,
    pub(crate) status: &'static str,
    pub(crate) errors: Vec<String>,
    pub(crate) phases: Vec<PhaseView>,
}

/// One task of a pod, as `GET /v1/pod/status` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PodTaskStatus {
    pub(crate) id: String,
    pub(crate) name: String,
    /// Its Mesos state (`TASK_RUNNING`); `None` before its first status.
    pub(crate) state: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PodInstanceStatus {
    pub(crate) name: String,
    pub(crate) tasks: Vec<PodTaskStatus>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PodTypeStatus {
    pub(crate) name: String,
    pub(crate) instances: Vec<PodInstanceStatus>,
}

/// One task of a pod with what its TaskInfo and latest TaskStatus say.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PodInfoView {
    pub(crate) name: String,
    pub(crate) task_id: String,
    pub(crate) agent_id: String,
    pub(crate) pod_type: String,
    pub(crate) index: u32,
    pub(crate) role: String,
    pub(crate) cpus: f64,
    pub(crate) mem: f64,
    pub(crate) state: Option<&'static str>,
    /// When its latest status came, in Unix ms.
    pub(crate) status_unix_ms: Option<u64>,
}

/// A uuid of the names, stable across runs.
fn stable_id(text: &str) -> String {
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, text.as_bytes()).to_string()
}

/// dcos-commons' `PlanUtils.getAggregateStatus` (its DELAYED case aside:
/// nothing here is delayed). The candidates are what the strategy would
/// work on next: the first incomplete child (serial) or all of them
/// (parallel); none while interrupted.
fn aggregate(children: &[&'static str], strategy: Strategy, interrupted: bool) -> &'static str {
    let incomplete = children.iter().copied().filter(|s| *s != "COMPLETE");
    let candidates: Vec<&str> = match (interrupted, strategy) {
        (true, _) => Vec::new(),
        (false, Strategy::Serial) => incomplete.take(1).collect(),
        (false, Strategy::Parallel) => incomplete.collect(),
    };
    let child = |s: &str| children.contains(&s);
    let candidate = |s: &str| candidates.contains(&s);
    if child("ERROR") {
        "ERROR"
    } else if children.iter().all(|s| *s == "COMPLETE") {
        "COMPLETE"
    } else if interrupted {
        "WAITING"
    } else if child("PREPARED") {
        "IN_PROGRESS"
    } else if candidate("WAITING") {
        "WAITING"
    } else if candidate("IN_PROGRESS")
        || (child("COMPLETE")
            && (candidate("PENDING") || candidate("STARTING") || candidate("STARTED")))
    {
        "IN_PROGRESS"
    } else if candidate("PENDING") {
        "PENDING"
    } else if child("WAITING") {
        "WAITING"
    } else if candidate("STARTING") {
        "STARTING"
    } else if candidate("STARTED") {
        "STARTED"
    } else {
        "ERROR"
    }
}

/// What dcos-commons' `Element.getMessage` writes of a step.
fn message(class: &str, name: &str, id: &str, status: &str) -> String {
    format!("com.mesosphere.sdk.scheduler.{class}: {name} [{id}] with status: {status}")
}

impl World {
    fn service_index(&self, name: &str) -> Result<usize, ServiceError> {
        self.services
            .iter()
            .position(|s| s.name == name)
            .ok_or_else(|| ServiceError::UnknownService(name.to_string()))
    }

    /// A pod the scheduler knows: one whose tasks it ever launched (the
    /// SDK finds pods in its state store's TaskInfos).
    fn pod_index(&self, s: usize, pod: &str) -> Result<usize, ServiceError> {
        self.services[s]
            .pod_by_name(pod)
            .filter(|&p| !self.services[s].pods[p].tasks.is_empty())
            .ok_or_else(|| ServiceError::PodNotFound(pod.to_string()))
    }

    /// The services' names, in scenario order.
    pub(crate) fn service_names(&self) -> Vec<String> {
        self.services.iter().map(|s| s.name.clone()).collect()
    }

    /// `GET /v1/plans`.
    pub(crate) fn plan_names(&self, service: &str) -> Result<Vec<&'static str>, ServiceError> {
        self.service_index(service)?;
        Ok(PLANS.to_vec())
    }

    /// `GET /v1/plans/<plan>`.
    pub(crate) fn plan(&self, service: &str, plan: &str) -> Result<PlanView, ServiceError> {
        let s = self.service_index(service)?;
        match plan {
            "deploy" => Ok(self.deploy_plan(s)),
            "recovery" => Ok(self.recovery_plan(s)),
            _ => Err(ServiceError::PlanNotFound(plan.to_string())),
        }
    }

    /// Interrupt or continue a plan: `Ok(false)` when nothing changes
    /// (208 "already reported").
    pub(crate) fn plan_command(
        &mut self,
        service: &str,
        plan: &str,
        command: PlanCommand,
    ) -> Result<bool, ServiceError> {
        let view = self.plan(service, plan)?;
        let s = self.service_index(service)?;
        let now = self.now;
        let svc = &mut self.services[s];
        let interrupted = match plan {
            "deploy" => svc.deploy.resumed_at.is_none(),
            _ => svc.recovery_interrupted,
        };
        let running = matches!(
            view.status,
            "PREPARED" | "STARTING" | "STARTED" | "IN_PROGRESS"
        );
        let complete = view.status == "COMPLETE";
        match command {
            PlanCommand::Interrupt if interrupted || complete => Ok(false),
            PlanCommand::Continue if running || complete => Ok(false),
            PlanCommand::Interrupt => {
                if plan == "deploy" {
                    svc.deploy.elapsed_before_ms = svc.deploy.elapsed_ms(now);
                    svc.deploy.resumed_at = None;
                } else {
                    svc.recovery_interrupted = true;
                }
                Ok(true)
            }
            PlanCommand::Continue => {
                if plan == "deploy" {
                    if svc.deploy.resumed_at.is_none() {
                        svc.deploy.resumed_at = Some(now);
                    }
                } else {
                    svc.recovery_interrupted = false;
                }
                Ok(true)
            }
        }
    }

    fn deploy_plan(&self, s: usize) -> PlanView {
        let service = &self.services[s];
        let n = service.pods.len() as u64;
        let d = &service.deploy;
        // Steps before `done` are complete, step `done` is under way.
        let done = match d.deploy_ms {
            0 => n,
            ms => (d.elapsed_ms(self.now).saturating_mul(n) / ms).min(n),
        };
        let mut phases = Vec::new();
        for (kind, pod_type) in service.types.iter().enumerate() {
            let phase_id = stable_id(&format!("{}/deploy/{}", service.name, pod_type.kind));
            let steps: Vec<StepView> = service
                .pods
                .iter()
                .enumerate()
                .filter(|(_, pod)| pod.kind == kind)
                .map(|(p, pod)| {
                    let status = match (pod.deployed, (p as u64).cmp(&done)) {
                        (false, _) => pod.state.step_status(),
                        (true, std::cmp::Ordering::Less) => "COMPLETE",
                        (true, std::cmp::Ordering::Equal) => "STARTING",
                        (true, std::cmp::Ordering::Greater) => "PENDING",
                    };
                    let name = service.step_name(p);
                    let id = stable_id(&format!("{}/deploy/{}", service.name, pod.name));
                    StepView {
                        message: message("plan.DeploymentStep", &name, &id, status),
                        id,
                        name,
                        status,
                    }
                })
                .collect();
            let statuses: Vec<&'static str> = steps.iter().map(|st| st.status).collect();
            phases.push(PhaseView {
                id: phase_id,
                name: pod_type.kind.clone(),
                strategy: Strategy::Serial.name(),
                status: aggregate(&statuses, Strategy::Serial, false),
                steps,
            });
        }
        let statuses: Vec<&'static str> = phases.iter().map(|ph| ph.status).collect();
        let interrupted = d.resumed_at.is_none();
        let status = if service.deploy_errors.is_empty() {
            aggregate(&statuses, Strategy::Serial, interrupted)
        } else {
            "ERROR"
        };
        PlanView {
            strategy: Strategy::Serial.name(),
            status,
            errors: service.deploy_errors.clone(),
            phases,
        }
    }

    fn recovery_plan(&self, s: usize) -> PlanView {
        let service = &self.services[s];
        let phases: Vec<PhaseView> = service
            .recovery
            .iter()
            .map(|phase| {
                let name = service.step_name(phase.pod);
                let base = format!("{}/recovery/{}", service.name, phase.serial);
                let status = if phase.complete {
                    "COMPLETE"
                } else {
                    service.pods[phase.pod].state.step_status()
                };
                let step_id = stable_id(&format!("{base}/step"));
                PhaseView {
                    id: stable_id(&base),
                    name: name.clone(),
                    strategy: Strategy::Serial.name(),
                    status: aggregate(&[status], Strategy::Serial, false),
                    steps: vec![StepView {
                        message: message("recovery.RecoveryStep", &name, &step_id, status),
                        id: step_id,
                        name,
                        status,
                    }],
                }
            })
            .collect();
        let statuses: Vec<&'static str> = phases.iter().map(|ph| ph.status).collect();
        PlanView {
            strategy: Strategy::Parallel.name(),
            status: aggregate(&statuses, Strategy::Parallel, service.recovery_interrupted),
            errors: Vec::new(),
            phases,
        }
    }

    /// `GET /v1/pod`: the pod instances' names, sorted as strings.
    pub(crate) fn pod_names(&self, service: &str) -> Result<Vec<String>, ServiceError> {
        let s = self.service_index(service)?;
        let names: BTreeSet<String> = self.services[s]
            .pods
            .iter()
            .filter(|p| !p.tasks.is_empty())
            .map(|p| p.name.clone())
            .collect();
        Ok(names.into_iter().collect())
    }

    /// `GET /v1/pod/status`: by pod type (sorted), each instance by index.
    pub(crate) fn pod_statuses(&self, service: &str) -> Result<Vec<PodTypeStatus>, ServiceError> {
        let s = self.service_index(service)?;
        let svc = &self.services[s];
        let mut types: Vec<PodTypeStatus> = svc
            .types
            .iter()
            .enumerate()
            .map(|(kind, t)| PodTypeStatus {
                name: t.kind.clone(),
                instances: (0..svc.pods.len())
                    .filter(|&p| svc.pods[p].kind == kind && !svc.pods[p].tasks.is_empty())
                    .map(|p| self.pod_instance_status(s, p))
                    .collect(),
            })
            .filter(|t| !t.instances.is_empty())
            .collect();
        types.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(types)
    }

    /// `GET /v1/pod/<pod>/status`.
    pub(crate) fn pod_status(
        &self,
        service: &str,
        pod: &str,
    ) -> Result<PodInstanceStatus, ServiceError> {
        let s = self.service_index(service)?;
        let p = self.pod_index(s, pod)?;
        Ok(self.pod_instance_status(s, p))
    }

    fn pod_instance_status(&self, s: usize, p: usize) -> PodInstanceStatus {
        let pod = &self.services[s].pods[p];
        PodInstanceStatus {
            name: pod.name.clone(),
            tasks: pod
                .tasks
                .iter()
                .map(|t| PodTaskStatus {
                    id: t.id.clone(),
                    name: t.name.clone(),
                    state: t.state,
                })
                .collect(),
        }
    }

    /// `GET /v1/pod/<pod>/info`: each task's TaskInfo and latest status.
    pub(crate) fn pod_info(
        &self,
        service: &str,
        pod: &str,
    ) -> Result<Vec<PodInfoView>, ServiceError> {
        let s = self.service_index(service)?;
        let p = self.pod_index(s, pod)?;
        let svc = &self.services[s];
        let the_pod = &svc.pods[p];
        let kind = &svc.types[the_pod.kind];
        let index = the_pod
            .name
            .rsplit('-')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let share = kind.tasks.len() as f64;
        Ok(the_pod
            .tasks
            .iter()
            .map(|t| PodInfoView {
                name: t.name.clone(),
                task_id: t.id.clone(),
                agent_id: t
                    .agent
                    .map(|a| self.mesos.agents[a].id.clone())
                    .unwrap_or_default(),
                pod_type: kind.kind.clone(),
                index,
                role: format!("{}-role", svc.name),
                cpus: kind.cpus_f / share,
                mem: kind.mem_f / share,
                state: t.state,
                status_unix_ms: t
                    .ended_at
                    .or(t.started_at)
                    .filter(|_| t.state.is_some())
                    .map(|at| self.unix_ms(at)),
            })
            .collect())
    }

    /// `POST /v1/pod/<pod>/replace`: the pod's tasks' names.
    pub(crate) fn replace_pod(
        &mut self,
        service: &str,
        pod: &str,
    ) -> Result<Vec<String>, ServiceError> {
        let s = self.service_index(service)?;
        let p = self.pod_index(s, pod)?;
        self.services[s].pods[p].replaces += 1;
        Ok(self.replace_pod_at(s, p))
    }
}
