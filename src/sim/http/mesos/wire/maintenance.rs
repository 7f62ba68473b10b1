//! Maintenance as the master reads and writes it: the schedule (v0 body
//! and v1 `schedule`), machine ids, the cluster's maintenance status.

use serde::{Deserialize, Serialize};

use crate::sim::world::{MachineId, MaintenanceStatus, MaintenanceWindow};

/// A window posted without `duration` is unavailable indefinitely; the
/// world keeps it as the longest duration and it is written back without
/// one, so another operator's window survives a read-modify-write as it was.
pub(crate) const INDEFINITE_NS: i64 = i64::MAX;

// ---- maintenance: the schedule (v0 body and v1 `schedule`), machine ids

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Schedule {
    /// Mesos writes no empty repeated field: an empty schedule is `{}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) windows: Vec<Window>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Window {
    #[serde(default)]
    pub(crate) machine_ids: Vec<MachineIdJson>,
    pub(crate) unavailability: Unavailability,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Unavailability {
    pub(crate) start: Nanoseconds,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) duration: Option<Nanoseconds>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Nanoseconds {
    pub(crate) nanoseconds: i64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct MachineIdJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hostname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ip: Option<String>,
}

impl From<MachineIdJson> for MachineId {
    fn from(id: MachineIdJson) -> MachineId {
        MachineId {
            hostname: id.hostname,
            ip: id.ip,
        }
    }
}

impl From<&MachineId> for MachineIdJson {
    fn from(id: &MachineId) -> MachineIdJson {
        MachineIdJson {
            hostname: id.hostname.clone(),
            ip: id.ip.clone(),
        }
    }
}

impl Schedule {
    pub(crate) fn from_windows(windows: &[MaintenanceWindow]) -> Schedule {
        Schedule {
            windows: windows
                .iter()
                .map(|w| Window {
                    machine_ids: w.machines.iter().map(MachineIdJson::from).collect(),
                    unavailability: Unavailability {
                        start: Nanoseconds {
                            nanoseconds: w.start_unix_ns,
                        },
                        duration: (w.duration_ns != INDEFINITE_NS).then_some(Nanoseconds {
                            nanoseconds: w.duration_ns,
                        }),
                    },
                })
                .collect(),
        }
    }

    /// The world's windows, as posted: the world validates them as Mesos
    /// does (an empty window, a negative duration, each machine), in
    /// Mesos' order. No duration is an indefinite window.
    pub(crate) fn into_windows(self) -> Vec<MaintenanceWindow> {
        self.windows
            .into_iter()
            .map(|w| MaintenanceWindow {
                machines: w.machine_ids.into_iter().map(MachineId::from).collect(),
                start_unix_ns: w.unavailability.start.nanoseconds,
                duration_ns: w
                    .unavailability
                    .duration
                    .map_or(INDEFINITE_NS, |d| d.nanoseconds),
            })
            .collect()
    }
}

/// `/master/maintenance/status` and the v1 `status`.
#[derive(Debug, Serialize)]
pub(crate) struct ClusterStatus {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) draining_machines: Vec<DrainingMachine>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) down_machines: Vec<MachineIdJson>,
}

/// No `statuses`: Marathon ignores inverse offers, and the simulator
/// models no other framework that would answer them.
#[derive(Debug, Serialize)]
pub(crate) struct DrainingMachine {
    pub(crate) id: MachineIdJson,
}

impl ClusterStatus {
    pub(crate) fn from_status(status: &MaintenanceStatus) -> ClusterStatus {
        ClusterStatus {
            draining_machines: status
                .draining
                .iter()
                .map(|m| DrainingMachine { id: m.into() })
                .collect(),
            down_machines: status.down.iter().map(MachineIdJson::from).collect(),
        }
    }
}
