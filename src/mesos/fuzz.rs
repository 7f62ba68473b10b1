//! The Mesos fuzz target's body (see `crate::fuzz_targets`): one answer of
//! a master, read as every response the adapter reads, with the very
//! functions `master.rs` and `client.rs` read them with.

use reqwest::Url;

use super::maintenance::{schedule_machines, unschedule_machines};
use super::master::parse;
use super::wire::{ClusterStatus, GetAgentsResponse, Schedule, SlavesResponse, StateLeader};
use crate::roll::ports::mesos::{
    MachineId, MaintenanceSchedule, MaintenanceStatus, Unavailability,
};

pub(crate) fn responses(body: &[u8]) {
    if let Ok(slaves) = parse::<SlavesResponse>("GET /master/slaves", body) {
        let _ = slaves.into_agents();
    }
    if let Ok(agents) = parse::<GetAgentsResponse>("POST /api/v1 GET_AGENTS", body) {
        let _ = agents.into_agents();
    }
    if let Ok(status) = parse::<ClusterStatus>("GET /master/maintenance/status", body) {
        let _: MaintenanceStatus = status.into();
    }
    if let Ok(schedule) = parse::<Schedule>("GET /master/maintenance/schedule", body) {
        edit_schedule(schedule.into());
    }
    // `client.rs`, finding the leader from /master/state.
    if let Ok(state) = serde_json::from_slice::<StateLeader>(body)
        && let Some(address) = state.leader_address()
    {
        let _ = Url::parse(&format!("http://{address}/"));
    }
}

/// The edit cycle of `master.rs` on a schedule read from the master, with
/// the rules `maintenance.rs` promises: repeating an edit changes nothing,
/// and what is written back encodes.
fn edit_schedule(schedule: MaintenanceSchedule) {
    let mut ours = vec![MachineId {
        hostname: Some("agent-1.fuzz".to_string()),
        ip: Some("10.9.9.9".to_string()),
    }];
    // One of the schedule's own machines too, when it has one.
    if let Some(machine) = schedule.windows.iter().flat_map(|w| &w.machines).next() {
        ours.push(machine.clone());
    }
    let unavailability = Unavailability {
        start_nanos: 0,
        duration_nanos: Some(3_600_000_000_000),
    };
    let added = schedule_machines(&schedule, &ours, unavailability);
    let again = schedule_machines(&added.schedule, &ours, unavailability);
    assert!(
        !again.needs_write(),
        "scheduling the same machines twice wrote twice"
    );
    let removed = unschedule_machines(&added.schedule, &ours);
    let again = unschedule_machines(&removed.schedule, &ours);
    assert!(
        !again.needs_write(),
        "unscheduling the same machines twice wrote twice"
    );
    for edited in [&added.schedule, &removed.schedule] {
        serde_json::to_vec(&Schedule::from(edited)).expect("a schedule encodes");
    }
}
