//! `roller abandon --run-id ID`: gives up a roll whose checkpoint is lost
//! or unwanted, undoing what its bookkeeping holds on the cluster (the
//! run-id tag, suspended processes, a raised MaxSize, maintenance windows,
//! an open page) with the roll's own finish steps, and never its capacity.
//! `--dry-run` says what it would do and does nothing.

use std::io::Write;
use std::path::Path;

use super::AbandonArgs;
use super::error::CliError;
use super::wiring::{Clients, checkpoint_path, clients, environment_from, runtime};
use crate::roll::abandon::{self as roll_abandon, AbandonError, check_tag, plan_of, tagged_groups};
use crate::roll::engine::{RunOptions, Runner};
use crate::roll::error::RollError;
use crate::roll::ports::auto_scaling::AutoScaling;
use crate::roll::record::checkpoint::{Checkpoint, CheckpointError, CheckpointStore, RunLock};
use crate::roll::record::kinds::GroupIndex;
use crate::roll::record::{LOCK_STATE_TAG, RUN_ID_TAG};

/// `roller abandon`; with `--json` the same lines sorted into one object:
/// `done` (each change made), `not_undone` (what it could not undo),
/// `would` (what a dry run would do), `notes`, and `error` when it could
/// not undo everything (exit 4).
pub(super) fn run(args: &AbandonArgs, out: &mut dyn Write) -> Result<(), CliError> {
    if !args.json {
        return abandon(args, out);
    }
    let mut text = Vec::new();
    let result = abandon(args, &mut text);
    let text = String::from_utf8_lossy(&text);
    let (mut done, mut would, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    let mut not_undone = Vec::new();
    for line in text.lines() {
        if let Some(change) = line.strip_prefix("done: ") {
            done.push(change);
        } else if let Some(left) = line.strip_prefix("not undone: ") {
            not_undone.push(left);
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
        "not_undone": not_undone,
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
            .check_group(&path, env.asg())
            .map_err(CliError::Checkpoint)?;
    }
    let checkpoint = loaded.filter(|c| c.run_id == args.run_id);
    let runtime = runtime()?;
    runtime.block_on(async {
        let clients = clients(&env).await?;
        let Some(checkpoint) = checkpoint else {
            return without_checkpoint(args, &env, &path, &clients, out).await;
        };
        let groups = tagged(args, &clients, &checkpoint).await?;
        let desired = desired_capacities(&clients, &checkpoint, &groups).await?;
        if args.dry_run {
            writeln!(out, "dry run: abandoning run {} would:", args.run_id)?;
            for line in plan_of(&checkpoint, &groups) {
                writeln!(out, "  {line}")?;
            }
            writeln!(out, "  archive {} as .abandoned.json", path.display())?;
            writeln!(out, "  leave the desired capacity at {desired}")?;
            return Ok(());
        }
        let (_stop_tx, stop) = tokio::sync::watch::channel(false);
        let runner = Runner::new(
            clients.ports(),
            &env,
            RunOptions::default(),
            checkpoint,
            CheckpointStore::file(path.clone()),
            stop,
            Box::new(|_: &Checkpoint| {}),
        )
        .map_err(refused)?;
        let lines = match roll_abandon::abandon(runner, &groups).await {
            Ok((abandoned, _)) => abandoned.lines,
            Err(AbandonError::Refused(error)) => return Err(refused(error)),
            Err(AbandonError::Partial { done, failed }) => {
                return partly_done(args, &path, &done, &failed, out);
            }
        };
        for line in lines {
            writeln!(out, "done: {line}")?;
        }
        archive(args, &path, out)?;
        writeln!(
            out,
            "desired capacity left at {desired} (abandon never changes capacity)"
        )?;
        Ok(())
    })
}

/// A refusal of the roll's (nothing was changed).
fn refused(error: RollError) -> CliError {
    CliError::Run(error.into())
}

/// Every group of the roll carrying its tag; a group tagged by another
/// run, or none tagged at all, refuses the abandon before anything is
/// done.
async fn tagged(
    args: &AbandonArgs,
    clients: &Clients,
    checkpoint: &Checkpoint,
) -> Result<Vec<GroupIndex>, CliError> {
    let groups = tagged_groups(&clients.aws, checkpoint)
        .await
        .map_err(refused)?;
    if groups.is_empty() {
        return Err(refused(RollError::refused(format!(
            "no group of run {} ({}) carries tag {RUN_ID_TAG}={}: nothing to abandon",
            args.run_id,
            checkpoint.group_names().join(", "),
            args.run_id
        ))));
    }
    Ok(groups)
}

/// The desired capacity of each of `groups` now, as the output says it
/// (named by group when there are several).
async fn desired_capacities(
    clients: &Clients,
    checkpoint: &Checkpoint,
    groups: &[GroupIndex],
) -> Result<String, CliError> {
    let mut desired = Vec::new();
    for &g in groups {
        let asg = &checkpoint.group(g).asg;
        let found = clients
            .aws
            .describe_group(asg)
            .await
            .map_err(|e| refused(e.into()))?;
        desired.push(if groups.len() > 1 {
            format!("{asg} {}", found.desired_capacity)
        } else {
            found.desired_capacity.to_string()
        });
    }
    Ok(desired.join(", "))
}

/// An abandon that could not undo everything: what it did, what it could
/// not, and the checkpoint kept for a second try (exit 4).
fn partly_done(
    args: &AbandonArgs,
    path: &Path,
    done: &[String],
    failed: &[String],
    out: &mut dyn Write,
) -> Result<(), CliError> {
    for line in done {
        writeln!(out, "done: {line}")?;
    }
    for line in failed {
        writeln!(out, "not undone: {line}")?;
    }
    writeln!(
        out,
        "checkpoint kept at {}: undo the above by hand, or run roller abandon again \
         while a group still carries tag {RUN_ID_TAG}={}",
        path.display(),
        args.run_id
    )?;
    Err(CliError::AbandonPartial {
        error: failed.join("; "),
    })
}

/// The abandoned roll's checkpoint set aside as `.abandoned.json`.
fn archive(args: &AbandonArgs, path: &Path, out: &mut dyn Write) -> Result<(), CliError> {
    if !path.exists() {
        return Ok(());
    }
    let to = path.with_extension(format!("{}.abandoned.json", args.run_id));
    std::fs::rename(path, &to).map_err(|source| {
        CliError::Checkpoint(CheckpointError::Write {
            path: to.clone(),
            source,
        })
    })?;
    writeln!(out, "done: checkpoint archived as {}", to.display())?;
    Ok(())
}

/// An abandon with no checkpoint of the run: what its bookkeeping held is
/// unknown, so only its tags come off (from every group of the
/// environment carrying them), and what is suspended now is said.
async fn without_checkpoint(
    args: &AbandonArgs,
    env: &crate::roll::record::env::Environment,
    path: &Path,
    clients: &Clients,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut tagged = Vec::new();
    let mut refusal = None;
    for spec in &env.groups {
        match check_tag(&clients.aws, &spec.asg, &args.run_id).await {
            Ok(group) => tagged.push(group),
            Err(err) => {
                refusal.get_or_insert(err);
            }
        }
    }
    if tagged.is_empty() {
        return Err(refused(refusal.unwrap_or_else(|| {
            RollError::refused("the environment lists no group".to_string())
        })));
    }
    for group in &tagged {
        let suspended = group
            .suspended_processes
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if args.dry_run {
            writeln!(
                out,
                "dry run: no checkpoint of run {} at {}: abandoning would only remove tag \
                 {RUN_ID_TAG}={} from {}",
                args.run_id,
                path.display(),
                args.run_id,
                group.name
            )?;
            continue;
        }
        writeln!(
            out,
            "no checkpoint of run {} at {}: what it suspended on {} is unknown; suspended now: {} \
             (resume by hand what the run had suspended)",
            args.run_id,
            path.display(),
            group.name,
            suspended
        )?;
        clients
            .aws
            .delete_tags(
                &group.name,
                &[RUN_ID_TAG.to_string(), LOCK_STATE_TAG.to_string()],
            )
            .await
            .map_err(|e| CliError::Adapter(format!("AWS: {e}")))?;
        writeln!(
            out,
            "done: removed tag {RUN_ID_TAG}={} from {}",
            args.run_id, group.name
        )?;
        writeln!(
            out,
            "desired capacity of {} left at {} (abandon never changes capacity)",
            group.name, group.desired_capacity
        )?;
    }
    Ok(())
}
