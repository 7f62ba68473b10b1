//! A replace under way: sent (its answer marks it sent), followed to
//! its end (the pod's tasks running with new ids on an agent that stays,
//! the recovery plan COMPLETE), or found failing on a new agent.

use std::collections::{BTreeSet, HashSet};

use super::{Leaving, Stand, TREE_STEPS, api_error};
use crate::roll::decide::failure::Evidence;
use crate::roll::engine::clock::human;
use crate::roll::engine::steps::StepContext;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::services::{PodTask, Services};
use crate::roll::record::checkpoint::{EventKind, PodReplace};

/// POSTs the replace recorded as `replace`; marked sent once answered.
pub(super) async fn send<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    replace: &PodReplace,
) -> Result<Stand, RollError> {
    let service = replace.service.as_str();
    match cx.ports.services().replace_pod(service, &replace.pod).await {
        Ok(()) => {
            mark(cx, replace, |r| r.sent = true);
            cx.record(
                EventKind::Step,
                format!(
                    "pod {} of {service} replaced off {} (agent {}): the service relaunches it",
                    replace.pod, replace.instance, replace.from_agent
                ),
            );
            cx.save().await?;
            Ok(Stand::Waiting(format!(
                "pod {} of {service} replaced: waiting for its recovery plan to relaunch it on a \
                 new agent",
                replace.pod
            )))
        }
        // Not sent, or not known to be: the next tick looks at the pod
        // before sending it again.
        Err(err) if err.is_transient() => Ok(api_error(service, &err)),
        Err(err) => Ok(Stand::Pause(format!(
            "pod {} of {service} could not be replaced: {err}. Replace it by hand (`dcos \
             {service} pod replace {}`), then rerun",
            replace.pod, replace.pod
        ))),
    }
}

/// A replace under way off this agent: sent again if it never landed,
/// else followed to its end.
pub(super) async fn follow<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    leaving: &Leaving<'_>,
    open: &PodReplace,
) -> Result<Stand, RollError> {
    let service = open.service.as_str();
    let ports = cx.ports;
    let api = ports.services();
    let info = match api.pod_info(service, &open.pod).await {
        Ok(info) => info,
        Err(err) => return Ok(api_error(service, &err)),
    };
    let untouched = !info.is_empty()
        && info.iter().all(|t| {
            open.task_ids.contains(&t.task_id)
                && t.agent_id.as_deref() == Some(open.from_agent.as_str())
                && t.state.as_deref() == Some("TASK_RUNNING")
        });
    let recovery = match api.plan(service, "recovery").await {
        Ok(plan) => plan,
        Err(err) => return Ok(api_error(service, &err)),
    };
    if !open.sent {
        // Sent again only if nothing shows it landed: its tasks still run
        // untouched where they were and no recovery step relaunches it
        // (the scheduler may list a task it is killing as running).
        if untouched && !recovery.recovering(&open.pod) {
            return send(cx, open).await;
        }
        // It landed before the crash that lost its answer.
        mark(cx, open, |r| r.sent = true);
        cx.save().await?;
    }
    if recovery.has_errors() || recovery.is_interrupted() {
        return Ok(Stand::Pause(format!(
            "pod {} of {service} is being replaced and its recovery plan is {}: roller \
             replaces nothing more of {service}. See `dcos {service} plan show recovery`, then \
             rerun.\n{}",
            open.pod,
            recovery.status,
            recovery.tree("recovery", TREE_STEPS)
        )));
    }
    if !leaving.rollback
        && let Some(found) = failing(cx, open, &info, &leaving.forbidden)
    {
        return Ok(Stand::Failed(found));
    }
    let old = &leaving.forbidden;
    let landed: BTreeSet<&str> = info.iter().filter_map(|t| t.agent_id.as_deref()).collect();
    let running = !info.is_empty()
        && info.iter().all(|t| {
            !open.task_ids.contains(&t.task_id) && t.state.as_deref() == Some("TASK_RUNNING")
        });
    if running && let Some(on_old) = landed.iter().find(|a| old.contains(**a)) {
        return Ok(Stand::Pause(format!(
            "pod {} of {service} was relaunched on agent {on_old}, an agent that goes (it \
             offered despite being deactivated?). Replace it again by hand once that agent \
             offers nothing, then rerun",
            open.pod
        )));
    }
    let waited = cx.clock.since(open.decided_unix_ms);
    if running && recovery.is_complete() {
        let to = landed.iter().next().map(|a| a.to_string());
        let now = cx.clock.now_unix_ms();
        mark(cx, open, |r| {
            r.done_unix_ms = Some(now);
            r.to_agent = to.clone();
        });
        cx.record(
            EventKind::Step,
            format!(
                "pod {} of {service} runs on agent {} after {}; its recovery plan is COMPLETE",
                open.pod,
                to.as_deref().unwrap_or("?"),
                human(waited)
            ),
        );
        cx.save().await?;
        return Ok(Stand::Done);
    }
    let limit = cx.env.timeouts.pod_replace;
    let step = recovery
        .step_of(&open.pod)
        .map(|s| format!("step {} {}", s.name, s.status))
        .unwrap_or_else(|| "no recovery step for it yet".to_string());
    let tasks = info
        .iter()
        .map(|t| format!("{} {}", t.name, t.state.as_deref().unwrap_or("no status")))
        .collect::<Vec<_>>()
        .join(", ");
    if waited >= limit {
        return Ok(Stand::Pause(format!(
            "pod {} of {service} is not back after {} (timeouts.pod_replace): {tasks}; {step}. \
             See `dcos {service} pod status {}` and the plan below, then rerun.\n{}",
            open.pod,
            human(waited),
            open.pod,
            recovery.tree("recovery", TREE_STEPS)
        )));
    }
    Ok(Stand::Waiting(format!(
        "pod {} of {service} replaced {} ago: {tasks}; recovery {} ({step})",
        open.pod,
        human(waited),
        recovery.status
    )))
}

/// Changes the recorded replace `which` (the same service and pod,
/// decided at the same time).
pub(super) fn mark<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    which: &PodReplace,
    change: impl FnOnce(&mut PodReplace),
) {
    if let Some(r) = cx.services_mut().replaces.iter_mut().find(|r| {
        r.service == which.service
            && r.pod == which.pod
            && r.decided_unix_ms == which.decided_unix_ms
    }) {
        change(r);
    }
}

/// A task of the replaced pod failing (`TASK_FAILED`, `TASK_ERROR`) on an
/// agent that stays: the new image failing, unless acknowledged.
fn failing<P: Ports>(
    cx: &StepContext<'_, '_, P>,
    open: &PodReplace,
    info: &[PodTask],
    forbidden: &HashSet<String>,
) -> Option<Evidence> {
    let key = format!("pod/{}/{}", open.service, open.pod);
    if cx.roll().acknowledged_failures.contains(&key) {
        return None;
    }
    let task = info.iter().find(|t| {
        matches!(t.state.as_deref(), Some("TASK_FAILED" | "TASK_ERROR"))
            && !open.task_ids.contains(&t.task_id)
            && t.agent_id
                .as_deref()
                .is_some_and(|a| !forbidden.contains(a))
    })?;
    Some(Evidence {
        key,
        app: None,
        task: Some(task.task_id.clone()),
        agent: task.agent_id.clone(),
        instance: None,
        what: format!(
            "pod {} of SDK service {} relaunched on a new agent: {} {}",
            open.pod,
            open.service,
            task.name,
            task.state.as_deref().unwrap_or_default()
        ),
        since: None,
    })
}
