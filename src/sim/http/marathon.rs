//! Placeholder: the Marathon facade.

use std::sync::Arc;

use axum::Router;

use crate::sim::shared::{Peers, SharedWorld};

/// The Marathon at `peers.url(index)`; it leads when `peers.leader() == index`.
pub fn router(world: SharedWorld, peers: Arc<Peers>, index: usize) -> Router {
    let _ = (world, peers, index);
    Router::new()
}
