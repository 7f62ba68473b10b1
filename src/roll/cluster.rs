//! The cluster as the roll sees it: the ports it reaches the world
//! through, and the views preflight and the runner both read (active
//! agents, the run-id tag, Marathon's apps with Mesos' truth applied).

use std::collections::HashSet;

use super::error::RollError;
use super::health;
use super::ports::auto_scaling::{AgentIdentity, AutoScaling, AutoScalingGroup};
use super::ports::marathon::{App, Marathon};
use super::ports::mesos::{AttributeValue, MesosMaster};

/// The tag that marks a group as being rolled, valued with the run id.
pub const RUN_ID_TAG: &str = "roller:run-id";

/// The outside world, as the roll reaches it.
pub struct Ports<'a, A, M, K, P> {
    pub aws: &'a A,
    pub mesos: &'a M,
    pub marathon: &'a K,
    pub pager: &'a P,
}

impl<A, M, K, P> Clone for Ports<'_, A, M, K, P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A, M, K, P> Copy for Ports<'_, A, M, K, P> {}

/// The group as it is now.
pub async fn describe<A: AutoScaling>(aws: &A, asg: &str) -> Result<AutoScalingGroup, RollError> {
    Ok(aws.describe_group(asg).await?)
}

/// Active agents as identities to match instances against.
pub async fn active_agents<M: MesosMaster>(mesos: &M) -> Result<Vec<AgentIdentity>, RollError> {
    let agents = mesos.agents().await?;
    Ok(agents
        .registered
        .into_iter()
        .filter(|a| a.active)
        .map(|a| AgentIdentity {
            id: a.id.0,
            hostname: a.hostname,
            ip: a.ip,
            attributes: a
                .attributes
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        AttributeValue::Text(t) => t,
                        AttributeValue::Scalar(s) => s.to_string(),
                    };
                    (k, v)
                })
                .collect(),
        })
        .collect())
}

/// Ids of the agents Mesos has active now.
pub async fn active_agent_ids<M: MesosMaster>(mesos: &M) -> Result<HashSet<String>, RollError> {
    let agents = mesos.agents().await?;
    Ok(agents
        .registered
        .into_iter()
        .filter(|a| a.active)
        .map(|a| a.id.0)
        .collect())
}

/// Marathon's apps, with the tasks on agents Mesos no longer has taken
/// out (see `health::drop_tasks_on_lost_agents`), and how many were.
pub async fn apps_as_mesos_sees_them<M: MesosMaster, K: Marathon>(
    mesos: &M,
    marathon: &K,
) -> Result<(Vec<App>, usize), RollError> {
    let mut apps = marathon.apps().await?;
    let active = active_agent_ids(mesos).await?;
    let lost = health::drop_tasks_on_lost_agents(&mut apps, &active);
    Ok((apps, lost))
}

pub fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
