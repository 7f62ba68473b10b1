//! One `roller run`: takes the run lock, resumes the checkpoint or runs
//! preflight and writes the first one, runs the plan, and archives the
//! checkpoint once the plan is complete. Shared by the CLI and the demo.

use std::path::{Path, PathBuf};

use tokio::sync::watch;

use super::checkpoint::{Checkpoint, RunLock, RunLockError};
use super::env::Environment;
use super::ports::auto_scaling::AutoScaling;
use super::ports::marathon::Marathon;
use super::ports::mesos::MesosMaster;
use super::ports::pager::Pager;
use super::preflight::{Preflight, Request, preflight};
use super::runner::{Outcome, Ports, RollError, RunOptions, Runner};

pub struct RunSettings {
    pub checkpoint: PathBuf,
    /// What a fresh run asks for; on a resume only compared, where given.
    pub request: Request,
    /// Whether `--target` / `--select` were given (a resume compares them).
    pub target_given: bool,
    pub select_given: bool,
    pub options: RunOptions,
}

pub enum RunResult {
    NothingToDo(String),
    Finished {
        outcome: Outcome,
        checkpoint: Box<Checkpoint>,
        /// Where the checkpoint was archived when the plan completed.
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
    pub fn label(&self) -> &'static str {
        match self {
            RunError::Lock(RunLockError::Held { .. }) => "lock_held",
            RunError::Lock(RunLockError::Io { .. }) => "lock_io",
            RunError::Roll(e) => e.label(),
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub async fn run<A, M, K, P>(
    ports: Ports<'_, A, M, K, P>,
    env: &Environment,
    settings: RunSettings,
    stop: watch::Receiver<bool>,
    observer: Box<dyn FnMut(&Checkpoint) + Send + '_>,
) -> Result<RunResult, RunError>
where
    A: AutoScaling + Sync,
    M: MesosMaster + Sync,
    K: Marathon + Sync,
    P: Pager,
{
    let _lock = RunLock::acquire(&settings.checkpoint)?;
    let path = settings.checkpoint.clone();
    let mut notes = Vec::new();
    let checkpoint = match Checkpoint::load(&path).map_err(RollError::from)? {
        Some(existing) => {
            existing
                .check_group(&path, &env.asg)
                .map_err(RollError::from)?;
            if settings.target_given && existing.target != settings.request.target {
                return Err(RollError::Refused(format!(
                    "checkpoint {} is a roll to {} agents; --target {} differs: resume without --target, or finish/abandon that roll first",
                    path.display(),
                    existing.target,
                    settings.request.target
                ))
                .into());
            }
            let select = settings.request.select.to_string();
            if settings.select_given && existing.select != select {
                return Err(RollError::Refused(format!(
                    "checkpoint {} selected `{}`; --select {select} differs: resume without --select",
                    path.display(),
                    existing.select
                ))
                .into());
            }
            notes.push(format!(
                "resuming run {} from {}",
                existing.run_id,
                path.display()
            ));
            existing
        }
        None => {
            if !settings.target_given {
                return Err(RollError::Refused(format!(
                    "no checkpoint at {} to resume, and no --target for a new roll",
                    path.display()
                ))
                .into());
            }
            let run_id = uuid::Uuid::new_v4().to_string();
            match preflight(
                ports.aws,
                ports.mesos,
                ports.marathon,
                env,
                &settings.request,
                run_id,
            )
            .await?
            {
                Preflight::NothingToDo(message) => return Ok(RunResult::NothingToDo(message)),
                Preflight::Ready(checkpoint, preflight_notes) => {
                    notes.extend(preflight_notes);
                    checkpoint.save(&path).map_err(RollError::from)?;
                    *checkpoint
                }
            }
        }
    };
    let runner = Runner::new(
        ports,
        env,
        settings.options,
        checkpoint,
        path.clone(),
        stop,
        observer,
    );
    let (outcome, checkpoint) = runner.run().await?;
    let archived = match outcome {
        Outcome::Complete { .. } => Some(archive(&path, &checkpoint)?),
        _ => None,
    };
    Ok(RunResult::Finished {
        outcome,
        checkpoint: Box::new(checkpoint),
        archived,
        notes,
    })
}

/// Moves a completed checkpoint aside (`<asg>.<run-id>.complete.json`), so
/// the next run starts fresh and the record stays.
fn archive(path: &Path, checkpoint: &Checkpoint) -> Result<PathBuf, RollError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let to = dir.join(format!(
        "{}.{}.complete.json",
        checkpoint.asg, checkpoint.run_id
    ));
    std::fs::rename(path, &to).map_err(|source| {
        RollError::Checkpoint(super::checkpoint::CheckpointError::Write {
            path: to.clone(),
            source,
        })
    })?;
    Ok(to)
}
