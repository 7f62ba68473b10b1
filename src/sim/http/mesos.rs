//! Placeholder: the Mesos master facade.

use std::sync::Arc;

use axum::Router;

use crate::sim::shared::{Peers, SharedWorld};

/// The master at `peers.url(index)`; it leads when `peers.leader() == index`.
pub fn router(world: SharedWorld, peers: Arc<Peers>, index: usize) -> Router {
    let _ = (world, peers, index);
    Router::new()
}
