//! Preflight of a fresh run (read-only): finds the group, selects the
//! instances to replace, checks that the roll can be done safely, and
//! builds the first checkpoint with its plan. Every refusal names what is
//! wrong and changes nothing.

use std::collections::{BTreeMap, HashSet};
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use super::decide::cluster_lock::{Verdict, judge, refusal};
use super::decide::health;
use super::decide::roll_plan::{self, PlanOptions, RollStrategy};
use super::decide::safety::Floor;
use super::engine::cluster_lock;
use super::error::RollError;
use super::ports::Ports;
use super::ports::auto_scaling::{AutoScaling, LifecycleState, match_agents};
use super::ports::marathon::Marathon;
use super::ports::mesos::MesosMaster;
use super::record::RUN_ID_TAG;
use super::record::checkpoint::{
    Checkpoint, EventKind, OnFailure, OriginalGroup, RecordedEnvironment, RolledInstance, VERSION,
};
use super::record::env::Environment;

/// Which instances are replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
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
pub const MAX_GROUP_SIZE: u32 = 100_000;

#[derive(Clone, Debug)]
pub struct Request {
    pub target: u32,
    pub select: Selection,
    pub raise_max: bool,
    pub canary: Option<u32>,
    /// Apps allowed to be unhealthy at the start (`--allow-unhealthy`).
    pub allow_unhealthy: Vec<String>,
    /// What each app keeps while its tasks move (`--min-healthy`; the
    /// default is its `minimumHealthCapacity`).
    pub floor: Floor,
    /// Leave instances that are not InService (Standby, Pending, lifecycle
    /// hook waits) out of the roll instead of refusing
    /// (`--skip-not-in-service`).
    pub skip_not_in_service: bool,
    /// How old agents are emptied (`--strategy`).
    pub strategy: RollStrategy,
    /// Drain: old agents being terminated at once, per AZ (`None`: the
    /// default, `default_max_unavailable`).
    pub max_unavailable: Option<u32>,
    /// What a failure on the new agents leads to (`--on-failure`).
    pub on_failure: OnFailure,
}

pub enum Preflight {
    /// Nothing selected: the cluster is already what was asked.
    NothingToDo(String),
    /// The first checkpoint, and notes for the operator.
    Ready(Box<Checkpoint>, Vec<String>),
}

pub async fn preflight<P: Ports>(
    ports: P,
    env: &Environment,
    request: &Request,
    run_id: String,
) -> Result<Preflight, RollError> {
    let (aws, mesos, marathon) = (ports.aws(), ports.mesos(), ports.marathon());
    let refuse = |m: String| Err(RollError::refused(m));
    check_request(request).map_err(RollError::refused)?;
    let group = aws
        .describe_group(&env.asg)
        .await
        .map_err(|e| RollError::refused(format!("ASG {}: {e}", env.asg)))?;
    if let Some(other) = group.tag(RUN_ID_TAG) {
        return refuse(format!(
            "ASG {} carries tag {RUN_ID_TAG}={other}, but there is no checkpoint for that run here: \
             a roll may be running elsewhere, or its checkpoint was lost. Rerunning now could double the cluster. \
             Recover with --checkpoint PATH of that run's checkpoint, or, after a human has checked, \
             `roller abandon --run-id {other}`",
            env.asg
        ));
    }
    // One roll per cluster: another run holding any group of it refuses
    // this one before anything is written.
    let others = cluster_lock::other_runs(ports, env, &[&env.asg], &run_id)
        .await
        .map_err(|e| RollError::refused(format!("looking for other rolls of this cluster: {e}")))?;
    if let Verdict::Refuse(other) = judge(&run_id, &others) {
        return refuse(refusal(&other));
    }
    let mut notes = Vec::new();
    let in_service: Vec<_> = group
        .instances
        .iter()
        .filter(|i| i.lifecycle_state == LifecycleState::InService)
        .collect();
    let odd: Vec<String> = group
        .instances
        .iter()
        .filter(|i| i.lifecycle_state != LifecycleState::InService)
        .map(|i| format!("{} ({:?})", i.id, i.lifecycle_state))
        .collect();
    if !odd.is_empty() {
        if !request.skip_not_in_service {
            return refuse(format!(
                "instances not InService (Standby, Pending, lifecycle-hook waits): {}; \
                 put them back in service or detach them, or pass --skip-not-in-service \
                 to leave them out of the roll",
                odd.join(", ")
            ));
        }
        notes.push(format!(
            "left out of the roll (not InService): {}",
            odd.join(", ")
        ));
    }
    let protected: Vec<&str> = in_service
        .iter()
        .filter(|i| i.protected_from_scale_in)
        .map(|i| i.id.as_str())
        .collect();
    if !protected.is_empty() {
        notes.push(format!(
            "scale-in protected (terminated explicitly all the same): {}",
            protected.join(", ")
        ));
    }
    let ec2 = aws
        .describe_instances(&in_service.iter().map(|i| i.id.clone()).collect::<Vec<_>>())
        .await
        .map_err(|e| RollError::refused(format!("DescribeInstances: {e}")))?;
    let now = SystemTime::now();
    let selected: Vec<_> = in_service
        .iter()
        .filter(|i| match &request.select {
            Selection::All => true,
            Selection::Outdated => i.launch_source != group.launch_source,
            Selection::OlderThan(age) => ec2
                .iter()
                .find(|e| e.id == i.id)
                .and_then(|e| e.launch_time)
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|running| running > *age),
        })
        .collect();
    if selected.is_empty() {
        return Ok(Preflight::NothingToDo(format!(
            "no instance of {} is selected by --select {}: nothing to replace",
            env.asg, request.select
        )));
    }
    let k = u32::try_from(selected.len()).unwrap_or(u32::MAX);
    let n = request.target;
    let peak = peak_size(n, k).map_err(RollError::refused)?;
    if group.max_size < peak && !request.raise_max {
        return refuse(format!(
            "MaxSize {} < N + K = {n} + {k}: the scale-up would be refused; raise MaxSize or pass --raise-max (restored at finish)",
            group.max_size
        ));
    }
    if group.min_size > n {
        return refuse(format!(
            "MinSize {} > target {n}: the terminations would be refused; lower MinSize or the target",
            group.min_size
        ));
    }
    // Like any failed preflight: nothing was changed, so exit 2.
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
    let selected_ec2: Vec<_> = ec2
        .iter()
        .filter(|e| selected.iter().any(|s| s.id == e.id))
        .cloned()
        .collect();
    let matches = match_agents(&env.agent_match, &selected_ec2, &agents);
    let unmatched: Vec<String> = selected
        .iter()
        .filter(|s| !matches.matched.iter().any(|(i, _)| *i == s.id))
        .map(|s| s.id.clone())
        .collect();
    if !unmatched.is_empty() {
        return refuse(format!(
            "selected instances that match no single active Mesos agent (by {}): {}; \
             fix the agents or the `match` key, then run again",
            env.agent_match,
            unmatched.join(", ")
        ));
    }
    let ours: HashSet<&str> = matches.matched.iter().map(|(_, a)| a.as_str()).collect();
    let foreign = agents
        .iter()
        .filter(|a| !ours.contains(a.id.as_str()))
        .count();
    if foreign > 0 {
        notes.push(format!(
            "{foreign} active agent(s) belong to no selected instance of this ASG: left alone"
        ));
    }
    let (apps, deployments) = tokio::try_join!(marathon.apps(), marathon.deployments())
        .map_err(|e| RollError::refused(format!("preflight cannot read Marathon: {e}")))?;
    // Marathon's own view (running is up): a settle time would only hold
    // up the start of a roll behind a task that started a moment ago.
    let verdict = health::judge(&apps, &deployments, health::Settle::NONE);
    let unhealthy: Vec<String> = verdict
        .unhealthy()
        .filter(|a| !request.allow_unhealthy.contains(&a.id))
        .map(|a| format!("{} ({})", a.id, a.reason().unwrap_or_default()))
        .collect();
    if !unhealthy.is_empty() {
        return refuse(format!(
            "Marathon is not healthy before the roll: {}; wait for it, or pass --allow-unhealthy APP",
            unhealthy.join(", ")
        ));
    }

    let instances: Vec<RolledInstance> = selected
        .iter()
        .map(|i| {
            let agent_id = matches
                .matched
                .iter()
                .find(|(id, _)| *id == i.id)
                .map(|(_, a)| a.clone())
                .unwrap_or_default();
            let agent = agents.iter().find(|a| a.id == agent_id);
            RolledInstance {
                id: i.id.clone(),
                availability_zone: i.availability_zone.clone(),
                hostname: agent.map(|a| a.hostname.clone()).unwrap_or_default(),
                ip: agent.and_then(|a| a.ip).map(|ip| ip.to_string()),
                agent_id,
                terminate_sent: false,
            }
        })
        .collect();
    // A window already over a machine to replace was posted by someone
    // else (this run has posted nothing): another roll's leftover, or an
    // operator's maintenance. Rolling under it would mix the two.
    let schedule = mesos.maintenance_schedule().await.map_err(|e| {
        let e = RollError::from(e);
        RollError::refused(format!(
            "preflight cannot read the maintenance schedule: {e}"
        ))
    })?;
    let scheduled: Vec<String> = instances
        .iter()
        .filter(|i| {
            let machine = i.machine().machine_id();
            schedule
                .windows
                .iter()
                .flat_map(|w| &w.machines)
                .any(|m| m.same_machine(&machine))
        })
        .map(|i| format!("{} ({})", i.id, i.machine().machine_id()))
        .collect();
    if !scheduled.is_empty() {
        return refuse(format!(
            "Mesos' maintenance schedule already has a window over {} agent(s) of ASG {} that this \
             run did not post (another roll's leftover, or an operator's maintenance): {}. \
             Nothing was changed. Look at it with GET /maintenance/schedule on the leading \
             master; once that maintenance is over or the window removed (`roller abandon` \
             removes its own roll's), run again",
            scheduled.len(),
            env.asg,
            scheduled.join(", ")
        ));
    }
    let mut zones: BTreeMap<String, u32> = BTreeMap::new();
    for i in &in_service {
        *zones.entry(i.availability_zone.clone()).or_insert(0) += 1;
    }
    let max_unavailable = request
        .max_unavailable
        .unwrap_or_else(|| default_max_unavailable(&instances));
    let plan = roll_plan::build(
        &env.asg,
        &instances,
        PlanOptions {
            canary: request.canary,
            raise_max: request.raise_max && group.max_size < peak,
            strategy: request.strategy,
        },
    );
    let mut checkpoint = Checkpoint {
        version: VERSION,
        run_id,
        asg: env.asg.clone(),
        environment: RecordedEnvironment::of(env),
        target: n,
        select: request.select.to_string(),
        honor_min_health: request.floor == Floor::MinHealth,
        original: OriginalGroup {
            min_size: group.min_size,
            max_size: group.max_size,
            desired_capacity: group.desired_capacity,
            zones,
            instance_ids: in_service.iter().map(|i| i.id.clone()).collect(),
        },
        instances,
        suspended_before: group
            .suspended_processes
            .iter()
            .map(|p| p.to_string())
            .collect(),
        suspended_by_roll: Vec::new(),
        raised_max_from: None,
        maintenance: Vec::new(),
        surges: Vec::new(),
        waves: Vec::new(),
        max_unavailable,
        new_agents: Vec::new(),
        failure: None,
        acknowledged_failures: Vec::new(),
        on_failure: request.on_failure,
        bake_until_unix_ms: None,
        allow_unhealthy: request.allow_unhealthy.clone(),
        pause: None,
        open_page: None,
        progress: Default::default(),
        operations_applied: Vec::new(),
        summary: None,
        plan,
        events: Vec::new(),
    };
    checkpoint.log(
        EventKind::Start,
        format!(
            "roll of {} to {n} agents: {k} instance(s) selected by {}",
            env.asg, request.select
        ),
    );
    Ok(Preflight::Ready(Box::new(checkpoint), notes))
}

/// What the operator asked, checked before anything is read: a target of
/// at least one agent and at most [`MAX_GROUP_SIZE`], a canary of at least
/// one step.
fn check_request(request: &Request) -> Result<(), String> {
    let n = request.target;
    if n == 0 {
        return Err(
            "--target 0 would leave no agent: give the number of agents the cluster must have"
                .to_string(),
        );
    }
    if n > MAX_GROUP_SIZE {
        return Err(format!(
            "--target {n} is above {MAX_GROUP_SIZE}, the most agents roller rolls a group to: \
             give the number of agents the cluster must have when done"
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
/// also replaces a tenth at a time). See the README's drain section.
pub fn default_max_unavailable(instances: &[RolledInstance]) -> u32 {
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
    pub fn of(env: &Environment) -> RecordedEnvironment {
        RecordedEnvironment {
            region: env.region.clone(),
            aws_endpoint_url: env.aws_endpoint_url.clone(),
            mesos: env.mesos.clone(),
            marathon: env.marathon.clone(),
            agent_match: env.agent_match.to_string(),
            time_scale: env.time_scale,
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
            target,
            select: Selection::All,
            raise_max: true,
            canary,
            allow_unhealthy: Vec::new(),
            floor: Floor::default(),
            skip_not_in_service: false,
            strategy: RollStrategy::default(),
            max_unavailable: None,
            on_failure: Default::default(),
        }
    }

    #[test]
    fn a_target_of_none_or_beyond_the_bound_and_a_canary_of_none_are_refused_naming_the_flag() {
        assert!(check_request(&request(55, None)).is_ok());
        assert!(check_request(&request(MAX_GROUP_SIZE, Some(1))).is_ok());
        let zero = check_request(&request(0, None)).unwrap_err();
        assert!(
            zero.starts_with("--target 0 would leave no agent"),
            "{zero}"
        );
        let huge = check_request(&request(u32::MAX, None)).unwrap_err();
        assert!(
            huge.starts_with("--target 4294967295 is above 100000"),
            "{huge}"
        );
        let canary = check_request(&request(55, Some(0))).unwrap_err();
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
