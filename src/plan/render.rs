//! How a plan is shown: the SDK CLI's `plan show` tree, character for
//! character, and a JSON view that is a superset of the SDK's `PlanInfo`.

use serde::{Deserialize, Serialize};

use super::coordinator::plan_candidates;
use super::plan::Plan;
use super::status::Status;

/// The `plan show` tree, e.g.
/// ```text
/// deploy (serial strategy) (IN_PROGRESS)
/// ├─ hello (serial strategy) (COMPLETE)
/// │  └─ hello-0:[server] (COMPLETE)
/// └─ world (serial strategy) (PENDING)
///    └─ world-0:[server, sidecar] (PENDING)
/// ```
pub(crate) fn tree<K>(plan: &Plan<K>) -> String {
    render_tree(
        (&plan.name, &plan.strategy.to_string(), plan.status()),
        plan.phases.iter().map(|phase| {
            (
                (
                    phase.name.as_str(),
                    phase.strategy.to_string(),
                    phase.status(),
                ),
                phase
                    .steps
                    .iter()
                    .map(|step| (step.name.as_str(), step.status()))
                    .collect(),
            )
        }),
    )
}

/// The same tree from the JSON view (what the plan API serves), line for
/// line what `tree` prints for the plan it was made of.
pub(crate) fn info_tree(info: &PlanInfo) -> String {
    render_tree(
        (&info.name, &info.strategy, info.status),
        info.phases.iter().map(|phase| {
            (
                (phase.name.as_str(), phase.strategy.clone(), phase.status),
                phase
                    .steps
                    .iter()
                    .map(|step| (step.name.as_str(), step.status))
                    .collect(),
            )
        }),
    )
}

/// A phase as the tree shows it: (name, strategy, status) and its steps'
/// (name, status).
type PhaseLines<'a> = ((&'a str, String, Status), Vec<(&'a str, Status)>);

fn render_tree<'a>(
    (name, strategy, status): (&str, &str, Status),
    phases: impl ExactSizeIterator<Item = PhaseLines<'a>>,
) -> String {
    let mut out = format!("{name} ({strategy} strategy) ({status})\n");
    let count = phases.len();
    for (i, ((name, strategy, status), steps)) in phases.enumerate() {
        let last_phase = i + 1 == count;
        let (branch, indent) = if last_phase {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        out.push_str(&format!(
            "{branch}{name} ({strategy} strategy) ({status})\n"
        ));
        for (j, (step, status)) in steps.iter().enumerate() {
            let step_branch = if j + 1 == steps.len() {
                "└─ "
            } else {
                "├─ "
            };
            out.push_str(&format!("{indent}{step_branch}{step} ({status})\n"));
        }
    }
    out
}

/// The JSON view: the SDK's `PlanInfo` fields (`phases[].steps[]` with `id`,
/// `name`, `status`, `message`; `strategy`; `errors`; `status`) plus the
/// plan's name, interrupt flags, step assets and the next `candidates`.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct PlanInfo {
    pub(crate) name: String,
    pub(crate) status: Status,
    pub(crate) strategy: String,
    pub(crate) interrupted: bool,
    pub(crate) errors: Vec<String>,
    pub(crate) phases: Vec<PhaseInfo>,
    /// The steps that would run next, assets considered.
    pub(crate) candidates: Vec<CandidateInfo>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct PhaseInfo {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) status: Status,
    pub(crate) strategy: String,
    pub(crate) interrupted: bool,
    pub(crate) steps: Vec<StepInfo>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StepInfo {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) status: Status,
    pub(crate) message: String,
    pub(crate) interrupted: bool,
    pub(crate) asset: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct CandidateInfo {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) phase: String,
}

pub(crate) fn info<K>(plan: &Plan<K>) -> PlanInfo {
    PlanInfo {
        name: plan.name.clone(),
        status: plan.status(),
        strategy: plan.strategy.to_string(),
        interrupted: plan.interrupted,
        errors: plan.errors.clone(),
        phases: plan
            .phases
            .iter()
            .map(|phase| PhaseInfo {
                id: phase.id.clone(),
                name: phase.name.clone(),
                status: phase.status(),
                strategy: phase.strategy.to_string(),
                interrupted: phase.is_interrupted(),
                steps: phase
                    .steps
                    .iter()
                    .map(|step| StepInfo {
                        id: step.id.clone(),
                        name: step.name.clone(),
                        status: step.status(),
                        message: step.message.clone(),
                        interrupted: step.interrupted,
                        asset: step.asset.clone(),
                    })
                    .collect(),
            })
            .collect(),
        candidates: plan_candidates(plan)
            .into_iter()
            .map(|at| CandidateInfo {
                id: plan.step(at).id.clone(),
                name: plan.step(at).name.clone(),
                phase: plan.phases[at.phase].name.clone(),
            })
            .collect(),
    }
}
