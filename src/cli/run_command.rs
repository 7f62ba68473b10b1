//! `roller run` (start or resume a roll), `roller status` (the checkpoint's
//! plan and whether a run holds it): the environment resolved once, the
//! real adapters built from it, the roll run, its outcome mapped to an
//! exit code.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::CliError;
use super::signals::StopSignals;
use super::{RunArgs, StatusArgs};
use crate::aws::AwsSettings;
use crate::http::{HttpAuth, HttpSettings};
use crate::marathon::MarathonClient;
use crate::mesos::{MesosClient, MesosSettings};
use crate::pager::{DEFAULT_EVENTS_URL, PagerDuty, Sink, Sinks, Webhook};
use crate::plan;
use crate::roll::checkpoint::{Checkpoint, Pause, RunLock};
use crate::roll::env::Environment;
use crate::roll::preflight::{Preflight, Request, Selection, preflight};
use crate::roll::run::{RunResult, RunSettings, run};
use crate::roll::runner::{Outcome, Ports, RunOptions};

pub const RUN_HELP: &str = "\
The roll (see the README's \"The roll\"):
  prepare   tag the ASG with the run id, suspend AZRebalance, AlarmNotification,
            ScheduledActions (what was suspended before is left alone)
  scale-up  desired = N + K - terminated (absolute), wait for the new agents
  replace   per instance: move tasks whose app would lose its last healthy task
            (maintenance window, kills, surges), terminate with decrement, wait
            for Mesos to drop the agent and Marathon to be healthy
  finish    resume what was suspended, remove maintenance windows, report the
            AZ rebalance moves, remove the tag

Every wait has a timeout ([timeouts] in the env file). On timeout the plan is
paused, a page goes out, and roller exits 3: run the same command to resume.

Examples:
  roller run --env examples/roller.env.toml --target 55 --dry-run
  roller run --env prod.toml --target 55
  roller run --env prod.toml                  # resume from the checkpoint
  roller status --env prod.toml

Exit codes: 0 done (or nothing to replace), 1 failed, 2 refused (bad input or
preflight; nothing changed), 3 paused (resumable), 130 interrupted (resumable).";

/// The environment: the file, then `ROLLER_*` variables, then flags.
fn environment(args: &RunArgs) -> Result<Environment, CliError> {
    environment_from(&args.env, &flags(args))
}

fn environment_from(path: &Path, flags: &[(&str, String)]) -> Result<Environment, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| {
        CliError::Env(crate::roll::env::EnvError::Read {
            path: path.to_path_buf(),
            source,
        })
    })?;
    Environment::resolve(
        Some((path, &text)),
        &|name: &str| std::env::var(name).ok(),
        flags,
    )
    .map_err(CliError::Env)
}

fn flags(args: &RunArgs) -> Vec<(&'static str, String)> {
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
    flags
}

fn checkpoint_path(explicit: &Option<PathBuf>, env: &Environment) -> PathBuf {
    explicit
        .clone()
        .unwrap_or_else(|| Checkpoint::default_path(&env.checkpoint_dir, &env.asg))
}

fn resume_command(args: &RunArgs) -> String {
    let mut command = format!("roller run --env {}", args.env.display());
    if let Some(path) = &args.checkpoint {
        command.push_str(&format!(" --checkpoint {}", path.display()));
    }
    command
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(CliError::Runtime)
}

struct Clients {
    aws: crate::aws::AwsAutoScaling,
    mesos: MesosClient,
    marathon: MarathonClient,
    pager: Sinks,
}

async fn clients(env: &Environment) -> Result<Clients, CliError> {
    let aws = AwsSettings {
        region: env.region.clone(),
        profile: env.profile.clone(),
        endpoint_url: env.aws_endpoint_url.clone(),
        ..AwsSettings::default()
    }
    .connect()
    .await
    .map_err(|e| CliError::Adapter(format!("AWS: {e}")))?;
    let http = |system: &str| -> Result<HttpSettings, CliError> {
        Ok(HttpSettings {
            auth: HttpAuth::from_env(system)
                .map_err(|e| CliError::Adapter(format!("{system} credentials: {e}")))?,
            ..HttpSettings::default()
        })
    };
    let mesos = MesosClient::new(MesosSettings {
        http: http("MESOS")?,
        ..MesosSettings::new(env.mesos.clone())
    })
    .map_err(|e| CliError::Adapter(format!("Mesos: {e}")))?;
    let marathon = MarathonClient::new(&env.marathon, &http("MARATHON")?)
        .map_err(|e| CliError::Adapter(format!("Marathon: {e}")))?;
    let mut sinks = Vec::new();
    let client = HttpSettings::default()
        .client()
        .map_err(|e| CliError::Adapter(format!("pager: {e}")))?;
    if env.pager.pagerduty {
        let key = PagerDuty::routing_key_from_env()
            .map_err(|e| CliError::Adapter(format!("PagerDuty: {e}")))?
            .ok_or_else(|| {
                CliError::Adapter(
                    "[pager] pagerduty = true but neither ROLLER_PAGERDUTY_ROUTING_KEY nor ROLLER_PAGERDUTY_ROUTING_KEY_FILE is set".to_string(),
                )
            })?;
        let url = env
            .pager
            .pagerduty_events_url
            .clone()
            .unwrap_or_else(|| DEFAULT_EVENTS_URL.to_string());
        sinks.push(Sink::PagerDuty(PagerDuty::new(client.clone(), url, key)));
    }
    if env.pager.webhook {
        let url = crate::http::secret_from_env("ROLLER_WEBHOOK_URL")
            .map_err(|e| CliError::Adapter(format!("webhook: {e}")))?
            .ok_or_else(|| {
                CliError::Adapter(
                    "[pager] webhook = true but neither ROLLER_WEBHOOK_URL nor ROLLER_WEBHOOK_URL_FILE is set".to_string(),
                )
            })?;
        sinks.push(Sink::Webhook(Webhook::new(client, url)));
    }
    Ok(Clients {
        aws,
        mesos,
        marathon,
        pager: Sinks(sinks),
    })
}

fn request(args: &RunArgs) -> Result<Request, CliError> {
    let select: Selection = args
        .select
        .as_deref()
        .unwrap_or("all")
        .parse()
        .map_err(CliError::BadFlag)?;
    Ok(Request {
        target: args.target.unwrap_or(0),
        select,
        raise_max: args.raise_max,
        canary: args.canary,
        allow_unhealthy: args.allow_unhealthy.clone(),
        honor_min_health: args.honor_min_health,
        skip_not_in_service: args.skip_not_in_service,
    })
}

pub(super) fn run_command(args: &RunArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let env = environment(args)?;
    let request = request(args)?;
    let checkpoint = checkpoint_path(&args.checkpoint, &env);
    let runtime = runtime()?;
    runtime.block_on(async {
        let clients = clients(&env).await?;
        if args.dry_run {
            return dry_run(&clients, &env, &request, &checkpoint, out).await;
        }
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let mut signals = StopSignals::install().map_err(CliError::Signal)?;
        tokio::spawn(async move {
            signals.wait().await;
            let _ = stop_tx.send(true);
        });
        let mut last = String::new();
        let observer = Box::new(move |c: &Checkpoint| {
            let tree = plan::tree(&c.plan);
            if tree != last {
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{tree}");
                let _ = stdout.flush();
                last = tree;
            }
        });
        let settings = RunSettings {
            checkpoint: checkpoint.clone(),
            request,
            target_given: args.target.is_some(),
            select_given: args.select.is_some(),
            options: RunOptions {
                resume_az_rebalance: args.resume_az_rebalance,
                resume_command: resume_command(args),
            },
        };
        let ports = Ports {
            aws: &clients.aws,
            mesos: &clients.mesos,
            marathon: &clients.marathon,
            pager: &clients.pager,
        };
        let result = run(ports, &env, settings, stop, observer)
            .await
            .map_err(CliError::Run)?;
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
                match outcome {
                    Outcome::Complete { summary } => {
                        writeln!(out, "roll complete: {summary}")?;
                        if let Some(path) = archived {
                            writeln!(out, "checkpoint archived as {}", path.display())?;
                        }
                        Ok(())
                    }
                    Outcome::Paused {
                        step,
                        reason,
                        paged,
                    } => Err(CliError::Paused {
                        what: format!("{step}: {reason}"),
                        paged,
                        resume: resume_command(args),
                    }),
                    Outcome::Held { reason } => Err(CliError::Held(reason)),
                    Outcome::Stopped => Err(CliError::Interrupted {
                        checkpoint: checkpoint.clone(),
                        run_id: record.run_id.clone(),
                    }),
                }
            }
        }
    })
}

/// Prints the plan a run would follow; writes nothing anywhere.
async fn dry_run(
    clients: &Clients,
    env: &Environment,
    request: &Request,
    checkpoint: &Path,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let existing = Checkpoint::load(checkpoint).map_err(CliError::Checkpoint)?;
    if let Some(existing) = existing {
        writeln!(
            out,
            "dry run: a checkpoint exists ({}): a run would resume it:",
            checkpoint.display()
        )?;
        out.write_all(plan::tree(&existing.plan).as_bytes())?;
        return Ok(());
    }
    if request.target == 0 {
        return Err(CliError::BadFlag(
            "--target N is required for a new roll (the number of agents when done)".to_string(),
        ));
    }
    let preflight = preflight(
        &clients.aws,
        &clients.mesos,
        &clients.marathon,
        env,
        request,
        "dry-run".to_string(),
    )
    .await
    .map_err(|e| CliError::Run(e.into()))?;
    match preflight {
        Preflight::NothingToDo(message) => writeln!(out, "{message}")?,
        Preflight::Ready(checkpoint, notes) => {
            for note in notes {
                writeln!(out, "note: {note}")?;
            }
            writeln!(
                out,
                "dry run: would replace {} instance(s) of {} and end with {} agents (desired peaks at {}):",
                checkpoint.instances.len(),
                checkpoint.asg,
                checkpoint.target,
                checkpoint.scale_up_desired()
            )?;
            out.write_all(plan::tree(&checkpoint.plan).as_bytes())?;
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct Status<'a> {
    run_id: &'a str,
    asg: &'a str,
    target: u32,
    locked: bool,
    pause: Option<&'a Pause>,
    plan: plan::PlanInfo,
    events: &'a [crate::roll::checkpoint::Event],
}

pub(super) fn status_command(args: &StatusArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let path = match (&args.checkpoint, &args.env) {
        (Some(path), _) => path.clone(),
        (None, Some(env)) => {
            let env = environment_from(env, &[])?;
            Checkpoint::default_path(&env.checkpoint_dir, &env.asg)
        }
        (None, None) => {
            return Err(CliError::BadFlag(
                "give --env ENV.toml or --checkpoint PATH".to_string(),
            ));
        }
    };
    let Some(checkpoint) = Checkpoint::load(&path).map_err(CliError::Checkpoint)? else {
        return Err(CliError::BadFlag(format!(
            "no checkpoint at {}: no roll in progress there",
            path.display()
        )));
    };
    let locked = RunLock::is_held(&path);
    if args.json {
        let events = &checkpoint.events[checkpoint.events.len().saturating_sub(20)..];
        let status = Status {
            run_id: &checkpoint.run_id,
            asg: &checkpoint.asg,
            target: checkpoint.target,
            locked,
            pause: checkpoint.pause.as_ref(),
            plan: plan::info(&checkpoint.plan),
            events,
        };
        let mut json = serde_json::to_string_pretty(&status).unwrap_or_default();
        json.push('\n');
        out.write_all(json.as_bytes())?;
        return Ok(());
    }
    writeln!(
        out,
        "run {} of ASG {} to {} agents ({}): {}",
        checkpoint.run_id,
        checkpoint.asg,
        checkpoint.target,
        path.display(),
        if locked {
            "a run holds the lock now"
        } else {
            "no run holds the lock"
        }
    )?;
    if let Some(pause) = &checkpoint.pause {
        writeln!(
            out,
            "PAUSED at {} since {}: {}",
            pause.step, pause.since, pause.reason
        )?;
    }
    out.write_all(plan::tree(&checkpoint.plan).as_bytes())?;
    for event in checkpoint.events.iter().rev().take(5).rev() {
        writeln!(out, "{} {}: {}", event.at, event.kind, event.message)?;
    }
    Ok(())
}

/// `roller abandon --run-id ID`: undoes what a roll's bookkeeping holds on
/// the cluster, never its capacity. Removes the `roller:run-id` tag only
/// if it carries that id; with that run's checkpoint, resumes exactly what
/// it suspended, restores a MaxSize it raised and removes its maintenance
/// windows, then archives the checkpoint as `.abandoned.json`.
pub(super) fn abandon_command(
    args: &super::AbandonArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    use crate::roll::ports::auto_scaling::{AutoScaling, ScalingProcess};
    use crate::roll::ports::mesos::{MachineId, MesosMaster};
    use crate::roll::runner::RUN_ID_TAG;

    let env = environment_from(&args.env, &[])?;
    let path = checkpoint_path(&args.checkpoint, &env);
    let _lock = RunLock::acquire(&path).map_err(|e| CliError::Run(e.into()))?;
    let checkpoint = Checkpoint::load(&path)
        .map_err(CliError::Checkpoint)?
        .filter(|c| c.run_id == args.run_id);
    let runtime = runtime()?;
    runtime.block_on(async {
        let clients = clients(&env).await?;
        let aws_error = |e: crate::aws::AwsError| CliError::Adapter(format!("AWS: {e}"));
        let group = clients
            .aws
            .describe_group(&env.asg)
            .await
            .map_err(aws_error)?;
        match group.tag(RUN_ID_TAG) {
            Some(id) if id == args.run_id => {}
            Some(other) => {
                return Err(CliError::BadFlag(format!(
                    "ASG {} is tagged by run {other}, not {}: nothing done",
                    env.asg, args.run_id
                )));
            }
            None => {
                return Err(CliError::BadFlag(format!(
                    "ASG {} carries no {RUN_ID_TAG} tag: nothing to abandon",
                    env.asg
                )));
            }
        }
        match &checkpoint {
            Some(c) => {
                let processes: Vec<ScalingProcess> = c
                    .suspended_by_roll
                    .iter()
                    .map(|p| ScalingProcess::parse(p))
                    .collect();
                if !processes.is_empty() {
                    clients
                        .aws
                        .resume_processes(&env.asg, &processes)
                        .await
                        .map_err(aws_error)?;
                    writeln!(out, "resumed {}", c.suspended_by_roll.join(", "))?;
                }
                if let Some(max) = c.raised_max_from {
                    clients
                        .aws
                        .update_size_limits(
                            &env.asg,
                            c.original.min_size,
                            max.max(group.desired_capacity),
                        )
                        .await
                        .map_err(aws_error)?;
                    writeln!(out, "MaxSize restored toward {max}")?;
                }
                let machines: Vec<MachineId> = c
                    .maintenance
                    .iter()
                    .map(crate::roll::checkpoint::MaintenanceRecord::machine_id)
                    .collect();
                if !machines.is_empty() {
                    clients
                        .mesos
                        .cancel_maintenance(&machines)
                        .await
                        .map_err(|e| CliError::Adapter(format!("Mesos: {e}")))?;
                    writeln!(out, "removed {} maintenance window(s)", machines.len())?;
                }
            }
            None => writeln!(
                out,
                "no checkpoint of run {} at {}: what it suspended is unknown; suspended now: {} \
                 (resume by hand what the run had suspended)",
                args.run_id,
                path.display(),
                group
                    .suspended_processes
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )?,
        }
        clients
            .aws
            .delete_tags(&env.asg, &[RUN_ID_TAG.to_string()])
            .await
            .map_err(aws_error)?;
        writeln!(out, "removed tag {RUN_ID_TAG}={}", args.run_id)?;
        if checkpoint.is_some() {
            let to = path.with_extension(format!("{}.abandoned.json", args.run_id));
            std::fs::rename(&path, &to).map_err(|source| {
                CliError::Checkpoint(crate::roll::checkpoint::CheckpointError::Write {
                    path: to.clone(),
                    source,
                })
            })?;
            writeln!(out, "checkpoint archived as {}", to.display())?;
        }
        writeln!(
            out,
            "desired capacity left at {} (abandon never changes capacity)",
            group.desired_capacity
        )?;
        Ok(())
    })
}
