//! `roller status`: a roll's checkpoint as the operator needs it (the plan
//! tree, a pause, whether a run holds its lock, the latest events), read
//! without writing anything.

use std::io::Write;

use serde::Serialize;

use super::StatusArgs;
use super::error::CliError;
use super::wiring::environment_from;
use crate::plan;
use crate::roll::checkpoint::{Checkpoint, Event, Pause, RunLock};

#[derive(Serialize)]
struct Status<'a> {
    run_id: &'a str,
    asg: &'a str,
    target: u32,
    locked: bool,
    pause: Option<&'a Pause>,
    plan: plan::PlanInfo,
    events: &'a [Event],
}

pub(super) fn run(args: &StatusArgs, out: &mut dyn Write) -> Result<(), CliError> {
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
