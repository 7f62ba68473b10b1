//! The failure watch: at the start of every tick, before any step may
//! kill, surge or terminate, the runner looks at what the roll placed on
//! its new agents (`decide::failure` says what counts as a failure,
//! `decide::failure_limit` how many the roll tolerates). A failure past
//! the limit stops the roll's moves at once: it is recorded in the
//! checkpoint with its evidence, and the runner pauses or rolls back
//! (`--on-failure`); one within it is recorded as tolerated.
//!
//! The watch reads Marathon's apps through the tick's context (the steps
//! of the same tick reuse them) and its launch queue, and, when the roll
//! names alarms (`alarms`, `--alarm`), their CloudWatch states first: a
//! watched alarm in ALARM is decisive (`decide::alarms`). It runs only while
//! there is something to protect: new agents recorded, no failure
//! recorded, and steps that move tasks or terminate old agents not all
//! complete.

use std::collections::HashSet;

use super::clock::RollClock;
use super::tick_context::TickContext;
use crate::roll::decide::alarms;
use crate::roll::decide::failure::{self, Evidence, NewAgentRef, Watched};
use crate::roll::decide::failure_limit::{self, Verdict};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::record::checkpoint::{Checkpoint, FailureRecord, utc};

/// Whether the watch looks this tick: the roll has new agents, has found
/// no failure yet, and `moving` (a step that moves tasks or terminates an
/// old agent is not complete).
pub(crate) fn watching(checkpoint: &Checkpoint, moving: bool) -> bool {
    moving
        && checkpoint.failure.is_none()
        && checkpoint.groups.iter().any(|g| !g.new_agents.is_empty())
}

/// What the failures on the new agents this tick shows come to, weighed
/// against the failure limit and the failures already tolerated.
pub(crate) async fn look<P: Ports>(
    checkpoint: &Checkpoint,
    tick: &mut TickContext<P>,
) -> Result<Verdict, RollError> {
    if let Some(evidence) = alarm(checkpoint, tick).await? {
        return Ok(Verdict::Decisive(evidence));
    }
    let seen = tick.observation().await?;
    let queue = tick.queue().await?;
    // Every group's new agents: a task moved off one group's old agents
    // may land on another group's new ones (groups of one role).
    let new_agents: Vec<NewAgentRef<'_>> = checkpoint
        .groups
        .iter()
        .flat_map(|g| &g.new_agents)
        .map(|a| NewAgentRef {
            instance: &a.instance,
            agent_id: &a.agent_id,
            hostname: &a.hostname,
        })
        .collect();
    let on_new: HashSet<&str> = new_agents.iter().map(|a| a.agent_id).collect();
    let mut moved: HashSet<String> = checkpoint
        .groups
        .iter()
        .flat_map(|g| {
            g.waves
                .iter()
                .flat_map(|w| w.apps.iter().cloned())
                .chain(g.surges.iter().map(|s| s.app.clone()))
        })
        .collect();
    for app in seen.apps.iter() {
        let placed = app
            .tasks
            .iter()
            .any(|t| t.agent_id.as_deref().is_some_and(|a| on_new.contains(a)));
        if placed {
            moved.insert(app.id.clone());
        }
    }
    let departed = departed(checkpoint, tick).await?;
    // A failure acknowledged or tolerated is not found again.
    let known: Vec<String> = checkpoint
        .acknowledged_failures
        .iter()
        .cloned()
        .chain(checkpoint.tolerated_failures.iter().map(|t| t.key.clone()))
        .collect();
    let found = failure::detect(&Watched {
        apps: &seen.apps,
        queue: &queue,
        new_agents: &new_agents,
        moved: &moved,
        allowed: &checkpoint.allow_unhealthy,
        acknowledged: &known,
        departed: &departed,
    });
    Ok(failure_limit::judge(
        found,
        &checkpoint.tolerated_failures,
        checkpoint.failure_limit,
    ))
}

/// A watched alarm in ALARM, not acknowledged; no alarms named, no call.
async fn alarm<P: Ports>(
    checkpoint: &Checkpoint,
    tick: &TickContext<P>,
) -> Result<Option<Evidence>, RollError> {
    if checkpoint.alarms.is_empty() {
        return Ok(None);
    }
    let states = tick.alarms(&checkpoint.alarms).await?;
    Ok(alarms::in_alarm(
        &states,
        &checkpoint.alarms,
        &checkpoint.acknowledged_failures,
    ))
}

/// The new agents' instances that have left their group or that it marks
/// unhealthy, as this tick reads the groups: a Spot interruption or an
/// EC2 failure took them, not the image.
async fn departed<P: Ports>(
    checkpoint: &Checkpoint,
    tick: &mut TickContext<P>,
) -> Result<HashSet<String>, RollError> {
    let mut departed = HashSet::new();
    for record in checkpoint
        .groups
        .iter()
        .filter(|g| !g.new_agents.is_empty())
    {
        let group = tick.group(&record.asg).await?;
        for agent in &record.new_agents {
            let healthy = group
                .instance(&agent.instance)
                .is_some_and(|i| !i.lifecycle_state.is_leaving() && i.health_status != "Unhealthy");
            if !healthy {
                departed.insert(agent.instance.clone());
            }
        }
    }
    Ok(departed)
}

/// The failure as the checkpoint records it, found now.
pub(crate) fn record(evidence: &Evidence, clock: &RollClock) -> FailureRecord {
    FailureRecord {
        key: evidence.key.clone(),
        app: evidence.app.clone(),
        task: evidence.task.clone(),
        agent: evidence.agent.clone(),
        instance: evidence.instance.clone(),
        what: evidence.what.clone(),
        since: evidence.since.map(utc),
        found: clock.utc(),
    }
}
