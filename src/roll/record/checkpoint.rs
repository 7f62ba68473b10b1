//! The checkpoint: everything a roll must remember to be resumed by another
//! process after a pause, a crash or a signal. A versioned JSON document
//! holding the environment it was made for (no secrets), the run id, the
//! original instances and sizes, what the roll changed (suspended
//! processes, a raised MaxSize, maintenance windows, app surges), the plan
//! with every step's status, and an intent log of timestamped events.
//!
//! It is written atomically (temp file, fsync, rename, fsync the folder),
//! mode 0600, before and after every side effect: intent, then result. A
//! checkpoint for another group, of a newer schema or that does not parse
//! is refused and left untouched. A checkpoint of an older schema (1 to
//! `VERSION` − 1) is migrated when read (`migrate.rs` says what each
//! step adds) and written back as `VERSION`.
//!
//! The record has two parts: what holds for the whole roll (the run id,
//! the settings fixed for it, the plan, the events) and one `GroupRoll`
//! per group it rolls. A step of the plan names its group by index
//! (`GroupStep`), and reaches that group's record through
//! `Checkpoint::group` / `split`; nothing reads "the current group".

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::held::{ProtectedPolicy, StandbyPolicy};
use super::kinds::{GroupIndex, RollPlan};
use crate::plan::StepIndex;

mod encoding;
mod error;
mod events;
mod failure;
mod group;
mod migrate;
mod moves;
mod pods;
mod run_lock;
mod store;

pub(crate) use error::CheckpointError;
pub(crate) use events::KEPT_EVENTS;
pub use events::{Event, EventKind};
pub(crate) use failure::{FailureRecord, NewAgent, OnFailure};
pub(crate) use group::{
    GroupRoll, MaintenanceRecord, OriginalGroup, Raised, RolledInstance, SurgeCap,
};
pub(crate) use moves::{Surge, SurgeState, WaveRecord};
pub(crate) use pods::{PodReplace, ServicesRecord};
pub(crate) use run_lock::{RunLock, RunLockError};
pub(crate) use store::CheckpointStore;

/// The schema this build writes (and reads; every older one is migrated).
pub(crate) const VERSION: u32 = 4;

/// Checkpoints name instances and hosts: readable by the owner only.
pub(crate) const FILE_MODE: u32 = 0o600;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    pub(crate) version: u32,
    /// Identifies this roll in the ASG tag, pages and `roller abandon`.
    pub run_id: String,
    /// Where the roll runs, as resolved when it started (no secrets).
    pub(crate) environment: RecordedEnvironment,
    /// Keep ceil(instances x minimumHealthCapacity) healthy, not just one
    /// (`--min-healthy capacity`, the default since roller 0.2; fixed for
    /// the whole roll). A checkpoint without it is an older roll's, which
    /// kept one.
    #[serde(default)]
    pub(crate) honor_min_health: bool,
    /// The drain's limit on old agents being terminated at once, per AZ
    /// (`--max-unavailable`; fixed for the roll).
    #[serde(default = "default_max_unavailable")]
    pub(crate) max_unavailable: u32,
    /// A failure found on the new agents: nothing more was moved,
    /// surged or terminated once it was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<FailureRecord>,
    /// What an operator acknowledged by resuming the roll that paused on
    /// a failure: `app/<id>` for a failure of an app (the watch leaves
    /// the app alone from then on), else the failure's own key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) acknowledged_failures: Vec<String>,
    /// How many distinct apps, or distinct new agents, may fail on the
    /// new image before it counts as bad (`--failure-limit`, key
    /// `failure_limit`; 0, the default, turns around at the first
    /// failure). A resume may change it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) failure_limit: u32,
    /// CloudWatch alarms watched (`alarms`, `--alarm`): one in ALARM from
    /// the first new agent to the last termination is a failure on the
    /// new image. A resume may change them; a checkpoint without them is
    /// a roll that watches none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) alarms: Vec<String>,
    /// Failures found while within the limit: each counted against it
    /// for the rest of the roll and never reported again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) tolerated_failures: Vec<FailureRecord>,
    /// What the roll does with instances in Standby (`--standby`, key
    /// `standby`), as chosen when it began.
    #[serde(default)]
    pub(crate) standby: StandbyPolicy,
    /// What the roll does with scale-in protected instances
    /// (`--protected`, key `protected`), as chosen when it began.
    #[serde(default)]
    pub(crate) protected: ProtectedPolicy,
    /// What the roll does on a failure found on the new agents
    /// (`--on-failure`; a resume may change it).
    #[serde(default)]
    pub(crate) on_failure: OnFailure,
    /// Apps allowed to be unhealthy (`--allow-unhealthy`, at the start or
    /// on any resume): the preflight and every health wait leave them out.
    #[serde(default)]
    pub allow_unhealthy: Vec<String>,
    /// Set while the roll is paused by a timeout (its step reads DELAYED).
    pub pause: Option<Pause>,
    /// A page that went out for a pause the roll has since resumed from:
    /// resolved when that step completes, the plan completes, the step is
    /// force-completed, or the roll is abandoned.
    #[serde(default)]
    pub(crate) open_page: Option<OpenPage>,
    /// When each unfinished step started and what it waits for since when,
    /// by step id, so that a resume knows how long a wait has run.
    #[serde(default)]
    pub(crate) progress: BTreeMap<String, StepProgress>,
    /// Ids of the operator operations queued for a live run that it has
    /// applied (`roller plan …` while a run holds the checkpoint).
    #[serde(default)]
    pub(crate) operations_applied: Vec<String>,
    /// Old agents deactivated and pods replaced for DC/OS SDK services.
    #[serde(default, skip_serializing_if = "ServicesRecord::is_empty")]
    pub(crate) services: ServicesRecord,
    /// What the roll concluded (the AZ rebalance report), once known.
    #[serde(default)]
    pub(crate) summary: Option<String>,
    /// The groups the roll replaces the agents of, in plan order (one for
    /// a single-ASG environment): what the roll knows and changed of each.
    /// Never empty (a checkpoint without one is refused when read); the
    /// first names the checkpoint.
    pub groups: Vec<GroupRoll>,
    /// Every step says what it does and to which of `groups`.
    pub plan: RollPlan,
    pub events: Vec<Event>,
    /// How many routine events (`EventKind::is_routine`) this file left
    /// out once old (`events_as_written`): a roll of 2,000 agents logs
    /// thousands, and the checkpoint is written whole a few times a tick.
    /// A file checkpoint's are in its event log beside it. Absent in
    /// checkpoints written before: none left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) events_dropped: u64,
    /// How many of the first `events` are old ones kept (not routine, or
    /// the latest of their kind) that the event log beside the checkpoint
    /// has already: a resumed run appends only what comes after them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) events_in_log: u64,
}

/// When a step started, and the wait it is in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepProgress {
    pub(crate) started_unix_ms: u64,
    #[serde(default)]
    pub(crate) wait: Option<WaitRecord>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitRecord {
    pub(crate) kind: super::kinds::WaitKind,
    pub(crate) since_unix_ms: u64,
    /// How much later than its kind's timeout the deadline is: the
    /// longest heartbeat timeout of the lifecycle hooks (someone else's)
    /// seen holding what the step waits for. Kept once seen, so the time
    /// the hook held it still counts when the hook is done. Absent in
    /// checkpoints written before hooks were read: zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) extended_ms: u64,
}

/// Whether a count is 0: such fields are left out of the file, so a
/// checkpoint written without them reads the same.
fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// A page still open for a step the roll resumed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OpenPage {
    /// `phase/step`.
    pub(crate) step: String,
    pub(crate) dedup_key: String,
}

/// The environment's non-secret keys, to refuse resuming somewhere else.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordedEnvironment {
    pub(crate) region: Option<String>,
    pub(crate) aws_endpoint_url: Option<String>,
    pub(crate) mesos: Vec<String>,
    pub(crate) marathon: Vec<String>,
    #[serde(rename = "match")]
    pub(crate) agent_match: String,
}

impl RecordedEnvironment {
    /// What differs between the environment this checkpoint was made for
    /// and `now`, one phrase each (empty: the same cluster).
    pub(crate) fn differences(&self, now: &RecordedEnvironment) -> Vec<String> {
        fn sorted(list: &[String]) -> Vec<&str> {
            let mut list: Vec<&str> = list.iter().map(|s| s.trim_end_matches('/')).collect();
            list.sort_unstable();
            list
        }
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(unset)".to_string());
        let mut out = Vec::new();
        if self.region != now.region {
            out.push(format!(
                "region {} then, {} now",
                show(&self.region),
                show(&now.region)
            ));
        }
        if self.aws_endpoint_url != now.aws_endpoint_url {
            out.push(format!(
                "AWS endpoint {} then, {} now",
                show(&self.aws_endpoint_url),
                show(&now.aws_endpoint_url)
            ));
        }
        for (what, then, current) in [
            ("Mesos masters", &self.mesos, &now.mesos),
            ("Marathons", &self.marathon, &now.marathon),
        ] {
            if sorted(then) != sorted(current) {
                out.push(format!(
                    "{what} {} then, {} now",
                    then.join(","),
                    current.join(",")
                ));
            }
        }
        if self.agent_match != now.agent_match {
            out.push(format!(
                "match {} then, {} now",
                self.agent_match, now.agent_match
            ));
        }
        out
    }
}

/// The least default `--max-unavailable` (old agents being terminated at
/// once per AZ; see `preflight::default_max_unavailable`), and what a
/// checkpoint without the field reads as.
pub(crate) const DEFAULT_MAX_UNAVAILABLE: u32 = 5;

fn default_max_unavailable() -> u32 {
    DEFAULT_MAX_UNAVAILABLE
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pause {
    /// `phase/step` that timed out.
    pub step: String,
    pub(crate) reason: String,
    pub(crate) since: String,
    /// The page's dedup key, resolved when a resume gets past the step.
    pub(crate) dedup_key: String,
    /// Whether a pager is configured and accepted the page.
    #[serde(default)]
    pub paged: bool,
}

/// The separator between a group and a phase in a phase's id
/// (`<asg>:drain`): ASG names cannot hold a colon.
pub(crate) const GROUP_SEPARATOR: char = ':';

/// The id of the phase (or fixed-word step) `phase` of the group `asg`
/// in a plan of `groups` groups: the bare id for one group (as plans
/// always had), else `<asg>:<phase>`. Ids are made from the group, never
/// read back into one: a step's group is in its kind (`GroupStep`).
pub(crate) fn group_phase_id(asg: &str, phase: &str, groups: usize) -> String {
    if groups > 1 {
        format!("{asg}{GROUP_SEPARATOR}{phase}")
    } else {
        phase.to_string()
    }
}

/// What holds for the whole roll, read-only, beside one group's record:
/// a step reads the settings fixed for the roll and the plan here, and
/// writes only its own group.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RollView<'a> {
    pub(crate) run_id: &'a str,
    pub(crate) honor_min_health: bool,
    pub(crate) max_unavailable: u32,
    pub(crate) acknowledged_failures: &'a [String],
    pub(crate) plan: &'a RollPlan,
    pub(crate) standby: StandbyPolicy,
    pub(crate) services: &'a ServicesRecord,
}

impl Checkpoint {
    /// The record of the group `g` (a step's group: `parse` refuses a
    /// plan whose steps name a group the checkpoint does not hold).
    pub(crate) fn group(&self, g: GroupIndex) -> &GroupRoll {
        &self.groups[g.0]
    }

    pub(crate) fn group_mut(&mut self, g: GroupIndex) -> &mut GroupRoll {
        &mut self.groups[g.0]
    }

    /// The groups with their indices, in plan order.
    pub(crate) fn indexed_groups(&self) -> impl Iterator<Item = (GroupIndex, &GroupRoll)> {
        self.groups
            .iter()
            .enumerate()
            .map(|(i, g)| (GroupIndex(i), g))
    }

    /// The roll-wide record, read-only.
    pub(crate) fn view(&self) -> RollView<'_> {
        RollView {
            run_id: &self.run_id,
            honor_min_health: self.honor_min_health,
            max_unavailable: self.max_unavailable,
            acknowledged_failures: &self.acknowledged_failures,
            plan: &self.plan,
            standby: self.standby,
            services: &self.services,
        }
    }

    /// The group the step at `at` acts on (`None`: a step without a
    /// kind, which `parse` refuses).
    pub(crate) fn group_of(&self, at: StepIndex) -> Option<GroupIndex> {
        self.plan.step(at).kind.as_ref().map(|k| k.group)
    }

    /// The name the checkpoint goes by (its file, its archive, the
    /// checks on resume): its first group's ASG.
    pub(crate) fn name(&self) -> &str {
        self.groups.first().map_or("", |g| g.asg.as_str())
    }

    /// Every group's ASG name, in plan order.
    pub(crate) fn group_names(&self) -> Vec<&str> {
        self.groups.iter().map(|g| g.asg.as_str()).collect()
    }

    /// The default place: `<dir>/<asg>.json`.
    pub(crate) fn default_path(dir: &Path, asg: &str) -> PathBuf {
        dir.join(format!("{asg}.json"))
    }

    /// Reads a checkpoint; `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<Checkpoint>, CheckpointError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(CheckpointError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Checkpoint::parse(path, &Checkpoint::text_of(path, bytes)?).map(Some)
    }

    /// The JSON text of a checkpoint's bytes as read (gzip'd from 512 KiB:
    /// `encoding`).
    pub(crate) fn text_of(path: &Path, bytes: Vec<u8>) -> Result<String, CheckpointError> {
        encoding::decode(bytes).map_err(|reason| CheckpointError::Corrupt {
            path: path.to_path_buf(),
            reason,
        })
    }

    pub fn parse(path: &Path, text: &str) -> Result<Checkpoint, CheckpointError> {
        let corrupt = |reason: String| CheckpointError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        // The version is read first, so that a newer schema is named as such
        // rather than as whatever field this build does not know.
        let mut value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))?;
        let found = match value.get("version").and_then(serde_json::Value::as_u64) {
            Some(found) if found > u64::from(VERSION) => {
                return Err(CheckpointError::Newer {
                    path: path.to_path_buf(),
                    found,
                });
            }
            Some(found @ 1..) => found,
            Some(found) => {
                return Err(corrupt(format!(
                    "schema version {found} does not exist (this roller reads 1 to {VERSION})"
                )));
            }
            None => return Err(corrupt("no numeric \"version\"".to_string())),
        };
        migrate::to_current(&mut value, found).map_err(corrupt)?;
        let mut checkpoint: Checkpoint =
            serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
        if found == 1 {
            migrate::after_v1(&mut checkpoint);
        }
        if checkpoint.groups.is_empty() {
            return Err(corrupt(
                "it rolls no group (\"groups\" is empty)".to_string(),
            ));
        }
        checkpoint.check_steps().map_err(corrupt)?;
        // The plan is run as stored: one a plan document would refuse
        // (a dangling dependency, two steps with one id, a canary phase
        // without its canaries) would misbehave silently.
        checkpoint
            .plan
            .check_stored()
            .map_err(|e| corrupt(format!("its plan is not valid: {e}")))?;
        Ok(checkpoint)
    }

    /// Every step of the plan says what it does, to a group the
    /// checkpoint holds; an error names the first that does not.
    fn check_steps(&self) -> Result<(), String> {
        for (_, step) in self.plan.steps() {
            let Some(kind) = &step.kind else {
                return Err(format!("step '{}' of the plan has no \"kind\"", step.id));
            };
            if kind.group.0 >= self.groups.len() {
                return Err(format!(
                    "step '{}' acts on group {}, but the checkpoint rolls {} group(s) ({})",
                    step.id,
                    kind.group.0,
                    self.groups.len(),
                    self.group_names().join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Refuses a checkpoint made for another group (one whose name, its
    /// first group, is not `asg`).
    pub(crate) fn check_group(&self, path: &Path, asg: &str) -> Result<(), CheckpointError> {
        if self.name() == asg {
            Ok(())
        } else {
            Err(CheckpointError::OtherGroup {
                path: path.to_path_buf(),
                expected: asg.to_string(),
                found: self.name().to_string(),
            })
        }
    }

    /// Writes the whole checkpoint atomically.
    #[cfg(test)]
    pub(crate) fn save(&self, path: &Path) -> Result<(), CheckpointError> {
        let json = self.to_json(path)?;
        self.write(path, &json).map(drop)
    }

    /// Records, at `at`, the intent of a side effect, unless the last
    /// event is that same intent: a call failing tick after tick is sent
    /// again under the one intent, not one per tick.
    pub(crate) fn intend(&mut self, at: SystemTime, message: impl Into<String>) {
        let message = message.into();
        let repeated = self
            .events
            .last()
            .is_some_and(|e| e.kind == EventKind::Intent && e.message == message);
        if !repeated {
            self.log(at, EventKind::Intent, message);
        }
    }

    /// Appends an event stamped `at` (the roll's clock: the time its step
    /// messages and waits are told in).
    pub fn log(&mut self, at: SystemTime, kind: EventKind, message: impl Into<String>) {
        self.events.push(Event {
            at: utc(at),
            kind,
            message: message.into(),
            user: None,
            label: None,
        });
    }

    /// Where the step `phase/step` (as a pause names it) sits in the plan.
    pub(crate) fn find_step(&self, name: &str) -> Option<StepIndex> {
        let (phase, step) = name.split_once('/')?;
        self.plan.steps().find_map(|(at, s)| {
            (self.plan.phases[at.phase].id == phase && s.id == step).then_some(at)
        })
    }

    /// `phase/step`, as pauses, pages and events name the step at `at`.
    pub(crate) fn step_name(&self, at: StepIndex) -> String {
        let phase = &self.plan.phases[at.phase];
        format!("{}/{}", phase.id, phase.steps[at.step].id)
    }

    /// The id of the group `g`'s phase `phase` (`drain`, `terminate`):
    /// `<asg>:drain` in a plan of several groups.
    pub(crate) fn phase_id(&self, g: GroupIndex, phase: &str) -> String {
        group_phase_id(&self.group(g).asg, phase, self.groups.len())
    }

    /// The group `g`'s phase `phase` (bare id: `drain`), if the plan has it.
    pub(crate) fn phase_of(&self, g: GroupIndex, phase: &str) -> Option<usize> {
        let id = self.phase_id(g, phase);
        self.plan.phases.iter().position(|p| p.id == id)
    }
}

/// RFC 3339 UTC with second precision, without a date crate.
pub(crate) fn utc(at: SystemTime) -> String {
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests;
