//! The surge cap (`--max-surge N|P%`, key `max_surge`; by default the
//! group's instance maintenance policy): how many instances above its
//! size a group may hold during the roll, and the batches that follow
//! from it. Uncapped (no flag, no policy), every new instance is asked
//! for at once, as always; capped below the number of old instances, the
//! roll goes in batches: each batch's new instances are launched, the
//! tasks of as many old agents moved onto them, those old agents
//! terminated, and the next batch launched into the room they left.
//! Each batch opens at least as many old agents as new agents have come
//! since the last (one old agent's tasks to each new agent), and more
//! while the new agents' free resources take their tasks (`to_open`):
//! old agents are most often far from full, so the batches grow, and a
//! capped roll takes a few launches, not one per cap.

use crate::roll::ports::auto_scaling::MaintenancePolicy;
use crate::roll::ports::mesos::Resources;
use crate::roll::record::checkpoint::RolledInstance;
use crate::roll::record::env::MaxSurge;

/// A group's cap, and where it came from (said in the plan and `status`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cap {
    pub(crate) instances: u32,
    pub(crate) from: String,
}

/// The cap of a group of `size` instances when the roll began: the flag
/// (or key) when given, else the group's instance maintenance policy
/// (`MaxHealthyPercentage` − 100, of its size, rounded down as the
/// policy's bound is a ceiling, at least one), else none. A policy that
/// allows nothing above the group's size (100 %) is refused: roller needs
/// room for one new agent to move tasks onto, and says how to give it.
pub(crate) fn cap(
    asg: &str,
    size: u32,
    flag: Option<MaxSurge>,
    policy: Option<MaintenancePolicy>,
) -> Result<Option<Cap>, String> {
    if let Some(surge) = flag {
        return Ok(Some(Cap {
            instances: surge.instances(size),
            from: format!("--max-surge {surge}"),
        }));
    }
    let Some(max) = policy.and_then(|p| p.max_healthy_percentage) else {
        return Ok(None);
    };
    if max <= 100 {
        return Err(format!(
            "ASG {asg}: its instance maintenance policy allows no instance above its desired \
             capacity (MaxHealthyPercentage {max}); roller launches new agents before it \
             terminates old ones. Give it room: pass --max-surge N (or set max_surge), or raise \
             the policy's MaxHealthyPercentage"
        ));
    }
    let above = u64::from(size) * u64::from(max - 100) / 100;
    Ok(Some(Cap {
        instances: (above as u32).max(1),
        from: format!("the group's instance maintenance policy (MaxHealthyPercentage {max})"),
    }))
}

/// The old agents per AZ that may be terminating at once under a policy's
/// `MinHealthyPercentage` `min`: a group of `size` over `azs` AZs holding
/// `size + cap` instances keeps `min` % of its size healthy (rounded up)
/// when at most the rest, shared among the AZs, go at once; at least one.
pub(crate) fn min_healthy_bound(size: u32, cap: u32, azs: usize, min: u32) -> u32 {
    let healthy = (u64::from(size) * u64::from(min.min(100))).div_ceil(100);
    let spare = (u64::from(size) + u64::from(cap)).saturating_sub(healthy);
    u32::try_from(spare / azs.max(1) as u64)
        .unwrap_or(u32::MAX)
        .max(1)
}

/// The most instances the group may hold, pending or in service: the
/// larger of its size when the roll began and its target, plus the cap.
pub(crate) fn ceiling(size: u32, target: u32, cap: u32) -> u32 {
    size.max(target).saturating_add(cap)
}

/// How many batches `old` instances take when each batch may launch
/// `room` new ones (the first batch's room is the cap; each old agent a
/// batch empties makes room for one more in the next).
pub(crate) fn batch_count(old: usize, room: u32) -> u32 {
    let room = room.max(1) as usize;
    u32::try_from(old.div_ceil(room)).unwrap_or(u32::MAX).max(1)
}

/// Puts the instances to replace into batches of `room` (from 1, in
/// place), taking the AZs in turn so that each batch empties every AZ
/// alike, as the group launches each batch's new instances across them.
pub(crate) fn assign(instances: &mut [RolledInstance], room: u32) {
    let room = room.max(1) as usize;
    let mut azs: Vec<String> = instances
        .iter()
        .map(|i| i.availability_zone.clone())
        .collect();
    azs.sort();
    azs.dedup();
    // Round-robin over the AZs, each AZ's instances in plan order.
    let mut queues: Vec<std::collections::VecDeque<usize>> = azs
        .iter()
        .map(|az| {
            (0..instances.len())
                .filter(|&n| instances[n].availability_zone == *az)
                .collect()
        })
        .collect();
    let mut order = Vec::with_capacity(instances.len());
    while order.len() < instances.len() {
        for q in &mut queues {
            if let Some(n) = q.pop_front() {
                order.push(n);
            }
        }
    }
    for (place, n) in order.into_iter().enumerate() {
        instances[n].batch = u32::try_from(place / room + 1).unwrap_or(u32::MAX);
    }
}

/// How full a batch fills the new agents with old agents' tasks beyond
/// one old agent for each new one: 80 % of each of their resources (CPU,
/// memory, disk), the rest left for what a move needs besides (an app
/// scaled up by one while its task moves) and for Marathon's placement,
/// which is not a perfect packing.
pub(crate) const FILL: f64 = 0.8;

/// What the new agents can still take: `FILL` of their resources, less
/// what runs on them and what the open old agents still hold.
pub(crate) fn room(new_total: Resources, new_used: Resources, open_held: Resources) -> Resources {
    Resources {
        cpus: new_total.cpus * FILL - new_used.cpus - open_held.cpus,
        mem: new_total.mem * FILL - new_used.mem - open_held.mem,
        disk: new_total.disk * FILL - new_used.disk - open_held.disk,
    }
}

/// An old agent a batch may open: what it uses, and how many tasks it
/// runs of each app limited per agent (index into the batch's places,
/// count).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Candidate {
    pub(crate) uses: Resources,
    pub(crate) limited: Vec<(usize, u32)>,
}

/// How many of `candidates` (the old agents still to open, in the order
/// they open) a batch opens: the first `one_for_one` whatever they hold
/// (a new agent for each, as a batch of the cap always had), then each
/// next while what it uses fits in what is left of `room` and the new
/// agents have a place left for each of its tasks of an app limited per
/// agent (`places`, per app: a `hostname` UNIQUE app's task needs a new
/// agent without one). Stops at the first that does not fit: the order
/// is kept.
pub(crate) fn to_open(
    room: Resources,
    places: &[u32],
    candidates: &[Candidate],
    one_for_one: usize,
) -> usize {
    let mut left = room;
    let mut places = places.to_vec();
    let mut opened = 0;
    for c in candidates {
        let used = c.uses;
        let fits = used.cpus <= left.cpus
            && used.mem <= left.mem
            && used.disk <= left.disk
            && c.limited
                .iter()
                .all(|&(app, n)| places.get(app).is_some_and(|&p| n <= p));
        if opened >= one_for_one && !fits {
            break;
        }
        left.cpus -= used.cpus;
        left.mem -= used.mem;
        left.disk -= used.disk;
        for &(app, n) in &c.limited {
            if let Some(p) = places.get_mut(app) {
                *p = p.saturating_sub(n);
            }
        }
        opened += 1;
    }
    opened
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(id: &str, az: &str) -> RolledInstance {
        RolledInstance {
            id: id.to_string(),
            availability_zone: az.to_string(),
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

    fn res(cpus: f64, mem: f64) -> Resources {
        Resources {
            cpus,
            mem,
            disk: 0.0,
        }
    }

    fn using(cpus: f64, mem: f64) -> Candidate {
        Candidate {
            uses: res(cpus, mem),
            limited: Vec::new(),
        }
    }

    #[test]
    fn a_batch_opens_one_old_agent_per_new_one_and_more_while_their_tasks_fit() {
        // Six new agents of 16 CPUs and 60 GB, nothing on them yet: 80 %
        // is 76.8 CPUs and 288 GB to give.
        let new_total = res(96.0, 368_640.0);
        let room = room(new_total, res(0.0, 0.0), res(0.0, 0.0));
        assert!((room.cpus - 76.8).abs() < 1e-9);
        // Old agents using 6 CPUs each: 12 fit (72 ≤ 76.8), the 13th not.
        let old = vec![using(6.0, 12_288.0); 20];
        assert_eq!(to_open(room, &[], &old, 6), 12);
        // Memory binds first when it is what they use.
        let heavy = vec![using(1.0, 100_000.0); 20];
        assert_eq!(to_open(room, &[], &heavy, 0), 2);
        // Full new agents: still one old agent per new one.
        let full = super::room(new_total, res(90.0, 300_000.0), res(0.0, 0.0));
        assert_eq!(to_open(full, &[], &old, 6), 6);
        assert_eq!(to_open(full, &[], &old, 0), 0);
        // What open old agents still hold is taken from the room first.
        let held = super::room(new_total, res(0.0, 0.0), res(60.0, 0.0));
        assert_eq!(to_open(held, &[], &old, 0), 2);
        // The order is kept: a big one stops the batch even when a later
        // small one would fit.
        let mixed = [using(6.0, 0.0), using(71.0, 0.0), using(1.0, 0.0)];
        assert_eq!(to_open(room, &[], &mixed, 0), 1);
        assert_eq!(to_open(room, &[], &[], 3), 0);
    }

    #[test]
    fn a_task_of_an_app_limited_per_agent_needs_a_place_on_a_new_agent() {
        let room = res(1000.0, 1_000_000.0);
        // Each old agent runs one task of app 0 (hostname UNIQUE); the
        // new agents have 2 places left for it.
        let lb = Candidate {
            uses: res(1.0, 1024.0),
            limited: vec![(0, 1)],
        };
        let old = vec![lb.clone(); 5];
        assert_eq!(to_open(room, &[2], &old, 0), 2);
        // One for each new agent whatever: 3 open even with 2 places.
        assert_eq!(to_open(room, &[2], &old, 3), 3);
        // No place at all, no extra old agent with such a task; an agent
        // without one is not held back by it.
        assert_eq!(to_open(room, &[0], &old, 0), 0);
        let other = using(1.0, 1024.0);
        assert_eq!(to_open(room, &[0], &[other.clone(), lb, other], 0), 1);
        // An index with no places listed is no place.
        let unknown = Candidate {
            uses: res(1.0, 1.0),
            limited: vec![(7, 1)],
        };
        assert_eq!(to_open(room, &[5], &[unknown], 0), 0);
    }

    fn policy(max: Option<u32>) -> Option<MaintenancePolicy> {
        Some(MaintenancePolicy {
            min_healthy_percentage: Some(90),
            max_healthy_percentage: max,
        })
    }

    #[test]
    fn the_flag_wins_over_the_policy_and_the_policy_over_nothing() {
        let flag = cap("g", 55, Some(MaxSurge::Instances(3)), policy(Some(150))).unwrap();
        assert_eq!(flag.unwrap().instances, 3);
        let from_policy = cap("g", 55, None, policy(Some(110))).unwrap().unwrap();
        // 10 % of 55 is 5.5: the policy's bound is a ceiling, so 5.
        assert_eq!(from_policy.instances, 5);
        assert!(from_policy.from.contains("MaxHealthyPercentage 110"));
        assert_eq!(cap("g", 55, None, policy(None)).unwrap(), None);
        assert_eq!(cap("g", 55, None, None).unwrap(), None);
        assert_eq!(
            cap("g", 5, None, policy(Some(101)))
                .unwrap()
                .unwrap()
                .instances,
            1
        );
    }

    #[test]
    fn a_policy_with_no_room_above_the_group_is_refused_with_what_to_do() {
        let err = cap("agents", 55, None, policy(Some(100))).unwrap_err();
        assert!(err.contains("ASG agents"), "{err}");
        assert!(err.contains("--max-surge"), "{err}");
        // The flag overrides it.
        assert!(
            cap(
                "agents",
                55,
                Some(MaxSurge::Instances(1)),
                policy(Some(100))
            )
            .is_ok()
        );
    }

    #[test]
    fn batches_take_the_azs_in_turn_and_hold_at_most_the_room() {
        let mut instances: Vec<RolledInstance> = (0..7)
            .map(|n| instance(&format!("i-{n}"), if n < 4 { "a" } else { "b" }))
            .collect();
        assign(&mut instances, 3);
        let batch = |id: &str| instances.iter().find(|i| i.id == id).unwrap().batch;
        // a: i-0..i-3, b: i-4..i-6 → order i-0 i-4 i-1 i-5 i-2 i-6 i-3.
        assert_eq!(
            ["i-0", "i-4", "i-1", "i-5", "i-2", "i-6", "i-3"].map(batch),
            [1, 1, 1, 2, 2, 2, 3]
        );
        assert_eq!(batch_count(7, 3), 3);
        assert_eq!(batch_count(6, 3), 2);
        assert_eq!(batch_count(0, 3), 1);
        assert_eq!(ceiling(55, 55, 6), 61);
        // 90 % of 55 is 49.5 → 50 kept; 61 − 50 = 11 over 3 AZs → 3.
        assert_eq!(min_healthy_bound(55, 6, 3, 90), 3);
        assert_eq!(min_healthy_bound(10, 1, 3, 100), 1);
        assert_eq!(min_healthy_bound(100, 10, 2, 0), 55);
        assert_eq!(ceiling(50, 60, 5), 65);
    }
}
