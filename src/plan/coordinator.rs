//! Candidates across several plans, keeping two steps off one asset.
//!
//! The SDK's `DefaultPlanCoordinator`: plans are asked in priority order (the
//! order given), and a step whose asset another step already holds is left
//! out. A step holds its asset while it is working on it (PREPARED, STARTING
//! or STARTED), and a candidate claims its asset for the rest of the pass.
//! Unlike the SDK, a working step holds its asset even when its plan is
//! interrupted: for a roll, an interrupted plan can still have an instance
//! half-terminated, and nothing else should touch that instance.

use std::collections::HashMap;

use super::plan::{Plan, StepIndex};

/// A step chosen to run, and which plan it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Candidate {
    pub(crate) plan: usize,
    pub(crate) at: StepIndex,
}

/// The steps that would run next across `plans`, highest priority first.
pub(crate) fn candidates<K>(plans: &[&Plan<K>]) -> Vec<Candidate> {
    // Which step holds each asset: working steps first, in plan order.
    let mut holders: HashMap<&str, Candidate> = HashMap::new();
    for (plan_index, plan) in plans.iter().enumerate() {
        for (at, step) in plan.steps().filter(|(_, s)| s.is_working()) {
            if let Some(asset) = &step.asset {
                holders.entry(asset.as_str()).or_insert(Candidate {
                    plan: plan_index,
                    at,
                });
            }
        }
    }
    let mut chosen = Vec::new();
    for (plan_index, plan) in plans.iter().enumerate() {
        for at in plan.candidate_steps() {
            let candidate = Candidate {
                plan: plan_index,
                at,
            };
            let free = match &plan.step(at).asset {
                None => true,
                Some(asset) => *holders.entry(asset.as_str()).or_insert(candidate) == candidate,
            };
            if free {
                chosen.push(candidate);
            }
        }
    }
    chosen
}

/// The candidates of a single plan, assets considered.
pub(crate) fn plan_candidates<K>(plan: &Plan<K>) -> Vec<StepIndex> {
    candidates(&[plan]).into_iter().map(|c| c.at).collect()
}
