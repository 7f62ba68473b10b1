//! `roller demo`: a built-in scenario's cluster (`demo` unless told
//! otherwise), simulated in-process on loopback at a time scale of the
//! caller's choosing, rolled by the roller's real adapters (AWS SDK, Mesos
//! and Marathon HTTP clients) exactly as `roller run` would: every
//! original agent replaced, tasks moved first where an app would lose its
//! last healthy task. It prints the final tree and the simulator's monitor
//! report; it succeeds only if the plan is COMPLETE and no app had an
//! outage. Any other end (a pause, a hold, a rollback) is an error that
//! names the outcome, so the CLI can exit as `roller run` would for it.
//!
//! A scenario whose launch template has a newer version than the group
//! launches from (`bad-image`) is rolled onto that version, as an operator
//! points the group at a published image before a roll.
//!
//! It needs nothing but the binary: no credentials, no network beyond its
//! own loopback ports. The AWS client gets dummy credentials, region and
//! endpoint in code (no `AWS_*` variable can point it elsewhere), and the
//! checkpoint goes to a private temporary folder.
//!
//! - `walkthrough`: `roller plan demo`, the plan engine on the DC/OS SDK's
//!   hello-world deployment.

pub(crate) mod walkthrough;

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
use crate::roll::record::env::{Environment, GroupSpec};
use crate::roll::run::{RunError, RunResult, RunSettings, run as run_roll, runtime};
use crate::sim::scenario::builtin_names;
use crate::sim::{Report, Scenario, ScenarioError};
use crate::simulated::{SimulatedCluster, SimulatedError};

/// The scenario the demo runs unless told otherwise (embedded in the
/// binary, as every scenario it may run is).
pub(crate) const DEFAULT_SCENARIO: &str = "demo-cluster";

/// Simulated seconds per real second unless told otherwise: the `demo`
/// roll takes some ten simulated minutes (five of them settling), so a
/// few seconds of real time.
pub(crate) const DEFAULT_TIME_SCALE: f64 = 300.0;

/// The slowest and fastest time scales the demo takes: below, its settle
/// alone would take days (and the clock's arithmetic overflows); above,
/// simulated minutes pass between two of the roller's polls, and waits
/// run out for nothing.
pub(crate) const TIME_SCALES: std::ops::RangeInclusive<f64> = 0.01..=10_000.0;

/// `--time-scale`: a finite number within `TIME_SCALES`, or why not.
pub(crate) fn time_scale(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|scale| TIME_SCALES.contains(scale))
        .ok_or_else(|| bad_time_scale(text))
}

fn bad_time_scale(text: &str) -> String {
    format!(
        "'{text}' is not a time scale: give simulated seconds per real second, a number from {} \
         to {} (e.g. 10 to watch the roll; 300 by default)",
        TIME_SCALES.start(),
        TIME_SCALES.end()
    )
}

/// Settle time before the roll: the world boots its agents and tasks.
const SETTLE_SIMULATED: Duration = Duration::from_secs(5 * 60);

/// What the demo rolls, how fast and how it reports: the command line,
/// checked (the CLI refuses an unknown scenario or a time scale outside
/// `TIME_SCALES` before anything starts; `run` checks both again).
#[derive(Debug)]
pub(crate) struct DemoSettings {
    /// A built-in scenario's name (`crate::sim::scenario::builtin_names`).
    pub(crate) scenario: String,
    /// Simulated seconds per real second, for the settle before the roll
    /// and every wait of the roll alike.
    pub(crate) time_scale: f64,
    /// Draw the terminal view on stderr (else log lines there).
    pub(crate) view: bool,
    /// `--listen`: the plan API served while the demo rolls.
    pub(crate) api: Option<ApiSettings>,
}

/// Why the demo did not end with a COMPLETE plan and no outage. The
/// outcomes a roll may have are told apart (`Paused`, `Held`,
/// `RolledBack`, `Stopped`) so that the demo can exit as `roller run`
/// would for them; the simulated cluster ends with the demo either way, so
/// there is nothing to resume.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("cannot write output: {0}")]
    Output(#[from] io::Error),
    #[error("unknown scenario '{name}': the built-in ones are {builtin}")]
    UnknownScenario { name: String, builtin: String },
    #[error("{0}")]
    TimeScale(String),
    #[error("the built-in scenario is invalid: {0}")]
    Scenario(#[from] ScenarioError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
    #[error("{0}")]
    Simulated(#[from] SimulatedError),
    #[error("cannot point the group at launch template version {version}: {message}")]
    LaunchTemplate { version: String, message: String },
    /// The roll could not start or go on (a refused preflight, a lock):
    /// what `roller run` would report, with its exit code.
    #[error("the roll failed: {0}")]
    Roll(#[from] RunError),
    #[error("nothing to roll: {0}")]
    NothingToDo(String),
    #[error("the plan is COMPLETE, but {apps} app(s) had an outage (see the report)")]
    Outage { apps: usize },
    #[error(
        "the roll paused at {what}. `roller run` stops here too (exit 3), pages a human if a \
         pager is configured, and resumes when run again; the demo's cluster ends with the demo"
    )]
    Paused { what: String },
    #[error("the roll is held (`roller run` exits 3 here): {0}")]
    Held(String),
    #[error(
        "the roll found a failure on a new agent and rolled back, as `roller run` does (exit 5): \
         {failure}. The cluster is as it was before the roll (old agents, original size, launch \
         template){}",
        outage_note(*outages)
    )]
    RolledBack { failure: String, outages: usize },
    #[error("interrupted: the roll stopped at a signal, and the simulated cluster with it")]
    Stopped,
    #[error("{0}")]
    Api(#[from] crate::api::ApiError),
}

fn outage_note(apps: usize) -> String {
    if apps == 0 {
        String::new()
    } else {
        format!("; {apps} app(s) had an outage (see the report)")
    }
}

impl DemoError {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            DemoError::Output(_) => "output",
            DemoError::UnknownScenario { .. } => "unknown_scenario",
            DemoError::TimeScale(_) => "bad_time_scale",
            DemoError::Scenario(_) => "scenario_invalid",
            DemoError::Runtime(_) => "runtime",
            DemoError::Simulated(err) => err.label(),
            DemoError::LaunchTemplate { .. } => "launch_template",
            DemoError::Roll(err) => err.label(),
            DemoError::NothingToDo(_) => "nothing_to_do",
            DemoError::Outage { .. } => "outage",
            DemoError::Paused { .. } => "paused",
            DemoError::Held(_) => "held",
            DemoError::RolledBack { .. } => "rolled_back",
            DemoError::Stopped => "interrupted",
            DemoError::Api(err) => err.label(),
        }
    }
}

/// Serves the scenario's cluster, lets it settle, rolls it, prints the
/// final tree and the monitor's report on `out`, and says how it ended.
pub(crate) fn run(settings: DemoSettings, out: &mut dyn Write) -> Result<(), DemoError> {
    if !TIME_SCALES.contains(&settings.time_scale) {
        return Err(DemoError::TimeScale(bad_time_scale(
            &settings.time_scale.to_string(),
        )));
    }
    let scenario = match Scenario::builtin(&settings.scenario) {
        Some(scenario) => scenario?,
        None => {
            return Err(DemoError::UnknownScenario {
                name: settings.scenario.clone(),
                builtin: builtin_names().join(", "),
            });
        }
    };
    // SAFETY: no other thread exists yet (the runtime is built below), so
    // nothing reads the environment while it changes. Loopback traffic must
    // not go to a proxy the caller configured for the outside world.
    unsafe {
        std::env::set_var("NO_PROXY", "127.0.0.1,localhost,::1");
        std::env::set_var("no_proxy", "127.0.0.1,localhost,::1");
    }
    let runtime = runtime().map_err(DemoError::Runtime)?;
    runtime.block_on(demo(&scenario, &settings, out))
}

async fn demo(
    scenario: &Scenario,
    settings: &DemoSettings,
    out: &mut dyn Write,
) -> Result<(), DemoError> {
    let real_start = Instant::now();
    let mut stop = stop_on_ctrl_c();
    let (name, time_scale) = (&settings.scenario, settings.time_scale);
    writeln!(
        out,
        "roller demo: the `{name}` scenario ({}), simulated in-process on loopback at {time_scale}x\n\
         ({time_scale} simulated seconds per real second), rolled by roller's real AWS, Mesos and\n\
         Marathon clients. Times are simulated.\n\
         (`roller plan demo` walks the plan engine through the DC/OS SDK's hello-world deployment.)",
        scenario.description
    )?;
    let cluster = SimulatedCluster::start(scenario, time_scale, demo_dir()).await?;
    let live = started(&cluster, settings, out).await?;
    if !settle(time_scale, &mut stop, out).await? {
        cluster.sim.shutdown().await;
        let _ = std::fs::remove_dir_all(demo_dir());
        return Err(DemoError::Stopped);
    }
    publish_new_image(&cluster, scenario, out)?;
    let before = cluster.sim.report();
    let env = whole_cluster(&cluster.env, &before);
    let env = &env;
    let checkpoint = Checkpoint::default_path(&env.checkpoint_dir, env.asg());
    let _ = std::fs::remove_file(&checkpoint);
    writeln!(
        out,
        "\nrolling {} (checkpoint {}):",
        rolled(env, &before),
        checkpoint.display()
    )?;
    out.flush()?;

    // The roll's state changes go to stderr as log lines, or to the
    // terminal view; stdout keeps the final tree and the report.
    let (observer, view) = crate::report::for_roll(env, false, settings.view);
    let observer = match &live {
        Some(live) => live.tee(observer),
        None => observer,
    };
    let run_settings = RunSettings {
        checkpoint: CheckpointStore::file(checkpoint.clone()),
        request: Request {
            // A cluster's groups carry their targets in their specs.
            target: (env.groups.len() == 1).then_some(before.final_state.instances_live),
            select: Some(Selection::All),
            floor: Some(Floor::default()),
            strategy: Some(crate::roll::decide::roll_plan::RollStrategy::default()),
            ..Request::default()
        },
        options: RunOptions {
            resume_az_rebalance: false,
            resume_command: format!("roller demo --scenario {name}"),
            acknowledge_failure: false,
            rollback_ordered: false,
            live,
        },
    };
    let result = run_roll(cluster.ports(), env, run_settings, stop, observer).await;
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
        Ok(RunResult::NothingToDo(message)) => return Err(DemoError::NothingToDo(message)),
        Err(err) => return Err(DemoError::Roll(err)),
    };
    print_end(&final_checkpoint, &report, real_start, out)?;
    demo_outcome(outcome, report.apps_with_outage)
}

/// Says where the simulated cluster answers, and starts the plan API on
/// it when `--listen` asks (what it shares with the roll is returned).
async fn started(
    cluster: &SimulatedCluster,
    settings: &DemoSettings,
    out: &mut dyn Write,
) -> Result<Option<Arc<Live>>, DemoError> {
    let endpoints = cluster.sim.endpoints().clone();
    let services = cluster.sim.world().with(|w| !w.pods().is_empty());
    let dcos = if services {
        format!("\n  DCOS={}", endpoints.dcos_url)
    } else {
        String::new()
    };
    writeln!(
        out,
        "\nendpoints (loopback only; the caller's AWS_* variables are ignored):\n  \
         AWS_ENDPOINT_URL={}\n  MESOS={}\n  MARATHON={}{dcos}\n  SIM={}",
        endpoints.aws_endpoint_url,
        endpoints.mesos.join(","),
        endpoints.marathon.join(","),
        endpoints.control()
    )?;
    Ok(match &settings.api {
        Some(api) => {
            let live = Live::new(cluster.env.timeouts.clone());
            crate::api::start(api, Arc::clone(&live)).await?;
            Some(live)
        }
        None => None,
    })
}

/// Lets the cluster settle before the roll; `false` when Ctrl-C came
/// first.
async fn settle(
    time_scale: f64,
    stop: &mut tokio::sync::watch::Receiver<bool>,
    out: &mut dyn Write,
) -> Result<bool, DemoError> {
    writeln!(
        out,
        "\nthe cluster settles for {} simulated minutes ({:.1} s real) before the roll",
        SETTLE_SIMULATED.as_secs() / 60,
        SETTLE_SIMULATED.div_f64(time_scale).as_secs_f64()
    )?;
    out.flush()?;
    Ok(tokio::select! {
        () = tokio::time::sleep(SETTLE_SIMULATED.div_f64(time_scale)) => true,
        // A dropped sender (no handler) disables this branch.
        Ok(_) = stop.wait_for(|stopped| *stopped) => false,
    })
}

/// As an operator does before a roll, when the scenario has published a
/// newer launch template version (`bad-image`): the group launches it
/// from now on (what `--select outdated` would replace).
fn publish_new_image(
    cluster: &SimulatedCluster,
    scenario: &Scenario,
    out: &mut dyn Write,
) -> Result<(), DemoError> {
    let Some(version) = published_version(scenario) else {
        return Ok(());
    };
    cluster
        .sim
        .world()
        .with(|w| w.set_launch_template_version(&version))
        .map_err(|err| DemoError::LaunchTemplate {
            version: version.clone(),
            message: err.to_string(),
        })?;
    writeln!(
        out,
        "\nthe group now launches from version {version} of its launch template (the newest \
         published), as an operator sets it before a roll"
    )?;
    Ok(())
}

/// The environment of the whole cluster: every group of the scenario, in
/// one plan, each to as many agents as it has now, as an operator writes
/// it with one [[group]] table per group (one group: as it is).
fn whole_cluster(env: &Environment, before: &Report) -> Environment {
    let mut env = env.clone();
    // The scenario's hooks that are roller's (`[roller]`) are every group's.
    let hooks = env
        .groups
        .first()
        .map(|g| g.complete_lifecycle_hooks.clone())
        .unwrap_or_default();
    if before.groups.len() > 1 {
        env.groups = before
            .groups
            .iter()
            .map(|g| GroupSpec {
                asg: g.name.clone(),
                target: Some(g.final_state.instances_live),
                select: None,
                complete_lifecycle_hooks: hooks.clone(),
            })
            .collect();
    }
    env
}

/// What the demo rolls, as it says it: `asg to N agents`, or each group's
/// for a cluster.
fn rolled(env: &Environment, before: &Report) -> String {
    match env.groups.len() {
        1 => format!(
            "{} to {} agents",
            env.asg(),
            before.final_state.instances_live
        ),
        _ => format!(
            "{} in one plan",
            before
                .groups
                .iter()
                .map(|g| format!("{} to {}", g.name, g.final_state.instances_live))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    }
}

/// The demo's last words on stdout: the final plan, the AZ rebalance, the
/// simulator's report and its outages.
fn print_end(
    checkpoint: &Checkpoint,
    report: &Report,
    real_start: Instant,
    out: &mut dyn Write,
) -> Result<(), DemoError> {
    writeln!(out, "final plan:")?;
    out.write_all(plan::tree(&checkpoint.plan).as_bytes())?;
    if let Some(summary) = &checkpoint.summary {
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
    Ok(())
}

/// The demo's end as `roller run`'s would be, an outage included.
fn demo_outcome(outcome: Outcome, outages: usize) -> Result<(), DemoError> {
    match outcome {
        Outcome::Complete { .. } if outages == 0 => Ok(()),
        Outcome::Complete { .. } => Err(DemoError::Outage { apps: outages }),
        Outcome::Paused { step, reason, .. } => Err(DemoError::Paused {
            what: format!("{step}: {reason}"),
        }),
        Outcome::Held { reason } => Err(DemoError::Held(reason)),
        Outcome::RolledBack { failure, .. } => Err(DemoError::RolledBack { failure, outages }),
        Outcome::Stopped => Err(DemoError::Stopped),
        Outcome::Refused { reason } => Err(DemoError::Roll(RunError::Roll(
            crate::roll::error::RollError::refused(reason),
        ))),
    }
}

/// The launch template version to roll onto when the scenario has
/// published one newer than the group launches from (`bad-image`), as a
/// number; `None` when the group already launches the newest.
fn published_version(scenario: &Scenario) -> Option<String> {
    let template = &scenario.group.launch_template;
    let latest = template.latest();
    match template.version.parse::<u64>() {
        Ok(current) if current < latest => Some(latest.to_string()),
        _ => None,
    }
}

/// Ctrl-C, the way out of a demo watched at a slow time scale: the first
/// stops the roll at its next tick (the demo then cleans up and exits as
/// an interrupted `roller run` does), a second ends the process at once.
/// The handler is in place when this returns, so a Ctrl-C after the
/// demo's first line is always caught.
fn stop_on_ctrl_c() -> tokio::sync::watch::Receiver<bool> {
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        // Without a handler (it could not be installed), Ctrl-C ends the
        // process as it would any other.
        if let Ok(mut interrupt) = signal(SignalKind::interrupt()) {
            tokio::spawn(async move {
                if interrupt.recv().await.is_some() {
                    let _ = stop_tx.send(true);
                    if interrupt.recv().await.is_some() {
                        std::process::exit(130);
                    }
                }
            });
        }
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = stop_tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
    stop
}

/// A private folder for the demo's checkpoint, removed at the end.
fn demo_dir() -> PathBuf {
    std::env::temp_dir().join(format!("roller-demo-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_scale_is_a_finite_number_from_a_hundredth_to_ten_thousand() {
        assert_eq!(time_scale("300"), Ok(300.0));
        assert_eq!(time_scale("10"), Ok(10.0));
        assert_eq!(time_scale("0.01"), Ok(0.01));
        assert_eq!(time_scale("1e4"), Ok(10_000.0));
        for bad in [
            "0", "-1", "nan", "NaN", "inf", "-inf", "", "fast", "0.001", "10001",
        ] {
            let err = time_scale(bad).expect_err(bad);
            assert!(
                err.starts_with(&format!("'{bad}' is not a time scale")),
                "{err}"
            );
        }
    }

    #[test]
    fn only_a_scenario_with_a_newer_published_image_is_rolled_onto_it() {
        let version = |name: &str| {
            let scenario = Scenario::builtin(name).expect("built in").expect("parses");
            published_version(&scenario)
        };
        assert_eq!(version("bad-image").as_deref(), Some("2"));
        for name in ["demo", "msr-55", "hazards", "big"] {
            assert_eq!(version(name), None, "{name}");
        }
    }
}
