//! An old agent holding pods of DC/OS SDK data services (Kafka brokers,
//! Cassandra nodes): their reserved resources and volumes are on the
//! agent, so nothing the drain does moves them. Each is moved as a
//! careful operator would, through its service's own API (`pod replace`):
//!
//! - first every old agent of the roll is deactivated (`DEACTIVATE_AGENT`,
//!   recorded before the calls): SDK schedulers do not read maintenance
//!   windows, and a pod relaunched on an agent the roll will empty would
//!   move twice;
//! - one pod of a service at a time (services in parallel, across agents
//!   and groups: the roll-wide record says which replace is open), and
//!   only while the service is healthy: its `deploy` and `recovery` plans
//!   COMPLETE, every pod running;
//! - the replace recorded (intent) before the POST, with the pod's task
//!   ids: a resume that finds them still running on the old agent sends
//!   it again, any other sight means it landed, so a pod is never
//!   replaced twice;
//! - done when the pod's tasks run, with new ids, on an agent that is not
//!   an old one and the recovery plan is COMPLETE (right after a replace
//!   it may still read COMPLETE: where the tasks run decides);
//! - a plan with errors or interrupted, a pod that lands on an old agent
//!   or is not back within `timeouts.pod_replace`: the roll pauses and
//!   pages with the service's plan tree as evidence.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::{StepContext, Tick};
use crate::roll::decide::failure::Evidence;
use crate::roll::engine::tick_context::Observation;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::mesos::{AgentId, MesosMaster};
use crate::roll::ports::services::{ServiceError, ServicePlan, Services};
use crate::roll::record::checkpoint::{EventKind, PodReplace, RolledInstance};
use crate::roll::record::kinds::WaitKind;

mod replace;
use replace::{follow, send};

/// Steps of a service's plan shown in a pause's evidence.
const TREE_STEPS: usize = 20;

/// The agent pods are replaced off, and where none may land.
pub(super) struct Leaving<'a> {
    pub(super) agent: &'a str,
    pub(super) instance: &'a str,
    /// Agents no pod may land on (each deactivated first): the roll's
    /// old agents, or in a rollback the new agents that go.
    pub(super) forbidden: HashSet<String>,
    /// A rollback's replace: only the rollback's own replaces hold one
    /// back, no pod failing is a new failure, and a pod that is not
    /// running on the agent that goes is replaced all the same.
    pub(super) rollback: bool,
}

/// Where one service stands on one agent this tick.
enum Stand {
    /// Nothing of it left to do here.
    Done,
    /// Waiting for another agent's replace of the same service.
    Queued(String),
    /// Its own wait (its health, its replace), under the pod-replace
    /// deadline.
    Waiting(String),
    Pause(String),
    /// A replaced pod failing on a new agent: the new image's failure.
    Failed(Evidence),
}

/// What the roll does about the SDK services' pods on `record`'s agent:
/// `None` when it holds none (and no replace from it is open), else the
/// tick.
pub(super) async fn replace_off<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
    seen: &Observation,
) -> Result<Option<Tick>, RollError> {
    // Asked of every old agent every tick: the set of old agents is built
    // only for one that holds pods (at 2,000 agents, building it for each
    // was a third of roller's CPU).
    let here = pods_here(cx, &record.agent_id, false, seen).await?;
    if here.is_empty() {
        return Ok(None);
    }
    let leaving = Leaving {
        agent: &record.agent_id,
        instance: &record.id,
        forbidden: cx.old_agents_everywhere(),
        rollback: false,
    };
    replace(cx, &leaving, here, seen).await
}

/// The SDK services' tasks on `agent`, by service, with every service a
/// replace off it is still open for (of a rollback's, or of the roll's).
/// Mesos' frameworks are read only when some app is an SDK service.
async fn pods_here<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    agent: &str,
    rollback: bool,
    seen: &Observation,
) -> Result<BTreeMap<String, BTreeSet<String>>, RollError> {
    let mut here: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let services = &seen.sdk_services;
    if !services.is_empty() {
        let frameworks = cx.tick.frameworks().await?;
        for f in frameworks.iter().filter(|f| services.contains(&f.name)) {
            for t in f.tasks.iter().filter(|t| t.agent_id == agent) {
                here.entry(f.name.clone()).or_default().insert(t.id.clone());
            }
        }
    }
    for open in cx.roll().services.replaces.iter() {
        if open.from_agent == agent && open.done_unix_ms.is_none() && open.rollback == rollback {
            here.entry(open.service.clone()).or_default();
        }
    }
    Ok(here)
}

/// Whether a pod replaced off `agent` is not back yet: only the agent's
/// own step follows it, so the agent goes with no other's batch.
pub(super) fn replacing_off<P: Ports>(cx: &StepContext<'_, '_, P>, agent: &str) -> bool {
    let replaces = &cx.roll().services.replaces;
    replaces
        .iter()
        .any(|r| r.from_agent == agent && r.done_unix_ms.is_none())
}

/// `replace_off` for any agent that goes (`leaving`).
pub(super) async fn replace_pods<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    leaving: &Leaving<'_>,
    seen: &Observation,
) -> Result<Option<Tick>, RollError> {
    let here = pods_here(cx, leaving.agent, leaving.rollback, seen).await?;
    if here.is_empty() {
        return Ok(None);
    }
    replace(cx, leaving, here, seen).await
}

/// `replace_pods` once the pods on the agent (`here`, not empty) are known.
async fn replace<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    leaving: &Leaving<'_>,
    here: BTreeMap<String, BTreeSet<String>>,
    seen: &Observation,
) -> Result<Option<Tick>, RollError> {
    let agent = leaving.agent;
    if let Some(unknown) = here.keys().find(|s| !cx.ports.services().reachable(s)) {
        let unknown = unknown.clone();
        return Ok(Some(Tick::Pause(by_hand(leaving, &unknown, &here))));
    }
    deactivate(cx, &leaving.forbidden, seen).await?;
    let mut queued = Vec::new();
    let mut waiting = Vec::new();
    for (service, tasks) in &here {
        match service_on_agent(cx, leaving, service, tasks).await? {
            Stand::Done => {}
            Stand::Queued(why) => queued.push(why),
            Stand::Waiting(why) => waiting.push(why),
            Stand::Pause(why) => return Ok(Some(Tick::Pause(why))),
            Stand::Failed(found) => return Ok(Some(Tick::Failed(found))),
        }
    }
    if !waiting.is_empty() {
        waiting.extend(queued);
        // Each pod has its own deadline (checked above, from when its
        // replace was decided); the wait's is later by one per pod already
        // moved off this agent, so a healthy series never times out.
        let moved = cx
            .roll()
            .services
            .replaces
            .iter()
            .filter(|r| r.from_agent == agent && r.done_unix_ms.is_some())
            .count() as u32;
        return Ok(Some(Tick::waiting_longer(
            WaitKind::PodReplace,
            cx.env.timeouts.pod_replace * moved,
            waiting.join("; "),
        )));
    }
    if !queued.is_empty() {
        return Ok(Some(Tick::NotYet(queued.join("; "))));
    }
    Ok(None)
}

/// One service's pods on the agent that goes (`tasks`: its task ids
/// there).
async fn service_on_agent<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    leaving: &Leaving<'_>,
    service: &str,
    tasks: &BTreeSet<String>,
) -> Result<Stand, RollError> {
    let open = cx
        .roll()
        .services
        .replaces
        .iter()
        .find(|r| {
            r.service == service && r.done_unix_ms.is_none() && r.rollback == leaving.rollback
        })
        .cloned();
    if let Some(open) = open {
        if open.from_agent != leaving.agent {
            return Ok(Stand::Queued(format!(
                "pod {} of {service} is being replaced off {} (one pod of a service at a time)",
                open.pod, open.instance
            )));
        }
        return follow(cx, leaving, &open).await;
    }
    if tasks.is_empty() {
        return Ok(Stand::Done);
    }
    let ports = cx.ports;
    let api = ports.services();
    let pods = match api.pods(service).await {
        Ok(pods) => pods,
        Err(err) => return Ok(api_error(service, &err)),
    };
    let Some(pod) = pods
        .iter()
        .find(|p| p.tasks.iter().any(|t| tasks.contains(&t.id)))
    else {
        // Mesos lists tasks of the service here that no pod claims (a
        // task being killed): looked at again next tick.
        return Ok(Stand::Waiting(format!(
            "{} task(s) of {service} on agent {} belong to no pod the service lists",
            tasks.len(),
            leaving.agent
        )));
    };
    // A rollback moves a pod failing on the agent that goes whatever the
    // service's state (that pod is why it is not healthy).
    let failing_here = leaving.rollback && !pod.running();
    let unhealthy = match healthy(api, service).await {
        _ if failing_here => None,
        Ok(None) => None,
        Ok(Some(stand)) => Some(stand),
        Err(err) => Some(api_error(service, &err)),
    };
    if let Some(stand) = unhealthy {
        if let Stand::Waiting(why) = &stand {
            // Said once per process and plan state: a deploy can hold the
            // roll for as long as it runs.
            let key = why.split(" (").next().unwrap_or(why).to_string();
            if cx.memory.service_waits_logged.insert(key) {
                cx.record(EventKind::Step, format!("pod {} waits: {why}", pod.name));
            }
        }
        return Ok(stand);
    }
    let others_down = pods.iter().filter(|p| p.name != pod.name || !failing_here);
    if let Some(down) = others_down.into_iter().find(|p| !p.running()) {
        return Ok(Stand::Waiting(format!(
            "pod {} of {service} is not running ({}): roller replaces no pod of a service \
             while another is down",
            down.name,
            states(down)
        )));
    }
    let replace = PodReplace {
        service: service.to_string(),
        pod: pod.name.clone(),
        from_agent: leaving.agent.to_string(),
        instance: leaving.instance.to_string(),
        task_ids: pod.tasks.iter().map(|t| t.id.clone()).collect(),
        decided_unix_ms: cx.clock.now_unix_ms(),
        sent: false,
        done_unix_ms: None,
        to_agent: None,
        rollback: leaving.rollback,
    };
    cx.services_mut().replaces.push(replace.clone());
    let whither = if leaving.rollback { "rollback: " } else { "" };
    cx.intend(format!(
        "{whither}replace pod {} of {service} off {} (agent {}): POST /v1/pod/{}/replace; its \
         recovery plan relaunches it on an agent that stays",
        pod.name, leaving.instance, leaving.agent, pod.name
    ))
    .await?;
    send(cx, &replace).await
}

/// `None` when `service` may lose a pod now: its deploy and recovery
/// plans COMPLETE; else where it stands.
async fn healthy<S: Services>(api: &S, service: &str) -> Result<Option<Stand>, ServiceError> {
    for name in ["deploy", "recovery"] {
        let plan = api.plan(service, name).await?;
        if plan.has_errors() {
            return Ok(Some(Stand::Pause(format!(
                "service {service}'s {name} plan has errors: roller replaces no pod of it. \
                 Fix the service (`dcos {service} plan show {name}`), then rerun.\n{}",
                plan.tree(name, TREE_STEPS)
            ))));
        }
        if plan.is_interrupted() {
            return Ok(Some(Stand::Pause(format!(
                "service {service}'s {name} plan is interrupted (WAITING): someone paused it. \
                 Let it finish (`dcos {service} plan continue {name}`), then rerun.\n{}",
                plan.tree(name, TREE_STEPS)
            ))));
        }
        if !plan.is_complete() {
            return Ok(Some(Stand::Waiting(format!(
                "service {service}'s {name} plan is {} ({}): roller replaces no pod of a \
                 service while it deploys or recovers",
                plan.status,
                under_way(&plan)
            ))));
        }
    }
    Ok(None)
}

/// Every agent of `forbidden` that Mesos still lists as offering is
/// deactivated, recorded first (see the module's doc). Repeated each
/// tick for any not deactivated yet.
async fn deactivate<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    forbidden: &HashSet<String>,
    seen: &Observation,
) -> Result<(), RollError> {
    let mut offering: Vec<String> = forbidden
        .iter()
        .filter(|a| seen.agent(a).is_some_and(|agent| !agent.deactivated))
        .cloned()
        .collect();
    if offering.is_empty() {
        return Ok(());
    }
    offering.sort();
    let recorded: HashSet<String> = cx.roll().services.deactivated.iter().cloned().collect();
    let new: Vec<String> = offering
        .iter()
        .filter(|a| !recorded.contains(*a))
        .cloned()
        .collect();
    if !new.is_empty() {
        cx.services_mut().deactivated.extend(new.iter().cloned());
        cx.intend(format!(
            "DEACTIVATE_AGENT for {} agent(s) that go: SDK services relaunch pods on any agent \
             that offers, maintenance windows or not, and none may land on an agent this roll \
             empties",
            new.len()
        ))
        .await?;
    }
    for agent in &offering {
        cx.ports
            .mesos()
            .deactivate_agent(&AgentId(agent.clone()))
            .await?;
    }
    Ok(())
}

/// A service's API failing: asked again next tick when the failure
/// passes (the scheduler relaunching, the admin router's 502), else a
/// pause saying what to fix.
fn api_error(service: &str, err: &ServiceError) -> Stand {
    if err.is_transient() {
        Stand::Waiting(format!("{err}: asking again"))
    } else {
        Stand::Pause(format!(
            "{err}. roller moves {service}'s pods through its API only; fix the route (dcos_url, \
             a [[service]] table, the token), then rerun"
        ))
    }
}

/// What a plan not COMPLETE is doing: its steps not COMPLETE.
fn under_way(plan: &ServicePlan) -> String {
    let steps: Vec<String> = plan
        .phases
        .iter()
        .flat_map(|p| &p.steps)
        .filter(|s| s.status != "COMPLETE")
        .take(3)
        .map(|s| format!("{} {}", s.name, s.status))
        .collect();
    if steps.is_empty() {
        "no step under way".to_string()
    } else {
        steps.join(", ")
    }
}

fn states(pod: &crate::roll::ports::services::Pod) -> String {
    pod.tasks
        .iter()
        .map(|t| {
            format!(
                "{} {}",
                t.name,
                t.status.as_deref().unwrap_or("not launched")
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The pause for pods of a service roller has no route to.
fn by_hand(
    leaving: &Leaving<'_>,
    service: &str,
    here: &BTreeMap<String, BTreeSet<String>>,
) -> String {
    let count: usize = here.values().map(BTreeSet::len).sum();
    format!(
        "{} (agent {}) runs {count} task(s) of SDK service(s) {}: a service's pods keep \
         reserved resources and volumes on their agent, and roller has no route to {service}'s \
         API (set dcos_url, or add a [[service]] table with its url). Or replace them by hand \
         (`dcos {service} pod replace <pod>`), then rerun",
        leaving.instance,
        leaving.agent,
        here.keys().cloned().collect::<Vec<_>>().join(", ")
    )
}
