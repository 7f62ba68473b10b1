//! Draining many agents at once (pure): from Marathon's live placement and
//! the set of agents being replaced, the next wave of task moves. It
//! generalises `safety.rs`, which answers for one agent at a time.
//!
//! With every old agent under a Mesos maintenance window, Marathon places
//! no relaunch on an old agent, so each task killed there moves once, onto
//! a new agent. A wave kills, for every app, as many of its tasks on old
//! agents as keep the app at its floor (1 healthy task, or ceil(instances
//! x minimumHealthCapacity) with `--honor-min-health`). Tasks that are not
//! healthy cost nothing to move and all go in the first wave. An app that
//! cannot spare a task is surged (one instance more, then the old task is
//! killed with `scale=true`), as in the serial roll, but by all its tasks
//! on old agents at once (the new agents have room for every old task).
//! After the first wave's sample, so is an app that can spare some of its
//! old tasks but not all (`Partial::SurgeAll`): killing what it can spare
//! would leave the rest for one more wave, a whole move cycle longer,
//! while the surge moves them all in this one and never takes the app
//! below all its instances. The next wave is computed from a fresh look
//! once replacements are healthy, so no app is ever planned below its
//! floor.
//!
//! Not yet handled here: placement constraints (UNIQUE hostname, a
//! colocated group): a relaunch that finds no room waits as pending, and
//! the wave after it sees that.

#[cfg(test)]
use std::collections::BTreeSet;
use std::collections::{BTreeMap, HashSet};

use super::health::{Standing, standing};
use super::safety::{Rules, floor};
use crate::roll::ports::marathon::{App, NoSurge};

/// One wave of moves over every old agent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wave {
    /// Tasks to kill with `scale=false`, by app (Marathon relaunches each
    /// on a new agent).
    pub(crate) kills: BTreeMap<String, Vec<String>>,
    /// Apps that cannot spare a task: scale from `instances` to
    /// `instances + 1`, then kill `task` with `scale=true`.
    pub(crate) surges: Vec<PlannedSurge>,
    /// Apps with tasks on old agents that must wait (replacements not
    /// healthy yet), with why.
    pub(crate) waiting: BTreeMap<String, String>,
    /// Apps that cannot spare a task and may not be surged (single-instance
    /// apps): their tasks are among `kills`, and the app is down until
    /// Marathon's relaunch on a new agent is up (its gap).
    pub(crate) relaunches: BTreeMap<String, NoSurge>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PlannedSurge {
    pub(crate) app: String,
    pub(crate) instances: u32,
    /// The app's healthy tasks on old agents, all replaced by this surge:
    /// the app is scaled up by one per task, and each is killed with
    /// `scale=true` once the new ones are healthy.
    pub(crate) tasks: Vec<String>,
}

impl Wave {
    pub(crate) fn task_count(&self) -> usize {
        self.kills.values().map(Vec::len).sum()
    }
}

/// How a wave moves an app whose healthy tasks on old agents are more
/// than it can spare now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Partial {
    /// Kill the tasks it can spare; the rest wait for a later wave. The
    /// first wave's sample wants this: one killed task of an app that can
    /// spare it is the cheapest probe of the new image.
    KillSpare,
    /// Surge it by all of them, when all its instances are up and nothing
    /// of it is on its way: it moves in this wave instead of over several.
    /// An app that must never run an extra task (`no_surge`), or with a
    /// task down or settling on an old agent, is killed as with
    /// `KillSpare`.
    SurgeAll,
}

/// The next wave. `old` are the agents being replaced; `in_flight` are
/// tasks already asked to die (listed until Marathon has killed them: they
/// count neither as healthy nor as still to move); `surging` are apps
/// with a surge under way (the surge, not this wave, moves their task);
/// `partial` says how an app that can spare only some of its old tasks
/// moves.
pub(crate) fn next_wave(
    apps: &[App],
    old: &HashSet<String>,
    in_flight: &HashSet<String>,
    surging: &HashSet<String>,
    rules: Rules,
    partial: Partial,
) -> Wave {
    let mut wave = Wave::default();
    for app in apps {
        if surging.contains(&app.id) {
            continue;
        }
        let floor = floor(app, rules.floor);
        let mut healthy = 0u32;
        let mut live = 0u32;
        let mut old_healthy = Vec::new();
        let mut old_unhealthy = Vec::new();
        let mut old_settling = 0u32;
        for task in app.tasks.iter().filter(|t| !in_flight.contains(&t.id)) {
            live += 1;
            let standing = standing(app, task, rules.settle);
            healthy += u32::from(standing == Standing::Up);
            let on_old = task.agent_id.as_ref().is_some_and(|a| old.contains(a));
            match (on_old, standing) {
                (true, Standing::Up) => old_healthy.push(task.id.clone()),
                (true, Standing::Down) => old_unhealthy.push(task.id.clone()),
                (true, Standing::Settling) => old_settling += 1,
                _ => {}
            }
        }
        if old_healthy.is_empty() && old_unhealthy.is_empty() && old_settling == 0 {
            continue;
        }
        // A task that is down holds nothing up: it moves at once. One
        // still settling is neither: it waits until it is up.
        let spare = healthy.saturating_sub(floor) as usize;
        // Replacements not up yet: instances missing or not healthy.
        let pending = app.instances.saturating_sub(live) + (live - healthy);
        // Every instance up, nothing of it on its way: what it cannot
        // spare now would wait a wave; a surge moves it all in this one.
        let whole = partial == Partial::SurgeAll
            && app.no_surge.is_none()
            && old_unhealthy.is_empty()
            && old_settling == 0
            && pending == 0
            && (1..old_healthy.len()).contains(&spare);
        if whole {
            wave.surges.push(PlannedSurge {
                app: app.id.clone(),
                instances: app.instances,
                tasks: old_healthy,
            });
            continue;
        }
        let mut kills = old_unhealthy;
        kills.extend(old_healthy.iter().take(spare).cloned());
        if !kills.is_empty() {
            wave.kills.insert(app.id.clone(), kills);
            continue;
        }
        // Every task left on an old agent is one the app cannot spare now.
        if pending > 0 {
            wave.waiting.insert(
                app.id.clone(),
                format!(
                    "{pending} replacement task(s) not healthy yet, {healthy} healthy (floor {floor})"
                ),
            );
        } else if let Some(why) = app.no_surge.filter(|_| !old_healthy.is_empty()) {
            wave.kills.insert(app.id.clone(), old_healthy);
            wave.relaunches.insert(app.id.clone(), why);
        } else if !old_healthy.is_empty() {
            wave.surges.push(PlannedSurge {
                app: app.id.clone(),
                instances: app.instances,
                tasks: old_healthy,
            });
        }
    }
    wave
}

/// The share of apps the first wave's sample takes (at least one app).
pub(crate) const SAMPLE_SHARE: f64 = 0.10;

/// The first wave cut down to a sample of the new image's first moves:
/// one task each of at most `SAMPLE_SHARE` of the apps it would move (at
/// least one app), apps with health checks first (their checks tell a bad
/// image soonest), then apps that can spare a task before apps that need
/// a surge, then by id. Nothing else moves until the sample has baked on
/// the new agents: the other apps wait, saying so. A bad image then
/// costs one task of a few apps, never a whole wave.
pub(crate) fn sample(wave: Wave, apps: &[App]) -> Wave {
    let by_id: BTreeMap<&str, &App> = apps.iter().map(|a| (a.id.as_str(), a)).collect();
    let mut movable: Vec<(bool, bool, &str)> = wave
        .kills
        .keys()
        .map(|id| (!wave.relaunches.contains_key(id), id.as_str()))
        .chain(wave.surges.iter().map(|s| (false, s.app.as_str())))
        .map(|(spares, id)| {
            let checked = by_id.get(id).is_some_and(|a| a.has_health_checks());
            (!checked, !spares, id)
        })
        .collect();
    movable.sort();
    let take = ((movable.len() as f64 * SAMPLE_SHARE).floor() as usize).max(1);
    let picked: HashSet<String> = movable
        .iter()
        .take(take)
        .map(|(_, _, id)| id.to_string())
        .collect();
    let mut out = Wave {
        waiting: wave.waiting,
        ..Wave::default()
    };
    const LATER: &str = "waits for the first wave's sample to bake on the new agents";
    for (app, tasks) in wave.kills {
        if picked.contains(&app) {
            if let Some(why) = wave.relaunches.get(&app) {
                out.relaunches.insert(app.clone(), *why);
            }
            out.kills.insert(app, tasks.into_iter().take(1).collect());
        } else {
            out.waiting.insert(app, LATER.to_string());
        }
    }
    for mut surge in wave.surges {
        if picked.contains(&surge.app) {
            surge.tasks.truncate(1);
            out.surges.push(surge);
        } else {
            out.waiting.insert(surge.app, LATER.to_string());
        }
    }
    out
}

/// Old agents with no task left on them (tasks still listed while being
/// killed count as there): these may be put down and terminated now.
#[cfg(test)]
pub(crate) fn empty_agents(apps: &[App], old: &HashSet<String>) -> BTreeSet<String> {
    let busy: HashSet<&str> = apps
        .iter()
        .flat_map(|app| &app.tasks)
        .filter_map(|task| task.agent_id.as_deref())
        .collect();
    old.iter()
        .filter(|agent| !busy.contains(agent.as_str()))
        .cloned()
        .collect()
}

/// What the first wave would do, for `roller run --dry-run`: computed
/// from today's placement (before scale-up, every task of a selected
/// agent is where the wave will find it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Preview {
    pub(crate) kills: usize,
    pub(crate) apps: usize,
    pub(crate) surges: usize,
    /// Apps that keep a task on an old agent for a later wave.
    pub(crate) waiting: usize,
    /// Old agents that wave would leave empty (terminated at once).
    pub(crate) agents_freed: usize,
    pub(crate) old_agents: usize,
    /// Apps on old agents that can neither spare a task nor be surged
    /// (single-instance apps): each moves by kill and relaunch, in the
    /// wave that reaches it, and is down until its relaunch is up.
    pub(crate) relaunched: Vec<(String, NoSurge)>,
}

impl std::fmt::Display for Preview {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the first drain wave would kill {} task(s) of {} app(s) on the old agents and surge {} app(s); \
             {} of the {} old agent(s) would then be empty and terminated at once; \
             {} app(s) keep tasks for later waves",
            self.kills, self.apps, self.surges, self.agents_freed, self.old_agents, self.waiting
        )?;
        if !self.relaunched.is_empty() {
            let named: Vec<String> = self
                .relaunched
                .iter()
                .map(|(app, why)| format!("{app} ({})", why.reason()))
                .collect();
            write!(
                f,
                "; {} app(s) cannot run a second task and move by kill and relaunch, each down \
                 until its relaunch is up: {}",
                named.len(),
                named.join(", ")
            )?;
        }
        Ok(())
    }
}

/// The first wave over `apps`: its sample (`sample`). Apps in `allowed`,
/// let be unhealthy by the operator, have no floor, but they too wait for
/// the sample to bake: all their tasks on old agents go in the next wave.
pub(crate) fn preview(
    apps: &[App],
    old: &HashSet<String>,
    allowed: &[String],
    rules: Rules,
) -> Preview {
    let guarded: Vec<App> = apps
        .iter()
        .filter(|a| !allowed.contains(&a.id))
        .cloned()
        .collect();
    let wave = sample(
        next_wave(
            &guarded,
            old,
            &HashSet::new(),
            &HashSet::new(),
            rules,
            Partial::KillSpare,
        ),
        &guarded,
    );
    let on_old = |t: &&crate::roll::ports::marathon::Task| {
        t.agent_id.as_ref().is_some_and(|a| old.contains(a))
    };
    let mut moving: HashSet<&str> = wave.kills.values().flatten().map(String::as_str).collect();
    moving.extend(
        wave.surges
            .iter()
            .flat_map(|s| &s.tasks)
            .map(String::as_str),
    );
    let agents_freed = old
        .iter()
        .filter(|agent| {
            apps.iter()
                .flat_map(|a| &a.tasks)
                .filter(|t| t.agent_id.as_deref() == Some(agent.as_str()))
                .all(|t| moving.contains(t.id.as_str()))
        })
        .count();
    Preview {
        kills: wave.task_count(),
        apps: wave.kills.len(),
        surges: wave.surges.len(),
        waiting: apps
            .iter()
            .filter(|a| {
                a.tasks
                    .iter()
                    .filter(on_old)
                    .any(|t| !moving.contains(t.id.as_str()))
            })
            .count(),
        agents_freed,
        old_agents: old.len(),
        relaunched: guarded
            .iter()
            .filter(|a| a.tasks.iter().any(|t| on_old(&t)))
            .filter(|a| floor(a, rules.floor) >= a.instances)
            .filter_map(|a| a.no_surge.map(|why| (a.id.clone(), why)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::roll::decide::health::task_is_healthy;
    use crate::roll::decide::safety::Floor;
    use crate::roll::decide::test_apps::{app, task};

    fn set(items: &[&str]) -> HashSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_wave_moves_every_spare_task_off_every_old_agent_at_once_keeping_the_floor() {
        let apps = [
            app(
                "/web",
                4,
                vec![
                    task("w1", "old-1", true),
                    task("w2", "old-2", true),
                    task("w3", "old-3", true),
                    task("w4", "new-1", true),
                ],
            ),
            app(
                "/api",
                2,
                vec![task("a1", "old-1", true), task("a2", "old-2", false)],
            ),
        ];
        let old = set(&["old-1", "old-2", "old-3"]);
        let wave = next_wave(
            &apps,
            &old,
            &HashSet::new(),
            &HashSet::new(),
            Rules::floor_only(Floor::One),
            Partial::KillSpare,
        );
        // /web keeps one healthy task (on the new agent): three move.
        assert_eq!(wave.kills["/web"], ["w1", "w2", "w3"]);
        // /api: the unhealthy task moves; its one healthy task must stay.
        assert_eq!(wave.kills["/api"], ["a2"]);
        assert!(wave.surges.is_empty() && wave.waiting.is_empty());
        assert_eq!(wave.task_count(), 4);
    }

    #[test]
    fn an_app_that_cannot_spare_a_task_is_surged_and_one_awaiting_replacements_waits() {
        let apps = [
            app("/single", 1, vec![task("s1", "old-1", true)]),
            app(
                "/both-old",
                2,
                vec![task("b1", "old-1", true), task("b2", "old-2", true)],
            ),
            // One task already killed and its replacement not healthy yet.
            app(
                "/moving",
                2,
                vec![task("m1", "old-1", true), task("m3", "new-1", false)],
            ),
        ];
        let old = set(&["old-1", "old-2"]);
        let wave = next_wave(
            &apps,
            &old,
            &HashSet::new(),
            &HashSet::new(),
            Rules::floor_only(Floor::One),
            Partial::KillSpare,
        );
        assert_eq!(
            wave.surges,
            [PlannedSurge {
                app: "/single".to_string(),
                instances: 1,
                tasks: vec!["s1".to_string()]
            }]
        );
        // Two healthy tasks, floor one: one of them moves now.
        assert_eq!(wave.kills["/both-old"], ["b1"]);
        assert!(
            wave.waiting["/moving"].contains("1 replacement"),
            "{wave:?}"
        );
        // With capacity floors (capacity 1) /both-old cannot spare one.
        let strict = next_wave(
            &apps,
            &old,
            &HashSet::new(),
            &HashSet::new(),
            Rules::floor_only(Floor::MinHealth),
            Partial::KillSpare,
        );
        assert!(!strict.kills.contains_key("/both-old"), "{strict:?}");
        // Both its old tasks are replaced by one surge of two.
        let both = strict.surges.iter().find(|s| s.app == "/both-old").unwrap();
        assert_eq!(both.tasks, ["b1", "b2"]);
    }

    #[test]
    fn after_the_sample_an_app_that_can_spare_only_some_old_tasks_is_surged_by_all() {
        // Two healthy tasks on old agents, floor one: killing the one it
        // can spare leaves the other for a wave more.
        let both = |id: &str| {
            app(
                id,
                2,
                vec![
                    task(&format!("{id}-1"), "old-1", true),
                    task(&format!("{id}-2"), "old-2", true),
                ],
            )
        };
        let mut never = both("/never");
        never.no_surge = Some(NoSurge::NoOverCapacity);
        let mut down = both("/down");
        down.tasks.push(task("/down-3", "old-3", false));
        down.instances = 3;
        let apps = [both("/pair"), never, down];
        let old = set(&["old-1", "old-2", "old-3"]);
        let wave = |partial| {
            next_wave(
                &apps,
                &old,
                &HashSet::new(),
                &HashSet::new(),
                Rules::floor_only(Floor::One),
                partial,
            )
        };
        let kills = wave(Partial::KillSpare);
        assert_eq!(kills.kills["/pair"], ["/pair-1"]);
        assert!(kills.surges.is_empty(), "{kills:?}");

        let surged = wave(Partial::SurgeAll);
        assert_eq!(
            surged.surges,
            [PlannedSurge {
                app: "/pair".to_string(),
                instances: 2,
                tasks: vec!["/pair-1".to_string(), "/pair-2".to_string()]
            }]
        );
        assert!(!surged.kills.contains_key("/pair"), "{surged:?}");
        // Never an extra task: it still moves what it can spare.
        assert_eq!(surged.kills["/never"], ["/never-1"]);
        // A task down on an old agent moves at once, by kill, with what
        // the app can spare (no surge beside kills of the same app).
        assert_eq!(surged.kills["/down"], ["/down-3", "/down-1"]);
        // An app replacing a task (one in flight) is not surged either.
        let in_flight = set(&["/pair-1"]);
        let moving = next_wave(
            &apps[..1],
            &old,
            &in_flight,
            &HashSet::new(),
            Rules::floor_only(Floor::One),
            Partial::SurgeAll,
        );
        assert!(moving.surges.is_empty(), "{moving:?}");
        assert!(moving.waiting.contains_key("/pair"), "{moving:?}");
    }

    #[test]
    fn the_dry_run_preview_counts_the_first_wave_and_the_agents_it_frees() {
        let apps = [
            // Three tasks, floor one: two move now, one later.
            app(
                "/web",
                3,
                vec![
                    task("w1", "old-1", true),
                    task("w2", "old-2", true),
                    task("w3", "old-3", true),
                ],
            ),
            app("/single", 1, vec![task("s1", "old-1", true)]),
            app("/let-be", 1, vec![task("l1", "old-3", false)]),
        ];
        let old = set(&["old-1", "old-2", "old-3"]);
        let preview = preview(
            &apps,
            &old,
            &["/let-be".to_string()],
            Rules::floor_only(Floor::One),
        );
        // The first wave is its sample: one app (10% of two, at least
        // one), the one that can spare a task before the one that needs a
        // surge, one task of it. The rest waits for the sample to bake,
        // the app let be unhealthy included.
        assert_eq!(
            preview,
            Preview {
                kills: 1,
                apps: 1,
                surges: 0,
                waiting: 3,
                agents_freed: 0,
                old_agents: 3,
                relaunched: vec![],
            }
        );
        assert!(preview.to_string().contains("kill 1 task(s) of 1 app(s)"));
    }

    #[test]
    fn the_first_wave_samples_one_task_of_a_tenth_of_the_apps_checked_ones_first() {
        // 25 apps, each with three healthy tasks on old agents (floor one:
        // each could spare two); every fifth has no health check.
        let apps: Vec<App> = (0..25)
            .map(|n| {
                let mut a = app(
                    &format!("/app-{n:02}"),
                    3,
                    (0..3)
                        .map(|k| task(&format!("t{n}-{k}"), &format!("old-{k}"), true))
                        .collect(),
                );
                if n % 5 == 0 {
                    a.health_checks = 0;
                    a.health_check_interval = None;
                }
                a
            })
            .collect();
        let old = set(&["old-0", "old-1", "old-2"]);
        let full = next_wave(
            &apps,
            &old,
            &HashSet::new(),
            &HashSet::new(),
            Rules::floor_only(Floor::One),
            Partial::KillSpare,
        );
        assert_eq!(full.kills.len(), 25);
        let wave = sample(full, &apps);
        // floor(25 x 10%) = 2 apps, both with health checks, one task each.
        let picked: Vec<&str> = wave.kills.keys().map(String::as_str).collect();
        assert_eq!(picked, ["/app-01", "/app-02"]);
        assert!(wave.kills.values().all(|k| k.len() == 1), "{wave:?}");
        assert_eq!(wave.task_count(), 2);
        assert_eq!(wave.waiting.len(), 23);
        assert!(wave.waiting["/app-00"].contains("sample"), "{wave:?}");
        // A surge in the sample replaces one task, not all the app's.
        let single = [app(
            "/pair",
            2,
            vec![task("p1", "old-0", true), task("p2", "old-1", true)],
        )];
        let strict = next_wave(
            &single,
            &old,
            &HashSet::new(),
            &HashSet::new(),
            Rules::floor_only(Floor::MinHealth),
            Partial::KillSpare,
        );
        let wave = sample(strict, &single);
        assert_eq!(wave.surges.len(), 1);
        assert_eq!(wave.surges[0].tasks, ["p1"]);
    }

    #[test]
    fn an_agent_is_empty_only_once_no_task_is_listed_on_it() {
        let apps = [app("/a", 1, vec![task("a1", "old-2", true)])];
        let empty = empty_agents(&apps, &set(&["old-1", "old-2"]));
        assert_eq!(empty, BTreeSet::from(["old-1".to_string()]));
    }

    /// A random cluster: apps with tasks on old and new agents, some not
    /// healthy, some already being killed.
    fn cluster() -> impl Strategy<Value = (Vec<App>, HashSet<String>, Floor)> {
        let placed = (0..6usize, any::<bool>(), any::<bool>());
        let one_app = (1..6u32, prop::collection::vec(placed, 0..7), 0.0..=1.0f64);
        (prop::collection::vec(one_app, 1..8), any::<bool>()).prop_map(|(apps, strict)| {
            let mut in_flight = HashSet::new();
            let apps = apps
                .into_iter()
                .enumerate()
                .map(|(a, (instances, tasks, capacity))| {
                    let tasks = tasks
                        .into_iter()
                        .enumerate()
                        .map(|(t, (agent, healthy, killed))| {
                            let id = format!("app{a}.t{t}");
                            if killed {
                                in_flight.insert(id.clone());
                            }
                            // Agents 0..3 are old, 3..6 new.
                            let name = if agent < 3 {
                                format!("old-{agent}")
                            } else {
                                format!("new-{agent}")
                            };
                            task(&id, &name, healthy)
                        })
                        .collect();
                    App {
                        min_health_capacity: Some(capacity),
                        ..app(&format!("/app{a}"), instances, tasks)
                    }
                })
                .collect();
            let policy = if strict { Floor::MinHealth } else { Floor::One };
            (apps, in_flight, policy)
        })
    }

    proptest! {
        #[test]
        fn no_wave_ever_plans_an_app_below_its_floor_and_every_kill_is_on_an_old_agent(
            (apps, in_flight, policy) in cluster()
        ) {
            let old = set(&["old-0", "old-1", "old-2"]);
            let rules = Rules::floor_only(policy);
            let wave = next_wave(&apps, &old, &in_flight, &HashSet::new(), rules, Partial::KillSpare);
            let mut planned = HashSet::new();
            for app in &apps {
                let live: Vec<_> = app.tasks.iter().filter(|t| !in_flight.contains(&t.id)).collect();
                let healthy = live.iter().filter(|t| task_is_healthy(app, t, rules.settle)).count() as u32;
                let kills = wave.kills.get(&app.id).cloned().unwrap_or_default();
                let killed_healthy = kills
                    .iter()
                    .filter(|id| live.iter().any(|t| t.id == **id && task_is_healthy(app, t, rules.settle)))
                    .count() as u32;
                // Never below the floor, and never below what it had.
                let floor = floor(app, policy);
                prop_assert!(healthy - killed_healthy >= floor.min(healthy), "{app:?} {wave:?}");
                for id in &kills {
                    let task = app.tasks.iter().find(|t| t.id == *id).expect("a task of the app");
                    prop_assert!(old.contains(task.agent_id.as_ref().unwrap()), "{id} is not on an old agent");
                    prop_assert!(!in_flight.contains(id), "{id} is already being killed");
                    prop_assert!(planned.insert(id.clone()), "{id} planned twice");
                }
                // An app is kept at most one way.
                let surged = wave.surges.iter().filter(|s| s.app == app.id).count();
                let ways = usize::from(!kills.is_empty()) + surged + usize::from(wave.waiting.contains_key(&app.id));
                prop_assert!(ways <= 1, "{app:?} {wave:?}");
                // Liveness: an app with a task on an old agent is always moved,
                // surged or waiting for replacements.
                let on_old = live.iter().any(|t| old.contains(t.agent_id.as_ref().unwrap()));
                prop_assert_eq!(ways == 1, on_old, "{:?} {:?}", app, wave);
            }
        }
    }

    /// An app without health checks whose task on an old agent started a
    /// moment ago (`settling`) and one that has run long (`settled`).
    fn settling_app() -> (App, Rules) {
        use std::time::{Duration, SystemTime};
        let at = |s: u64| Some(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        let mut settled = task("settled", "old-0", true);
        settled.health_results.clear();
        settled.started_at = at(100);
        let mut settling = task("settling", "old-1", true);
        settling.health_results.clear();
        settling.started_at = at(990);
        let mut app = app("/worker", 2, vec![settled, settling]);
        app.health_checks = 0;
        let settle = crate::roll::decide::health::Settle {
            at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
            after: Duration::from_secs(30),
        };
        (
            app,
            Rules {
                floor: Floor::One,
                settle,
            },
        )
    }

    #[test]
    fn a_task_still_settling_on_an_old_agent_is_neither_killed_for_free_nor_counted_as_up() {
        let (app, rules) = settling_app();
        let old = set(&["old-0", "old-1"]);
        let wave = next_wave(
            std::slice::from_ref(&app),
            &old,
            &HashSet::new(),
            &HashSet::new(),
            rules,
            Partial::KillSpare,
        );
        // Not costless: the settling task is not killed at once; and the
        // settled one is the only healthy task, which the floor keeps.
        assert!(wave.kills.is_empty(), "{wave:?}");
        assert!(wave.surges.is_empty(), "{wave:?}");
        assert!(
            wave.waiting["/worker"].contains("1 replacement"),
            "{wave:?}"
        );
        // Once it has settled, one of the two may go.
        let later = Rules {
            settle: crate::roll::decide::health::Settle {
                at: rules.settle.at + std::time::Duration::from_secs(30),
                ..rules.settle
            },
            ..rules
        };
        let wave = next_wave(
            &[app],
            &old,
            &HashSet::new(),
            &HashSet::new(),
            later,
            Partial::KillSpare,
        );
        assert_eq!(wave.kills["/worker"].len(), 1, "{wave:?}");
    }

    /// A DC/OS SDK scheduler: one instance, Marathon's single-instance
    /// label, upgradeStrategy 0/0.
    fn single_instance(id: &str, tasks: Vec<crate::roll::ports::marathon::Task>) -> App {
        let mut a = app(id, 1, tasks);
        a.no_surge = Some(NoSurge::SingleInstanceLabel);
        a.min_health_capacity = Some(0.0);
        a
    }

    #[test]
    fn a_single_instance_app_moves_by_kill_and_relaunch_never_by_surge() {
        let apps = [
            single_instance("/kafka", vec![task("k1", "old-1", true)]),
            app("/web", 1, vec![task("w1", "old-1", true)]),
        ];
        let old = set(&["old-1"]);
        for policy in [Floor::One, Floor::MinHealth] {
            let wave = next_wave(
                &apps,
                &old,
                &HashSet::new(),
                &HashSet::new(),
                Rules::floor_only(policy),
                Partial::KillSpare,
            );
            assert_eq!(wave.kills["/kafka"], vec!["k1".to_string()], "{policy:?}");
            assert_eq!(
                wave.relaunches,
                BTreeMap::from([("/kafka".to_string(), NoSurge::SingleInstanceLabel)])
            );
            // An app that may be surged still is.
            assert_eq!(wave.surges.len(), 1);
            assert_eq!(wave.surges[0].app, "/web");
            assert!(!wave.kills.contains_key("/web"));
        }
    }

    #[test]
    fn a_sample_takes_a_relaunch_after_apps_that_spare_a_task_and_keeps_it_marked() {
        let mut apps = vec![single_instance("/kafka", vec![task("k1", "old-1", true)])];
        let wave = next_wave(
            &apps,
            &set(&["old-1"]),
            &HashSet::new(),
            &HashSet::new(),
            Rules::floor_only(Floor::One),
            Partial::KillSpare,
        );
        let alone = sample(wave, &apps);
        assert_eq!(alone.relaunches.len(), 1, "the only app is sampled");
        apps.push(app(
            "/web",
            2,
            vec![task("w1", "old-1", true), task("w2", "new-1", true)],
        ));
        let wave = next_wave(
            &apps,
            &set(&["old-1"]),
            &HashSet::new(),
            &HashSet::new(),
            Rules::floor_only(Floor::One),
            Partial::KillSpare,
        );
        let picked = sample(wave, &apps);
        assert!(picked.kills.contains_key("/web"));
        assert!(picked.relaunches.is_empty());
        assert!(picked.waiting.contains_key("/kafka"));
    }

    #[test]
    fn the_preview_names_the_apps_that_move_by_kill_and_relaunch() {
        let mut zero = app("/singleton", 1, vec![task("s1", "old-2", true)]);
        zero.no_surge = Some(NoSurge::NoOverCapacity);
        zero.min_health_capacity = Some(0.0);
        let apps = [
            single_instance("/kafka", vec![task("k1", "old-1", true)]),
            zero,
            single_instance("/elsewhere", vec![task("e1", "new-1", true)]),
        ];
        let shown = preview(
            &apps,
            &set(&["old-1", "old-2"]),
            &[],
            Rules::floor_only(Floor::MinHealth),
        );
        assert_eq!(
            shown.relaunched,
            vec![
                ("/kafka".to_string(), NoSurge::SingleInstanceLabel),
                ("/singleton".to_string(), NoSurge::NoOverCapacity),
            ]
        );
        let text = shown.to_string();
        assert!(text.contains("2 app(s) cannot run a second task"), "{text}");
        assert!(text.contains("/kafka (single-instance app"), "{text}");
        assert!(!text.contains("/elsewhere"), "{text}");
    }
}
