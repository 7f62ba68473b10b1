//! How many old agents a capped surge's batch opens to the drain
//! (`take_in`): the planned ones, one per new agent come since the batch
//! before, and more while the new agents' free resources and places take
//! their tasks (`surge_cap::to_open`). Used by the scale-up (batch 1) and
//! by each later batch's step.

use std::collections::HashSet;

use super::StepContext;
use crate::roll::decide::surge_cap;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::marathon::App;
use crate::roll::ports::mesos::Resources;

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
