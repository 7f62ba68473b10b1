//! The roll's plan, built from what was selected (pure: no I/O; this is
//! what `--dry-run` prints). Each step carries its typed `GroupStep`
//! (what it does, to which group), which the runner dispatches on; the
//! plan is read by those kinds too (is it rolling back, is it a drain),
//! never by parsing ids. Phase and step ids are fixed words (and the
//! instance id for each replacement) so operators can name them across
//! processes:
//!
//! `--strategy drain` (the default):
//!
//! ```text
//! roll-<asg> (dependency strategy)
//! ├─ prepare    lock, suspend-processes, [raise-max-size]
//! ├─ scale-up   set-desired, wait-registered, maintenance
//! ├─ [canary]   N replace steps (serial), before anything else moves
//! ├─ drain      wave-1, wave-2, … (serial; each wave appends the next)
//! ├─ terminate  one step per instance (parallel; a step is released when
//! │             its agent is empty), alongside drain
//! └─ finish     resume-processes, [restore-max-size], end-maintenance,
//!               report-rebalance, unlock
//! ```
//!
//! With a surge cap below the instances to replace (`--max-surge`, or
//! the group's instance maintenance policy), the scale-up launches only
//! the first batch and a `batches` phase (serial, alongside drain and
//! terminate) holds one `batch-N` step per later batch: each waits for
//! the batch before to be terminated, launches its own new instances into
//! the room, and opens its old agents to the drain's waves.
//!
//! With `--canary N` the drain phase is created interrupted: after the
//! canaries it waits for `roller plan continue --phase drain`, and no
//! termination starts before the drain does.
//!
//! `--strategy serial` (the write-up's per-agent loop, made safe):
//!
//! ```text
//! roll-<asg> (serial strategy)
//! ├─ prepare    lock, suspend-processes, [raise-max-size]
//! ├─ scale-up   set-desired, wait-registered
//! ├─ replace    one step per instance (serial, or serial-canary)
//! └─ finish     resume-processes, [restore-max-size], end-maintenance,
//!               report-rebalance, unlock
//! ```

use std::collections::BTreeSet;

use crate::plan::{Phase, Plan, Status, Step, Strategy};

use crate::roll::record::checkpoint::{RolledInstance, group_phase_id};
use crate::roll::record::kinds::{GroupIndex, GroupStep, RollPlan, StepKind};

pub(crate) const PREPARE: &str = "prepare";
pub(crate) const SCALE_UP: &str = "scale-up";
pub(crate) const REPLACE: &str = "replace";
pub(crate) const FINISH: &str = "finish";
pub(crate) const CANARY: &str = "canary";
pub(crate) const DRAIN: &str = "drain";
pub(crate) const TERMINATE: &str = "terminate";
pub(crate) const ROLLBACK: &str = "rollback";
pub(crate) const BATCHES: &str = "batches";

pub(crate) const LOCK: &str = "lock";
pub(crate) const SUSPEND: &str = "suspend-processes";
pub(crate) const RAISE_MAX: &str = "raise-max-size";
pub(crate) const HELD: &str = "held-instances";
pub(crate) const WARM_POOL: &str = "warm-pool";
pub(crate) const SET_DESIRED: &str = "set-desired";
pub(crate) const WAIT_REGISTERED: &str = "wait-registered";
pub(crate) const MAINTENANCE: &str = "maintenance";
pub(crate) const RESUME: &str = "resume-processes";
pub(crate) const RESTORE_MAX: &str = "restore-max-size";
pub(crate) const END_MAINTENANCE: &str = "end-maintenance";
pub(crate) const REPORT_REBALANCE: &str = "report-rebalance";
pub(crate) const UNLOCK: &str = "unlock";
pub(crate) const ROLLBACK_WINDOWS: &str = "windows";
pub(crate) const ROLLBACK_MOVES: &str = "move-back";
pub(crate) const ROLLBACK_TERMINATE: &str = "terminate-new";
pub(crate) const ROLLBACK_LAUNCH_SOURCE: &str = "launch-template";
pub(crate) const ROLLBACK_WARM_POOL: &str = "warm-pool-back";

/// How the old agents are emptied (`--strategy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum RollStrategy {
    /// Every old agent at once under a maintenance window, in floor-safe
    /// waves; empty agents terminated as they empty.
    #[default]
    Drain,
    /// One agent after another: move its tasks, terminate, wait for
    /// Marathon to be healthy (the write-up's loop, with safety moves).
    Serial,
}

impl RollStrategy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RollStrategy::Drain => "drain",
            RollStrategy::Serial => "serial",
        }
    }

    pub(crate) fn parse(text: &str) -> Result<RollStrategy, String> {
        match text {
            "drain" => Ok(RollStrategy::Drain),
            "serial" => Ok(RollStrategy::Serial),
            other => Err(format!(
                "unknown strategy '{other}': expected drain (every old agent at once, in floor-safe waves) or serial (one agent after another)"
            )),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PlanOptions {
    /// Serial: the first N replace steps each wait for `roller plan
    /// continue`. Drain: N agents are replaced alone first, then the drain
    /// waits for `roller plan continue --phase drain`.
    pub(crate) canary: Option<u32>,
    /// MaxSize is raised for the roll and restored at finish.
    pub(crate) raise_max: bool,
    /// The group has instances held out of the roll (Standby, protected
    /// under `wait`): a `held-instances` step brings them in first.
    pub(crate) held: bool,
    pub(crate) strategy: RollStrategy,
}

pub(crate) fn plan_name(asg: &str) -> String {
    format!("roll-{asg}")
}

/// A step of the roll's plan, on the group `group`.
fn step(group: GroupIndex, id: &str, kind: StepKind, message: &str) -> Step<GroupStep> {
    let mut step = Step::new(id);
    step.id = id.to_string();
    step.message = message.to_string();
    step.kind = Some(GroupStep::new(group, kind));
    step
}

fn phase(id: &str, strategy: Strategy, steps: Vec<Step<GroupStep>>) -> Phase<GroupStep> {
    let mut phase = Phase::new(id, strategy, steps);
    phase.id = id.to_string();
    phase
}

/// What each step of `plan` does, in tree order.
fn kinds(plan: &RollPlan) -> impl Iterator<Item = &GroupStep> {
    plan.steps().filter_map(|(_, s)| s.kind.as_ref())
}

/// The strategy a plan was built with (a drain plan has drain waves).
pub(crate) fn strategy_of(plan: &RollPlan) -> RollStrategy {
    if kinds(plan).any(|k| matches!(k.kind, StepKind::DrainWave { .. })) {
        RollStrategy::Drain
    } else {
        RollStrategy::Serial
    }
}

pub(crate) fn wave_id(wave: u32) -> String {
    format!("wave-{wave}")
}

/// A drain wave's step of the group `group` (its name is rewritten when
/// the wave is planned), its id as the group's (`<asg>:wave-N` in a plan
/// of several groups: `id` makes it).
pub(crate) fn wave_step(
    group: GroupIndex,
    wave: u32,
    id: impl Fn(&str) -> String,
) -> Step<GroupStep> {
    step(
        group,
        &id(&wave_id(wave)),
        StepKind::DrainWave { wave },
        "move every task that can go now off the old agents",
    )
}

fn replace_step(group: GroupIndex, i: &RolledInstance) -> Step<GroupStep> {
    let mut s = step(
        group,
        &i.id,
        StepKind::Replace {
            instance: i.id.clone(),
        },
        &format!("replace agent {} ({})", i.hostname, i.availability_zone),
    );
    s.asset = Some(i.id.clone());
    s
}

/// The plan of one group's roll (`group` is its place in the roll's
/// groups; a cluster's plan is put together from one per group,
/// `cluster_plan.rs`).
pub(crate) fn build(
    group: GroupIndex,
    asg: &str,
    instances: &[RolledInstance],
    options: PlanOptions,
) -> RollPlan {
    let prepare = prepare_phase(group, options.raise_max, options.held);
    let finish = finish_phase(group, options.raise_max);
    match options.strategy {
        RollStrategy::Serial => serial_plan(group, asg, instances, options.canary, prepare, finish),
        RollStrategy::Drain => drain_plan(group, asg, instances, options.canary, prepare, finish),
    }
}

/// Lock, suspend, and raise MaxSize when the roll must.
fn prepare_phase(group: GroupIndex, raise_max: bool, held: bool) -> Phase<GroupStep> {
    let mut prepare = vec![
        step(group, LOCK, StepKind::Lock, "tag the ASG with the run id"),
        step(
            group,
            SUSPEND,
            StepKind::SuspendProcesses,
            "suspend the scaling processes that could change capacity",
        ),
    ];
    if raise_max {
        prepare.push(step(
            group,
            RAISE_MAX,
            StepKind::RaiseMaxSize,
            "raise MaxSize to N + K",
        ));
    }
    if held {
        prepare.push(step(
            group,
            HELD,
            StepKind::HeldInstances,
            "bring the instances held out of the group's hands (Standby, scale-in protection) into the roll",
        ));
    }
    phase(PREPARE, Strategy::Serial, prepare)
}

/// The scale-up both strategies share: the new instances asked for, then
/// awaited as agents.
fn scale_up_steps(group: GroupIndex) -> Vec<Step<GroupStep>> {
    vec![
        step(
            group,
            WARM_POOL,
            StepKind::WarmPool,
            "replace warm-pool instances launched from an outdated launch source",
        ),
        step(
            group,
            SET_DESIRED,
            StepKind::SetDesired,
            "set desired capacity to N + K - terminated",
        ),
        step(
            group,
            WAIT_REGISTERED,
            StepKind::WaitRegistered,
            "wait until every new instance is an active Mesos agent",
        ),
    ]
}

/// Undo what prepare and the roll changed (processes, MaxSize when
/// raised, maintenance), report the AZ moves, and unlock.
fn finish_phase(group: GroupIndex, raise_max: bool) -> Phase<GroupStep> {
    let mut finish = vec![step(
        group,
        RESUME,
        StepKind::ResumeProcesses,
        "resume what the roll suspended",
    )];
    if raise_max {
        finish.push(step(
            group,
            RESTORE_MAX,
            StepKind::RestoreMaxSize,
            "restore MaxSize",
        ));
    }
    finish.extend([
        step(
            group,
            END_MAINTENANCE,
            StepKind::EndMaintenance,
            "bring downed machines up and remove the roll's maintenance windows",
        ),
        step(
            group,
            REPORT_REBALANCE,
            StepKind::ReportRebalance,
            "report the AZ moves rebalancing needs",
        ),
        step(group, UNLOCK, StepKind::Unlock, "remove the run-id tag"),
    ]);
    phase(FINISH, Strategy::Serial, finish)
}

/// `--strategy serial`: one replace step per instance, the first
/// `canary` of them each waiting for the operator.
fn serial_plan(
    group: GroupIndex,
    asg: &str,
    instances: &[RolledInstance],
    canary: Option<u32>,
    prepare: Phase<GroupStep>,
    finish: Phase<GroupStep>,
) -> RollPlan {
    let replace = instances.iter().map(|i| replace_step(group, i)).collect();
    // Built serial, then gated: `Phase::new` would pick default canaries.
    let mut replace_phase = phase(REPLACE, Strategy::Serial, replace);
    if let Some(count) = canary {
        replace_phase.strategy = Strategy::SerialCanary;
        replace_phase.canary = Some(crate::plan::Canary { count, steps: None });
        replace_phase.set_up_canary();
    }
    Plan::new(
        plan_name(asg),
        Strategy::Serial,
        vec![
            prepare,
            phase(SCALE_UP, Strategy::Serial, scale_up_steps(group)),
            replace_phase,
            finish,
        ],
    )
}

/// `--strategy drain`: a maintenance window over every old agent, the
/// first `canary` instances replaced alone, then the drain's waves with
/// the terminations alongside.
fn drain_plan(
    group: GroupIndex,
    asg: &str,
    instances: &[RolledInstance],
    canary: Option<u32>,
    prepare: Phase<GroupStep>,
    finish: Phase<GroupStep>,
) -> RollPlan {
    let mut scale_up = scale_up_steps(group);
    scale_up.push(step(
        group,
        MAINTENANCE,
        StepKind::Maintenance,
        "post one maintenance window over every agent to replace",
    ));
    let canaries = canary
        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
        .min(instances.len());
    let (first, rest) = instances.split_at(canaries);
    let mut phases = vec![prepare, phase(SCALE_UP, Strategy::Serial, scale_up)];
    let mut after_scale_up = vec![SCALE_UP.to_string()];
    if canaries > 0 {
        phases.push(phase(
            CANARY,
            Strategy::Serial,
            first.iter().map(|i| replace_step(group, i)).collect(),
        ));
        after_scale_up = vec![CANARY.to_string()];
    }
    let mut drain = phase(
        DRAIN,
        Strategy::Serial,
        vec![wave_step(group, 1, str::to_string)],
    );
    drain.interrupted = canaries > 0;
    drain.depends_on = after_scale_up.clone();
    let terminate = rest.iter().map(|i| terminate_step(group, i)).collect();
    let mut terminate = phase(TERMINATE, Strategy::Parallel, terminate);
    terminate.depends_on = after_scale_up;
    let mut finish = finish;
    finish.depends_on = vec![DRAIN.to_string(), TERMINATE.to_string()];
    phases.extend([drain, terminate]);
    let batches = instances.iter().map(|i| i.batch).max().unwrap_or(0);
    if batches > 1 {
        let steps = (2..=batches)
            .map(|b| batch_step(group, b, instances))
            .collect();
        let mut batches = phase(BATCHES, Strategy::Serial, steps);
        batches.depends_on = vec![SCALE_UP.to_string()];
        finish.depends_on.push(BATCHES.to_string());
        phases.push(batches);
    }
    phases.push(finish);
    // Each phase waits for the one before it, except terminate,
    // which runs alongside drain.
    for n in 1..phases.len() {
        if phases[n].depends_on.is_empty() {
            phases[n].depends_on = vec![phases[n - 1].id.clone()];
        }
    }
    Plan::new(plan_name(asg), Strategy::Dependency, phases)
}

pub(crate) fn batch_id(batch: u32) -> String {
    format!("batch-{batch}")
}

/// The step that opens batch `batch` of the instances to replace.
fn batch_step(group: GroupIndex, batch: u32, instances: &[RolledInstance]) -> Step<GroupStep> {
    let old: Vec<&str> = instances
        .iter()
        .filter(|i| i.batch == batch)
        .map(|i| i.id.as_str())
        .collect();
    let named = if old.len() > 3 {
        format!("{}, … ({} in all)", old[..3].join(", "), old.len())
    } else {
        old.join(", ")
    };
    step(
        group,
        &batch_id(batch),
        StepKind::OpenBatch { batch },
        &format!(
            "once batch {} is terminated, launch {} new instance(s) into its room, then move the \
             tasks off {named}",
            batch - 1,
            old.len()
        ),
    )
}

/// A drain's termination of instance `i`, released once its agent is
/// empty.
fn terminate_step(group: GroupIndex, i: &RolledInstance) -> Step<GroupStep> {
    let mut s = step(
        group,
        &i.id,
        StepKind::Terminate {
            instance: i.id.clone(),
        },
        &format!(
            "terminate {} ({}) once its agent is empty",
            i.hostname, i.availability_zone
        ),
    );
    s.asset = Some(i.id.clone());
    s
}

/// Whether the plan has turned around (it has rollback steps).
pub(crate) fn rolling_back(plan: &RollPlan) -> bool {
    kinds(plan).any(|k| k.kind.is_rollback())
}

/// Turns the plan around after a failure on the new agents: every step
/// not complete outside the finish phases is closed as not run
/// (COMPLETE, its message saying why, as `force-complete` would leave
/// it), and a rollback phase runs before the first finish phase, which
/// then leaves the group as the roll found it. In a plan of several
/// groups (`groups`, their ASGs by index), every group the roll has
/// touched and not finished (a step past its prepare begun, one not
/// complete) gets its own `<asg>:rollback`, the last touched first, all
/// before the first finish. A group whose old agents are all gone already
/// runs the image its group was rolled onto, which nothing found failing
/// while it was watched: it is kept as it is. Returns the ids of the
/// steps closed (their progress is dropped). Turning around twice changes
/// nothing.
pub(crate) fn turn_around(plan: &mut RollPlan, groups: &[&str], why: &str) -> Vec<String> {
    if rolling_back(plan) {
        return Vec::new();
    }
    let mut begun = BTreeSet::new();
    let mut unfinished = BTreeSet::new();
    for (_, step) in plan.steps() {
        let Some(kind) = step.kind.as_ref().filter(|k| k.kind.is_middle()) else {
            continue;
        };
        if step.status != Status::Pending {
            begun.insert(kind.group);
        }
        if !step.is_complete() {
            unfinished.insert(kind.group);
        }
    }
    let mut touched: Vec<GroupIndex> = begun.intersection(&unfinished).copied().collect();
    if touched.is_empty() {
        touched.push(GroupIndex(0));
    }
    let is_finish = |phase: &Phase<GroupStep>| {
        phase
            .steps
            .iter()
            .any(|s| s.kind.as_ref().is_some_and(|k| k.kind.is_finish()))
    };
    let mut closed = Vec::new();
    for phase in plan.phases.iter_mut().filter(|p| !is_finish(p)) {
        phase.interrupted = false;
        for step in phase.steps.iter_mut().filter(|s| !s.is_complete()) {
            step.status = Status::Complete;
            step.interrupted = false;
            step.message = format!("not run: the roll turned around ({why})");
            closed.push(step.id.clone());
        }
    }
    let at = plan
        .phases
        .iter()
        .position(is_finish)
        .unwrap_or(plan.phases.len());
    let mut before = plan
        .phases
        .get_mut(at)
        .map(|finish| std::mem::take(&mut finish.depends_on))
        .unwrap_or_default();
    let mut rollbacks = Vec::new();
    for &group in touched.iter().rev() {
        let asg = groups.get(group.0).copied().unwrap_or_default();
        let id = |bare: &str| group_phase_id(asg, bare, groups.len());
        let mut steps = rollback_steps(group);
        for step in &mut steps {
            step.id = id(&step.id);
        }
        let mut rollback = phase(&id(ROLLBACK), Strategy::Serial, steps);
        rollback.depends_on = std::mem::replace(&mut before, vec![id(ROLLBACK)]);
        rollbacks.push(rollback);
    }
    if let Some(finish) = plan.phases.get_mut(at) {
        finish.depends_on = before;
    }
    plan.phases.splice(at..at, rollbacks);
    closed
}

/// The steps of one group's rollback phase.
fn rollback_steps(group: GroupIndex) -> Vec<Step<GroupStep>> {
    let step = |id: &str, kind, message: &str| step(group, id, kind, message);
    vec![
        step(
            ROLLBACK_WINDOWS,
            StepKind::RollbackWindows,
            "put the new agents under maintenance, lift the old agents' windows",
        ),
        step(
            ROLLBACK_MOVES,
            StepKind::RollbackMoves,
            "set surges back, move every task on a new agent back to the old agents",
        ),
        step(
            ROLLBACK_TERMINATE,
            StepKind::RollbackTerminate,
            "terminate the new instances (decrement), down to the original size",
        ),
        step(
            ROLLBACK_LAUNCH_SOURCE,
            StepKind::RollbackLaunchSource,
            "set the group's launch template back to the one the old instances run",
        ),
        step(
            ROLLBACK_WARM_POOL,
            StepKind::RollbackWarmPool,
            "replace warm-pool instances launched from the rolled-back launch source",
        ),
    ]
}

/// The exact `roller plan continue` that releases what holds `plan`: the
/// plan's own interrupt, else the first unfinished phase that is
/// interrupted (or whose canary waits), else its first interrupted step.
/// `file` as a command must name it (`CheckpointStore::for_command`).
pub(crate) fn continue_command<K>(plan: &Plan<K>, file: &str) -> String {
    let base = format!("roller plan continue --file {file}");
    if plan.interrupted {
        return base;
    }
    for phase in plan
        .phases
        .iter()
        .filter(|p| p.status() != Status::Complete)
    {
        if phase.is_interrupted() {
            return format!("{base} --phase {}", phase.id);
        }
        if let Some(step) = phase
            .steps
            .iter()
            .find(|s| s.interrupted && !s.is_complete())
        {
            return format!("{base} --phase {} --step {}", phase.id, step.id);
        }
    }
    base
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
            reclaimed: false,
            replaced: false,
            other_tasks: Default::default(),
            batch: 0,
        }
    }

    #[test]
    fn the_plan_has_the_four_phases_and_one_replace_step_per_instance() {
        let plan = build(
            GroupIndex(0),
            "asg",
            &[instance("i-1"), instance("i-2")],
            PlanOptions {
                strategy: RollStrategy::Serial,
                ..PlanOptions::default()
            },
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
    }

    #[test]
    fn canary_and_raise_max_change_the_plan_as_asked() {
        let plan = build(
            GroupIndex(0),
            "asg",
            &[instance("i-1"), instance("i-2"), instance("i-3")],
            PlanOptions {
                canary: Some(1),
                raise_max: true,
                strategy: RollStrategy::Serial,
                held: false,
            },
        );
        assert_eq!(plan.phases[2].strategy, Strategy::SerialCanary);
        assert!(plan.phases[0].steps.iter().any(|s| s.id == RAISE_MAX));
        assert!(plan.phases[3].steps.iter().any(|s| s.id == RESTORE_MAX));
        let text = plan.to_json();
        assert_eq!(RollPlan::from_json(&text).unwrap(), plan);
    }

    #[test]
    fn a_drain_plan_terminates_alongside_its_waves_and_finishes_after_both() {
        let instances = [instance("i-1"), instance("i-2"), instance("i-3")];
        let plan = build(GroupIndex(0), "asg", &instances, PlanOptions::default());
        let shown = tree(&plan);
        assert!(
            shown.starts_with("roll-asg (dependency strategy) (PENDING)"),
            "{shown}"
        );
        let phases: Vec<&str> = plan.phases.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(phases, [PREPARE, SCALE_UP, DRAIN, TERMINATE, FINISH]);
        assert_eq!(plan.phases[1].steps.last().unwrap().id, MAINTENANCE);
        assert_eq!(plan.phases[2].steps[0].id, "wave-1");
        assert_eq!(plan.phases[3].strategy, Strategy::Parallel);
        assert_eq!(plan.phases[3].steps.len(), 3);
        assert_eq!(plan.phases[3].steps[0].asset.as_deref(), Some("i-1"));
        assert_eq!(plan.phases[2].depends_on, [SCALE_UP]);
        assert_eq!(plan.phases[3].depends_on, [SCALE_UP]);
        assert_eq!(plan.phases[4].depends_on, [DRAIN, TERMINATE]);
        // Once scale-up is done, drain and terminate are candidates together.
        let mut running = plan.clone();
        for phase in &mut running.phases[..2] {
            for step in &mut phase.steps {
                step.status = crate::plan::Status::Complete;
            }
        }
        let candidates: Vec<usize> = running.candidate_steps().iter().map(|c| c.phase).collect();
        assert_eq!(candidates, [2, 3, 3, 3]);
        let text = plan.to_json();
        assert_eq!(RollPlan::from_json(&text).unwrap(), plan);
    }

    #[test]
    fn a_drain_canary_replaces_its_agents_alone_then_holds_the_drain() {
        let instances = [instance("i-1"), instance("i-2"), instance("i-3")];
        let plan = build(
            GroupIndex(0),
            "asg",
            &instances,
            PlanOptions {
                canary: Some(1),
                ..PlanOptions::default()
            },
        );
        let phases: Vec<&str> = plan.phases.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(
            phases,
            [PREPARE, SCALE_UP, CANARY, DRAIN, TERMINATE, FINISH]
        );
        assert_eq!(plan.phases[2].steps.len(), 1);
        assert_eq!(plan.phases[2].steps[0].id, "i-1");
        assert!(plan.phases[3].interrupted);
        assert_eq!(plan.phases[3].depends_on, [CANARY]);
        assert_eq!(plan.phases[4].depends_on, [CANARY]);
        let terminated: Vec<&str> = plan.phases[4].steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(terminated, ["i-2", "i-3"]);
    }

    #[test]
    fn a_capped_drain_opens_its_later_batches_in_a_phase_of_their_own_that_finish_waits_for() {
        let mut instances: Vec<RolledInstance> =
            (1..=5).map(|n| instance(&format!("i-{n}"))).collect();
        crate::roll::decide::surge_cap::assign(&mut instances, 2);
        let plan = build(GroupIndex(0), "asg", &instances, PlanOptions::default());
        let phases: Vec<&str> = plan.phases.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(
            phases,
            [PREPARE, SCALE_UP, DRAIN, TERMINATE, BATCHES, FINISH]
        );
        let batches = &plan.phases[4];
        let ids: Vec<&str> = batches.steps.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["batch-2", "batch-3"]);
        assert_eq!(batches.strategy, Strategy::Serial);
        assert_eq!(batches.depends_on, [SCALE_UP]);
        assert!(
            batches.steps[0].message.contains("i-3, i-4"),
            "{}",
            batches.steps[0].message
        );
        assert_eq!(plan.phases[5].depends_on, [DRAIN, TERMINATE, BATCHES]);
        // Every instance still has its termination step.
        assert_eq!(plan.phases[3].steps.len(), 5);
        let text = plan.to_json();
        assert_eq!(RollPlan::from_json(&text).unwrap(), plan);
        // Uncapped (no batch), no batches phase.
        let plain = build(
            GroupIndex(0),
            "asg",
            &[instance("i-1")],
            PlanOptions::default(),
        );
        assert!(!plain.phases.iter().any(|p| p.id == BATCHES));
    }

    #[test]
    fn a_strategy_is_named_drain_or_serial() {
        assert_eq!(RollStrategy::parse("drain"), Ok(RollStrategy::Drain));
        assert_eq!(RollStrategy::parse("serial"), Ok(RollStrategy::Serial));
        let err = RollStrategy::parse("fast").unwrap_err();
        assert!(err.contains("'fast'") && err.contains("drain"), "{err}");
    }
}
