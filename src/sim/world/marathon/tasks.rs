//! A task's life in Marathon: created on an agent, staging, running,
//! checked, failed or killed, expunged and relaunched (after the launch
//! delay, where it can be placed), and the counts it moves.

use super::*;

impl World {
    /// Creates a task of `a` on `agent`. Initial tasks start running and
    /// healthy at once (the scenario's steady state, whatever the image);
    /// others stage, and suffer the agent's image if it is bad.
    pub(crate) fn start_task(&mut self, a: AppIdx, agent: AgentIdx, initial: bool) -> TaskKey {
        let image = if initial {
            None
        } else {
            self.image_effect_on(agent)
        };
        let key = self.marathon.next_key;
        self.marathon.next_key += 1;
        let app = &mut self.marathon.apps[a];
        let id = format!(
            "{}.{}",
            app.id.trim_start_matches('/').replace('/', "_"),
            self.rng.uuid()
        );
        let lineage = match app.orphans.pop_front() {
            Some(lineage) => {
                self.monitor.task_moved(a, lineage.0, &lineage.1);
                lineage
            }
            None => (key, id.clone()),
        };
        let app = &mut self.marathon.apps[a];
        app.tasks.insert(key);
        let has_health = app.health.is_some();
        let (cpus, mem) = (app.cpus, app.mem);
        // On a bad image a task never passes a check, or (without checks to
        // fail, or on a crashing image) fails soon after it starts.
        let doomed = (app.never_healthy && !initial)
            || (image == Some(ImageEffect::Unhealthy) && has_health);
        let crashes = image == Some(ImageEffect::Crash)
            || (image == Some(ImageEffect::Unhealthy) && !has_health);
        let start_ms = app.task_start_ms;
        let host_port = self.free_port(agent);
        let ag = &mut self.mesos.agents[agent];
        ag.used_cpus += cpus;
        ag.used_mem += mem;
        ag.tasks.insert(key);
        let mut task = Task {
            id: id.clone(),
            app: a,
            agent,
            state: TaskState::Staging,
            staged_at: self.now,
            started_at: None,
            health: Health::default(),
            lineage,
            doomed,
            crashes,
            checking: false,
            host_port,
        };
        if initial {
            task.state = TaskState::Running;
            task.started_at = Some(self.now);
            if has_health {
                task.health.alive = Some(true);
                task.health.first_success = Some(self.now);
                task.health.last_success = Some(self.now);
            }
        } else {
            let start = self.rng.jittered(start_ms, self.timing.jitter);
            self.schedule_in(start, Event::TaskStarted(key));
        }
        self.marathon.tasks.insert(key, task);
        self.marathon.task_by_id.insert(id, key);
        if !initial {
            self.advance_delay(a);
            self.publish_status(key, None);
        }
        key
    }

    /// The lowest port of the agent's range no task on it holds (Mesos
    /// offers only free ones).
    fn free_port(&self, agent: AgentIdx) -> u16 {
        let held = self.ports_held(&self.mesos.agents[agent].tasks);
        AGENT_PORTS
            .clone()
            .find(|p| !held.contains(p))
            .unwrap_or(*AGENT_PORTS.start())
    }

    /// The host ports `tasks` (an agent's) hold.
    pub(crate) fn ports_held(&self, tasks: &BTreeSet<TaskKey>) -> BTreeSet<u16> {
        tasks
            .iter()
            .filter_map(|k| self.marathon.tasks.get(k).map(|t| t.host_port))
            .collect()
    }

    /// Marathon's `advanceDelay`: a task of the app staging or running
    /// moves the app's launch delay (if any) to start now.
    fn advance_delay(&mut self, a: AppIdx) {
        let now = self.now;
        let app = &mut self.marathon.apps[a];
        if let Some(delay) = app.delay_at(now) {
            app.delay = Some(LaunchDelay {
                reference: now,
                ..delay
            });
        } else {
            app.delay = None;
        }
    }

    /// The app's launch delay and when launches may resume, if one is in
    /// force (what Marathon's `/v2/queue` reports as `delay`).
    pub(crate) fn launch_delay(&self, a: AppIdx) -> Option<(f64, SimTime)> {
        self.marathon.apps[a]
            .delay_at(self.now)
            .map(|d| (d.current_ms, d.deadline()))
    }

    pub(crate) fn on_task_started(&mut self, key: TaskKey) {
        let Some(task) = self.marathon.tasks.get_mut(&key) else {
            return;
        };
        if task.state != TaskState::Staging {
            return;
        }
        task.state = TaskState::Running;
        task.started_at = Some(self.now);
        let (a, doomed, crashes) = (task.app, task.doomed, task.crashes);
        self.publish_status(key, None);
        if crashes {
            self.schedule_in(CRASH_AFTER_MS, Event::TaskCrashes(key));
        }
        match self.marathon.apps[a].health.as_ref().map(|h| h.interval_ms) {
            None if doomed => {
                self.end_task(key, TaskEnd::Failed);
                return;
            }
            None => self.schedule_in(SETTLE_MS, Event::AppSettled(a)),
            Some(interval) => self.schedule_check(key, interval),
        }
        self.advance_delay(a);
        self.app_changed(a);
    }

    /// A health check reports. Failures inside the grace period (before a
    /// first success) are ignored, as Marathon does; after
    /// `maxConsecutiveFailures` the task is killed. Once a task is healthy
    /// its checks stop (they would only keep passing, and stopping keeps
    /// `big` cheap) unless its app's checks are made to fail
    /// (`failing_health_checks`): then a healthy task turns unhealthy.
    pub(crate) fn on_health_check(&mut self, key: TaskKey) {
        let Some(task) = self.marathon.tasks.get(&key) else {
            return;
        };
        if task.state != TaskState::Running {
            return;
        }
        let a = task.app;
        let Some(spec) = self.marathon.apps[a].health.clone() else {
            return;
        };
        let failing = self.marathon.apps[a].failing_checks;
        let started = task.started_at.unwrap_or(self.now);
        let ready = !failing
            && !task.doomed
            && self.now >= started.plus_ms(self.marathon.apps[a].ready_after_ms);
        let in_grace =
            task.health.first_success.is_none() && self.now < started.plus_ms(spec.grace_ms);
        let now = self.now;
        let Some(task) = self.marathon.tasks.get_mut(&key) else {
            return;
        };
        let was_alive = task.health.alive;
        if ready {
            task.health.alive = Some(true);
            task.health.consecutive_failures = 0;
            task.health.first_success.get_or_insert(now);
            task.health.last_success = Some(now);
            task.checking = false;
            self.publish_check(key, &spec, was_alive);
        } else if in_grace {
            self.schedule_in(spec.interval_ms, Event::HealthCheck(key));
            return;
        } else {
            task.health.alive = Some(false);
            task.health.consecutive_failures += 1;
            task.health.last_failure = Some(now);
            let killed = task.health.consecutive_failures >= spec.max_failures;
            if killed {
                task.checking = false;
            }
            self.publish_check(key, &spec, was_alive);
            if killed {
                self.publish_unhealthy_kill(key);
                self.end_task(key, TaskEnd::HealthKilled);
                return;
            }
            self.schedule_in(spec.interval_ms, Event::HealthCheck(key));
        }
        self.app_changed(a);
    }

    /// A task on a crashing image exits non-zero while running: TASK_FAILED
    /// (the launch delay grows). A task no longer running is left alone.
    pub(crate) fn on_task_crashes(&mut self, key: TaskKey) {
        if self
            .marathon
            .tasks
            .get(&key)
            .is_some_and(|t| t.state == TaskState::Running)
        {
            self.end_task(key, TaskEnd::Failed);
        }
    }

    /// Starts a chain of health checks for the task, the first in
    /// `interval_ms`.
    fn schedule_check(&mut self, key: TaskKey, interval_ms: u64) {
        if let Some(task) = self.marathon.tasks.get_mut(&key) {
            task.checking = true;
            self.schedule_in(interval_ms, Event::HealthCheck(key));
        }
    }

    /// The `failing_health_checks` fault changed: the listed apps' checks
    /// fail from now on, and their running tasks that had stopped being
    /// checked (healthy ones) are checked again; unlisted apps' checks
    /// pass again.
    pub(crate) fn refresh_failing_checks(&mut self, ids: &[String]) {
        for a in 0..self.marathon.apps.len() {
            let app = &mut self.marathon.apps[a];
            app.failing_checks = ids.contains(&app.id);
            let Some(interval) = app.health.as_ref().map(|h| h.interval_ms) else {
                continue;
            };
            if !app.failing_checks {
                continue;
            }
            let idle: Vec<TaskKey> = app
                .tasks
                .iter()
                .copied()
                .filter(|k| {
                    let t = &self.marathon.tasks[k];
                    t.state == TaskState::Running && !t.checking
                })
                .collect();
            for key in idle {
                self.schedule_check(key, interval);
            }
        }
    }

    /// Ends a task. Failures grow the app's launch delay; the task is
    /// expunged (and, unless scaled away, replaced) after Marathon's
    /// reaction time: ~3 s for unreachable/lost, the kill grace for kills.
    pub(crate) fn end_task(&mut self, key: TaskKey, how: TaskEnd) {
        let Some(task) = self.marathon.tasks.get_mut(&key) else {
            return;
        };
        if !matches!(task.state, TaskState::Staging | TaskState::Running) {
            return;
        }
        task.state = match how {
            TaskEnd::Unreachable => TaskState::Unreachable,
            TaskEnd::Lost => TaskState::Lost,
            TaskEnd::Failed => TaskState::Failed,
            TaskEnd::Killed | TaskEnd::KilledForScale | TaskEnd::HealthKilled => TaskState::Killing,
        };
        let a = task.app;
        let lineage = task.lineage.clone();
        let (task_id, agent) = (task.id.clone(), task.agent);
        self.record_failure(a, task_id, agent, how);
        self.publish_status(key, None);
        // Marathon's limit-worthy conditions: FAILED, and GONE for a task
        // whose machine was brought down (see `TaskEnd::Lost`).
        let limit_worthy = matches!(how, TaskEnd::Lost | TaskEnd::Failed);
        let now = self.now;
        let app = &mut self.marathon.apps[a];
        if limit_worthy {
            let previous = app.delay_at(now).map(|d| d.current_ms);
            app.delay = Some(LaunchDelay {
                reference: now,
                current_ms: next_delay_ms(
                    previous,
                    app.backoff_ms,
                    app.backoff_factor,
                    app.max_delay_ms,
                ),
            });
        }
        if how != TaskEnd::KilledForScale {
            app.orphans.push_back(lineage);
        }
        let delay = match how {
            TaskEnd::Unreachable | TaskEnd::Lost => self.timing.unreachable_relaunch_ms,
            TaskEnd::Failed => 0,
            TaskEnd::Killed | TaskEnd::KilledForScale | TaskEnd::HealthKilled => {
                self.timing.kill_ms
            }
        };
        self.schedule_in(delay, Event::TaskExpunged(key));
        self.app_changed(a);
    }

    /// Keeps the app's `lastTaskFailure` when a task ends in what Marathon
    /// records as a failure: a terminal failure state from Mesos
    /// (TASK_FAILED, TASK_LOST, …), or its own kill for failed health
    /// checks (TASK_KILLED, with the last check's cause). Kills asked
    /// through the API, scale-downs, drains (TASK_KILLED) and
    /// TASK_UNREACHABLE are not failures to Marathon.
    fn record_failure(&mut self, a: AppIdx, task_id: String, agent: AgentIdx, how: TaskEnd) {
        let host = self.mesos.agents[agent].hostname.clone();
        let (state, message) = match how {
            TaskEnd::Failed => ("TASK_FAILED", EXITED_MESSAGE.to_string()),
            // The master's words for a task on a machine it brought down
            // (Mesos' `removeSlave`).
            TaskEnd::Lost => (
                "TASK_LOST",
                format!("Slave {host} removed: Operator initiated 'Machine DOWN'"),
            ),
            TaskEnd::HealthKilled => {
                let cause = self.marathon.apps[a]
                    .health
                    .as_ref()
                    .map_or("", HealthSpec::failure_cause);
                (
                    "TASK_KILLED",
                    format!("Task was killed since health check failed. Reason: {cause}"),
                )
            }
            TaskEnd::Unreachable | TaskEnd::Killed | TaskEnd::KilledForScale => return,
        };
        let app = &mut self.marathon.apps[a];
        app.last_failure = Some(TaskFailure {
            task_id,
            state,
            message,
            host,
            slave_id: self.mesos.agents[agent].id.clone(),
            at: self.now,
            version: app.version,
        });
    }

    pub(crate) fn on_task_expunged(&mut self, key: TaskKey) {
        // Marathon's last word on it: a kill ends as TASK_KILLED, the rest
        // in the state they ended in.
        match self.marathon.tasks.get(&key).map(|t| t.state) {
            None => return,
            Some(TaskState::Killing) => self.publish_status(key, Some("TASK_KILLED")),
            Some(_) => self.publish_status(key, None),
        }
        let Some(task) = self.marathon.tasks.remove(&key) else {
            return;
        };
        self.marathon.task_by_id.remove(&task.id);
        let a = task.app;
        let app = &mut self.marathon.apps[a];
        app.tasks.remove(&key);
        let (cpus, mem) = (app.cpus, app.mem);
        let agent = &mut self.mesos.agents[task.agent];
        agent.tasks.remove(&key);
        agent.used_cpus = agent.used_cpus.saturating_sub(cpus);
        agent.used_mem = agent.used_mem.saturating_sub(mem);
        self.app_changed(a);
        self.launch_missing(a);
        self.offers_changed();
    }

    /// Places the app's missing tasks, once its launch delay is over; what
    /// finds no room waits for the next offer cycle.
    pub(crate) fn launch_missing(&mut self, a: AppIdx) {
        let app = &self.marathon.apps[a];
        let missing = app.left_to_launch();
        if missing == 0 {
            self.marathon.apps[a].queued_since = None;
            self.marathon.waiting.remove(&a);
            return;
        }
        let now = self.now;
        let app = &mut self.marathon.apps[a];
        app.queued_since.get_or_insert(now);
        if let Some(at) = app.delay_at(self.now).map(|d| d.deadline())
            && self.now < at
        {
            if app.launch_due_at != Some(at) {
                self.marathon.apps[a].launch_due_at = Some(at);
                self.schedule(at, Event::LaunchDue(a));
            }
            return;
        }
        for _ in 0..missing {
            match self.pick_agent(a) {
                Some(agent) => {
                    self.start_task(a, agent, false);
                }
                None => {
                    self.marathon.waiting.insert(a);
                    self.offers_changed();
                    self.app_changed(a);
                    return;
                }
            }
        }
        self.marathon.apps[a].queued_since = None;
        self.marathon.waiting.remove(&a);
        self.app_changed(a);
    }

    /// After any change to an app's tasks: recount, tell the monitor, and
    /// finish its deployment once every instance serves.
    pub(crate) fn app_changed(&mut self, a: AppIdx) {
        let mut counts = Counts::default();
        // What really serves, which Marathon may not know yet: a task on an
        // instance that is gone serves nobody, however long Mesos takes to
        // notice (or, with the stay-registered fault, never notices).
        let mut really_serving = 0;
        // Every running task of an app without checks has run the settle
        // time (with checks, health says it).
        let mut settled = true;
        // Live tasks on an agent whose resources the app's roles do not
        // take (placement never does it; the monitor checks it).
        let mut misplaced = 0;
        let app = &self.marathon.apps[a];
        let has_health = app.health.is_some();
        for k in &app.tasks {
            let t = &self.marathon.tasks[k];
            if matches!(
                t.state,
                TaskState::Staging | TaskState::Running | TaskState::Killing
            ) && !self.accepted_on(a, t.agent)
            {
                misplaced += 1;
            }
            match t.state {
                TaskState::Staging => counts.staged += 1,
                TaskState::Running => {
                    counts.running += 1;
                    if has_health {
                        match t.health.alive {
                            Some(true) => counts.healthy += 1,
                            Some(false) => counts.unhealthy += 1,
                            None => {}
                        }
                    }
                    settled &=
                        has_health || t.started_at.is_some_and(|s| self.now.since(s) >= SETTLE_MS);
                    let serves = !has_health || t.health.alive == Some(true);
                    if serves && self.agent_host_alive(t.agent) {
                        really_serving += 1;
                    }
                }
                _ => {}
            }
        }
        let app = &mut self.marathon.apps[a];
        app.counts = counts;
        let (serving, instances) = (app.serving(), app.instances);
        let done = app.tasks.len() == instances as usize && serving == instances;
        let finished = if done { app.deployment.take() } else { None };
        if done && settled {
            app.floor_instances = app.floor_instances.max(instances);
        }
        let floor = app.floor();
        let target = instances.min(app.floor_instances);
        if let Some(id) = finished {
            self.publish_deployment("deployment_success", &id, a);
            self.marathon.deployments.retain(|d| d.id != id);
        }
        self.monitor
            .observe_app(a, self.now, really_serving, floor, instances, target);
        self.monitor.observe_misplaced(a, self.now, misplaced);
    }

    /// For the monitor's report: each app's id.
    pub(crate) fn app_id(&self, a: AppIdx) -> &str {
        &self.marathon.apps[a].id
    }
}
