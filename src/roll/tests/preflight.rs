//! The preflight's reads of a real-sized cluster.

use super::in_process::cluster;
use crate::roll::preflight::{Preflight, Request, preflight};
use crate::sim::shared::{ApiFaults, SystemFaults};

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

/// The groups are looked at while Marathon lists its apps: a Marathon
/// slower to list them than the groups are to read does not hold the
/// looks back.
#[tokio::test(start_paused = true)]
async fn the_preflight_looks_at_the_groups_while_marathon_lists_its_apps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("msr-55", dir.path()).await;
    let request = Request {
        target: Some(55),
        ..Request::default()
    };
    // Each AWS call takes a second, each of Marathon's three: its
    // listing (its leader, then the apps) takes six; the look at the
    // group is three AWS reads one after the other, after the other runs'
    // tags (one): four. Waiting for the listing, the looks would end at
    // nine.
    cluster.sim.world().set_api_faults(ApiFaults {
        aws: SystemFaults {
            error_rate: 0.0,
            latency_ms: 1_000,
        },
        marathon: SystemFaults {
            error_rate: 0.0,
            latency_ms: 3_000,
        },
        ..ApiFaults::default()
    });
    let started = tokio::time::Instant::now();
    let ready = preflight(cluster.ports(), &cluster.env, &request, "at-once".into())
        .await
        .expect("preflight");
    let took = started.elapsed();
    assert!(matches!(ready, Preflight::Ready(..)));
    assert!(
        took < std::time::Duration::from_secs(7),
        "the looks waited for Marathon's listing: {took:?}"
    );
    cluster.sim.shutdown().await;
}
