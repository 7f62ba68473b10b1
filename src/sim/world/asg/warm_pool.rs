//! A group's warm pool, as AWS documents it where the world can follow
//! (user guide, "Warm pools for Amazon EC2 Auto Scaling"; API reference,
//! PutWarmPool, DescribeWarmPool, DeleteWarmPool):
//!
//! - Its size: max(MinSize, MaxGroupPreparedCapacity − desired capacity),
//!   MaxGroupPreparedCapacity defaulting to the group's MaxSize ("the
//!   difference between the group's maximum capacity and its desired
//!   capacity").
//! - It fills from the group's launch template as it is at fill time:
//!   instances launch (`Warmed:Pending`) and wait in the pool state
//!   (`Warmed:Stopped`, `Warmed:Running`, `Warmed:Hibernated`). They are
//!   not the group's: DescribeAutoScalingGroups does not list them, and
//!   their Mesos agent runs nothing (it registers only in service).
//! - A scale-out takes warm instances first (a warm start: quicker than a
//!   boot, then through the launch hooks as any launch); each keeps the
//!   template version it was launched from. An empty pool launches cold.
//! - A scale-in returns instances to the pool with ReuseOnScaleIn, else
//!   terminates them. TerminateInstanceInAutoScalingGroup always
//!   terminates (it is no scale-in); on a warm instance it removes it from
//!   the pool (desired capacity untouched: warm instances do not count
//!   against it) and the pool refills at once from the current template —
//!   AWS's own way to "force replacement warm pool instances".
//! - DeleteWarmPool terminates its instances; the configuration goes with
//!   the last of them (ForceDelete: at once).
//!
//! Simplified: launch hooks hold no instance entering the pool
//! (`Warmed:Pending:Wait` is not modelled), and the pool fills only while
//! the group's `Launch` process runs (the simulator's reading: filling is
//! launching).

use super::*;
use crate::sim::scenario::WarmPoolSpec;

/// The state a warm instance waits in (`PoolState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) enum PoolState {
    Stopped,
    Running,
    Hibernated,
}

impl PoolState {
    fn parse(text: &str) -> PoolState {
        match text {
            "Running" => PoolState::Running,
            "Hibernated" => PoolState::Hibernated,
            _ => PoolState::Stopped,
        }
    }

    pub(crate) fn as_aws(self) -> &'static str {
        match self {
            PoolState::Stopped => "Stopped",
            PoolState::Running => "Running",
            PoolState::Hibernated => "Hibernated",
        }
    }
}

/// One group's warm pool.
#[derive(Clone, Debug)]
pub(crate) struct WarmPool {
    min_size: u32,
    max_prepared: Option<u32>,
    state: PoolState,
    reuse_on_scale_in: bool,
    /// DeleteWarmPool without ForceDelete: its instances are terminating,
    /// and the pool goes with the last of them.
    deleting: bool,
    /// Its instances (every `Warmed:*` state), by launch.
    instances: Vec<InstanceIdx>,
}

impl WarmPool {
    pub(crate) fn from_spec(spec: &WarmPoolSpec) -> WarmPool {
        WarmPool {
            min_size: spec.min_size,
            max_prepared: spec.max_group_prepared_capacity,
            state: PoolState::parse(&spec.pool_state),
            reuse_on_scale_in: spec.reuse_on_scale_in,
            deleting: false,
            instances: Vec::new(),
        }
    }

    /// How many instances it holds now, by AWS's sizing.
    fn size(&self, group_max: u32, desired: u32) -> u32 {
        self.min_size.max(
            self.max_prepared
                .unwrap_or(group_max)
                .saturating_sub(desired),
        )
    }
}

/// DescribeWarmPool's view: the configuration and the instances.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct WarmPoolView {
    pub(crate) min_size: u32,
    pub(crate) max_group_prepared_capacity: Option<u32>,
    pub(crate) pool_state: &'static str,
    /// `PendingDelete` while DeleteWarmPool waits for its instances.
    pub(crate) status: Option<&'static str>,
    pub(crate) reuse_on_scale_in: bool,
    pub(crate) instances: Vec<GroupInstanceView>,
}

impl World {
    /// PutWarmPool: creates the group's pool or changes its
    /// configuration (its instances stay), then fills it. Refused on a
    /// group with a mixed instances policy, as AWS documents ("You cannot
    /// add a warm pool to Auto Scaling groups that have a mixed instances
    /// policy or that launch Spot Instances").
    pub(crate) fn put_warm_pool(
        &mut self,
        group: &str,
        spec: &WarmPoolSpec,
    ) -> Result<(), AwsError> {
        const ACTION: &str = "PutWarmPool";
        let gi = self.check_group(ACTION, group)?;
        spec.check().map_err(|message| AwsError::Validation {
            action: ACTION,
            message,
        })?;
        if self.groups[gi].mixed.is_some() {
            return Err(AwsError::Validation {
                action: ACTION,
                message: "You cannot add a warm pool to an Auto Scaling group that has a mixed instances policy or that launches Spot Instances.".to_string(),
            });
        }
        let mut pool = WarmPool::from_spec(spec);
        if let Some(old) = self.groups[gi].warm.take() {
            pool.instances = old.instances;
        }
        self.groups[gi].warm = Some(pool);
        self.fill_warm_pool(gi);
        Ok(())
    }

    /// DescribeWarmPool: `None` when the group has no pool (AWS then
    /// answers without a WarmPoolConfiguration and no instances).
    pub(crate) fn warm_pool(&self, group: &str) -> Result<Option<WarmPoolView>, AwsError> {
        let gi = self.check_group("DescribeWarmPool", group)?;
        let g = &self.groups[gi];
        Ok(g.warm.as_ref().map(|pool| WarmPoolView {
            min_size: pool.min_size,
            max_group_prepared_capacity: pool.max_prepared,
            pool_state: pool.state.as_aws(),
            status: pool.deleting.then_some("PendingDelete"),
            reuse_on_scale_in: pool.reuse_on_scale_in,
            instances: pool
                .instances
                .iter()
                .map(|&i| self.instance_view(g, i))
                .collect(),
        }))
    }

    /// DeleteWarmPool: its instances terminate; the configuration goes
    /// with the last of them, or at once with `force`. A group without a
    /// pool is AWS's ValidationError.
    pub(crate) fn delete_warm_pool(&mut self, group: &str, force: bool) -> Result<(), AwsError> {
        const ACTION: &str = "DeleteWarmPool";
        let gi = self.check_group(ACTION, group)?;
        let Some(pool) = self.groups[gi].warm.as_mut() else {
            return Err(AwsError::Validation {
                action: ACTION,
                message: format!("No warm pool found for Auto Scaling group {group}."),
            });
        };
        pool.deleting = true;
        let instances = pool.instances.clone();
        for idx in instances {
            if self.instances[idx].state != LifecycleState::WarmedTerminating {
                self.begin_warm_termination(idx, "the warm pool was deleted".to_string());
            }
        }
        if force || instances_gone(self, gi) {
            self.groups[gi].warm = None;
        }
        Ok(())
    }

    /// The scenario's pool at time zero: filled from the group's template,
    /// every instance waiting in the pool state.
    pub(crate) fn populate_warm_pool(&mut self, gi: GroupIdx) {
        let Some(pool) = &self.groups[gi].warm else {
            return;
        };
        let g = &self.groups[gi];
        let want = pool.size(g.max, g.desired);
        let state = pool.state;
        for _ in 0..want {
            let idx = self.create_warm_instance(gi, "Initial warm pool of the scenario.".into());
            self.instances[idx].state = LifecycleState::Warmed(state);
            let activity = self.instances[idx].launch_activity;
            self.finish_activity(gi, activity);
        }
    }

    /// Launches into the pool until it holds its size (unless `Launch` is
    /// suspended or it is being deleted); terminates what is beyond it,
    /// oldest template version first.
    pub(super) fn fill_warm_pool(&mut self, gi: GroupIdx) {
        let g = &self.groups[gi];
        let Some(pool) = g.warm.as_ref().filter(|p| !p.deleting) else {
            return;
        };
        let want = pool.size(g.max, g.desired) as usize;
        let mut staying: Vec<InstanceIdx> = pool
            .instances
            .iter()
            .copied()
            .filter(|&i| self.instances[i].state != LifecycleState::WarmedTerminating)
            .collect();
        if staying.len() < want && !g.is_suspended("Launch") {
            for _ in staying.len()..want {
                let cause = format!(
                    "At {} an instance was launched in response to a difference between the warm pool's size and its desired size.",
                    self.now
                );
                let idx = self.create_warm_instance(gi, cause);
                let boot = self.rng.jittered(self.timing.boot_ms, self.timing.jitter);
                self.schedule_in(boot, Event::InstanceBooted(idx));
            }
        }
        if staying.len() > want {
            let version = |i: &Instance| i.template_version.parse::<u64>().unwrap_or(u64::MAX);
            staying.sort_by_key(|&i| (version(&self.instances[i]), self.instances[i].launched_at));
            let excess = staying.len() - want;
            for idx in staying.into_iter().take(excess) {
                self.begin_warm_termination(
                    idx,
                    "the warm pool was larger than its size".to_string(),
                );
            }
        }
    }

    fn create_warm_instance(&mut self, gi: GroupIdx, cause: String) -> InstanceIdx {
        // Not the group's: into its pool, in the AZ with the fewest warm
        // instances.
        let az = self.emptiest_warm_az(gi);
        let idx = self.new_instance(gi, az, "Launching a new EC2 instance into warm pool", cause);
        self.instances[idx].state = LifecycleState::WarmedPending;
        if let Some(pool) = self.groups[gi].warm.as_mut() {
            pool.instances.push(idx);
        }
        idx
    }

    fn emptiest_warm_az(&self, gi: GroupIdx) -> usize {
        let g = &self.groups[gi];
        let mut counts = vec![0u32; g.azs.len()];
        for &i in g.warm.iter().flat_map(|p| &p.instances) {
            if let Some(c) = counts.get_mut(self.instances[i].az) {
                *c += 1;
            }
        }
        (0..counts.len())
            .min_by_key(|&az| (counts[az], az))
            .unwrap_or(0)
    }

    /// A warm instance has launched (or stopped, back from the group): it
    /// waits in the pool state. `false` when it is no such instance.
    pub(super) fn warm_instance_ready(&mut self, idx: InstanceIdx) -> bool {
        if self.instances[idx].state != LifecycleState::WarmedPending {
            return false;
        }
        let gi = self.instances[idx].group;
        let state = self.groups[gi]
            .warm
            .as_ref()
            .map_or(PoolState::Stopped, |p| p.state);
        self.instances[idx].state = LifecycleState::Warmed(state);
        let activity = self.instances[idx].launch_activity;
        self.finish_activity(gi, activity);
        true
    }

    /// A scale-out's warm start: a waiting warm instance (in `az` if one
    /// is there) leaves the pool for the group, Pending, booting quicker
    /// than a cold launch; it keeps the template it was launched from.
    /// `None` when no instance waits.
    pub(super) fn take_from_warm_pool(
        &mut self,
        gi: GroupIdx,
        az: usize,
        cause: String,
    ) -> Option<InstanceIdx> {
        let pool = self.groups[gi].warm.as_ref()?;
        let ready = |i: &InstanceIdx| matches!(self.instances[*i].state, LifecycleState::Warmed(_));
        let idx = pool
            .instances
            .iter()
            .copied()
            .filter(ready)
            .find(|&i| self.instances[i].az == az)
            .or_else(|| pool.instances.iter().copied().find(ready))?;
        if let Some(pool) = self.groups[gi].warm.as_mut() {
            pool.instances.retain(|&i| i != idx);
        }
        let id = self.instances[idx].id.clone();
        let activity = self.add_activity(
            gi,
            format!("Launching a new EC2 instance from warm pool: {id}"),
            cause,
            ActivityStatus::InProgress,
        );
        let inst = &mut self.instances[idx];
        inst.state = LifecycleState::Pending;
        inst.launch_activity = activity;
        self.groups[gi].members.push(idx);
        self.monitor.instance_launched(gi);
        let start = self
            .rng
            .jittered(self.timing.boot_ms / WARM_START_DIVISOR, self.timing.jitter);
        self.schedule_in(start, Event::InstanceBooted(idx));
        self.fill_warm_pool(gi);
        Some(idx)
    }

    /// A scale-in's victim goes back to the pool when the pool reuses
    /// instances on scale-in: its agent stops with the machine, and it
    /// waits again once stopped. `false` (nothing done) otherwise.
    pub(super) fn return_to_warm_pool(&mut self, idx: InstanceIdx) -> bool {
        let gi = self.instances[idx].group;
        if !self.groups[gi]
            .warm
            .as_ref()
            .is_some_and(|p| p.reuse_on_scale_in && !p.deleting)
        {
            return false;
        }
        self.groups[gi].members.retain(|&i| i != idx);
        if self.groups[gi].rebalancing == Some(idx) {
            self.groups[gi].rebalancing = None;
        }
        if let Some(agent) = self.instances[idx].agent {
            self.agent_stops_answering(agent);
            for app in self.apps_on_agent(agent) {
                self.app_changed(app);
            }
        }
        let id = self.instances[idx].id.clone();
        let activity = self.add_activity(
            gi,
            format!("Returning EC2 instance to warm pool: {id}"),
            format!(
                "At {} an instance was taken out of service in response to a difference between desired and actual capacity, returning it to the warm pool.",
                self.now
            ),
            ActivityStatus::InProgress,
        );
        let inst = &mut self.instances[idx];
        inst.state = LifecycleState::WarmedPending;
        inst.launch_activity = activity;
        inst.hook_wait = None;
        if let Some(pool) = self.groups[gi].warm.as_mut() {
            pool.instances.push(idx);
        }
        self.schedule_in(self.timing.terminate_ms, Event::InstanceBooted(idx));
        true
    }

    /// TerminateInstanceInAutoScalingGroup on a warm instance: it leaves
    /// the pool (desired capacity untouched) and the pool refills from the
    /// group's template as it is now.
    pub(super) fn terminate_warm_instance(&mut self, idx: InstanceIdx) -> usize {
        let id = self.instances[idx].id.clone();
        let activity = self.begin_warm_termination(
            idx,
            format!(
                "At {} instance {id} was taken out of the warm pool in response to a user request.",
                self.now
            ),
        );
        self.fill_warm_pool(self.instances[idx].group);
        activity
    }

    fn begin_warm_termination(&mut self, idx: InstanceIdx, cause: String) -> usize {
        let id = self.instances[idx].id.clone();
        let gi = self.instances[idx].group;
        let activity = self.add_activity(
            gi,
            format!("Terminating EC2 instance: {id}"),
            cause,
            ActivityStatus::InProgress,
        );
        let inst = &mut self.instances[idx];
        inst.state = LifecycleState::WarmedTerminating;
        inst.terminate_activity = Some(activity);
        self.schedule_in(self.timing.terminate_ms, Event::InstanceTerminated(idx));
        activity
    }

    /// A warm instance's termination is over: it leaves the pool (and a
    /// pool being deleted goes with its last instance). `false` when it
    /// is no warm instance.
    pub(super) fn warm_instance_terminated(&mut self, idx: InstanceIdx) -> bool {
        if self.instances[idx].state != LifecycleState::WarmedTerminating {
            return false;
        }
        self.instances[idx].state = LifecycleState::Terminated;
        let gi = self.instances[idx].group;
        if let Some(activity) = self.instances[idx].terminate_activity {
            self.finish_activity(gi, activity);
        }
        if let Some(pool) = self.groups[gi].warm.as_mut() {
            pool.instances.retain(|&i| i != idx);
        }
        if self.groups[gi].warm.as_ref().is_some_and(|p| p.deleting) && instances_gone(self, gi) {
            self.groups[gi].warm = None;
        }
        true
    }
}

/// A warm start takes this fraction of a cold boot: the instance is
/// initialised already and only starts (the simulator's choice; AWS gives
/// no figure).
const WARM_START_DIVISOR: u64 = 4;

fn instances_gone(w: &World, gi: GroupIdx) -> bool {
    w.groups[gi].warm.as_ref().is_none_or(|p| {
        p.instances
            .iter()
            .all(|&i| w.instances[i].state == LifecycleState::Terminated)
    })
}

#[cfg(test)]
#[path = "warm_pool_tests.rs"]
mod tests;
