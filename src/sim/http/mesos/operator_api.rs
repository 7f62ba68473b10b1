//! The v1 operator API (`POST /api/v1`): the calls the simulator answers,
//! each dispatched on its `type`, with the status codes and texts of
//! Mesos' `master/http.cpp`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::sim::shared::SharedWorld;
use crate::sim::world::{MesosError, World};

use super::wire::{
    ClusterStatus, GetAgents, GetAgentsResponse, GetScheduleResponse, GetStatusResponse, Schedule,
    ScheduleEnvelope, StatusEnvelope, V1Agent, V1Call,
};
use super::{json, machines_call, text, update_schedule};

pub(super) fn api_v1(world: &SharedWorld, call: V1Call) -> Response {
    let missing = |field: &str| {
        text(
            StatusCode::BAD_REQUEST,
            &format!("Failed to validate master::Call: Expecting '{field}' to be present"),
        )
    };
    match call.kind.as_str() {
        "GET_AGENTS" => {
            let agents = world.with(|w| w.agents());
            json(
                StatusCode::OK,
                &GetAgentsResponse {
                    kind: "GET_AGENTS",
                    get_agents: GetAgents {
                        agents: agents.iter().map(V1Agent::from_view).collect(),
                    },
                },
            )
        }
        "GET_MAINTENANCE_SCHEDULE" => {
            let windows = world.with(|w| w.maintenance_schedule());
            json(
                StatusCode::OK,
                &GetScheduleResponse {
                    kind: "GET_MAINTENANCE_SCHEDULE",
                    get_maintenance_schedule: ScheduleEnvelope {
                        schedule: Schedule::from_windows(&windows),
                    },
                },
            )
        }
        "GET_MAINTENANCE_STATUS" => {
            let status = world.with(|w| w.maintenance_status());
            json(
                StatusCode::OK,
                &GetStatusResponse {
                    kind: "GET_MAINTENANCE_STATUS",
                    get_maintenance_status: StatusEnvelope {
                        status: ClusterStatus::from_status(&status),
                    },
                },
            )
        }
        "UPDATE_MAINTENANCE_SCHEDULE" => match call.update_maintenance_schedule {
            Some(update) => update_schedule(world, update.schedule),
            None => missing("update_maintenance_schedule"),
        },
        "START_MAINTENANCE" => match call.start_maintenance {
            Some(start) => machines_call(world, start.machines, World::machines_down),
            None => missing("start_maintenance"),
        },
        "STOP_MAINTENANCE" => match call.stop_maintenance {
            Some(stop) => machines_call(world, stop.machines, World::machines_up),
            None => missing("stop_maintenance"),
        },
        "DRAIN_AGENT" => match call.drain_agent {
            Some(drain) => {
                let config = drain.config();
                match world.with(|w| w.drain_agent_with(&drain.agent_id.value, config)) {
                    Ok(()) => StatusCode::OK.into_response(),
                    Err(err) => mesos_error(&err),
                }
            }
            None => missing("drain_agent"),
        },
        "DEACTIVATE_AGENT" => match call.deactivate_agent {
            Some(deactivate) => {
                agent_call(world, &deactivate.agent_id.value, World::deactivate_agent)
            }
            None => missing("deactivate_agent"),
        },
        "REACTIVATE_AGENT" => match call.reactivate_agent {
            Some(reactivate) => {
                agent_call(world, &reactivate.agent_id.value, World::reactivate_agent)
            }
            None => missing("reactivate_agent"),
        },
        // Mesos fails an unknown type while converting JSON to protobuf;
        // the adapter reads that text as "this master lacks the call".
        other => protobuf_error(&format!(
            "Failed to find enum for '{other}' (not modelled by the simulator)"
        )),
    }
}

fn agent_call(
    world: &SharedWorld,
    agent_id: &str,
    act: fn(&mut World, &str) -> Result<(), MesosError>,
) -> Response {
    match world.with(|w| act(w, agent_id)) {
        Ok(()) => StatusCode::OK.into_response(),
        Err(err) => mesos_error(&err),
    }
}

pub(super) fn protobuf_error(reason: &str) -> Response {
    text(
        StatusCode::BAD_REQUEST,
        &format!("Failed to convert JSON into Call protobuf: {reason}"),
    )
}

/// A refused operator call: Mesos' `BadRequest` (400) with its reason as
/// plain text, or the `Conflict` (409) of a reactivated agent that is not
/// registered. Mesos names no agent in "Unknown agent".
fn mesos_error(err: &MesosError) -> Response {
    match err {
        MesosError::UnknownAgent { .. } => text(StatusCode::BAD_REQUEST, "Unknown agent"),
        MesosError::NotRegistered { .. } => text(StatusCode::CONFLICT, &err.to_string()),
        MesosError::InMaintenanceSchedule { .. }
        | MesosError::NotCapableOfDraining { .. }
        | MesosError::NotDeactivated { .. }
        | MesosError::StillDraining { .. } => text(StatusCode::BAD_REQUEST, &err.to_string()),
    }
}
