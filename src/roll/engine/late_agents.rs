//! New agents that register after a group's scale-up recorded its own:
//! the group's replacement of an instance EC2 took away (a Spot
//! interruption, a hardware failure), or any other instance launched
//! while the roll runs. Like every instance that was not in the group when
//! the roll began, each runs the new image: the failure watch looks at
//! it, and a rollback puts it under maintenance and terminates it.
//!
//! The runner looks once per tick, before the failure watch, for each
//! group whose scale-up is done. The look costs nothing more than the
//! group the tick reads anyway unless an instance in service is neither
//! an original nor a recorded new one; only then are EC2 and Mesos asked
//! who it is. EC2 is asked once per instance (its private IP and DNS
//! name never change), not every tick until its agent registers.

use std::collections::{HashMap, HashSet};

use super::tick_context::TickContext;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{
    AutoScaling, Ec2Instance, LifecycleState, instance_key, match_agents,
};
use crate::roll::record::checkpoint::{Checkpoint, NewAgent};
use crate::roll::record::env::Environment;
use crate::roll::record::kinds::GroupIndex;

/// The new agents of each group not recorded yet: instances in service
/// that were not in the group when the roll began, each matched to an
/// active Mesos agent. An instance whose agent has not registered yet is
/// looked for again next tick. `described` keeps EC2's answers across
/// ticks: each instance is described until EC2 names what it is matched
/// by, then no more; what is no longer late is forgotten.
pub(crate) async fn unrecorded<P: Ports>(
    checkpoint: &Checkpoint,
    env: &Environment,
    ports: &P,
    tick: &mut TickContext<P>,
    described: &mut HashMap<String, Ec2Instance>,
) -> Result<Vec<(GroupIndex, NewAgent)>, RollError> {
    let mut found = Vec::new();
    let mut still_late: HashSet<String> = HashSet::new();
    for (g, record) in checkpoint.indexed_groups() {
        // Before its scale-up has recorded them, every new instance is
        // the scale-up's to wait for.
        if record.new_agents.is_empty() {
            continue;
        }
        let mut known = record.original.ids_at_start();
        known.extend(record.new_agents.iter().map(|a| a.instance.as_str()));
        let group = tick.group(&record.asg).await?;
        let late: Vec<String> = group
            .instances
            .iter()
            .filter(|i| i.lifecycle_state == LifecycleState::InService)
            .filter(|i| !known.contains(i.id.as_str()))
            .map(|i| i.id.clone())
            .collect();
        if late.is_empty() {
            continue;
        }
        still_late.extend(late.iter().cloned());
        let unknown: Vec<String> = late
            .iter()
            .filter(|id| !described.contains_key(id.as_str()))
            .cloned()
            .collect();
        let mut ec2: Vec<Ec2Instance> = late
            .iter()
            .filter_map(|id| described.get(id))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            for instance in ports.aws().describe_instances(&unknown).await? {
                if instance_key(&env.agent_match, &instance).is_some() {
                    described.insert(instance.id.clone(), instance.clone());
                }
                ec2.push(instance);
            }
        }
        let agents = tick.active_identities().await?;
        for (instance, agent_id) in match_agents(&env.agent_match, &ec2, &agents).matched {
            let Some(agent) = agents.iter().find(|a| a.id == agent_id) else {
                continue;
            };
            found.push((g, NewAgent::registered(instance, agent)));
        }
    }
    described.retain(|id, _| still_late.contains(id));
    Ok(found)
}
