//! The plan document: the JSON form of a plan that round-trips every piece of
//! engine state (step statuses and interrupts, phase and plan interrupts,
//! canary choices, ids). Parent statuses are never stored: they are derived.
//!
//! Reading is strict (unknown fields, unknown strategies or statuses, dangling
//! references are refused with the offending name) but forgiving of what a
//! human leaves out: ids are generated, strategies default to serial, step
//! statuses to PENDING, and a canary phase is set up as the SDK sets it up.

use std::collections::HashSet;

use super::phase::Phase;
use super::plan::{DOCUMENT_VERSION, Plan};
use super::status::Status;

#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("not a valid plan document: {0}")]
    Malformed(#[from] serde_json::Error),
    #[error(
        "plan document version {found} is not supported: this roller reads version {DOCUMENT_VERSION}{hint}",
        hint = if *found > DOCUMENT_VERSION { " (the file was written by a newer roller: upgrade roller)" } else { "" }
    )]
    Version { found: u32 },
    #[error(
        "plan '{plan}' has strategy '{strategy}': canary strategies apply to phases only, as in the DC/OS SDK"
    )]
    CanaryPlan { plan: String, strategy: String },
    #[error("the id '{id}' is used by more than one element: ids must be unique within a plan")]
    DuplicateId { id: String },
    #[error("{at} must be a JSON object (with named fields), not {found}")]
    NotAnObject { at: String, found: &'static str },
    #[error("an element has an empty name: every plan, phase and step needs a name")]
    EmptyName,
    #[error(
        "step '{step}' has status IN_PROGRESS, which only phases and plans derive: store one of {}",
        step_statuses()
    )]
    ParentOnlyStatus { step: String },
    #[error(
        "'{element}' depends on '{reference}', which is not a sibling {kind} (give a sibling's id or name)"
    )]
    UnknownDependency {
        element: String,
        reference: String,
        kind: &'static str,
    },
    #[error(
        "'{element}' depends on '{reference}', which names more than one sibling {kind}: use its id"
    )]
    AmbiguousDependency {
        element: String,
        reference: String,
        kind: &'static str,
    },
    #[error(
        "the dependencies of {parent} form a cycle through '{element}': nothing in it could ever run"
    )]
    DependencyCycle { parent: String, element: String },
    #[error(
        "phase '{phase}' has canary state but strategy '{strategy}': remove \"canary\" or use a canary strategy"
    )]
    CanaryOnNonCanaryPhase { phase: String, strategy: String },
    #[error("phase '{phase}' has a canary count of 0: it must be at least 1")]
    CanaryCount { phase: String },
    #[error("phase '{phase}' names canary step '{id}', which is not one of its step ids")]
    UnknownCanaryStep { phase: String, id: String },
    #[error("{kind} '{name}' has no id: a stored plan names every phase and step by its id")]
    MissingId { kind: &'static str, name: String },
    #[error(
        "phase '{phase}' has strategy '{strategy}' but no chosen canary steps: a stored plan keeps the canaries it chose"
    )]
    CanaryNotChosen { phase: String, strategy: String },
}

fn step_statuses() -> String {
    Status::STEP_STATUSES.map(Status::as_str).join(", ")
}

impl<K> Plan<K> {
    /// Reads a plan document, filling in what a human may leave out.
    pub(crate) fn from_json(text: &str) -> Result<Plan<K>, DocumentError>
    where
        K: serde::de::DeserializeOwned,
    {
        // Syntax first (with line and column), then the shape serde would
        // otherwise bend: it reads a struct from an array, by position.
        let value: serde_json::Value = serde_json::from_str(text)?;
        check_objects(&value)?;
        let mut plan: Plan<K> = serde_json::from_str(text)?;
        plan.fill_in_ids();
        plan.validate()?;
        for phase in &mut plan.phases {
            phase.set_up_canary();
        }
        Ok(plan)
    }

    /// Checks a plan that roller stored itself (a checkpoint's), which is
    /// used as it stands: the rules of a document, and nothing left for
    /// loading to fill in (every phase and step has its id, every canary
    /// phase its chosen canaries), so that it reads the same as a document.
    pub(crate) fn check_stored(&self) -> Result<(), DocumentError> {
        self.validate()?;
        for phase in &self.phases {
            let unnamed = std::iter::once(("phase", &phase.id, &phase.name))
                .chain(phase.steps.iter().map(|s| ("step", &s.id, &s.name)))
                .find(|(_, id, _)| id.is_empty());
            if let Some((kind, _, name)) = unnamed {
                return Err(DocumentError::MissingId {
                    kind,
                    name: name.clone(),
                });
            }
            let chosen = phase.canary.as_ref().is_some_and(|c| c.steps.is_some());
            if phase.strategy.is_canary() && !chosen {
                return Err(DocumentError::CanaryNotChosen {
                    phase: phase.name.clone(),
                    strategy: phase.strategy.to_string(),
                });
            }
        }
        Ok(())
    }

    /// The document as stored: pretty JSON, fields in a fixed order, ending
    /// with a newline, so that saving a loaded document changes no byte.
    pub(crate) fn to_json(&self) -> String
    where
        K: serde::Serialize,
    {
        let mut text = serde_json::to_string_pretty(self).expect("a plan always serializes");
        text.push('\n');
        text
    }

    /// Gives every phase and step without an id one derived from where it
    /// sits, so that ids shown for a hand-written file (`plan show --json`)
    /// are the same on every load and can be used to name the element.
    fn fill_in_ids(&mut self) {
        let derived = |path: String| {
            uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, path.as_bytes()).to_string()
        };
        for (i, phase) in self.phases.iter_mut().enumerate() {
            let phase_path = format!("{}\u{0}{i}\u{0}{}", self.name, phase.name);
            for (j, step) in phase.steps.iter_mut().enumerate() {
                if step.id.is_empty() {
                    step.id = derived(format!("{phase_path}\u{0}{j}\u{0}{}", step.name));
                }
            }
            if phase.id.is_empty() {
                phase.id = derived(phase_path);
            }
        }
    }

    fn validate(&self) -> Result<(), DocumentError> {
        if self.version != DOCUMENT_VERSION {
            return Err(DocumentError::Version {
                found: self.version,
            });
        }
        if self.strategy.is_canary() {
            return Err(DocumentError::CanaryPlan {
                plan: self.name.clone(),
                strategy: self.strategy.to_string(),
            });
        }
        let mut ids = HashSet::new();
        let all_names = std::iter::once(&self.name)
            .chain(self.phases.iter().map(|p| &p.name))
            .chain(
                self.phases
                    .iter()
                    .flat_map(|p| p.steps.iter().map(|s| &s.name)),
            );
        if all_names.into_iter().any(String::is_empty) {
            return Err(DocumentError::EmptyName);
        }
        for id in self
            .phases
            .iter()
            .flat_map(|p| std::iter::once(&p.id).chain(p.steps.iter().map(|s| &s.id)))
        {
            if !ids.insert(id) {
                return Err(DocumentError::DuplicateId { id: id.clone() });
            }
        }
        for step in self.phases.iter().flat_map(|p| &p.steps) {
            if step.status == Status::InProgress {
                return Err(DocumentError::ParentOnlyStatus {
                    step: step.name.clone(),
                });
            }
        }
        let phase_edges =
            dependency_edges(&self.phases, "phase", |p| (&p.id, &p.name, &p.depends_on))?;
        check_acyclic(&phase_edges, &format!("plan '{}'", self.name), |i| {
            self.phases[i].name.clone()
        })?;
        for phase in &self.phases {
            validate_phase(phase)?;
        }
        Ok(())
    }
}

fn validate_phase<K>(phase: &Phase<K>) -> Result<(), DocumentError> {
    let step_edges = dependency_edges(&phase.steps, "step", |s| (&s.id, &s.name, &s.depends_on))?;
    check_acyclic(&step_edges, &format!("phase '{}'", phase.name), |i| {
        phase.steps[i].name.clone()
    })?;
    let Some(canary) = &phase.canary else {
        return Ok(());
    };
    if !phase.strategy.is_canary() {
        return Err(DocumentError::CanaryOnNonCanaryPhase {
            phase: phase.name.clone(),
            strategy: phase.strategy.to_string(),
        });
    }
    if canary.count == 0 {
        return Err(DocumentError::CanaryCount {
            phase: phase.name.clone(),
        });
    }
    for id in canary.steps.iter().flatten() {
        if !phase.steps.iter().any(|s| &s.id == id) {
            return Err(DocumentError::UnknownCanaryStep {
                phase: phase.name.clone(),
                id: id.clone(),
            });
        }
    }
    Ok(())
}

/// Refuses arrays (or anything else) where the plan, a phase, a canary or a
/// step must be an object; types inside them are serde's to check.
fn check_objects(plan: &serde_json::Value) -> Result<(), DocumentError> {
    use serde_json::Value;
    fn object(
        value: &Value,
        at: impl Fn() -> String,
    ) -> Result<&serde_json::Map<String, Value>, DocumentError> {
        value.as_object().ok_or_else(|| DocumentError::NotAnObject {
            at: at(),
            found: match value {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Object(_) => "an object",
            },
        })
    }
    let plan = object(plan, || "the plan document".to_string())?;
    let Some(Value::Array(phases)) = plan.get("phases") else {
        return Ok(());
    };
    for (i, phase) in phases.iter().enumerate() {
        let phase = object(phase, || format!("phases[{i}]"))?;
        if let Some(canary) = phase.get("canary") {
            object(canary, || format!("phases[{i}].canary"))?;
        }
        if let Some(Value::Array(steps)) = phase.get("steps") {
            for (j, step) in steps.iter().enumerate() {
                object(step, || format!("phases[{i}].steps[{j}]"))?;
            }
        }
    }
    Ok(())
}

/// Resolves every `depends_on` reference among siblings into index edges.
fn dependency_edges<T>(
    siblings: &[T],
    kind: &'static str,
    key: impl Fn(&T) -> (&String, &String, &Vec<String>),
) -> Result<Vec<Vec<usize>>, DocumentError> {
    siblings
        .iter()
        .map(|sibling| {
            let (_, name, refs) = key(sibling);
            refs.iter()
                .map(|reference| {
                    let by_id = siblings.iter().position(|s| key(s).0 == reference);
                    let by_name: Vec<usize> = (0..siblings.len())
                        .filter(|&i| key(&siblings[i]).1 == reference)
                        .collect();
                    match (by_id, by_name.as_slice()) {
                        (Some(index), _) | (None, &[index]) => Ok(index),
                        (None, []) => Err(DocumentError::UnknownDependency {
                            element: name.clone(),
                            reference: reference.clone(),
                            kind,
                        }),
                        (None, _) => Err(DocumentError::AmbiguousDependency {
                            element: name.clone(),
                            reference: reference.clone(),
                            kind,
                        }),
                    }
                })
                .collect()
        })
        .collect()
}

/// Refuses a dependency cycle (a self-dependency included), which would
/// leave its members waiting forever.
fn check_acyclic(
    edges: &[Vec<usize>],
    parent: &str,
    name: impl Fn(usize) -> String,
) -> Result<(), DocumentError> {
    // 0 = unvisited, 1 = on the current path, 2 = done.
    fn visit(node: usize, edges: &[Vec<usize>], state: &mut [u8]) -> Option<usize> {
        match state[node] {
            1 => return Some(node),
            2 => return None,
            _ => {}
        }
        state[node] = 1;
        for &next in &edges[node] {
            if let Some(found) = visit(next, edges, state) {
                return Some(found);
            }
        }
        state[node] = 2;
        None
    }
    let mut state = vec![0u8; edges.len()];
    for node in 0..edges.len() {
        if let Some(found) = visit(node, edges, &mut state) {
            return Err(DocumentError::DependencyCycle {
                parent: parent.to_string(),
                element: name(found),
            });
        }
    }
    Ok(())
}
