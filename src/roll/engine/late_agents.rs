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
//! who it is, EC2 once per instance (`described.rs`).

use super::described::Described;
use super::tick_context::TickContext;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{LifecycleState, match_agents};
use crate::roll::record::checkpoint::{Checkpoint, NewAgent};
use crate::roll::record::env::Environment;
use crate::roll::record::kinds::GroupIndex;

/// The new agents of each group not recorded yet: instances in service
/// that were not in the group when the roll began, each matched to an
/// active Mesos agent. An instance whose agent has not registered yet is
/// looked for again next tick; EC2 is asked through `described`.
pub(crate) async fn unrecorded<P: Ports>(
    checkpoint: &Checkpoint,
    env: &Environment,
    ports: &P,
    tick: &mut TickContext<P>,
    described: &mut Described,
) -> Result<Vec<(GroupIndex, NewAgent)>, RollError> {
    let mut found = Vec::new();
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
        let ec2 = described
            .instances(ports.aws(), &env.agent_match, &late)
            .await?;
        let agents = tick.active_identities().await?;
        for (instance, agent_id) in match_agents(&env.agent_match, &ec2, &agents).matched {
            let Some(agent) = agents.iter().find(|a| a.id == agent_id) else {
                continue;
            };
            found.push((g, NewAgent::registered(instance, agent)));
        }
    }
    Ok(found)
}
