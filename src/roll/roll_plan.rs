//! The roll's plan, built from what was selected (pure: no I/O; this is
//! what `--dry-run` prints). Each step carries its typed `StepKind`, which
//! the runner dispatches on. Phase and step ids are fixed words (and the
//! instance id for each replacement) so operators can name them across
//! processes:
//!
//! ```text
//! roll-<asg> (serial strategy)
//! ├─ prepare    lock, suspend-processes, [raise-max-size]
//! ├─ scale-up   set-desired, wait-registered
//! ├─ replace    one step per instance (serial, or serial-canary)
//! └─ finish     resume-processes, [restore-max-size], end-maintenance,
//!               report-rebalance, unlock
//! ```

use crate::plan::{Phase, Plan, Step, Strategy};

use super::checkpoint::RolledInstance;
use super::steps::StepKind;

pub const PREPARE: &str = "prepare";
pub const SCALE_UP: &str = "scale-up";
pub const REPLACE: &str = "replace";
pub const FINISH: &str = "finish";

pub const LOCK: &str = "lock";
pub const SUSPEND: &str = "suspend-processes";
pub const RAISE_MAX: &str = "raise-max-size";
pub const SET_DESIRED: &str = "set-desired";
pub const WAIT_REGISTERED: &str = "wait-registered";
pub const RESUME: &str = "resume-processes";
pub const RESTORE_MAX: &str = "restore-max-size";
pub const END_MAINTENANCE: &str = "end-maintenance";
pub const REPORT_REBALANCE: &str = "report-rebalance";
pub const UNLOCK: &str = "unlock";

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// Replace the first N instances as canaries: each waits for
    /// `roller plan continue` before it starts.
    pub canary: Option<u32>,
    /// MaxSize is raised for the roll and restored at finish.
    pub raise_max: bool,
}

pub fn plan_name(asg: &str) -> String {
    format!("roll-{asg}")
}

fn step(id: &str, kind: StepKind, message: &str) -> Step {
    let mut step = Step::new(id);
    step.id = id.to_string();
    step.message = message.to_string();
    step.kind = Some(kind.to_value());
    step
}

/// The kind of a schema-1 checkpoint's step, which had only its ids.
pub fn v1_step_kind(phase: &str, step: &str) -> Option<StepKind> {
    Some(match (phase, step) {
        (PREPARE, LOCK) => StepKind::Lock,
        (PREPARE, SUSPEND) => StepKind::SuspendProcesses,
        (PREPARE, RAISE_MAX) => StepKind::RaiseMaxSize,
        (SCALE_UP, SET_DESIRED) => StepKind::SetDesired,
        (SCALE_UP, WAIT_REGISTERED) => StepKind::WaitRegistered,
        (REPLACE, instance) => StepKind::Replace {
            instance: instance.to_string(),
        },
        (FINISH, RESUME) => StepKind::ResumeProcesses,
        (FINISH, RESTORE_MAX) => StepKind::RestoreMaxSize,
        (FINISH, END_MAINTENANCE) => StepKind::EndMaintenance,
        (FINISH, REPORT_REBALANCE) => StepKind::ReportRebalance,
        (FINISH, UNLOCK) => StepKind::Unlock,
        _ => return None,
    })
}

fn phase(id: &str, strategy: Strategy, steps: Vec<Step>) -> Phase {
    let mut phase = Phase::new(id, strategy, steps);
    phase.id = id.to_string();
    phase
}

pub fn build(asg: &str, instances: &[RolledInstance], options: PlanOptions) -> Plan {
    let mut prepare = vec![
        step(LOCK, StepKind::Lock, "tag the ASG with the run id"),
        step(
            SUSPEND,
            StepKind::SuspendProcesses,
            "suspend the scaling processes that could change capacity",
        ),
    ];
    if options.raise_max {
        prepare.push(step(
            RAISE_MAX,
            StepKind::RaiseMaxSize,
            "raise MaxSize to N + K",
        ));
    }
    let scale_up = vec![
        step(
            SET_DESIRED,
            StepKind::SetDesired,
            "set desired capacity to N + K - terminated",
        ),
        step(
            WAIT_REGISTERED,
            StepKind::WaitRegistered,
            "wait until every new instance is an active Mesos agent",
        ),
    ];
    let replace = instances
        .iter()
        .map(|i| {
            let mut s = step(
                &i.id,
                StepKind::Replace {
                    instance: i.id.clone(),
                },
                &format!("replace agent {} ({})", i.hostname, i.availability_zone),
            );
            s.asset = Some(i.id.clone());
            s
        })
        .collect();
    let mut finish = vec![step(
        RESUME,
        StepKind::ResumeProcesses,
        "resume what the roll suspended",
    )];
    if options.raise_max {
        finish.push(step(
            RESTORE_MAX,
            StepKind::RestoreMaxSize,
            "restore MaxSize",
        ));
    }
    finish.extend([
        step(
            END_MAINTENANCE,
            StepKind::EndMaintenance,
            "remove the roll's maintenance windows",
        ),
        step(
            REPORT_REBALANCE,
            StepKind::ReportRebalance,
            "report the AZ moves rebalancing needs",
        ),
        step(UNLOCK, StepKind::Unlock, "remove the run-id tag"),
    ]);
    // Built serial, then gated: `Phase::new` would pick default canaries.
    let mut replace_phase = phase(REPLACE, Strategy::Serial, replace);
    if let Some(count) = options.canary {
        replace_phase.strategy = Strategy::SerialCanary;
        replace_phase.canary = Some(crate::plan::Canary { count, steps: None });
        replace_phase.set_up_canary();
    }
    Plan::new(
        plan_name(asg),
        Strategy::Serial,
        vec![
            phase(PREPARE, Strategy::Serial, prepare),
            phase(SCALE_UP, Strategy::Serial, scale_up),
            replace_phase,
            phase(FINISH, Strategy::Serial, finish),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::tree;

    fn instance(id: &str) -> RolledInstance {
        RolledInstance {
            id: id.to_string(),
            availability_zone: "us-east-1a".to_string(),
            agent_id: format!("agent-{id}"),
            hostname: format!("host-{id}"),
            ip: None,
            terminate_sent: false,
        }
    }

    #[test]
    fn the_plan_has_the_four_phases_and_one_replace_step_per_instance() {
        let plan = build(
            "asg",
            &[instance("i-1"), instance("i-2")],
            PlanOptions::default(),
        );
        let shown = tree(&plan);
        assert!(
            shown.starts_with("roll-asg (serial strategy) (PENDING)"),
            "{shown}"
        );
        let phases: Vec<&str> = plan.phases.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(phases, [PREPARE, SCALE_UP, REPLACE, FINISH]);
        let replace: Vec<_> = plan.phases[2].steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(replace, ["i-1", "i-2"]);
        assert_eq!(plan.phases[2].steps[0].asset.as_deref(), Some("i-1"));
        assert!(!plan.phases[0].steps.iter().any(|s| s.id == RAISE_MAX));
        // Every step carries its kind, and it agrees with what a schema-1
        // checkpoint's ids are migrated to.
        for phase in &plan.phases {
            for step in &phase.steps {
                let kind = StepKind::from_value(step.kind.as_ref().unwrap()).unwrap();
                assert_eq!(v1_step_kind(&phase.id, &step.id), Some(kind));
            }
        }
    }

    #[test]
    fn canary_and_raise_max_change_the_plan_as_asked() {
        let plan = build(
            "asg",
            &[instance("i-1"), instance("i-2"), instance("i-3")],
            PlanOptions {
                canary: Some(1),
                raise_max: true,
            },
        );
        assert_eq!(plan.phases[2].strategy, Strategy::SerialCanary);
        assert!(plan.phases[0].steps.iter().any(|s| s.id == RAISE_MAX));
        assert!(plan.phases[3].steps.iter().any(|s| s.id == RESTORE_MAX));
        let text = plan.to_json();
        assert_eq!(Plan::from_json(&text).unwrap(), plan);
    }
}
