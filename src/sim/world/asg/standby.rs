//! EnterStandby and ExitStandby: instances taken out of service and back,
//! their machines (and Mesos agents) running all along.

use super::*;

impl World {
    /// EnterStandby: each instance must be InService (all are checked
    /// before any moves). With `decrement` desired capacity drops by their
    /// number (refused below MinSize); without, the group launches
    /// replacements. Their machines keep running, Mesos agents included.
    /// Answers one activity per instance, as AWS does (in progress).
    pub(crate) fn enter_standby(
        &mut self,
        group: &str,
        instance_ids: &[String],
        decrement: bool,
    ) -> Result<Vec<ActivityView>, AwsError> {
        const ACTION: &str = "EnterStandby";
        let (gi, picked) =
            self.standby_members(ACTION, group, instance_ids, LifecycleState::InService)?;
        let n = u32::try_from(picked.len()).unwrap_or(u32::MAX);
        if decrement && self.groups[gi].desired.saturating_sub(n) < self.groups[gi].min {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "Cannot move {n} instance(s) to Standby with ShouldDecrementDesiredCapacity: desired capacity {} would fall below min size {}.",
                    self.groups[gi].desired, self.groups[gi].min
                ),
            });
        }
        let mut views = Vec::with_capacity(picked.len());
        for idx in picked {
            let before = self.groups[gi].desired;
            if decrement {
                self.groups[gi].desired -= 1;
            }
            let id = self.instances[idx].id.clone();
            let shrinking = if decrement {
                format!(
                    ", shrinking the capacity from {before} to {}.",
                    self.groups[gi].desired
                )
            } else {
                ".".to_string()
            };
            let activity = self.add_activity(
                gi,
                format!("Moving EC2 instance to Standby: {id}"),
                format!(
                    "At {} instance {id} was moved to standby in response to a user request{shrinking}",
                    self.now
                ),
                ActivityStatus::InProgress,
            );
            self.instances[idx].state = LifecycleState::Standby;
            views.push(self.activity_view(gi, activity));
            self.finish_activity(gi, activity);
        }
        self.reconcile_group(gi);
        self.observe_group(gi);
        Ok(views)
    }

    /// ExitStandby: each instance must be in Standby; desired capacity
    /// grows by their number (refused above MaxSize) and they are back in
    /// service. Answers one PreInService activity per instance, as AWS
    /// does.
    pub(crate) fn exit_standby(
        &mut self,
        group: &str,
        instance_ids: &[String],
    ) -> Result<Vec<ActivityView>, AwsError> {
        const ACTION: &str = "ExitStandby";
        let (gi, picked) =
            self.standby_members(ACTION, group, instance_ids, LifecycleState::Standby)?;
        let n = u32::try_from(picked.len()).unwrap_or(u32::MAX);
        if self.groups[gi].desired.saturating_add(n) > self.groups[gi].max {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!(
                    "Cannot move {n} instance(s) out of Standby: desired capacity {} would rise above max size {}.",
                    self.groups[gi].desired, self.groups[gi].max
                ),
            });
        }
        let mut views = Vec::with_capacity(picked.len());
        for idx in picked {
            let before = self.groups[gi].desired;
            self.groups[gi].desired += 1;
            let id = self.instances[idx].id.clone();
            let activity = self.add_activity(
                gi,
                format!("Moving EC2 instance out of Standby: {id}"),
                format!(
                    "At {} instance {id} was moved out of standby in response to a user request, increasing the capacity from {before} to {}.",
                    self.now, self.groups[gi].desired
                ),
                ActivityStatus::PreInService,
            );
            self.instances[idx].state = LifecycleState::InService;
            views.push(self.activity_view(gi, activity));
            self.finish_activity(gi, activity);
        }
        self.reconcile_group(gi);
        self.observe_group(gi);
        Ok(views)
    }

    /// SetInstanceProtection: sets or lifts the scale-in protection of
    /// instances of the group (any state but leaving it), refused as a
    /// whole when one is not the group's.
    pub(crate) fn set_instance_protection(
        &mut self,
        group: &str,
        instance_ids: &[String],
        protected: bool,
    ) -> Result<(), AwsError> {
        const ACTION: &str = "SetInstanceProtection";
        let (gi, picked) = self.group_members(ACTION, group, instance_ids)?;
        for idx in picked {
            self.instances[idx].protected_from_scale_in = protected;
        }
        self.observe_group(gi);
        Ok(())
    }

    /// The group and its instances named by `ids`, each in `state`; refused as a
    /// whole otherwise (an unknown or other group's instance, or one in
    /// another state), with nothing changed.
    fn standby_members(
        &self,
        action: &'static str,
        group: &str,
        ids: &[String],
        state: LifecycleState,
    ) -> Result<(GroupIdx, Vec<InstanceIdx>), AwsError> {
        let (gi, picked) = self.group_members(action, group, ids)?;
        if let Some(&idx) = picked.iter().find(|&&i| self.instances[i].state != state) {
            return Err(AwsError::Validation {
                action,
                message: format!(
                    "The instance {} is not in {}.",
                    self.instances[idx].id,
                    state.as_aws()
                ),
            });
        }
        Ok((gi, picked))
    }

    /// The group and its instances named by `ids`, each once, in the order
    /// named; refused as a whole when `ids` is empty or names an unknown or
    /// other group's instance.
    fn group_members(
        &self,
        action: &'static str,
        group: &str,
        ids: &[String],
    ) -> Result<(GroupIdx, Vec<InstanceIdx>), AwsError> {
        let gi = self.check_group(action, group)?;
        if ids.is_empty() {
            return Err(AwsError::Validation {
                action,
                message: "The parameter InstanceIds is required.".into(),
            });
        }
        let mut picked = Vec::with_capacity(ids.len());
        for id in ids {
            let idx = self
                .instance_by_id
                .get(id)
                .copied()
                .filter(|&i| self.groups[gi].members.contains(&i))
                .ok_or_else(|| AwsError::Validation {
                    action,
                    message: format!(
                        "The instance {id} is not part of Auto Scaling group {group}."
                    ),
                })?;
            if !picked.contains(&idx) {
                picked.push(idx);
            }
        }
        Ok((gi, picked))
    }
}
