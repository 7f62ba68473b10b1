//! Each schema's checkpoint is brought to the next one's JSON in turn
//! (`to_current`), then read as today's.
//!
//! Schema 3 → 4. Schema 3 found a step's group by splitting its phase's
//! id (`<asg>:drain`; no prefix: the only group), and recorded the
//! simulator's time scale in the environment. Schema 4 keeps the group in
//! each step's kind (`"group": 0`), its place in `groups`, and records no
//! simulator setting: the time scale is dropped.
//!
//! Schema 2 → 3. Schema 2 rolled one group, and kept what it knew and
//! changed of it (the ASG, the instances, the suspended processes, the
//! windows, surges, waves, new agents and bake) at the top level: schema 3
//! keeps that per group, in `groups`, and the one group of a schema-2
//! checkpoint becomes its only element.
//!
//! Schema 1 → 2. Schema 1 named a step's work only by its phase and step
//! ids, paused by interrupting the whole plan, and kept the roll's summary
//! only in the event log. Migration gives every step its typed kind, turns
//! a pause into a `DELAYED` step (the plan's interrupt flag is left to
//! operators), and lifts the summary into its field.

use serde_json::Value;

use super::{Checkpoint, EventKind, GROUP_SEPARATOR};
use crate::plan::Status;
use crate::roll::record::kinds::StepKind;

/// The keys schema 2 kept at the top level that schema 3 keeps per group.
const GROUP_KEYS: &[&str] = &[
    "asg",
    "target",
    "select",
    "original",
    "instances",
    "suspended_before",
    "suspended_by_roll",
    "raised_max_from",
    "maintenance",
    "surges",
    "waves",
    "new_agents",
    "bake_until_unix_ms",
];

/// One schema's JSON rewritten in place as the next one's.
type Migration = fn(&mut Value) -> Result<(), String>;

/// Rewrites the JSON of a checkpoint of schema `found` in place as
/// today's, one schema after the other.
pub(super) fn to_current(value: &mut Value, found: u64) -> Result<(), String> {
    let steps: [Migration; 3] = [from_v1, from_v2, from_v3];
    for (from, step) in (1u64..).zip(steps) {
        if found <= from {
            step(value)?;
        }
    }
    debug_assert_eq!(value["version"], Value::from(super::VERSION));
    Ok(())
}

/// Rewrites the JSON of a schema-3 checkpoint in place as schema 4.
fn from_v3(value: &mut Value) -> Result<(), String> {
    let groups: Vec<String> = value
        .get("groups")
        .and_then(Value::as_array)
        .ok_or("a schema 3 checkpoint has \"groups\"")?
        .iter()
        .map(|g| g["asg"].as_str().unwrap_or_default().to_string())
        .collect();
    if let Some(environment) = value.get_mut("environment").and_then(Value::as_object_mut) {
        environment.remove("time_scale");
    }
    let phases = value
        .pointer_mut("/plan/phases")
        .and_then(Value::as_array_mut)
        .ok_or("a schema 3 checkpoint has plan phases")?;
    for phase in phases {
        let id = phase["id"].as_str().unwrap_or_default().to_string();
        // Schema 3's phase ids carried the group when there were several.
        let group = match id.split_once(GROUP_SEPARATOR) {
            None => 0,
            Some((asg, _)) => groups.iter().position(|g| g == asg).ok_or_else(|| {
                format!(
                    "its plan's phase '{id}' names a group the checkpoint does not roll ({})",
                    groups.join(", ")
                )
            })?,
        };
        for step in phase
            .get_mut("steps")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(kind) = step.get_mut("kind").and_then(Value::as_object_mut) {
                kind.insert("group".to_string(), Value::from(group));
            }
        }
    }
    value["version"] = Value::from(4);
    Ok(())
}

/// Rewrites the JSON of a schema-2 checkpoint in place as schema 3.
fn from_v2(value: &mut Value) -> Result<(), String> {
    let top = value
        .as_object_mut()
        .ok_or("the checkpoint is not a JSON object")?;
    if top.contains_key("groups") {
        return Err("a schema 2 checkpoint has no \"groups\"".to_string());
    }
    let mut group = serde_json::Map::new();
    for key in GROUP_KEYS {
        if let Some(found) = top.remove(*key) {
            group.insert((*key).to_string(), found);
        }
    }
    top.insert(
        "groups".to_string(),
        Value::Array(vec![Value::Object(group)]),
    );
    top.insert("version".to_string(), Value::from(3));
    Ok(())
}

/// Rewrites the JSON of a schema-1 checkpoint in place as schema 2.
fn from_v1(value: &mut Value) -> Result<(), String> {
    value["version"] = Value::from(2);
    let paged = paged_v1(value);
    if let Some(pause) = value.get_mut("pause").filter(|p| p.is_object()) {
        pause["paged"] = Value::Bool(paged);
    }
    let phases = value
        .pointer_mut("/plan/phases")
        .and_then(Value::as_array_mut)
        .ok_or("schema 1 checkpoint without plan phases")?;
    for phase in phases {
        let phase_id = phase["id"].as_str().unwrap_or_default().to_string();
        let steps = phase
            .get_mut("steps")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| format!("phase '{phase_id}' has no steps"))?;
        for step in steps {
            let step_id = step["id"].as_str().unwrap_or_default();
            let kind = v1_step_kind(&phase_id, step_id).ok_or_else(|| {
                format!("schema 1 step '{phase_id}/{step_id}' is not a step roller knows")
            })?;
            step["kind"] = serde_json::to_value(kind).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// The kind of a schema-1 step, which had only its phase and step ids.
/// The ids are schema 1's, spelled out: they are history, and must read
/// the same whatever later plans call their phases.
fn v1_step_kind(phase: &str, step: &str) -> Option<StepKind> {
    Some(match (phase, step) {
        ("prepare", "lock") => StepKind::Lock,
        ("prepare", "suspend-processes") => StepKind::SuspendProcesses,
        ("prepare", "raise-max-size") => StepKind::RaiseMaxSize,
        ("scale-up", "set-desired") => StepKind::SetDesired,
        ("scale-up", "wait-registered") => StepKind::WaitRegistered,
        ("scale-up", "maintenance") => StepKind::Maintenance,
        ("replace", instance) => StepKind::Replace {
            instance: instance.to_string(),
        },
        ("finish", "resume-processes") => StepKind::ResumeProcesses,
        ("finish", "restore-max-size") => StepKind::RestoreMaxSize,
        ("finish", "end-maintenance") => StepKind::EndMaintenance,
        ("finish", "report-rebalance") => StepKind::ReportRebalance,
        ("finish", "unlock") => StepKind::Unlock,
        _ => return None,
    })
}

/// Whether the last pause's page went out: schema 1 logged only failures.
fn paged_v1(value: &Value) -> bool {
    let Some(events) = value.get("events").and_then(Value::as_array) else {
        return false;
    };
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e.get("kind").and_then(Value::as_str))
        .collect();
    match kinds.iter().rposition(|k| *k == "pause") {
        Some(at) => !kinds[at..].contains(&"page_failed"),
        None => false,
    }
}

/// What the typed schema-1 checkpoint still needs.
pub(super) fn after_v1(checkpoint: &mut Checkpoint) {
    if let Some(pause) = checkpoint.pause.clone() {
        // Schema 1 paused by interrupting the plan, and cleared that on
        // the next run whoever had set it: the pause's step reads DELAYED
        // now, and the plan's flag is left to operators.
        checkpoint.plan.interrupted = false;
        if let Some(at) = checkpoint.find_step(&pause.step) {
            checkpoint.plan.step_mut(at).status = Status::Delayed;
        }
    }
    checkpoint.summary = checkpoint
        .events
        .iter()
        .rev()
        .find(|e| e.kind == EventKind::Rebalance)
        .map(|e| e.message.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roll::decide::roll_plan::{PlanOptions, RollStrategy, build};
    use crate::roll::record::checkpoint::RolledInstance;
    use crate::roll::record::kinds::GroupIndex;

    /// Schema 1 knew only the serial plan: each of its steps' ids must
    /// migrate to the kind today's serial plan gives the same step.
    #[test]
    fn schema_1_ids_migrate_to_the_kinds_todays_serial_plan_gives_them() {
        let instance = |id: &str| RolledInstance {
            id: id.to_string(),
            availability_zone: "a".to_string(),
            agent_id: format!("agent-{id}"),
            hostname: format!("host-{id}"),
            ip: None,
            terminate_sent: false,
            reclaimed: false,
            replaced: false,
            other_tasks: Default::default(),
            batch: 0,
        };
        let plan = build(
            GroupIndex(0),
            "asg",
            &[instance("i-1"), instance("i-2")],
            PlanOptions {
                strategy: RollStrategy::Serial,
                raise_max: true,
                ..PlanOptions::default()
            },
        );
        for phase in &plan.phases {
            for step in &phase.steps {
                let kind = step.kind.clone().unwrap().kind;
                if kind == StepKind::WarmPool {
                    // Schema 1's plans had no warm-pool step.
                    assert_eq!(v1_step_kind(&phase.id, &step.id), None);
                    continue;
                }
                assert_eq!(v1_step_kind(&phase.id, &step.id), Some(kind));
            }
        }
    }
}
