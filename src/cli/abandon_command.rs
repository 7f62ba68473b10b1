//! `roller abandon --run-id ID`: gives up a roll whose checkpoint is lost
//! or unwanted, undoing what its bookkeeping holds on the cluster (the
//! run-id tag, suspended processes, a raised MaxSize, maintenance windows,
//! an open page) with the roll's own finish steps, and never its capacity.
//! `--dry-run` says what it would do and does nothing.

use std::io::Write;

use super::AbandonArgs;
use super::error::CliError;
use super::wiring::{checkpoint_path, clients, environment_from, runtime};
use crate::roll::abandon::{self as roll_abandon, AbandonError, check_tag, plan_of, tagged_groups};
use crate::roll::engine::{RunOptions, Runner};
use crate::roll::ports::auto_scaling::AutoScaling;
use crate::roll::record::RUN_ID_TAG;
use crate::roll::record::checkpoint::{Checkpoint, CheckpointError, CheckpointStore, RunLock};

/// `roller abandon`; with `--json` the same lines sorted into one object:
/// `done` (each change made), `would` (what a dry run would do), `notes`,
/// and `error` when it stopped part-way (exit 4).
pub(super) fn run(args: &AbandonArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if !args.json {
        return abandon(args, out);
    }
    let mut text = Vec::new();
    let result = abandon(args, &mut text);
    let text = String::from_utf8_lossy(&text);
    let (mut done, mut would, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for line in text.lines() {
        if let Some(change) = line.strip_prefix("done: ") {
            done.push(change);
        } else if let Some(step) = line.strip_prefix("  ") {
            would.push(step);
        } else {
            notes.push(line);
        }
    }
    let mut report = serde_json::json!({
        "run_id": args.run_id,
        "dry_run": args.dry_run,
        "done": done,
        "would": would,
        "notes": notes,
    });
    match &result {
        Ok(()) => {}
        // Part-way: what was done, and why it stopped, in one object.
        Err(err @ CliError::AbandonPartial { .. }) => {
            report["error"] = err.to_json()["error"].clone();
        }
        // Refused before anything changed: `cli::run` prints the error.
        Err(_) => return result,
    }
    writeln!(out, "{report}")?;
    result
}

fn abandon(args: &AbandonArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let env = environment_from(&args.env, &[])?;
    let path = checkpoint_path(&args.checkpoint, &env, "abandon")?;
    let _lock = if args.dry_run {
        None
    } else {
        Some(RunLock::acquire(&path).map_err(|e| CliError::Run(e.into()))?)
    };
    let loaded = Checkpoint::load(&path).map_err(CliError::Checkpoint)?;
    if let Some(found) = &loaded {
        found
            .check_group(&path, &env.asg)
            .map_err(CliError::Checkpoint)?;
    }
    let checkpoint = loaded.filter(|c| c.run_id == args.run_id);
    let refused = |e: crate::roll::error::RollError| CliError::Run(e.into());
    let runtime = runtime()?;
    runtime.block_on(async {
        let clients = clients(&env).await?;
        let group = check_tag(&clients.aws, &env.asg, &args.run_id)
            .await
            .map_err(refused)?;
        let desired = group.desired_capacity;
        let lines = match (checkpoint, args.dry_run) {
            (Some(c), true) => {
                let groups = tagged_groups(&clients.aws, &c).await.map_err(refused)?;
                writeln!(out, "dry run: abandoning run {} would:", args.run_id)?;
                for line in plan_of(&c, &groups) {
                    writeln!(out, "  {line}")?;
                }
                writeln!(out, "  archive {} as .abandoned.json", path.display())?;
                writeln!(out, "  leave the desired capacity at {desired}")?;
                return Ok(());
            }
            (None, true) => {
                writeln!(
                    out,
                    "dry run: no checkpoint of run {} at {}: abandoning would only remove tag {RUN_ID_TAG}={}",
                    args.run_id,
                    path.display(),
                    args.run_id
                )?;
                return Ok(());
            }
            (Some(c), false) => {
                let groups = tagged_groups(&clients.aws, &c).await.map_err(refused)?;
                let (_stop_tx, stop) = tokio::sync::watch::channel(false);
                let runner = Runner::new(
                    clients.ports(),
                    &env,
                    RunOptions::default(),
                    c,
                    CheckpointStore::file(path.clone()),
                    stop,
                    Box::new(|_: &Checkpoint| {}),
                )
                .map_err(refused)?;
                match roll_abandon::abandon(runner, &groups).await {
                    Ok((abandoned, _)) => abandoned.lines,
                    Err(AbandonError::Refused(error)) => return Err(refused(error)),
                    Err(AbandonError::Partial { done, error }) => {
                        for line in &done {
                            writeln!(out, "done: {line}")?;
                        }
                        return Err(CliError::AbandonPartial {
                            error: error.to_string(),
                        });
                    }
                }
            }
            (None, false) => {
                let suspended = &group.suspended_processes;
                writeln!(
                    out,
                    "no checkpoint of run {} at {}: what it suspended is unknown; suspended now: {} \
                     (resume by hand what the run had suspended)",
                    args.run_id,
                    path.display(),
                    suspended
                        .iter()
                        .map(|p| p.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )?;
                clients
                    .aws
                    .delete_tags(&env.asg, &[RUN_ID_TAG.to_string()])
                    .await
                    .map_err(|e| CliError::Adapter(format!("AWS: {e}")))?;
                vec![format!("removed tag {RUN_ID_TAG}={}", args.run_id)]
            }
        };
        for line in lines {
            writeln!(out, "done: {line}")?;
        }
        if path.exists() {
            let to = path.with_extension(format!("{}.abandoned.json", args.run_id));
            std::fs::rename(&path, &to).map_err(|source| {
                CliError::Checkpoint(CheckpointError::Write {
                    path: to.clone(),
                    source,
                })
            })?;
            writeln!(out, "done: checkpoint archived as {}", to.display())?;
        }
        writeln!(
            out,
            "desired capacity left at {desired} (abandon never changes capacity)"
        )?;
        Ok(())
    })
}
