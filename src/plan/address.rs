//! Finding the element an operator names: phases and steps by id or name,
//! ids matching first, with errors that list what exists.

use std::fmt;

use super::operation::Target;
use super::plan::{Plan, StepIndex};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    #[error("plan '{plan}' has no phase '{given}'; its phases are: {}", list(.available))]
    UnknownPhase {
        plan: String,
        given: String,
        available: Vec<Element>,
    },
    #[error("'{given}' names more than one phase: {}; give the phase's id", list(.matches))]
    AmbiguousPhase {
        given: String,
        matches: Vec<Element>,
    },
    #[error("{scope} has no step '{given}'; its steps are: {}", list(.available))]
    UnknownStep {
        scope: String,
        given: String,
        available: Vec<Element>,
    },
    #[error("'{given}' names more than one step: {}; {hint}", list(.matches))]
    AmbiguousStep {
        given: String,
        matches: Vec<Element>,
        hint: &'static str,
    },
}

/// An element as shown in an error: where it is, its name and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    pub(crate) path: String,
    pub(crate) id: String,
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' (id {})", self.path, self.id)
    }
}

fn list(elements: &[Element]) -> String {
    if elements.is_empty() {
        return "none".to_string();
    }
    elements
        .iter()
        .map(Element::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Picks the candidates whose id is `given`, or failing that whose name is.
fn matching<T>(
    items: impl Iterator<Item = T> + Clone,
    given: &str,
    id: impl Fn(&T) -> &str,
    name: impl Fn(&T) -> &str,
) -> Vec<T> {
    let by_id: Vec<T> = items.clone().filter(|item| id(item) == given).collect();
    if !by_id.is_empty() {
        return by_id;
    }
    items.filter(|item| name(item) == given).collect()
}

impl<K> Plan<K> {
    /// Resolves `--phase` / `--step` to an element. Neither: the plan.
    pub(crate) fn find(
        &self,
        phase: Option<&str>,
        step: Option<&str>,
    ) -> Result<Target, AddressError> {
        let phase = match phase {
            None => None,
            Some(given) => Some(self.find_phase(given)?),
        };
        let Some(given) = step else {
            return Ok(phase.map_or(Target::Plan, Target::Phase));
        };
        let steps = self
            .steps()
            .filter(|(at, _)| phase.is_none_or(|p| p == at.phase));
        let matches = matching(steps.clone(), given, |(_, s)| &s.id, |(_, s)| &s.name);
        match matches.as_slice() {
            [(at, _)] => Ok(Target::Step(*at)),
            [] => Err(AddressError::UnknownStep {
                scope: match phase {
                    Some(p) => format!("phase '{}'", self.phases[p].name),
                    None => format!("plan '{}'", self.name),
                },
                given: given.to_string(),
                available: steps.map(|(at, _)| self.step_element(at)).collect(),
            }),
            _ => Err(AddressError::AmbiguousStep {
                given: given.to_string(),
                hint: if phase.is_some() {
                    "give the step's id"
                } else {
                    "give --phase or the step's id"
                },
                matches: matches
                    .iter()
                    .map(|(at, _)| self.step_element(*at))
                    .collect(),
            }),
        }
    }

    fn find_phase(&self, given: &str) -> Result<usize, AddressError> {
        let phases = self.phases.iter().enumerate();
        let matches = matching(phases, given, |(_, p)| &p.id, |(_, p)| &p.name);
        let element = |i: usize| Element {
            path: self.phases[i].name.clone(),
            id: self.phases[i].id.clone(),
        };
        match matches.as_slice() {
            [(i, _)] => Ok(*i),
            [] => Err(AddressError::UnknownPhase {
                plan: self.name.clone(),
                given: given.to_string(),
                available: (0..self.phases.len()).map(element).collect(),
            }),
            _ => Err(AddressError::AmbiguousPhase {
                given: given.to_string(),
                matches: matches.iter().map(|(i, _)| element(*i)).collect(),
            }),
        }
    }

    fn step_element(&self, at: StepIndex) -> Element {
        let step = self.step(at);
        Element {
            path: format!("{}/{}", self.phases[at.phase].name, step.name),
            id: step.id.clone(),
        }
    }
}
