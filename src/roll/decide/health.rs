//! The health verdict over Marathon's apps, as the Mesos Slave Roller
//! write-up defines it: an app is healthy when no deployment is in progress
//! for it and as many tasks report healthy as it wants instances (running
//! tasks, for an app without health checks, since Marathon then always
//! reports 0 healthy). Also where each app's healthy tasks sit, per agent,
//! so the roll can tell whether taking an agent away would leave an app
//! without healthy tasks. Pure: no I/O, the same answer for the same input
//! (the time it judges at is an input: `Settle`).
//!
//! A task of an app without health checks counts as up only once it has
//! run for a settle time: Marathon calls such a task running the moment
//! it starts, so a task that crashes seconds later (a bad image) would
//! otherwise count as a healthy replacement, and its old task be killed.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::time::{Duration, SystemTime};

use crate::roll::ports::marathon::{App, Deployment, Task};

/// Why an app is not healthy; an app may have several at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unhealthy {
    /// Deployments touch the app (ids, sorted).
    Deploying(Vec<String>),
    /// Fewer healthy tasks than instances (an app with health checks).
    TooFewHealthy { healthy: u32, instances: u32 },
    /// Fewer running tasks than instances (an app without health checks).
    TooFewRunning { running: u32, instances: u32 },
    /// Tasks launched but not yet running.
    Staged(u32),
    /// Tasks whose health checks fail.
    FailingChecks(u32),
}

impl fmt::Display for Unhealthy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unhealthy::Deploying(ids) => write!(f, "deploying ({})", ids.join(", ")),
            Unhealthy::TooFewHealthy { healthy, instances } => {
                write!(f, "{healthy} of {instances} healthy")
            }
            Unhealthy::TooFewRunning { running, instances } => {
                write!(f, "{running} of {instances} running (no health checks)")
            }
            Unhealthy::Staged(n) => write!(f, "{n} staged"),
            Unhealthy::FailingChecks(n) => write!(f, "{n} unhealthy"),
        }
    }
}

/// The verdict on one app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppHealth {
    pub(crate) id: String,
    /// Empty when the app is healthy; otherwise every reason, the decisive
    /// ones (deploying, too few) first.
    pub(crate) reasons: Vec<Unhealthy>,
    pub(crate) instances: u32,
    pub(crate) tasks_running: u32,
    pub(crate) tasks_healthy: u32,
    /// Healthy tasks per agent id (task `slaveId`); tasks whose agent is
    /// not reported are left out.
    pub(crate) healthy_per_agent: BTreeMap<String, u32>,
}

impl AppHealth {
    pub(crate) fn is_healthy(&self) -> bool {
        self.reasons.is_empty()
    }

    /// The reasons as one line, `None` when healthy.
    pub(crate) fn reason(&self) -> Option<String> {
        if self.reasons.is_empty() {
            return None;
        }
        let parts: Vec<String> = self.reasons.iter().map(ToString::to_string).collect();
        Some(parts.join("; "))
    }
}

/// The verdict on every app, sorted by app id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterHealth {
    pub(crate) apps: Vec<AppHealth>,
}

impl ClusterHealth {
    pub(crate) fn is_healthy(&self) -> bool {
        self.apps.iter().all(AppHealth::is_healthy)
    }

    pub fn unhealthy(&self) -> impl Iterator<Item = &AppHealth> {
        self.apps.iter().filter(|app| !app.is_healthy())
    }
}

/// When a task of an app without health checks counts as up: once it has
/// run for `after`, judged at `at` (cluster time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settle {
    pub(crate) at: SystemTime,
    pub(crate) after: Duration,
}

impl Settle {
    /// Running is up at once (no settle time).
    pub const NONE: Settle = Settle {
        at: SystemTime::UNIX_EPOCH,
        after: Duration::ZERO,
    };

    /// Whether a task started at `started_at` has run long enough. A task
    /// whose start is unknown has not, unless no settle time is asked.
    pub(crate) fn settled(&self, started_at: Option<SystemTime>) -> bool {
        if self.after.is_zero() {
            return true;
        }
        started_at.is_some_and(|start| {
            self.at
                .duration_since(start)
                .is_ok_and(|ran| ran >= self.after)
        })
    }
}

/// Judges every app. `deployments` is `/v2/deployments`: an app counts as
/// deploying when either its own `deployments` or a listed deployment's
/// `affectedApps` names it, since the two are read at different moments.
pub fn judge(apps: &[App], deployments: &[Deployment], settle: Settle) -> ClusterHealth {
    let mut by_app: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for deployment in deployments {
        for app in &deployment.affected_apps {
            by_app
                .entry(app.as_str())
                .or_default()
                .push(deployment.id.as_str());
        }
    }
    let mut verdicts: Vec<AppHealth> = apps
        .iter()
        .map(|app| {
            let others = by_app.get(app.id.as_str()).map_or(&[][..], Vec::as_slice);
            judge_app(app, others, settle)
        })
        .collect();
    verdicts.sort_by(|a, b| a.id.cmp(&b.id));
    ClusterHealth { apps: verdicts }
}

/// Judges one app; `other_deployments` are ids of listed deployments that
/// affect it (merged with the app's own).
pub(crate) fn judge_app(app: &App, other_deployments: &[&str], settle: Settle) -> AppHealth {
    let mut reasons = Vec::new();
    // A suspended app has nothing to keep available: whatever its tasks
    // or deployments do, it cannot cause an outage.
    if app.instances > 0 {
        let deploying: HashSet<&str> = app
            .deployments
            .iter()
            .map(String::as_str)
            .chain(other_deployments.iter().copied())
            .collect();
        if !deploying.is_empty() {
            let mut ids: Vec<String> = deploying.into_iter().map(str::to_owned).collect();
            ids.sort();
            reasons.push(Unhealthy::Deploying(ids));
        }
        if app.has_health_checks() {
            if app.tasks_healthy < app.instances {
                reasons.push(Unhealthy::TooFewHealthy {
                    healthy: app.tasks_healthy,
                    instances: app.instances,
                });
            }
        } else {
            // Marathon's count, but only tasks that have settled: a task
            // just started may yet crash.
            let running = if settle.after.is_zero() {
                app.tasks_running
            } else {
                let settled = app
                    .tasks
                    .iter()
                    .filter(|t| t.is_running() && settle.settled(t.started_at))
                    .count();
                app.tasks_running
                    .min(u32::try_from(settled).unwrap_or(u32::MAX))
            };
            if running < app.instances {
                reasons.push(Unhealthy::TooFewRunning {
                    running,
                    instances: app.instances,
                });
            }
        }
        // Only details of an app already found wanting: with enough healthy
        // tasks and no deployment, a staged or failing extra is not an outage.
        if !reasons.is_empty() {
            if app.tasks_staged > 0 {
                reasons.push(Unhealthy::Staged(app.tasks_staged));
            }
            if app.tasks_unhealthy > 0 {
                reasons.push(Unhealthy::FailingChecks(app.tasks_unhealthy));
            }
        }
    }
    AppHealth {
        id: app.id.clone(),
        reasons,
        instances: app.instances,
        tasks_running: app.tasks_running,
        tasks_healthy: app.tasks_healthy,
        healthy_per_agent: healthy_per_agent(app, settle),
    }
}

/// Where a task stands, as the roll counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Healthy: it keeps its app up.
    Up,
    /// Running, in an app without health checks, for less than the settle
    /// time (as far as Marathon's clock can be told): not up yet, and not
    /// failing either, so never killed as if it cost nothing.
    Settling,
    /// Not running, or failing its health checks: it keeps nothing up.
    Down,
}

/// Where one task of `app` stands: up when running and, for an app with
/// health checks, with all its results alive (at least one); for an app
/// without, once it has run for the settle time. A task whose state is
/// known and not `TASK_RUNNING` (e.g. being killed) is down, even with
/// alive results: it is about to go.
pub(crate) fn standing(app: &App, task: &Task, settle: Settle) -> Standing {
    let running = match &task.state {
        Some(state) => state == "TASK_RUNNING",
        None => task.started,
    };
    if !running {
        Standing::Down
    } else if app.has_health_checks() {
        let alive = !task.health_results.is_empty() && task.health_results.iter().all(|r| r.alive);
        if alive { Standing::Up } else { Standing::Down }
    } else if settle.settled(task.started_at) {
        Standing::Up
    } else {
        Standing::Settling
    }
}

/// Whether one task of `app` counts as healthy (`Standing::Up`).
pub(crate) fn task_is_healthy(app: &App, task: &Task, settle: Settle) -> bool {
    standing(app, task, settle) == Standing::Up
}

fn healthy_per_agent(app: &App, settle: Settle) -> BTreeMap<String, u32> {
    let mut per_agent = BTreeMap::new();
    for task in &app.tasks {
        if let Some(agent) = &task.agent_id
            && task_is_healthy(app, task, settle)
        {
            *per_agent.entry(agent.clone()).or_insert(0) += 1;
        }
    }
    per_agent
}

/// Removes from Marathon's view the tasks on agents Mesos no longer has
/// active (Marathon lags Mesos: until it has replaced them, they count as
/// missing, not healthy, whatever Marathon still says); returns how many
/// were removed. `roller health` and the roll both judge after this.
/// How many tasks `drop_tasks_on_lost_agents` would take out.
pub(crate) fn tasks_on_lost_agents(apps: &[App], active: &HashSet<String>) -> usize {
    apps.iter()
        .flat_map(|app| &app.tasks)
        .filter(|t| t.agent_id.as_ref().is_some_and(|a| !active.contains(a)))
        .count()
}

pub(crate) fn drop_tasks_on_lost_agents(apps: &mut [App], active: &HashSet<String>) -> usize {
    let mut dropped = 0;
    for app in apps {
        let before = app.tasks.len();
        app.tasks
            .retain(|t| t.agent_id.as_ref().is_none_or(|a| active.contains(a)));
        dropped += before - app.tasks.len();
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roll::ports::marathon::HealthResult;

    fn app(id: &str, instances: u32) -> App {
        App {
            id: id.to_string(),
            instances,
            ..App::default()
        }
    }

    fn checked(mut app: App, healthy: u32, running: u32) -> App {
        app.health_checks = 1;
        app.tasks_healthy = healthy;
        app.tasks_running = running;
        app
    }

    fn unchecked(mut app: App, running: u32) -> App {
        app.tasks_running = running;
        app
    }

    fn task(agent: Option<&str>, state: Option<&str>, started: bool, alive: &[bool]) -> Task {
        Task {
            id: "task".to_string(),
            agent_id: agent.map(str::to_string),
            host: None,
            state: state.map(str::to_string),
            started,
            started_at: None,
            health_results: alive
                .iter()
                .map(|&alive| HealthResult {
                    alive,
                    consecutive_failures: u32::from(!alive),
                    ..HealthResult::default()
                })
                .collect(),
        }
    }

    /// Every rule of the verdict, one row each: (what, app, listed
    /// deployments affecting it, expected reason or None when healthy).
    #[test]
    fn every_rule_of_the_verdict_holds() {
        let mut with_deployment = checked(app("/d", 2), 2, 2);
        with_deployment.deployments = vec!["dep-1".into()];
        let mut staged = checked(app("/s", 3), 2, 2);
        staged.tasks_staged = 1;
        let mut failing = checked(app("/f", 3), 2, 3);
        failing.tasks_unhealthy = 1;
        let mut healthy_with_extra_failing = checked(app("/x", 2), 2, 3);
        healthy_with_extra_failing.tasks_unhealthy = 1;
        healthy_with_extra_failing.tasks_staged = 1;
        let mut suspended_deploying = app("/z", 0);
        suspended_deploying.deployments = vec!["dep-9".into()];
        suspended_deploying.tasks_running = 1;

        let rows: Vec<(&str, App, Vec<&str>, Option<&str>)> = vec![
            (
                "health checks, all healthy",
                checked(app("/a", 3), 3, 3),
                vec![],
                None,
            ),
            (
                "health checks, more healthy than wanted (a surge)",
                checked(app("/a", 3), 4, 4),
                vec![],
                None,
            ),
            (
                "health checks, one short",
                checked(app("/a", 3), 2, 3),
                vec![],
                Some("2 of 3 healthy"),
            ),
            (
                "health checks, running does not stand in for healthy",
                checked(app("/a", 2), 0, 2),
                vec![],
                Some("0 of 2 healthy"),
            ),
            (
                "no health checks, all running (tasksHealthy is always 0)",
                unchecked(app("/n", 2), 2),
                vec![],
                None,
            ),
            (
                "no health checks, one short",
                unchecked(app("/n", 2), 1),
                vec![],
                Some("1 of 2 running (no health checks)"),
            ),
            (
                "own deployment in progress, counts fine",
                with_deployment,
                vec![],
                Some("deploying (dep-1)"),
            ),
            (
                "deployment listed only in /v2/deployments",
                checked(app("/l", 1), 1, 1),
                vec!["dep-2"],
                Some("deploying (dep-2)"),
            ),
            (
                "staged tasks are named once the app is found wanting",
                staged,
                vec![],
                Some("2 of 3 healthy; 1 staged"),
            ),
            (
                "failing checks are named once the app is found wanting",
                failing,
                vec![],
                Some("2 of 3 healthy; 1 unhealthy"),
            ),
            (
                "an extra failing or staged task does not make a full app unhealthy",
                healthy_with_extra_failing,
                vec![],
                None,
            ),
            ("suspended app with no tasks", app("/z", 0), vec![], None),
            (
                "suspended app, even while a deployment stops its tasks",
                suspended_deploying,
                vec!["dep-8"],
                None,
            ),
        ];
        for (what, app, listed, expected) in rows {
            let verdict = judge_app(&app, &listed, Settle::NONE);
            assert_eq!(verdict.reason().as_deref(), expected, "{what}");
            assert_eq!(verdict.is_healthy(), expected.is_none(), "{what}");
        }
    }

    #[test]
    fn both_sources_of_deployments_are_merged_without_repeats() {
        let mut app = checked(app("/a", 1), 0, 0);
        app.deployments = vec!["dep-b".into(), "dep-a".into()];
        let verdict = judge_app(&app, &["dep-a", "dep-c"], Settle::NONE);
        assert_eq!(
            verdict.reasons[0],
            Unhealthy::Deploying(vec!["dep-a".into(), "dep-b".into(), "dep-c".into()])
        );
        assert_eq!(verdict.reasons[1].to_string(), "0 of 1 healthy");
    }

    /// Every rule of "a healthy task", one row each.
    #[test]
    fn every_rule_of_a_healthy_task_holds() {
        let with_checks = checked(app("/c", 1), 0, 0);
        let without_checks = app("/n", 1);
        let rows = [
            (
                "checks, all alive",
                &with_checks,
                task(Some("a"), Some("TASK_RUNNING"), true, &[true, true]),
                true,
            ),
            (
                "checks, one failing",
                &with_checks,
                task(Some("a"), Some("TASK_RUNNING"), true, &[true, false]),
                false,
            ),
            (
                "checks, no result yet",
                &with_checks,
                task(Some("a"), Some("TASK_RUNNING"), true, &[]),
                false,
            ),
            (
                "checks, no state (old Marathon), started",
                &with_checks,
                task(Some("a"), None, true, &[true]),
                true,
            ),
            (
                "checks, alive but being killed",
                &with_checks,
                task(Some("a"), Some("TASK_KILLING"), true, &[true]),
                false,
            ),
            (
                "no checks, running",
                &without_checks,
                task(Some("a"), Some("TASK_RUNNING"), true, &[]),
                true,
            ),
            (
                "no checks, staging",
                &without_checks,
                task(Some("a"), Some("TASK_STAGING"), false, &[]),
                false,
            ),
            (
                "no checks, no state, started",
                &without_checks,
                task(Some("a"), None, true, &[]),
                true,
            ),
            (
                "no checks, no state, startedAt null",
                &without_checks,
                task(Some("a"), None, false, &[]),
                false,
            ),
        ];
        for (what, app, task, expected) in rows {
            assert_eq!(
                task_is_healthy(app, &task, Settle::NONE),
                expected,
                "{what}"
            );
        }
    }

    #[test]
    fn healthy_tasks_are_counted_per_agent_and_the_rest_are_not() {
        let mut app = checked(app("/c", 4), 3, 4);
        app.tasks = vec![
            task(Some("S1"), Some("TASK_RUNNING"), true, &[true]),
            task(Some("S1"), Some("TASK_RUNNING"), true, &[true]),
            task(Some("S2"), Some("TASK_RUNNING"), true, &[true]),
            task(Some("S3"), Some("TASK_RUNNING"), true, &[false]),
            task(None, Some("TASK_RUNNING"), true, &[true]),
        ];
        let verdict = judge_app(&app, &[], Settle::NONE);
        let expected: BTreeMap<String, u32> = [("S1".to_string(), 2), ("S2".to_string(), 1)].into();
        assert_eq!(verdict.healthy_per_agent, expected);
    }

    #[test]
    fn the_cluster_is_healthy_only_when_every_app_is_and_apps_come_sorted() {
        let apps = vec![
            unchecked(app("/b", 1), 1),
            checked(app("/a", 1), 1, 1),
            checked(app("/c", 2), 1, 2),
        ];
        let deployments = vec![Deployment {
            id: "dep-1".into(),
            affected_apps: vec!["/b".into()],
            current_step: 1,
            total_steps: 1,
        }];
        let health = judge(&apps, &deployments, Settle::NONE);
        let ids: Vec<&str> = health.apps.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["/a", "/b", "/c"]);
        assert!(!health.is_healthy());
        let unhealthy: Vec<(&str, Option<String>)> = health
            .unhealthy()
            .map(|a| (a.id.as_str(), a.reason()))
            .collect();
        assert_eq!(
            unhealthy,
            [
                ("/b", Some("deploying (dep-1)".to_string())),
                ("/c", Some("1 of 2 healthy".to_string())),
            ]
        );
        assert!(judge(&apps[..2], &[], Settle::NONE).is_healthy());
        assert!(judge(&[], &[], Settle::NONE).is_healthy());
    }

    /// A task of an app without health checks, running since `started`
    /// seconds after the epoch.
    fn started_at(secs: u64) -> Task {
        let mut task = task(Some("a"), Some("TASK_RUNNING"), true, &[]);
        task.started_at = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
        task
    }

    #[test]
    fn a_task_without_health_checks_is_up_only_once_it_has_run_the_settle_time() {
        let app = unchecked(app("/worker", 1), 1);
        let settle = Settle {
            at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
            after: Duration::from_secs(30),
        };
        assert_eq!(standing(&app, &started_at(990), settle), Standing::Settling);
        assert_eq!(standing(&app, &started_at(970), settle), Standing::Up);
        // A start after the time judged at (another clock ahead): not up.
        assert_eq!(
            standing(&app, &started_at(1_010), settle),
            Standing::Settling
        );
        // Unknown start: not up while a settle time is asked, up without.
        let mut unknown = started_at(0);
        unknown.started_at = None;
        assert_eq!(standing(&app, &unknown, settle), Standing::Settling);
        assert_eq!(standing(&app, &unknown, Settle::NONE), Standing::Up);
        // Not running is down, settled or not; health checks ignore settle.
        let mut staging = started_at(0);
        staging.state = Some("TASK_STAGING".to_string());
        assert_eq!(standing(&app, &staging, settle), Standing::Down);
        let checked = checked(app.clone(), 1, 1);
        let young = task(Some("a"), Some("TASK_RUNNING"), true, &[true]);
        assert_eq!(standing(&checked, &young, settle), Standing::Up);
    }

    /// A crash loop: Marathon counts each new task running the moment it
    /// starts, and it dies seconds later. With a settle time the app is
    /// never judged healthy on such tasks; without, it would be.
    #[test]
    fn a_crash_looping_app_without_a_health_check_is_never_counted_as_up() {
        let mut app = unchecked(app("/crashy", 2), 2);
        let settle = |now: u64| Settle {
            at: SystemTime::UNIX_EPOCH + Duration::from_secs(now),
            after: Duration::from_secs(30),
        };
        // Every few seconds a new pair of tasks, each gone within 5 s.
        for start in (100..400).step_by(5) {
            app.tasks = vec![started_at(start), started_at(start)];
            let now = start + 4;
            let verdict = judge_app(&app, &[], settle(now));
            assert!(
                !verdict.is_healthy(),
                "judged healthy at {now}: {verdict:?}"
            );
            assert!(verdict.healthy_per_agent.is_empty());
            assert!(judge_app(&app, &[], Settle::NONE).is_healthy());
        }
        // Once they stay up past the settle time, the app is up.
        app.tasks = vec![started_at(500), started_at(500)];
        assert!(judge_app(&app, &[], settle(531)).is_healthy());
    }
}
