//! One group's part of the preflight: its target, the instances selected,
//! the sizes the roll needs, each selected instance matched to one active
//! Mesos agent, and no maintenance window over them that this run did not
//! post. Read-only; every refusal names the group.

use std::collections::BTreeMap;
use std::time::SystemTime;

use super::{MAX_GROUP_SIZE, Request, Selection, peak_size};
use crate::roll::decide::held::{self, Policies, Sorted};
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::decide::{refresh, surge_cap};
use crate::roll::engine::clock::human;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{
    AgentIdentity, AgentMatches, AutoScaling, AutoScalingGroup, Ec2Instance, GroupInstance,
    match_agents,
};
use crate::roll::ports::mesos::MaintenanceSchedule;
use crate::roll::record::RUN_ID_TAG;
use crate::roll::record::checkpoint::{GroupRoll, OriginalGroup, RolledInstance, SurgeCap};
use crate::roll::record::env::{Environment, GroupSpec};

/// What the preflight found in one group.
pub(super) enum Found {
    /// Nothing of it is selected: it is left out of the plan.
    Nothing(String),
    /// Its part of the roll, whether MaxSize must be raised, and notes.
    Ready {
        roll: Box<GroupRoll>,
        raise_max: bool,
        notes: Vec<String>,
    },
}

/// What every group's look shares: read once for the whole cluster.
pub(super) struct Shared<'a> {
    pub(crate) env: &'a Environment,
    pub(crate) request: &'a Request,
    /// Active Mesos agents.
    pub(crate) agents: &'a [AgentIdentity],
    pub(crate) schedule: &'a MaintenanceSchedule,
}

/// The target of `spec` (`--target NAME=N`, else its `target` in the file,
/// else, for a one-group environment, `--target N`), checked.
pub(super) fn target(spec: &GroupSpec, request: &Request, groups: usize) -> Result<u32, String> {
    let n = match (request.group_targets.get(&spec.asg), spec.target) {
        (Some(n), _) => *n,
        (None, Some(n)) => n,
        (None, None) if groups == 1 => request.target.ok_or_else(|| {
            "--target N is required for a new roll (the number of agents when done)".to_string()
        })?,
        (None, None) => {
            return Err(format!(
                "no target for group {}: give it target = N in its [[group]] table or \
                 --target {}=N (the number of agents it must have when done)",
                spec.asg, spec.asg
            ));
        }
    };
    let flag = if groups == 1 {
        format!("--target {n}")
    } else {
        format!("the target {n} of group {}", spec.asg)
    };
    if n == 0 {
        return Err(format!(
            "{flag} would leave no agent: give the number of agents the cluster must have"
        ));
    }
    if n > MAX_GROUP_SIZE {
        return Err(format!(
            "{flag} is above {MAX_GROUP_SIZE}, the most agents roller rolls a group to: \
             give the number of agents the cluster must have when done"
        ));
    }
    Ok(n)
}

/// The selection of `spec` (its `select` in the file, else `--select`).
pub(super) fn selection(spec: &GroupSpec, request: &Request) -> Result<Selection, String> {
    match &spec.select {
        Some(text) => text
            .parse()
            .map_err(|e| format!("group {}'s select: {e}", spec.asg)),
        None => Ok(request.select()),
    }
}

/// The preflight of one group: its target and selection, then AWS's view
/// of it (the group, then EC2's of its InService instances), checked
/// against the agents and the schedule read once for the cluster.
pub(super) async fn look<P: Ports>(
    ports: P,
    shared: &Shared<'_>,
    spec: &GroupSpec,
    groups: usize,
) -> Result<Found, RollError> {
    let request = shared.request;
    let asg = spec.asg.as_str();
    let n = target(spec, request, groups).map_err(RollError::refused)?;
    let select = selection(spec, request).map_err(RollError::refused)?;
    let aws = ports.aws();
    let group = unclaimed_group(aws, asg).await?;
    no_refresh_at_work(aws, asg).await?;
    roller_hooks_exist(aws, asg, &spec.complete_lifecycle_hooks).await?;
    let policies = Policies {
        standby: shared.env.standby,
        protected: shared.env.protected,
        skip_not_in_service: request.skip_not_in_service,
    };
    let mut sorted = held::sort(&group.instances, policies);
    refuse_not_in_service(asg, &sorted)?;
    let ec2 = aws
        .describe_instances(
            &sorted
                .taken
                .iter()
                .map(|i| i.id.clone())
                .collect::<Vec<_>>(),
        )
        .await
        .map_err(|e| RollError::refused(format!("DescribeInstances: {e}")))?;
    let selected = selected(&select, &group, &sorted.taken, &ec2);
    // Held instances the selection leaves are not brought in: one in
    // Standby stays there, out of the roll.
    let (held, unselected): (Vec<_>, Vec<_>) = std::mem::take(&mut sorted.held)
        .into_iter()
        .partition(|h| selected.iter().any(|i| i.id == h.id));
    sorted.held = held;
    for h in unselected.iter().filter(|h| h.standby) {
        if let Some(i) = group.instance(&h.id) {
            sorted.taken.retain(|t| t.id != h.id);
            sorted.left_out.push((i, "not selected"));
        }
    }
    let wait = human(shared.env.timeouts.operator);
    let notes = sorted.notes(policies, &wait);
    if selected.is_empty() {
        return Ok(Found::Nothing(format!(
            "no instance of {asg} is selected by --select {select}: nothing to replace"
        )));
    }
    let surge = capped_surge(shared, asg, &group, n, selected.len())?;
    let peak = check_sizes(
        asg,
        &group,
        n,
        selected.len(),
        surge.as_ref(),
        request.raise_max,
    )?;
    let mut instances = matched_instances(shared, asg, &selected, &ec2)?;
    refuse_foreign_windows(shared.schedule, asg, &instances)?;
    if let Some(surge) = &surge {
        surge_cap::assign(&mut instances, surge.cap);
    }
    let mut roll = group_roll(asg, &group, n, &select, &sorted, instances);
    if surge.is_some() {
        roll.opened_batches = 1;
    }
    roll.surge = surge;
    Ok(Found::Ready {
        roll: Box::new(roll),
        raise_max: request.raise_max && group.max_size < peak,
        notes,
    })
}

/// Group `asg` as AWS describes it, refused when it carries another run's
/// id: that run's checkpoint is not here, and rolling beside it could
/// double the cluster.
async fn unclaimed_group(
    aws: &(impl AutoScaling + Sync),
    asg: &str,
) -> Result<AutoScalingGroup, RollError> {
    let group = aws
        .describe_group(asg)
        .await
        .map_err(|e| RollError::refused(format!("ASG {asg}: {e}")))?;
    if let Some(other) = group.tag(RUN_ID_TAG) {
        return Err(RollError::refused(format!(
            "ASG {asg} carries tag {RUN_ID_TAG}={other}, but there is no checkpoint for that run here: \
             a roll may be running elsewhere, or its checkpoint was lost. Rerunning now could double the cluster. \
             Recover with --checkpoint PATH of that run's checkpoint, or, after a human has checked, \
             `roller abandon --run-id {other}`"
        )));
    }
    Ok(group)
}

/// Refused while an Instance Refresh is active on group `asg`: two
/// refreshers at once.
async fn no_refresh_at_work(aws: &(impl AutoScaling + Sync), asg: &str) -> Result<(), RollError> {
    let refreshes = aws
        .instance_refreshes(asg)
        .await
        .map_err(|e| RollError::refused(format!("ASG {asg}: DescribeInstanceRefreshes: {e}")))?;
    match refresh::at_work(asg, &refreshes, refresh::Found::Preflight) {
        Some(why) => Err(RollError::refused(why)),
        None => Ok(()),
    }
}

/// Refused when the environment names a hook roller is to complete
/// (`complete_lifecycle_hooks`) that is not a termination hook of group
/// `asg`: a typo would leave every termination waiting for a hook nobody
/// completes, or roller completing a launch hook it does not own. Reads
/// the hooks only when some are named.
async fn roller_hooks_exist(
    aws: &(impl AutoScaling + Sync),
    asg: &str,
    named: &[String],
) -> Result<(), RollError> {
    if named.is_empty() {
        return Ok(());
    }
    let hooks = aws
        .lifecycle_hooks(asg)
        .await
        .map_err(|e| RollError::refused(format!("ASG {asg}: DescribeLifecycleHooks: {e}")))?;
    let termination: Vec<&str> = hooks
        .iter()
        .filter(|h| h.on_termination())
        .map(|h| h.name.as_str())
        .collect();
    let unknown: Vec<&str> = named
        .iter()
        .map(String::as_str)
        .filter(|n| !termination.contains(n))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let has = if termination.is_empty() {
        "none".to_string()
    } else {
        termination.join(", ")
    };
    Err(RollError::refused(format!(
        "complete_lifecycle_hooks names {} for ASG {asg}, which has no such termination lifecycle hook          (its termination hooks: {has}); fix the environment file or put the hook on the group",
        unknown.join(", ")
    )))
}

/// Refused when the group has instances in a state the roll cannot
/// take and no flag leaves out (Pending, a lifecycle hook's wait).
fn refuse_not_in_service(asg: &str, sorted: &Sorted<'_>) -> Result<(), RollError> {
    if sorted.refused.is_empty() {
        return Ok(());
    }
    let odd: Vec<String> = sorted
        .refused
        .iter()
        .map(|i| format!("{} ({})", i.id, i.lifecycle_state.as_aws()))
        .collect();
    Err(RollError::refused(format!(
        "instances of ASG {asg} not InService and not in Standby (Pending, lifecycle-hook waits): {}; \
         wait until they are in service, or pass --skip-not-in-service to leave them out of the roll",
        odd.join(", ")
    )))
}

/// The InService instances `select` picks: all, those launched from
/// another source than the group's (on a mixed instances policy, than
/// their instance type's template), or those running longer than an age
/// (by EC2's launch time; an instance EC2 does not know is not old).
fn selected<'g>(
    select: &Selection,
    group: &AutoScalingGroup,
    in_service: &[&'g GroupInstance],
    ec2: &[Ec2Instance],
) -> Vec<&'g GroupInstance> {
    let now = SystemTime::now();
    in_service
        .iter()
        .copied()
        .filter(|i| match select {
            Selection::All => true,
            Selection::Outdated => i.is_outdated(group.launch_source.as_ref()),
            Selection::OlderThan(age) => ec2
                .iter()
                .find(|e| e.id == i.id)
                .and_then(|e| e.launch_time)
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|running| running > *age),
        })
        .collect()
}

/// N + K, once checked against the group's sizes: a MaxSize below it is
/// refused unless `--raise-max`, a MinSize above the target always is,
/// since AWS would refuse the scale-up or the terminations mid-roll.
fn check_sizes(
    asg: &str,
    group: &AutoScalingGroup,
    n: u32,
    selected: usize,
    surge: Option<&SurgeCap>,
    raise_max: bool,
) -> Result<u32, RollError> {
    let k = u32::try_from(selected).unwrap_or(u32::MAX);
    let uncapped = peak_size(n, k).map_err(RollError::refused)?;
    let peak = surge.map_or(uncapped, |s| uncapped.min(s.ceiling));
    if group.max_size < peak && !raise_max {
        let what = match surge {
            Some(s) => format!("the surge's ceiling {peak} (its size + {})", s.cap),
            None => format!("N + K = {n} + {k}"),
        };
        return Err(RollError::refused(format!(
            "ASG {asg}: MaxSize {} < {what}: the scale-up would be refused; raise MaxSize or pass --raise-max (restored at finish)",
            group.max_size
        )));
    }
    if group.min_size > n {
        return Err(RollError::refused(format!(
            "ASG {asg}: MinSize {} > target {n}: the terminations would be refused; lower MinSize or the target",
            group.min_size
        )));
    }
    Ok(peak)
}

/// The group's surge cap (`--max-surge`, else its instance maintenance
/// policy) when it is below the `selected` instances to replace: the roll
/// then goes in batches. `None` when there is no cap or it lets every new
/// instance launch at once (today's roll exactly). Refused with the
/// strategies and options batches do not take yet.
fn capped_surge(
    shared: &Shared<'_>,
    asg: &str,
    group: &AutoScalingGroup,
    n: u32,
    selected: usize,
) -> Result<Option<SurgeCap>, RollError> {
    let size = group.desired_capacity;
    let Some(cap) = surge_cap::cap(asg, size, shared.env.max_surge, group.maintenance_policy)
        .map_err(RollError::refused)?
    else {
        return Ok(None);
    };
    let k = u32::try_from(selected).unwrap_or(u32::MAX);
    if cap.instances >= k {
        return Ok(None);
    }
    let request = shared.request;
    let lift = format!("or --max-surge {k} to launch every new instance at once");
    if request.strategy == Some(RollStrategy::Serial) {
        return Err(RollError::refused(format!(
            "ASG {asg}: a surge of {} (from {}) is below the {k} instances to replace, so the roll \
             goes in batches, which --strategy serial does not do: use --strategy drain, {lift}",
            cap.instances, cap.from
        )));
    }
    if request.canary.is_some_and(|c| c > 0) {
        return Err(RollError::refused(format!(
            "ASG {asg}: a surge of {} (from {}) is below the {k} instances to replace, so the roll \
             goes in batches, which --canary does not take yet: the first batch's sample and its \
             bake stand for the canary; drop --canary, {lift}",
            cap.instances, cap.from
        )));
    }
    Ok(Some(SurgeCap {
        cap: cap.instances,
        from: cap.from,
        ceiling: surge_cap::ceiling(size, n, cap.instances),
        batches: surge_cap::batch_count(selected, cap.instances),
        min_healthy_bound: group
            .maintenance_policy
            .and_then(|p| p.min_healthy_percentage)
            .map(|min| {
                surge_cap::min_healthy_bound(
                    size,
                    cap.instances,
                    group.availability_zones.len(),
                    min,
                )
            }),
        raised: None,
    }))
}

/// The selected instances, each with the one active Mesos agent it
/// matches; refused when any matches none (or more than one): the roll
/// would not know which agent to empty before terminating it.
fn matched_instances(
    shared: &Shared<'_>,
    asg: &str,
    selected: &[&GroupInstance],
    ec2: &[Ec2Instance],
) -> Result<Vec<RolledInstance>, RollError> {
    let how = &shared.env.agent_match;
    let selected_ec2: Vec<_> = ec2
        .iter()
        .filter(|e| selected.iter().any(|s| s.id == e.id))
        .cloned()
        .collect();
    let matches = match_agents(how, &selected_ec2, shared.agents);
    let unmatched: Vec<String> = selected
        .iter()
        .filter(|s| !matches.matched.iter().any(|(i, _)| *i == s.id))
        .map(|s| s.id.clone())
        .collect();
    if !unmatched.is_empty() {
        return Err(RollError::refused(format!(
            "selected instances of ASG {asg} that match no single active Mesos agent (by {how}): {}; \
             fix the agents or the `match` key, then run again",
            unmatched.join(", ")
        )));
    }
    Ok(selected
        .iter()
        .map(|i| rolled_instance(i, &matches, shared.agents))
        .collect())
}

/// Instance `i` as the checkpoint keeps it, with its agent's id, hostname
/// and IP.
fn rolled_instance(
    i: &GroupInstance,
    matches: &AgentMatches,
    agents: &[AgentIdentity],
) -> RolledInstance {
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
        reclaimed: false,
        replaced: false,
        other_tasks: Default::default(),
        batch: 0,
    }
}

/// Refuses a maintenance window already over a machine to replace: this
/// run has posted nothing, so someone else did (another roll's leftover,
/// or an operator's maintenance), and rolling under it would mix the two.
fn refuse_foreign_windows(
    schedule: &MaintenanceSchedule,
    asg: &str,
    instances: &[RolledInstance],
) -> Result<(), RollError> {
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
        return Err(RollError::refused(format!(
            "Mesos' maintenance schedule already has a window over {} agent(s) of ASG {asg} that this \
             run did not post (another roll's leftover, or an operator's maintenance): {}. \
             Nothing was changed. Look at it with GET /maintenance/schedule on the leading \
             master; once that maintenance is over or the window removed (`roller abandon` \
             removes its own roll's), run again",
            scheduled.len(),
            scheduled.join(", ")
        )));
    }
    Ok(())
}

/// The group's part of the first checkpoint: the group as it was before
/// the roll (sizes, zones, InService instances, suspended processes) and
/// the instances to replace; nothing done yet.
fn group_roll(
    asg: &str,
    group: &AutoScalingGroup,
    n: u32,
    select: &Selection,
    sorted: &Sorted<'_>,
    instances: Vec<RolledInstance>,
) -> GroupRoll {
    // In the capacity once the held ones are brought in: every instance
    // taken, and the protected ones kept on the old image.
    let in_service: Vec<&GroupInstance> =
        sorted.taken.iter().chain(&sorted.kept).copied().collect();
    let mut zones: BTreeMap<String, u32> = BTreeMap::new();
    for i in &in_service {
        *zones.entry(i.availability_zone.clone()).or_insert(0) += 1;
    }
    GroupRoll {
        asg: asg.to_string(),
        target: n,
        select: select.to_string(),
        original: OriginalGroup {
            min_size: group.min_size,
            max_size: group.max_size,
            // Standby instances brought in join the capacity
            // (`ExitStandby` increments it): a rollback keeps them.
            desired_capacity: group.desired_capacity.saturating_add(sorted.joining()),
            zones,
            instance_ids: in_service.iter().map(|i| i.id.clone()).collect(),
            left_out: sorted.left_out.iter().map(|(i, _)| i.id.clone()).collect(),
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
        new_agents: Vec::new(),
        bake_until_unix_ms: None,
        held: sorted.held.clone(),
        surge: None,
        opened_batches: 0,
        by_id: Default::default(),
    }
}
