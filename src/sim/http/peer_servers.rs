//! Test harness: three servers of one system (masters or Marathons) over
//! one world (`demo`'s unless a test asks for another), on loopback ports,
//! peer 0 leading; stopped on drop.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::sim::Scenario;
use crate::sim::shared::{Peers, SharedWorld, SimClock};
use crate::sim::world::World;

pub(crate) struct PeerServers {
    pub(crate) world: SharedWorld,
    pub(crate) peers: Arc<Peers>,
    pub(crate) urls: Vec<String>,
    servers: Vec<JoinHandle<()>>,
}

impl PeerServers {
    /// The `demo` world at `time_scale`, served by `router` on three ports.
    pub(crate) async fn start(
        time_scale: f64,
        router: impl Fn(SharedWorld, Arc<Peers>, usize) -> Router,
    ) -> PeerServers {
        PeerServers::start_on("demo", time_scale, router).await
    }

    /// The world of the shipped scenario `name`, as `start`.
    pub(crate) async fn start_on(
        name: &str,
        time_scale: f64,
        router: impl Fn(SharedWorld, Arc<Peers>, usize) -> Router,
    ) -> PeerServers {
        let scenario = Scenario::builtin(name)
            .expect("the scenario is embedded")
            .expect("the scenario parses");
        PeerServers::start_with(&scenario, time_scale, router).await
    }

    /// The world of `scenario` (one a test wrote), as `start`.
    pub(crate) async fn start_with(
        scenario: &Scenario,
        time_scale: f64,
        router: impl Fn(SharedWorld, Arc<Peers>, usize) -> Router,
    ) -> PeerServers {
        let world = SharedWorld::new(World::new(scenario), SimClock::new(time_scale));
        let mut listeners = Vec::new();
        for _ in 0..3 {
            listeners.push(
                tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind a loopback port"),
            );
        }
        let urls: Vec<String> = listeners
            .iter()
            .map(|l| format!("http://{}", l.local_addr().expect("local address")))
            .collect();
        let peers = Arc::new(Peers::new(urls.clone()));
        let servers = listeners
            .into_iter()
            .enumerate()
            .map(|(index, listener)| {
                let app = router(world.clone(), peers.clone(), index);
                tokio::spawn(async move {
                    let _ = axum::serve(listener, app).await;
                })
            })
            .collect();
        PeerServers {
            world,
            peers,
            urls,
            servers,
        }
    }
}

impl PeerServers {
    /// `host:port` of peer `index`, as leaders are named.
    pub(crate) fn authority(&self, index: usize) -> String {
        self.urls[index].trim_start_matches("http://").to_string()
    }
}

/// A fixture of `tests/fixtures/`, parsed.
pub(crate) fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("fixture readable");
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// The keys of a JSON object, to compare field names with a fixture's.
pub(crate) fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect()
}

impl Drop for PeerServers {
    fn drop(&mut self) {
        for server in &self.servers {
            server.abort();
        }
    }
}
