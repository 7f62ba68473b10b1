//! One `roller run`: takes the run lock, resumes the checkpoint or runs
//! preflight and writes the first one, runs the plan, and archives the
//! checkpoint once the plan is complete. Shared by the CLI and the demo.
//!
//! A resume is checked before anything is written: the checkpoint must be
//! for this group and this environment (region, endpoints, agent match),
//! and the group's `roller:run-id` tag must carry the checkpoint's run id
//! once the roll has tagged it (a missing or foreign tag means the roll
//! was abandoned or another run owns the group).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use tokio::sync::watch;

use super::decide::cluster_lock::{LockState, refusal};
use super::decide::safety::Floor;
use super::engine::clock::RollClock;
use super::engine::cluster_lock;
use super::engine::{Outcome, RunOptions, Runner};
use super::error::RollError;
use super::ports::Ports;
use super::ports::auto_scaling::AutoScaling;
use super::preflight::{self, Preflight, Request, preflight};
use super::record::RUN_ID_TAG;
use super::record::checkpoint::{
    Checkpoint, CheckpointStore, EventKind, RecordedEnvironment, RunLockError,
};
use super::record::env::Environment;
use super::record::kinds::StepKind;
use crate::plan::Status;

pub(crate) struct RunSettings {
    /// Where the checkpoint is kept (a file, or an object in S3).
    pub(crate) checkpoint: CheckpointStore,
    /// What the operator asked for: a fresh run takes it (defaults for
    /// what was not asked); a resume compares what was asked with what the
    /// roll was started with, and takes `--on-failure` and
    /// `--allow-unhealthy`.
    pub(crate) request: Request,
    pub(crate) options: RunOptions,
}

pub(crate) enum RunResult {
    NothingToDo(String),
    Finished {
        outcome: Outcome,
        checkpoint: Box<Checkpoint>,
        /// Where the checkpoint was archived when the plan completed (a
        /// path, or an object's URL).
        archived: Option<PathBuf>,
        notes: Vec<String>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Lock(#[from] RunLockError),
    #[error("{0}")]
    Roll(#[from] RollError),
}

impl RunError {
    pub(crate) fn label(&self) -> &'static str {
        match self {
            RunError::Lock(RunLockError::Held { .. }) => "lock_held",
            RunError::Lock(RunLockError::Io { .. }) => "lock_io",
            RunError::Roll(e) => e.label(),
        }
    }

    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            RunError::Lock(_) => super::error::exit_code::REFUSED,
            RunError::Roll(e) => e.exit_code(),
        }
    }
}

/// One `roller run`: under the run lock, the checkpoint resumed or a
/// fresh one made by the preflight, its plan run, and its record archived
/// once the roll has ended.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run<P: Ports>(
    ports: P,
    env: &Environment,
    settings: RunSettings,
    stop: watch::Receiver<bool>,
    mut observer: Box<dyn FnMut(&Checkpoint) + Send + '_>,
) -> Result<RunResult, RunError> {
    let mut settings = settings;
    settings.checkpoint.lock()?;
    let path = settings.checkpoint.location().to_path_buf();
    let (checkpoint, notes) = match settings.checkpoint.load().await.map_err(RollError::from)? {
        Some(existing) => resume(ports, env, &mut settings, existing, &path).await?,
        None if settings.options.rollback_ordered => {
            return Err(RollError::refused(format!(
                "no roll in progress at {}: nothing to roll back (a roll that ended, or was rolled \
                 back, archived its checkpoint beside it)",
                path.display()
            ))
            .into());
        }
        None => match start(ports, env, &mut settings, &path).await? {
            Preflight::NothingToDo(message) => return Ok(RunResult::NothingToDo(message)),
            Preflight::Ready(checkpoint, notes) => (*checkpoint, notes),
        },
    };
    // The observer sees the roll as it is taken up (a fresh one, or how
    // far a resumed one had come) before the runner's first write.
    observer(&checkpoint);
    let runner = Runner::new(
        ports,
        env,
        settings.options,
        checkpoint,
        settings.checkpoint,
        stop,
        observer,
    )?;
    let (outcome, checkpoint, mut store) = runner.run_keeping_store().await?;
    let archived = archive(&mut store, &outcome, &checkpoint).await?;
    Ok(RunResult::Finished {
        outcome,
        checkpoint: Box::new(checkpoint),
        archived,
        notes,
    })
}

/// The checkpoint found at `path`, checked to be this run's to resume
/// (nothing written before), with what the operator asked anew on resume
/// taken and saved; and the note that says so.
async fn resume<P: Ports>(
    ports: P,
    env: &Environment,
    settings: &mut RunSettings,
    mut existing: Checkpoint,
    path: &Path,
) -> Result<(Checkpoint, Vec<String>), RollError> {
    check_resume(&existing, path, env, settings)?;
    check_tag(ports, env, &existing).await?;
    let now = RollClock::new(env.time_scale).now();
    // Alarms a resume adds are checked as a fresh run's are.
    let added: Vec<String> = env
        .alarms
        .iter()
        .flatten()
        .filter(|name| !existing.alarms.contains(name))
        .cloned()
        .collect();
    preflight::check_alarms(ports.aws(), &added).await?;
    if take_resume_request(&mut existing, &settings.request, env, now) {
        settings.checkpoint.save(&existing).await?;
    }
    let note = format!("resuming run {} from {}", existing.run_id, path.display());
    Ok((existing, vec![note]))
}

/// What a resume may change of the roll: `--on-failure`, the failure
/// limit (`--failure-limit`, key `failure_limit`), the alarms watched
/// (`--alarm`, key `alarms`), and apps added with
/// `--allow-unhealthy`, each logged as the operator's. Answers whether the
/// checkpoint changed.
fn take_resume_request(
    existing: &mut Checkpoint,
    request: &Request,
    env: &Environment,
    now: SystemTime,
) -> bool {
    let failure_limit = env.failure_limit;
    let added: Vec<String> = request
        .allow_unhealthy
        .iter()
        .filter(|app| !existing.allow_unhealthy.contains(app))
        .cloned()
        .collect();
    let mut changed = !added.is_empty();
    if let Some(asked) = request
        .on_failure
        .filter(|asked| *asked != existing.on_failure)
    {
        existing.log(
            now,
            EventKind::Operator,
            format!(
                "--on-failure {} on resume (was {})",
                asked.as_str(),
                existing.on_failure.as_str()
            ),
        );
        existing.on_failure = asked;
        changed = true;
    }
    if let Some(limit) = failure_limit.filter(|limit| *limit != existing.failure_limit) {
        existing.log(
            now,
            EventKind::Operator,
            format!(
                "--failure-limit {limit} on resume (was {})",
                existing.failure_limit
            ),
        );
        existing.failure_limit = limit;
        changed = true;
    }
    if let Some(alarms) = env.alarms.as_ref().filter(|a| **a != existing.alarms) {
        let shown = |names: &[String]| {
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        };
        existing.log(
            now,
            EventKind::Operator,
            format!(
                "alarms {} on resume (was {})",
                shown(alarms),
                shown(&existing.alarms)
            ),
        );
        existing.alarms = alarms.clone();
        changed = true;
    }
    if !added.is_empty() {
        existing.log(
            now,
            EventKind::Operator,
            format!(
                "--allow-unhealthy on resume: {} may be unhealthy in every health wait",
                added.join(", ")
            ),
        );
        existing.allow_unhealthy.extend(added);
    }
    changed
}

/// A fresh run, no checkpoint being at `path`: refused without a target,
/// else the preflight, whose first checkpoint is saved before anything
/// else is done.
async fn start<P: Ports>(
    ports: P,
    env: &Environment,
    settings: &mut RunSettings,
    path: &Path,
) -> Result<Preflight, RollError> {
    // A cluster's [[group]] tables may carry every target.
    let file_targets = env.groups.iter().all(|g| g.target.is_some());
    if !settings.request.has_target() && !file_targets {
        return Err(RollError::refused(format!(
            "no checkpoint at {} to resume, and no --target for a new roll",
            path.display()
        )));
    }
    let run_id = uuid::Uuid::new_v4().to_string();
    let found = preflight(ports, env, &settings.request, run_id).await?;
    if let Preflight::Ready(checkpoint, _) = &found {
        settings.checkpoint.save(checkpoint).await?;
    }
    Ok(found)
}

/// Moves the checkpoint of a roll that ended aside, the record kept, so
/// the next run starts afresh; answers where it went. A plan still to
/// run (paused, held, stopped) keeps its checkpoint in place, to resume.
async fn archive(
    store: &mut CheckpointStore,
    outcome: &Outcome,
    checkpoint: &Checkpoint,
) -> Result<Option<PathBuf>, RollError> {
    Ok(match outcome {
        // A rolled-back plan is complete too: the group is as it was, and
        // the next run starts afresh.
        Outcome::Complete { .. } | Outcome::RolledBack { .. } => {
            Some(store.archive(checkpoint).await?)
        }
        // Held off by another run before changing anything: a rerun must
        // start afresh (its preflight would be stale), the record stays.
        Outcome::Refused { .. } => Some(store.archive_as(checkpoint, "refused").await?),
        _ => None,
    })
}

/// The runtime every roll runs on (`roller run`, `roller demo`): two
/// workers, the size of the machines it was measured on.
pub(crate) fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// A checkpoint is resumed only for the group, the environment and the
/// request it was made for.
fn check_resume(
    existing: &Checkpoint,
    path: &Path,
    env: &Environment,
    settings: &RunSettings,
) -> Result<(), RollError> {
    existing.check_group(path, env.asg())?;
    check_groups_listed(existing, path, env)?;
    check_environment(existing, path, env)?;
    let request = &settings.request;
    check_targets(existing, path, request)?;
    check_selection(existing, path, env, request)?;
    check_strategy(existing, path, request)?;
    check_floor(existing, path, request)
}

/// Every group the checkpoint rolls must still be one the environment
/// lists: a resume could not reach the others.
fn check_groups_listed(
    existing: &Checkpoint,
    path: &Path,
    env: &Environment,
) -> Result<(), RollError> {
    let listed: Vec<&str> = env.groups.iter().map(|g| g.asg.as_str()).collect();
    if let Some(gone) = existing
        .groups
        .iter()
        .find(|g| !listed.contains(&g.asg.as_str()))
    {
        return Err(RollError::refused(format!(
            "checkpoint {} rolls group {} too, which the environment no longer lists ({}): resume \
             with the environment it was made for, or finish/abandon that roll first",
            path.display(),
            gone.asg,
            listed.join(", ")
        )));
    }
    Ok(())
}

/// The environment must be the one the roll started in (region,
/// endpoints, agent match).
fn check_environment(
    existing: &Checkpoint,
    path: &Path,
    env: &Environment,
) -> Result<(), RollError> {
    let differences = existing
        .environment
        .differences(&RecordedEnvironment::of(env));
    if !differences.is_empty() {
        return Err(RollError::refused(format!(
            "checkpoint {} was made for another environment ({}): resume with the environment it \
             was made for, or finish/abandon that roll first",
            path.display(),
            differences.join("; ")
        )));
    }
    Ok(())
}

/// A target asked on resume (`--target NAME=N`, or `--target N` for one
/// group) must be the group's in the checkpoint.
fn check_targets(existing: &Checkpoint, path: &Path, request: &Request) -> Result<(), RollError> {
    for group in &existing.groups {
        let asked = match request.group_targets.get(&group.asg) {
            Some(n) => Some(*n),
            None if existing.groups.len() == 1 => request.target,
            None => None,
        };
        if let Some(asked) = asked.filter(|n| *n != group.target) {
            let named = if existing.groups.len() > 1 {
                format!(" of group {}", group.asg)
            } else {
                String::new()
            };
            return Err(RollError::refused(format!(
                "checkpoint {} is a roll to {} agents{named}; --target {asked} differs: resume without --target, or finish/abandon that roll first",
                path.display(),
                group.target,
            )));
        }
    }
    Ok(())
}

/// A `--select` asked on resume must be the selection of every group
/// it stands for: those without their own in the environment file.
fn check_selection(
    existing: &Checkpoint,
    path: &Path,
    env: &Environment,
    request: &Request,
) -> Result<(), RollError> {
    let select = request.select.as_ref().map(ToString::to_string);
    let differs = select.as_ref().and_then(|select| {
        existing.groups.iter().find(|g| {
            let flagged = env
                .groups
                .iter()
                .find(|spec| spec.asg == g.asg)
                .is_none_or(|spec| spec.select.is_none());
            flagged && g.select != *select
        })
    });
    if let (Some(group), Some(select)) = (differs, &select) {
        let named = if existing.groups.len() > 1 {
            format!(" in group {}", group.asg)
        } else {
            String::new()
        };
        return Err(RollError::refused(format!(
            "checkpoint {} selected `{}`{named}; --select {select} differs: resume without --select",
            path.display(),
            group.select
        )));
    }
    Ok(())
}

/// A `--strategy` asked on resume must be the one the plan was built with.
fn check_strategy(existing: &Checkpoint, path: &Path, request: &Request) -> Result<(), RollError> {
    let strategy = super::decide::roll_plan::strategy_of(&existing.plan);
    if let Some(asked) = request.strategy.filter(|s| *s != strategy) {
        return Err(RollError::refused(format!(
            "checkpoint {} is a roll with --strategy {}; --strategy {} differs: resume without --strategy",
            path.display(),
            strategy.as_str(),
            asked.as_str()
        )));
    }
    Ok(())
}

/// A `--min-healthy` asked on resume must be the roll's floor.
fn check_floor(existing: &Checkpoint, path: &Path, request: &Request) -> Result<(), RollError> {
    let floor = if existing.honor_min_health {
        Floor::MinHealth
    } else {
        Floor::One
    };
    if let Some(asked) = request.floor.filter(|f| *f != floor) {
        return Err(RollError::refused(format!(
            "checkpoint {} is a roll with --min-healthy {}; --min-healthy {} differs: resume without it",
            path.display(),
            floor.as_str(),
            asked.as_str()
        )));
    }
    Ok(())
}

/// Before a resume writes anything, the group's run-id tag must be this
/// run's once the lock step has run (and until the unlock step begins): gone
/// means the roll was abandoned, another id means another run owns the
/// group. Either way nothing is changed.
async fn check_tag<P: Ports>(
    ports: P,
    env: &Environment,
    checkpoint: &Checkpoint,
) -> Result<(), RollError> {
    let mut holding = false;
    for (index, roll) in checkpoint.indexed_groups() {
        let status_of = |wanted: StepKind| {
            checkpoint
                .plan
                .steps()
                .find(|(_, s)| {
                    s.kind
                        .as_ref()
                        .is_some_and(|k| k.group == index && k.kind == wanted)
                })
                .map(|(_, s)| s.status)
        };
        let lock = status_of(StepKind::Lock);
        // Once the unlock step has begun (its intent is written before the
        // tag is removed), a missing tag is this run's own doing.
        let unlocking = !matches!(status_of(StepKind::Unlock), None | Some(Status::Pending));
        if matches!(lock, None | Some(Status::Pending)) || unlocking {
            continue;
        }
        holding |= check_group_tag(
            ports,
            &checkpoint.run_id,
            &roll.asg,
            lock == Some(Status::Complete),
        )
        .await?;
    }
    if !holding {
        return Ok(());
    }
    // Holding a group, the roll holds the cluster: another run holding a
    // group of it now is refused here, before anything is written.
    let others =
        cluster_lock::other_runs(ports, env, &checkpoint.group_names(), &checkpoint.run_id).await?;
    match others.iter().find(|o| o.state == LockState::Held) {
        Some(other) => Err(RollError::refused(refusal(other))),
        None => Ok(()),
    }
}

/// `check_tag` for one group of the roll, `asg`, whose lock step has
/// begun (`tagged`: and completed): whether the run holds it.
async fn check_group_tag<P: Ports>(
    ports: P,
    ours: &str,
    asg: &str,
    tagged: bool,
) -> Result<bool, RollError> {
    let group = ports.aws().describe_group(asg).await?;
    match group.tag(RUN_ID_TAG) {
        Some(tag) if tag == ours => Ok(tagged),
        None if !tagged => Ok(false),
        Some(other) => Err(RollError::refused(format!(
            "ASG {asg} carries {RUN_ID_TAG}={other}, but this checkpoint is run {ours}: another run owns \
             the group. Nothing was changed. Finish or abandon run {other} first"
        ))),
        None => Err(RollError::refused(format!(
            "ASG {asg} carries no {RUN_ID_TAG} tag, but checkpoint run {ours} had tagged it: the roll was \
             abandoned or the tag removed by hand. Nothing was changed. Start a new roll (move this \
             checkpoint away), or put the tag {RUN_ID_TAG}={ours} back if this roll must go on"
        ))),
    }
}
