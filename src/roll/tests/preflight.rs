//! The preflight's reads of a real-sized cluster.

use super::in_process::cluster;
use crate::roll::preflight::{Preflight, Request, preflight};

/// Marathon's apps are the largest answer a preflight reads (seconds at
/// thousands of apps): its two checks of them (health, then the DC/OS
/// services) share one listing.
#[tokio::test(start_paused = true)]
async fn the_preflight_lists_marathons_apps_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("msr-55", dir.path()).await;
    let request = Request {
        target: Some(55),
        ..Request::default()
    };
    let ready = preflight(cluster.ports(), &cluster.env, &request, "once".into())
        .await
        .expect("preflight");
    assert!(matches!(ready, Preflight::Ready(..)));
    let report = cluster.sim.report();
    assert_eq!(
        report.api_calls.get("marathon:GET /v2/apps").copied(),
        Some(1),
        "{:?}",
        report.api_calls
    );
    cluster.sim.shutdown().await;
}
