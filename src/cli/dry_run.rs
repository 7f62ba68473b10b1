//! `roller run --dry-run`: the plan a run would follow, from what
//! preflight reads, and nothing written anywhere: for a checkpoint there,
//! the plan it would resume; for a new roll, what it would replace in
//! each group, the plan, and each group's first drain wave.

use std::collections::HashSet;
use std::io::Write;

use super::RunArgs;
use super::error::CliError;
use super::output::alarm_names;
use super::wiring::Clients;
use crate::plan;
use crate::roll::decide::agent_contents;
use crate::roll::decide::drain_plan::preview;
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::decide::safety::Rules;
use crate::roll::error::RollError;
use crate::roll::ports::auto_scaling::AutoScaling;
use crate::roll::ports::marathon::Marathon;
use crate::roll::ports::mesos::MesosMaster;
use crate::roll::preflight::{Preflight, Request, preflight};
use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore, GroupRoll};
use crate::roll::record::env::Environment;

/// Prints the plan a run would follow; writes nothing anywhere. With
/// `--json`: `{"dry_run": "resume"|"new"|"nothing_to_do", "message",
/// "notes", "instances", "plan", "preview"}`.
pub(super) async fn dry_run(
    clients: &Clients,
    env: &Environment,
    request: &Request,
    args: &RunArgs,
    mut checkpoint: CheckpointStore,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let existing = checkpoint.load().await.map_err(CliError::Checkpoint)?;
    if let Some(existing) = existing {
        let message = format!(
            "dry run: a checkpoint exists ({}): a run would resume it:",
            checkpoint.location().display()
        );
        if args.json {
            let json = serde_json::json!({
                "dry_run": "resume",
                "message": message,
                "plan": plan::info(&existing.plan),
            });
            writeln!(out, "{json}")?;
        } else {
            writeln!(out, "{message}")?;
            out.write_all(plan::tree(&existing.plan).as_bytes())?;
        }
        return Ok(());
    }
    if !request.has_target() && env.groups.iter().any(|g| g.target.is_none()) {
        return Err(CliError::BadFlag(
            "--target N is required for a new roll (the number of agents when done)".to_string(),
        ));
    }
    let preflight = preflight(clients.ports(), env, request, "dry-run".to_string())
        .await
        .map_err(|e| CliError::Run(e.into()))?;
    match preflight {
        Preflight::NothingToDo(message) if args.json => {
            let json = serde_json::json!({"dry_run": "nothing_to_do", "message": message});
            writeln!(out, "{json}")?;
        }
        Preflight::NothingToDo(message) => writeln!(out, "{message}")?,
        Preflight::Ready(checkpoint, mut notes) => {
            notes.extend(warm_pool_notes(clients, &checkpoint).await?);
            let previews = if request.strategy() == RollStrategy::Drain {
                first_waves(clients, request, &checkpoint).await?
            } else {
                Vec::new()
            };
            let new = NewRoll {
                checkpoint: &checkpoint,
                notes,
                previews,
            };
            if args.json {
                writeln!(out, "{}", new.json())?;
            } else {
                new.print(out)?;
            }
        }
    }
    Ok(())
}

/// Each group's first drain wave, from today's placement (group by
/// group: a cluster's groups are drained one after the other).
async fn first_waves(
    clients: &Clients,
    request: &Request,
    checkpoint: &Checkpoint,
) -> Result<Vec<String>, CliError> {
    let apps = clients
        .marathon
        .apps()
        .await
        .map_err(|e| CliError::Run(RollError::from(e).into()))?;
    let rules = Rules::floor_only(request.floor());
    let frameworks = clients
        .mesos
        .frameworks()
        .await
        .map_err(|e| CliError::Run(RollError::from(e).into()))?;
    let marathon_tasks: HashSet<&str> = apps
        .iter()
        .flat_map(|a| &a.tasks)
        .map(|t| t.id.as_str())
        .collect();
    let contents = agent_contents::by_agent(
        &frameworks,
        &marathon_tasks,
        &agent_contents::sdk_services(&apps),
    );
    Ok(checkpoint
        .groups
        .iter()
        .map(|group| {
            let old: HashSet<String> = group.instances.iter().map(|i| i.agent_id.clone()).collect();
            let mut text = preview(&apps, &old, &request.allow_unhealthy, rules).to_string();
            if let Some(others) = agent_contents::not_marathon_on(&contents, &old) {
                text.push_str(&format!(
                    "; the old agents also run {others}, which the drain does not move: \
                     SDK services' pods are replaced one pod of a service at a time through \
                     the service's API, other frameworks' tasks waited for (timeouts.other_tasks) \
                     then drained with DRAIN_AGENT"
                ));
            }
            text
        })
        .collect())
}

/// A note for each group with a warm pool: how many of its waiting
/// instances were launched from an outdated launch source (the plan's
/// `warm-pool` step replaces them before the scale-up).
async fn warm_pool_notes(
    clients: &Clients,
    checkpoint: &Checkpoint,
) -> Result<Vec<String>, CliError> {
    let failed = |e| CliError::Run(RollError::from(e).into());
    let mut notes = Vec::new();
    for g in &checkpoint.groups {
        let Some(pool) = clients.aws.warm_pool(&g.asg).await.map_err(failed)? else {
            continue;
        };
        let group = clients.aws.describe_group(&g.asg).await.map_err(failed)?;
        let outdated = pool.any_outdated(group.launch_source.as_ref());
        notes.push(format!(
            "warm pool of {}: {outdated} of {} waiting instance(s) launched from an outdated launch source{}",
            g.asg,
            pool.instances.len(),
            if outdated > 0 {
                " (the warm-pool step replaces them before the scale-up)"
            } else {
                ""
            }
        ));
    }
    Ok(notes)
}

/// What a dry run of a new roll shows: the checkpoint preflight would
/// write, its notes, and each group's first drain wave (none: serial).
struct NewRoll<'a> {
    checkpoint: &'a Checkpoint,
    notes: Vec<String>,
    previews: Vec<String>,
}

impl NewRoll<'_> {
    /// Every group's first wave, a line each (named by group when there
    /// are several); `None` for a serial roll.
    fn preview(&self) -> Option<String> {
        let groups = &self.checkpoint.groups;
        (!self.previews.is_empty()).then(|| {
            groups
                .iter()
                .zip(&self.previews)
                .map(|(g, p)| {
                    if groups.len() > 1 {
                        format!("{}: {p}", g.asg)
                    } else {
                        p.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
    }

    /// `{"dry_run": "new", "message", "notes", "instances", "groups",
    /// "standby", "protected", "alarms", "plan", "preview"}`: `instances` every group's, `groups` each with
    /// its own.
    fn json(&self) -> serde_json::Value {
        let checkpoint = self.checkpoint;
        let groups: Vec<serde_json::Value> = checkpoint
            .groups
            .iter()
            .enumerate()
            .map(|(n, g)| {
                serde_json::json!({
                    "asg": g.asg,
                    "instances": g.instances.iter().map(|i| &i.id).collect::<Vec<_>>(),
                    "target": g.target,
                    "desired_peak": g.peak_desired(),
                    "surge": g.surge.as_ref().map(|s| serde_json::json!({
                        "cap": s.cap,
                        "from": s.from,
                        "ceiling": s.ceiling,
                        "batches": s.batches,
                    })),
                    "preview": self.previews.get(n),
                })
            })
            .collect();
        serde_json::json!({
            "dry_run": "new",
            "message": dry_run_message(checkpoint),
            "notes": self.notes,
            "instances": checkpoint
                .groups
                .iter()
                .flat_map(|g| &g.instances)
                .map(|i| &i.id)
                .collect::<Vec<_>>(),
            "groups": groups,
            "standby": checkpoint.standby,
            "protected": checkpoint.protected,
            "alarms": checkpoint.alarms,
            "plan": plan::info(&checkpoint.plan),
            "preview": self.preview(),
        })
    }

    fn print(&self, out: &mut dyn Write) -> Result<(), CliError> {
        for note in &self.notes {
            writeln!(out, "note: {note}")?;
        }
        writeln!(out, "{}", dry_run_message(self.checkpoint))?;
        writeln!(
            out,
            "instances in Standby: {} (--standby); protected from scale-in: {} (--protected)",
            self.checkpoint.standby, self.checkpoint.protected
        )?;
        writeln!(
            out,
            "CloudWatch alarms that stop the roll in ALARM: {} (--alarm)",
            alarm_names(&self.checkpoint.alarms)
        )?;
        out.write_all(plan::tree(&self.checkpoint.plan).as_bytes())?;
        if let Some(preview) = self.preview() {
            writeln!(out, "{preview}")?;
        }
        Ok(())
    }
}

/// What a dry run of a new roll would replace: one sentence for one
/// group; for several, a line per group under one that counts them all.
fn dry_run_message(checkpoint: &Checkpoint) -> String {
    let one = |g: &GroupRoll| {
        let batches = g
            .surge
            .as_ref()
            .map(|s| {
                format!(
                    "; in batches, the surge capped at {} by {}: each batch opens an old \
                     agent per new agent come, and more while the new agents' free resources \
                     take their tasks (at most {} batches)",
                    s.cap, s.from, s.batches
                )
            })
            .unwrap_or_default();
        format!(
            "{} instance(s) of {} and end with {} agents (desired peaks at {}{batches})",
            g.instances.len(),
            g.asg,
            g.target,
            g.peak_desired()
        )
    };
    match checkpoint.groups.as_slice() {
        [only] => format!("dry run: would replace {}:", one(only)),
        groups => {
            let total: usize = groups.iter().map(|g| g.instances.len()).sum();
            let mut message = format!(
                "dry run: would replace {total} instance(s) of {} groups, one group emptied at a time:",
                groups.len()
            );
            for g in groups {
                message.push_str(&format!("\n  {}", one(g)));
            }
            message
        }
    }
}
