//! Operator operations on a plan, with the SDK plan API's meaning
//! (`PlansQueries`): continue, interrupt, force-complete, restart, start, stop.
//!
//! Each returns whether it changed the stored plan. "Already done" is the
//! SDK's 208: either the SDK's own guard says there is nothing to do (e.g.
//! `continue` on a phase that is running), or the operation ran and no stored
//! field changed (e.g. `interrupt` during a canary, which the SDK ignores).

use std::fmt;
use std::str::FromStr;

use super::plan::{Plan, StepIndex};
use super::status::Status;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Operation {
    /// Clear an interrupt (a canary phase: release the next canary step).
    Continue,
    /// Set an interrupt; work already started is not stopped.
    Interrupt,
    /// Mark every step under the target COMPLETE.
    ForceComplete,
    /// Clear the target's interrupt and set every step under it PENDING.
    Restart,
    /// Restart the target if it is COMPLETE, then continue it.
    Start,
    /// Interrupt the target, then set every step under it PENDING.
    Stop,
}

impl Operation {
    pub(crate) const ALL: [Operation; 6] = [
        Operation::Continue,
        Operation::Interrupt,
        Operation::ForceComplete,
        Operation::Restart,
        Operation::Start,
        Operation::Stop,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Operation::Continue => "continue",
            Operation::Interrupt => "interrupt",
            Operation::ForceComplete => "force-complete",
            Operation::Restart => "restart",
            Operation::Start => "start",
            Operation::Stop => "stop",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Operation {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Operation::ALL
            .into_iter()
            .find(|op| op.as_str() == s)
            .ok_or_else(|| format!("unknown operation '{s}'"))
    }
}

/// The element an operation applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    Plan,
    Phase(usize),
    Step(StepIndex),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Changed,
    /// Nothing was changed: the SDK's 208 "already reported or completed".
    AlreadyDone,
}

impl<K: Clone + PartialEq> Plan<K> {
    /// An element as operators and the event log name it: `plan 'roll'`,
    /// `phase 'drain'`, `step 'wave-1' of phase 'drain'`.
    pub(crate) fn describe(&self, target: Target) -> String {
        match target {
            Target::Plan => format!("plan '{}'", self.name),
            Target::Phase(i) => format!("phase '{}'", self.phases[i].name),
            Target::Step(at) => format!(
                "step '{}' of phase '{}'",
                self.step(at).name,
                self.phases[at.phase].name
            ),
        }
    }

    /// The derived status of any element.
    pub(crate) fn status_of(&self, target: Target) -> Status {
        match target {
            Target::Plan => self.status(),
            Target::Phase(phase) => self.phases[phase].status(),
            Target::Step(at) => self.step(at).status(),
        }
    }

    fn is_interrupted(&self, target: Target) -> bool {
        match target {
            Target::Plan => self.interrupted,
            Target::Phase(phase) => self.phases[phase].is_interrupted(),
            Target::Step(at) => self.step(at).interrupted,
        }
    }

    fn proceed(&mut self, target: Target) {
        match target {
            Target::Plan => self.interrupted = false,
            Target::Phase(phase) => self.phases[phase].proceed(),
            Target::Step(at) => self.step_mut(at).interrupted = false,
        }
    }

    fn interrupt(&mut self, target: Target) {
        match target {
            Target::Plan => self.interrupted = true,
            Target::Phase(phase) => self.phases[phase].interrupt(),
            Target::Step(at) => self.step_mut(at).interrupted = true,
        }
    }

    /// Sets the stored status of every step under `target`.
    fn set_steps(&mut self, target: Target, status: Status) {
        let phases = match target {
            Target::Plan => 0..self.phases.len(),
            Target::Phase(phase) => phase..phase + 1,
            Target::Step(at) => {
                self.step_mut(at).status = status;
                return;
            }
        };
        for phase in &mut self.phases[phases] {
            for step in &mut phase.steps {
                step.status = status;
            }
        }
    }

    /// Applies an operator operation. `target` must come from this plan
    /// (see `address.rs`).
    pub(crate) fn apply(&mut self, operation: Operation, target: Target) -> Outcome {
        let before = self.clone();
        let status = self.status_of(target);
        let complete = status == Status::Complete;
        match operation {
            Operation::Continue => {
                // PlansQueries.continuePlan: nothing to do for a running or
                // complete plan or phase. (The SDK has no step-level continue:
                // for a step it simply clears the step's interrupt.)
                let parent = !matches!(target, Target::Step(_));
                if parent && (status.is_running() || complete) {
                    return Outcome::AlreadyDone;
                }
                self.proceed(target);
            }
            Operation::Interrupt => {
                if self.is_interrupted(target) || complete {
                    return Outcome::AlreadyDone;
                }
                self.interrupt(target);
            }
            Operation::ForceComplete => {
                if complete {
                    return Outcome::AlreadyDone;
                }
                self.set_steps(target, Status::Complete);
            }
            Operation::Restart => {
                if status == Status::Pending {
                    return Outcome::AlreadyDone;
                }
                self.proceed(target);
                self.set_steps(target, Status::Pending);
            }
            Operation::Start => {
                if complete {
                    self.set_steps(target, Status::Pending);
                }
                self.proceed(target);
            }
            Operation::Stop => {
                self.interrupt(target);
                self.set_steps(target, Status::Pending);
            }
        }
        if *self == before {
            Outcome::AlreadyDone
        } else {
            Outcome::Changed
        }
    }
}
