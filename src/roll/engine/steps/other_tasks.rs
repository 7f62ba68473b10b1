//! An old agent Marathon's tasks have left that still runs tasks of other
//! frameworks (a Metronome job run, a Spark driver): roller has no API
//! for them, so it waits for them to end, up to `timeouts.other_tasks`
//! from when it first saw them, then (`other_tasks = "drain"`, the
//! default) drains the agent with Mesos' `DRAIN_AGENT`, so that their
//! frameworks see them killed with the grace they asked for, at most
//! `max_grace_period`; or pauses and pages (`"pause"`). Pods of DC/OS SDK
//! services are never drained this way (their reserved resources and
//! volumes are on the agent): the roll pauses naming them.
//!
//! The drain's calls, in order: `DEACTIVATE_AGENT` (no offer of the agent
//! reaches any framework while it is outside a window), its machine taken
//! out of the roll's maintenance window (Mesos refuses `DRAIN_AGENT` for
//! an agent in a maintenance schedule, 400), then `DRAIN_AGENT`. The
//! decision is recorded before the first call; each call may be repeated,
//! so a resume sends them again while the agent is not draining.

use std::time::Duration;

use super::{StepContext, Tick};
use crate::roll::decide::agent_contents::AgentContents;
use crate::roll::engine::clock::human;
use crate::roll::engine::tick_context::Observation;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::mesos::{AgentId, DrainOptions, MesosMaster};
use crate::roll::record::checkpoint::{EventKind, RolledInstance};
use crate::roll::record::env::OtherTasksPolicy;
use crate::roll::record::kinds::WaitKind;

/// How much later than `timeouts.other_tasks` the wait's own deadline
/// is: the step decides at `timeouts.other_tasks`, never the deadline.
const DECIDE_MARGIN: Duration = Duration::from_secs(5 * 60);

/// What the roll does about `record`'s agent once the drain is over and
/// Marathon lists nothing there: `None` when Mesos shows no other
/// framework's task on it (it is busy for another reason), else the tick.
pub(super) async fn hold<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
    seen: &Observation,
) -> Result<Option<Tick>, RollError> {
    let agent = &record.agent_id;
    if seen.tasks_on(agent) > 0 {
        return Ok(None);
    }
    let contents = cx.tick.agent_contents().await?;
    let Some(here) = contents.get(agent).filter(|c| c.not_marathon() > 0) else {
        return Ok(None);
    };
    let here = here.clone();
    if !here.services.is_empty() {
        return Ok(Some(Tick::Pause(service_pause(record, &here))));
    }
    let grace = cx.env.max_grace_period;
    if record.other_tasks.drain_sent {
        if seen.agent(agent).is_some_and(|a| a.drain.is_none()) {
            send_drain(cx, record, grace).await?;
        }
        return Ok(Some(drain_wait(record, &here, grace)));
    }
    let since = match record.other_tasks.since_unix_ms {
        Some(since) => since,
        None => {
            let now = cx.clock.now_unix_ms();
            if let Some(r) = cx.group_mut().instance_mut(&record.id) {
                r.other_tasks.since_unix_ms = Some(now);
            }
            cx.record(
                EventKind::Step,
                format!(
                    "{} (agent {agent}) runs {}, which the drain does not move: waiting up to {} for them to end",
                    record.id,
                    here.describe(),
                    human(cx.env.timeouts.other_tasks)
                ),
            );
            cx.save().await?;
            now
        }
    };
    let waited = cx.clock.since(since);
    let limit = cx.env.timeouts.other_tasks;
    if waited < limit {
        // The wait's own deadline is a little later than this one, which
        // decides (drain or pause) first.
        return Ok(Some(Tick::waiting_longer(
            WaitKind::OtherTasks,
            DECIDE_MARGIN,
            format!(
                "Marathon lists nothing on agent {agent}, but Mesos runs {} there, which the \
                 drain does not move: waiting for them to end ({} of {}; then other_tasks = \"{}\")",
                here.describe(),
                human(waited),
                human(limit),
                cx.env.other_tasks.as_str()
            ),
        )));
    }
    if cx.env.other_tasks == OtherTasksPolicy::Pause {
        return Ok(Some(Tick::Pause(format!(
            "{} (agent {agent}) still runs {} after {}: other_tasks = \"pause\". End them \
             through their framework (or set other_tasks = \"drain\" to have Mesos kill them \
             with at most max_grace_period of grace), then rerun",
            record.id,
            here.describe(),
            human(waited)
        ))));
    }
    if let Some(r) = cx.group_mut().instance_mut(&record.id) {
        r.other_tasks.drain_sent = true;
    }
    cx.intend(format!(
        "drain agent {agent} of {} ({} after {} waited): DEACTIVATE_AGENT, its machine out \
         of the roll's window, DRAIN_AGENT with max_grace_period {}",
        record.id,
        here.describe(),
        human(waited),
        human(grace)
    ))
    .await?;
    send_drain(cx, record, grace).await?;
    Ok(Some(drain_wait(record, &here, grace)))
}

/// The drain's calls (each safe to repeat): the agent deactivated, its
/// machine out of the roll's window (and of the roll's record of windows,
/// saved, so that finish and `machine/down` leave it alone), then
/// `DRAIN_AGENT`.
async fn send_drain<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    record: &RolledInstance,
    grace: Duration,
) -> Result<(), RollError> {
    let agent = AgentId(record.agent_id.clone());
    cx.ports.mesos().deactivate_agent(&agent).await?;
    let machine = record.machine();
    cx.ports
        .mesos()
        .cancel_maintenance(&[machine.machine_id()])
        .await?;
    let group = cx.group_mut();
    group.maintenance.retain(|m| *m != machine);
    cx.save().await?;
    cx.ports
        .mesos()
        .drain_agent(
            &agent,
            DrainOptions {
                max_grace_period: Some(grace),
                mark_gone: false,
            },
        )
        .await?;
    Ok(())
}

/// Waiting for the drained agent to be empty: the task-move deadline,
/// longer by the grace its tasks may take.
fn drain_wait(record: &RolledInstance, here: &AgentContents, grace: Duration) -> Tick {
    Tick::waiting_longer(
        WaitKind::TaskMoves,
        grace,
        format!(
            "DRAIN_AGENT sent for agent {} of {}: waiting for Mesos to kill {} (each with at most {} of grace)",
            record.agent_id,
            record.id,
            here.describe(),
            human(grace)
        ),
    )
}

/// The pause for an agent holding pods of DC/OS SDK services.
fn service_pause(record: &RolledInstance, here: &AgentContents) -> String {
    let services: Vec<&str> = here.services.keys().map(String::as_str).collect();
    format!(
        "{} (agent {}) runs {}: a service's pods keep reserved resources and volumes on their \
         agent, so roller does not drain it. Replace them through the service \
         (`dcos {} pod replace <pod>`, or POST /v1/pod/<pod>/replace on its API), then rerun",
        record.id,
        record.agent_id,
        here.describe(),
        services.first().copied().unwrap_or("<service>")
    )
}
