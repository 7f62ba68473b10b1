//! The plan of a roll of several groups of one cluster (pure): each
//! group's plan as `roll_plan::build` makes it, its phases' ids and its
//! fixed-word steps' ids prefixed with the group (`<asg>:drain`,
//! `<asg>:wave-1`), put together as one plan:
//!
//! ```text
//! roll-<asg1>+<asg2> (dependency strategy)
//! ├─ <asg1>:prepare     lock, suspend-processes   every group locked first
//! ├─ <asg2>:prepare     lock, suspend-processes
//! ├─ <asg1>:scale-up    … every group's scale-up at once, then the first
//! ├─ <asg1>:drain         group's other phases, as for one group, once
//! ├─ <asg1>:terminate     every group has scaled up
//! ├─ <asg2>:scale-up
//! ├─ <asg2>:drain       … then the next group's, once the first group's
//! ├─ <asg2>:terminate     agents are gone
//! ├─ <asg1>:finish      every group finished last
//! └─ <asg2>:finish
//! ```
//!
//! Groups roll one after another: one group's agents are being emptied at
//! a time, so the floors each wave keeps are counted against every task of
//! the cluster (Marathon counts an app's tasks wherever they run), and a
//! bad image shows on one group before the next one's agents are emptied.
//! Every group scales up (and puts its old agents under maintenance)
//! before the first task moves: the groups' agents boot together, and a
//! task a drain moves never lands on an agent a later group will empty
//! (with the next group scaling up only while the one before drained,
//! its old agents took moved tasks until its new ones registered).
//! A plan of one group is exactly `roll_plan::build`'s.

use crate::plan::{Phase, Plan, Strategy};
use crate::roll::decide::roll_plan::{self, FINISH, PREPARE, PlanOptions};
use crate::roll::record::checkpoint::{RolledInstance, group_phase_id};
use crate::roll::record::kinds::{GroupIndex, GroupStep, RollPlan};

/// One group's part of the plan.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupPlan<'a> {
    pub(crate) asg: &'a str,
    pub(crate) instances: &'a [RolledInstance],
    /// MaxSize is raised for the roll (this group needs it).
    pub(crate) raise_max: bool,
    /// Instances held out of the roll are brought in before its scale-up.
    pub(crate) held: bool,
}

/// The plan's name: `roll-<asg>`, or `roll-<asg1>+<asg2>…` for a cluster.
pub(crate) fn cluster_plan_name(groups: &[&str]) -> String {
    roll_plan::plan_name(&groups.join("+"))
}

/// The plan of the roll of `groups`, in plan order (a step's group is
/// its place there).
pub(crate) fn build_cluster(groups: &[GroupPlan<'_>], options: PlanOptions) -> RollPlan {
    if let [only] = groups {
        return group_plan(0, only, options);
    }
    let mut prepares = Vec::new();
    let mut middles: Vec<Vec<Phase<GroupStep>>> = Vec::new();
    let mut finishes = Vec::new();
    for (index, g) in groups.iter().enumerate() {
        let sorted = group_phases(index, g, options, groups.len());
        prepares.extend(sorted.prepare);
        middles.push(sorted.middle);
        finishes.extend(sorted.finish);
    }
    let prepared = one_after_another(&mut prepares, Vec::new());
    let rolled = group_after_group(&mut middles, prepared);
    one_after_another(&mut finishes, rolled);
    let mut phases = prepares;
    phases.extend(middles.into_iter().flatten());
    phases.extend(finishes);
    let names: Vec<&str> = groups.iter().map(|g| g.asg).collect();
    Plan::new(cluster_plan_name(&names), Strategy::Dependency, phases)
}

/// The plan of group `g` alone, raising its own MaxSize or not.
fn group_plan(index: usize, g: &GroupPlan<'_>, options: PlanOptions) -> RollPlan {
    roll_plan::build(
        GroupIndex(index),
        g.asg,
        g.instances,
        PlanOptions {
            raise_max: g.raise_max,
            held: g.held,
            ..options
        },
    )
}

/// One group's phases, named for the cluster's plan and sorted by where
/// it puts them.
struct GroupPhases {
    prepare: Vec<Phase<GroupStep>>,
    /// Between prepare and finish, in the group's order, each waiting for
    /// what it waits for in the group's own plan.
    middle: Vec<Phase<GroupStep>>,
    finish: Vec<Phase<GroupStep>>,
}

/// Group `g`'s plan, its phases named for a plan of `count` groups and
/// sorted into prepare, middle and finish.
fn group_phases(
    index: usize,
    g: &GroupPlan<'_>,
    options: PlanOptions,
    count: usize,
) -> GroupPhases {
    let plan = group_plan(index, g, options);
    let serial = plan.strategy != Strategy::Dependency;
    let mut sorted = GroupPhases {
        prepare: Vec::new(),
        middle: Vec::new(),
        finish: Vec::new(),
    };
    for mut phase in plan.phases {
        let bare = phase.id.clone();
        name_for_cluster(&mut phase, g.asg, count);
        match bare.as_str() {
            PREPARE => sorted.prepare.push(phase),
            FINISH => sorted.finish.push(phase),
            _ => {
                // A serial plan runs its phases in order: said as
                // dependencies, as the cluster's plan runs by them.
                if serial && let Some(before) = sorted.middle.last().map(|p| p.id.clone()) {
                    phase.depends_on = vec![before];
                }
                sorted.middle.push(phase);
            }
        }
    }
    sorted
}

/// Plan-wide unique ids for a phase of group `asg`: the phase's, its
/// name, what it waits for, and its fixed-word steps' (`lock`, `wave-1`);
/// an instance's step keeps its instance's id, already unique.
fn name_for_cluster(phase: &mut Phase<GroupStep>, asg: &str, count: usize) {
    for step in phase.steps.iter_mut().filter(|s| s.asset.is_none()) {
        step.id = group_phase_id(asg, &step.id, count);
    }
    phase.id = group_phase_id(asg, &phase.id, count);
    phase.name = group_phase_id(asg, &phase.name, count);
    phase.depends_on = phase
        .depends_on
        .iter()
        .map(|d| group_phase_id(asg, d, count))
        .collect();
}

/// Makes each of `phases` wait for the one before it, the first for
/// `before`; answers what the next must wait for (the last).
fn one_after_another(phases: &mut [Phase<GroupStep>], mut before: Vec<String>) -> Vec<String> {
    for phase in phases {
        phase.depends_on = before;
        before = vec![phase.id.clone()];
    }
    before
}

/// Orders the groups' middles after `prepared` (every prepare); answers
/// the phases that end the last group's, for the finishes to wait for.
///
/// Every group's scale-up (new instances, and the window over its old
/// agents) starts once all are prepared, and the first group's other
/// phases wait for all of them: no task any drain moves lands on an old
/// agent of another group (to be moved twice), since every old agent of
/// the cluster is under maintenance before the first task moves. Each
/// later group's other phases (canaries, drain, terminations;
/// replacements) wait for the group before to be done: one group's agents
/// are emptied at a time.
fn group_after_group(middles: &mut [Vec<Phase<GroupStep>>], prepared: Vec<String>) -> Vec<String> {
    // Each group's scale-up: its phase that waits for none of its own.
    let scale_ups: Vec<String> = middles
        .iter_mut()
        .filter_map(|middle| {
            let own: Vec<String> = middle.iter().map(|p| p.id.clone()).collect();
            let first = middle
                .iter_mut()
                .find(|p| !p.depends_on.iter().any(|d| own.contains(d)))?;
            first.depends_on = prepared.clone();
            Some(first.id.clone())
        })
        .collect();
    let mut before = prepared;
    for (index, middle) in middles.iter_mut().enumerate() {
        let ends = ends(middle);
        for phase in middle.iter_mut().filter(|p| !scale_ups.contains(&p.id)) {
            if index > 0 {
                phase.depends_on.extend(before.iter().cloned());
            } else if phase.depends_on.iter().any(|d| scale_ups.contains(d)) {
                // Right after its own scale-up: every other group's too.
                let others: Vec<String> = scale_ups
                    .iter()
                    .filter(|s| !phase.depends_on.contains(s))
                    .cloned()
                    .collect();
                phase.depends_on.extend(others);
            }
        }
        before = ends;
    }
    before
}

/// The phases of `middle` no other of its phases waits for: the group's
/// work is done when they are.
fn ends(middle: &[Phase<GroupStep>]) -> Vec<String> {
    middle
        .iter()
        .filter(|p| !middle.iter().any(|q| q.depends_on.contains(&p.id)))
        .map(|p| p.id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::tree;
    use crate::roll::decide::roll_plan::RollStrategy;

    fn instances(group: &str, n: usize) -> Vec<RolledInstance> {
        (0..n)
            .map(|i| RolledInstance {
                id: format!("i-{group}-{i}"),
                availability_zone: "us-east-1a".to_string(),
                agent_id: format!("agent-{group}-{i}"),
                hostname: format!("host-{group}-{i}"),
                ip: None,
                terminate_sent: false,
                reclaimed: false,
                replaced: false,
                other_tasks: Default::default(),
                batch: 0,
            })
            .collect()
    }

    fn ids(plan: &RollPlan) -> Vec<(String, Vec<String>)> {
        plan.phases
            .iter()
            .map(|p| (p.id.clone(), p.depends_on.clone()))
            .collect()
    }

    #[test]
    fn one_group_is_the_plan_of_one_group() {
        let a = instances("a", 2);
        let options = PlanOptions::default();
        let cluster = build_cluster(
            &[GroupPlan {
                asg: "a",
                instances: &a,
                raise_max: true,
                held: false,
            }],
            options,
        );
        let alone = roll_plan::build(
            GroupIndex(0),
            "a",
            &a,
            PlanOptions {
                raise_max: true,
                ..options
            },
        );
        assert_eq!(cluster, alone);
    }

    #[test]
    fn a_drain_of_two_groups_locks_both_rolls_one_then_the_other_and_finishes_both() {
        let (a, b) = (instances("a", 2), instances("b", 1));
        let plan = build_cluster(
            &[
                GroupPlan {
                    asg: "a",
                    instances: &a,
                    raise_max: false,
                    held: false,
                },
                GroupPlan {
                    asg: "b",
                    instances: &b,
                    raise_max: true,
                    held: false,
                },
            ],
            PlanOptions::default(),
        );
        let s = |x: &[&str]| x.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            ids(&plan),
            vec![
                ("a:prepare".to_string(), s(&[])),
                ("b:prepare".to_string(), s(&["a:prepare"])),
                ("a:scale-up".to_string(), s(&["b:prepare"])),
                // a's drain waits for b's old agents under maintenance.
                ("a:drain".to_string(), s(&["a:scale-up", "b:scale-up"])),
                ("a:terminate".to_string(), s(&["a:scale-up", "b:scale-up"])),
                ("b:scale-up".to_string(), s(&["b:prepare"])),
                (
                    "b:drain".to_string(),
                    s(&["b:scale-up", "a:drain", "a:terminate"])
                ),
                (
                    "b:terminate".to_string(),
                    s(&["b:scale-up", "a:drain", "a:terminate"])
                ),
                ("a:finish".to_string(), s(&["b:drain", "b:terminate"])),
                ("b:finish".to_string(), s(&["a:finish"])),
            ]
        );
        assert_eq!(plan.name, "roll-a+b");
        plan.check_stored().expect("a valid plan");
        // Only the group that needs it raises MaxSize.
        let raises: Vec<&str> = plan
            .phases
            .iter()
            .filter(|p| {
                p.steps
                    .iter()
                    .any(|s| s.id == format!("b:{}", roll_plan::RAISE_MAX))
            })
            .map(|p| p.id.as_str())
            .collect();
        assert_eq!(raises, ["b:prepare"]);
        let shown = tree(&plan);
        assert!(shown.contains("a:drain"), "{shown}");
        // Every step says its group: b's drain is group 1's.
        assert_eq!(plan.phases[6].id, "b:drain");
        let groups: Vec<usize> = plan
            .steps()
            .filter(|(at, _)| at.phase == 6)
            .map(|(_, s)| s.kind.as_ref().unwrap().group.0)
            .collect();
        assert_eq!(groups, [1]);
        let of = |id: &str| {
            let phase = plan.phases.iter().find(|p| p.id == id).unwrap();
            phase
                .steps
                .iter()
                .map(|s| s.kind.as_ref().unwrap().group.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(of("a:terminate"), [0, 0]);
        assert_eq!(of("b:prepare"), [1, 1, 1]);
    }

    #[test]
    fn a_serial_roll_of_two_groups_chains_its_phases_in_order() {
        let (a, b) = (instances("a", 1), instances("b", 1));
        let plan = build_cluster(
            &[
                GroupPlan {
                    asg: "a",
                    instances: &a,
                    raise_max: false,
                    held: false,
                },
                GroupPlan {
                    asg: "b",
                    instances: &b,
                    raise_max: false,
                    held: false,
                },
            ],
            PlanOptions {
                strategy: RollStrategy::Serial,
                ..PlanOptions::default()
            },
        );
        let deps: Vec<String> = ids(&plan)
            .into_iter()
            .map(|(id, d)| format!("{id}<{}", d.join(",")))
            .collect();
        assert_eq!(
            deps,
            [
                "a:prepare<",
                "b:prepare<a:prepare",
                "a:scale-up<b:prepare",
                "a:replace<a:scale-up,b:scale-up",
                "b:scale-up<b:prepare",
                "b:replace<b:scale-up,a:replace",
                "a:finish<b:replace",
                "b:finish<a:finish",
            ]
        );
        plan.check_stored().expect("a valid plan");
    }
}
