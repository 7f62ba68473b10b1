//! `--listen` of `roller run` and `roller demo`: the plan API's settings
//! checked before anything else happens (a non-loopback address needs a
//! token), and the server started on the run's runtime with the `Live`
//! state the runner shares with it.

use std::net::SocketAddr;
use std::sync::Arc;

use super::error::CliError;
use crate::api::ApiSettings;
use crate::roll::engine::live::Live;
use crate::roll::record::env::Timeouts;

/// `--listen`, with the token from `ROLLER_API_TOKEN(_FILE)`; `None`
/// without `--listen`.
pub(super) fn settings(listen: Option<SocketAddr>) -> Result<Option<ApiSettings>, CliError> {
    listen
        .map(ApiSettings::from_env)
        .transpose()
        .map_err(CliError::Api)
}

/// Starts the API when `settings` asks for one (inside the runtime), and
/// returns the state to hand the runner.
pub(super) async fn serve(
    settings: Option<&ApiSettings>,
    timeouts: &Timeouts,
) -> Result<Option<Arc<Live>>, CliError> {
    let Some(settings) = settings else {
        return Ok(None);
    };
    let live = Live::new(timeouts.clone());
    crate::api::start(settings, Arc::clone(&live))
        .await
        .map_err(CliError::Api)?;
    Ok(Some(live))
}
