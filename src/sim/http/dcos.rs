//! The DC/OS admin router facade: `/service/<name>/v1/...` reaches the
//! scheduler of the SDK service `<name>` (the plans and pod endpoints of
//! dcos-commons' `PlansResource` and `PodResource`), with the
//! scheduler's status codes and texts. The router itself answers an
//! unknown service 404 and, while the service's scheduler app has no
//! running task (a roll killing and relaunching it), 502 as nginx does
//! for an upstream that is not there.
//!
//! - `wire`: the JSON the scheduler writes.

mod wire;

#[cfg(test)]
mod tests;

use axum::Router;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::sim::shared::SharedWorld;
use crate::sim::world::{PlanCommand, ServiceError};

use wire::{
    CommandResult, PlanInfo, PodCommandResult, PodInstance, PodType, ServicePods, TaskInfoAndStatus,
};

/// The admin router over the shared world.
pub(crate) fn router(world: SharedWorld) -> Router {
    Router::new().fallback(handle).with_state(world)
}

/// What a request under `/service/<name>/v1` asks of the scheduler.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Route {
    Plans,
    Plan(String),
    PlanCommand(String, PlanCommand),
    Pods,
    PodStatuses,
    PodStatus(String),
    PodInfo(String),
    PodReplace(String),
    MethodNotAllowed,
    NotFound,
}

impl Route {
    /// `rest` is the path after `/v1/`.
    fn of(method: &Method, rest: &str) -> Route {
        let get = method == Method::GET;
        let post = method == Method::POST;
        let only = |ok: bool, route: Route| if ok { route } else { Route::MethodNotAllowed };
        let parts: Vec<&str> = rest.split('/').collect();
        match parts.as_slice() {
            ["plans"] => only(get, Route::Plans),
            ["plans", plan] => only(get, Route::Plan(plan.to_string())),
            ["plans", plan, "interrupt"] => only(
                post,
                Route::PlanCommand(plan.to_string(), PlanCommand::Interrupt),
            ),
            ["plans", plan, "continue"] => only(
                post,
                Route::PlanCommand(plan.to_string(), PlanCommand::Continue),
            ),
            ["pod"] => only(get, Route::Pods),
            ["pod", "status"] => only(get, Route::PodStatuses),
            ["pod", pod, "status"] => only(get, Route::PodStatus(pod.to_string())),
            ["pod", pod, "info"] => only(get, Route::PodInfo(pod.to_string())),
            ["pod", pod, "replace"] => only(post, Route::PodReplace(pod.to_string())),
            _ => Route::NotFound,
        }
    }

    /// The name the monitor counts the call under (names left out).
    fn action(&self, method: &Method) -> String {
        match self {
            Route::Plans => "GET /v1/plans".into(),
            Route::Plan(_) => "GET /v1/plans/{plan}".into(),
            Route::PlanCommand(_, PlanCommand::Interrupt) => {
                "POST /v1/plans/{plan}/interrupt".into()
            }
            Route::PlanCommand(_, PlanCommand::Continue) => "POST /v1/plans/{plan}/continue".into(),
            Route::Pods => "GET /v1/pod".into(),
            Route::PodStatuses => "GET /v1/pod/status".into(),
            Route::PodStatus(_) => "GET /v1/pod/{pod}/status".into(),
            Route::PodInfo(_) => "GET /v1/pod/{pod}/info".into(),
            Route::PodReplace(_) => "POST /v1/pod/{pod}/replace".into(),
            Route::MethodNotAllowed => format!("{method} (method not allowed)"),
            Route::NotFound => "unknown endpoint".into(),
        }
    }
}

async fn handle(State(world): State<SharedWorld>, method: Method, uri: Uri) -> Response {
    let path = uri.path().trim_end_matches('/');
    let Some((service, rest)) = path
        .strip_prefix("/service/")
        .and_then(|p| p.split_once('/'))
        .or_else(|| path.strip_prefix("/service/").map(|name| (name, "")))
    else {
        world.with(|w| w.record_api_call("dcos", "unknown endpoint"));
        return nginx(StatusCode::NOT_FOUND);
    };
    let route = match rest.strip_prefix("v1/") {
        Some(rest) => Route::of(&method, rest),
        None => Route::NotFound,
    };
    world.with(|w| w.record_api_call("dcos", &route.action(&method)));
    let (known, up) = world.with(|w| {
        (
            w.service_names().iter().any(|n| n == service),
            w.scheduler_running(service),
        )
    });
    if !known {
        return nginx(StatusCode::NOT_FOUND);
    }
    if !up {
        return nginx(StatusCode::BAD_GATEWAY);
    }
    answer(&world, service, route).unwrap_or_else(refusal)
}

fn answer(world: &SharedWorld, service: &str, route: Route) -> Result<Response, ServiceError> {
    Ok(match route {
        Route::Plans => json(StatusCode::OK, &world.with(|w| w.plan_names(service))?),
        Route::Plan(plan) => {
            let view = world.with(|w| w.plan(service, &plan))?;
            // `PlansQueries.get`: errors 417, complete 200, else 202.
            let status = match view.status {
                "ERROR" => StatusCode::EXPECTATION_FAILED,
                "COMPLETE" => StatusCode::OK,
                _ => StatusCode::ACCEPTED,
            };
            json(status, &PlanInfo::from_view(view))
        }
        Route::PlanCommand(plan, command) => {
            if world.with(|w| w.plan_command(service, &plan, command))? {
                let name = match command {
                    PlanCommand::Interrupt => "interrupt",
                    PlanCommand::Continue => "continue",
                };
                json(
                    StatusCode::OK,
                    &CommandResult {
                        message: format!("Received cmd: {name}"),
                    },
                )
            } else {
                text(
                    StatusCode::ALREADY_REPORTED,
                    "Command has already been reported or completed".to_string(),
                )
            }
        }
        Route::Pods => json(StatusCode::OK, &world.with(|w| w.pod_names(service))?),
        Route::PodStatuses => {
            let pods = world.with(|w| w.pod_statuses(service))?;
            json(
                StatusCode::OK,
                &ServicePods {
                    service: service.to_string(),
                    pods: pods.into_iter().map(PodType::from_view).collect(),
                },
            )
        }
        Route::PodStatus(pod) => {
            let status = world.with(|w| w.pod_status(service, &pod))?;
            json(StatusCode::OK, &PodInstance::from_view(status))
        }
        Route::PodInfo(pod) => {
            let tasks = world.with(|w| w.pod_info(service, &pod))?;
            let written: Vec<TaskInfoAndStatus> = tasks
                .into_iter()
                .map(TaskInfoAndStatus::from_view)
                .collect();
            json(StatusCode::OK, &written)
        }
        Route::PodReplace(pod) => {
            let tasks = world.with(|w| w.replace_pod(service, &pod))?;
            json(StatusCode::OK, &PodCommandResult { pod, tasks })
        }
        // JAX-RS' answers for a path no resource serves, or a method it
        // does not take.
        Route::MethodNotAllowed => text(
            StatusCode::METHOD_NOT_ALLOWED,
            "HTTP 405 Method Not Allowed".to_string(),
        ),
        Route::NotFound => text(StatusCode::NOT_FOUND, "HTTP 404 Not Found".to_string()),
    })
}

/// The scheduler's 404s (`ResponseUtils.notFoundResponse`): text.
fn refusal(err: ServiceError) -> Response {
    match err {
        ServiceError::UnknownService(_) => nginx(StatusCode::NOT_FOUND),
        ServiceError::PlanNotFound(_) | ServiceError::PodNotFound(_) => {
            text(StatusCode::NOT_FOUND, err.to_string())
        }
    }
}

fn json<T: Serialize>(status: StatusCode, body: &T) -> Response {
    match serde_json::to_string(body) {
        Ok(text) => (status, [(header::CONTENT_TYPE, "application/json")], text).into_response(),
        Err(err) => text(StatusCode::INTERNAL_SERVER_ERROR, err.to_string()),
    }
}

fn text(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain")], body).into_response()
}

/// The admin router's own answer (nginx's error page, as openresty
/// writes it).
fn nginx(status: StatusCode) -> Response {
    let line = format!(
        "{} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    let page = format!(
        "<html>\r\n<head><title>{line}</title></head>\r\n<body>\r\n<center><h1>{line}</h1></center>\r\n\
         <hr><center>openresty</center>\r\n</body>\r\n</html>\r\n"
    );
    (status, [(header::CONTENT_TYPE, "text/html")], page).into_response()
}
