//! `roller plan ...`: load a plan document, show it or apply one operator
//! operation, and write it back atomically only when something changed.

use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::error::CliError;
use super::output::write_json;
use super::plan_client::{self, operator};
use super::{OperationArgs, PlanCommand};
use crate::atomic_file::{LockError, Locked};
use crate::plan::{self, Operation, Outcome, Plan, PlanInfo};
use crate::roll::record::checkpoint::{
    Checkpoint, CheckpointError, Event, EventKind, RunLock, RunLockError, utc,
};
use crate::roll::record::operations::{self, QueuedOperation};

/// Plan files may hold instance ids and messages: readable by the owner only.
const PLAN_FILE_MODE: u32 = 0o600;

/// How long an operation waits for another one on the same file to finish.
const LOCK_PATIENCE: Duration = Duration::from_secs(10);

pub(super) fn run(command: PlanCommand, out: &mut dyn Write) -> Result<(), CliError> {
    let (operation, args) = match command {
        PlanCommand::Show(args) => {
            return match &args.url {
                Some(url) => plan_client::show(url, args.json, out),
                None => show(file_of(&args.file)?, args.json, out),
            };
        }
        PlanCommand::Demo => return Ok(crate::demo::walkthrough::run(out)?),
        PlanCommand::Continue(args) => (Operation::Continue, args),
        PlanCommand::Interrupt(args) => (Operation::Interrupt, args),
        PlanCommand::ForceComplete(args) => (Operation::ForceComplete, args),
        PlanCommand::Restart(args) => (Operation::Restart, args),
        PlanCommand::Start(args) => (Operation::Start, args),
        PlanCommand::Stop(args) => (Operation::Stop, args),
    };
    match &args.url {
        Some(url) => plan_client::operate(operation, url, &args, out),
        None => operate(operation, file_of(&args.file)?, &args, out),
    }
}

/// `--file`; clap requires it or `--url`, which the caller has ruled out.
fn file_of(file: &Option<std::path::PathBuf>) -> Result<&Path, CliError> {
    file.as_deref()
        .ok_or_else(|| CliError::BadFlag("give --file FILE or --url URL".to_string()))
}

fn is_s3(file: &Path) -> bool {
    crate::aws::S3Location::is_s3(&file.to_string_lossy())
}

/// The plan of a checkpoint kept in S3 (`plan show --file s3://…`), read
/// with the AWS chain's region and endpoint (`AWS_REGION`,
/// `AWS_ENDPOINT_URL_S3`).
fn load_s3(file: &Path) -> Result<Document, CliError> {
    let runtime = super::wiring::runtime()?;
    runtime.block_on(async {
        let mut store = super::wiring::checkpoint_store_alone(Some(&file.to_path_buf())).await?;
        match store.load().await.map_err(CliError::Checkpoint)? {
            Some(checkpoint) => Ok(Document::Checkpoint(Box::new(checkpoint))),
            None => Err(CliError::NoCheckpoint(format!(
                "no checkpoint at {}: no roll in progress there",
                file.display()
            ))),
        }
    })
}

fn load(path: &Path) -> Result<Document, CliError> {
    let bytes = fs::read(path).map_err(|source| CliError::ReadPlan {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text_of(path, bytes)?)
}

/// The text of a plan file or checkpoint as read: a checkpoint of 512
/// KiB or more is kept gzip'd, and read here as roller reads it.
fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, CliError> {
    Checkpoint::text_of(path, bytes).map_err(|err| match err {
        CheckpointError::Corrupt { reason, .. } => CliError::ReadPlan {
            path: path.to_path_buf(),
            source: io::Error::new(io::ErrorKind::InvalidData, reason),
        },
        other => CliError::Checkpoint(other),
    })
}

/// What `--file` holds: a bare plan document, or a roll's checkpoint
/// (recognised by its `run_id`), whose plan is shown and operated.
enum Document {
    Plan(Plan),
    Checkpoint(Box<Checkpoint>),
}

impl Document {
    /// The plan's JSON view (what the plan API serves).
    fn info(&self) -> PlanInfo {
        match self {
            Document::Plan(plan) => plan::info(plan),
            Document::Checkpoint(checkpoint) => plan::info(&checkpoint.plan),
        }
    }

    /// The plan's `plan show` tree.
    fn tree(&self) -> String {
        match self {
            Document::Plan(plan) => plan::tree(plan),
            Document::Checkpoint(checkpoint) => plan::tree(&checkpoint.plan),
        }
    }
}

/// What an operation did to a plan: its outcome, the element it named
/// (as a sentence says it), and that element's status now.
struct Applied {
    outcome: Outcome,
    described: String,
    status: String,
}

/// Applies `operation` to the element `args` names in `plan` (a bare
/// document's or a checkpoint's: only the steps' kinds differ).
fn apply_to<K: Clone + PartialEq>(
    plan: &mut Plan<K>,
    operation: Operation,
    args: &OperationArgs,
    file: &Path,
) -> Result<Applied, CliError> {
    let target = plan
        .find(args.phase.as_deref(), args.step.as_deref())
        .map_err(|source| CliError::Address {
            path: file.to_path_buf(),
            source,
        })?;
    let described = plan.describe(target);
    let outcome = plan.apply(operation, target);
    Ok(Applied {
        outcome,
        described,
        status: plan.status_of(target).to_string(),
    })
}

fn parse(path: &Path, text: &str) -> Result<Document, CliError> {
    let is_checkpoint = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .is_some_and(|v| v.get("run_id").is_some());
    if is_checkpoint {
        return Checkpoint::parse(path, text)
            .map(|c| Document::Checkpoint(Box::new(c)))
            .map_err(CliError::Checkpoint);
    }
    Plan::from_json(text)
        .map(Document::Plan)
        .map_err(|source| CliError::ParsePlan {
            path: path.to_path_buf(),
            source,
        })
}

fn show(file: &Path, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let document = if is_s3(file) {
        load_s3(file)?
    } else {
        load(file)?
    };
    if json {
        write_json(out, &document.info())?;
    } else {
        out.write_all(document.tree().as_bytes())?;
    }
    Ok(())
}

#[derive(Serialize)]
struct OperationReport {
    result: &'static str,
    plan: PlanInfo,
}

fn operate(
    operation: Operation,
    file: &Path,
    args: &OperationArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if is_s3(file) {
        return Err(CliError::BadFlag(format!(
            "`roller plan {}` changes local files only, and {} is in S3. With no run holding it \
             (stop one with SIGTERM first): `aws s3 cp {} ./roll.json`, run the operation on \
             ./roll.json, then `aws s3 cp ./roll.json {}`; the next `roller run` resumes it",
            operation.as_str(),
            file.display(),
            file.display(),
            file.display()
        )));
    }
    // Held until the new content is in place, so that two operators acting
    // at once apply both of their operations, one after the other.
    let mut locked = Locked::open(file, LOCK_PATIENCE).map_err(|err| match err {
        LockError::Io(source) => CliError::ReadPlan {
            path: file.to_path_buf(),
            source,
        },
        LockError::Busy(_) => CliError::Busy {
            path: file.to_path_buf(),
            source: err,
        },
    })?;
    let bytes = locked.read().map_err(|source| CliError::ReadPlan {
        path: file.to_path_buf(),
        source,
    })?;
    let mut document = parse(file, &text_of(file, bytes)?)?;
    // A checkpoint held by a live run is the run's to write: the operation
    // is queued for it (applied at its next tick). Otherwise its run lock
    // is held meanwhile, so that no run starts in the middle.
    let _run_lock = match &document {
        Document::Checkpoint(checkpoint) => match RunLock::acquire(file) {
            Ok(lock) => Some(lock),
            Err(RunLockError::Held { .. }) => {
                drop(locked);
                return queue_for_live_run(operation, file, args, checkpoint, out);
            }
            Err(RunLockError::Io { path, source }) => {
                return Err(CliError::ReadPlan { path, source });
            }
        },
        Document::Plan(_) => None,
    };
    let applied = match &mut document {
        Document::Plan(plan) => apply_to(plan, operation, args, file)?,
        Document::Checkpoint(checkpoint) => apply_to(&mut checkpoint.plan, operation, args, file)?,
    };
    if applied.outcome == Outcome::Changed {
        let bytes = document.changed_bytes(&format!("{operation} {}", applied.described))?;
        locked
            .replace(&bytes, PLAN_FILE_MODE)
            .map_err(|source| CliError::WritePlan {
                path: file.to_path_buf(),
                source,
            })?;
    }
    drop(locked);
    report_operation(operation, &applied, &document, args.json, out)
}

impl Document {
    /// The document as written back after an operation changed it: a
    /// checkpoint also records the operation (`what`) and who asked.
    fn changed_bytes(&mut self, what: &str) -> Result<Vec<u8>, CliError> {
        Ok(match self {
            Document::Plan(plan) => plan.to_json().into_bytes(),
            Document::Checkpoint(checkpoint) => {
                checkpoint.events.push(Event {
                    at: utc(SystemTime::now()),
                    kind: EventKind::Operator,
                    message: what.to_string(),
                    user: Some(operator()),
                    label: None,
                });
                let mut json =
                    serde_json::to_vec_pretty(checkpoint.as_ref()).map_err(std::io::Error::from)?;
                json.push(b'\n');
                // Kept as roller keeps it: gzip'd from 512 KiB on.
                Checkpoint::bytes_of(&json)?.into_owned()
            }
        })
    }
}

/// What an operation came to, as the operator reads it (or `--json`'s
/// object), with the plan as it stands.
fn report_operation(
    operation: Operation,
    applied: &Applied,
    document: &Document,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if json {
        let result = match applied.outcome {
            Outcome::Changed => "changed",
            Outcome::AlreadyDone => "already_done",
        };
        return write_json(
            out,
            &OperationReport {
                result,
                plan: document.info(),
            },
        );
    }
    let described = &applied.described;
    match applied.outcome {
        Outcome::Changed => writeln!(out, "{operation} {described}: done")?,
        Outcome::AlreadyDone => writeln!(
            out,
            "already done: {operation} changes nothing on {described} ({}); the file is untouched",
            applied.status
        )?,
    }
    out.write_all(document.tree().as_bytes())?;
    Ok(())
}

/// A live run holds the checkpoint: the operation, once its address is
/// known to be valid, goes into the run's queue.
fn queue_for_live_run(
    operation: Operation,
    file: &Path,
    args: &OperationArgs,
    checkpoint: &Checkpoint,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let target = checkpoint
        .plan
        .find(args.phase.as_deref(), args.step.as_deref())
        .map_err(|source| CliError::Address {
            path: file.to_path_buf(),
            source,
        })?;
    let described = checkpoint.plan.describe(target);
    let queued = QueuedOperation {
        id: uuid::Uuid::new_v4().to_string(),
        operation: operation.to_string(),
        phase: args.phase.clone(),
        step: args.step.clone(),
        user: operator(),
        at: utc(SystemTime::now()),
    };
    let file = operations::queue(file, &queued).map_err(|source| CliError::WritePlan {
        path: operations::folder(file),
        source,
    })?;
    if args.json {
        return write_json(
            out,
            &serde_json::json!({"result": "queued", "operation": queued, "file": file}),
        );
    }
    writeln!(
        out,
        "queued: {operation} {described}: a run holds '{}', and applies it at its next tick \
         (after the API call in flight); `roller status` shows it in the events",
        file.display()
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    const SEED: &str = include_str!("../../fuzz/seeds/checkpoint/serial-1.json");

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    /// `roller plan interrupt --phase finish --file path`.
    fn interrupt_finish(path: &Path) -> Result<(), CliError> {
        let args = OperationArgs {
            file: Some(path.to_path_buf()),
            url: None,
            phase: Some("finish".into()),
            step: None,
            json: false,
        };
        operate(Operation::Interrupt, path, &args, &mut Vec::new())
    }

    #[test]
    fn a_gzipd_checkpoint_is_shown_and_operated_as_a_plain_one() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.json");
        let packed = dir.path().join("roll.json");
        fs::write(&plain, SEED).unwrap();
        fs::write(&packed, gzip(SEED.as_bytes())).unwrap();
        let shown = |path: &Path| {
            let mut out = Vec::new();
            show(path, false, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(shown(&packed), shown(&plain));

        interrupt_finish(&packed).unwrap();
        let after = Checkpoint::load(&packed).unwrap().unwrap();
        let finish = after.plan.phases.iter().find(|p| p.id == "finish").unwrap();
        assert!(finish.interrupted, "the operation did not land");
        assert_eq!(after.events.last().unwrap().kind, EventKind::Operator);
    }

    #[test]
    fn a_cut_gzipd_file_is_unreadable_by_name_and_left_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roll.json");
        let packed = gzip(SEED.as_bytes());
        let cut = &packed[..packed.len() / 2];
        fs::write(&path, cut).unwrap();
        let err = show(&path, false, &mut Vec::new()).unwrap_err();
        assert_eq!(err.label(), "plan_unreadable", "{err}");
        assert!(err.to_string().contains("not a whole gzip stream"), "{err}");
        let err = interrupt_finish(&path).unwrap_err();
        assert_eq!(err.label(), "plan_unreadable", "{err}");
        assert_eq!(fs::read(&path).unwrap(), cut);
    }
}
