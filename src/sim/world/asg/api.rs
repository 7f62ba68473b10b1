//! The Auto Scaling API the AWS facade calls: describing the groups,
//! sizes, terminations, suspended processes, launch template versions,
//! tags, scaling activities and EC2's view of the instances. Every call
//! names its group (or an instance, which belongs to one); a name that is
//! no group is AWS's `ValidationError`.

use super::*;
use crate::sim::scenario::{PUBLIC_ROLE, resolve_template_version, scaling_processes};

impl World {
    // ----- the API the AWS facade calls -----

    /// DescribeAutoScalingGroups: the named groups (all when `names` is
    /// empty), in name order; unknown names are left out, as AWS does.
    pub(crate) fn describe_groups(&self, names: &[String]) -> Vec<GroupView> {
        let mut picked: Vec<&Group> = self
            .groups
            .iter()
            .filter(|g| names.is_empty() || names.contains(&g.name))
            .collect();
        picked.sort_by(|a, b| a.name.cmp(&b.name));
        picked.into_iter().map(|g| self.group_view(g)).collect()
    }

    fn group_view(&self, g: &Group) -> GroupView {
        let instances = g
            .members
            .iter()
            .map(|&i| self.instance_view(g, i))
            .collect();
        GroupView {
            name: g.name.clone(),
            min_size: g.min,
            max_size: g.max,
            desired_capacity: g.desired,
            availability_zones: g.azs.clone(),
            launch_template: LaunchTemplateView {
                id: g.template.id(),
                name: g.template.name.clone(),
                version: g.template.version.clone(),
            },
            mixed_instances_policy: g.mixed_view(),
            instances,
            suspended_processes: g
                .suspended
                .iter()
                .map(|(p, at)| SuspendedProcessView {
                    process_name: p.clone(),
                    suspended_unix_ms: self.unix_ms(*at),
                })
                .collect(),
            tags: g
                .tags
                .iter()
                .map(|(k, v)| TagView {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect(),
            role: g.role.clone(),
            instance_maintenance_policy: g.maintenance_policy,
        }
    }

    /// One instance of group `g` (a member or a warm one) as the group's
    /// descriptions show it.
    pub(super) fn instance_view(&self, g: &Group, i: InstanceIdx) -> GroupInstanceView {
        let inst = &self.instances[i];
        GroupInstanceView {
            instance_id: inst.id.clone(),
            availability_zone: g.azs[inst.az].clone(),
            lifecycle_state: inst.state.as_aws(),
            health_status: "Healthy",
            instance_type: inst.instance_type.clone(),
            launch_template: LaunchTemplateView {
                id: g.template.id(),
                name: g.template.name.clone(),
                version: inst.template_version.clone(),
            },
            protected_from_scale_in: inst.protected_from_scale_in,
        }
    }

    /// SetDesiredCapacity: refused outside [MinSize, MaxSize] with AWS's
    /// message; the group then launches or terminates to match.
    pub(crate) fn set_desired_capacity(
        &mut self,
        group: &str,
        desired: u32,
    ) -> Result<(), AwsError> {
        const ACTION: &str = "SetDesiredCapacity";
        let gi = self.check_group(ACTION, group)?;
        let g = &self.groups[gi];
        if desired > g.max {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "New SetDesiredCapacity value {desired} is above max value {} for the AutoScalingGroup.",
                    g.max
                ),
            });
        }
        if desired < g.min {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "New SetDesiredCapacity value {desired} is below min value {} for the AutoScalingGroup.",
                    g.min
                ),
            });
        }
        self.groups[gi].desired = desired;
        self.reconcile_group(gi);
        self.observe_group(gi);
        Ok(())
    }

    /// TerminateInstanceInAutoScalingGroup (of whichever group the
    /// instance is in). With `decrement` the desired
    /// capacity drops by one (refused below MinSize, as AWS does); without,
    /// the group launches a replacement. An instance already terminating is
    /// answered with its termination activity, changing nothing.
    pub(crate) fn terminate_instance(
        &mut self,
        instance_id: &str,
        decrement: bool,
    ) -> Result<ActivityView, AwsError> {
        const ACTION: &str = "TerminateInstanceInAutoScalingGroup";
        let idx = match self.instance_by_id.get(instance_id) {
            Some(&i) if self.instances[i].state != LifecycleState::Terminated => i,
            _ => {
                self.monitor.termination_of_gone(instance_id);
                return Err(AwsError::InstanceNotFound {
                    action: ACTION,
                    id: instance_id.to_string(),
                });
            }
        };
        if let Some(activity) = self.instances[idx].terminate_activity {
            self.monitor.termination_repeated(instance_id);
            return Ok(self.activity_view(self.instances[idx].group, activity));
        }
        let gi = self.instances[idx].group;
        if matches!(
            self.instances[idx].state,
            LifecycleState::Warmed(_) | LifecycleState::WarmedPending
        ) {
            // Warm instances do not count against desired capacity:
            // there is nothing to decrement.
            let activity = self.terminate_warm_instance(idx);
            self.observe_group(gi);
            return Ok(self.activity_view(gi, activity));
        }
        let g = &mut self.groups[gi];
        if decrement {
            if g.desired <= g.min {
                return Err(AwsError::Validation {
                    action: ACTION,
                    message: format!(
                        "Currently, desiredSize equals minSize ({}). Terminating instance without replacement will violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false or lower group's min size.",
                        g.min
                    ),
                });
            }
            g.desired -= 1;
        }
        let cause = if decrement {
            format!(
                "At {} instance {instance_id} was taken out of service in response to a user request, shrinking the capacity from {} to {}.",
                self.now,
                g.desired + 1,
                g.desired
            )
        } else {
            format!(
                "At {} instance {instance_id} was taken out of service in response to a user request.",
                self.now
            )
        };
        let activity = self.begin_termination(idx, cause);
        self.reconcile_group(gi);
        self.observe_group(gi);
        Ok(self.activity_view(gi, activity))
    }

    /// SuspendProcesses: an empty list suspends all nine, as AWS does.
    pub(crate) fn suspend_processes(
        &mut self,
        group: &str,
        processes: &[String],
    ) -> Result<(), AwsError> {
        let (gi, names) = self.process_names("SuspendProcesses", group, processes)?;
        // One already suspended keeps its time, as AWS keeps its reason.
        for name in names {
            self.groups[gi].suspended.entry(name).or_insert(self.now);
        }
        Ok(())
    }

    /// ResumeProcesses: an empty list resumes all. Resuming AZRebalance
    /// makes it look at the AZ counts again.
    pub(crate) fn resume_processes(
        &mut self,
        group: &str,
        processes: &[String],
    ) -> Result<(), AwsError> {
        let (gi, names) = self.process_names("ResumeProcesses", group, processes)?;
        for name in names {
            self.groups[gi].suspended.remove(&name);
        }
        self.schedule_rebalance_check(gi);
        self.reconcile_group(gi);
        Ok(())
    }

    /// UpdateAutoScalingGroup's sizes (see `update_group_with`).
    #[cfg(test)]
    pub(crate) fn update_group(
        &mut self,
        group: &str,
        min: Option<u32>,
        max: Option<u32>,
        desired: Option<u32>,
    ) -> Result<(), AwsError> {
        self.update_group_with(
            group,
            GroupUpdate {
                min,
                max,
                desired,
                ..GroupUpdate::default()
            },
        )
    }

    /// Points the first group at another version of its launch template
    /// (see `set_group_launch_template_version`).
    pub fn set_launch_template_version(&mut self, version: &str) -> Result<(), AwsError> {
        let group = self.groups[0].name.clone();
        self.set_group_launch_template_version(&group, version)
    }

    /// Points `group` at another version of its launch template, as an
    /// operator publishing a new image does (UpdateAutoScalingGroup with
    /// the template's name and `version`: a number, `$Latest` or
    /// `$Default`). Instances launched from now on get it; those running
    /// keep theirs. Refused, changing nothing, for a version the template
    /// does not have (or a group that does not exist).
    pub(crate) fn set_group_launch_template_version(
        &mut self,
        group: &str,
        version: &str,
    ) -> Result<(), AwsError> {
        let gi = self.check_group("UpdateAutoScalingGroup", group)?;
        let choice = LaunchTemplateChoice {
            id: None,
            name: Some(self.groups[gi].template.name.clone()),
            version: Some(version.to_string()),
        };
        // On a policy's group the operator moves the policy's template
        // (a top-level template would replace the policy).
        let update = if self.groups[gi].mixed.is_some() {
            GroupUpdate {
                mixed_instances_policy: Some(MixedUpdate {
                    template: Some(choice),
                    ..MixedUpdate::default()
                }),
                ..GroupUpdate::default()
            }
        } else {
            GroupUpdate {
                launch_template: Some(choice),
                ..GroupUpdate::default()
            }
        };
        self.update_group_with(group, update)
    }

    /// UpdateAutoScalingGroup. As AWS: min ≤ max, a given desired must
    /// fit; without one, desired is pulled into the new range. A launch
    /// template must be named by id or by name (not both) and be the
    /// group's own (the world models no other), its version one the
    /// template has; new instances launch from it, running ones keep
    /// theirs. A top-level template replaces a mixed instances policy; a
    /// policy (never with a top-level template) changes what it names
    /// (`mixed.rs`). Everything is checked before anything changes.
    pub(crate) fn update_group_with(
        &mut self,
        group: &str,
        update: GroupUpdate,
    ) -> Result<(), AwsError> {
        const ACTION: &str = "UpdateAutoScalingGroup";
        let gi = self.check_group(ACTION, group)?;
        let version = match &update.launch_template {
            Some(choice) => Some(self.check_launch_template(ACTION, gi, choice)?),
            None => None,
        };
        let mixed = match &update.mixed_instances_policy {
            Some(_) if update.launch_template.is_some() => {
                return Err(AwsError::Validation {
                    action: ACTION,
                    message: "Valid requests must contain either LaunchTemplate, LaunchConfigurationName or MixedInstancesPolicy parameter.".into(),
                });
            }
            Some(policy) => {
                let template = match &policy.template {
                    Some(choice) => Some(self.check_launch_template(ACTION, gi, choice)?),
                    None => None,
                };
                Some((template, self.check_mixed_update(ACTION, gi, policy)?))
            }
            None => None,
        };
        let g = &mut self.groups[gi];
        let min = update.min.unwrap_or(g.min);
        let max = update.max.unwrap_or(g.max);
        if min > max {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "Max bound, {max}, must be greater than or equal to min bound, {min}"
                ),
            });
        }
        let desired = match update.desired {
            Some(d) if d < min || d > max => {
                return Err(AwsError::Validation {
                    action: ACTION,
                    message: format!(
                        "Desired capacity:{d} must be between the specified min size:{min} and max size:{max}"
                    ),
                });
            }
            Some(d) => d,
            None => g.desired.clamp(min, max),
        };
        g.min = min;
        g.max = max;
        g.desired = desired;
        if let Some(version) = version {
            g.template.version = version;
            // A group has one launch source: the template replaces a policy.
            g.mixed = None;
        }
        if let Some((template_version, policy)) = mixed {
            if let Some(v) = template_version {
                g.template.version = v;
            }
            g.mixed = Some(policy);
        }
        self.reconcile_group(gi);
        self.observe_group(gi);
        Ok(())
    }

    /// CreateOrUpdateTags on the group.
    pub(crate) fn put_tags(
        &mut self,
        group: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        let gi = self.check_group("CreateOrUpdateTags", group)?;
        for (k, v) in tags {
            self.groups[gi].tags.insert(k.clone(), v.clone());
        }
        Ok(())
    }

    /// DeleteTags on the group (a missing key is fine).
    pub(crate) fn delete_tags(&mut self, group: &str, keys: &[String]) -> Result<(), AwsError> {
        let gi = self.check_group("DeleteTags", group)?;
        for k in keys {
            self.groups[gi].tags.remove(k);
        }
        Ok(())
    }

    /// DescribeScalingActivities: newest first, at most `limit`.
    pub(crate) fn scaling_activities(
        &self,
        group: &str,
        limit: usize,
    ) -> Result<Vec<ActivityView>, AwsError> {
        let gi = self.check_group("DescribeScalingActivities", group)?;
        Ok((0..self.groups[gi].activities.len())
            .rev()
            .take(limit)
            .map(|i| self.activity_view(gi, i))
            .collect())
    }

    /// EC2 DescribeInstances by id (all when `ids` is empty: every
    /// group's). An unknown id is an error, as EC2 answers
    /// InvalidInstanceID.NotFound.
    pub(crate) fn ec2_instances(&self, ids: &[String]) -> Result<Vec<Ec2InstanceView>, AwsError> {
        let picked: Vec<usize> = if ids.is_empty() {
            (0..self.instances.len()).collect()
        } else {
            let mut picked = Vec::with_capacity(ids.len());
            for id in ids {
                match self.instance_by_id.get(id) {
                    Some(&i) => picked.push(i),
                    None => {
                        return Err(AwsError::Ec2InstanceNotFound {
                            action: "DescribeInstances",
                            id: id.clone(),
                        });
                    }
                }
            }
            picked
        };
        Ok(picked
            .into_iter()
            .map(|i| {
                let inst = &self.instances[i];
                let g = &self.groups[inst.group];
                Ec2InstanceView {
                    instance_id: inst.id.clone(),
                    group_name: g.name.clone(),
                    availability_zone: g.azs[inst.az].clone(),
                    state: inst.state.as_ec2(),
                    private_ip_address: inst.ip.clone(),
                    private_dns_name: inst.private_dns(),
                    launch_unix_ms: self.unix_ms(inst.launched_at),
                    launch_template: LaunchTemplateView {
                        id: g.template.id(),
                        name: g.template.name.clone(),
                        version: inst.template_version.clone(),
                    },
                    instance_type: inst.instance_type.clone(),
                    spot: inst.spot,
                    public_subnet: g.role.as_deref() == Some(PUBLIC_ROLE),
                }
            })
            .collect())
    }

    /// The first group's instances per AZ that count against desired
    /// (Pending + InService), in its AZ order.
    #[cfg(test)]
    pub(crate) fn az_counts(&self) -> Vec<u32> {
        self.group_az_counts(0)
    }

    /// `group`'s instances per AZ that count against desired, in its AZ
    /// order; `None` for a name that is no group.
    #[cfg(test)]
    pub(crate) fn az_counts_of(&self, group: &str) -> Option<Vec<u32>> {
        let gi = self.groups.iter().position(|g| g.name == group)?;
        Some(self.group_az_counts(gi))
    }

    pub(crate) fn group_az_counts(&self, gi: GroupIdx) -> Vec<u32> {
        let g = &self.groups[gi];
        let mut counts = vec![0u32; g.azs.len()];
        for &i in &g.members {
            let inst = &self.instances[i];
            if inst.state.is_live() {
                counts[inst.az] += 1;
            }
        }
        counts
    }

    // ----- internals -----

    /// The group named `name`, or AWS's answer for a name that is none.
    pub(super) fn check_group(
        &self,
        action: &'static str,
        name: &str,
    ) -> Result<GroupIdx, AwsError> {
        self.groups
            .iter()
            .position(|g| g.name == name)
            .ok_or_else(|| AwsError::GroupNotFound {
                action,
                name: name.to_string(),
            })
    }

    /// The version a `LaunchTemplateSpecification` sets, once checked as AWS
    /// checks it: exactly one of id and name (AWS's words for both and for
    /// neither), naming the group's template; a version the template has
    /// (`$Default` when unset). AWS's wording for an unknown template or
    /// version is not established: these follow the shape of its "You must
    /// use a valid fully-formed launch template." refusals.
    pub(super) fn check_launch_template(
        &self,
        action: &'static str,
        gi: GroupIdx,
        choice: &LaunchTemplateChoice,
    ) -> Result<String, AwsError> {
        let invalid = |message: String| AwsError::Validation { action, message };
        let template = &self.groups[gi].template;
        match (choice.id.as_deref(), choice.name.as_deref()) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(invalid(
                    "Valid requests must contain either launchTemplateId or LaunchTemplateName"
                        .into(),
                ));
            }
            (Some(id), None) if id != template.id() => {
                return Err(invalid(format!(
                    "You must use a valid fully-formed launch template. The specified launch template, with template ID {id}, does not exist."
                )));
            }
            (None, Some(name)) if name != template.name => {
                return Err(invalid(format!(
                    "You must use a valid fully-formed launch template. The specified launch template, with template name {name}, does not exist."
                )));
            }
            _ => {}
        }
        let version = choice.version.as_deref().unwrap_or("$Default");
        match resolve_template_version(version, template.latest, template.default) {
            Some(_) => Ok(version.to_string()),
            None => Err(invalid(format!(
                "You must use a valid fully-formed launch template. The specified launch template version {version} does not exist."
            ))),
        }
    }

    fn process_names(
        &self,
        action: &'static str,
        group: &str,
        processes: &[String],
    ) -> Result<(GroupIdx, Vec<String>), AwsError> {
        let gi = self.check_group(action, group)?;
        if processes.is_empty() {
            return Ok((
                gi,
                scaling_processes().iter().map(|p| p.to_string()).collect(),
            ));
        }
        for p in processes {
            if !scaling_processes().contains(&p.as_str()) {
                return Err(AwsError::Validation {
                    action,
                    message: format!("Process '{p}' is not a valid scaling process"),
                });
            }
        }
        Ok((gi, processes.to_vec()))
    }
}
