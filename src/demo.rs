//! `roller demo`: the built-in `demo` cluster, simulated in-process on
//! loopback. Until the roll lands it only lets the world run for a few
//! simulated minutes, looks at it once through the roller's real Marathon
//! adapter, and prints the monitor's report; the roll issue makes it roll.
//!
//! It needs nothing but the binary: no credentials, no network beyond its
//! own loopback ports. It reads no `AWS_*` variable (the world is read
//! through `SharedWorld`, and no AWS client is built), and it skips its
//! HTTP look when a proxy variable would send loopback traffic elsewhere.
//!
//! - `walkthrough`: `roller plan demo`, the plan engine on the DC/OS SDK's
//!   hello-world deployment.

pub mod walkthrough;

use std::io::{self, Write};
use std::time::Duration;

use crate::http::{HttpAuth, HttpSettings};
use crate::marathon::MarathonClient;
use crate::retry::Backoff;
use crate::roll::health;
use crate::roll::ports::marathon::{Marathon, MarathonError};
use crate::sim::{Report, Scenario, ScenarioError, SimOptions, SimServeError, SimTime, Simulator};

/// The scenario the demo runs (embedded in the binary).
const SCENARIO: &str = "demo";

/// Simulated seconds per real second: five simulated minutes in one real
/// second, while the ticker still sees every simulated half-minute.
const TIME_SCALE: f64 = 300.0;

/// How long the world runs, in simulated minutes, one status line each.
const MINUTES: u64 = 5;

/// Variables through which reqwest would send loopback requests to a proxy.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("cannot write output: {0}")]
    Output(#[from] io::Error),
    #[error("the built-in scenario is invalid: {0}")]
    Scenario(#[from] ScenarioError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
    #[error("{0}")]
    Simulator(#[from] SimServeError),
}

impl DemoError {
    pub fn label(&self) -> &'static str {
        match self {
            DemoError::Output(_) => "output",
            DemoError::Scenario(_) => "scenario_invalid",
            DemoError::Runtime(_) => "runtime",
            DemoError::Simulator(err) => err.label(),
        }
    }
}

pub fn run(out: &mut dyn Write) -> Result<(), DemoError> {
    let scenario = Scenario::load(SCENARIO)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(DemoError::Runtime)?;
    runtime.block_on(demo(&scenario, out))
}

async fn demo(scenario: &Scenario, out: &mut dyn Write) -> Result<(), DemoError> {
    writeln!(
        out,
        "roller demo: the `{SCENARIO}` scenario ({}), simulated in-process on loopback at {TIME_SCALE}x.\n\
         Until the roll lands, the world runs {MINUTES} simulated minutes and the monitor reports.\n\
         (`roller plan demo` walks the plan engine through the DC/OS SDK's hello-world deployment.)",
        scenario.description
    )?;
    let sim = Simulator::start(
        scenario,
        SimOptions {
            time_scale: TIME_SCALE,
            ..SimOptions::default()
        },
    )
    .await?;
    let endpoints = sim.endpoints().clone();
    writeln!(
        out,
        "\nendpoints (loopback only; the caller's AWS_* variables are ignored):\n  \
         AWS_ENDPOINT_URL={}\n  MESOS={}\n  MARATHON={}\n  SIM={}",
        endpoints.aws_endpoint_url,
        endpoints.mesos.join(","),
        endpoints.marathon.join(","),
        endpoints.control()
    )?;
    writeln!(
        out,
        "marathon: {}",
        look_at_marathon(&endpoints.marathon).await
    )?;

    writeln!(out)?;
    let world = sim.world();
    let clock = world.clock();
    // The simulated clock started with the simulator, at zero.
    for minute in 1..=MINUTES {
        let due = SimTime::from_secs(minute * 60);
        let real_wait = clock.real(Duration::from_millis(due.since(clock.now())));
        tokio::time::sleep(real_wait).await;
        let report = sim.report();
        writeln!(out, "minute {minute}: {}", status_line(&report))?;
    }

    let report = sim.report();
    sim.shutdown().await;
    writeln!(
        out,
        "\nreport at {:.1} simulated s:",
        report.simulated_ms as f64 / 1000.0
    )?;
    out.write_all(report.summary().as_bytes())?;
    writeln!(
        out,
        "outages: {} apps, {:.1} simulated s",
        report.apps_with_outage,
        report.total_outage_ms as f64 / 1000.0
    )?;
    Ok(())
}

fn status_line(report: &Report) -> String {
    let state = &report.final_state;
    format!(
        // The simulated time is read when the line is printed: on a busy
        // machine it runs a little past the minute.
        "{} instances live (desired {}), {} agents, {} tasks, {} of {} apps below their floor (at {:.0} simulated s)",
        state.instances_live,
        state.desired_capacity,
        state.agents_registered,
        state.tasks,
        state.apps_below_floor_now,
        report.apps.len(),
        report.simulated_ms as f64 / 1000.0,
    )
}

/// One look through the roller's own Marathon adapter and health verdict,
/// as `roller health` takes it. The simulator's Marathon may not serve
/// the API yet: that is said, not treated as a failure.
async fn look_at_marathon(urls: &[String]) -> String {
    if let Some(variable) = PROXY_VARIABLES
        .iter()
        .find(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
    {
        return format!(
            "not asked ({variable} is set, and the demo talks to nothing but its loopback ports)"
        );
    }
    let settings = HttpSettings {
        request_timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(1),
        ca_bundle: None,
        auth: HttpAuth::None,
    };
    let client = match MarathonClient::new(urls, &settings) {
        Ok(client) => client.with_backoff(Backoff {
            initial: Duration::from_millis(50),
            max: Duration::from_millis(200),
            attempts: 2,
        }),
        Err(err) => return format!("cannot build the client: {err}"),
    };
    match tokio::try_join!(client.apps(), client.deployments()) {
        Ok((apps, deployments)) => {
            let verdict = health::judge(&apps, &deployments);
            let healthy = verdict.apps.iter().filter(|app| app.is_healthy()).count();
            format!(
                "{} apps, {healthy} healthy (through roller's Marathon adapter)",
                verdict.apps.len()
            )
        }
        Err(MarathonError::Rejected { status: 404, .. }) => {
            "not served yet (the simulator's Marathon answers 404)".to_string()
        }
        Err(err) => format!("no answer through roller's Marathon adapter: {err}"),
    }
}
