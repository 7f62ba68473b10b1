//! The look behind one roll per cluster (`decide::cluster_lock` judges
//! it): the groups another run has tagged with its run id, kept when any
//! of their instances is an agent of this roll's Mesos masters (a group
//! of another cluster is none of this roll's business).
//!
//! Used by the preflight (before the first checkpoint), by a resume
//! (before anything is written) and by the lock step (around its own
//! tag). Reads only.

use crate::roll::decide::cluster_lock::{LockState, OtherRun};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{AutoScaling, match_agents};
use crate::roll::ports::mesos::MesosMaster;
use crate::roll::record::env::Environment;
use crate::roll::record::{LOCK_STATE_TAG, RUN_ID_TAG};

/// The runs other than `run_id` that hold a group of this cluster other
/// than `own` (this roll's own groups answer for themselves: their tag is
/// checked where it is written).
pub(crate) async fn other_runs<P: Ports>(
    ports: P,
    env: &Environment,
    own: &[&str],
    run_id: &str,
) -> Result<Vec<OtherRun>, RollError> {
    let tagged = ports.aws().groups_tagged(RUN_ID_TAG).await?;
    let candidates: Vec<_> = tagged
        .into_iter()
        .filter(|g| !own.contains(&g.name.as_str()))
        .filter(|g| g.tag(RUN_ID_TAG).is_some_and(|id| id != run_id))
        .filter(|g| !g.instances.is_empty())
        .collect();
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let agents = ports.mesos().agents().await?;
    let identities: Vec<_> = agents.registered.iter().map(|a| a.identity()).collect();
    let mut others = Vec::new();
    for group in candidates {
        let ids: Vec<String> = group.instances.iter().map(|i| i.id.clone()).collect();
        let ec2 = ports.aws().describe_instances(&ids).await?;
        let agents = match_agents(&env.agent_match, &ec2, &identities)
            .matched
            .len();
        if agents == 0 {
            continue;
        }
        others.push(OtherRun {
            run_id: group.tag(RUN_ID_TAG).unwrap_or_default().to_string(),
            state: LockState::parse(group.tag(LOCK_STATE_TAG)),
            group: group.name,
            agents,
        });
    }
    Ok(others)
}
