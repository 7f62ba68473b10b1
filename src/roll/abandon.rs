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

/// The groups of `checkpoint` an abandon undoes: those carrying the
/// run's tag (a group the roll had not locked yet was not changed). A
/// group tagged by another run refuses the abandon before anything is
/// done.
pub async fn tagged_groups<A: AutoScaling>(
    aws: &A,
    checkpoint: &Checkpoint,
) -> Result<Vec<usize>, RollError> {
    let mut tagged = Vec::new();
    for (index, group) in checkpoint.groups.iter().enumerate() {
        let found = aws.describe_group(&group.asg).await?;
        match found.tag(RUN_ID_TAG) {
            Some(id) if id == checkpoint.run_id => tagged.push(index),
            Some(other) => {
                return Err(RollError::refused(format!(
                    "ASG {} is tagged by run {other}, not {}: nothing done",
                    group.asg, checkpoint.run_id
                )));
            }
            None => {}
        }
    }
    Ok(tagged)
}

/// What an abandon of `checkpoint` would do, without doing it, for the
/// groups at `groups` (those carrying the run's tag), each named when the
/// roll has more than one.
pub fn plan_of(checkpoint: &Checkpoint, groups: &[usize]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut view = checkpoint.clone();
    for &index in groups {
        view.focus_group(index);
        let named = if checkpoint.groups.len() > 1 {
            format!("{}: ", view.asg)
        } else {
            String::new()
        };
        lines.extend(group_plan(&view).into_iter().map(|l| format!("{named}{l}")));
    }
    if checkpoint.pause.as_ref().is_some_and(|p| p.paged) || checkpoint.open_page.is_some() {
        lines.push("resolve the roll's open page".to_string());
    }
    lines
}

/// What an abandon would do on the focused group of `checkpoint`.
fn group_plan(checkpoint: &Checkpoint) -> Vec<String> {
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
    lines.push(format!(
        "remove tag {RUN_ID_TAG}={} from {}",
        checkpoint.run_id, checkpoint.asg
    ));
    lines
}

/// Runs the finish steps that undo the roll's bookkeeping on each group
/// at `groups` (those carrying the run's tag: the caller has checked),
/// then resolves its page.
pub async fn abandon<P: Ports>(
    mut runner: Runner<'_, P>,
    groups: &[usize],
) -> Result<(Abandoned, Checkpoint), AbandonError> {
    let mut done = Vec::new();
    for &index in groups {
        runner.focus_group(index);
        undo_group(&mut runner, &mut done).await?;
    }
    match runner.resolve_page().await {
        Ok(Some(line)) => done.push(line),
        Ok(None) => {}
        Err(error) => return Err(AbandonError::Partial { done, error }),
    }
    Ok((Abandoned { lines: done }, runner.into_checkpoint()))
}

/// The surges set back and the finish steps run on the focused group;
/// what each did is added to `done`.
async fn undo_group<P: Ports>(
    runner: &mut Runner<'_, P>,
    done: &mut Vec<String>,
) -> Result<(), AbandonError> {
    let partial = |done: &mut Vec<String>, error| {
        if done.is_empty() {
            AbandonError::Refused(error)
        } else {
            AbandonError::Partial {
                done: std::mem::take(done),
                error,
            }
        }
    };
    match runner.undo_surges().await {
        Ok(Some(line)) => done.push(line),
        Ok(None) => {}
        Err(error) => return Err(partial(done, error)),
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
            Err(error) => return Err(partial(done, error)),
        }
    }
    Ok(())
}
