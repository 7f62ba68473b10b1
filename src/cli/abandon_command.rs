//! `roller abandon --run-id ID`: gives up a roll whose checkpoint is lost
//! or unwanted, undoing what its bookkeeping holds on the cluster (the
//! run-id tag, suspended processes, a raised MaxSize, maintenance windows)
//! and never its capacity.

use std::io::Write;

use super::AbandonArgs;
use super::error::CliError;
use super::wiring::{checkpoint_path, clients, environment_from, runtime};
use crate::roll::checkpoint::{Checkpoint, CheckpointError, MaintenanceRecord, RunLock};
use crate::roll::ports::auto_scaling::{AutoScaling, ScalingProcess};
use crate::roll::ports::mesos::{MachineId, MesosMaster};
use crate::roll::runner::RUN_ID_TAG;

/// Undoes what a roll's bookkeeping holds on the cluster, never its
/// capacity. Removes the `roller:run-id` tag only
/// if it carries that id; with that run's checkpoint, resumes exactly what
/// it suspended, restores a MaxSize it raised and removes its maintenance
/// windows, then archives the checkpoint as `.abandoned.json`.
pub(super) fn run(args: &AbandonArgs, out: &mut dyn Write) -> Result<(), CliError> {
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
                    .map(MaintenanceRecord::machine_id)
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
                CliError::Checkpoint(CheckpointError::Write {
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
