//! A group's mixed instances policy as the roll sees it: the policy's
//! launch template, its overrides (an instance type, a weight, perhaps a
//! template of its own) and its Spot/on-demand distribution. The roll only
//! ever changes template versions in it: which template applies to an
//! instance (`template_for`), and the same policy with the versions the old
//! instances run (`with_versions_of`). Everything else is data it carries
//! back as it was read, so a rollback never changes the group's shape.
//! (`auto_scaling` builds on this file, never the other way round.)

/// A `LaunchTemplateSpecification`: a template by id or name, and a
/// version (a number, `$Latest` or `$Default`; none reads as `$Default`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TemplateRef {
    pub id: Option<String>,
    pub name: Option<String>,
    pub version: Option<String>,
}

impl TemplateRef {
    /// Whether `other` names the same template (whatever the version):
    /// the same id, or the same name where either lacks an id.
    fn same_template(&self, other: &TemplateRef) -> bool {
        match (&self.id, &other.id) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => self.name.is_some() && self.name == other.name,
        }
    }
}

/// One entry of the policy's `Overrides`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceOverride {
    /// `None` for an override by `InstanceRequirements` (attribute-based
    /// selection), which the roll does not model but never drops: the
    /// adapter writes the policy back as it read it.
    pub instance_type: Option<String>,
    pub weighted_capacity: Option<String>,
    /// The template instances of this type launch from, instead of the
    /// policy's.
    pub template: Option<TemplateRef>,
}

/// The policy's `InstancesDistribution`, as read: the roll never changes
/// it, and compares it so that a write can never change it either.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InstancesDistribution {
    pub on_demand_allocation_strategy: Option<String>,
    pub on_demand_base_capacity: Option<u32>,
    pub on_demand_percentage_above_base_capacity: Option<u32>,
    pub spot_allocation_strategy: Option<String>,
    pub spot_instance_pools: Option<u32>,
    pub spot_max_price: Option<String>,
}

/// A `MixedInstancesPolicy`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixedInstancesPolicy {
    /// The policy's own template: what instances launch from unless their
    /// override names another.
    pub template: TemplateRef,
    pub overrides: Vec<InstanceOverride>,
    pub distribution: InstancesDistribution,
}

/// Why the old instances' versions cannot be put into the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum VersionsUnclear {
    /// No old instance says what it was launched from.
    NoneKnown,
    /// Old instances of one template run different versions (named).
    Different {
        template: String,
        versions: Vec<String>,
    },
    /// An old instance runs a template the policy does not name.
    Foreign(String),
}

impl std::fmt::Display for VersionsUnclear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VersionsUnclear::NoneKnown => {
                f.write_str("no old instance says what it was launched from")
            }
            VersionsUnclear::Different { template, versions } => write!(
                f,
                "the old instances run different versions of launch template {template} ({})",
                versions.join(", ")
            ),
            VersionsUnclear::Foreign(instance) => write!(
                f,
                "old instance {instance} runs a launch template the policy does not name"
            ),
        }
    }
}

impl MixedInstancesPolicy {
    /// The template (and version) an instance of `instance_type` launches
    /// from: its override's own, else the policy's.
    pub(crate) fn template_for(&self, instance_type: Option<&str>) -> &TemplateRef {
        instance_type
            .and_then(|t| {
                self.overrides
                    .iter()
                    .find(|o| o.instance_type.as_deref() == Some(t))
            })
            .and_then(|o| o.template.as_ref())
            .unwrap_or(&self.template)
    }

    /// Every template reference of the policy: its own, then each
    /// override's, in order.
    fn templates_mut(&mut self) -> impl Iterator<Item = &mut TemplateRef> {
        std::iter::once(&mut self.template).chain(
            self.overrides
                .iter_mut()
                .filter_map(|o| o.template.as_mut()),
        )
    }

    /// The same policy with each of its templates at the version the old
    /// instances of it run (`launched`: each old instance's id and the
    /// template it launched from); templates no old instance runs keep
    /// theirs. Overrides and distribution are untouched.
    pub(crate) fn with_versions_of(
        &self,
        launched: &[(&str, TemplateRef)],
    ) -> Result<MixedInstancesPolicy, VersionsUnclear> {
        if launched.is_empty() {
            return Err(VersionsUnclear::NoneKnown);
        }
        let mut wanted = self.clone();
        for (instance, template) in launched {
            if !wanted.templates_mut().any(|t| t.same_template(template)) {
                return Err(VersionsUnclear::Foreign((*instance).to_string()));
            }
        }
        for template in wanted.templates_mut() {
            let mut versions: Vec<String> = Vec::new();
            for (_, ran) in launched.iter().filter(|(_, t)| template.same_template(t)) {
                let v = ran
                    .version
                    .clone()
                    .unwrap_or_else(|| "$Default".to_string());
                if !versions.contains(&v) {
                    versions.push(v);
                }
            }
            match versions.as_slice() {
                [] => {}
                [one] => template.version = Some(one.clone()),
                _ => {
                    return Err(VersionsUnclear::Different {
                        template: template
                            .name
                            .clone()
                            .or_else(|| template.id.clone())
                            .unwrap_or_default(),
                        versions,
                    });
                }
            }
        }
        Ok(wanted)
    }

    /// The policy with every template version blanked: what must stay
    /// equal for a write to change nothing but versions.
    pub(crate) fn shape(&self) -> MixedInstancesPolicy {
        let mut shape = self.clone();
        for template in shape.templates_mut() {
            template.version = None;
        }
        shape
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(id: &str, version: &str) -> TemplateRef {
        TemplateRef {
            id: Some(id.to_string()),
            name: Some(format!("{id}-name")),
            version: Some(version.to_string()),
        }
    }

    fn policy() -> MixedInstancesPolicy {
        MixedInstancesPolicy {
            template: template("lt-a", "4"),
            overrides: vec![
                InstanceOverride {
                    instance_type: Some("m5.xlarge".to_string()),
                    weighted_capacity: Some("1".to_string()),
                    template: None,
                },
                InstanceOverride {
                    instance_type: Some("m6g.xlarge".to_string()),
                    weighted_capacity: Some("1".to_string()),
                    template: Some(template("lt-arm", "7")),
                },
            ],
            distribution: InstancesDistribution {
                on_demand_base_capacity: Some(1),
                on_demand_percentage_above_base_capacity: Some(50),
                spot_allocation_strategy: Some("price-capacity-optimized".to_string()),
                ..InstancesDistribution::default()
            },
        }
    }

    #[test]
    fn an_instance_type_with_its_own_template_launches_from_it_and_others_from_the_policys() {
        let p = policy();
        assert_eq!(p.template_for(Some("m6g.xlarge")), &template("lt-arm", "7"));
        assert_eq!(p.template_for(Some("m5.xlarge")), &template("lt-a", "4"));
        assert_eq!(p.template_for(Some("c5.large")), &template("lt-a", "4"));
        assert_eq!(p.template_for(None), &template("lt-a", "4"));
    }

    #[test]
    fn the_old_instances_versions_go_back_into_each_template_and_nothing_else_changes() {
        let p = policy();
        let back = p
            .with_versions_of(&[
                ("i-a", template("lt-a", "3")),
                ("i-b", template("lt-arm", "6")),
                ("i-c", template("lt-a", "3")),
            ])
            .expect("clear");
        assert_eq!(back.template, template("lt-a", "3"));
        assert_eq!(back.overrides[1].template, Some(template("lt-arm", "6")));
        assert_eq!(back.shape(), p.shape());
        assert_eq!(back.distribution, p.distribution);
    }

    #[test]
    fn a_template_no_old_instance_runs_keeps_its_version() {
        let p = policy();
        let back = p
            .with_versions_of(&[("i-a", template("lt-a", "3"))])
            .expect("clear");
        assert_eq!(back.overrides[1].template, Some(template("lt-arm", "7")));
    }

    #[test]
    fn old_instances_on_two_versions_of_one_template_are_not_guessed_between() {
        let p = policy();
        assert!(matches!(
            p.with_versions_of(&[
                ("i-a", template("lt-a", "3")),
                ("i-b", template("lt-a", "2")),
            ]),
            Err(VersionsUnclear::Different { .. })
        ));
        assert_eq!(
            p.with_versions_of(&[("i-f", template("lt-other", "1"))]),
            Err(VersionsUnclear::Foreign("i-f".to_string()))
        );
        assert_eq!(p.with_versions_of(&[]), Err(VersionsUnclear::NoneKnown));
    }
}
