//! `roller demo`: the built-in `demo` cluster, simulated in-process on
//! loopback, rolled by the roller's real adapters (AWS SDK, Mesos and
//! Marathon HTTP clients) exactly as `roller run` would: every original
//! agent replaced, tasks moved first where an app would lose its last
//! healthy task. It prints the plan tree on each status change, the final
//! tree, and the simulator's monitor report; it succeeds only if the plan
//! is COMPLETE and no app had an outage.
//!
//! It needs nothing but the binary: no credentials, no network beyond its
//! own loopback ports. The AWS client gets dummy credentials, region and
//! endpoint in code (no `AWS_*` variable can point it elsewhere), and the
//! checkpoint goes to a private temporary folder.
//!
//! - `walkthrough`: `roller plan demo`, the plan engine on the DC/OS SDK's
//!   hello-world deployment.

pub mod walkthrough;

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::api::ApiSettings;
use crate::plan;
use crate::roll::decide::safety::Floor;
use crate::roll::engine::live::Live;
use crate::roll::engine::{Outcome, RunOptions};
use crate::roll::preflight::{Request, Selection};
use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore};
use crate::roll::run::{RunResult, RunSettings, run as run_roll, runtime};
use crate::sim::{Scenario, ScenarioError};
use crate::simulated::{SimulatedCluster, SimulatedError};

/// The scenario the demo runs (embedded in the binary).
const SCENARIO: &str = "demo";

/// Simulated seconds per real second: the roll takes about an hour of
/// simulated time, so some fifteen seconds of real time.
const TIME_SCALE: f64 = 300.0;

/// Settle time before the roll: the world boots its agents and tasks.
const SETTLE_SIMULATED: Duration = Duration::from_secs(5 * 60);

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("cannot write output: {0}")]
    Output(#[from] io::Error),
    #[error("the built-in scenario is invalid: {0}")]
    Scenario(#[from] ScenarioError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
    #[error("{0}")]
    Simulated(#[from] SimulatedError),
    #[error("the roll failed: {0}")]
    Roll(String),
    #[error("the roll did not end cleanly: {0}")]
    NotClean(String),
    #[error("{0}")]
    Api(#[from] crate::api::ApiError),
}

impl DemoError {
    pub fn label(&self) -> &'static str {
        match self {
            DemoError::Output(_) => "output",
            DemoError::Scenario(_) => "scenario_invalid",
            DemoError::Runtime(_) => "runtime",
            DemoError::Simulated(err) => err.label(),
            DemoError::Roll(_) => "roll_failed",
            DemoError::NotClean(_) => "not_clean",
            DemoError::Api(err) => err.label(),
        }
    }
}

/// `view`: draw the terminal view on stderr (else log lines there);
/// `api`: `--listen`, the plan API served while the demo rolls.
pub fn run(out: &mut dyn Write, view: bool, api: Option<ApiSettings>) -> Result<(), DemoError> {
    let scenario = Scenario::load(SCENARIO)?;
    // SAFETY: no other thread exists yet (the runtime is built below), so
    // nothing reads the environment while it changes. Loopback traffic must
    // not go to a proxy the caller configured for the outside world.
    unsafe {
        std::env::set_var("NO_PROXY", "127.0.0.1,localhost,::1");
        std::env::set_var("no_proxy", "127.0.0.1,localhost,::1");
    }
    let runtime = runtime().map_err(DemoError::Runtime)?;
    runtime.block_on(demo(&scenario, api.as_ref(), view, out))
}

async fn demo(
    scenario: &Scenario,
    api: Option<&ApiSettings>,
    view: bool,
    out: &mut dyn Write,
) -> Result<(), DemoError> {
    let real_start = Instant::now();
    writeln!(
        out,
        "roller demo: the `{SCENARIO}` scenario ({}), simulated in-process on loopback at {TIME_SCALE}x,\n\
         rolled by roller's real AWS, Mesos and Marathon clients. Times are simulated.\n\
         (`roller plan demo` walks the plan engine through the DC/OS SDK's hello-world deployment.)",
        scenario.description
    )?;
    let cluster = SimulatedCluster::start(scenario, TIME_SCALE, demo_dir()).await?;
    let endpoints = cluster.sim.endpoints().clone();
    writeln!(
        out,
        "\nendpoints (loopback only; the caller's AWS_* variables are ignored):\n  \
         AWS_ENDPOINT_URL={}\n  MESOS={}\n  MARATHON={}\n  SIM={}",
        endpoints.aws_endpoint_url,
        endpoints.mesos.join(","),
        endpoints.marathon.join(","),
        endpoints.control()
    )?;
    let live = match api {
        Some(api) => {
            let live = Live::new(cluster.env.timeouts.clone());
            crate::api::start(api, Arc::clone(&live)).await?;
            Some(live)
        }
        None => None,
    };
    tokio::time::sleep(SETTLE_SIMULATED.div_f64(TIME_SCALE)).await;
    let before = cluster.sim.report();
    let target = before.final_state.instances_live;
    let env = &cluster.env;
    let checkpoint = Checkpoint::default_path(&env.checkpoint_dir, &env.asg);
    let _ = std::fs::remove_file(&checkpoint);
    writeln!(
        out,
        "\nrolling {} to {target} agents (checkpoint {}):",
        env.asg,
        checkpoint.display()
    )?;
    out.flush()?;

    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    // The roll's state changes go to stderr as log lines, or to the
    // terminal view; stdout keeps the final tree and the report.
    let (observer, view) = crate::report::for_roll(env, false, view);
    let observer = match &live {
        Some(live) => live.tee(observer),
        None => observer,
    };
    let settings = RunSettings {
        checkpoint: CheckpointStore::file(checkpoint.clone()),
        request: Request {
            target,
            select: Selection::All,
            raise_max: false,
            canary: None,
            allow_unhealthy: Vec::new(),
            floor: Floor::default(),
            skip_not_in_service: false,
            strategy: crate::roll::decide::roll_plan::RollStrategy::default(),
            max_unavailable: None,
            on_failure: Default::default(),
        },
        target_given: true,
        select_given: true,
        strategy_given: true,
        floor_given: true,
        on_failure_given: false,
        options: RunOptions {
            resume_az_rebalance: false,
            resume_command: "roller demo".to_string(),
            acknowledge_failure: false,
            rollback_ordered: false,
            live,
        },
    };
    let result = run_roll(cluster.ports(), env, settings, stop, observer).await;
    crate::report::end_view(view);
    let report = cluster.sim.report();
    cluster.sim.shutdown().await;
    let _ = std::fs::remove_dir_all(demo_dir());
    let (outcome, final_checkpoint) = match result {
        Ok(RunResult::Finished {
            outcome,
            checkpoint,
            ..
        }) => (outcome, checkpoint),
        Ok(RunResult::NothingToDo(message)) => return Err(DemoError::NotClean(message)),
        Err(err) => return Err(DemoError::Roll(err.to_string())),
    };
    writeln!(out, "final plan:")?;
    out.write_all(plan::tree(&final_checkpoint.plan).as_bytes())?;
    if let Some(summary) = &final_checkpoint.summary {
        writeln!(out, "az rebalance: {summary}")?;
    }
    writeln!(
        out,
        "\nreport at {:.1} simulated s ({:.1} s real):",
        report.simulated_ms as f64 / 1000.0,
        real_start.elapsed().as_secs_f64()
    )?;
    out.write_all(report.summary().as_bytes())?;
    writeln!(
        out,
        "outages: {} apps, {:.1} simulated s",
        report.apps_with_outage,
        report.total_outage_ms as f64 / 1000.0
    )?;
    match outcome {
        Outcome::Complete { .. } if report.apps_with_outage == 0 => Ok(()),
        Outcome::Complete { .. } => Err(DemoError::NotClean(format!(
            "{} app(s) had an outage",
            report.apps_with_outage
        ))),
        Outcome::Paused { step, reason, .. } => {
            Err(DemoError::NotClean(format!("paused at {step}: {reason}")))
        }
        Outcome::Held { reason } => Err(DemoError::NotClean(reason)),
        Outcome::RolledBack { failure, .. } => Err(DemoError::NotClean(format!(
            "rolled back after a failure on a new agent: {failure}"
        ))),
        Outcome::Stopped => Err(DemoError::NotClean("stopped".to_string())),
        Outcome::Refused { reason } => Err(DemoError::NotClean(format!("refused: {reason}"))),
    }
}

/// A private folder for the demo's checkpoint, removed at the end.
fn demo_dir() -> PathBuf {
    std::env::temp_dir().join(format!("roller-demo-{}", std::process::id()))
}
