//! A plan: the root of the tree, its phases and its strategy over them.

use serde::{Deserialize, Serialize};

use super::aggregate::aggregate_status;
use super::phase::{Phase, resolve_all};
use super::status::Status;
use super::strategy::{ChildView, Strategy, select};

/// The plan document's schema version this build writes and reads.
pub(crate) const DOCUMENT_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(bound(serialize = "K: Serialize", deserialize = "K: Deserialize<'de>"))]
pub struct Plan<K = serde_json::Value> {
    /// Schema version of the document, so that an older roller refuses a
    /// newer file instead of misreading it.
    #[serde(default = "document_version")]
    pub(crate) version: u32,
    pub(crate) name: String,
    #[serde(default = "serial")]
    pub(crate) strategy: Strategy,
    #[serde(default)]
    pub interrupted: bool,
    /// The plan's own errors (the SDK's plan errors, e.g. an invalid
    /// request): any error makes the plan read ERROR.
    #[serde(default)]
    pub(crate) errors: Vec<String>,
    #[serde(default)]
    pub phases: Vec<Phase<K>>,
}

/// Where a step sits in its plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepIndex {
    pub(crate) phase: usize,
    pub(crate) step: usize,
}

fn document_version() -> u32 {
    DOCUMENT_VERSION
}

fn serial() -> Strategy {
    Strategy::Serial
}

impl<K> Plan<K> {
    pub(crate) fn new(
        name: impl Into<String>,
        strategy: Strategy,
        phases: Vec<Phase<K>>,
    ) -> Plan<K> {
        Plan {
            version: DOCUMENT_VERSION,
            name: name.into(),
            strategy,
            interrupted: false,
            errors: Vec::new(),
            phases,
        }
    }

    /// Indices of the phases the plan's strategy would work on now. A phase
    /// is eligible when it is neither COMPLETE nor ERROR nor interrupted.
    pub(crate) fn candidate_phases(&self) -> Vec<usize> {
        let statuses: Vec<Status> = self.phases.iter().map(Phase::<K>::status).collect();
        self.select_phases(&statuses)
    }

    fn select_phases(&self, statuses: &[Status]) -> Vec<usize> {
        let views: Vec<ChildView> = self
            .phases
            .iter()
            .zip(statuses)
            .map(|(phase, &status)| ChildView {
                eligible: !matches!(status, Status::Complete | Status::Error)
                    && !phase.is_interrupted(),
                complete: status == Status::Complete,
                depends_on: resolve_all(&phase.depends_on, &self.phases, |p| (&p.id, &p.name)),
            })
            .collect();
        select(self.strategy, self.interrupted, &views)
    }

    pub(crate) fn status(&self) -> Status {
        let statuses: Vec<Status> = self.phases.iter().map(Phase::<K>::status).collect();
        let candidates: Vec<Status> = self
            .select_phases(&statuses)
            .into_iter()
            .map(|i| statuses[i])
            .collect();
        aggregate_status(
            &statuses,
            &candidates,
            !self.errors.is_empty(),
            self.interrupted,
        )
    }

    pub fn is_complete(&self) -> bool {
        self.status() == Status::Complete
    }

    /// The steps this plan would run now, before assets are considered
    /// (`coordinator.rs` removes steps whose asset is taken). A `DELAYED`
    /// step (backing off) is never offered, as the SDK's plan coordinator
    /// never offers one; its phase still counts it when it derives its own
    /// status, so a phase whose candidates are all `DELAYED` reads `DELAYED`.
    pub(crate) fn candidate_steps(&self) -> Vec<StepIndex> {
        self.candidate_phases()
            .into_iter()
            .flat_map(|phase| {
                self.phases[phase]
                    .candidate_steps()
                    .into_iter()
                    .filter(move |&step| self.phases[phase].steps[step].status != Status::Delayed)
                    .map(move |step| StepIndex { phase, step })
            })
            .collect()
    }

    pub(crate) fn step(&self, at: StepIndex) -> &super::step::Step<K> {
        &self.phases[at.phase].steps[at.step]
    }

    pub(crate) fn step_mut(&mut self, at: StepIndex) -> &mut super::step::Step<K> {
        &mut self.phases[at.phase].steps[at.step]
    }

    /// Every step, with where it sits, in tree order.
    pub fn steps(&self) -> impl Iterator<Item = (StepIndex, &super::step::Step<K>)> + Clone {
        self.phases.iter().enumerate().flat_map(|(phase, p)| {
            p.steps
                .iter()
                .enumerate()
                .map(move |(step, s)| (StepIndex { phase, step }, s))
        })
    }
}
