//! Marathon's answers as the facade writes them: JSON with Marathon's
//! status codes, its `{"message"}` and validation bodies, the 409 of a
//! locked app, and Jetty's error page of the leader filter.

use super::*;

pub(super) fn pong() -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "pong",
    )
        .into_response()
}

/// What `LeaderProxyFilter`'s `response.sendError(code, reason)` gives:
/// the servlet container's (Jetty's) error page, in the form users quote
/// from real Marathons (`HTTP ERROR 503`, `Problem accessing /. Reason:`,
/// the reason).
pub(super) fn jetty_error(status: StatusCode, path: &str, reason: &str) -> Response {
    let code = status.as_u16();
    let body = format!(
        "<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html;charset=utf-8\"/>\n\
         <title>Error {code} {reason}</title>\n</head>\n<body><h2>HTTP ERROR {code}</h2>\n\
         <p>Problem accessing {path}. Reason:\n<pre>    {reason}</pre></p>\n</body>\n</html>\n",
        path = html_escape(path),
    );
    (
        status,
        [(header::CONTENT_TYPE, "text/html;charset=iso-8859-1")],
        body,
    )
        .into_response()
}

/// Text made safe to write into the error page.
fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(super) fn marathon_error(err: &MarathonError) -> Response {
    match err {
        MarathonError::AppNotFound { app, .. } => {
            let app = if app.starts_with('/') {
                app.clone()
            } else {
                format!("/{app}")
            };
            message(
                StatusCode::NOT_FOUND,
                &format!("App '{app}' does not exist"),
            )
        }
        MarathonError::DeploymentConflict { deployments, .. } => locked(deployments.clone()),
        MarathonError::DeploymentNotFound { id, .. } => message(
            StatusCode::NOT_FOUND,
            &format!("DeploymentPlan {id} does not exist"),
        ),
        MarathonError::Invalid { path, error, .. } => not_valid(path, error),
    }
}

/// Marathon's 409 for a change to an app a deployment is changing.
pub(super) fn locked(deployments: Vec<String>) -> Response {
    let first = deployments.first().cloned().unwrap_or_default();
    json(
        StatusCode::CONFLICT,
        &Locked {
            message: format!(
                "App is locked by one or more deployments. Override with the option '?force=true'. View details at '/v2/deployments/{first}'."
            ),
            deployments: deployments
                .into_iter()
                .map(|id| DeploymentRef { id })
                .collect(),
        },
    )
}

pub(super) fn invalid_json(err: &serde_json::Error) -> Response {
    json(
        StatusCode::BAD_REQUEST,
        &serde_json::json!({
            "message": "Invalid JSON",
            "details": [{"path": "/", "errors": [err.to_string()]}],
        }),
    )
}

pub(super) fn not_valid(path: &str, error: &str) -> Response {
    json(
        StatusCode::UNPROCESSABLE_ENTITY,
        &serde_json::json!({
            "message": "Object is not valid",
            "details": [{"path": path, "errors": [error]}],
        }),
    )
}

pub(super) fn message(status: StatusCode, text: &str) -> Response {
    json(
        status,
        &Message {
            message: text.to_string(),
        },
    )
}

pub(super) fn json(status: StatusCode, value: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (status, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(err) => (StatusCode::INTERNAL_SERVER_ERROR, err.to_string()).into_response(),
    }
}
