//! DescribeInstances as the EC2 SDK reads it: every element a client of a
//! VPC instance launched by Auto Scaling reads, with its value from the
//! world, and what a terminated instance has lost.

use aws_sdk_ec2::types::{
    HttpTokensState, Instance, InstanceMetadataEndpointState, InstanceMetadataOptionsState,
    InstanceStateName,
};

use crate::aws::contract::simulator::Simulated;
use crate::sim::Scenario;

/// 2024-01-01T00:00:00Z, so that launch times are known.
const EPOCH_S: u64 = 1_704_067_200;

async fn demo() -> Simulated {
    started("demo").await
}

async fn started(name: &str) -> Simulated {
    let mut scenario = Scenario::builtin(name).expect("embedded").expect("valid");
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

        // A private agent's instance: no public address, an empty name.
        assert_eq!(i.public_ip_address(), None);
        assert_eq!(i.public_dns_name().unwrap_or(""), "");
        assert!(eni.association().is_none());
        // Linux: EC2 writes `platform` only for Windows.
        assert_eq!(i.platform(), None);
        assert_eq!(i.platform_details(), Some("Linux/UNIX"));
        assert_eq!(i.sriov_net_support(), Some("simple"));
        let imds = i.metadata_options().expect("metadataOptions");
        assert_eq!(imds.state(), Some(&InstanceMetadataOptionsState::Applied));
        assert_eq!(imds.http_tokens(), Some(&HttpTokensState::Optional));
        assert_eq!(imds.http_put_response_hop_limit(), Some(1));
        assert_eq!(
            imds.http_endpoint(),
            Some(&InstanceMetadataEndpointState::Enabled)
        );
    }
}

#[tokio::test]
async fn a_public_agents_instance_has_a_public_address_on_itself_and_its_interface() {
    let sim = started("cluster").await;
    let truth = sim.world().with(|w| w.ec2_instances(&[])).expect("all");
    let all = instances(&sim).await;
    let mut public = 0;
    for (i, real) in all.iter().zip(&truth) {
        let [eni] = i.network_interfaces() else {
            panic!("one network interface");
        };
        if !real.public_subnet {
            assert_eq!(i.public_ip_address(), None, "{}", real.group_name);
            continue;
        }
        public += 1;
        let ip = i.public_ip_address().expect("a public address");
        let octets: Vec<u8> = ip
            .split('.')
            .map(|o| o.parse().expect("an octet"))
            .collect();
        assert_eq!(octets.len(), 4, "{ip}");
        assert_eq!(octets[0], 54, "{ip}");
        let name = format!("ec2-{}.compute-1.amazonaws.com", ip.replace('.', "-"));
        assert_eq!(i.public_dns_name(), Some(name.as_str()));
        let association = eni.association().expect("the interface's association");
        assert_eq!(association.public_ip(), Some(ip));
        assert_eq!(association.public_dns_name(), Some(name.as_str()));
        assert_eq!(association.ip_owner_id(), Some("amazon"));
    }
    assert_eq!(public, 5);
    let addresses: std::collections::BTreeSet<_> =
        all.iter().filter_map(|i| i.public_ip_address()).collect();
    assert_eq!(addresses.len(), public, "each its own address");
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
    assert_eq!(gone.public_ip_address(), None);
    assert_eq!(
        gone.state_reason().and_then(|r| r.code()),
        Some("Client.UserInitiatedShutdown")
    );
    assert_eq!(
        gone.state_reason().and_then(|r| r.message()),
        Some("Client.UserInitiatedShutdown: User initiated shutdown")
    );
}
