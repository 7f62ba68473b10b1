//! The EC2 action (API version 2016-11-15) the AWS adapter uses:
//! DescribeInstances, by `InstanceId.N` (unknown ids are an error, as on
//! EC2) or by filters (unknown ids are simply absent), paged by
//! `MaxResults`/`NextToken`, each instance in its own reservation.
//!
//! An instance carries what a VPC instance launched by Auto Scaling from
//! a launch template shows: its primary network interface (with the
//! private address and name clients read there), its root EBS volume, the
//! group's security group; a terminated one has lost its address, its
//! interface and its volume, and says why it stopped (`stateReason`).
//! A public agent's instance (a `slave_public` group's) also has a public
//! address and name, which it loses on termination. The image is Linux
//! (`platformDetails` Linux/UNIX, and no `platform`: EC2 writes that only
//! for Windows) registered as Amazon Linux's HVM images are, with ENA and
//! `sriovNetSupport` set; the metadata service has EC2's defaults.

use std::collections::BTreeSet;

use super::query::{Params, QueryError, Service, page};
use super::xml::{Xml, timestamp};
use super::{ACCOUNT, region_of};
use crate::sim::world::ids::{stable_hex, subnet_id};
use crate::sim::world::{Ec2InstanceView, World};

#[cfg(test)]
mod tests;

/// EC2's bounds for DescribeInstances' MaxResults.
const MIN_RESULTS: i64 = 5;
const MAX_RESULTS: i64 = 1000;

pub(super) const ACTIONS: &[&str] = &["DescribeInstances"];

pub(super) fn dispatch(
    w: &mut World,
    action: &str,
    p: &Params,
) -> Option<Result<Option<String>, QueryError>> {
    match action {
        "DescribeInstances" => Some(describe_instances(w, p).map(Some)),
        _ => None,
    }
}

/// One filter of the few the simulator understands.
enum Filter {
    InstanceId(BTreeSet<String>),
    State(BTreeSet<String>),
    Zone(BTreeSet<String>),
    PrivateIp(BTreeSet<String>),
    PrivateDns(BTreeSet<String>),
    /// `tag:aws:autoscaling:groupName`: every simulated instance was
    /// launched by a group, which tags it so.
    GroupName(BTreeSet<String>),
}

impl Filter {
    fn parse(name: &str, values: Vec<String>) -> Result<Filter, QueryError> {
        let values: BTreeSet<String> = values.into_iter().collect();
        match name {
            "instance-id" => Ok(Filter::InstanceId(values)),
            "instance-state-name" => Ok(Filter::State(values)),
            "availability-zone" => Ok(Filter::Zone(values)),
            "private-ip-address" => Ok(Filter::PrivateIp(values)),
            "private-dns-name" => Ok(Filter::PrivateDns(values)),
            "tag:aws:autoscaling:groupName" => Ok(Filter::GroupName(values)),
            other => Err(QueryError::sender(
                "InvalidParameterValue",
                format!("The filter '{other}' is invalid"),
            )),
        }
    }

    fn matches(&self, i: &Ec2InstanceView) -> bool {
        match self {
            Filter::InstanceId(ids) => ids.contains(&i.instance_id),
            Filter::State(states) => states.contains(i.state),
            Filter::Zone(zones) => zones.contains(&i.availability_zone),
            Filter::PrivateIp(ips) => ips.contains(&i.private_ip_address),
            Filter::PrivateDns(names) => names.contains(&i.private_dns_name),
            Filter::GroupName(groups) => groups.contains(&i.group_name),
        }
    }
}

fn describe_instances(w: &mut World, p: &Params) -> Result<String, QueryError> {
    if p.bool("DryRun")? == Some(true) {
        return Err(QueryError {
            status: axum::http::StatusCode::PRECONDITION_FAILED,
            code: "DryRunOperation".into(),
            message: "Request would have succeeded, but DryRun flag is set.".into(),
            sender: true,
        });
    }
    let ids = p.list("InstanceId");
    let max = p.int("MaxResults")?;
    if !ids.is_empty() && max.is_some() {
        return Err(QueryError::sender(
            "InvalidParameterCombination",
            "The parameter instancesSet cannot be used with the parameter maxResults",
        ));
    }
    let max = match max {
        None => usize::MAX,
        Some(n) if (MIN_RESULTS..=MAX_RESULTS).contains(&n) => n as usize,
        Some(n) => {
            return Err(QueryError::sender(
                "InvalidParameterValue",
                format!(
                    "Value ( {n} ) for parameter maxResults is invalid. Expecting a value between {MIN_RESULTS} and {MAX_RESULTS}."
                ),
            ));
        }
    };
    if let Some(bad) = ids.iter().find(|id| !id.starts_with("i-")) {
        return Err(QueryError::sender(
            "InvalidInstanceID.Malformed",
            format!("Invalid id: \"{bad}\""),
        ));
    }
    let filters = p
        .filters()
        .into_iter()
        .map(|(name, values)| Filter::parse(&name, values))
        .collect::<Result<Vec<_>, _>>()?;
    let found = w
        .ec2_instances(&ids)
        .map_err(|e| QueryError::sender(e.code(), e.aws_message()))?;
    let found: Vec<Ec2InstanceView> = found
        .into_iter()
        .filter(|i| filters.iter().all(|f| f.matches(i)))
        .collect();
    let (instances, next) = page(
        Service::Ec2,
        found,
        |i| i.instance_id.as_str(),
        p.get("NextToken"),
        max,
    )?;
    let mut x = Xml::new();
    x.open("reservationSet");
    for i in &instances {
        reservation_xml(&mut x, i);
    }
    x.close("reservationSet").opt_leaf("nextToken", next);
    Ok(x.finish())
}

/// EC2's numeric state codes.
fn state_code(name: &str) -> u16 {
    match name {
        "pending" => 0,
        "running" => 16,
        "shutting-down" => 32,
        "terminated" => 48,
        "stopping" => 64,
        _ => 80,
    }
}

/// One reservation per instance, as Auto Scaling launches them one by one.
fn reservation_xml(x: &mut Xml, i: &Ec2InstanceView) {
    let suffix = i.instance_id.trim_start_matches("i-");
    let terminated = i.state == "terminated";
    let public_ip = (i.public_subnet && !terminated).then(|| public_ip_address(i));
    x.open("item")
        .leaf("reservationId", format!("r-{suffix}"))
        .leaf("ownerId", ACCOUNT)
        .leaf("requesterId", "940372691376")
        .empty("groupSet")
        .open("instancesSet")
        .open("item")
        .leaf("instanceId", &i.instance_id)
        // One image per launch template version: a new version is a new
        // image, as an operator publishes one.
        .leaf(
            "imageId",
            format!(
                "ami-0{}",
                stable_hex(
                    &format!("{}/{}", i.launch_template.name, i.launch_template.version),
                    16
                )
            ),
        )
        .open("instanceState")
        .leaf("code", state_code(i.state))
        .leaf("name", i.state)
        .close("instanceState");
    // A terminated instance has lost its private address and name.
    if terminated {
        x.empty("privateDnsName");
    } else {
        x.leaf("privateDnsName", &i.private_dns_name);
    }
    match &public_ip {
        Some(ip) => x.leaf(
            "dnsName",
            public_dns_name(ip, region_of(&i.availability_zone)),
        ),
        None => x.empty("dnsName"),
    };
    if i.spot {
        x.leaf("instanceLifecycle", "spot");
    }
    x.empty("reason")
        .leaf("amiLaunchIndex", 0)
        .empty("productCodes")
        .leaf("instanceType", &i.instance_type)
        .leaf("launchTime", timestamp(i.launch_unix_ms))
        .open("placement")
        .leaf("availabilityZone", &i.availability_zone)
        .empty("groupName")
        .leaf("tenancy", "default")
        .close("placement")
        .open("monitoring")
        .leaf("state", "disabled")
        .close("monitoring");
    if !terminated {
        x.leaf("subnetId", subnet_id(&i.availability_zone))
            .leaf(
                "vpcId",
                format!("vpc-0{}", stable_hex(region_of(&i.availability_zone), 16)),
            )
            .leaf("privateIpAddress", &i.private_ip_address)
            .opt_leaf("ipAddress", public_ip.as_deref());
    }
    x.leaf("sourceDestCheck", true);
    security_groups(x, i);
    if matches!(i.state, "shutting-down" | "terminated") {
        x.open("stateReason")
            .leaf("code", "Client.UserInitiatedShutdown")
            .leaf(
                "message",
                "Client.UserInitiatedShutdown: User initiated shutdown",
            )
            .close("stateReason");
    }
    x.leaf("architecture", "x86_64")
        .leaf("rootDeviceType", "ebs")
        .leaf("rootDeviceName", ROOT_DEVICE);
    if terminated {
        x.empty("blockDeviceMapping");
    } else {
        x.open("blockDeviceMapping")
            .open("item")
            .leaf("deviceName", ROOT_DEVICE)
            .open("ebs")
            .leaf(
                "volumeId",
                format!(
                    "vol-0{}",
                    stable_hex(&format!("{}/root", i.instance_id), 16)
                ),
            )
            .leaf("status", "attached")
            .leaf("attachTime", timestamp(i.launch_unix_ms))
            .leaf("deleteOnTermination", true)
            .close("ebs")
            .close("item")
            .close("blockDeviceMapping");
    }
    x.leaf("virtualizationType", "hvm")
        .leaf(
            "clientToken",
            stable_hex(&format!("{}/token", i.instance_id), 32),
        )
        .open("tagSet")
        .open("item")
        .leaf("key", "aws:autoscaling:groupName")
        .leaf("value", &i.group_name)
        .close("item")
        .open("item")
        .leaf("key", "aws:ec2launchtemplate:id")
        .leaf("value", &i.launch_template.id)
        .close("item")
        .open("item")
        .leaf("key", "aws:ec2launchtemplate:version")
        .leaf("value", &i.launch_template.version)
        .close("item")
        .close("tagSet")
        .leaf("hypervisor", "xen");
    if terminated {
        x.empty("networkInterfaceSet");
    } else {
        network_interface_xml(x, i, public_ip.as_deref());
    }
    x.leaf("ebsOptimized", false)
        .leaf("enaSupport", true)
        .leaf("sriovNetSupport", "simple")
        .leaf("platformDetails", "Linux/UNIX")
        .leaf("usageOperation", "RunInstances")
        .leaf("usageOperationUpdateTime", timestamp(i.launch_unix_ms));
    metadata_options_xml(x);
    x.close("item").close("instancesSet").close("item");
}

/// The instance metadata service as EC2 sets it up when neither the
/// launch template nor the image (no `ImdsSupport`) nor the account says
/// otherwise: IMDSv1 and v2 both allowed, one hop, IPv4 only, no tags.
fn metadata_options_xml(x: &mut Xml) {
    x.open("metadataOptions")
        .leaf("state", "applied")
        .leaf("httpTokens", "optional")
        .leaf("httpPutResponseHopLimit", 1)
        .leaf("httpEndpoint", "enabled")
        .leaf("httpProtocolIpv6", "disabled")
        .leaf("instanceMetadataTags", "disabled")
        .close("metadataOptions");
}

/// A public address from Amazon's pool (54.0.0.0/8), the same for an
/// instance every time it is described.
fn public_ip_address(i: &Ec2InstanceView) -> String {
    let hex = stable_hex(&format!("{}/public-ip", i.instance_id), 6);
    let byte = |n: usize| u8::from_str_radix(&hex[2 * n..2 * n + 2], 16).unwrap_or(0);
    format!("54.{}.{}.{}", byte(0), byte(1), byte(2) % 254 + 1)
}

/// EC2's public DNS name of a public address: `compute-1` in us-east-1,
/// `<region>.compute` elsewhere.
fn public_dns_name(ip: &str, region: &str) -> String {
    let dashed = ip.replace('.', "-");
    if region == "us-east-1" {
        format!("ec2-{dashed}.compute-1.amazonaws.com")
    } else {
        format!("ec2-{dashed}.{region}.compute.amazonaws.com")
    }
}

/// The public address as an interface carries it (`association`), owned
/// by Amazon (not an Elastic IP of the account).
fn association_xml(x: &mut Xml, ip: &str, region: &str) {
    x.open("association")
        .leaf("publicIp", ip)
        .leaf("publicDnsName", public_dns_name(ip, region))
        .leaf("ipOwnerId", "amazon")
        .close("association");
}

/// The root device of the simulated image.
const ROOT_DEVICE: &str = "/dev/xvda";

/// The group's security group (`groupSet` of the instance and of its
/// interface): one per Auto Scaling group, named after it.
fn security_groups(x: &mut Xml, i: &Ec2InstanceView) {
    x.open("groupSet")
        .open("item")
        .leaf("groupId", format!("sg-0{}", stable_hex(&i.group_name, 16)))
        .leaf("groupName", &i.group_name)
        .close("item")
        .close("groupSet");
}

/// The primary network interface (device 0), attached at launch: where
/// clients find the private address and name when they do not read the
/// instance's own.
fn network_interface_xml(x: &mut Xml, i: &Ec2InstanceView, public_ip: Option<&str>) {
    let region = region_of(&i.availability_zone);
    let eni = stable_hex(&format!("{}/eni", i.instance_id), 17);
    let mac = stable_hex(&format!("{}/mac", i.instance_id), 10);
    let mac: Vec<&str> = (0..5).map(|n| &mac[2 * n..2 * n + 2]).collect();
    x.open("networkInterfaceSet")
        .open("item")
        .leaf("networkInterfaceId", format!("eni-{eni}"))
        .leaf("subnetId", subnet_id(&i.availability_zone))
        .leaf(
            "vpcId",
            format!("vpc-0{}", stable_hex(region_of(&i.availability_zone), 16)),
        )
        .empty("description")
        .leaf("ownerId", ACCOUNT)
        .leaf("status", "in-use")
        .leaf("macAddress", format!("0a:{}", mac.join(":")))
        .leaf("privateIpAddress", &i.private_ip_address)
        .leaf("privateDnsName", &i.private_dns_name)
        .leaf("sourceDestCheck", true);
    security_groups(x, i);
    if let Some(ip) = public_ip {
        association_xml(x, ip, region);
    }
    x.open("attachment")
        .leaf(
            "attachmentId",
            format!("eni-attach-0{}", stable_hex(&eni, 16)),
        )
        .leaf("deviceIndex", 0)
        .leaf("networkCardIndex", 0)
        .leaf("status", "attached")
        .leaf("attachTime", timestamp(i.launch_unix_ms))
        .leaf("deleteOnTermination", true)
        .close("attachment")
        .open("privateIpAddressesSet")
        .open("item")
        .leaf("privateIpAddress", &i.private_ip_address)
        .leaf("privateDnsName", &i.private_dns_name)
        .leaf("primary", true);
    if let Some(ip) = public_ip {
        association_xml(x, ip, region);
    }
    x.close("item")
        .close("privateIpAddressesSet")
        .empty("ipv6AddressesSet")
        .leaf("interfaceType", "interface")
        .close("item")
        .close("networkInterfaceSet");
}
