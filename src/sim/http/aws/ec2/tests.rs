//! DescribeInstances as the EC2 SDK reads it: every element a client of a
//! VPC instance launched by Auto Scaling reads, with its value from the
//! world, and what a terminated instance has lost.

use aws_sdk_ec2::types::{Instance, InstanceStateName};

use crate::aws::contract::simulator::Simulated;
use crate::sim::Scenario;

/// 2024-01-01T00:00:00Z, so that launch times are known.
const EPOCH_S: u64 = 1_704_067_200;

async fn demo() -> Simulated {
    let mut scenario = Scenario::builtin("demo")
        .expect("demo is embedded")
        .expect("demo is valid");
    scenario.timings.epoch_unix_s = Some(EPOCH_S);
    Simulated::start(&scenario).await
}

async fn instances(sim: &Simulated) -> Vec<Instance> {
    let out = sim
        .raw_ec2()
        .describe_instances()
        .send()
        .await
        .expect("described");
    out.reservations()
        .iter()
        .flat_map(|r| r.instances())
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_running_instance_has_its_identity_placement_tags_network_interface_and_root_volume() {
    let sim = demo().await;
    let truth = sim.world().with(|w| w.ec2_instances(&[])).expect("all");
    let all = instances(&sim).await;
    assert_eq!(all.len(), truth.len());
    for (i, real) in all.iter().zip(&truth) {
        assert_eq!(i.instance_id(), Some(real.instance_id.as_str()));
        assert_eq!(i.private_dns_name(), Some(real.private_dns_name.as_str()));
        assert_eq!(
            i.private_ip_address(),
            Some(real.private_ip_address.as_str())
        );
        assert!(i.image_id().is_some_and(|a| a.starts_with("ami-")));
        assert!(i.instance_type().is_some());
        assert_eq!(
            i.state().and_then(|s| s.name()),
            Some(&InstanceStateName::Running)
        );
        let launched = i.launch_time().expect("launchTime").secs();
        assert_eq!(launched as u64 * 1000, real.launch_unix_ms / 1000 * 1000);
        assert_eq!(
            i.placement().and_then(|p| p.availability_zone()),
            Some(real.availability_zone.as_str())
        );
        let tags: Vec<(&str, &str)> = i
            .tags()
            .iter()
            .map(|t| (t.key().unwrap_or(""), t.value().unwrap_or("")))
            .collect();
        assert!(tags.contains(&("aws:autoscaling:groupName", real.group_name.as_str())));

        let [eni] = i.network_interfaces() else {
            panic!("one network interface: {:?}", i.network_interfaces());
        };
        assert!(
            eni.network_interface_id()
                .is_some_and(|n| n.starts_with("eni-"))
        );
        assert_eq!(eni.private_ip_address(), i.private_ip_address());
        assert_eq!(eni.private_dns_name(), i.private_dns_name());
        assert_eq!(eni.subnet_id(), i.subnet_id());
        assert_eq!(eni.vpc_id(), i.vpc_id());
        assert!(eni.mac_address().is_some_and(|m| m.len() == 17));
        assert_eq!(eni.attachment().and_then(|a| a.device_index()), Some(0));
        let [primary] = eni.private_ip_addresses() else {
            panic!("one private address");
        };
        assert_eq!(primary.primary(), Some(true));
        assert_eq!(primary.private_ip_address(), i.private_ip_address());
        assert_eq!(eni.groups(), i.security_groups());
        assert_eq!(i.security_groups().len(), 1);

        let [root] = i.block_device_mappings() else {
            panic!("one root volume");
        };
        assert_eq!(root.device_name(), i.root_device_name());
        assert!(
            root.ebs()
                .and_then(|e| e.volume_id())
                .is_some_and(|v| v.starts_with("vol-"))
        );
        assert!(i.state_reason().is_none());
    }
}

#[tokio::test]
async fn a_terminated_instance_has_lost_its_address_interface_and_volume_and_says_why() {
    let sim = demo().await;
    let id = instances(&sim).await[0]
        .instance_id()
        .expect("an id")
        .to_string();
    sim.world()
        .with(|w| w.terminate_instance(&id, false))
        .expect("terminated");
    sim.world().with(|w| w.advance_by_ms(600_000));
    let gone = instances(&sim)
        .await
        .into_iter()
        .find(|i| i.instance_id() == Some(id.as_str()))
        .expect("still described");
    assert_eq!(
        gone.state().and_then(|s| s.name()),
        Some(&InstanceStateName::Terminated)
    );
    assert!(gone.network_interfaces().is_empty());
    assert!(gone.block_device_mappings().is_empty());
    assert_eq!(gone.private_ip_address(), None);
    assert_eq!(
        gone.state_reason().and_then(|r| r.code()),
        Some("Client.UserInitiatedShutdown")
    );
}
