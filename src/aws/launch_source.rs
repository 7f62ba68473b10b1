//! Launch sources between the SDK and the port: a group's launch template,
//! launch configuration or mixed instances policy read into
//! `LaunchSource`, and the `MixedInstancesPolicy` an UpdateAutoScalingGroup
//! sends back. A policy is written as it was read (overrides with their
//! instance requirements, the distribution with its allocation
//! strategies, whatever the port does not model), with only template
//! versions changed: AWS documents no merge of a partial policy, so
//! nothing is left for it to fill in or clear.

use aws_sdk_autoscaling::types as asg;

use crate::roll::ports::auto_scaling::LaunchSource;
use crate::roll::ports::mixed_instances::{
    InstanceOverride, InstancesDistribution, MixedInstancesPolicy, TemplateRef,
};

/// A group's launch source: its policy, its template or its launch
/// configuration (AWS gives a group exactly one of them).
pub(super) fn group_source(g: &asg::AutoScalingGroup) -> Option<LaunchSource> {
    if let Some(policy) = g.mixed_instances_policy() {
        return Some(LaunchSource::MixedInstances(policy_from(policy)));
    }
    instance_source(g.launch_template(), g.launch_configuration_name())
}

/// What an instance launched from: a template or a launch configuration.
pub(super) fn instance_source(
    template: Option<&asg::LaunchTemplateSpecification>,
    configuration: Option<&str>,
) -> Option<LaunchSource> {
    source_from(template.map(template_ref), configuration)
}

/// A launch source from what AWS named: the template if there is one (AWS
/// gives exactly one of the two), else the launch configuration.
pub(super) fn source_from(
    template: Option<TemplateRef>,
    configuration: Option<&str>,
) -> Option<LaunchSource> {
    if let Some(TemplateRef { id, name, version }) = template {
        return Some(LaunchSource::Template { id, name, version });
    }
    configuration.map(|name| LaunchSource::Configuration {
        name: name.to_string(),
    })
}

pub(super) fn template_ref(t: &asg::LaunchTemplateSpecification) -> TemplateRef {
    TemplateRef {
        id: t.launch_template_id().map(str::to_string),
        name: t.launch_template_name().map(str::to_string),
        version: t.version().map(str::to_string),
    }
}

/// A count AWS sends as an integer; a negative one (never sent) reads as
/// unset rather than failing the whole group.
fn count(n: Option<i32>) -> Option<u32> {
    n.and_then(|n| u32::try_from(n).ok())
}

fn policy_from(p: &asg::MixedInstancesPolicy) -> MixedInstancesPolicy {
    let template = p.launch_template();
    let d = p.instances_distribution();
    MixedInstancesPolicy {
        template: template
            .and_then(|t| t.launch_template_specification())
            .map(template_ref)
            .unwrap_or(TemplateRef {
                id: None,
                name: None,
                version: None,
            }),
        overrides: template
            .map(|t| t.overrides())
            .unwrap_or_default()
            .iter()
            .map(|o| InstanceOverride {
                instance_type: o.instance_type().map(str::to_string),
                weighted_capacity: o.weighted_capacity().map(str::to_string),
                template: o.launch_template_specification().map(template_ref),
            })
            .collect(),
        distribution: InstancesDistribution {
            on_demand_allocation_strategy: d
                .and_then(|d| d.on_demand_allocation_strategy())
                .map(str::to_string),
            on_demand_base_capacity: count(d.and_then(|d| d.on_demand_base_capacity())),
            on_demand_percentage_above_base_capacity: count(
                d.and_then(|d| d.on_demand_percentage_above_base_capacity()),
            ),
            spot_allocation_strategy: d
                .and_then(|d| d.spot_allocation_strategy())
                .map(str::to_string),
            spot_instance_pools: count(d.and_then(|d| d.spot_instance_pools())),
            spot_max_price: d.and_then(|d| d.spot_max_price()).map(str::to_string),
        },
    }
}

/// A template spec to send: by id when it has one, else by name (AWS
/// takes one of them, and describes both back).
pub(super) fn template_spec(t: &TemplateRef) -> asg::LaunchTemplateSpecification {
    asg::LaunchTemplateSpecification::builder()
        .set_launch_template_id(t.id.clone())
        .set_launch_template_name(if t.id.is_some() { None } else { t.name.clone() })
        .set_version(t.version.clone())
        .build()
}

/// The policy to send for `wanted`: the group's `current` policy as read,
/// with the template versions of `wanted`. `Err` says why not, when
/// `wanted` differs from it in anything but versions.
pub(super) fn policy_update(
    current: &asg::MixedInstancesPolicy,
    wanted: &MixedInstancesPolicy,
) -> Result<asg::MixedInstancesPolicy, String> {
    let read = policy_from(current);
    if read.shape() != wanted.shape() {
        return Err(format!(
            "the mixed instances policy would change beyond its template versions (read {read:?}, asked {wanted:?}); a rollback never changes the group's overrides or distribution"
        ));
    }
    let mut update = current.clone();
    if let Some(template) = update.launch_template.as_mut() {
        if template.launch_template_specification.is_some() {
            template.launch_template_specification = Some(template_spec(&wanted.template));
        }
        let overrides = template.overrides.iter_mut().flatten();
        for (sent, asked) in overrides.zip(&wanted.overrides) {
            if let (Some(spec), Some(asked)) =
                (sent.launch_template_specification.as_mut(), &asked.template)
            {
                *spec = template_spec(asked);
            }
        }
    }
    Ok(update)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(id: &str, name: &str, version: &str) -> asg::LaunchTemplateSpecification {
        asg::LaunchTemplateSpecification::builder()
            .launch_template_id(id)
            .launch_template_name(name)
            .version(version)
            .build()
    }

    fn read_policy() -> asg::MixedInstancesPolicy {
        asg::MixedInstancesPolicy::builder()
            .launch_template(
                asg::LaunchTemplate::builder()
                    .launch_template_specification(spec("lt-a", "agents", "4"))
                    .overrides(
                        asg::LaunchTemplateOverrides::builder()
                            .instance_type("m5.xlarge")
                            .weighted_capacity("1")
                            .build(),
                    )
                    .overrides(
                        asg::LaunchTemplateOverrides::builder()
                            .instance_type("m6g.xlarge")
                            .weighted_capacity("2")
                            .launch_template_specification(spec("lt-arm", "agents-arm", "7"))
                            .build(),
                    )
                    .build(),
            )
            .instances_distribution(
                asg::InstancesDistribution::builder()
                    .on_demand_base_capacity(1)
                    .on_demand_percentage_above_base_capacity(25)
                    .spot_allocation_strategy("price-capacity-optimized")
                    .on_demand_allocation_strategy("prioritized")
                    .build(),
            )
            .build()
    }

    #[test]
    fn a_policy_is_sent_back_as_read_with_only_its_versions_changed() {
        let current = read_policy();
        let mut wanted = policy_from(&current);
        wanted.template.version = Some("3".to_string());
        if let Some(t) = wanted.overrides[1].template.as_mut() {
            t.version = Some("6".to_string());
        }
        let sent = policy_update(&current, &wanted).expect("versions only");
        assert_eq!(sent.instances_distribution, current.instances_distribution);
        let template = sent.launch_template.expect("kept");
        let top = template.launch_template_specification.expect("kept");
        assert_eq!(top.launch_template_id.as_deref(), Some("lt-a"));
        assert_eq!(top.version.as_deref(), Some("3"));
        let overrides = template.overrides.expect("kept");
        assert_eq!(overrides.len(), 2);
        assert_eq!(overrides[0].instance_type.as_deref(), Some("m5.xlarge"));
        assert!(overrides[0].launch_template_specification.is_none());
        let own = overrides[1]
            .launch_template_specification
            .as_ref()
            .expect("kept");
        assert_eq!(own.launch_template_id.as_deref(), Some("lt-arm"));
        assert_eq!(own.version.as_deref(), Some("6"));
        assert_eq!(overrides[1].weighted_capacity.as_deref(), Some("2"));
    }

    #[test]
    fn a_policy_whose_overrides_or_distribution_would_change_is_not_sent() {
        let current = read_policy();
        let mut fewer = policy_from(&current);
        fewer.overrides.pop();
        assert!(policy_update(&current, &fewer).is_err());
        let mut all_on_demand = policy_from(&current);
        all_on_demand
            .distribution
            .on_demand_percentage_above_base_capacity = Some(100);
        assert!(policy_update(&current, &all_on_demand).is_err());
    }

    #[test]
    fn a_group_with_a_policy_reads_as_the_policy_not_its_template() {
        let group = asg::AutoScalingGroup::builder()
            .mixed_instances_policy(read_policy())
            .build();
        let Some(LaunchSource::MixedInstances(policy)) = group_source(&group) else {
            panic!("a policy");
        };
        assert_eq!(policy.overrides.len(), 2);
        assert_eq!(policy.distribution.on_demand_base_capacity, Some(1));
        assert_eq!(policy.template.version.as_deref(), Some("4"));
    }
}
