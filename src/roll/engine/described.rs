//! EC2's descriptions of the roll's new instances, kept for the life of
//! the process. A new instance is matched to its Mesos agent by what EC2
//! says of it (its private IP, its private DNS name, or its id), and an
//! instance keeps that for its life: once EC2 has said it, asking again
//! tells nothing new. The scale-up's and each batch's wait for new agents
//! and the look for late agents all ask here, so each instance is
//! described until EC2 names what it is matched by, then no more, instead
//! of every tick until its agent registers (at 2,000 agents, 2,000 ids a
//! tick in calls of 200, each parsed from EC2's XML; DescribeInstances is
//! also throttled account-wide).
//!
//! It holds at most one entry per instance launched while this process
//! runs (a few hundred bytes each); a resumed run starts empty and asks
//! again.

use std::collections::HashMap;

use crate::roll::ports::auto_scaling::{
    AgentMatch, AutoScaling, AutoScalingError, Ec2Instance, instance_key,
};

/// EC2's answers that name what their instance is matched by. The rest
/// of a kept answer (its state) is as EC2 said it then: callers match by
/// the key (`instance_key`) and nothing else.
#[derive(Debug, Default)]
pub(crate) struct Described {
    kept: HashMap<String, Ec2Instance>,
}

impl Described {
    /// EC2's description of each of `ids` EC2 knows, in the order of
    /// `ids`: kept answers for those it has named `how`'s key of, one
    /// DescribeInstances (in calls of its page size) for the rest, if any.
    pub(crate) async fn instances<A: AutoScaling>(
        &mut self,
        aws: &A,
        how: &AgentMatch,
        ids: &[String],
    ) -> Result<Vec<Ec2Instance>, AutoScalingError> {
        let unknown: Vec<String> = ids
            .iter()
            .filter(|id| !self.kept.contains_key(id.as_str()))
            .cloned()
            .collect();
        let mut fresh: HashMap<String, Ec2Instance> = HashMap::new();
        if !unknown.is_empty() {
            for instance in aws.describe_instances(&unknown).await? {
                if instance_key(how, &instance).is_some() {
                    self.kept.insert(instance.id.clone(), instance);
                } else {
                    fresh.insert(instance.id.clone(), instance);
                }
            }
        }
        Ok(ids
            .iter()
            .filter_map(|id| self.kept.get(id).cloned().or_else(|| fresh.remove(id)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::Described;
    use crate::roll::ports::auto_scaling::{AgentMatch, AutoScaling};
    use crate::roll::tests::in_process::cluster;
    use crate::simulated::SimulatedCluster;

    /// DescribeInstances calls the simulated EC2 has answered.
    fn calls(cluster: &SimulatedCluster) -> u64 {
        let report = cluster.sim.report();
        report
            .api_calls
            .get("aws:DescribeInstances")
            .copied()
            .unwrap_or(0)
    }

    #[tokio::test(start_paused = true)]
    async fn an_instance_is_described_until_ec2_names_its_key_then_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cluster = cluster("msr-55", dir.path()).await;
        let asg = cluster.env.groups[0].asg.clone();
        let group = cluster.aws.describe_group(&asg).await.expect("group");
        let ids: Vec<String> = group
            .instances
            .iter()
            .take(4)
            .map(|i| i.id.clone())
            .collect();
        let how = AgentMatch::PrivateIp;
        let mut described = Described::default();

        let before = calls(&cluster);
        let first = described
            .instances(&cluster.aws, &how, &ids[..3])
            .await
            .expect("described");
        let got: Vec<&str> = first.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(got, ids[..3].iter().map(String::as_str).collect::<Vec<_>>());
        assert!(first.iter().all(|i| i.private_ip.is_some()));
        assert_eq!(calls(&cluster), before + 1);

        // Asked again, in another order: the kept answers, no call.
        let again: Vec<String> = ids[..3].iter().rev().cloned().collect();
        let second = described
            .instances(&cluster.aws, &how, &again)
            .await
            .expect("described");
        let got: Vec<&str> = second.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(got, again.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(calls(&cluster), before + 1);

        // One more instance, and one EC2 does not know: one call, for
        // what is not kept; the unknown one is left out and asked again
        // next time (nothing was said of it to keep).
        let mut more = ids.clone();
        more.push("i-0000000000000dead".to_string());
        for n in 1..=2 {
            let third = described
                .instances(&cluster.aws, &how, &more)
                .await
                .expect("described");
            assert_eq!(third.len(), 4);
            assert_eq!(third[3].id, ids[3]);
            assert_eq!(calls(&cluster), before + 1 + n);
        }
        cluster.sim.shutdown().await;
    }
}
