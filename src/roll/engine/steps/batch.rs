//! A capped surge's later batches (`--max-surge`, or the group's instance
//! maintenance policy): `OpenBatch` waits for the old agents of the
//! batches before it to be terminated (the group launched a new instance
//! in each one's place, within its ceiling: `GroupRoll::replaces_next`),
//! waits for those new instances as active Mesos agents, and then opens
//! old agents to the drain's waves: its own, and more while the new
//! agents' free resources take their tasks (`take_in`). Every old agent
//! has been under the roll's maintenance window since the scale-up, so
//! what the waves move off an open batch lands on new agents, never on
//! an old agent a later batch empties: each task still moves once.

use super::scale_up::wait_registered;
use super::{StepAction, StepContext, Tick};
use crate::roll::decide::roll_plan::batch_id;
use crate::roll::decide::surge_cap;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::AutoScaling;
use std::collections::HashSet;

use crate::roll::ports::marathon::App;
use crate::roll::ports::mesos::Resources;

/// Opens batch `batch` (from 2).
///
/// Safe to re-run: it sends nothing but a lost raise's absolute value
/// again; the wait only reads; which old agents open is recorded with
/// the step's completion, and opening only grows.
pub(crate) struct OpenBatch {
    pub(crate) batch: u32,
}

impl StepAction for OpenBatch {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let batch = self.batch;
        if cx.group().opened_batches >= batch {
            return Ok(Tick::Done(format!("batch {batch} is open to the drain")));
        }
        if let Some(waiting) = before_terminated(cx, batch) {
            return Ok(Tick::NotYet(waiting));
        }
        resend_lost_raise(cx, batch).await?;
        let id = cx.id_of(&batch_id(batch));
        let registered = wait_registered(cx, &id).await?;
        if !cx.group().instances.iter().any(|i| i.batch >= batch) {
            // Every old agent went (those before it are terminated): what
            // is left is the new instances launched in their place.
            let Tick::Done(registered) = registered else {
                return Ok(registered);
            };
            cx.group_mut().opened_batches = batch;
            return Ok(Tick::Done(format!(
                "batch {batch}: {registered}; nothing left to open (earlier batches took its \
                 old agents in)"
            )));
        }
        match registered {
            Tick::Done(registered) => {
                let (opened, beyond) = take_in(cx, batch).await?;
                if opened == 0 {
                    return Ok(Tick::waiting(
                        crate::roll::record::kinds::WaitKind::TaskMoves,
                        format!(
                            "batch {batch}: {registered}, but they have no room for another \
                             old agent's tasks"
                        ),
                    ));
                }
                cx.group_mut().opened_batches = batch;
                cx.save().await?;
                Ok(Tick::Done(format!(
                    "batch {batch}: {registered}; {opened} old agent(s) open to the drain{}",
                    beyond_said(beyond)
                )))
            }
            other => Ok(other),
        }
    }
}

/// What batch `batch` still waits for before its new agents can be
/// there: old agents of the batches before it not terminated yet.
fn before_terminated<P: Ports>(cx: &StepContext<'_, '_, P>, batch: u32) -> Option<String> {
    let left: Vec<String> = cx
        .group()
        .instances
        .iter()
        .filter(|i| i.batch < batch && !i.terminate_sent)
        .map(|i| i.id.clone())
        .collect();
    (!left.is_empty()).then(|| {
        format!(
            "batch {batch} opens once batch {} is terminated: {} old instance(s) left ({})",
            batch - 1,
            left.len(),
            named(&left)
        )
    })
}

/// Opens old agents to the drain as batch `opening` (the first: the
/// scale-up's, whose own old agents are open already; or a later one):
/// in the planned order, those planned for it and at least one for each
/// new agent come since the last batch, then more while what each uses
/// fits in the new agents' free resources (`surge_cap::to_open`). Each
/// opened is recorded as of batch `opening`; how many opened, and how
/// many of them beyond one for each new agent.
pub(super) async fn take_in<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    opening: u32,
) -> Result<(usize, usize), RollError> {
    let seen = cx.tick.observation().await?;
    let group = cx.group();
    let used_by = |agent: &str| {
        seen.agent(agent)
            .map(|a| a.used_resources)
            .unwrap_or_default()
    };
    let mut new_total = Resources::default();
    let mut new_used = Resources::default();
    let mut new_ids: HashSet<&str> = HashSet::new();
    for new in &group.new_agents {
        let Some(agent) = seen.agent(&new.agent_id).filter(|a| a.active) else {
            continue;
        };
        new_ids.insert(agent.id.0.as_str());
        add(&mut new_total, agent.resources);
        add(&mut new_used, agent.used_resources);
    }
    let mut open_held = Resources::default();
    let mut held_agents: HashSet<&str> = HashSet::new();
    let mut opened_before: usize = 0;
    for i in &group.instances {
        if i.batch <= group.opened_batches || i.terminate_sent {
            opened_before += 1;
            if !i.terminate_sent {
                add(&mut open_held, used_by(&i.agent_id));
                held_agents.insert(i.agent_id.as_str());
            }
        }
    }
    let mut order: Vec<usize> = (0..group.instances.len())
        .filter(|&n| {
            let i = &group.instances[n];
            i.batch > group.opened_batches && !i.terminate_sent
        })
        .collect();
    order.sort_by_key(|&n| group.instances[n].batch);
    let planned = order
        .iter()
        .filter(|&&n| group.instances[n].batch <= opening)
        .count();
    let one_each = new_ids.len().saturating_sub(opened_before);
    // Apps limited per agent (hostname UNIQUE, MAX_PER): the places the
    // new agents have left for each, less the tasks the open old agents
    // still hold, which go there first.
    let limited: Vec<(&App, u32)> = seen
        .apps
        .iter()
        .filter_map(|a| a.per_host.map(|n| (a, n)))
        .collect();
    let places: Vec<u32> = limited
        .iter()
        .map(|(app, most)| {
            let on = |agents: &HashSet<&str>| -> Vec<&str> {
                app.tasks
                    .iter()
                    .filter_map(|t| t.agent_id.as_deref())
                    .filter(|a| agents.contains(a))
                    .collect()
            };
            let on_new = on(&new_ids);
            let free: u32 = new_ids
                .iter()
                .map(|id| most.saturating_sub(count(on_new.iter().filter(|a| *a == id))))
                .sum();
            free.saturating_sub(count(on(&held_agents).iter()))
        })
        .collect();
    let candidates: Vec<surge_cap::Candidate> = order
        .iter()
        .map(|&n| {
            let agent = group.instances[n].agent_id.as_str();
            surge_cap::Candidate {
                uses: used_by(agent),
                limited: limited
                    .iter()
                    .enumerate()
                    .filter_map(|(k, (app, _))| {
                        let here = app
                            .tasks
                            .iter()
                            .filter(|t| t.agent_id.as_deref() == Some(agent));
                        Some((k, count(here))).filter(|&(_, n)| n > 0)
                    })
                    .collect(),
            }
        })
        .collect();
    let room = surge_cap::room(new_total, new_used, open_held);
    let opened = surge_cap::to_open(room, &places, &candidates, planned.max(one_each));
    for &n in &order[..opened] {
        cx.group_mut().instances[n].batch = opening;
    }
    Ok((opened, opened.saturating_sub(planned.max(one_each))))
}

fn count<T>(items: impl Iterator<Item = T>) -> u32 {
    u32::try_from(items.count()).unwrap_or(u32::MAX)
}

fn add(to: &mut Resources, more: Resources) {
    to.cpus += more.cpus;
    to.mem += more.mem;
    to.disk += more.disk;
}

/// What a batch says of the old agents it took in beyond one for each
/// new agent.
pub(super) fn beyond_said(beyond: usize) -> String {
    if beyond == 0 {
        return String::new();
    }
    format!(
        " ({beyond} of them beyond one for each new agent: the new agents' free resources \
         take their tasks, filled to at most {:.0} %)",
        surge_cap::FILL * 100.0
    )
}

/// A raise recorded whose call may never have landed (a crash between
/// the intent and the call): when the group's desired capacity is below
/// what the raise set (less the terminations landed since), the same
/// absolute value is sent again.
async fn resend_lost_raise<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    batch: u32,
) -> Result<(), RollError> {
    let group = cx.observed_group().await?;
    let record = cx.group();
    let expected = record.expected_desired(record.terminations_landed(&group));
    if group.desired_capacity >= expected {
        return Ok(());
    }
    let asg = record.asg.clone();
    cx.intend(format!(
        "set desired capacity of {asg} to {expected} again (batch {batch}: the group has {}, \
         the raise's call was lost)",
        group.desired_capacity
    ))
    .await?;
    cx.ports.aws().set_desired_capacity(&asg, expected).await?;
    Ok(())
}

/// A few ids, and how many in all when there are more.
fn named(ids: &[String]) -> String {
    if ids.len() > 3 {
        format!("{}, … {} in all", ids[..3].join(", "), ids.len())
    } else {
        ids.join(", ")
    }
}
