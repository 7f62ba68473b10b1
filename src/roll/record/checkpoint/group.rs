//! One group's part of a roll (a checkpoint holds one per group it
//! rolls): the ASG as the roll found it, the instances it replaces, and
//! what the roll changed on it (suspended processes, MaxSize, maintenance
//! windows, surges, waves, new agents, the bake).

use serde::{Deserialize, Serialize};

use super::{NewAgent, Surge, WaveRecord};

/// One group's part of a roll: the ASG as the roll found it, the
/// instances it replaces, and what the roll changed on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupRoll {
    /// The ASG's name (also the prefix of its phases' ids in a plan of
    /// more than one group: `<asg>:drain`).
    pub asg: String,
    /// Agents the cluster must have when done.
    pub target: u32,
    /// Which instances were selected (`all`, `outdated`, `older-than=14d`).
    pub select: String,
    /// The ASG as the roll found it.
    pub original: OriginalGroup,
    /// The instances being replaced, in plan order.
    pub instances: Vec<RolledInstance>,
    /// Scaling processes suspended before the roll: never resumed by it.
    pub suspended_before: Vec<String>,
    /// Scaling processes the roll suspended: resumed at finish.
    pub suspended_by_roll: Vec<String>,
    /// MaxSize before `--raise-max` raised it; restored at finish.
    pub raised_max_from: Option<u32>,
    /// Machines the roll put in a Mesos maintenance window (removed at
    /// finish), as `hostname/ip`.
    #[serde(default)]
    pub maintenance: Vec<MaintenanceRecord>,
    /// App surges (single-instance apps scaled up by one to move a task).
    #[serde(default)]
    pub surges: Vec<Surge>,
    /// The drain's waves, each recorded (with the tasks it kills) before
    /// its kills are sent.
    #[serde(default)]
    pub waves: Vec<WaveRecord>,
    /// The new instances' agents, as they registered (recorded by the
    /// scale-up's wait): what the roll watches for failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_agents: Vec<NewAgent>,
    /// When the bake of the first moves on the new agents ends (Unix
    /// ms; set when it starts): no old agent goes before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bake_until_unix_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OriginalGroup {
    pub min_size: u32,
    pub max_size: u32,
    pub desired_capacity: u32,
    /// In-service instances per AZ when the roll started.
    pub zones: std::collections::BTreeMap<String, u32>,
    /// Every instance in the group when the roll started, selected or not:
    /// the rest are the new ones.
    pub instance_ids: Vec<String>,
}

/// One instance to replace and the agent it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolledInstance {
    pub id: String,
    pub availability_zone: String,
    pub agent_id: String,
    pub hostname: String,
    pub ip: Option<String>,
    /// Set when TerminateInstanceInAutoScalingGroup was sent (intent), so a
    /// resume counts it in the desired capacity and never sends it twice
    /// without checking.
    #[serde(default)]
    pub terminate_sent: bool,
}

impl GroupRoll {
    /// Instances whose termination was sent: they count as gone when the
    /// desired capacity is computed.
    pub fn terminated(&self) -> u32 {
        u32::try_from(self.instances.iter().filter(|i| i.terminate_sent).count())
            .unwrap_or(u32::MAX)
    }

    /// The absolute desired capacity of the scale-up: N + K − terminated.
    /// Computed from the checkpoint, so no rerun of the step can overshoot.
    /// Saturating: preflight keeps N + K far below `u32::MAX`, but a
    /// checkpoint is a file anyone may edit, and a panic mid-roll is worse
    /// than a desired capacity AWS then refuses.
    pub fn scale_up_desired(&self) -> u32 {
        self.desired_after(self.terminated())
    }

    /// N + K − `terminated`.
    pub fn desired_after(&self, terminated: u32) -> u32 {
        let k = u32::try_from(self.instances.len()).unwrap_or(u32::MAX);
        self.target.saturating_add(k).saturating_sub(terminated)
    }

    /// Instances of the original group still counted in the capacity.
    pub fn original_remaining(&self) -> u32 {
        u32::try_from(self.original.instance_ids.len())
            .unwrap_or(u32::MAX)
            .saturating_sub(self.terminated())
    }

    pub fn instance_mut(&mut self, id: &str) -> Option<&mut RolledInstance> {
        self.instances.iter_mut().find(|i| i.id == id)
    }
}

impl RolledInstance {
    /// Its agent's machine, as the roll's maintenance windows record it.
    pub fn machine(&self) -> MaintenanceRecord {
        MaintenanceRecord {
            hostname: self.hostname.clone(),
            ip: self.ip.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaintenanceRecord {
    pub hostname: String,
    pub ip: Option<String>,
}

impl MaintenanceRecord {
    /// The machine as Mesos names it in a maintenance schedule.
    pub fn machine_id(&self) -> crate::roll::ports::mesos::MachineId {
        crate::roll::ports::mesos::MachineId {
            hostname: Some(self.hostname.clone()),
            ip: self.ip.clone(),
        }
    }
}
