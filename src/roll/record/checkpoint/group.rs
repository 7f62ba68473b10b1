//! One group's part of a roll (a checkpoint holds one per group it
//! rolls): the ASG as the roll found it, the instances it replaces, and
//! what the roll changed on it (suspended processes, MaxSize, maintenance
//! windows, surges, waves, new agents, the bake).

use serde::{Deserialize, Serialize};

use std::collections::HashSet;

use super::{NewAgent, Surge, SurgeState, WaveRecord};
use crate::by_id::ById;
use crate::roll::ports::auto_scaling::AutoScalingGroup;
use crate::roll::record::held::HeldInstance;

/// One group's part of a roll: the ASG as the roll found it, the
/// instances it replaces, and what the roll changed on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupRoll {
    /// The ASG's name (also the prefix of its phases' ids in a plan of
    /// more than one group: `<asg>:drain`).
    pub(crate) asg: String,
    /// Agents the cluster must have when done.
    pub(crate) target: u32,
    /// Which instances were selected (`all`, `outdated`, `older-than=14d`).
    pub(crate) select: String,
    /// The ASG as the roll found it.
    pub(crate) original: OriginalGroup,
    /// The instances being replaced, in plan order.
    pub instances: Vec<RolledInstance>,
    /// Scaling processes suspended before the roll: never resumed by it.
    pub(crate) suspended_before: Vec<String>,
    /// Scaling processes the roll suspended: resumed at finish.
    pub(crate) suspended_by_roll: Vec<String>,
    /// MaxSize before `--raise-max` raised it; restored at finish.
    pub(crate) raised_max_from: Option<u32>,
    /// Machines the roll put in a Mesos maintenance window (removed at
    /// finish), as `hostname/ip`.
    #[serde(default)]
    pub(crate) maintenance: Vec<MaintenanceRecord>,
    /// App surges (single-instance apps scaled up by one to move a task).
    #[serde(default)]
    pub(crate) surges: Vec<Surge>,
    /// The drain's waves, each recorded (with the tasks it kills) before
    /// its kills are sent.
    #[serde(default)]
    pub waves: Vec<WaveRecord>,
    /// The new instances' agents, as they registered (recorded by the
    /// scale-up's wait): what the roll watches for failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) new_agents: Vec<NewAgent>,
    /// When the bake of the first moves on the new agents ends (Unix
    /// ms; set when it starts): no old agent goes before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) bake_until_unix_ms: Option<u64>,
    /// Instances to replace that were held out of the group's hands when
    /// the roll began (in Standby; protected under `protected = "wait"`):
    /// the `held-instances` step brings them in before the scale-up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) held: Vec<HeldInstance>,
    /// The surge cap, when the roll has one (it then goes in batches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) surge: Option<SurgeCap>,
    /// Batches open to the drain (capped surge): the first once the
    /// scale-up is done, each next once its new agents are registered.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) opened_batches: u32,
    /// `instances` by id (each of thousands of terminate steps looks up
    /// its own every tick). Not recorded.
    #[serde(skip)]
    pub(crate) by_id: ById,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OriginalGroup {
    pub(crate) min_size: u32,
    pub(crate) max_size: u32,
    pub(crate) desired_capacity: u32,
    /// In-service instances per AZ when the roll started.
    pub(crate) zones: std::collections::BTreeMap<String, u32>,
    /// Every instance in the group when the roll started, selected or not:
    /// the rest are the new ones.
    pub(crate) instance_ids: Vec<String>,
    /// Instances in the group when the roll started but outside its
    /// capacity and left out of the roll (Standby under `standby =
    /// "ignore"`, `--skip-not-in-service`): never new ones either.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) left_out: Vec<String>,
}

impl OriginalGroup {
    /// Every instance in the group when the roll started, left out or
    /// not: an instance outside it is a new one.
    pub(crate) fn ids_at_start(&self) -> HashSet<&str> {
        self.instance_ids
            .iter()
            .chain(&self.left_out)
            .map(String::as_str)
            .collect()
    }
}

/// One instance to replace and the agent it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolledInstance {
    pub id: String,
    pub(crate) availability_zone: String,
    pub(crate) agent_id: String,
    pub(crate) hostname: String,
    pub(crate) ip: Option<String>,
    /// Set when TerminateInstanceInAutoScalingGroup was sent (intent), so a
    /// resume counts it in the desired capacity and never sends it twice
    /// without checking.
    #[serde(default)]
    pub terminate_sent: bool,
    /// It left the group without this roll's termination and without a
    /// decrement (EC2 reclaimed it: a Spot interruption, a hardware
    /// failure): the group launches a replacement, a new agent, and
    /// keeps the capacity, so it does not count among the roll's
    /// decrements. `terminate_sent` is set too: the roll is done with it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) reclaimed: bool,
    /// The roll terminated it without a decrement, so that the group
    /// launched a new instance in its place at once (a capped surge:
    /// the group stays at its ceiling while more old agents are left
    /// than the decrements still to come; `GroupRoll::replaces_next`).
    /// Not one of the roll's decrements.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) replaced: bool,
    /// Other frameworks' tasks found on its agent once Marathon's were
    /// gone, and what the roll did about them.
    #[serde(default, skip_serializing_if = "OtherTasks::is_none")]
    pub(crate) other_tasks: OtherTasks,
    /// The batch it is replaced in (from 1) when the roll's surge is
    /// capped (`GroupRoll::surge`); 0 when it is not. Planned at the
    /// start (batches of the cap); a batch that opens with room on the
    /// new agents for more takes later ones in (`surge_cap::to_open`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) batch: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A capped surge (`--max-surge`, or the group's instance maintenance
/// policy): the group never holds more than `ceiling` instances pending
/// or in service, so the roll goes in batches of `cap`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SurgeCap {
    /// How many instances above its size the group may hold.
    pub(crate) cap: u32,
    /// Where the cap came from (the flag, the group's policy).
    pub(crate) from: String,
    /// The most instances it may hold: max(size, target) + cap.
    pub(crate) ceiling: u32,
    /// How many batches the old instances are in at most (batches of
    /// the cap; a batch that takes more in leaves later ones empty).
    pub(crate) batches: u32,
    /// The terminations at once per AZ the group's instance maintenance
    /// policy allows (`MinHealthyPercentage`: its size plus the cap, less
    /// the healthy share of its size, over its AZs, at least one), when it
    /// has one: the roll's `max_unavailable` is at most this unless
    /// `--max-unavailable` says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) min_healthy_bound: Option<u32>,
    /// The desired capacity the scale-up set (or, in a checkpoint of an
    /// older roller, the last batch), and how many of the roll's
    /// decrements had landed then: what the group's desired capacity
    /// must be now is that, less the decrements landed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) raised: Option<Raised>,
}

/// A raise of the desired capacity (the scale-up's; older rollers raised
/// it again for each batch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Raised {
    /// The batch (from 1) that raised it.
    pub(crate) batch: u32,
    pub(crate) desired: u32,
    pub(crate) terminated: u32,
}

/// An old agent still running other frameworks' tasks (a Metronome job
/// run) once Marathon's tasks are off it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OtherTasks {
    /// Since when (Unix ms) the roll has seen them there: their wait
    /// (`timeouts.other_tasks`) counts from then, across reruns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) since_unix_ms: Option<u64>,
    /// DRAIN_AGENT was decided (intent written before the calls): a
    /// resume sends what is still to do, never decides again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) drain_sent: bool,
}

impl OtherTasks {
    fn is_none(&self) -> bool {
        *self == OtherTasks::default()
    }
}

impl GroupRoll {
    /// The surges not yet undone (their app still above its own count).
    pub(crate) fn open_surges(&self) -> impl Iterator<Item = &Surge> {
        self.surges.iter().filter(|s| s.state != SurgeState::Done)
    }

    /// Instances whose termination with decrement was sent: they count
    /// as gone when the desired capacity is computed. One the group lost
    /// and replaced by itself (`reclaimed`), or one the roll terminated
    /// for the group to replace (`replaced`), is not: its capacity stays.
    pub fn terminated(&self) -> u32 {
        u32::try_from(self.instances.iter().filter(|i| i.decremented()).count()).unwrap_or(u32::MAX)
    }

    /// The absolute desired capacity the group has once every
    /// termination sent has landed: N + K − terminated (uncapped), or the
    /// capped scale-up's N + K at most the ceiling, less the terminations
    /// with decrement since. Computed from the checkpoint, so no rerun of
    /// a step can overshoot. Saturating: preflight keeps N + K far below
    /// `u32::MAX`, but a checkpoint is a file anyone may edit, and a panic
    /// mid-roll is worse than a desired capacity AWS then refuses.
    pub(crate) fn scale_up_desired(&self) -> u32 {
        match self.surge.as_ref().and_then(|s| s.raised) {
            Some(_) => self.expected_desired(self.terminated()),
            None => self.peak_desired().saturating_sub(self.terminated()),
        }
    }

    /// Whether the next old instance the roll terminates goes without a
    /// decrement, so that the group launches a new one in its place at
    /// once: only with a capped surge, and only while more old instances
    /// are left than the decrements that bring the group from its
    /// desired capacity down to its target. The group then stays at its
    /// ceiling (never above it: the instance leaves service as its
    /// replacement launches), and its desired capacity never falls
    /// towards MinSize while old agents are left to replace; the last
    /// ones go with a decrement, down to the target.
    pub(crate) fn replaces_next(&self) -> bool {
        if self.surge.is_none() {
            return false;
        }
        let left = self.instances.iter().filter(|i| i.left()).count();
        let decrements = self.scale_up_desired().saturating_sub(self.target);
        left > decrements as usize
    }

    /// The most instances the roll asks the group for: N + K, at most the
    /// surge's ceiling (what `--raise-max` raises MaxSize to).
    pub(crate) fn peak_desired(&self) -> u32 {
        self.capped(self.desired_after(0))
    }

    /// `desired`, at most the surge's ceiling when it is capped.
    fn capped(&self, desired: u32) -> u32 {
        self.surge
            .as_ref()
            .map_or(desired, |s| desired.min(s.ceiling))
    }

    /// The roll's terminations (with decrement) that `group` shows
    /// landed: sent, and the instance no longer in the group or on its
    /// way out. An intent whose call never landed is not counted.
    pub(crate) fn terminations_landed(&self, group: &AutoScalingGroup) -> u32 {
        let landed = self
            .instances
            .iter()
            .filter(|i| i.decremented() && !group.still_has(&i.id))
            .count();
        u32::try_from(landed).unwrap_or(u32::MAX)
    }

    /// The desired capacity the group must have once `landed` of the
    /// roll's decrements have landed: N + K − landed, or, capped, what
    /// the last raise set less the decrements landed since.
    pub(crate) fn expected_desired(&self, landed: u32) -> u32 {
        match self.surge.as_ref().and_then(|s| s.raised) {
            Some(raised) => raised
                .desired
                .saturating_sub(landed.saturating_sub(raised.terminated)),
            None => self.desired_after(landed),
        }
    }

    /// Whether the drain may empty `instance`'s agent now: its batch is
    /// open (the first, or one whose new instances have registered:
    /// `opened_batches`); always when the surge is not capped.
    pub(crate) fn batch_open(&self, instance: &RolledInstance) -> bool {
        self.surge.is_none() || instance.batch <= self.opened_batches
    }

    /// N + K − `terminated`.
    pub(crate) fn desired_after(&self, terminated: u32) -> u32 {
        let k = u32::try_from(self.instances.len()).unwrap_or(u32::MAX);
        self.target.saturating_add(k).saturating_sub(terminated)
    }

    /// Instances of the original group still in it: neither terminated
    /// by the roll nor lost (a reclaimed one's place is taken by a new
    /// instance).
    pub(crate) fn original_remaining(&self) -> u32 {
        let gone = self.instances.iter().filter(|i| i.terminate_sent).count();
        u32::try_from(self.original.instance_ids.len())
            .unwrap_or(u32::MAX)
            .saturating_sub(u32::try_from(gone).unwrap_or(u32::MAX))
    }

    /// What a complete roll says of a group that ends above its target:
    /// old instances that left without a decrement (`reclaimed`), each
    /// replaced by the group with one more new instance. A capped roll
    /// makes up for them with decrements of the old instances still left
    /// (`replaces_next`), as far as there are any.
    pub(crate) fn above_target(&self) -> Option<String> {
        let reclaimed: Vec<&str> = self
            .instances
            .iter()
            .filter(|i| i.reclaimed)
            .map(|i| i.id.as_str())
            .collect();
        let left = self.instances.iter().filter(|i| i.left()).count();
        let desired = u64::from(self.scale_up_desired());
        let ends = desired
            .saturating_sub(left as u64)
            .max(u64::from(self.target));
        if reclaimed.is_empty() || ends <= u64::from(self.target) {
            return None;
        }
        Some(format!(
            "{} ends at {ends} instances, not {}: {} left the group without a decrement \
             (reclaimed by EC2) and the group replaced each; to come back to {}, drain one new \
             agent per extra instance and terminate it with decrement",
            self.asg,
            self.target,
            reclaimed.join(", "),
            self.target
        ))
    }

    pub(crate) fn instance(&self, id: &str) -> Option<&RolledInstance> {
        let at = self.by_id.position(&self.instances, id, |i| &i.id)?;
        self.instances.get(at)
    }

    pub(crate) fn instance_mut(&mut self, id: &str) -> Option<&mut RolledInstance> {
        let at = self.by_id.position(&self.instances, id, |i| &i.id)?;
        self.instances.get_mut(at)
    }
}

impl RolledInstance {
    /// Its termination was sent with a decrement: neither lost by the
    /// group (`reclaimed`) nor terminated for the group to replace
    /// (`replaced`).
    pub(crate) fn decremented(&self) -> bool {
        self.terminate_sent && !self.reclaimed && !self.replaced
    }

    /// Still in the group for the roll to terminate: not sent, not lost
    /// (a reclaimed one is marked before its step records it done).
    pub(crate) fn left(&self) -> bool {
        !self.terminate_sent && !self.reclaimed
    }

    /// Its agent's machine, as the roll's maintenance windows record it.
    pub(crate) fn machine(&self) -> MaintenanceRecord {
        MaintenanceRecord {
            hostname: self.hostname.clone(),
            ip: self.ip.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MaintenanceRecord {
    pub(crate) hostname: String,
    pub(crate) ip: Option<String>,
}

impl MaintenanceRecord {
    /// The machine as Mesos names it in a maintenance schedule.
    pub(crate) fn machine_id(&self) -> crate::roll::ports::mesos::MachineId {
        crate::roll::ports::mesos::MachineId {
            hostname: Some(self.hostname.clone()),
            ip: self.ip.clone(),
        }
    }
}
