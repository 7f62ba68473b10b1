//! The command line's errors and the exit code each maps to.

use std::io;
use std::path::PathBuf;

use crate::atomic_file::LockError;
use crate::demo::DemoError;
use crate::plan::{AddressError, DocumentError};
use crate::roll::decide::rebalance::CountsError;
use crate::sim::{ScenarioError, SimServeError};

/// Stable exit codes, documented once, in `--help` (`EXIT_CODES` in
/// `cli/mod.rs`), which docs/reference.md's table must match.
pub(crate) mod exit_code {
    pub(crate) const DONE: u8 = 0;
    pub(crate) const FAILED: u8 = 1;
    pub(crate) const REFUSED: u8 = 2;
    pub(crate) const PAUSED: u8 = 3;
    /// `roller abandon` stopped after changing something (listed on
    /// stdout); rerun it once the cause is fixed.
    pub(crate) const PARTLY_DONE: u8 = 4;
    /// A failure on the new agents turned the roll around, and the
    /// rollback put the cluster back as it was (`--on-failure rollback`).
    pub(crate) const ROLLED_BACK: u8 = 5;
    pub(crate) const INTERRUPTED: u8 = 130;
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("cannot read plan file '{}': {source}", path.display())]
    ReadPlan { path: PathBuf, source: io::Error },
    #[error("plan file '{}': {source}", path.display())]
    ParsePlan {
        path: PathBuf,
        source: DocumentError,
    },
    #[error("plan file '{}': {source}", path.display())]
    Address { path: PathBuf, source: AddressError },
    #[error("cannot write plan file '{}' (it is unchanged): {source}", path.display())]
    WritePlan { path: PathBuf, source: io::Error },
    #[error("plan file '{}' is busy: {source}", path.display())]
    Busy { path: PathBuf, source: LockError },
    #[error("cannot write output: {0}")]
    Output(#[from] io::Error),
    #[error("{unhealthy} of {total} Marathon apps unhealthy")]
    Unhealthy { unhealthy: usize, total: usize },
    #[error("no health verdict: {0}")]
    NoVerdict(String),
    #[error("unknown scenario '{name}': neither a built-in one ({builtin}) nor a file")]
    UnknownScenario { name: String, builtin: String },
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    #[error("simulator: {0}")]
    Simulator(#[from] SimServeError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
    #[error("cannot listen for SIGINT/SIGTERM: {0}")]
    Signal(io::Error),
    #[error("cannot write the environment file '{}': {source}", path.display())]
    WriteEnv { path: PathBuf, source: io::Error },
    #[error("cannot write the report '{}': {source}", path.display())]
    WriteReport { path: PathBuf, source: io::Error },
    #[error("demo: {0}")]
    Demo(DemoError),
    #[error(
        "bad --counts: {0}; write AZ=COUNT pairs separated by commas, \
         e.g. --counts us-east-1a=5,us-east-1b=3,us-east-1c=4"
    )]
    Counts(CountsError),
    #[error("{0}")]
    Env(crate::roll::record::env::EnvError),
    #[error("{0}")]
    BadFlag(String),
    /// No checkpoint where one was looked for.
    #[error("{0}")]
    NoCheckpoint(String),
    #[error("cannot set up a client: {0}")]
    Adapter(String),
    #[error("{0}")]
    Checkpoint(crate::roll::record::checkpoint::CheckpointError),
    #[error("{0}")]
    Run(crate::roll::run::RunError),
    #[error(
        "paused at {what}; {} Resume with: {resume}",
        if *paged { "a page went out." } else { "no page went out (no pager configured, or it failed: see the checkpoint's events)." }
    )]
    Paused {
        what: String,
        paged: bool,
        resume: String,
    },
    #[error("{0}")]
    Held(String),
    #[error(
        "rolled back after a failure on a new agent: {failure}. The cluster is as it was before the roll \
         (old agents, original size, launch template); {}",
        if *paged { "a page went out." } else { "no page went out (no pager configured, or it failed)." }
    )]
    RolledBack { failure: String, paged: bool },
    #[error(
        "{error}; what was already undone is listed above. Fix the cause, then run the same abandon again (each step is safe to repeat)"
    )]
    AbandonPartial { error: String },
    /// `roller status` of a roll neither complete nor running: the exit
    /// code says which state, the message what to do.
    #[error("{message}")]
    RollNotDone { exit_code: u8, message: String },
    #[error(
        "interrupted; run {run_id} is checkpointed in {}: rerun the same command to resume",
        checkpoint.display()
    )]
    Interrupted { checkpoint: PathBuf, run_id: String },
    /// `--listen` refused or could not bind: nothing was changed.
    #[error("{0}")]
    Api(crate::api::ApiError),
    /// The plan API answered `roller plan … --url` with an error.
    #[error("{url} answered {status}: {message}")]
    PlanApi {
        url: String,
        status: u16,
        message: String,
    },
    /// The plan API could not be reached, or answered nonsense.
    #[error("{0}")]
    PlanApiUnreachable(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::ReadPlan { .. } | CliError::ParsePlan { .. } | CliError::Address { .. } => {
                exit_code::REFUSED
            }
            CliError::WritePlan { .. } | CliError::Busy { .. } | CliError::Output(_) => {
                exit_code::FAILED
            }
            // `roller health`: 1 unhealthy, 2 undecided.
            CliError::Unhealthy { .. } => exit_code::FAILED,
            CliError::NoVerdict(_) => exit_code::REFUSED,
            CliError::UnknownScenario { .. } | CliError::Scenario(_) => exit_code::REFUSED,
            CliError::Counts(_) => exit_code::REFUSED,
            CliError::Simulator(_)
            | CliError::Runtime(_)
            | CliError::Signal(_)
            | CliError::WriteEnv { .. }
            | CliError::WriteReport { .. } => exit_code::FAILED,
            CliError::Demo(err) => demo_exit_code(err),
            CliError::Env(_) | CliError::BadFlag(_) | CliError::NoCheckpoint(_) => {
                exit_code::REFUSED
            }
            CliError::Adapter(_) => exit_code::REFUSED,
            CliError::Checkpoint(err) => match err {
                crate::roll::record::checkpoint::CheckpointError::Write { .. } => exit_code::FAILED,
                _ => exit_code::REFUSED,
            },
            CliError::Run(err) => run_exit_code(err),
            CliError::Paused { .. } | CliError::Held(_) => exit_code::PAUSED,
            CliError::RolledBack { .. } => exit_code::ROLLED_BACK,
            CliError::AbandonPartial { .. } => exit_code::PARTLY_DONE,
            CliError::RollNotDone { exit_code, .. } => *exit_code,
            CliError::Interrupted { .. } => exit_code::INTERRUPTED,
            CliError::Api(_) => exit_code::REFUSED,
            // What the caller asked is wrong (unknown phase or step, a
            // step without its phase, no or a wrong token): refused.
            CliError::PlanApi {
                status: 400 | 401 | 403 | 404,
                ..
            } => exit_code::REFUSED,
            CliError::PlanApi { .. } | CliError::PlanApiUnreachable(_) => exit_code::FAILED,
        }
    }
}

impl CliError {
    /// A stable name for the error, as `--json` reports it.
    pub(crate) fn label(&self) -> &'static str {
        match self {
            CliError::ReadPlan { .. } => "plan_unreadable",
            CliError::ParsePlan { .. } => "plan_malformed",
            CliError::Address { .. } => "plan_address",
            CliError::WritePlan { .. } => "plan_write",
            CliError::Busy { .. } => "plan_busy",
            CliError::Output(_) => "output",
            CliError::Unhealthy { .. } => "unhealthy",
            CliError::NoVerdict(_) => "no_verdict",
            CliError::UnknownScenario { .. } => "unknown_scenario",
            CliError::Scenario(err) => err.label(),
            CliError::Simulator(err) => err.label(),
            CliError::Runtime(_) => "runtime",
            CliError::Signal(_) => "signal",
            CliError::WriteEnv { .. } => "env_write",
            CliError::WriteReport { .. } => "report_write",
            CliError::Demo(err) => err.label(),
            CliError::Counts(_) => "bad_counts",
            CliError::Env(_) => "bad_env",
            CliError::BadFlag(_) => "bad_flag",
            CliError::NoCheckpoint(_) => "no_checkpoint",
            CliError::Adapter(_) => "adapter",
            CliError::Checkpoint(err) => err.label(),
            CliError::Run(err) => err.label(),
            CliError::Paused { .. } => "paused",
            CliError::Held(_) => "held",
            CliError::RolledBack { .. } => "rolled_back",
            CliError::AbandonPartial { .. } => "abandon_partial",
            CliError::RollNotDone { .. } => "roll_not_done",
            CliError::Interrupted { .. } => "interrupted",
            CliError::Api(err) => err.label(),
            CliError::PlanApi { .. } => "plan_api_error",
            CliError::PlanApiUnreachable(_) => "plan_api_unreachable",
        }
    }

    /// `{"error": {"label", "message", "exit_code"}}`, what a command
    /// asked for `--json` prints when it fails.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "error": {
                "label": self.label(),
                "message": sentence(self),
                "exit_code": self.exit_code(),
            }
        })
    }
}

pub use crate::sentence::sentence;

fn run_exit_code(err: &crate::roll::run::RunError) -> u8 {
    err.exit_code()
}

/// The exit code of the demo's end: the one `roller run` gives the same
/// outcome (a refused preflight 2, a pause 3, a rollback 5, a signal 130).
fn demo_exit_code(err: &DemoError) -> u8 {
    match err {
        DemoError::UnknownScenario { .. } | DemoError::TimeScale(_) | DemoError::Api(_) => {
            exit_code::REFUSED
        }
        DemoError::Roll(err) => err.exit_code(),
        DemoError::Paused { .. } | DemoError::Held(_) => exit_code::PAUSED,
        DemoError::RolledBack { .. } => exit_code::ROLLED_BACK,
        DemoError::Stopped => exit_code::INTERRUPTED,
        DemoError::Output(_)
        | DemoError::Scenario(_)
        | DemoError::Runtime(_)
        | DemoError::Simulated(_)
        | DemoError::LaunchTemplate { .. }
        | DemoError::NothingToDo(_)
        | DemoError::Outage { .. } => exit_code::FAILED,
    }
}
