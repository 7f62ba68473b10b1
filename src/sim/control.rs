//! The simulator's own endpoints under `/sim`, served beside the AWS
//! facade: the monitor's report, the simulated time, and the faults (the
//! world's, the facades' error rates and latencies, and which Mesos master
//! and Marathon lead), readable and switchable while a roll runs.
//!
//! - `GET /sim/report`: the monitor's `Report` as JSON (simulated time in
//!   `simulated_ms`).
//! - `GET /sim/time`: the simulated time, its Unix time and the time scale.
//! - `GET /sim/pods`: every DC/OS SDK service's pods as the ground truth
//!   (where each is, its state, since when it is away).
//! - `GET /sim/faults`: `{"world", "api", "mesos_leader", "marathon_leader"}`
//!   (a leader is a peer index, or `null` during an election).
//! - `POST /sim/faults`: the same keys, each optional; each one given
//!   replaces that part whole. Checked before anything changes: a bad body
//!   is a 400 saying why, and changes nothing.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::{Deserialize, Serialize};

use super::shared::{ApiFaults, Peers, SharedWorld};
use super::world::{Faults, PodView, Report};

/// What the control endpoints act on.
#[derive(Clone)]
pub(crate) struct ControlState {
    pub(crate) world: SharedWorld,
    pub(crate) mesos: Arc<Peers>,
    pub(crate) marathon: Arc<Peers>,
}

/// The `/sim` routes (no fallback, so they merge into the AWS facade's).
pub(crate) fn router(state: ControlState) -> Router {
    Router::new()
        .route("/sim/report", get(report))
        .route("/sim/time", get(time))
        .route("/sim/pods", get(pods))
        .route("/sim/faults", get(faults).post(set_faults))
        .with_state(state)
}

/// `GET /sim/faults`, and the answer to a successful `POST`.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FaultsView {
    pub(crate) world: Faults,
    pub(crate) api: ApiFaults,
    /// `null` while no master leads (an election).
    pub(crate) mesos_leader: Option<usize>,
    pub(crate) marathon_leader: Option<usize>,
}

/// A `POST /sim/faults` body: only the parts to change.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultsChange {
    world: Option<Faults>,
    api: Option<ApiFaults>,
    /// Absent: unchanged; a number: that peer leads; `null`: no leader.
    #[serde(default, deserialize_with = "present")]
    mesos_leader: Option<Option<usize>>,
    #[serde(default, deserialize_with = "present")]
    marathon_leader: Option<Option<usize>>,
}

/// Tells a field given as `null` (Some(None)) from one left out (None).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<usize>>, D::Error> {
    Option::<usize>::deserialize(d).map(Some)
}

/// `GET /sim/time`.
#[derive(Debug, Serialize)]
struct TimeView {
    simulated_ms: u64,
    /// The simulated time as the facades' timestamps give it.
    unix_ms: u64,
    time_scale: f64,
}

async fn report(State(state): State<ControlState>) -> axum::Json<Report> {
    axum::Json(state.world.with(|world| world.report()))
}

async fn time(State(state): State<ControlState>) -> axum::Json<TimeView> {
    let time_scale = state.world.clock().time_scale();
    axum::Json(state.world.with(|world| TimeView {
        simulated_ms: world.now().as_millis(),
        unix_ms: world.unix_ms(world.now()),
        time_scale,
    }))
}

async fn pods(State(state): State<ControlState>) -> axum::Json<Vec<PodView>> {
    axum::Json(state.world.with(|world| world.pods()))
}

async fn faults(State(state): State<ControlState>) -> axum::Json<FaultsView> {
    axum::Json(view(&state))
}

fn view(state: &ControlState) -> FaultsView {
    FaultsView {
        world: state.world.with(|world| world.faults().clone()),
        api: state.world.api_faults(),
        mesos_leader: state.mesos.current_leader(),
        marathon_leader: state.marathon.current_leader(),
    }
}

/// Takes the raw body (not `Json<_>`) so that every refusal is a 400 with
/// serde's own words (`unknown field ...`), whatever the content type.
async fn set_faults(State(state): State<ControlState>, body: Bytes) -> Response {
    match apply(&state, &body) {
        Ok(view) => axum::Json(view).into_response(),
        Err(message) => (
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({ "message": message })),
        )
            .into_response(),
    }
}

fn apply(state: &ControlState, body: &[u8]) -> Result<FaultsView, String> {
    let change: FaultsChange =
        serde_json::from_slice(body).map_err(|err| format!("faults: {err}"))?;
    check_leader(
        "mesos_leader",
        "Mesos masters",
        change.mesos_leader.flatten(),
        &state.mesos,
    )?;
    check_leader(
        "marathon_leader",
        "Marathons",
        change.marathon_leader.flatten(),
        &state.marathon,
    )?;
    if let Some(api) = &change.api {
        check_api(api)?;
    }
    // The world's faults go first: they are the only part that can still
    // be refused (an unknown app id), and nothing may change if they are.
    if let Some(world_faults) = change.world {
        state
            .world
            .with(|world| world.set_faults(world_faults))
            .map_err(|err| format!("world.{err}"))?;
    }
    if let Some(api) = change.api {
        state.world.set_api_faults(api);
    }
    for (change, peers) in [
        (change.mesos_leader, &state.mesos),
        (change.marathon_leader, &state.marathon),
    ] {
        match change {
            Some(Some(leader)) => peers.set_leader(leader),
            Some(None) => peers.lose_leader(),
            None => {}
        }
    }
    Ok(view(state))
}

fn check_leader(
    field: &str,
    what: &str,
    leader: Option<usize>,
    peers: &Peers,
) -> Result<(), String> {
    match leader {
        Some(index) if index >= peers.urls().len() => Err(format!(
            "{field}: {index} is not one of the {} {what} (0 to {})",
            peers.urls().len(),
            peers.urls().len().saturating_sub(1)
        )),
        _ => Ok(()),
    }
}

fn check_api(api: &ApiFaults) -> Result<(), String> {
    api.check().map_err(|message| format!("api.{message}"))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::sim::Scenario;
    use crate::sim::shared::SimClock;
    use crate::sim::world::{ImageEffect, World};

    /// The control routes alone on a loopback port, over the demo world.
    struct Control {
        base: String,
        state: ControlState,
        server: tokio::task::JoinHandle<()>,
    }

    impl Control {
        async fn start() -> Control {
            let scenario = Scenario::load("demo").unwrap();
            let world = SharedWorld::new(World::new(&scenario), SimClock::new(1000.0));
            let peers = |port: u16| {
                Arc::new(Peers::new(
                    (0..3)
                        .map(|i| format!("http://127.0.0.1:{}", port + i))
                        .collect(),
                ))
            };
            let state = ControlState {
                world,
                mesos: peers(5050),
                marathon: peers(8080),
            };
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let app = router(state.clone());
            let server = tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
            Control {
                base,
                state,
                server,
            }
        }

        async fn get(&self, path: &str) -> (u16, Value) {
            let answer = client()
                .get(format!("{}{path}", self.base))
                .send()
                .await
                .unwrap();
            (answer.status().as_u16(), answer.json().await.unwrap())
        }

        async fn post(&self, path: &str, body: &str) -> (u16, Value) {
            let answer = client()
                .post(format!("{}{path}", self.base))
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            (answer.status().as_u16(), answer.json().await.unwrap())
        }
    }

    /// Straight to loopback, whatever proxy the environment names.
    fn client() -> reqwest::Client {
        reqwest::Client::builder().no_proxy().build().unwrap()
    }

    impl Drop for Control {
        fn drop(&mut self) {
            self.server.abort();
        }
    }

    #[tokio::test]
    async fn the_report_is_the_worlds_report_as_json_in_simulated_time() {
        let control = Control::start().await;
        let (status, report) = control.get("/sim/report").await;
        assert_eq!(status, 200);
        let apps = Scenario::load("demo").unwrap().expanded_apps().len();
        assert_eq!(report["apps"].as_array().unwrap().len(), apps, "{report}");
        assert_eq!(report["apps_with_outage"], 0);
        assert_eq!(report["final_state"]["desired_capacity"], 12);
        assert!(report["simulated_ms"].as_u64().is_some(), "{report}");
    }

    #[tokio::test]
    async fn the_time_runs_at_the_time_scale() {
        let control = Control::start().await;
        let (status, time) = control.get("/sim/time").await;
        assert_eq!(status, 200);
        assert_eq!(time["time_scale"], 1000.0);
        let simulated = time["simulated_ms"].as_u64().unwrap();
        let unix = time["unix_ms"].as_u64().unwrap();
        // The epoch is fixed by the scenario, so Unix time = epoch + simulated.
        let epoch = control.state.world.with(|w| w.epoch().unix_ms);
        assert_eq!(unix, epoch + simulated);
    }

    #[tokio::test]
    async fn a_null_leader_starts_an_election_and_a_number_ends_it() {
        let control = Control::start().await;
        let (status, during) = control
            .post("/sim/faults", r#"{"mesos_leader": null}"#)
            .await;
        assert_eq!(status, 200, "{during}");
        assert_eq!(during["mesos_leader"], Value::Null);
        assert_eq!(during["marathon_leader"], 0, "left out: unchanged");
        assert!(!control.state.mesos.has_leader());
        let (_, after) = control.post("/sim/faults", r#"{"mesos_leader": 1}"#).await;
        assert_eq!(after["mesos_leader"], 1);
        assert_eq!(control.state.mesos.current_leader(), Some(1));
    }

    #[tokio::test]
    async fn faults_read_back_as_they_were_set_leaders_included() {
        let control = Control::start().await;
        let (status, before) = control.get("/sim/faults").await;
        assert_eq!(status, 200);
        assert_eq!(before["mesos_leader"], 0);
        assert_eq!(before["api"]["aws_throttle_rate"], 0.0);

        let (status, after) = control
            .post(
                "/sim/faults",
                r#"{"api": {"aws_throttle_rate": 0.25, "marathon": {"latency_ms": 40}},
                    "world": {"launches_fail": true, "never_healthy_apps": ["/web/api"]},
                    "mesos_leader": 2, "marathon_leader": 1}"#,
            )
            .await;
        assert_eq!(status, 200, "{after}");
        assert_eq!(control.get("/sim/faults").await.1, after);
        assert_eq!(after["mesos_leader"], 2);
        assert_eq!(after["marathon_leader"], 1);
        assert_eq!(control.state.mesos.leader(), 2);
        assert_eq!(control.state.marathon.leader(), 1);
        let api = control.state.world.api_faults();
        assert_eq!(api.aws_throttle_rate, 0.25);
        assert_eq!(api.marathon.latency_ms, 40);
        let world = control.state.world.with(|w| w.faults().clone());
        assert!(world.launches_fail);
        assert_eq!(world.never_healthy_apps, vec!["/web/api".to_string()]);
    }

    #[tokio::test]
    async fn a_bad_image_is_switched_on_as_one_entry_or_a_list_and_a_bad_one_is_a_400() {
        let control = Control::start().await;
        // The demo's template has versions 1 to 7.
        let (status, after) = control
            .post(
                "/sim/faults",
                r#"{"world": {"bad_image": {"version": "7", "effect": "crash"}}}"#,
            )
            .await;
        assert_eq!(status, 200, "{after}");
        assert_eq!(
            after["world"]["bad_image"],
            serde_json::json!([{"version": "7", "effect": "crash"}])
        );
        assert_eq!(control.get("/sim/faults").await.1, after);
        let (status, after) = control
            .post(
                "/sim/faults",
                r#"{"world": {"bad_image": [{"version": "6", "effect": "unregistered"},
                                            {"version": "7", "effect": "unhealthy"}]}}"#,
            )
            .await;
        assert_eq!(status, 200, "{after}");
        let effect = |version: &str| {
            control
                .state
                .world
                .with(|w| w.faults().image_effect("mesos-agents-demo", version))
        };
        assert_eq!(effect("6"), Some(ImageEffect::Unregistered));
        assert_eq!(effect("7"), Some(ImageEffect::Unhealthy));
        for (body, expected) in [
            (
                r#"{"world": {"bad_image": {"version": "8", "effect": "crash"}}}"#,
                "world.bad_image: version \"8\" is not a version of the launch template (1 to 7)",
            ),
            (
                r#"{"world": {"bad_image": {"version": "7", "effect": "unhealty"}}}"#,
                "unknown variant `unhealty`",
            ),
            (
                r#"{"world": {"bad_image": {"version": "7"}}}"#,
                "missing field `effect`",
            ),
        ] {
            let (status, answer) = control.post("/sim/faults", body).await;
            assert_eq!(status, 400, "{body} -> {answer}");
            let message = answer["message"].as_str().unwrap();
            assert!(message.contains(expected), "{body} -> {message}");
        }
        assert_eq!(effect("7"), Some(ImageEffect::Unhealthy), "unchanged");
    }

    #[tokio::test]
    async fn a_part_left_out_of_a_change_is_kept() {
        let control = Control::start().await;
        control
            .post("/sim/faults", r#"{"api": {"aws_throttle_rate": 0.5}}"#)
            .await;
        let (status, after) = control
            .post("/sim/faults", r#"{"marathon_leader": 2}"#)
            .await;
        assert_eq!(status, 200, "{after}");
        assert_eq!(after["api"]["aws_throttle_rate"], 0.5);
        assert_eq!(after["marathon_leader"], 2);
    }

    #[tokio::test]
    async fn bad_fault_bodies_are_400s_saying_why_and_change_nothing() {
        let control = Control::start().await;
        let (_, before) = control.get("/sim/faults").await;
        let cases = [
            ("not json", "faults: expected ident"),
            (r#"{"leader": 1}"#, "unknown field `leader`"),
            (
                r#"{"api": {"aws": {"error_rat": 1}}}"#,
                "unknown field `error_rat`",
            ),
            (
                r#"{"mesos_leader": 3, "api": {"aws_throttle_rate": 1}}"#,
                "mesos_leader: 3 is not one of the 3 Mesos masters (0 to 2)",
            ),
            (
                r#"{"api": {"mesos": {"error_rate": 1.5}}}"#,
                "api.mesos.error_rate: 1.5 is not a share between 0 and 1",
            ),
            (
                r#"{"world": {"never_healthy_apps": ["/nope"]}, "marathon_leader": 1}"#,
                "/nope",
            ),
        ];
        for (body, expected) in cases {
            let (status, answer) = control.post("/sim/faults", body).await;
            assert_eq!(status, 400, "{body} -> {answer}");
            let message = answer["message"].as_str().unwrap();
            assert!(message.contains(expected), "{body} -> {message}");
        }
        assert_eq!(control.get("/sim/faults").await.1, before);
    }
}
