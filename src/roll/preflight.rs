//! Preflight of a fresh run (read-only): finds the group, selects the
//! instances to replace, checks that the roll can be done safely, and
//! builds the first checkpoint with its plan. Every refusal names what is
//! wrong and changes nothing.

use std::collections::{BTreeMap, HashSet};
use std::str::FromStr;
use std::time::Duration;

mod group;
mod services;

use super::decide::alarms;
use super::decide::cluster_lock::{Verdict, judge, refusal};
use super::decide::cluster_plan::{GroupPlan, build_cluster};
use super::decide::health;
use super::decide::roll_plan::{PlanOptions, RollStrategy};
use super::decide::safety::Floor;
use super::engine::clock::RollClock;
use super::engine::cluster_lock;
use super::error::RollError;
use super::ports::Ports;
use super::ports::auto_scaling::{AgentIdentity, AutoScaling};
use super::ports::marathon::{App, Deployment, Marathon};
use super::ports::mesos::{MaintenanceSchedule, MesosMaster};
use super::record::checkpoint::{
    Checkpoint, EventKind, GroupRoll, OnFailure, RecordedEnvironment, RolledInstance, VERSION,
};
use super::record::env::Environment;
use super::record::kinds::RollPlan;

/// Which instances are replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Selection {
    /// Every in-service instance (the write-up's roll).
    All,
    /// Instances launched from another launch template version or launch
    /// configuration than the group's current one.
    Outdated,
    /// Instances launched longer ago than this.
    OlderThan(Duration),
}

impl FromStr for Selection {
    type Err = String;

    fn from_str(s: &str) -> Result<Selection, String> {
        match s {
            "all" => Ok(Selection::All),
            "outdated" => Ok(Selection::Outdated),
            _ => {
                let bad = || {
                    format!(
                        "unknown selection '{s}': expected all, outdated or older-than=AGE (e.g. older-than=14d)"
                    )
                };
                let age = s.strip_prefix("older-than=").ok_or_else(bad)?;
                let (number, unit) =
                    age.split_at(age.find(|c: char| !c.is_ascii_digit()).unwrap_or(age.len()));
                let n: u64 = number.parse().map_err(|_| bad())?;
                let unit_secs: u64 = match unit {
                    "d" => 86_400,
                    "h" => 3_600,
                    "m" => 60,
                    _ => return Err(bad()),
                };
                let secs = n.checked_mul(unit_secs).ok_or_else(|| {
                    format!(
                        "--select {s}: no instance can be that old; give an age in days, hours or minutes (e.g. older-than=14d)"
                    )
                })?;
                Ok(Selection::OlderThan(Duration::from_secs(secs)))
            }
        }
    }
}

impl std::fmt::Display for Selection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selection::All => f.write_str("all"),
            Selection::Outdated => f.write_str("outdated"),
            Selection::OlderThan(d) => write!(f, "older-than={}h", d.as_secs() / 3600),
        }
    }
}

/// The most instances roller asks a group to hold: N + K above it is
/// refused at preflight. AWS documents no per-group cap and takes sizes as
/// 32-bit integers (the adapter would clamp a larger one, silently); no
/// account's EC2 quotas come near this, so a larger target is a typo, and
/// refusing it keeps every later N + K within `u32`. The same bound as a
/// count given to `roller rebalance`.
pub(crate) const MAX_GROUP_SIZE: u32 = 100_000;

/// What the operator asked for, resolved from what was typed (the CLI's
/// `RunArgs`): each setting a resume compares or takes is `None` when it
/// was not asked for (a new roll then takes its default, a resume keeps
/// its own), so nothing past this point asks whether a flag was typed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Request {
    /// `--target N`: the target of a one-group environment.
    pub(crate) target: Option<u32>,
    /// `--target NAME=N`, by group: over the `[[group]]` table's target.
    pub(crate) group_targets: BTreeMap<String, u32>,
    /// `--select` (default: all).
    pub(crate) select: Option<Selection>,
    pub(crate) raise_max: bool,
    pub(crate) canary: Option<u32>,
    /// Apps allowed to be unhealthy at the start (`--allow-unhealthy`).
    pub(crate) allow_unhealthy: Vec<String>,
    /// What each app keeps while its tasks move (`--min-healthy`; the
    /// default is its `minimumHealthCapacity`).
    pub(crate) floor: Option<Floor>,
    /// Leave instances that are not InService (Standby, Pending, lifecycle
    /// hook waits) out of the roll instead of refusing
    /// (`--skip-not-in-service`).
    pub(crate) skip_not_in_service: bool,
    /// How old agents are emptied (`--strategy`; default: drain).
    pub(crate) strategy: Option<RollStrategy>,
    /// Drain: old agents being terminated at once, per AZ (`None`: the
    /// default, `default_max_unavailable`).
    pub(crate) max_unavailable: Option<u32>,
    /// What a failure on the new agents leads to (`--on-failure`;
    /// default: rollback).
    pub(crate) on_failure: Option<OnFailure>,
}

impl Request {
    /// Whether any target was asked for (`--target N` or `NAME=N`).
    pub(crate) fn has_target(&self) -> bool {
        self.target.is_some() || !self.group_targets.is_empty()
    }

    /// The selection of a new roll.
    pub(crate) fn select(&self) -> Selection {
        self.select.clone().unwrap_or(Selection::All)
    }

    /// The strategy of a new roll.
    pub(crate) fn strategy(&self) -> RollStrategy {
        self.strategy.unwrap_or_default()
    }

    /// The floor of a new roll.
    pub(crate) fn floor(&self) -> Floor {
        self.floor.unwrap_or_default()
    }

    /// What a failure leads to in a new roll.
    pub(crate) fn on_failure(&self) -> OnFailure {
        self.on_failure.unwrap_or_default()
    }
}

pub(crate) enum Preflight {
    /// Nothing selected: the cluster is already what was asked.
    NothingToDo(String),
    /// The first checkpoint, and notes for the operator.
    Ready(Box<Checkpoint>, Vec<String>),
}

/// The preflight of a fresh run: the request checked, then the
/// cluster-wide reads (other runs, Mesos' agents and schedule), each
/// group's look, Marathon's health, and the first checkpoint.
pub(crate) async fn preflight<P: Ports>(
    ports: P,
    env: &Environment,
    request: &Request,
    run_id: String,
) -> Result<Preflight, RollError> {
    check_request(request, env).map_err(RollError::refused)?;
    // The reads that depend on nothing else go at once, and Marathon's
    // apps are listed once for both its checks (a large Marathon takes
    // seconds to list them) while the groups are looked at, which need
    // only Mesos; what they come to is judged in the order the checks
    // always had.
    let marathon = ports.marathon();
    let looking = async {
        let (others, alarms, mesos) = tokio::join!(
            refuse_other_runs(ports, env, &run_id),
            check_alarms(ports.aws(), env.alarms.as_deref().unwrap_or_default()),
            mesos_view(ports.mesos()),
        );
        others?;
        alarms?;
        let (agents, schedule) = mesos?;
        let shared = group::Shared {
            env,
            request,
            agents: &agents,
            schedule: &schedule,
        };
        let looks = look_at_groups(ports, &shared).await?;
        Ok::<_, RollError>((agents, looks))
    };
    let listing = async { tokio::try_join!(marathon.apps(), marathon.deployments()) };
    let (looked, listed) = tokio::join!(looking, listing);
    let (agents, looks) = looked?;
    if looks.rolls.is_empty() {
        return Ok(Preflight::NothingToDo(looks.nothing.join("; ")));
    }
    let mut notes = looks.notes;
    notes.extend(
        looks
            .nothing
            .into_iter()
            .map(|why| format!("left out of the plan: {why}")),
    );
    notes.extend(foreign_agents_note(env, &looks.rolls, &agents));
    let (apps, deployments) =
        listed.map_err(|e| RollError::refused(format!("preflight cannot read Marathon: {e}")))?;
    refuse_unhealthy_marathon(&apps, &deployments, request)?;
    notes.extend(services::check_services(ports, &apps).await?);
    let checkpoint = first_checkpoint(env, request, run_id, looks.rolls, &looks.raise_max);
    Ok(Preflight::Ready(Box::new(checkpoint), notes))
}

/// Refuses alarms CloudWatch does not know and alarms already in ALARM
/// (`decide::alarms::refusal` says why); no names is no call.
pub(crate) async fn check_alarms(
    aws: &(impl AutoScaling + Sync),
    names: &[String],
) -> Result<(), RollError> {
    if names.is_empty() {
        return Ok(());
    }
    let states = aws.describe_alarms(names).await.map_err(|e| {
        RollError::refused(format!(
            "preflight cannot read the CloudWatch alarms {}: {e}",
            names.join(", ")
        ))
    })?;
    match alarms::refusal(&states, names) {
        Some(why) => Err(RollError::refused(why)),
        None => Ok(()),
    }
}

/// One roll per cluster: another run holding any group of it refuses
/// this one before anything is written.
async fn refuse_other_runs<P: Ports>(
    ports: P,
    env: &Environment,
    run_id: &str,
) -> Result<(), RollError> {
    let own: Vec<&str> = env.groups.iter().map(|g| g.asg.as_str()).collect();
    let others = cluster_lock::other_runs(ports, env, &own, run_id)
        .await
        .map_err(|e| RollError::refused(format!("looking for other rolls of this cluster: {e}")))?;
    if let Verdict::Refuse(other) = judge(run_id, &others) {
        return Err(RollError::refused(refusal(&other)));
    }
    Ok(())
}

/// Mesos' active agents and its maintenance schedule, read once for every
/// group. Not reading them is refused like any failed preflight: nothing
/// was changed, so exit 2.
async fn mesos_view(
    mesos: &(impl MesosMaster + Sync),
) -> Result<(Vec<AgentIdentity>, MaintenanceSchedule), RollError> {
    let agents: Vec<_> = mesos
        .agents()
        .await
        .map_err(|e| {
            let e = RollError::from(e);
            RollError::refused(format!("preflight cannot read the Mesos agents: {e}"))
        })?
        .registered
        .iter()
        .filter(|a| a.active)
        .map(|a| a.identity())
        .collect();
    let schedule = mesos.maintenance_schedule().await.map_err(|e| {
        let e = RollError::from(e);
        RollError::refused(format!(
            "preflight cannot read the maintenance schedule: {e}"
        ))
    })?;
    Ok((agents, schedule))
}

/// What the groups' looks found, in the environment's order of groups.
struct Looks {
    /// Each group with something selected.
    rolls: Vec<GroupRoll>,
    /// Whether each of `rolls` must have its MaxSize raised.
    raise_max: Vec<bool>,
    /// Why each other group is left out of the plan.
    nothing: Vec<String>,
    /// The groups' notes, each named by its group in a cluster.
    notes: Vec<String>,
}

/// Each group's look, one after the other; the first refusal ends them.
async fn look_at_groups<P: Ports>(
    ports: P,
    shared: &group::Shared<'_>,
) -> Result<Looks, RollError> {
    let groups = &shared.env.groups;
    let named = groups.len() > 1;
    let mut looks = Looks {
        rolls: Vec::new(),
        raise_max: Vec::new(),
        nothing: Vec::new(),
        notes: Vec::new(),
    };
    for spec in groups {
        match group::look(ports, shared, spec, groups.len()).await? {
            group::Found::Nothing(why) => looks.nothing.push(why),
            group::Found::Ready {
                roll,
                raise_max,
                notes,
            } => {
                looks.notes.extend(notes.into_iter().map(|n| {
                    if named {
                        format!("{}: {n}", roll.asg)
                    } else {
                        n
                    }
                }));
                looks.raise_max.push(raise_max);
                looks.rolls.push(*roll);
            }
        }
    }
    Ok(looks)
}

/// A note counting the active agents no selected instance stands for:
/// the roll leaves them alone.
fn foreign_agents_note(
    env: &Environment,
    rolls: &[GroupRoll],
    agents: &[AgentIdentity],
) -> Option<String> {
    let ours: HashSet<&str> = rolls
        .iter()
        .flat_map(|r| &r.instances)
        .map(|i| i.agent_id.as_str())
        .collect();
    let foreign = agents
        .iter()
        .filter(|a| !ours.contains(a.id.as_str()))
        .count();
    if foreign == 0 {
        return None;
    }
    let whose = if env.groups.len() > 1 {
        "of the groups rolled"
    } else {
        "of this ASG"
    };
    Some(format!(
        "{foreign} active agent(s) belong to no selected instance {whose}: left alone"
    ))
}

/// Refuses a roll whose start finds Marathon unhealthy (apps the operator
/// allowed aside): a roll starts only on a healthy cluster, since after
/// each move it waits for every app to be healthy again.
fn refuse_unhealthy_marathon(
    apps: &[App],
    deployments: &[Deployment],
    request: &Request,
) -> Result<(), RollError> {
    // Marathon's own view (running is up): a settle time would only hold
    // up the start of a roll behind a task that started a moment ago.
    let verdict = health::judge(apps, deployments, health::Settle::NONE);
    let unhealthy: Vec<String> = verdict
        .unhealthy()
        .filter(|a| !request.allow_unhealthy.contains(&a.id))
        .map(|a| format!("{} ({})", a.id, a.reason().unwrap_or_default()))
        .collect();
    if !unhealthy.is_empty() {
        return Err(RollError::refused(format!(
            "Marathon is not healthy before the roll: {}; wait for it, or pass --allow-unhealthy APP",
            unhealthy.join(", ")
        )));
    }
    Ok(())
}

/// The first checkpoint of a fresh run: the settings fixed for the roll,
/// the groups found, their plan, and the start event; nothing done yet.
fn first_checkpoint(
    env: &Environment,
    request: &Request,
    run_id: String,
    rolls: Vec<GroupRoll>,
    raise_max: &[bool],
) -> Checkpoint {
    let all: Vec<RolledInstance> = rolls.iter().flat_map(|r| r.instances.clone()).collect();
    // A group's instance maintenance policy bounds it too
    // (`MinHealthyPercentage`), unless the operator said.
    let policy_bound = rolls
        .iter()
        .filter_map(|r| r.surge.as_ref()?.min_healthy_bound)
        .min();
    let max_unavailable = request.max_unavailable.unwrap_or_else(|| {
        let default = default_max_unavailable(&all);
        policy_bound.map_or(default, |bound| default.min(bound))
    });
    let plan = cluster_plan(&rolls, raise_max, request);
    let start = start_line(&rolls);
    let mut checkpoint = Checkpoint {
        version: VERSION,
        run_id,
        environment: RecordedEnvironment::of(env),
        honor_min_health: request.floor() == Floor::MinHealth,
        max_unavailable,
        failure: None,
        acknowledged_failures: Vec::new(),
        failure_limit: env.failure_limit.unwrap_or(0),
        alarms: env.alarms.clone().unwrap_or_default(),
        tolerated_failures: Vec::new(),
        standby: env.standby,
        protected: env.protected,
        on_failure: request.on_failure(),
        allow_unhealthy: request.allow_unhealthy.clone(),
        pause: None,
        open_page: None,
        progress: Default::default(),
        operations_applied: Vec::new(),
        services: Default::default(),
        summary: None,
        groups: rolls,
        plan,
        events: Vec::new(),
        events_dropped: 0,
        events_in_log: 0,
    };
    let now = RollClock::new(env.time_scale).now();
    checkpoint.log(now, EventKind::Start, format!("roll of {start}"));
    checkpoint
}

/// The plan of every group rolled, each raising its own MaxSize or not.
fn cluster_plan(rolls: &[GroupRoll], raise_max: &[bool], request: &Request) -> RollPlan {
    let plan_groups: Vec<GroupPlan<'_>> = rolls
        .iter()
        .zip(raise_max)
        .map(|(r, raise_max)| GroupPlan {
            asg: &r.asg,
            instances: &r.instances,
            raise_max: *raise_max,
            held: !r.held.is_empty(),
        })
        .collect();
    build_cluster(
        &plan_groups,
        PlanOptions {
            canary: request.canary,
            // Each group's own (`GroupPlan::raise_max`).
            raise_max: false,
            strategy: request.strategy(),
            held: false,
        },
    )
}

/// What the start event says of each group: its target and what was
/// selected.
fn start_line(rolls: &[GroupRoll]) -> String {
    rolls
        .iter()
        .map(|r| {
            format!(
                "{} to {} agents: {} instance(s) selected by {}",
                r.asg,
                r.target,
                r.instances.len(),
                r.select
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What the operator asked, checked before anything is read: a target of
/// at least one agent and at most [`MAX_GROUP_SIZE`] for every group (and
/// none for a group the environment does not list), a canary of at least
/// one step.
fn check_request(request: &Request, env: &Environment) -> Result<(), String> {
    for spec in &env.groups {
        group::target(spec, request, env.groups.len())?;
        group::selection(spec, request)?;
    }
    if let Some(unknown) = request
        .group_targets
        .keys()
        .find(|name| !env.groups.iter().any(|g| &g.asg == *name))
    {
        return Err(format!(
            "--target {unknown}=N names no group of the environment (its groups: {})",
            env.groups
                .iter()
                .map(|g| g.asg.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(target) = request.target.filter(|_| env.groups.len() > 1) {
        return Err(format!(
            "--target {target} names no group: this cluster has {} groups; give each its target with \
             target = N in its [[group]] table or --target NAME=N",
            env.groups.len()
        ));
    }
    if request.canary == Some(0) {
        return Err(
            "--canary 0 would hold no step for the operator: give the number of instances \
             to replace first (at least 1), or leave --canary out"
                .to_string(),
        );
    }
    if request.max_unavailable == Some(0) {
        return Err(
            "--max-unavailable 0 would never terminate an old agent: give how many old agents \
             per AZ may be terminated at once (at least 1)"
                .to_string(),
        );
    }
    Ok(())
}

/// The default `--max-unavailable`: a tenth of the old agents of the AZ
/// with the most of them, and at least 5 (AWS Instance Refresh's default
/// also replaces a tenth at a time). See docs/reference.md, "The drain".
pub(crate) fn default_max_unavailable(instances: &[RolledInstance]) -> u32 {
    let mut per_az: BTreeMap<&str, u32> = BTreeMap::new();
    for i in instances {
        *per_az.entry(i.availability_zone.as_str()).or_default() += 1;
    }
    let largest = per_az.values().copied().max().unwrap_or(0);
    largest
        .div_ceil(10)
        .max(super::record::checkpoint::DEFAULT_MAX_UNAVAILABLE)
}

/// N + K: the group's size once scaled up, before any termination. Checked
/// arithmetic, and refused above [`MAX_GROUP_SIZE`], naming the flag.
fn peak_size(n: u32, k: u32) -> Result<u32, String> {
    match n.checked_add(k) {
        Some(peak) if peak <= MAX_GROUP_SIZE => Ok(peak),
        _ => Err(format!(
            "--target {n} with {k} instance(s) to replace needs N + K = {} instances during \
             the roll, above {MAX_GROUP_SIZE}, the most roller asks a group to hold: \
             give a --target of at most {}",
            u64::from(n) + u64::from(k),
            MAX_GROUP_SIZE.saturating_sub(k)
        )),
    }
}

impl RecordedEnvironment {
    pub(crate) fn of(env: &Environment) -> RecordedEnvironment {
        RecordedEnvironment {
            region: env.region.clone(),
            aws_endpoint_url: env.aws_endpoint_url.clone(),
            mesos: env.mesos.clone(),
            marathon: env.marathon.clone(),
            agent_match: env.agent_match.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse_and_bad_ones_say_what_is_expected() {
        assert_eq!("all".parse(), Ok(Selection::All));
        assert_eq!("outdated".parse(), Ok(Selection::Outdated));
        assert_eq!(
            "older-than=14d".parse(),
            Ok(Selection::OlderThan(Duration::from_secs(14 * 86_400)))
        );
        for bad in ["some", "older-than=", "older-than=3w", "older-than=xd"] {
            let err = bad.parse::<Selection>().unwrap_err();
            assert!(err.contains("older-than=14d"), "{err}");
        }
    }

    #[test]
    fn an_age_too_long_for_a_duration_is_refused_not_overflowed() {
        // The fewest days whose seconds do not fit in a u64.
        let err = "older-than=213503982334602d"
            .parse::<Selection>()
            .unwrap_err();
        assert!(err.contains("no instance can be that old"), "{err}");
        assert!(err.contains("older-than=14d"), "{err}");
    }

    fn request(target: u32, canary: Option<u32>) -> Request {
        Request {
            target: Some(target),
            raise_max: true,
            canary,
            ..Request::default()
        }
    }

    fn environment(text: &str) -> Environment {
        // Top-level keys first: a key after a [[group]] table is the table's.
        let text = format!("mesos = [\"http://m:5050\"]\nmarathon = [\"http://m:8080\"]\n{text}\n");
        Environment::resolve(
            Some((std::path::Path::new("env.toml"), &text)),
            &|_| None,
            &[],
        )
        .expect("environment")
    }

    fn one() -> Environment {
        environment("asg = \"a\"")
    }

    fn cluster() -> Environment {
        environment(
            "[[group]]\nname = \"a\"\ntarget = 4\n[[group]]\nname = \"b\"\nselect = \"outdated\"",
        )
    }

    #[test]
    fn a_clusters_targets_come_from_its_tables_or_name_the_group_and_a_bare_target_is_refused() {
        let env = cluster();
        let mut asked = request(0, None);
        asked.target = None;
        let missing = check_request(&asked, &env).unwrap_err();
        assert!(
            missing.starts_with("no target for group b") && missing.contains("--target b=N"),
            "{missing}"
        );
        asked.group_targets.insert("b".to_string(), 2);
        assert!(check_request(&asked, &env).is_ok());
        assert_eq!(group::target(&env.groups[0], &asked, 2), Ok(4));
        assert_eq!(group::target(&env.groups[1], &asked, 2), Ok(2));
        assert_eq!(
            group::selection(&env.groups[1], &asked).map(|s| s.to_string()),
            Ok("outdated".to_string())
        );
        // A flag's target wins over the file's.
        asked.group_targets.insert("a".to_string(), 6);
        assert_eq!(group::target(&env.groups[0], &asked, 2), Ok(6));
        asked.group_targets.insert("c".to_string(), 1);
        let unknown = check_request(&asked, &env).unwrap_err();
        assert!(
            unknown.contains("--target c=N names no group") && unknown.contains("a, b"),
            "{unknown}"
        );
        asked.group_targets.remove("c");
        asked.target = Some(5);
        let bare = check_request(&asked, &env).unwrap_err();
        assert!(bare.starts_with("--target 5 names no group"), "{bare}");
        asked.target = None;
        asked.group_targets.insert("b".to_string(), 0);
        let zero = check_request(&asked, &env).unwrap_err();
        assert!(
            zero.contains("the target 0 of group b would leave no agent"),
            "{zero}"
        );
    }

    #[test]
    fn a_target_of_none_or_beyond_the_bound_and_a_canary_of_none_are_refused_naming_the_flag() {
        assert!(check_request(&request(55, None), &one()).is_ok());
        assert!(check_request(&request(MAX_GROUP_SIZE, Some(1)), &one()).is_ok());
        let zero = check_request(&request(0, None), &one()).unwrap_err();
        assert!(
            zero.starts_with("--target 0 would leave no agent"),
            "{zero}"
        );
        let huge = check_request(&request(u32::MAX, None), &one()).unwrap_err();
        assert!(
            huge.starts_with("--target 4294967295 is above 100000"),
            "{huge}"
        );
        let canary = check_request(&request(55, Some(0)), &one()).unwrap_err();
        assert!(canary.starts_with("--canary 0"), "{canary}");
    }

    #[test]
    fn n_plus_k_is_checked_and_bounded_even_at_the_edge_of_u32() {
        assert_eq!(peak_size(55, 55), Ok(110));
        assert_eq!(peak_size(MAX_GROUP_SIZE - 12, 12), Ok(MAX_GROUP_SIZE));
        let over = peak_size(MAX_GROUP_SIZE - 11, 12).unwrap_err();
        assert!(over.contains("N + K = 100001"), "{over}");
        assert!(over.contains("--target of at most 99988"), "{over}");
        let wrapped = peak_size(u32::MAX, 12).unwrap_err();
        assert!(wrapped.contains("N + K = 4294967307"), "{wrapped}");
        assert!(peak_size(u32::MAX, u32::MAX).is_err());
    }

    #[test]
    fn the_default_max_unavailable_is_a_tenth_of_the_largest_az_and_at_least_five() {
        let instances = |per_az: &[usize]| -> Vec<RolledInstance> {
            per_az
                .iter()
                .enumerate()
                .flat_map(|(az, &n)| {
                    (0..n).map(move |i| RolledInstance {
                        id: format!("i-{az}-{i}"),
                        availability_zone: format!("az-{az}"),
                        agent_id: String::new(),
                        hostname: String::new(),
                        ip: None,
                        terminate_sent: false,
                        reclaimed: false,
                        replaced: false,
                        other_tasks: Default::default(),
                        batch: 0,
                    })
                })
                .collect()
        };
        assert_eq!(default_max_unavailable(&instances(&[19, 18, 18])), 5);
        assert_eq!(default_max_unavailable(&instances(&[334, 333, 333])), 34);
        assert_eq!(default_max_unavailable(&instances(&[51, 3])), 6);
        assert_eq!(default_max_unavailable(&[]), 5);
    }
}
