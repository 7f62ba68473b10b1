//! `roller abandon`: undoes what a roll's bookkeeping holds on the
//! cluster, with the very finish steps a completed roll runs (resume what
//! it suspended, restore MaxSize, remove its maintenance windows, remove
//! its tag), and resolves its page. Never its capacity: the instances it
//! launched or terminated stay as they are.
//!
//! Nothing is written before the group's `roller:run-id` tag is known to
//! carry the run's id. Each step is idempotent, so an abandon that stopped
//! half-way (exit 4) can simply be run again.

use super::engine::Runner;
use super::engine::steps::Tick;
use super::error::RollError;
use super::ports::Ports;
use super::ports::auto_scaling::{AutoScaling, AutoScalingGroup};
use super::record::RUN_ID_TAG;
use super::record::checkpoint::{Checkpoint, SurgeState};
use super::record::kinds::StepKind;

/// What an abandon did, or (dry run) would do, one line each.
#[derive(Debug, Default)]
pub struct Abandoned {
    pub lines: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum AbandonError {
    /// Nothing was changed.
    #[error("{0}")]
    Refused(RollError),
    /// It stopped after changing what `done` lists.
    #[error("abandon stopped after it had changed something: {error}")]
    Partial { done: Vec<String>, error: RollError },
}

/// The tag must carry `run_id` before anything is touched; returns the
/// group as read for that check.
pub async fn check_tag<A: AutoScaling>(
    aws: &A,
    asg: &str,
    run_id: &str,
) -> Result<AutoScalingGroup, RollError> {
    let group = aws.describe_group(asg).await?;
    match group.tag(RUN_ID_TAG) {
        Some(id) if id == run_id => Ok(group),
        Some(other) => Err(RollError::refused(format!(
            "ASG {asg} is tagged by run {other}, not {run_id}: nothing done"
        ))),
        None => Err(RollError::refused(format!(
            "ASG {asg} carries no {RUN_ID_TAG} tag: nothing to abandon"
        ))),
    }
}

/// What an abandon of `checkpoint` would do, without doing it.
pub fn plan_of(checkpoint: &Checkpoint) -> Vec<String> {
    let mut lines = Vec::new();
    let surged: Vec<String> = checkpoint
        .surges
        .iter()
        .filter(|s| s.state != SurgeState::Done)
        .map(|s| format!("{} -> {}", s.app, s.instances))
        .collect();
    if !surged.is_empty() {
        lines.push(format!(
            "scale {} surged app(s) back: {}",
            surged.len(),
            surged.join(", ")
        ));
    }
    if !checkpoint.suspended_by_roll.is_empty() {
        lines.push(format!(
            "resume {} (AZRebalance stays suspended if the AZs are uneven, as at the end of a roll)",
            checkpoint.suspended_by_roll.join(", ")
        ));
    }
    if let Some(max) = checkpoint.raised_max_from {
        lines.push(format!(
            "restore MaxSize to {max} (or to the desired capacity, if that is higher)"
        ));
    }
    if !checkpoint.maintenance.is_empty() {
        lines.push(format!(
            "bring up the machines the roll put down, and remove {} maintenance window(s)",
            checkpoint.maintenance.len()
        ));
    }
    if checkpoint.pause.as_ref().is_some_and(|p| p.paged) || checkpoint.open_page.is_some() {
        lines.push("resolve the roll's open page".to_string());
    }
    lines.push(format!("remove tag {RUN_ID_TAG}={}", checkpoint.run_id));
    lines
}

/// Runs the finish steps that undo the roll's bookkeeping, then resolves
/// its page; the caller has checked the tag.
pub async fn abandon<P: Ports>(
    mut runner: Runner<'_, P>,
) -> Result<(Abandoned, Checkpoint), AbandonError> {
    let mut done = Vec::new();
    match runner.undo_surges().await {
        Ok(Some(line)) => done.push(line),
        Ok(None) => {}
        Err(error) => return Err(AbandonError::Refused(error)),
    }
    for kind in [
        StepKind::ResumeProcesses,
        StepKind::RestoreMaxSize,
        StepKind::EndMaintenance,
        StepKind::Unlock,
    ] {
        match runner.tick_alone(&kind).await {
            Ok(Tick::Done(line)) => done.push(line),
            Ok(Tick::Waiting(wait)) => done.push(wait.message),
            Ok(Tick::NotYet(why)) => done.push(why),
            // The finish steps find no failures; one would only be said.
            Ok(Tick::Failed(found)) => done.push(found.sentence()),
            Ok(Tick::Refused(why) | Tick::Pause(why)) => done.push(why),
            Err(error) if done.is_empty() => return Err(AbandonError::Refused(error)),
            Err(error) => return Err(AbandonError::Partial { done, error }),
        }
    }
    match runner.resolve_page().await {
        Ok(Some(line)) => done.push(line),
        Ok(None) => {}
        Err(error) => return Err(AbandonError::Partial { done, error }),
    }
    Ok((Abandoned { lines: done }, runner.into_checkpoint()))
}
