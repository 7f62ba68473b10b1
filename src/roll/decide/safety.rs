//! Safety before a termination (pure): from Marathon's tasks per agent,
//! which apps would fall below their floor if an agent went away now, and
//! what to do about each, one round at a time.
//!
//! An app's floor is ceil(instances x its `minimumHealthCapacity`), at
//! least one healthy task, as Marathon keeps it during a deployment (or
//! one healthy task, `--min-healthy one`). Healthy = running and passing
//! its health checks; running for a settle time, for apps without any.
//! The write-up accepted outages of single-task apps and of apps whose
//! every task sat on the agent being replaced; this module exists so the
//! roll does not.
//!
//! Each round is computed from a fresh look at Marathon, so a kill that is
//! still in flight, a replacement not yet healthy or a surge deployment all
//! show up as "not enough healthy tasks yet" and the round asks to wait.

use std::collections::HashSet;

use crate::roll::decide::health::{Settle, Standing, standing};
use crate::roll::ports::marathon::{App, NoSurge};

/// What to do next for one app on the agent about to go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Move {
    /// Kill these tasks on the agent (`scale=false`): Marathon relaunches
    /// them elsewhere. Never more than keeps the app at its floor.
    Kill { app: String, tasks: Vec<String> },
    /// The app cannot spare a task: scale it from `instances` to
    /// `instances + 1`, then kill `task` with `scale=true`.
    Surge {
        app: String,
        instances: u32,
        task: String,
    },
    /// The app cannot spare its task and may not be surged (a
    /// single-instance app): kill it (`scale=false`) and let Marathon
    /// relaunch it elsewhere; the app is down until the relaunch is up.
    Relaunch {
        app: String,
        tasks: Vec<String>,
        why: NoSurge,
    },
    /// Replacements are on their way: look again later.
    Wait { app: String, reason: String },
}

/// One app that terminating the agent would take below its floor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AtRisk {
    pub(crate) app: String,
    pub(crate) instances: u32,
    pub(crate) floor: u32,
    /// Healthy tasks on other agents.
    pub(crate) healthy_elsewhere: u32,
    /// Healthy tasks on every agent.
    pub(crate) healthy_total: u32,
    /// Tasks on the agent, unhealthy ones first (they cost nothing to kill).
    pub(crate) tasks_here: Vec<String>,
    /// Tasks of the app anywhere that are not healthy yet (replacements on
    /// their way).
    pub(crate) pending: u32,
    /// Why the app may not be surged, if it may not.
    pub(crate) no_surge: Option<NoSurge>,
}

/// How many healthy tasks an app must keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Floor {
    /// One healthy task (`--min-healthy one`).
    One,
    /// ceil(instances x minimumHealthCapacity), at least one (the
    /// default; Marathon's default capacity is 1).
    #[default]
    MinHealth,
}

impl Floor {
    /// The value of `--min-healthy`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Floor::One => "one",
            Floor::MinHealth => "capacity",
        }
    }

    pub(crate) fn parse(text: &str) -> Result<Floor, String> {
        match text {
            "one" => Ok(Floor::One),
            "capacity" => Ok(Floor::MinHealth),
            other => Err(format!(
                "unknown floor '{other}': expected capacity (ceil(instances x minimumHealthCapacity) \
                 healthy tasks per app, at least one) or one (one healthy task per app)"
            )),
        }
    }
}

/// What a roll keeps each app at: its floor, and when a task counts as up
/// (healthy, or settled for an app without health checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rules {
    pub(crate) floor: Floor,
    pub(crate) settle: Settle,
}

impl Rules {
    /// `floor`, with a task up as soon as it runs (no settle time).
    pub(crate) fn floor_only(floor: Floor) -> Rules {
        Rules {
            floor,
            settle: Settle::NONE,
        }
    }
}

/// The floor of an app: no app with instances may drop below one healthy
/// task, whatever its capacity says.
pub(crate) fn floor(app: &App, policy: Floor) -> u32 {
    if app.instances == 0 {
        return 0;
    }
    match policy {
        Floor::One => 1,
        Floor::MinHealth => {
            let capacity = app.min_health_capacity.unwrap_or(1.0).clamp(0.0, 1.0);
            let needed = (f64::from(app.instances) * capacity).ceil() as u32;
            needed.clamp(1, app.instances)
        }
    }
}

/// The apps that would fall below their floor if `agent` went now.
/// `killed` are tasks this roll has asked Marathon to kill: while one is
/// still listed, or the app has fewer tasks than instances, replacements
/// are on their way and count as pending.
pub(crate) fn at_risk(
    apps: &[App],
    agent: &str,
    killed: &HashSet<String>,
    rules: Rules,
) -> Vec<AtRisk> {
    let mut risks = Vec::new();
    for app in apps {
        let floor = floor(app, rules.floor);
        let mut here_healthy = Vec::new();
        let mut here_unhealthy = Vec::new();
        let mut here_settling = Vec::new();
        let mut healthy_elsewhere = 0;
        let mut pending = 0;
        let mut live = 0u32;
        for task in &app.tasks {
            if killed.contains(&task.id) {
                pending += 1;
                continue;
            }
            live += 1;
            let standing = standing(app, task, rules.settle);
            let on_agent = task.agent_id.as_deref() == Some(agent);
            match (on_agent, standing) {
                (true, Standing::Up) => here_healthy.push(task.id.clone()),
                (true, Standing::Down) => here_unhealthy.push(task.id.clone()),
                // Not up yet, nor failing: the agent is not safe to go,
                // and the app waits until it has settled.
                (true, Standing::Settling) => {
                    here_settling.push(task.id.clone());
                    pending += 1;
                }
                (false, Standing::Up) => healthy_elsewhere += 1,
                (false, _) => pending += 1,
            }
        }
        if here_healthy.is_empty() && here_unhealthy.is_empty() && here_settling.is_empty() {
            continue;
        }
        if healthy_elsewhere >= floor {
            continue;
        }
        let healthy_total = healthy_elsewhere + count(&here_healthy);
        // Settling ones last: never killed as if they cost nothing (the
        // app waits for them: they count as pending).
        here_unhealthy.extend(here_healthy);
        here_unhealthy.extend(here_settling);
        risks.push(AtRisk {
            app: app.id.clone(),
            instances: app.instances,
            floor,
            healthy_elsewhere,
            healthy_total,
            tasks_here: here_unhealthy,
            pending: pending + app.instances.saturating_sub(live),
            no_surge: app.no_surge,
        });
    }
    risks
}

fn count(tasks: &[String]) -> u32 {
    u32::try_from(tasks.len()).unwrap_or(u32::MAX)
}

/// The next move for an app at risk. Tasks already killed are left out by
/// the caller (they may still be listed while Marathon kills them).
pub(crate) fn next_move(risk: &AtRisk) -> Move {
    let healthy_here = risk.healthy_total - risk.healthy_elsewhere;
    let unhealthy_here = count(&risk.tasks_here) - healthy_here;
    if risk.pending > 0 {
        return Move::Wait {
            app: risk.app.clone(),
            reason: format!(
                "{} replacement task(s) not healthy yet, {} healthy elsewhere (floor {})",
                risk.pending, risk.healthy_elsewhere, risk.floor
            ),
        };
    }
    // Unhealthy tasks here hold nothing up: killing them costs no health.
    let spare = risk.healthy_total.saturating_sub(risk.floor);
    let killable = (unhealthy_here + spare) as usize;
    if killable > 0 {
        return Move::Kill {
            app: risk.app.clone(),
            tasks: risk.tasks_here.iter().take(killable).cloned().collect(),
        };
    }
    if let Some(why) = risk.no_surge.filter(|_| !risk.tasks_here.is_empty()) {
        return Move::Relaunch {
            app: risk.app.clone(),
            tasks: risk.tasks_here.clone(),
            why,
        };
    }
    match risk.tasks_here.last() {
        Some(task) => Move::Surge {
            app: risk.app.clone(),
            instances: risk.instances,
            task: task.clone(),
        },
        None => Move::Wait {
            app: risk.app.clone(),
            reason: "no task left on the agent".to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roll::decide::test_apps::task;
    use crate::roll::ports::marathon::Task;

    /// An app that wants as many instances as it has tasks.
    fn app(id: &str, tasks: Vec<Task>) -> App {
        let instances = u32::try_from(tasks.len()).unwrap();
        crate::roll::decide::test_apps::app(id, instances, tasks)
    }

    #[test]
    fn an_app_with_a_healthy_task_elsewhere_is_not_at_risk() {
        let apps = [app(
            "/a",
            vec![task("a1", "X", true), task("a2", "Y", true)],
        )];
        assert!(at_risk(&apps, "X", &HashSet::new(), Rules::floor_only(Floor::One)).is_empty());
    }

    #[test]
    fn an_app_whose_every_task_is_on_the_agent_kills_all_but_its_floor() {
        let apps = [app(
            "/a",
            vec![
                task("a1", "X", true),
                task("a2", "X", true),
                task("a3", "X", true),
            ],
        )];
        let risks = at_risk(&apps, "X", &HashSet::new(), Rules::floor_only(Floor::One));
        assert_eq!(risks.len(), 1);
        assert_eq!(
            next_move(&risks[0]),
            Move::Kill {
                app: "/a".to_string(),
                tasks: vec!["a1".to_string(), "a2".to_string()]
            }
        );
    }

    #[test]
    fn a_single_instance_app_on_the_agent_surges() {
        let apps = [app("/one", vec![task("o1", "X", true)])];
        let risks = at_risk(&apps, "X", &HashSet::new(), Rules::floor_only(Floor::One));
        assert_eq!(
            next_move(&risks[0]),
            Move::Surge {
                app: "/one".to_string(),
                instances: 1,
                task: "o1".to_string()
            }
        );
    }

    #[test]
    fn an_app_marathon_keeps_at_one_instance_is_killed_and_relaunched_not_surged() {
        for why in [NoSurge::SingleInstanceLabel, NoSurge::NoOverCapacity] {
            let mut one = app("/sdk", vec![task("s1", "X", true)]);
            one.no_surge = Some(why);
            one.min_health_capacity = Some(0.0);
            let risks = at_risk(
                &[one],
                "X",
                &HashSet::new(),
                Rules::floor_only(Floor::MinHealth),
            );
            assert_eq!(
                next_move(&risks[0]),
                Move::Relaunch {
                    app: "/sdk".to_string(),
                    tasks: vec!["s1".to_string()],
                    why
                }
            );
        }
    }

    #[test]
    fn replacements_on_their_way_make_the_app_wait() {
        let apps = [app(
            "/a",
            vec![task("a1", "X", true), task("a2", "Y", false)],
        )];
        let risks = at_risk(&apps, "X", &HashSet::new(), Rules::floor_only(Floor::One));
        assert!(matches!(next_move(&risks[0]), Move::Wait { .. }));
    }

    #[test]
    fn a_killed_task_still_listed_or_a_missing_replacement_makes_the_app_wait() {
        let apps = [app(
            "/a",
            vec![task("a1", "X", true), task("a2", "X", true)],
        )];
        let killed: HashSet<String> = ["a1".to_string()].into();
        let risks = at_risk(&apps, "X", &killed, Rules::floor_only(Floor::One));
        assert!(
            matches!(next_move(&risks[0]), Move::Wait { .. }),
            "{risks:?}"
        );
        let mut gone = app("/a", vec![task("a2", "X", true)]);
        gone.instances = 2;
        let risks = at_risk(&[gone], "X", &HashSet::new(), Rules::floor_only(Floor::One));
        assert!(
            matches!(next_move(&risks[0]), Move::Wait { .. }),
            "{risks:?}"
        );
    }

    #[test]
    fn unhealthy_tasks_on_the_agent_are_killed_first_and_cost_no_health() {
        let apps = [app(
            "/a",
            vec![task("a1", "X", true), task("a2", "X", false)],
        )];
        let risks = at_risk(&apps, "X", &HashSet::new(), Rules::floor_only(Floor::One));
        assert_eq!(
            next_move(&risks[0]),
            Move::Kill {
                app: "/a".to_string(),
                tasks: vec!["a2".to_string()]
            }
        );
    }

    #[test]
    fn honoring_min_health_keeps_ceil_of_instances_times_capacity_and_never_less_than_one() {
        let mut a = app(
            "/a",
            vec![
                task("a1", "X", true),
                task("a2", "X", true),
                task("a3", "Y", true),
                task("a4", "Z", true),
            ],
        );
        // One healthy elsewhere is enough by default...
        assert!(
            at_risk(
                std::slice::from_ref(&a),
                "X",
                &HashSet::new(),
                Rules::floor_only(Floor::One)
            )
            .is_empty()
        );
        // ...but 0.75 x 4 = 3 must stay healthy: two elsewhere is too few,
        // and one task may be killed (4 healthy - 3).
        a.min_health_capacity = Some(0.75);
        let risks = at_risk(
            std::slice::from_ref(&a),
            "X",
            &HashSet::new(),
            Rules::floor_only(Floor::MinHealth),
        );
        assert_eq!(risks[0].floor, 3);
        assert_eq!(
            next_move(&risks[0]),
            Move::Kill {
                app: "/a".to_string(),
                tasks: vec!["a1".to_string()]
            }
        );
        // Capacity 0 still keeps one; no capacity given means Marathon's 1.
        a.min_health_capacity = Some(0.0);
        assert_eq!(floor(&a, Floor::MinHealth), 1);
        a.min_health_capacity = None;
        assert_eq!(floor(&a, Floor::MinHealth), 4);
    }

    #[test]
    fn an_app_without_health_checks_counts_running_tasks() {
        let mut a = app("/n", vec![task("n1", "X", false), task("n2", "Y", false)]);
        a.health_checks = 0;
        for t in &mut a.tasks {
            t.health_results.clear();
        }
        assert!(at_risk(&[a], "X", &HashSet::new(), Rules::floor_only(Floor::One)).is_empty());
    }

    #[test]
    fn an_agent_with_a_task_still_settling_waits_and_never_kills_it_for_free() {
        use std::time::{Duration, SystemTime};
        let mut settling = task("t1", "X", true);
        settling.health_results.clear();
        settling.started_at = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(990));
        let mut elsewhere = task("t2", "Y", true);
        elsewhere.health_results.clear();
        elsewhere.started_at = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(100));
        let mut a = crate::roll::decide::test_apps::app("/w", 2, vec![settling, elsewhere]);
        a.health_checks = 0;
        let rules = Rules {
            floor: Floor::MinHealth,
            settle: Settle {
                at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
                after: Duration::from_secs(30),
            },
        };
        let risks = at_risk(std::slice::from_ref(&a), "X", &HashSet::new(), rules);
        assert_eq!(risks.len(), 1, "the agent is not safe to go: {risks:?}");
        assert!(
            matches!(next_move(&risks[0]), Move::Wait { .. }),
            "{:?}",
            next_move(&risks[0])
        );
        // Without a settle time the same task would be up, and (floor 2 of
        // 2) surged rather than killed.
        let risks = at_risk(
            &[a],
            "X",
            &HashSet::new(),
            Rules::floor_only(Floor::MinHealth),
        );
        assert!(matches!(next_move(&risks[0]), Move::Surge { .. }));
    }
}
