//! A phase: an ordered group of steps with a strategy, including the canary
//! gate, whose state is which steps are the canaries.

use serde::{Deserialize, Serialize};

use super::aggregate::aggregate_status;
use super::status::Status;
use super::step::{Step, new_id};
use super::strategy::{ChildView, Strategy, select};

/// The SDK's default number of `continue`s a canary needs.
pub(crate) const DEFAULT_CANARY_COUNT: u32 = 2;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(bound(serialize = "K: Serialize", deserialize = "K: Deserialize<'de>"))]
pub struct Phase<K = serde_json::Value> {
    /// Generated when a hand-written document leaves it out (see
    /// `Plan::from_json`); unique within the plan.
    #[serde(default)]
    pub id: String,
    pub(crate) name: String,
    #[serde(default = "serial")]
    pub(crate) strategy: Strategy,
    /// The strategy's own interrupt flag. A canary phase also reads as
    /// interrupted while its next canary step awaits `continue`.
    #[serde(default)]
    pub(crate) interrupted: bool,
    /// Sibling phases (id or name) that must be COMPLETE first; only a plan
    /// with the `dependency` strategy reads it.
    #[serde(default)]
    pub(crate) depends_on: Vec<String>,
    /// Present exactly when the strategy is a canary one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) canary: Option<Canary>,
    #[serde(default)]
    pub steps: Vec<Step<K>>,
}

/// Canary state. Chosen once, when the phase is first set up, and stored, so
/// that a reload never picks different canaries (the SDK picks them in the
/// strategy's constructor and keeps them for the scheduler's lifetime).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Canary {
    /// How many `continue`s the canary takes.
    #[serde(default = "default_canary_count")]
    pub(crate) count: u32,
    /// Ids of the canary steps, in step order; absent until set up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) steps: Option<Vec<String>>,
}

fn serial() -> Strategy {
    Strategy::Serial
}

fn default_canary_count() -> u32 {
    DEFAULT_CANARY_COUNT
}

impl<K> Phase<K> {
    pub(crate) fn new(
        name: impl Into<String>,
        strategy: Strategy,
        steps: Vec<Step<K>>,
    ) -> Phase<K> {
        let mut phase = Phase {
            id: new_id(),
            name: name.into(),
            strategy,
            interrupted: false,
            depends_on: Vec::new(),
            canary: None,
            steps,
        };
        phase.set_up_canary();
        phase
    }

    /// Sets up a canary phase whose canary steps are not recorded yet, as
    /// the SDK's `CanaryStrategy` constructor does: the first `count` steps
    /// that are not COMPLETE become the canaries and are interrupted. (The
    /// SDK picks steps that read PENDING or are interrupted; a not-complete
    /// step that is already acting is a canary here too, so a half-done
    /// phase still waits for the operator.) Does nothing once set up.
    pub(crate) fn set_up_canary(&mut self) {
        if !self.strategy.is_canary() {
            return;
        }
        let canary = self.canary.get_or_insert(Canary {
            count: DEFAULT_CANARY_COUNT,
            steps: None,
        });
        if canary.steps.is_some() {
            return;
        }
        let mut chosen = Vec::new();
        for step in self
            .steps
            .iter_mut()
            .filter(|step| !step.is_complete())
            .take(canary.count as usize)
        {
            step.interrupted = true;
            chosen.push(step.id.clone());
        }
        canary.steps = Some(chosen);
    }

    fn canary_indices(&self) -> Vec<usize> {
        let Some(ids) = self.canary.as_ref().and_then(|c| c.steps.as_ref()) else {
            return Vec::new();
        };
        (0..self.steps.len())
            .filter(|&i| ids.contains(&self.steps[i].id))
            .collect()
    }

    /// The first canary step still waiting for its `continue`; while there
    /// is one, the phase is in its canary period.
    fn next_canary_step(&self) -> Option<usize> {
        self.canary_indices()
            .into_iter()
            .find(|&i| self.steps[i].interrupted)
    }

    pub(crate) fn in_canary(&self) -> bool {
        self.strategy.is_canary() && self.next_canary_step().is_some()
    }

    /// The SDK's `ParentElement.isInterrupted`: the strategy's flag, or, in
    /// a canary period, no released canary step left to work on.
    pub(crate) fn is_interrupted(&self) -> bool {
        if self.in_canary() {
            let released_unfinished = self
                .canary_indices()
                .into_iter()
                .any(|i| !self.steps[i].interrupted && !self.steps[i].is_complete());
            if !released_unfinished {
                return true;
            }
        }
        self.interrupted
    }

    /// `continue`: releases the next canary step while in canary, else
    /// clears the strategy's interrupt flag. A canary step that was
    /// force-completed while held needs no release of its own, so it is
    /// released in passing together with the next one (the SDK would spend
    /// a `continue` on it that visibly changes nothing).
    pub(crate) fn proceed(&mut self) {
        if !self.in_canary() {
            self.interrupted = false;
            return;
        }
        while let Some(i) = self.next_canary_step() {
            self.steps[i].interrupted = false;
            if !self.steps[i].is_complete() {
                break;
            }
        }
    }

    /// `interrupt`: ignored during the canary period, as in the SDK.
    pub(crate) fn interrupt(&mut self) {
        if !self.in_canary() {
            self.interrupted = true;
        }
    }

    /// Indices of the steps this phase's strategy would run now, in order.
    pub(crate) fn candidate_steps(&self) -> Vec<usize> {
        if self.in_canary() {
            return self
                .canary_indices()
                .into_iter()
                .filter(|&i| self.steps[i].is_eligible())
                .collect();
        }
        let views: Vec<ChildView> = self
            .steps
            .iter()
            .map(|step| ChildView {
                eligible: step.is_eligible(),
                complete: step.is_complete(),
                depends_on: resolve_all(&step.depends_on, &self.steps, |s| (&s.id, &s.name)),
            })
            .collect();
        select(self.strategy, self.interrupted, &views)
    }

    pub(crate) fn status(&self) -> Status {
        let children: Vec<Status> = self.steps.iter().map(Step::<K>::status).collect();
        let candidates: Vec<Status> = self
            .candidate_steps()
            .into_iter()
            .map(|i| children[i])
            .collect();
        aggregate_status(&children, &candidates, false, self.is_interrupted())
    }
}

/// Resolves sibling references (id first, then name); unresolvable ones are
/// dropped here because loading a document already refuses them.
pub(crate) fn resolve_all<T>(
    refs: &[String],
    siblings: &[T],
    key: impl Fn(&T) -> (&String, &String),
) -> Vec<usize> {
    refs.iter()
        .filter_map(|r| resolve(r, siblings, &key))
        .collect()
}

pub(crate) fn resolve<T>(
    reference: &str,
    siblings: &[T],
    key: impl Fn(&T) -> (&String, &String),
) -> Option<usize> {
    siblings
        .iter()
        .position(|s| key(s).0 == reference)
        .or_else(|| siblings.iter().position(|s| key(s).1 == reference))
}
