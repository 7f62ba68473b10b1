//! `roller run` (start or resume a roll, or with `--dry-run` print the plan
//! it would follow): its flags turned into the environment and the
//! request, the roll run against the real adapters, its outcome mapped to
//! an exit code.

use std::io::Write;
use std::path::Path;

use super::dry_run::dry_run;
use super::error::CliError;
use super::signals::StopSignals;
use super::wiring::{checkpoint_store, clients, environment_from, runtime};
use super::{RunArgs, TargetArg};
use crate::plan;
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::decide::safety::Floor;
use crate::roll::engine::{Outcome, RunOptions};
use crate::roll::error::RollError;
use crate::roll::preflight::{Request, Selection};
use crate::roll::record::checkpoint::{CheckpointStore, OnFailure};
use crate::roll::record::env::Environment;
use crate::roll::record::kinds::RollPlan;
use crate::roll::run::{RunError, RunResult, RunSettings, run};

pub(crate) const RUN_HELP: &str = "\
The roll (see docs/reference.md, \"The roll\"):
  prepare   tag the ASG with the run id, suspend AZRebalance, AlarmNotification,
            ScheduledActions (what was suspended before is left alone)
  scale-up  desired = N + K - terminated (absolute), wait for the new agents;
            drain: one maintenance window over every old agent
  drain     (drain) waves of task kills and surges that keep each app at its
            floor, until the old agents are empty; wave-1 moves only a sample
            (one task each of a tenth of the apps), which bakes on the new
            agents (--bake) before any old agent goes or wave-2 starts
  terminate (drain) each emptied agent put down and terminated with
            decrement, at most --max-unavailable per AZ at once
  replace   (serial) per instance: move the tasks whose app would lose its
            last healthy task, terminate with decrement, wait for Mesos to drop
            the agent and Marathon to be healthy
  rollback  (only after a failure on the new agents, --on-failure rollback,
            or `roller rollback`) new agents under maintenance, old agents
            opened again, tasks moved back within their floors, the new
            instances terminated with decrement, the launch template restored
  finish    resume what was suspended, remove maintenance windows, report the
            AZ rebalance moves, remove the tag

Through every wave, surge and replacement roller watches what it placed on the
new agents (failed tasks, health kills, failing checks, launch delays); a new
instance whose Mesos agent has not registered 10 minutes into the scale-up (or
half timeouts.scale_up), or launches still failing then, count too: the first failure stops every kill,
surge and termination at once, then rolls back (default) or pauses and pages
(--on-failure pause).

Output: one line per state change on stderr (RFC 3339 time, level, phase/step,
status, what it waits for: -v/-q, --log-format json), redrawn in place as a
live view when stderr is a terminal (--no-live for plain lines); on stdout the
final plan tree once and the result. --json: stdout is an event stream, one
JSON object a line, the last {\"type\": \"result\", ...}. --listen serves the
plan API and /metrics while it runs.

Every wait has a timeout ([timeouts] in the env file). On timeout the step
reads DELAYED, a page goes out (if a pager is configured), and roller exits 3:
run the same command to resume. An operator's `roller plan interrupt` (which
reaches a live run at its next tick) is never cleared by a rerun: roller exits
3 and prints the exact `roller plan continue ...` that releases it.

Examples:
  roller run --env examples/roller.env.toml --target 55 --dry-run
  roller run --env prod.toml --target 55
  roller run --env prod.toml                  # resume from the checkpoint
  roller status --env prod.toml

Exit codes: 0 done (or nothing to replace), 1 failed, 2 refused (bad input,
preflight, or a checkpoint for another group, environment or run; nothing
changed), 3 paused or held, 5 rolled back after a failure on the new
agents (the cluster is as it was before the roll), 130 interrupted
(resumable).";

pub(crate) const ROLLBACK_HELP: &str = "\
Takes the same flags as `roller run` (--env, --checkpoint, ...) and resumes the
roll's checkpoint with its plan turned around: the steps not run are closed,
and a rollback phase puts the new agents under maintenance, lifts the old
agents' windows, moves every task on a new agent back to the old agents within
its app's floor (surges set back), terminates the new instances with decrement
down to the original size (if old instances were already terminated, as many
new ones stay, and the output says which), sets the group's launch template
back to the one the old instances run, and then finishes as any roll does.

For a roll that is paused or held (no run holds its lock). A roll whose old
instances are all terminated has nothing to go back to and is refused (exit
2); so is a path with no roll in progress. A live run rolls back by itself on
a failure on the new agents (--on-failure rollback, the default).

Examples:
  roller rollback --env prod.toml
  roller rollback --env prod.toml --checkpoint s3://ops-rolls/prod/agents.json

Exit codes: 5 rolled back (the checkpoint is archived), 2 refused, 3 paused or
held again (a wait of the rollback timed out), 1 failed, 130 interrupted (run
it again to go on).";

/// The environment: the file, then `ROLLER_*` variables, then flags.
fn environment(args: &RunArgs) -> Result<Environment, CliError> {
    environment_from(&args.env, &flags(args))
}

pub(super) fn flags(args: &RunArgs) -> Vec<(&'static str, String)> {
    let mut flags = Vec::new();
    if let Some(asg) = &args.asg {
        flags.push(("asg", asg.clone()));
    }
    for (key, value) in [
        ("region", &args.region),
        ("mesos", &args.mesos),
        ("marathon", &args.marathon),
    ] {
        if let Some(value) = value {
            flags.push((key, value.clone()));
        }
    }
    if let Some(dir) = &args.checkpoint_dir {
        flags.push(("checkpoint_dir", dir.display().to_string()));
    }
    if let Some(bake) = &args.bake {
        flags.push(("bake", bake.clone()));
    }
    if let Some(limit) = args.failure_limit {
        flags.push(("failure_limit", limit.to_string()));
    }
    if let Some(surge) = &args.max_surge {
        flags.push(("max_surge", surge.clone()));
    }
    if let Some(standby) = &args.standby {
        flags.push(("standby", standby.clone()));
    }
    if let Some(protected) = &args.protected {
        flags.push(("protected", protected.clone()));
    }
    if !args.alarms.is_empty() {
        flags.push(("alarms", args.alarms.join(",")));
    }
    flags
}

/// The command that resumes this roll, with absolute paths: it is paged,
/// and whoever runs it may be in another folder or on another host.
/// `checkpoint`: the store as a command names it.
fn resume_command(args: &RunArgs, checkpoint: &CheckpointStore) -> String {
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut command = format!("roller run --env {}", absolute(&args.env).display());
    if args.checkpoint.is_some() {
        command.push_str(&format!(" --checkpoint {}", checkpoint.for_command()));
    }
    command
}

/// What the operator asked for, resolved from what was typed: each
/// setting not typed is `None` (a new roll takes its default, a resume
/// keeps its own); a typed `--target 0` reaches preflight and gets its own
/// refusal.
pub(super) fn request(args: &RunArgs) -> Result<Request, CliError> {
    let select: Option<Selection> = args
        .select
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(CliError::BadFlag)?;
    // --honor-min-health asks for the default floor.
    let floor = match args.min_healthy.as_deref() {
        Some(text) => Some(Floor::parse(text).map_err(CliError::BadFlag)?),
        None if args.honor_min_health => Some(Floor::default()),
        None => None,
    };
    Ok(Request {
        target: args.target.iter().rev().find_map(|t| match t {
            TargetArg::Agents(n) => Some(*n),
            TargetArg::Group(..) => None,
        }),
        group_targets: args
            .target
            .iter()
            .filter_map(|t| match t {
                TargetArg::Group(name, n) => Some((name.clone(), *n)),
                TargetArg::Agents(_) => None,
            })
            .collect(),
        select,
        raise_max: args.raise_max,
        canary: args.canary,
        allow_unhealthy: args.allow_unhealthy.clone(),
        floor,
        skip_not_in_service: args.skip_not_in_service,
        strategy: args
            .strategy
            .as_deref()
            .map(RollStrategy::parse)
            .transpose()
            .map_err(CliError::BadFlag)?,
        max_unavailable: args.max_unavailable,
        on_failure: args
            .on_failure
            .as_deref()
            .map(OnFailure::parse)
            .transpose()
            .map_err(CliError::BadFlag)?,
    })
}

/// `roller run` (`rollback`: `roller rollback`, which resumes the roll
/// with its plan turned around). With `--json` the last line on stdout is
/// the result object, whatever the outcome, the plan as it ended
/// included. `view`: draw the terminal view on stderr.
pub(super) fn run_command(
    args: &RunArgs,
    rollback: bool,
    view: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut ended = None;
    let mut text = Vec::new();
    let result = roll(
        args,
        rollback,
        view,
        if args.json { &mut text } else { out },
        &mut ended,
    );
    if !args.json || args.dry_run {
        if args.json {
            // --dry-run --json: its own object, or the error's.
            match &result {
                Ok(()) => out.write_all(&text)?,
                Err(err) => writeln!(out, "{}", err.to_json())?,
            }
        }
        return result;
    }
    let (outcome, exit_code, message, label) = match &result {
        Ok(()) => (
            "complete",
            0,
            String::from_utf8_lossy(&text).trim().to_string(),
            None,
        ),
        Err(err) => {
            let outcome = match err {
                CliError::Paused { .. } => "paused",
                CliError::Held(_) => "held",
                CliError::RolledBack { .. } => "rolled_back",
                CliError::Interrupted { .. } => "stopped",
                _ if err.exit_code() == super::exit_code::REFUSED => "refused",
                _ => "failed",
            };
            (
                outcome,
                err.exit_code(),
                super::error::sentence(err),
                Some(err.label()),
            )
        }
    };
    let line = ResultLine {
        kind: "result",
        outcome,
        exit_code,
        label,
        message,
        plan: ended.as_ref().map(plan::info),
    };
    let line = serde_json::to_string(&line).unwrap_or_default();
    writeln!(out, "{line}")?;
    result
}

/// `run --json`'s last line (fields in this order, `type` first, as in
/// the event stream's objects).
#[derive(serde::Serialize)]
struct ResultLine {
    #[serde(rename = "type")]
    kind: &'static str,
    outcome: &'static str,
    exit_code: u8,
    label: Option<&'static str>,
    message: String,
    plan: Option<plan::PlanInfo>,
}

fn roll(
    args: &RunArgs,
    rollback: bool,
    view: bool,
    out: &mut dyn Write,
    ended: &mut Option<RollPlan>,
) -> Result<(), CliError> {
    let env = environment(args)?;
    let request = request(args)?;
    let api = super::listen::settings(args.listen)?;
    let runtime = runtime()?;
    runtime.block_on(async {
        let clients = clients(&env).await?;
        let store = checkpoint_store(&args.checkpoint, &env).await?;
        if args.dry_run && rollback {
            return Err(CliError::BadFlag(
                "--dry-run with rollback: `roller status` shows the roll, and `roller run --dry-run` \
                 its plan; a rollback's steps are listed in docs/reference.md"
                    .to_string(),
            ));
        }
        if args.dry_run {
            return dry_run(&clients, &env, &request, args, store, out).await;
        }
        let checkpoint = store.location().to_path_buf();
        let resume = resume_command(args, &store);
        let stop = stop_on_signal()?;
        // The API first: a --listen that cannot bind leaves no view drawn.
        let live = super::listen::serve(api.as_ref(), &env.timeouts).await?;
        let (observer, view) = crate::report::for_roll(&env, args.json, view);
        let observer = match &live {
            Some(live) => live.tee(observer),
            None => observer,
        };
        let settings = RunSettings {
            checkpoint: store,
            request,
            options: RunOptions {
                resume_az_rebalance: args.resume_az_rebalance,
                resume_command: resume.clone(),
                acknowledge_failure: args.acknowledge_failure,
                rollback_ordered: rollback,
                live,
            },
        };
        let result = run(clients.ports(), &env, settings, stop, observer).await;
        crate::report::end_view(view);
        let cost = crate::metrics::loop_cost();
        tracing::info!(
            "{}",
            cost.sentence(crate::metrics::process_cpu(), crate::metrics::peak_rss())
        );
        let result = result.map_err(CliError::Run)?;
        say_result(result, args.json, resume, checkpoint, out, ended)
    })
}

/// A channel that turns true on SIGINT or SIGTERM: the runner stops
/// between ticks, checkpointed.
fn stop_on_signal() -> Result<tokio::sync::watch::Receiver<bool>, CliError> {
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let mut signals = StopSignals::install().map_err(CliError::Signal)?;
    tokio::spawn(async move {
        signals.wait().await;
        let _ = stop_tx.send(true);
    });
    Ok(stop)
}

/// What `roller run` prints once the roll has returned: the notes, the
/// tree as the roll left it (not with --json) and its ending.
fn say_result(
    result: RunResult,
    json: bool,
    resume: String,
    checkpoint: std::path::PathBuf,
    out: &mut dyn Write,
    ended: &mut Option<RollPlan>,
) -> Result<(), CliError> {
    match result {
        RunResult::NothingToDo(message) => {
            writeln!(out, "{message}")?;
            Ok(())
        }
        RunResult::Finished {
            outcome,
            checkpoint: record,
            archived,
            notes,
        } => {
            for note in notes {
                writeln!(out, "note: {note}")?;
            }
            // The tree once, as the roll left it: what a cron mail
            // ends with, the log above it.
            if !json {
                out.write_all(plan::tree(&record.plan).as_bytes())?;
            }
            *ended = Some(record.plan.clone());
            let end = Ending {
                archived,
                resume,
                checkpoint,
                run_id: record.run_id.clone(),
            };
            ended_as(outcome, end, out)
        }
    }
}

/// What `roller run` says of a roll's end besides its outcome.
struct Ending {
    /// Where the checkpoint was archived (or set aside), if it was.
    archived: Option<std::path::PathBuf>,
    /// The command that resumes the roll.
    resume: String,
    /// Where the checkpoint is.
    checkpoint: std::path::PathBuf,
    run_id: String,
}

/// How `roller run` ends for `outcome`: the last lines it prints, and the
/// error (with its exit code) of every end but a completed roll.
fn ended_as(outcome: Outcome, end: Ending, out: &mut dyn Write) -> Result<(), CliError> {
    let archived_line = |out: &mut dyn Write| -> std::io::Result<()> {
        match &end.archived {
            Some(path) => writeln!(out, "checkpoint archived as {}", path.display()),
            None => Ok(()),
        }
    };
    match outcome {
        Outcome::Complete { summary } => {
            // One line per group of a cluster, each under the heading.
            if summary.contains('\n') {
                writeln!(out, "roll complete:")?;
                for line in summary.lines() {
                    writeln!(out, "  {line}")?;
                }
            } else {
                writeln!(out, "roll complete: {summary}")?;
            }
            archived_line(out)?;
            Ok(())
        }
        Outcome::Paused {
            step,
            reason,
            paged,
        } => Err(CliError::Paused {
            what: format!("{step}: {reason}"),
            paged,
            resume: end.resume,
        }),
        Outcome::Held { reason } => Err(CliError::Held(reason)),
        Outcome::RolledBack {
            failure,
            summary,
            paged,
        } => {
            writeln!(out, "rolled back: {summary}")?;
            archived_line(out)?;
            Err(CliError::RolledBack { failure, paged })
        }
        Outcome::Refused { reason } => {
            let aside = end
                .archived
                .map(|p| format!(" (this run's checkpoint was set aside as {})", p.display()))
                .unwrap_or_default();
            Err(CliError::Run(RunError::Roll(RollError::refused(format!(
                "{reason}{aside}"
            )))))
        }
        Outcome::Stopped => Err(CliError::Interrupted {
            checkpoint: end.checkpoint,
            run_id: end.run_id,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ending() -> Ending {
        Ending {
            archived: Some("cp.run.complete.json".into()),
            resume: "roller run --env e.toml".to_string(),
            checkpoint: "cp.json".into(),
            run_id: "run".to_string(),
        }
    }

    fn printed(summary: &str) -> String {
        let mut out = Vec::new();
        let outcome = Outcome::Complete {
            summary: summary.to_string(),
        };
        ended_as(outcome, ending(), &mut out).expect("a complete roll is no error");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn a_complete_roll_of_one_group_says_its_summary_on_the_heading_line() {
        assert_eq!(
            printed("AZs balanced: no rebalance move needed"),
            "roll complete: AZs balanced: no rebalance move needed\n\
             checkpoint archived as cp.run.complete.json\n"
        );
    }

    #[test]
    fn a_complete_roll_of_a_cluster_says_each_groups_line_under_the_heading() {
        assert_eq!(
            printed("a: AZs balanced\nb: move 1 instance from us-east-1a"),
            "roll complete:\n  a: AZs balanced\n  b: move 1 instance from us-east-1a\n\
             checkpoint archived as cp.run.complete.json\n"
        );
    }
}
