//! `roller abandon`: undoes what a roll's bookkeeping holds on the
//! cluster, with the very finish steps a completed roll runs (resume what
//! it suspended, restore MaxSize, remove its maintenance windows, remove
//! its tag), on every group of the roll that carries the run's tag, sets
//! its surged apps back, completes roller's lifecycle hooks for the
//! instances it terminated (no roller will be back to), and resolves its
//! page. Never its capacity: the instances it launched or terminated stay
//! as they are.
//!
//! Nothing is written before each group's `roller:run-id` tag is known to
//! carry the run's id (another run's tag refuses the abandon). A step that
//! fails does not stop the others: what could not be undone is said at the
//! end (exit 4), and since each step is idempotent, the abandon can simply
//! be run again once the cause is fixed.

use super::engine::Runner;
use super::engine::steps::Tick;
use super::error::RollError;
use super::ports::Ports;
use super::ports::auto_scaling::{AutoScaling, AutoScalingGroup};
use super::record::RUN_ID_TAG;
use super::record::checkpoint::{Checkpoint, GroupRoll};
use super::record::kinds::{GroupIndex, GroupStep, StepKind};

/// What an abandon did, or (dry run) would do, one line each.
#[derive(Debug, Default)]
pub(crate) struct Abandoned {
    pub(crate) lines: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum AbandonError {
    /// Nothing was changed.
    #[error("{0}")]
    Refused(RollError),
    /// It changed what `done` lists, and could not undo what `failed`
    /// lists (each with why, and what to do by hand where that helps).
    #[error("abandon could not undo everything: {}", failed.join("; "))]
    Partial {
        done: Vec<String>,
        failed: Vec<String>,
    },
}

/// The tag must carry `run_id` before anything is touched; returns the
/// group as read for that check.
pub(crate) async fn check_tag<A: AutoScaling>(
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
pub(crate) async fn tagged_groups<A: AutoScaling>(
    aws: &A,
    checkpoint: &Checkpoint,
) -> Result<Vec<GroupIndex>, RollError> {
    let mut tagged = Vec::new();
    for (index, group) in checkpoint.indexed_groups() {
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
pub(crate) fn plan_of(checkpoint: &Checkpoint, groups: &[GroupIndex]) -> Vec<String> {
    let mut lines = Vec::new();
    for &index in groups {
        let group = checkpoint.group(index);
        let named = if checkpoint.groups.len() > 1 {
            format!("{}: ", group.asg)
        } else {
            String::new()
        };
        let deactivated = group
            .instances
            .iter()
            .filter(|i| !i.terminate_sent)
            .filter(|i| {
                checkpoint.services.deactivated.contains(&i.agent_id) || i.other_tasks.drain_sent
            })
            .count();
        if deactivated > 0 {
            lines.push(format!(
                "{named}reactivate the old agents the roll deactivated or drained that Mesos \
                 still lists deactivated (up to {deactivated}; REACTIVATE_AGENT)"
            ));
        }
        lines.extend(
            group_plan(group, &checkpoint.run_id)
                .into_iter()
                .map(|l| format!("{named}{l}")),
        );
    }
    if checkpoint.pause.as_ref().is_some_and(|p| p.paged) || checkpoint.open_page.is_some() {
        lines.push("resolve the roll's open page".to_string());
    }
    lines
}

/// What an abandon of the run `run_id` would do on `checkpoint`, one
/// group's record.
fn group_plan(checkpoint: &GroupRoll, run_id: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let surged: Vec<String> = checkpoint
        .open_surges()
        .map(|s| format!("{} -> {}", s.app, s.instances))
        .collect();
    if !surged.is_empty() {
        lines.push(format!(
            "scale {} surged app(s) back: {}",
            surged.len(),
            surged.join(", ")
        ));
    }
    if checkpoint.instances.iter().any(|i| i.terminate_sent) || !checkpoint.new_agents.is_empty() {
        lines.push(
            "complete roller's termination hooks (complete_lifecycle_hooks) for the instances the roll terminated that one still holds in Terminating:Wait; say any other instance held by a hook".to_string(),
        );
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
        "remove tag {RUN_ID_TAG}={run_id} from {}",
        checkpoint.asg
    ));
    lines
}

/// Runs the finish steps that undo the roll's bookkeeping on each group
/// at `groups` (those carrying the run's tag: the caller has checked),
/// then resolves its page. A step that fails does not stop the others:
/// every group gets every undo it can, and what could not be undone is
/// said at the end (`AbandonError::Partial`; `Refused` when nothing at
/// all could be done).
pub(crate) async fn abandon<P: Ports>(
    mut runner: Runner<'_, P>,
    groups: &[GroupIndex],
) -> Result<(Abandoned, Checkpoint), AbandonError> {
    let mut report = Report::default();
    for &index in groups {
        undo_group(&mut runner, index, &mut report).await;
    }
    match runner.resolve_page().await {
        Ok(Some(line)) => report.done.push(line),
        Ok(None) => {}
        Err(error) => report.failed("resolve the roll's page", error),
    }
    let checkpoint = runner.into_checkpoint();
    match report {
        Report {
            done,
            failed,
            first: None,
        } if failed.is_empty() => Ok((Abandoned { lines: done }, checkpoint)),
        Report {
            done,
            first: Some(error),
            ..
        } if done.is_empty() => Err(AbandonError::Refused(error)),
        Report { done, failed, .. } => Err(AbandonError::Partial { done, failed }),
    }
}

/// What an abandon did and could not do, as it goes.
#[derive(Default)]
struct Report {
    done: Vec<String>,
    failed: Vec<String>,
    /// The first error, for an abandon that could do nothing at all.
    first: Option<RollError>,
}

impl Report {
    fn failed(&mut self, what: &str, error: RollError) {
        self.failed.push(format!("{what}: {error}"));
        self.first.get_or_insert(error);
    }
}

/// The surges set back and the finish steps run on the group `group`,
/// each whatever the one before came to; what each did or could not do
/// goes to `report`.
async fn undo_group<P: Ports>(runner: &mut Runner<'_, P>, group: GroupIndex, report: &mut Report) {
    let named = runner.group_label(group);
    match runner.undo_surges(group).await {
        Ok(undone) => {
            report.done.extend(undone.done);
            report.failed.extend(
                undone
                    .failed
                    .into_iter()
                    .map(|line| format!("{named}{line}")),
            );
        }
        Err(error) => report.failed(&format!("{named}set the surged apps back"), error),
    }
    match runner.release_hooks(group).await {
        Ok(lines) => report
            .done
            .extend(lines.into_iter().map(|l| format!("{named}{l}"))),
        Err(error) => report.failed(
            &format!("{named}complete roller's lifecycle hooks for the instances it terminated"),
            error,
        ),
    }
    match runner.reactivate_old_agents(group).await {
        Ok(0) => {}
        Ok(n) => report.done.push(format!(
            "{named}reactivated {n} old agent(s) the roll had deactivated or drained \
             (REACTIVATE_AGENT): Mesos offers them again"
        )),
        Err(error) => report.failed(
            &format!("{named}reactivate the old agents the roll deactivated or drained"),
            error,
        ),
    }
    for (kind, what) in [
        (
            StepKind::ResumeProcesses,
            "resume the processes the roll suspended",
        ),
        (StepKind::RestoreMaxSize, "restore MaxSize"),
        (
            StepKind::EndMaintenance,
            "bring the roll's machines up and remove its maintenance windows",
        ),
        (StepKind::Unlock, "remove the run's tag"),
    ] {
        match runner.tick_alone(&GroupStep::new(group, kind)).await {
            Ok(Tick::Done(line)) => report.done.push(format!("{named}{line}")),
            Ok(Tick::Waiting(wait)) => report.done.push(format!("{named}{}", wait.message)),
            Ok(Tick::NotYet(why)) => report.done.push(format!("{named}{why}")),
            // The finish steps find no failures; one would only be said.
            Ok(Tick::Failed(found)) => report.done.push(found.sentence()),
            Ok(Tick::Refused(why) | Tick::Pause(why)) => report.done.push(format!("{named}{why}")),
            Err(error) => report.failed(&format!("{named}{what}"), error),
        }
    }
}
