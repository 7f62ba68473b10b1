//! The command line: what the user typed (clap types, only here), turned
//! into calls on the library, and every failure into a stable exit code.

mod abandon_command;
mod demo_command;
mod dry_run;
mod error;
mod health_command;
#[cfg(test)]
mod job_examples_tests;
mod listen;
mod output;
mod plan_client;
mod plan_command;
mod rebalance_command;
#[cfg(test)]
mod reference_tests;
mod run_args;
mod run_command;
mod signals;
mod sim_command;
mod status_command;
mod target_arg;
mod wiring;

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

use crate::report::logging::{LogFormat, LogSettings};

pub(crate) use error::exit_code;
pub use error::{CliError, sentence};
pub(crate) use run_args::RunArgs;
pub(crate) use target_arg::TargetArg;

const EXIT_CODES: &str = "\
Exit codes:
  0    done
  1    failed: an error the operator must fix (e.g. a file could not be written)
  2    refused: bad input (flags, env file, plan file, checkpoint), a failed
       preflight, or another roll holds this cluster; nothing was changed
  3    paused: a wait timed out or another writer changed the group (a page
       went out if a pager is configured): rerun to resume; or held by an
       operator's interrupt or a canary: the error prints the exact
       `roller plan continue` that releases it
  4    partly done: `roller abandon` undid what it could and names what it
       could not (with what to do by hand); fix the cause and run it again
  5    rolled back: a failure on the new agents (or `roller rollback`) turned
       the roll around and the cluster is as it was before it
  130  interrupted (SIGINT/SIGTERM); rerun to resume

`roller status` says a roll's state the same way: 0 complete or running, 1 its
last run failed, 3 paused, held or stopped (see `roller status --help`).";

/// Replaces every node of a Mesos cluster running in an AWS Auto Scaling
/// group, one safe step at a time, as a plan you can pause and resume.
#[derive(Debug, Parser)]
#[command(name = "roller", version, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// More in the log (stderr): -v debug (also each retry of a call to
    /// Mesos, Marathon or a pager), -vv trace. RUST_LOG, when set, decides
    /// instead (e.g. RUST_LOG=roller=debug).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    /// Only warnings and errors in the log.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// The log's format on stderr: text (one line per state change:
    /// RFC 3339 time, level, phase/step, status, what it waits for) or json
    /// (one object a line, for journald or a cloud log).
    #[arg(long, value_name = "text|json", default_value = "text", global = true, value_parser = LogFormat::parse)]
    pub(crate) log_format: LogFormat,
    /// Plain log lines even on a terminal (no live view redrawn in place).
    #[arg(long, global = true)]
    pub(crate) no_live: bool,
}

impl Cli {
    /// What the log is to show, from -v/-q/--log-format and RUST_LOG.
    pub fn log_settings(&self) -> LogSettings {
        LogSettings {
            verbosity: if self.quiet {
                -1
            } else {
                i8::try_from(self.verbose).unwrap_or(i8::MAX)
            },
            format: self.log_format,
            rust_log: std::env::var("RUST_LOG").ok(),
        }
    }

    /// Whether a roll may be shown in the live view: stderr is a
    /// terminal, plain text logs, and stdout is not that terminal's
    /// `--json` stream.
    fn live(&self, json: bool) -> bool {
        use std::io::IsTerminal;
        !self.no_live
            && self.log_format == LogFormat::Text
            && std::io::stderr().is_terminal()
            && std::env::var("TERM").map_or(true, |t| t != "dumb")
            && !(json && std::io::stdout().is_terminal())
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Show or operate a plan document (the DC/OS SDK plan operations).
    #[command(after_help = PLAN_HELP)]
    Plan {
        #[command(subcommand)]
        command: PlanCommand,
    },
    /// Roll a built-in cluster (`demo` unless --scenario says otherwise),
    /// simulated in-process on loopback, with roller's real clients, and
    /// print the monitor's report (no setup, no credentials; the caller's
    /// AWS_* variables are ignored).
    #[command(after_help = demo_command::HELP)]
    Demo(DemoArgs),
    /// Serve a simulated cluster (AWS Auto Scaling + EC2, three Mesos
    /// masters, three Marathons) on loopback until SIGINT/SIGTERM.
    #[command(after_help = sim_command::HELP)]
    Sim(SimArgs),
    /// Roll the cluster: replace every selected agent of the ASG, pausing
    /// (exit 3) when a wait times out; run again to resume.
    #[command(after_help = run_command::RUN_HELP)]
    Run(Box<RunArgs>),
    /// Roll a paused or held roll back: the plan turns around into its
    /// rollback phase (tasks back to the old agents, new instances
    /// terminated down to the original size, the group restored), then
    /// finishes. Exit 5 once rolled back.
    #[command(after_help = run_command::ROLLBACK_HELP)]
    Rollback(Box<RunArgs>),
    /// Show a roll's checkpoint: the plan tree, a pause, whether a run
    /// holds its lock; the exit code says the roll's state.
    #[command(after_help = status_command::HELP)]
    Status(StatusArgs),
    /// Give up a roll whose checkpoint is lost or unwanted: remove its
    /// roller:run-id tag (only if it carries that id), resume what it
    /// suspended, remove its maintenance windows. Never changes capacity.
    Abandon(AbandonArgs),
    /// Judge once whether every Marathon app is healthy (exit 0), some are
    /// not (exit 1), or no verdict could be reached (exit 2).
    #[command(after_help = health_command::HELP)]
    Health(HealthArgs),
    /// List the fewest single-instance moves that balance an Auto Scaling
    /// group across its AZs, as AZRebalance would make them once resumed.
    #[command(after_help = rebalance_command::HELP)]
    Rebalance(RebalanceArgs),
    /// Print a shell completion script on stdout.
    #[command(after_help = COMPLETIONS_HELP)]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print roller's man page (roff) on stdout.
    #[command(
        after_help = "Example:\n  roller man > /usr/local/share/man/man1/roller.1 && man roller"
    )]
    Man,
}

const COMPLETIONS_HELP: &str = "\
Where to put it:
  bash  roller completions bash > /etc/bash_completion.d/roller
        (or ~/.local/share/bash-completion/completions/roller)
  zsh   roller completions zsh > \"${fpath[1]}/_roller\"   (then: compinit)
  fish  roller completions fish > ~/.config/fish/completions/roller.fish";

const PLAN_HELP: &str = "\
A plan is a tree: plan -> phases -> steps. Steps store a status (PENDING,
PREPARED, STARTING, STARTED, COMPLETE, DELAYED, WAITING, ERROR) and an
interrupt flag; phase and plan statuses are derived from their children.
Phases and steps are named by id or name (ids match first).

With --url instead of --file, the same commands are sent to the plan API of a
live `roller run --listen ADDR` (the DC/OS SDK's /v1/plans/roll). The run
applies an operation at its next tick; the answer says whether it will change
anything (exit 0, or 0 with `already done`); an unknown phase or step, or a
step without --phase, exits 2. When ROLLER_API_TOKEN or ROLLER_API_TOKEN_FILE
is set, its token is sent as `Authorization: Bearer <token>`.

Examples:
  roller plan show --file examples/hello-world.json
  roller plan continue --file plan.json --phase replace
  roller plan force-complete --file plan.json --step i-0abc123
  roller plan show --file plan.json --json
  roller plan show --url http://127.0.0.1:8080
  roller plan interrupt --url http://127.0.0.1:8080 --phase drain";

#[derive(Debug, Subcommand)]
pub(crate) enum PlanCommand {
    /// Print the plan tree with derived statuses (exit 0 whatever they are).
    Show(ShowArgs),
    /// Let an interrupted plan, phase or step proceed; on a canary phase,
    /// release the next canary step.
    Continue(OperationArgs),
    /// Stop a plan, phase or step from starting new work (work already
    /// under way is not undone). Ignored on a phase during its canary.
    Interrupt(OperationArgs),
    /// Mark every step of the plan, phase or step COMPLETE without doing it.
    ForceComplete(OperationArgs),
    /// Set every step of the plan, phase or step back to PENDING and let it
    /// proceed, so the work is done again.
    Restart(OperationArgs),
    /// Restart the plan, phase or step if it is COMPLETE, then let it proceed.
    Start(OperationArgs),
    /// Interrupt the plan, phase or step and set its steps back to PENDING.
    Stop(OperationArgs),
    /// Walk the plan engine through the DC/OS SDK's hello-world deployment,
    /// printing the plan tree at every status change.
    Demo,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["file", "url"])))]
pub(crate) struct ShowArgs {
    /// The plan document (JSON), or a roll's checkpoint.
    #[arg(long, value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
    /// The plan API of a live `roller run --listen` (e.g.
    /// http://127.0.0.1:8080): its plan as the run last saved it.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// Print the JSON view (a superset of the SDK's PlanInfo) instead of the tree.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["file", "url"])))]
pub(crate) struct OperationArgs {
    /// The plan document (JSON); rewritten atomically when the operation changes it.
    #[arg(long, value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
    /// The plan API of a live `roller run --listen` (e.g.
    /// http://127.0.0.1:8080): the run applies the operation at its next
    /// tick. Sends ROLLER_API_TOKEN(_FILE) as a bearer token when set.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// The phase to act on (id or name). Without --phase and --step: the plan.
    #[arg(long, value_name = "PHASE")]
    pub(crate) phase: Option<String>,
    /// The step to act on (id or name); without --phase it must be unique.
    #[arg(long, value_name = "STEP")]
    pub(crate) step: Option<String>,
    /// Print {"result": "changed" | "already_done", "plan": <plan show --json>}.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// The built-in scenario to roll (each is described below).
    #[arg(long, value_name = "NAME", default_value = crate::demo::DEFAULT_SCENARIO, value_parser = demo_command::scenario_names())]
    pub(crate) scenario: String,
    /// Simulated seconds per real second, for the settle before the roll
    /// and every wait: 10 to watch the live view, 300 to see the end at once.
    #[arg(long, value_name = "K", default_value_t = crate::demo::DEFAULT_TIME_SCALE,
          allow_negative_numbers = true, value_parser = crate::demo::time_scale)]
    pub(crate) time_scale: f64,
    /// Serve the plan API and /metrics of the demo's roll on IP:PORT while
    /// it runs (as `roller run --listen`; loopback unless ROLLER_API_TOKEN
    /// or ROLLER_API_TOKEN_FILE is set).
    #[arg(long, value_name = "IP:PORT")]
    pub(crate) listen: Option<SocketAddr>,
}

#[derive(Debug, Args)]
pub(crate) struct AbandonArgs {
    /// The environment file.
    #[arg(long, value_name = "ENV.toml")]
    pub(crate) env: PathBuf,
    /// The run to abandon (from the tag, `roller status` or the page).
    #[arg(long, value_name = "ID")]
    pub(crate) run_id: String,
    /// The run's checkpoint, when not at the default place.
    #[arg(long, value_name = "PATH")]
    pub(crate) checkpoint: Option<PathBuf>,
    /// Say what abandoning would change, and change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Print {"run_id", "dry_run", "done", "would", "notes"} (and "error"
    /// when it stopped part-way) as one JSON object on stdout.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// The environment file: its checkpoint is shown.
    #[arg(long, value_name = "ENV.toml")]
    pub(crate) env: Option<PathBuf>,
    /// The checkpoint file to show.
    #[arg(long, value_name = "PATH")]
    pub(crate) checkpoint: Option<PathBuf>,
    /// Print JSON: run_id, asg and target (the first group's), groups (each asg, target and instances), locked, state, pause, plan, events.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct HealthArgs {
    /// Marathon base URL(s), comma-separated; any of them will do (the
    /// leader is looked up), e.g. http://m1:8080,http://m2:8080.
    #[arg(
        long,
        value_name = "URL[,URL...]",
        value_delimiter = ',',
        required = true
    )]
    pub(crate) marathon: Vec<String>,
    /// Mesos master URL(s), comma-separated: also list the agents, with
    /// how many healthy tasks each holds. An unreachable Mesos means no
    /// verdict.
    #[arg(long, value_name = "URL[,URL...]", value_delimiter = ',')]
    pub(crate) mesos: Vec<String>,
    /// Extra CA certificates (PEM) to trust on top of the system's, e.g.
    /// the DC/OS cluster CA.
    #[arg(long, value_name = "PEM", env = "ROLLER_CA_BUNDLE")]
    pub(crate) ca_bundle: Option<std::path::PathBuf>,
    /// Print {"verdict", "apps", "error"} as JSON on stdout, whatever the
    /// exit code.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RebalanceArgs {
    /// Instances per AZ, comma-separated, every AZ of the group included
    /// (0 for an empty one), e.g. us-east-1a=5,us-east-1b=3,us-east-1c=4.
    #[arg(long, value_name = "AZ=COUNT[,AZ=COUNT...]")]
    pub(crate) counts: String,
    /// Print {"moves": [{"from", "to"}], "balanced": {AZ: count}} instead.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SimArgs {
    /// A built-in scenario (demo, msr-55, hazards, big, huge, bad-image,
    /// cluster, demo-cluster, ...) or a scenario file (TOML, as in
    /// tests/scenarios/).
    #[arg(long, value_name = "NAME|PATH")]
    pub(crate) scenario: String,
    /// Simulated seconds per real second.
    #[arg(
        long,
        value_name = "K",
        default_value_t = 1.0,
        value_parser = sim_command::parse_time_scale
    )]
    pub(crate) time_scale: f64,
    /// Replaces the scenario's seed (the same seed replays the same world).
    #[arg(long, value_name = "S")]
    pub(crate) seed: Option<u64>,
    /// Write the roller's environment file (TOML) pointing at this simulator.
    #[arg(long, value_name = "PATH")]
    pub(crate) write_env: Option<PathBuf>,
    /// At exit, write the monitor's report (JSON) there.
    #[arg(long, value_name = "PATH")]
    pub(crate) report: Option<PathBuf>,
    /// The address to listen on. The simulator checks no credentials: keep
    /// it on loopback unless you mean to share it.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    pub(crate) bind: IpAddr,
}

/// Runs a parsed command line, writing its report to `out`. A command
/// asked for `--json` that fails prints `{"error": {…}}` there too, unless
/// its JSON already says how it ended (`health`'s verdict, `status`'s
/// state, `run`'s result).
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<(), CliError> {
    let json = cli.command.json_requested();
    let result = dispatch(cli, out);
    if let Err(err) = &result {
        let reported = matches!(
            err,
            CliError::Unhealthy { .. }
                | CliError::NoVerdict(_)
                | CliError::RollNotDone { .. }
                | CliError::AbandonPartial { .. }
        );
        if json && !reported && !matches!(err, CliError::Output(_)) {
            writeln!(out, "{}", err.to_json())?;
        }
    }
    result
}

impl Command {
    /// Whether the command was asked for JSON on stdout (`run --json`
    /// writes its own last line, so it is not counted here).
    fn json_requested(&self) -> bool {
        match self {
            Command::Plan { command } => match command {
                PlanCommand::Show(args) => args.json,
                PlanCommand::Continue(args)
                | PlanCommand::Interrupt(args)
                | PlanCommand::ForceComplete(args)
                | PlanCommand::Restart(args)
                | PlanCommand::Start(args)
                | PlanCommand::Stop(args) => args.json,
                PlanCommand::Demo => false,
            },
            Command::Status(args) => args.json,
            Command::Health(args) => args.json,
            Command::Rebalance(args) => args.json,
            Command::Abandon(args) => args.json,
            Command::Run(_)
            | Command::Rollback(_)
            | Command::Demo(_)
            | Command::Sim(_)
            | Command::Completions { .. }
            | Command::Man => false,
        }
    }
}

fn dispatch(cli: Cli, out: &mut dyn Write) -> Result<(), CliError> {
    let view =
        cli.live(matches!(&cli.command, Command::Run(args) | Command::Rollback(args) if args.json));
    match cli.command {
        Command::Plan { command } => plan_command::run(command, out),
        Command::Demo(args) => demo_command::run(args, view, out),
        Command::Sim(args) => sim_command::run(&args, out),
        Command::Health(args) => health_command::run(&args, out),
        Command::Rebalance(args) => rebalance_command::run(&args, out),
        Command::Run(args) => run_command::run_command(&args, false, view, out),
        Command::Rollback(args) => run_command::run_command(&args, true, view, out),
        Command::Status(args) => status_command::run(&args, out),
        Command::Abandon(args) => abandon_command::run(&args, out),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "roller", out);
            Ok(())
        }
        Command::Man => {
            let command = <Cli as clap::CommandFactory>::command();
            clap_mangen::Man::new(command).render(out)?;
            Ok(())
        }
    }
}
