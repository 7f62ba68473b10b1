//! What a group does by itself: launching and terminating to match its
//! desired capacity, AZRebalance, instances booting and shutting down, and
//! the scaling activities that record it. Each group on its own: one
//! group's scaling never moves another's instances.

use super::*;

impl World {
    pub(super) fn activity_view(&self, gi: GroupIdx, i: usize) -> ActivityView {
        let g = &self.groups[gi];
        let a = &g.activities[i];
        ActivityView {
            activity_id: a.id.clone(),
            group_name: g.name.clone(),
            description: a.description.clone(),
            cause: a.cause.clone(),
            start_unix_ms: self.unix_ms(a.started),
            end_unix_ms: a.ended.map(|t| self.unix_ms(t)),
            status_code: match a.status {
                ActivityStatus::InProgress => "InProgress",
                ActivityStatus::PreInService => "PreInService",
                ActivityStatus::Successful => "Successful",
                ActivityStatus::Failed => "Failed",
            },
            status_message: a.message.clone(),
            progress: match a.status {
                ActivityStatus::InProgress => 50,
                ActivityStatus::PreInService => 30,
                ActivityStatus::Successful | ActivityStatus::Failed => 100,
            },
        }
    }

    pub(super) fn add_activity(
        &mut self,
        gi: GroupIdx,
        description: String,
        cause: String,
        status: ActivityStatus,
    ) -> usize {
        let id = self.rng.uuid();
        let ended = (status != ActivityStatus::InProgress).then_some(self.now);
        let activities = &mut self.groups[gi].activities;
        activities.push(Activity {
            id,
            description,
            cause,
            started: self.now,
            ended,
            status,
            message: None,
        });
        activities.len() - 1
    }

    pub(super) fn finish_activity(&mut self, gi: GroupIdx, i: usize) {
        let a = &mut self.groups[gi].activities[i];
        a.status = ActivityStatus::Successful;
        a.ended = Some(self.now);
    }

    /// Launches one instance of group `gi` in `az`, Pending, booting.
    /// `None` when the launch-failure fault is on (it fails every group's
    /// launches; a failed activity is recorded instead).
    fn launch_instance(&mut self, gi: GroupIdx, az: usize, cause: String) -> Option<InstanceIdx> {
        if self.faults.launches_fail {
            let zone = self.groups[gi].azs.get(az).cloned().unwrap_or_default();
            let reason = self.faults.launch_failure.message(&zone);
            let i = self.add_activity(
                gi,
                format!("Launching a new EC2 instance.  Status Reason: {reason}"),
                cause,
                ActivityStatus::Failed,
            );
            self.groups[gi].activities[i].message = Some(reason);
            self.monitor.launch_failed();
            return None;
        }
        let idx = self.create_instance(gi, az, cause);
        let boot = self.rng.jittered(self.timing.boot_ms, self.timing.jitter);
        self.schedule_in(boot, Event::InstanceBooted(idx));
        Some(idx)
    }

    fn create_instance(&mut self, gi: GroupIdx, az: usize, cause: String) -> InstanceIdx {
        let idx = self.new_instance(gi, az, "Launching a new EC2 instance", cause);
        self.groups[gi].members.push(idx);
        self.monitor.instance_launched(gi);
        idx
    }

    /// A new instance of group `gi` in `az`, Pending, launched from what
    /// the group launches now, its launch activity begun (`what`: the
    /// activity's description before the id); in no member list yet.
    pub(super) fn new_instance(
        &mut self,
        gi: GroupIdx,
        az: usize,
        what: &str,
        cause: String,
    ) -> InstanceIdx {
        let id = format!("i-0{}", self.rng.hex(16));
        let n = self.instances.len();
        let ip = format!("10.0.{}.{}", 1 + n / 250, 4 + n % 250);
        let activity = self.add_activity(
            gi,
            format!("{what}: {id}"),
            cause,
            ActivityStatus::InProgress,
        );
        let idx = self.instances.len();
        let choice = self.launch_choice(gi);
        self.instances.push(Instance {
            id: id.clone(),
            group: gi,
            az,
            state: LifecycleState::Pending,
            launched_at: self.now,
            ip,
            template_version: choice.version,
            instance_type: choice.instance_type,
            spot: choice.spot,
            protected_from_scale_in: false,
            agent: None,
            launch_activity: activity,
            terminate_activity: None,
            hook_wait: None,
        });
        self.instance_by_id.insert(id, idx);
        idx
    }

    /// A group's instances of the scenario, InService at time zero with
    /// their agents registered, spread over the AZs as launches would have
    /// spread them. The scenario's `standby` extra ones are in Standby (the
    /// last launched), their agents registered as well; the `protected`
    /// first ones are protected from scale-in.
    pub(crate) fn populate_initial_instances(
        &mut self,
        gi: GroupIdx,
        standby: u32,
        protected: u32,
    ) {
        let mut created = Vec::new();
        for _ in 0..self.groups[gi].desired + standby {
            let az = self.emptiest_az(gi);
            let idx = self.create_instance(gi, az, "Initial capacity of the scenario.".into());
            self.instances[idx].state = LifecycleState::InService;
            let activity = self.instances[idx].launch_activity;
            self.finish_activity(gi, activity);
            self.register_agent(idx);
            created.push(idx);
        }
        for &idx in created.iter().rev().take(standby as usize) {
            self.instances[idx].state = LifecycleState::Standby;
        }
        for &idx in created.iter().take(protected as usize) {
            self.instances[idx].protected_from_scale_in = true;
        }
    }

    /// The AZ with the fewest live instances; ties go to the first in the
    /// group's AZ list, so a seed replays the same spread.
    fn emptiest_az(&self, gi: GroupIdx) -> usize {
        let counts = self.group_az_counts(gi);
        (0..counts.len())
            .min_by_key(|&az| (counts[az], az))
            .unwrap_or(0)
    }

    /// The instance the default termination policy picks: from the AZ with
    /// the most live instances (or `only_az`), the one with the oldest
    /// launch template version, then the oldest launch, then by id.
    fn termination_candidate(
        &self,
        gi: GroupIdx,
        only_az: Option<usize>,
        exclude: Option<InstanceIdx>,
    ) -> Option<InstanceIdx> {
        let counts = self.group_az_counts(gi);
        let az = match only_az {
            Some(az) => az,
            None => (0..counts.len()).max_by_key(|&az| (counts[az], std::cmp::Reverse(az)))?,
        };
        self.groups[gi]
            .members
            .iter()
            .copied()
            .filter(|&i| {
                let inst = &self.instances[i];
                // Scale-in protection keeps it from the group's own
                // terminations (scale-in, rebalancing), as in AWS.
                inst.az == az
                    && inst.state.is_live()
                    && !inst.protected_from_scale_in
                    && Some(i) != exclude
            })
            .min_by(|&a, &b| {
                let (x, y) = (&self.instances[a], &self.instances[b]);
                // Versions are numbers: "10" is newer than "9".
                let version = |i: &Instance| i.template_version.parse::<u64>().unwrap_or(u64::MAX);
                (version(x), x.launched_at, &x.id).cmp(&(version(y), y.launched_at, &y.id))
            })
    }

    /// Starts terminating an instance: its agent stops answering (unless the
    /// fault keeps it registered) and EC2 finishes the shutdown later.
    pub(super) fn begin_termination(&mut self, idx: InstanceIdx, cause: String) -> usize {
        let id = self.instances[idx].id.clone();
        let gi = self.instances[idx].group;
        let activity = self.add_activity(
            gi,
            format!("Terminating EC2 instance: {id}"),
            cause,
            ActivityStatus::InProgress,
        );
        self.instances[idx].state = LifecycleState::Terminating;
        self.instances[idx].terminate_activity = Some(activity);
        // A launch's wait ends with its termination.
        self.instances[idx].hook_wait = None;
        if self.groups[gi].rebalancing == Some(idx) {
            self.groups[gi].rebalancing = None;
        }
        if let Some(agent) = self.instances[idx].agent {
            if self.faults.agents_outlive_instances > 0 {
                self.faults.agents_outlive_instances -= 1;
            } else {
                self.agent_stops_answering(agent);
            }
            for app in self.apps_on_agent(agent) {
                self.app_changed(app);
            }
        }
        if !self.enter_hook_wait(idx, false) {
            self.schedule_in(self.timing.terminate_ms, Event::InstanceTerminated(idx));
        }
        activity
    }

    /// Booted: in service, unless the group's launch hooks hold it in
    /// `Pending:Wait` first.
    pub(crate) fn on_instance_booted(&mut self, idx: InstanceIdx) {
        if self.warm_instance_ready(idx) {
            return;
        }
        if self.instances[idx].state != LifecycleState::Pending {
            return;
        }
        if self.enter_hook_wait(idx, true) {
            self.observe_group(self.instances[idx].group);
            return;
        }
        self.enter_service(idx);
    }

    /// Pending (or done waiting) → InService: its launch activity ends and
    /// its agent registers soon; AZRebalance's extra instance makes one of
    /// the high AZ go.
    pub(super) fn enter_service(&mut self, idx: InstanceIdx) {
        self.instances[idx].state = LifecycleState::InService;
        let gi = self.instances[idx].group;
        let activity = self.instances[idx].launch_activity;
        self.finish_activity(gi, activity);
        let register = self
            .rng
            .jittered(self.timing.register_ms, self.timing.jitter);
        self.schedule_in(register, Event::AgentRegisters(idx));
        if self.groups[gi].rebalancing == Some(idx) {
            // AZRebalance's second half: the new instance serves, so one in
            // the high AZ goes (desired capacity unchanged).
            self.groups[gi].rebalancing = None;
            let counts = self.group_az_counts(gi);
            let high = (0..counts.len()).max_by_key(|&az| (counts[az], std::cmp::Reverse(az)));
            if let Some(victim) =
                high.and_then(|az| self.termination_candidate(gi, Some(az), Some(idx)))
            {
                let cause = format!(
                    "At {} an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity: AZRebalance.",
                    self.now
                );
                self.begin_termination(victim, cause);
            }
        }
        self.schedule_rebalance_check(gi);
        self.observe_group(gi);
    }

    pub(crate) fn on_instance_terminated(&mut self, idx: InstanceIdx) {
        if self.warm_instance_terminated(idx) {
            return;
        }
        if !matches!(
            self.instances[idx].state,
            LifecycleState::Terminating | LifecycleState::TerminatingProceed
        ) {
            return;
        }
        self.instances[idx].state = LifecycleState::Terminated;
        let gi = self.instances[idx].group;
        if let Some(activity) = self.instances[idx].terminate_activity {
            self.finish_activity(gi, activity);
        }
        self.groups[gi].members.retain(|&i| i != idx);
        self.monitor.instance_terminated(gi);
        self.schedule_rebalance_check(gi);
        self.observe_group(gi);
    }

    /// Launches or terminates until the group's live instances match its
    /// desired capacity (plus AZRebalance's extra one), unless
    /// Launch/Terminate is suspended. A failed launch is retried after
    /// `launch_retry`.
    pub(crate) fn reconcile_group(&mut self, gi: GroupIdx) {
        let g = &self.groups[gi];
        let target = g.desired as usize + usize::from(g.rebalancing.is_some());
        loop {
            let live: usize = self.group_az_counts(gi).iter().map(|&c| c as usize).sum();
            let g = &self.groups[gi];
            if live < target {
                if g.is_suspended("Launch") {
                    break;
                }
                let az = self.emptiest_az(gi);
                let cause = format!(
                    "At {} an instance was started in response to a difference between desired and actual capacity, increasing the capacity from {live} to {target}.",
                    self.now
                );
                if self.take_from_warm_pool(gi, az, cause.clone()).is_some() {
                    continue;
                }
                if self.launch_instance(gi, az, cause).is_none() {
                    if self.groups[gi].retry_at.is_none() {
                        let at = self.now.plus_ms(self.timing.launch_retry_ms);
                        self.groups[gi].retry_at = Some(at);
                        self.schedule(at, Event::ReconcileGroup(gi));
                    }
                    break;
                }
            } else if live > target {
                if g.is_suspended("Terminate") {
                    break;
                }
                let Some(victim) = self.termination_candidate(gi, None, g.rebalancing) else {
                    break;
                };
                let cause = format!(
                    "At {} an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity from {live} to {target}.",
                    self.now
                );
                if !self.return_to_warm_pool(victim) {
                    self.begin_termination(victim, cause);
                }
            } else {
                break;
            }
        }
        self.fill_warm_pool(gi);
        self.schedule_rebalance_check(gi);
        self.observe_group(gi);
    }

    pub(super) fn schedule_rebalance_check(&mut self, gi: GroupIdx) {
        let g = &mut self.groups[gi];
        if g.rebalance_check_scheduled || g.is_suspended("AZRebalance") {
            return;
        }
        g.rebalance_check_scheduled = true;
        self.schedule_in(self.timing.rebalance_delay_ms, Event::RebalanceCheck(gi));
    }

    /// AZRebalance: when not suspended and the AZ counts differ by more than
    /// one, launch in the low AZ first (the group briefly runs one beyond
    /// desired), terminate in the high AZ once the new instance serves.
    pub(crate) fn on_rebalance_check(&mut self, gi: GroupIdx) {
        self.groups[gi].rebalance_check_scheduled = false;
        let g = &self.groups[gi];
        if g.is_suspended("AZRebalance")
            || g.is_suspended("Launch")
            || g.is_suspended("Terminate")
            || g.rebalancing.is_some()
        {
            return;
        }
        let counts = self.group_az_counts(gi);
        let (Some(&low), Some(&high)) = (counts.iter().min(), counts.iter().max()) else {
            return;
        };
        if high - low <= 1 {
            return;
        }
        let az = self.emptiest_az(gi);
        let cause = format!(
            "At {} an instance was launched to rebalance the group across Availability Zones (AZRebalance).",
            self.now
        );
        match self.launch_instance(gi, az, cause) {
            Some(idx) => self.groups[gi].rebalancing = Some(idx),
            None => self.schedule_rebalance_check(gi),
        }
        self.observe_group(gi);
    }

    /// Tells the monitor a group's shape after a change, and the whole
    /// cluster's (every group's instances per AZ name, summed).
    pub(crate) fn observe_group(&mut self, gi: GroupIdx) {
        let g = &self.groups[gi];
        let counts = g
            .azs
            .iter()
            .cloned()
            .zip(self.group_az_counts(gi))
            .collect();
        let desired = g.desired;
        self.monitor.observe_group(gi, self.now, counts, desired);
        let (cluster, desired) = self.cluster_az_counts();
        self.monitor.observe_cluster(self.now, cluster, desired);
    }

    /// Every group's live instances per AZ name, and their desired
    /// capacities summed.
    pub(crate) fn cluster_az_counts(&self) -> (BTreeMap<String, u32>, u32) {
        let mut counts = BTreeMap::new();
        let mut desired = 0;
        for (gi, g) in self.groups.iter().enumerate() {
            desired += g.desired;
            for (az, n) in g.azs.iter().zip(self.group_az_counts(gi)) {
                *counts.entry(az.clone()).or_insert(0) += n;
            }
        }
        (counts, desired)
    }
}
