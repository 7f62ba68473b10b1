//! `MixedInstancesPolicy` on the wire: the policy DescribeAutoScalingGroups
//! answers (`LaunchTemplate` with its specification and overrides,
//! `InstancesDistribution` with AWS's defaults filled in, as AWS describes
//! them back), and the policy UpdateAutoScalingGroup reads from the Query
//! protocol's flattened names (`MixedInstancesPolicy.LaunchTemplate.
//! Overrides.member.1.InstanceType`, …).

use super::query::{Params, QueryError};
use super::xml::Xml;
use crate::sim::world::{
    LaunchTemplateChoice, LaunchTemplateView, MixedPolicyView, MixedUpdate, OverrideUpdate,
};

const PREFIX: &str = "MixedInstancesPolicy.";
const SPEC: &str = "LaunchTemplate.LaunchTemplateSpecification.";
const OVERRIDES: &str = "MixedInstancesPolicy.LaunchTemplate.Overrides.member";
const DISTRIBUTION: &str = "InstancesDistribution.";

/// The distribution members the world follows or describes back; the
/// others (SpotMaxPrice, other on-demand strategies) it does not model.
const DISTRIBUTION_MEMBERS: &[&str] = &[
    "OnDemandAllocationStrategy",
    "OnDemandBaseCapacity",
    "OnDemandPercentageAboveBaseCapacity",
    "SpotAllocationStrategy",
    "SpotInstancePools",
];

fn spec_xml(x: &mut Xml, tag: &str, t: &LaunchTemplateView) {
    x.open(tag)
        .leaf("LaunchTemplateId", &t.id)
        .leaf("LaunchTemplateName", &t.name)
        .leaf("Version", &t.version)
        .close(tag);
}

/// `<MixedInstancesPolicy>` of a group.
pub(super) fn policy_xml(x: &mut Xml, p: &MixedPolicyView) {
    x.open("MixedInstancesPolicy").open("LaunchTemplate");
    spec_xml(x, "LaunchTemplateSpecification", &p.launch_template);
    x.open("Overrides");
    for (instance_type, own) in &p.overrides {
        x.open("member").leaf("InstanceType", instance_type);
        if let Some(own) = own {
            spec_xml(x, "LaunchTemplateSpecification", own);
        }
        x.close("member");
    }
    x.close("Overrides")
        .close("LaunchTemplate")
        .open("InstancesDistribution")
        .leaf("OnDemandAllocationStrategy", "prioritized")
        .leaf("OnDemandBaseCapacity", p.on_demand_base_capacity)
        .leaf(
            "OnDemandPercentageAboveBaseCapacity",
            p.on_demand_percentage_above_base_capacity,
        )
        .leaf("SpotAllocationStrategy", &p.spot_allocation_strategy);
    // AWS describes SpotInstancePools (default 2) only with lowest-price.
    if p.spot_allocation_strategy == "lowest-price" {
        x.leaf("SpotInstancePools", 2);
    }
    x.close("InstancesDistribution")
        .close("MixedInstancesPolicy");
}

/// Whether `name` is a parameter of the policy the world reads.
pub(super) fn is_policy_param(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return false;
    };
    let spec_member = |s: &str| matches!(s, "LaunchTemplateId" | "LaunchTemplateName" | "Version");
    if let Some(member) = rest.strip_prefix(SPEC) {
        return spec_member(member);
    }
    if let Some(member) = rest.strip_prefix(DISTRIBUTION) {
        return DISTRIBUTION_MEMBERS.contains(&member);
    }
    if let Some(field) = name
        .strip_prefix(OVERRIDES)
        .and_then(|r| r.strip_prefix('.'))
        .and_then(|r| r.split_once('.'))
        .map(|(_, field)| field)
    {
        return matches!(field, "InstanceType" | "WeightedCapacity")
            || field
                .strip_prefix("LaunchTemplateSpecification.")
                .is_some_and(spec_member);
    }
    false
}

fn choice(get: impl Fn(&str) -> Option<String>) -> Option<LaunchTemplateChoice> {
    let choice = LaunchTemplateChoice {
        id: get("LaunchTemplateId"),
        name: get("LaunchTemplateName"),
        version: get("Version"),
    };
    (choice != LaunchTemplateChoice::default()).then_some(choice)
}

/// The request's `MixedInstancesPolicy`, if it has one.
pub(super) fn policy_update(p: &Params) -> Result<Option<MixedUpdate>, QueryError> {
    if !p.names().any(|n| n.starts_with(PREFIX)) {
        return Ok(None);
    }
    let dist = |member: &str| format!("{PREFIX}{DISTRIBUTION}{member}");
    if let Some(strategy) = p.get(&dist("OnDemandAllocationStrategy"))
        && strategy != "prioritized"
    {
        return Err(QueryError::sender(
            "ValidationError",
            format!("The simulator launches on-demand instances by priority, not {strategy}"),
        ));
    }
    let structs = p.structs(OVERRIDES);
    let overrides = (!structs.is_empty()).then(|| {
        structs
            .iter()
            .map(|fields| OverrideUpdate {
                instance_type: fields.get("InstanceType").cloned(),
                weighted_capacity: fields.get("WeightedCapacity").cloned(),
                template: choice(|m| {
                    fields
                        .get(&format!("LaunchTemplateSpecification.{m}"))
                        .cloned()
                }),
            })
            .collect()
    });
    Ok(Some(MixedUpdate {
        template: choice(|m| p.get(&format!("{PREFIX}{SPEC}{m}")).map(str::to_string)),
        overrides,
        on_demand_base_capacity: p.size(&dist("OnDemandBaseCapacity"))?,
        on_demand_percentage_above_base_capacity: p
            .size(&dist("OnDemandPercentageAboveBaseCapacity"))?,
        spot_allocation_strategy: p.get(&dist("SpotAllocationStrategy")).map(str::to_string),
    }))
}
