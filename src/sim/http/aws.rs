//! The AWS facade: the Query-protocol subset of Auto Scaling (2011-01-01)
//! and EC2 (2016-11-15) that the roller's AWS adapter calls, over the
//! shared world, on one endpoint (as `AWS_ENDPOINT_URL` gives one URL).
//! Requests are `POST /` with a form body (`Action`, `Version`, params);
//! signatures are not checked. Answers and errors are in each service's
//! own XML, so the SDK parses them and the adapter maps them as it maps
//! AWS's. Faults (`ApiFaults`): latency, 5xx errors, throttling and
//! actions refused as a policy lacking them.
//!
//! - `query`: parameters, list conventions, paging, the facade's error.
//! - `xml`: the XML writer, envelopes and timestamps.
//! - `autoscaling`, `lifecycle_hooks`, `warm_pool`, `tags`, `ec2`,
//!   `cloudwatch`: the actions (CloudWatch's alarms, `2010-08-01`, on the
//!   same endpoint: its action names are its own, so `Action` says which
//!   service).

mod autoscaling;
mod cloudwatch;
mod ec2;
mod lifecycle_hooks;
mod mixed;
mod query;
mod tags;
mod warm_pool;
mod xml;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::sim::shared::{ApiFaults, SharedWorld};
use query::{Params, QueryError, Service};
use tags::TagFlags;

/// The account every simulated ARN and owner id names.
const ACCOUNT: &str = "123456789012";

struct Facade {
    world: SharedWorld,
    tags: Mutex<TagFlags>,
}

/// One endpoint for both services, as `AWS_ENDPOINT_URL` gives one URL.
pub(crate) fn router(world: SharedWorld) -> Router {
    let facade = Arc::new(Facade {
        world,
        tags: Mutex::new(TagFlags::default()),
    });
    Router::new().route("/", post(handle)).with_state(facade)
}

/// Whether the facade answers `action` (a fault may name only those).
pub(crate) fn knows_action(action: &str) -> bool {
    service_of(action).is_some()
}

/// The service an action belongs to, if the facade knows it.
fn service_of(action: &str) -> Option<Service> {
    if autoscaling::ACTIONS.contains(&action)
        || lifecycle_hooks::ACTIONS.contains(&action)
        || warm_pool::ACTIONS.contains(&action)
    {
        Some(Service::AutoScaling)
    } else if ec2::ACTIONS.contains(&action) {
        Some(Service::Ec2)
    } else if cloudwatch::ACTIONS.contains(&action) {
        Some(Service::CloudWatch)
    } else {
        None
    }
}

async fn handle(
    State(facade): State<Arc<Facade>>,
    form: Result<Form<Vec<(String, String)>>, FormRejection>,
) -> Response {
    let request_id = uuid::Uuid::new_v4().to_string();
    let pairs = match form {
        Ok(Form(pairs)) => pairs,
        Err(rejection) => {
            let err = QueryError::sender(
                "MalformedQueryString",
                format!("The request is not a Query-protocol form: {rejection}"),
            );
            return render(Service::AutoScaling, "", Err(err), &request_id);
        }
    };
    let field = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let action = field("Action").unwrap_or_default();
    let version = field("Version");
    let known = service_of(&action);
    // Errors about the request itself go out in the envelope of the service
    // its Version names (Auto Scaling when it names neither).
    let service = known.unwrap_or(match version.as_deref() {
        Some(v) if v == Service::Ec2.version() => Service::Ec2,
        Some(v) if v == Service::CloudWatch.version() => Service::CloudWatch,
        _ => Service::AutoScaling,
    });

    let faults = facade.world.api_faults();
    if faults.aws.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(faults.aws.latency_ms)).await;
    }
    let injected = denied(&faults, &action).or_else(|| {
        injected_fault(
            &faults,
            service,
            rand::random::<f64>(),
            rand::random::<f64>(),
        )
    });

    let params = Params::new(service, pairs);
    let answer = facade.world.with(|w| {
        // Every call counts, refused and faulted ones too: the report shows
        // the load the roller put on AWS.
        w.record_api_call("aws", recorded_name(&action));
        if let Some(err) = injected {
            w.record_injected_fault("aws", &err.code);
            return Err(err);
        }
        let Some(known) = known else {
            return Err(unknown_action(&action));
        };
        check_version(known, &action, version.as_deref())?;
        let mut tags = facade
            .tags
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let answered = match known {
            Service::AutoScaling => autoscaling::dispatch(w, &mut tags, &action, &params)
                .or_else(|| lifecycle_hooks::dispatch(w, &action, &params))
                .or_else(|| warm_pool::dispatch(w, &action, &params)),
            Service::Ec2 => ec2::dispatch(w, &action, &params),
            Service::CloudWatch => cloudwatch::dispatch(w, &action, &params),
        };
        answered.unwrap_or_else(|| Err(unknown_action(&action)))
    });
    render(service, &action, answer, &request_id)
}

/// The name an action is counted under: unknown garbage is not allowed to
/// grow the report without bound.
fn recorded_name(action: &str) -> &str {
    if service_of(action).is_some() {
        action
    } else if action.is_empty() {
        "(missing Action)"
    } else {
        "(unknown action)"
    }
}

fn unknown_action(action: &str) -> QueryError {
    if action.is_empty() {
        QueryError::sender(
            "MissingAction",
            "The request must contain the parameter Action",
        )
    } else {
        QueryError::sender(
            "InvalidAction",
            format!("The action {action} is not valid for this web service."),
        )
    }
}

fn check_version(service: Service, action: &str, version: Option<&str>) -> Result<(), QueryError> {
    match version {
        Some(v) if v == service.version() => Ok(()),
        None | Some("") => Err(QueryError::sender(
            "MissingParameter",
            "The request must contain the parameter Version",
        )),
        Some(v) => Err(QueryError::sender(
            "InvalidAction",
            format!("The action {action} is not valid for version {v}."),
        )),
    }
}

/// IAM's refusal of an action the caller's policy lacks (`aws_denied`),
/// worded as AWS words it.
fn denied(faults: &ApiFaults, action: &str) -> Option<QueryError> {
    let prefix = match service_of(action)? {
        Service::AutoScaling => "autoscaling",
        Service::Ec2 => "ec2",
        Service::CloudWatch => "cloudwatch",
    };
    faults
        .aws_denied
        .iter()
        .any(|a| a == action)
        .then(|| QueryError {
            status: StatusCode::FORBIDDEN,
            code: "AccessDenied".into(),
            message: format!(
                "User: arn:aws:iam::{ACCOUNT}:user/roller is not authorized to perform: \
                 {prefix}:{action} because no identity-based policy allows the \
                 {prefix}:{action} action"
            ),
            sender: true,
        })
}

/// The fault this call gets, if any, from two uniform draws in [0, 1):
/// a 5xx (half InternalFailure 500, half ServiceUnavailable 503) with
/// `error_rate`, else throttling with `aws_throttle_rate` (Auto Scaling:
/// 400 Throttling; EC2: 503 RequestLimitExceeded, as each answers).
fn injected_fault(
    faults: &ApiFaults,
    service: Service,
    draw: f64,
    which: f64,
) -> Option<QueryError> {
    let error_rate = faults.aws.error_rate;
    let throttle_rate = faults.aws_throttle_rate;
    if draw < error_rate {
        let unavailable = which < 0.5;
        return Some(match (service, unavailable) {
            (Service::CloudWatch, false) => QueryError::receiver(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalServiceError",
                "Internal service error (injected by the simulator)",
            ),
            (Service::CloudWatch, true) => QueryError::receiver(
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                "The service is unavailable. Please try again later. (injected by the simulator)",
            ),
            (Service::AutoScaling, false) => QueryError::receiver(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalFailure",
                "An internal error occurred. (injected by the simulator)",
            ),
            (Service::AutoScaling, true) => QueryError::receiver(
                StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                "The service is unavailable. Please try again later. (injected by the simulator)",
            ),
            (Service::Ec2, false) => QueryError::receiver(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "An internal error has occurred (injected by the simulator)",
            ),
            (Service::Ec2, true) => QueryError::receiver(
                StatusCode::SERVICE_UNAVAILABLE,
                "Unavailable",
                "The server is overloaded and can't handle the request (injected by the simulator)",
            ),
        });
    }
    // A second draw region, so both rates hold when both are set.
    if draw < error_rate + throttle_rate * (1.0 - error_rate) {
        return Some(match service {
            Service::AutoScaling | Service::CloudWatch => {
                QueryError::sender("Throttling", "Rate exceeded")
            }
            Service::Ec2 => QueryError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: "RequestLimitExceeded".into(),
                message: "Request limit exceeded.".into(),
                sender: true,
            },
        });
    }
    None
}

fn render(
    service: Service,
    action: &str,
    answer: Result<Option<String>, QueryError>,
    request_id: &str,
) -> Response {
    let (status, body) = match answer {
        Ok(result) => (
            StatusCode::OK,
            match service {
                Service::AutoScaling => xml::autoscaling_response(action, result, request_id),
                Service::CloudWatch => xml::cloudwatch_response(action, result, request_id),
                Service::Ec2 => {
                    xml::ec2_response(action, result.as_deref().unwrap_or(""), request_id)
                }
            },
        ),
        Err(e) => (
            e.status,
            match service {
                Service::AutoScaling => {
                    xml::autoscaling_error(e.sender, &e.code, &e.message, request_id)
                }
                Service::Ec2 => xml::ec2_error(&e.code, &e.message, request_id),
                Service::CloudWatch => {
                    xml::cloudwatch_error(e.sender, &e.code, &e.message, request_id)
                }
            },
        ),
    };
    (
        status,
        [
            (header::CONTENT_TYPE, "text/xml".to_string()),
            (
                header::HeaderName::from_static("x-amzn-requestid"),
                request_id.to_string(),
            ),
        ],
        body,
    )
        .into_response()
}

/// The region of an AZ name (`us-east-1a` → `us-east-1`).
fn region_of(az: &str) -> &str {
    az.trim_end_matches(|c: char| c.is_ascii_alphabetic())
}
