//! Placeholder: the AWS Query-protocol facade (Auto Scaling + EC2).

use axum::Router;

use crate::sim::shared::SharedWorld;

/// One endpoint for both services, as `AWS_ENDPOINT_URL` gives one URL.
pub fn router(world: SharedWorld) -> Router {
    let _ = world;
    Router::new()
}
