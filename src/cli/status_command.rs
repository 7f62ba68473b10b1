//! `roller status`: a roll's checkpoint as the operator needs it (the plan
//! tree, a pause, whether a run holds its lock, the latest events), read
//! without writing anything, and the roll's state (complete, running,
//! paused, held, stopped, failed) as the exit code, so a script can tell
//! whether to wait, resume or call someone.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::StatusArgs;
use super::error::{CliError, exit_code};
use super::output::alarm_names;
use super::wiring::{checkpoint_store, checkpoint_store_alone, environment_from, runtime};
use crate::plan::{self, Status as StepStatus};
use crate::roll::record::checkpoint::{Checkpoint, Event, EventKind, Pause, RunLock};

pub(super) const HELP: &str = "\
Reads the checkpoint and writes nothing, not even its lock file.

Exit codes (the same with --json):
  0    the plan is COMPLETE (e.g. an archived *.complete.json), or a run holds
       the lock now (the roll is in progress)
  1    the last run failed (nothing got past its latest failure, or a step is
       ERROR): fix what it names, then rerun `roller run`
  2    no checkpoint there, or one this roller cannot read
  3    paused (a wait timed out, or another writer changed the group), held
       (an operator's interrupt or a canary waits for `roller plan
       continue`), or stopped (a signal or a crash) with no run holding it:
       rerun `roller run` to resume

--json prints {\"run_id\", \"asg\", \"target\", \"locked\", \"state\", \"pause\",
\"plan\", \"events\"}, \"state\" being one of \"complete\", \"running\", \"paused\",
\"held\", \"stopped\", \"failed\".";

/// Where a roll stands, as `roller status` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RollState {
    /// The plan is COMPLETE.
    Complete,
    /// A run holds the checkpoint's lock now.
    Running,
    /// A wait timed out (the checkpoint's `pause`): a rerun resumes.
    Paused,
    /// Nothing can run until an operator's `roller plan continue` (an
    /// interrupt, or a canary waiting).
    Held,
    /// Neither of the above and no run holds it: a signal or a crash
    /// ended the last run; a rerun resumes.
    Stopped,
    /// The last run ended on a failure, or a step is ERROR.
    Failed,
}

impl RollState {
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            RollState::Complete | RollState::Running => exit_code::DONE,
            RollState::Failed => exit_code::FAILED,
            RollState::Paused | RollState::Held | RollState::Stopped => exit_code::PAUSED,
        }
    }

    fn name(self) -> &'static str {
        match self {
            RollState::Complete => "complete",
            RollState::Running => "running",
            RollState::Paused => "paused",
            RollState::Held => "held",
            RollState::Stopped => "stopped",
            RollState::Failed => "failed",
        }
    }
}

impl std::fmt::Display for RollState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Events that end a run or show it got on: a failure followed by one of
/// them is not the last run's end.
const LATER_THAN_A_FAILURE: [EventKind; 4] = [
    EventKind::Resume,
    EventKind::Step,
    EventKind::Pause,
    EventKind::Stop,
];

/// The roll's state from its checkpoint and whether a run holds the lock
/// (pure). A held lock means a run is at work, whatever the file said when
/// it was last written; without one, a failure outranks the pause it may
/// have happened under, and "held" is exactly when a rerun would find no
/// step to run, as the runner decides it.
pub(crate) fn roll_state(checkpoint: &Checkpoint, locked: bool) -> RollState {
    if checkpoint.plan.is_complete() {
        RollState::Complete
    } else if locked {
        RollState::Running
    } else if last_failure(checkpoint).is_some() {
        RollState::Failed
    } else if held(checkpoint) {
        RollState::Held
    } else if checkpoint.pause.is_some() {
        RollState::Paused
    } else {
        RollState::Stopped
    }
}

/// Whether the plan offers no step even once a paused step runs again:
/// an operator's interrupt or a waiting canary holds it, and only `roller
/// plan continue` releases it (a rerun does not).
fn held(checkpoint: &Checkpoint) -> bool {
    let mut plan = checkpoint.plan.clone();
    for phase in &mut plan.phases {
        for step in &mut phase.steps {
            if step.status == StepStatus::Delayed {
                step.status = StepStatus::Started;
            }
        }
    }
    // The last run ended held with steps still offered (the drain's
    // terminations wait for a drain that a canary holds), and nothing
    // happened since (a `roller plan continue` would be logged after it).
    let ended_held = checkpoint
        .events
        .last()
        .is_some_and(|e| e.kind == crate::roll::record::checkpoint::EventKind::Held);
    ended_held || crate::plan::plan_candidates(&plan).is_empty()
}

/// What failed, when the last run failed: a step in ERROR, else the
/// latest "failure" event if nothing later shows a run ended otherwise or
/// got past it.
fn last_failure(checkpoint: &Checkpoint) -> Option<String> {
    if let Some((_, step)) = checkpoint
        .plan
        .steps()
        .find(|(_, s)| s.status == StepStatus::Error)
    {
        return Some(format!("step {} is ERROR: {}", step.name, step.message));
    }
    let latest = |kinds: &[EventKind]| {
        checkpoint
            .events
            .iter()
            .rposition(|e| kinds.contains(&e.kind))
    };
    let failure = latest(&[EventKind::Failure])?;
    match latest(&LATER_THAN_A_FAILURE) {
        Some(later) if later > failure => None,
        _ => Some(checkpoint.events[failure].message.clone()),
    }
}

#[derive(Serialize)]
struct StatusJson<'a> {
    run_id: &'a str,
    /// The first group's (the only one's, for a one-group roll).
    asg: &'a str,
    target: u32,
    /// Every group the roll replaces the agents of, in plan order.
    groups: Vec<GroupJson<'a>>,
    locked: bool,
    state: RollState,
    pause: Option<&'a Pause>,
    plan: plan::PlanInfo,
    events: &'a [Event],
}

#[derive(Serialize)]
struct GroupJson<'a> {
    asg: &'a str,
    target: u32,
    instances: usize,
}

pub(super) fn run(args: &StatusArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let env = args
        .env
        .as_ref()
        .map(|env| environment_from(env, &[]))
        .transpose()?;
    if args.checkpoint.is_none() && env.is_none() {
        return Err(CliError::BadFlag(
            "give --env ENV.toml or --checkpoint PATH".to_string(),
        ));
    }
    let runtime = runtime()?;
    let (store, loaded) = runtime.block_on(async {
        let mut store = match &env {
            Some(env) => checkpoint_store(&args.checkpoint, env).await?,
            None => checkpoint_store_alone(args.checkpoint.as_ref()).await?,
        };
        let loaded = store.load().await.map_err(CliError::Checkpoint)?;
        Ok::<_, CliError>((store, loaded))
    })?;
    let path = store.location().to_path_buf();
    let Some(checkpoint) = loaded else {
        return Err(CliError::NoCheckpoint(format!(
            "no checkpoint at {}: no roll in progress there",
            path.display()
        )));
    };
    // A file's lock says whether a run holds it; an object in S3 has no
    // lock to look at (its lease is its ETag), so it reads as not held.
    let locked = store.file_path().is_some_and(RunLock::is_held);
    let state = roll_state(&checkpoint, locked);
    if args.json {
        let events = &checkpoint.events[checkpoint.events.len().saturating_sub(20)..];
        let status = StatusJson {
            run_id: &checkpoint.run_id,
            asg: &checkpoint.groups[0].asg,
            target: checkpoint.groups[0].target,
            groups: checkpoint
                .groups
                .iter()
                .map(|g| GroupJson {
                    asg: &g.asg,
                    target: g.target,
                    instances: g.instances.len(),
                })
                .collect(),
            locked,
            state,
            pause: checkpoint.pause.as_ref(),
            plan: plan::info(&checkpoint.plan),
            events,
        };
        let mut json = serde_json::to_string_pretty(&status).unwrap_or_default();
        json.push('\n');
        out.write_all(json.as_bytes())?;
    } else {
        let lock = store.file_path().map(|_| locked);
        print_text(&checkpoint, &path, lock, state, out)?;
    }
    verdict(state, &checkpoint, &store.for_command(), args)
}

fn print_text(
    checkpoint: &Checkpoint,
    path: &Path,
    // `None`: kept in S3, where no lock tells.
    locked: Option<bool>,
    state: RollState,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let what = match checkpoint.groups.as_slice() {
        [one] => format!("ASG {} to {} agents", one.asg, one.target),
        groups => format!(
            "the cluster's ASGs {}",
            groups
                .iter()
                .map(|g| format!("{} to {}", g.asg, g.target))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    writeln!(
        out,
        "run {} of {what} ({}): {}",
        checkpoint.run_id,
        path.display(),
        match locked {
            Some(true) => "a run holds the lock now",
            Some(false) => "no run holds the lock",
            None => "kept in S3, whose lease (the ETag) cannot tell whether a run holds it",
        }
    )?;
    writeln!(out, "state: {state}")?;
    writeln!(
        out,
        "on failure: {}; failure limit {}; CloudWatch alarms: {}; Standby: {}; protected: {}",
        checkpoint.on_failure.as_str(),
        checkpoint.failure_limit,
        alarm_names(&checkpoint.alarms),
        checkpoint.standby,
        checkpoint.protected
    )?;
    if let Some(pause) = &checkpoint.pause {
        writeln!(
            out,
            "PAUSED at {} since {}: {}",
            pause.step, pause.since, pause.reason
        )?;
    }
    out.write_all(plan::tree(&checkpoint.plan).as_bytes())?;
    for event in checkpoint.events.iter().rev().take(5).rev() {
        writeln!(out, "{} {}: {}", event.at, event.kind, event.message)?;
    }
    Ok(())
}

/// Ok for a roll that is complete or running; otherwise the error whose
/// exit code says the state and whose message says what to do.
fn verdict(
    state: RollState,
    checkpoint: &Checkpoint,
    path: &str,
    args: &StatusArgs,
) -> Result<(), CliError> {
    let rerun = match (&args.env, &args.checkpoint) {
        (Some(env), None) => format!("roller run --env {}", env.display()),
        (Some(env), Some(_)) => format!("roller run --env {} --checkpoint {path}", env.display()),
        (None, _) => format!("roller run --env ENV.toml --checkpoint {path}"),
    };
    let message = match state {
        RollState::Complete | RollState::Running => return Ok(()),
        RollState::Failed => format!(
            "the roll's last run failed: {}; fix that, then retry with: {rerun}",
            last_failure(checkpoint).unwrap_or_default()
        ),
        RollState::Paused => format!(
            "the roll is paused{}; resume with: {rerun}",
            checkpoint
                .pause
                .as_ref()
                .map(|p| format!(" at {}: {}", p.step, p.reason))
                .unwrap_or_default()
        ),
        RollState::Held => format!(
            "the roll is held (an operator's interrupt, or a canary waiting); let it go on with \
             `{}`, then: {rerun}",
            crate::roll::decide::roll_plan::continue_command(&checkpoint.plan, path)
        ),
        RollState::Stopped => format!(
            "the roll is stopped (a signal or a crash ended its last run) and no run holds it; \
             resume with: {rerun}"
        ),
    };
    Err(CliError::RollNotDone {
        exit_code: state.exit_code(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::plan::{Phase, Plan, Step, Strategy};
    use crate::roll::record::checkpoint::{GroupRoll, OriginalGroup, RecordedEnvironment, VERSION};
    use StepStatus::{Complete, Error, Pending, Starting};

    /// A roll of two instances with the plan's statuses given per step
    /// (prepare, replace-1, replace-2), and events of the given kinds.
    fn checkpoint(statuses: [StepStatus; 3], events: &[&str]) -> Checkpoint {
        let step = |name: &str, status: StepStatus| Step {
            status,
            ..Step::new(name)
        };
        let plan = Plan::new(
            "roll-asg",
            Strategy::Serial,
            vec![
                Phase::new("prepare", Strategy::Serial, vec![step("lock", statuses[0])]),
                Phase::new(
                    "replace",
                    Strategy::Serial,
                    vec![step("i-1", statuses[1]), step("i-2", statuses[2])],
                ),
            ],
        );
        Checkpoint {
            version: VERSION,
            run_id: "run-1".to_string(),
            environment: RecordedEnvironment {
                region: None,
                aws_endpoint_url: None,
                mesos: Vec::new(),
                marathon: Vec::new(),
                agent_match: "ip".to_string(),
            },
            honor_min_health: false,
            max_unavailable: crate::roll::record::checkpoint::DEFAULT_MAX_UNAVAILABLE,
            failure: None,
            acknowledged_failures: Vec::new(),
            failure_limit: 0,
            alarms: Vec::new(),
            tolerated_failures: Vec::new(),
            standby: Default::default(),
            protected: Default::default(),
            on_failure: Default::default(),
            allow_unhealthy: Vec::new(),
            pause: None,
            open_page: None,
            progress: BTreeMap::new(),
            operations_applied: Vec::new(),
            services: Default::default(),
            summary: None,
            plan,
            events: events
                .iter()
                .map(|kind| Event {
                    at: "2026-01-01T00:00:00Z".to_string(),
                    kind: serde_json::from_value(serde_json::Value::from(*kind)).unwrap(),
                    message: format!("a {kind}"),
                    user: None,
                    label: None,
                })
                .collect(),
            events_dropped: 0,
            events_in_log: 0,
            groups: vec![GroupRoll {
                asg: "asg".to_string(),
                target: 2,
                select: "all".to_string(),
                original: OriginalGroup {
                    min_size: 0,
                    max_size: 4,
                    desired_capacity: 2,
                    zones: BTreeMap::new(),
                    instance_ids: Vec::new(),
                    left_out: Vec::new(),
                },
                instances: Vec::new(),
                suspended_before: Vec::new(),
                suspended_by_roll: Vec::new(),
                raised_max_from: None,
                maintenance: Vec::new(),
                surges: Vec::new(),
                waves: Vec::new(),
                new_agents: Vec::new(),
                bake_until_unix_ms: None,
                held: Vec::new(),
                surge: None,
                opened_batches: 0,
                by_id: Default::default(),
            }],
        }
    }

    fn pause() -> Pause {
        Pause {
            step: "replace/i-1".to_string(),
            reason: "timed out".to_string(),
            since: "2026-01-01T00:00:00Z".to_string(),
            dedup_key: "roller/run-1/replace/i-1".to_string(),
            paged: false,
        }
    }

    #[test]
    fn a_complete_plan_is_complete_even_with_a_failure_in_its_past() {
        let done = checkpoint([Complete; 3], &["start", "failure"]);
        assert_eq!(roll_state(&done, false), RollState::Complete);
        assert_eq!(roll_state(&done, false).exit_code(), 0);
    }

    #[test]
    fn a_held_lock_means_running_whatever_the_file_says() {
        let mut paused = checkpoint([Complete, Starting, Pending], &["start", "failure"]);
        paused.pause = Some(pause());
        assert_eq!(roll_state(&paused, true), RollState::Running);
        assert_eq!(roll_state(&paused, true).exit_code(), 0);
    }

    #[test]
    fn a_failure_after_the_last_step_or_resume_is_a_failed_run() {
        let failed = checkpoint([Complete, Starting, Pending], &["start", "step", "failure"]);
        assert_eq!(roll_state(&failed, false), RollState::Failed);
        assert_eq!(roll_state(&failed, false).exit_code(), 1);
        let mut resumed_then_failed = checkpoint(
            [Complete, Starting, Pending],
            &["pause", "resume", "failure"],
        );
        resumed_then_failed.pause = Some(pause());
        assert_eq!(
            roll_state(&resumed_then_failed, false),
            RollState::Failed,
            "a failure outranks the pause it happened under"
        );
    }

    #[test]
    fn a_failure_followed_by_a_step_a_pause_or_a_stop_is_history() {
        for later in ["step", "resume", "stop"] {
            let past = checkpoint([Complete, Starting, Pending], &["failure", later]);
            assert_eq!(roll_state(&past, false), RollState::Stopped, "{later}");
        }
        let mut paused = checkpoint([Complete, Starting, Pending], &["failure", "pause"]);
        paused.pause = Some(pause());
        assert_eq!(roll_state(&paused, false), RollState::Paused);
    }

    #[test]
    fn a_step_in_error_is_a_failed_run_and_says_which() {
        let mut errored = checkpoint([Complete, Error, Pending], &["start", "step"]);
        errored.plan.phases[1].steps[0].message = "terminate refused".to_string();
        assert_eq!(roll_state(&errored, false), RollState::Failed);
        let what = last_failure(&errored).unwrap_or_default();
        assert!(
            what.contains("i-1") && what.contains("terminate refused"),
            "{what}"
        );
    }

    #[test]
    fn a_pause_without_a_later_failure_is_paused_with_exit_3() {
        let mut paused = checkpoint([Complete, Starting, Pending], &["start", "step", "pause"]);
        paused.pause = Some(pause());
        assert_eq!(roll_state(&paused, false), RollState::Paused);
        assert_eq!(roll_state(&paused, false).exit_code(), 3);
    }

    #[test]
    fn an_interrupted_plan_or_a_waiting_canary_is_held() {
        let mut interrupted = checkpoint([Complete, Pending, Pending], &["start", "step"]);
        interrupted.plan.interrupted = true;
        assert_eq!(roll_state(&interrupted, false), RollState::Held);
        let mut canary = checkpoint([Complete, Pending, Pending], &["start", "step"]);
        let replace = &mut canary.plan.phases[1];
        replace.strategy = Strategy::SerialCanary;
        replace.canary = None;
        replace.set_up_canary();
        assert_eq!(roll_state(&canary, false), RollState::Held);
        assert_eq!(roll_state(&canary, false).exit_code(), 3);
    }

    #[test]
    fn an_unfinished_plan_with_work_to_do_and_no_run_is_stopped() {
        let stopped = checkpoint([Complete, Starting, Pending], &["start", "step", "stop"]);
        assert_eq!(roll_state(&stopped, false), RollState::Stopped);
        let crashed = checkpoint([Complete, Starting, Pending], &["start", "step"]);
        assert_eq!(roll_state(&crashed, false), RollState::Stopped);
        assert_eq!(roll_state(&crashed, false).exit_code(), 3);
    }

    #[test]
    fn states_serialize_as_the_lowercase_names_the_reference_lists() {
        let names: Vec<String> = [
            RollState::Complete,
            RollState::Running,
            RollState::Paused,
            RollState::Held,
            RollState::Stopped,
            RollState::Failed,
        ]
        .iter()
        .map(|s| {
            let json = serde_json::to_string(s).unwrap_or_default();
            assert_eq!(json, format!("\"{s}\""));
            s.to_string()
        })
        .collect();
        assert_eq!(
            names,
            ["complete", "running", "paused", "held", "stopped", "failed"]
        );
    }
}
