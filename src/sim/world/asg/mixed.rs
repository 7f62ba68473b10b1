//! A group's mixed instances policy, as AWS documents it where the world
//! can follow: the policy's template is the group's (`Group::template`),
//! its overrides list instance types in priority order (each perhaps with
//! a version of that template of its own), and its distribution says how
//! many instances are on-demand (`OnDemandBaseCapacity` first, then
//! `OnDemandPercentageAboveBaseCapacity` of the rest) and how many Spot.
//! A launch takes an on-demand instance of the first type (the
//! `prioritized` strategy, with capacity never short) or a Spot instance
//! of the type with fewest Spot instances in the group (the world has no
//! prices or pools: whatever the allocation strategy, Spot is spread over
//! the types). The instance keeps its type, its lifecycle and the template
//! version of its override.
//!
//! UpdateAutoScalingGroup: a `MixedInstancesPolicy` changes what it names
//! and keeps what it leaves out (AWS's "properties that you don't specify
//! are not changed"); a top-level `LaunchTemplate` on a policy's group
//! replaces the policy (AWS's request takes one of LaunchTemplate,
//! LaunchConfigurationName and MixedInstancesPolicy, and a group has one
//! of them: the group then launches the template's own type, on-demand).

use serde::Serialize;

use super::{AwsError, Group, GroupIdx, LaunchTemplateChoice, LaunchTemplateView, World};
use crate::sim::scenario::{MixedInstancesSpec, resolve_template_version};
use crate::sim::world::ids::INSTANCE_TYPE;

/// The world's mixed instances policy of one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MixedPolicy {
    pub(crate) overrides: Vec<TypeOverride>,
    pub(crate) on_demand_base_capacity: u32,
    pub(crate) on_demand_percentage_above_base_capacity: u32,
    pub(crate) spot_allocation_strategy: String,
}

/// One override: an instance type, and the version of the group's
/// template it launches from when not the policy's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TypeOverride {
    pub(crate) instance_type: String,
    pub(crate) version: Option<String>,
}

impl MixedPolicy {
    pub(crate) fn from_spec(spec: &MixedInstancesSpec) -> MixedPolicy {
        MixedPolicy {
            overrides: spec
                .overrides
                .iter()
                .map(|o| TypeOverride {
                    instance_type: o.instance_type.clone(),
                    version: o.version.clone(),
                })
                .collect(),
            on_demand_base_capacity: spec.on_demand_base_capacity,
            on_demand_percentage_above_base_capacity: spec.on_demand_percentage_above_base_capacity,
            spot_allocation_strategy: spec.spot_allocation_strategy.clone(),
        }
    }
}

/// What an instance is launched as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LaunchChoice {
    pub(crate) instance_type: String,
    pub(crate) spot: bool,
    /// The template version (a number, as the instance shows it).
    pub(crate) version: String,
}

/// An `UpdateAutoScalingGroup`'s `MixedInstancesPolicy`: each part `None`
/// stays as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MixedUpdate {
    pub(crate) template: Option<LaunchTemplateChoice>,
    pub(crate) overrides: Option<Vec<OverrideUpdate>>,
    pub(crate) on_demand_base_capacity: Option<u32>,
    pub(crate) on_demand_percentage_above_base_capacity: Option<u32>,
    pub(crate) spot_allocation_strategy: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OverrideUpdate {
    pub(crate) instance_type: Option<String>,
    pub(crate) weighted_capacity: Option<String>,
    pub(crate) template: Option<LaunchTemplateChoice>,
}

/// DescribeAutoScalingGroups' `MixedInstancesPolicy`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct MixedPolicyView {
    pub(crate) launch_template: LaunchTemplateView,
    /// Instance type and its own template, if any.
    pub(crate) overrides: Vec<(String, Option<LaunchTemplateView>)>,
    pub(crate) on_demand_base_capacity: u32,
    pub(crate) on_demand_percentage_above_base_capacity: u32,
    pub(crate) spot_allocation_strategy: String,
}

impl Group {
    pub(crate) fn mixed_view(&self) -> Option<MixedPolicyView> {
        let policy = self.mixed.as_ref()?;
        Some(MixedPolicyView {
            launch_template: LaunchTemplateView {
                id: self.template.id(),
                name: self.template.name.clone(),
                version: self.template.version.clone(),
            },
            overrides: policy
                .overrides
                .iter()
                .map(|o| {
                    let own = o.version.as_ref().map(|v| LaunchTemplateView {
                        id: self.template.id(),
                        name: self.template.name.clone(),
                        version: v.clone(),
                    });
                    (o.instance_type.clone(), own)
                })
                .collect(),
            on_demand_base_capacity: policy.on_demand_base_capacity,
            on_demand_percentage_above_base_capacity: policy
                .on_demand_percentage_above_base_capacity,
            spot_allocation_strategy: policy.spot_allocation_strategy.clone(),
        })
    }
}

impl World {
    /// What group `gi` launches next: on a policy, on-demand while the
    /// distribution wants more of it (the first type), else Spot of the
    /// type with fewest Spot instances; without one, the template's type.
    pub(super) fn launch_choice(&self, gi: GroupIdx) -> LaunchChoice {
        let g = &self.groups[gi];
        let plain = LaunchChoice {
            instance_type: INSTANCE_TYPE.to_string(),
            spot: false,
            version: g.template.launch_version(),
        };
        let Some(policy) = &g.mixed else {
            return plain;
        };
        let running: Vec<&super::Instance> = g
            .members
            .iter()
            .map(|&i| &self.instances[i])
            .filter(|i| i.state.machine_runs())
            .collect();
        let on_demand = running.iter().filter(|i| !i.spot).count() as u64;
        let total = running.len() as u64;
        let base = u64::from(policy.on_demand_base_capacity);
        let pct = u64::from(policy.on_demand_percentage_above_base_capacity);
        let wants_on_demand = on_demand < base
            || (on_demand - base.min(on_demand)) * 100 < pct * (total - base.min(total) + 1);
        let chosen = if wants_on_demand {
            policy.overrides.first()
        } else {
            policy.overrides.iter().min_by_key(|o| {
                running
                    .iter()
                    .filter(|i| i.spot && i.instance_type == o.instance_type)
                    .count()
            })
        };
        let Some(chosen) = chosen else {
            return plain;
        };
        let version = chosen
            .version
            .as_deref()
            .and_then(|v| resolve_template_version(v, g.template.latest, g.template.default))
            .map_or(plain.version, |n| n.to_string());
        LaunchChoice {
            instance_type: chosen.instance_type.clone(),
            spot: !wants_on_demand,
            version,
        }
    }

    /// Applies a checked `MixedInstancesPolicy` update to group `gi`.
    /// A group without a policy gets one only with a template and at
    /// least one override (AWS requires the template to create a policy).
    pub(super) fn check_mixed_update(
        &self,
        action: &'static str,
        gi: GroupIdx,
        update: &MixedUpdate,
    ) -> Result<MixedPolicy, AwsError> {
        let invalid = |message: String| AwsError::Validation { action, message };
        let g = &self.groups[gi];
        let mut policy = match &g.mixed {
            Some(p) => p.clone(),
            None if update.template.is_some() && update.overrides.is_some() => MixedPolicy {
                overrides: Vec::new(),
                on_demand_base_capacity: 0,
                on_demand_percentage_above_base_capacity: 100,
                spot_allocation_strategy: "lowest-price".to_string(),
            },
            None => {
                return Err(invalid(
                    "LaunchTemplate is required when creating a mixed instances policy".into(),
                ));
            }
        };
        if let Some(overrides) = &update.overrides {
            let mut checked = Vec::new();
            for o in overrides {
                let Some(instance_type) = o.instance_type.clone() else {
                    // InstanceRequirements: attribute-based selection,
                    // which the world does not model.
                    return Err(invalid(
                        "The simulator's overrides name an InstanceType".into(),
                    ));
                };
                if o.weighted_capacity.as_deref().is_some_and(|w| w != "1") {
                    return Err(invalid(format!(
                        "The simulator counts instances, not capacity units: WeightedCapacity {} of {instance_type}",
                        o.weighted_capacity.as_deref().unwrap_or_default()
                    )));
                }
                let version = match &o.template {
                    Some(choice) => Some(self.check_launch_template(action, gi, choice)?),
                    None => None,
                };
                checked.push(TypeOverride {
                    instance_type,
                    version,
                });
            }
            if checked.is_empty() {
                return Err(invalid("A mixed instances policy needs an override".into()));
            }
            policy.overrides = checked;
        }
        if let Some(base) = update.on_demand_base_capacity {
            policy.on_demand_base_capacity = base;
        }
        if let Some(pct) = update.on_demand_percentage_above_base_capacity {
            if pct > 100 {
                return Err(invalid(format!(
                    "OnDemandPercentageAboveBaseCapacity {pct} must be between 0 and 100"
                )));
            }
            policy.on_demand_percentage_above_base_capacity = pct;
        }
        if let Some(strategy) = &update.spot_allocation_strategy {
            policy.spot_allocation_strategy = strategy.clone();
        }
        Ok(policy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::scenario::Scenario;

    const GROUP: &str = "mesos-agents-mixed";

    fn world() -> World {
        World::new(&Scenario::load("bad-image-mixed").expect("shipped"))
    }

    /// (instance type, Spot, version) of each instance, by launch.
    fn launched(w: &World) -> Vec<(String, bool, String)> {
        w.ec2_instances(&[])
            .expect("every instance")
            .into_iter()
            .map(|i| (i.instance_type, i.spot, i.launch_template.version))
            .collect()
    }

    #[test]
    fn on_demand_fills_the_base_then_its_percentage_and_spot_spreads_over_the_types() {
        let w = world();
        let got = launched(&w);
        let on_demand: Vec<&str> = got
            .iter()
            .filter(|(_, spot, _)| !spot)
            .map(|(t, _, _)| t.as_str())
            .collect();
        let spot: Vec<&str> = got
            .iter()
            .filter(|(_, spot, _)| *spot)
            .map(|(t, _, _)| t.as_str())
            .collect();
        // 2 on-demand as the base, then half of the other 4.
        assert_eq!(on_demand, ["m5.2xlarge"; 4]);
        assert_eq!(spot, ["m5.2xlarge", "m5a.2xlarge"]);
        let view = w.describe_groups(&[]).remove(0);
        let policy = view.mixed_instances_policy.expect("a policy");
        assert_eq!(policy.on_demand_base_capacity, 2);
        assert_eq!(policy.overrides.len(), 3);
        assert!(
            view.instances
                .iter()
                .all(|i| i.launch_template.version == "1")
        );
    }

    #[test]
    fn a_policy_update_naming_only_the_template_keeps_overrides_and_distribution() {
        let mut w = world();
        let before = w.describe_groups(&[]).remove(0).mixed_instances_policy;
        w.set_launch_template_version("2").expect("published");
        let after = w
            .describe_groups(&[])
            .remove(0)
            .mixed_instances_policy
            .expect("still a policy");
        let mut expected = before.expect("a policy");
        expected.launch_template.version = "2".to_string();
        assert_eq!(after, expected);
        w.set_desired_capacity(GROUP, 7).expect("within bounds");
        let newest = launched(&w).pop().expect("launched");
        assert_eq!(newest.2, "2");
    }

    #[test]
    fn an_override_with_its_own_version_launches_its_type_from_it() {
        let mut w = world();
        let template = |version: &str| {
            Some(LaunchTemplateChoice {
                name: Some("mesos-agent".to_string()),
                version: Some(version.to_string()),
                ..LaunchTemplateChoice::default()
            })
        };
        let only = |t: &str, own: Option<LaunchTemplateChoice>| OverrideUpdate {
            instance_type: Some(t.to_string()),
            template: own,
            ..OverrideUpdate::default()
        };
        w.update_group_with(
            GROUP,
            super::super::GroupUpdate {
                mixed_instances_policy: Some(MixedUpdate {
                    overrides: Some(vec![only("c6i.2xlarge", template("2"))]),
                    on_demand_percentage_above_base_capacity: Some(100),
                    ..MixedUpdate::default()
                }),
                ..super::super::GroupUpdate::default()
            },
        )
        .expect("a valid policy");
        w.set_desired_capacity(GROUP, 7).expect("within bounds");
        let newest = launched(&w).pop().expect("launched");
        assert_eq!(newest, ("c6i.2xlarge".to_string(), false, "2".to_string()));
        let view = w.describe_groups(&[]).remove(0);
        let policy = view.mixed_instances_policy.expect("a policy");
        assert_eq!(policy.launch_template.version, "1");
        assert_eq!(
            policy.overrides[0].1.as_ref().map(|t| t.version.as_str()),
            Some("2")
        );
    }

    #[test]
    fn a_top_level_template_replaces_the_policy_and_both_at_once_are_refused() {
        let mut w = world();
        let choice = LaunchTemplateChoice {
            name: Some("mesos-agent".to_string()),
            version: Some("1".to_string()),
            ..LaunchTemplateChoice::default()
        };
        let both = super::super::GroupUpdate {
            launch_template: Some(choice.clone()),
            mixed_instances_policy: Some(MixedUpdate::default()),
            ..super::super::GroupUpdate::default()
        };
        let err = w.update_group_with(GROUP, both).expect_err("both");
        assert_eq!(err.label(), "validation");
        assert!(
            w.describe_groups(&[])
                .remove(0)
                .mixed_instances_policy
                .is_some()
        );
        w.update_group_with(
            GROUP,
            super::super::GroupUpdate {
                launch_template: Some(choice),
                ..super::super::GroupUpdate::default()
            },
        )
        .expect("a plain template");
        assert!(
            w.describe_groups(&[])
                .remove(0)
                .mixed_instances_policy
                .is_none()
        );
        w.set_desired_capacity(GROUP, 7).expect("within bounds");
        let newest = launched(&w).pop().expect("launched");
        assert_eq!(newest.0, INSTANCE_TYPE);
        assert!(!newest.1, "on-demand without a policy");
    }
}
