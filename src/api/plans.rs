//! The DC/OS SDK's plan resource (`PlansResource` / `PlansQueries` in
//! mesosphere/dcos-commons) over the run's one plan, `roll`.
//!
//! - `GET /v1/plans`: `["roll"]`.
//! - `GET /v1/plans/roll`: the PlanInfo (`roller plan show --json`),
//!   200 when COMPLETE, 417 when ERROR, else 202.
//! - `POST /v1/plans/roll/<operation>?phase=&step=`: judged at once on the
//!   plan as the run last saved it (with the operations already queued
//!   applied), queued when it changes something, applied by the run at
//!   its next tick. 200 `{"message": "Received cmd: …"}` when queued, 208
//!   when it would change nothing, 400 for a step without its phase, 404
//!   for an unknown plan, phase or step.
//!
//! The SDK answers its errors and its 208 in plain text; here every body
//! is JSON with the SDK's sentence in `message` (and roller's explanation
//! in `detail` where it has one), so a client parses one shape.

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::json;

use super::ApiState;
use super::auth::Caller;
use crate::plan::{self, AddressError, Operation, Status};
use crate::roll::engine::live::{SubmitError, Submitted};

/// The one plan a run serves.
pub(crate) const PLAN: &str = "roll";

/// The SDK's body for a command that changes nothing.
const ALREADY_REPORTED: &str = "Command has already been reported or completed";

#[derive(Debug, Deserialize)]
pub(super) struct Address {
    phase: Option<String>,
    step: Option<String>,
}

fn message(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "message": message.into() }))).into_response()
}

fn not_found(what: &str, detail: Option<String>) -> Response {
    let mut body = json!({ "message": format!("{what} not found") });
    if let Some(detail) = detail {
        body["detail"] = json!(detail);
    }
    (StatusCode::NOT_FOUND, Json(body)).into_response()
}

fn not_ready(err: &SubmitError) -> Response {
    message(StatusCode::SERVICE_UNAVAILABLE, err.to_string())
}

pub(super) async fn list() -> Json<[&'static str; 1]> {
    Json([PLAN])
}

pub(super) async fn show(State(state): State<ApiState>, Path(name): Path<String>) -> Response {
    if name != PLAN {
        return not_found(&format!("Plan {name}"), None);
    }
    let Some(checkpoint) = state.live.checkpoint() else {
        return not_ready(&SubmitError::NotReady);
    };
    let plan = &checkpoint.plan;
    let status = match plan.status() {
        Status::Error => StatusCode::EXPECTATION_FAILED,
        _ if plan.is_complete() => StatusCode::OK,
        _ => StatusCode::ACCEPTED,
    };
    // Pretty, as the SDK's PrettyJsonResource and `roller plan show
    // --json` print it, byte for byte.
    let mut body = serde_json::to_string_pretty(&plan::info(plan)).unwrap_or_default();
    body.push('\n');
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The operation a path segment names, as the SDK spells it.
fn operation(segment: &str) -> Option<Operation> {
    Some(match segment {
        "continue" => Operation::Continue,
        "interrupt" => Operation::Interrupt,
        "forceComplete" => Operation::ForceComplete,
        "restart" => Operation::Restart,
        "start" => Operation::Start,
        "stop" => Operation::Stop,
        _ => return None,
    })
}

/// The SDK's `Received cmd: …` sentence for each command.
fn received(segment: &str, phase: Option<&str>, step: Option<&str>) -> String {
    let command = match segment {
        "start" => format!("start {PLAN} with parameters: {{}}"),
        "forceComplete" | "restart" => format!(
            "{segment} for Plan: {PLAN}, Phase: {}, Step: {}",
            phase.unwrap_or("null"),
            step.unwrap_or("null")
        ),
        _ => segment.to_string(),
    };
    format!("Received cmd: {command}")
}

pub(super) async fn operate(
    State(state): State<ApiState>,
    Extension(Caller(caller)): Extension<Caller>,
    Path((name, segment)): Path<(String, String)>,
    Query(address): Query<Address>,
) -> Response {
    let Some(operation) = operation(&segment) else {
        return not_found(
            &format!("Operation {segment}"),
            Some(
                "the operations are continue, interrupt, forceComplete, restart, start and stop"
                    .to_string(),
            ),
        );
    };
    if name != PLAN {
        return not_found(&format!("Plan {name}"), None);
    }
    // The SDK treats a blank parameter as absent.
    let blank = |v: Option<String>| v.filter(|v| !v.trim().is_empty());
    let (phase, step) = (blank(address.phase), blank(address.step));
    if step.is_some() && phase.is_none() {
        return message(StatusCode::BAD_REQUEST, "Missing phase");
    }
    match state
        .live
        .submit(operation, phase.as_deref(), step.as_deref(), &caller)
    {
        Ok(Submitted::Queued { id, target }) => (
            StatusCode::OK,
            Json(json!({
                "message": received(&segment, phase.as_deref(), step.as_deref()),
                "id": id,
                "target": target,
                "applied": "by the run at its next tick (after the API call in flight)",
            })),
        )
            .into_response(),
        Ok(Submitted::AlreadyDone { target, status }) => (
            StatusCode::ALREADY_REPORTED,
            Json(json!({
                "message": ALREADY_REPORTED,
                "target": target,
                "status": status,
            })),
        )
            .into_response(),
        Err(SubmitError::Address(err)) => {
            let what = match &err {
                AddressError::UnknownPhase { given, .. }
                | AddressError::AmbiguousPhase { given, .. } => format!("Phase {given}"),
                AddressError::UnknownStep { given, .. }
                | AddressError::AmbiguousStep { given, .. } => format!("Step {given}"),
            };
            not_found(&what, Some(err.to_string()))
        }
        Err(err @ SubmitError::NotReady) => not_ready(&err),
    }
}

/// Anything else: the SDK-like 404, naming what exists.
pub(super) async fn no_route(uri: Uri) -> Response {
    not_found(
        &format!("Path {}", uri.path()),
        Some(format!(
            "this server has GET /v1/plans, GET /v1/plans/{PLAN}, POST /v1/plans/{PLAN}/<operation> \
             and GET /metrics"
        )),
    )
}
