//! The plan API of a live roll (`roller run --listen`, `roller demo
//! --listen`): the DC/OS SDK's `/v1/plans` resource over the one plan the
//! run follows, named `roll`, and `/metrics` in Prometheus' text format.
//! Served with axum on the run's own runtime; it reads and submits through
//! `crate::roll::engine::live::Live` only, so the roll knows nothing of HTTP.
//!
//! - `plans`: `GET /v1/plans`, `GET /v1/plans/roll`, `POST
//!   /v1/plans/roll/{continue,interrupt,forceComplete,restart,start,stop}`.
//! - `auth`: the bearer token, and who called (for the event log).
//! - `exposition`: the `/metrics` text.
//!
//! Who may call: anyone who can reach the address. So it binds loopback
//! unless a token is configured (`ROLLER_API_TOKEN` or
//! `ROLLER_API_TOKEN_FILE`); with a token every request needs it.

mod auth;
mod exposition;
mod plans;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::http::{HttpConfigError, Secret};
use crate::roll::engine::live::Live;

pub(crate) use auth::OPERATOR_HEADER;
pub(crate) use plans::PLAN;

/// The variable holding the API's bearer token (or, with `_FILE`, the
/// file that does).
pub(crate) const TOKEN_VARIABLE: &str = "ROLLER_API_TOKEN";

/// Where to listen and what to ask of callers, checked: a non-loopback
/// address comes with a token.
#[derive(Clone, Debug)]
pub(crate) struct ApiSettings {
    listen: SocketAddr,
    token: Option<Secret>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error(
        "--listen {listen} is reachable from other hosts, and no token is set: anyone who can \
         reach it could interrupt or force-complete the roll. Set {TOKEN_VARIABLE} or \
         {TOKEN_VARIABLE}_FILE (callers then send `Authorization: Bearer <token>`), or listen on \
         loopback (127.0.0.1:PORT)"
    )]
    OpenWithoutToken { listen: SocketAddr },
    #[error("the plan API's token: {0}")]
    Token(HttpConfigError),
    #[error("cannot listen on {listen} for the plan API: {source}")]
    Bind {
        listen: SocketAddr,
        source: std::io::Error,
    },
}

impl ApiError {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            ApiError::OpenWithoutToken { .. } => "api_open_without_token",
            ApiError::Token(_) => "api_token",
            ApiError::Bind { .. } => "api_bind",
        }
    }
}

impl ApiSettings {
    /// `listen` with `token`; a non-loopback address needs a token.
    pub(crate) fn new(listen: SocketAddr, token: Option<Secret>) -> Result<ApiSettings, ApiError> {
        if !listen.ip().is_loopback() && token.is_none() {
            return Err(ApiError::OpenWithoutToken { listen });
        }
        Ok(ApiSettings { listen, token })
    }

    /// `listen` with the token from `ROLLER_API_TOKEN(_FILE)`, if set.
    pub(crate) fn from_env(listen: SocketAddr) -> Result<ApiSettings, ApiError> {
        let token = crate::http::secret_from_env(TOKEN_VARIABLE).map_err(ApiError::Token)?;
        ApiSettings::new(listen, token)
    }
}

/// What every handler shares.
#[derive(Clone)]
pub(crate) struct ApiState {
    pub(crate) live: Arc<Live>,
    pub(crate) token: Option<Secret>,
}

/// The routes, every one behind the token check when a token is set.
pub(crate) fn router(live: Arc<Live>, token: Option<Secret>) -> Router {
    let state = ApiState { live, token };
    Router::new()
        .route("/v1/plans", get(plans::list))
        .route("/v1/plans/{plan}", get(plans::show))
        .route("/v1/plans/{plan}/{operation}", post(plans::operate))
        .route("/metrics", get(exposition::metrics))
        .fallback(plans::no_route)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authorize,
        ))
        .with_state(state)
}

/// Binds, says where on stderr (`roller: plan API on http://IP:PORT …`,
/// the line scripts read the port from), and serves on this runtime
/// until it shuts down. Returns the bound address.
pub(crate) async fn start(settings: &ApiSettings, live: Arc<Live>) -> Result<SocketAddr, ApiError> {
    let bind_error = |source| ApiError::Bind {
        listen: settings.listen,
        source,
    };
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .map_err(bind_error)?;
    let bound = listener.local_addr().map_err(bind_error)?;
    eprintln!("roller: plan API on http://{bound} (GET /v1/plans, /metrics)");
    let app = router(live, settings.token.clone());
    tokio::spawn(serve(listener, app, std::future::pending()));
    Ok(bound)
}

/// Serves `app` on `listener` until `shutdown` resolves, with each
/// caller's address available to the handlers (the event log names it).
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}
