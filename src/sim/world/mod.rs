//! The simulated world: Auto Scaling groups of EC2 instances, the Mesos
//! master's view of their agents (one set of masters for every group),
//! Marathon's apps and tasks, and the monitor
//! that records what really happened. Pure and deterministic: no I/O, no
//! real clock; time moves only through `advance_to`, and every random
//! choice comes from the scenario's seed.
//!
//! One file per concept, each adding its part of `World`'s API:
//! - `clock`: `SimTime` and its place on the wall clock.
//! - `events`: the timed event queue.
//! - `asg`: the groups, their instances, scaling activities, AZRebalance,
//!   EC2.
//! - `agents`: Mesos agents (registration, ping timeouts; drain, deactivate
//!   and reactivate in `agents/operator`).
//! - `maintenance`: the maintenance schedule and machines down/up.
//! - `marathon`: apps, tasks, health checks, backoff, deployments, kills.
//! - `placement`: which agent a task goes to (resources, roles,
//!   constraints).
//! - `monitor`: the ground truth (time below floor, outages) and `Report`.
//! - `faults`: what the world can be told to get wrong.
//! - `alarms`: CloudWatch alarms and their states (set, or scheduled).
//! - `jobs`: job runs of a Metronome-like framework.
//! - `services`: DC/OS SDK services, their pods and plans.

mod agents;
mod alarms;
mod asg;
mod clock;
mod events;
mod faults;
pub(crate) mod ids;
mod jobs;
mod maintenance;
mod marathon;
mod monitor;
mod placement;
mod rng;
mod services;

#[cfg(test)]
mod tests;

pub(crate) use agents::{AgentView, DrainConfig, DrainView, MesosError};
pub(crate) use alarms::{AlarmDefinition, AlarmSpec, AlarmView, STATES as ALARM_STATES};
pub(crate) use asg::{
    ActionRef, ActivityView, AwsError, Ec2InstanceView, GroupUpdate, GroupView,
    LaunchTemplateChoice, LaunchTemplateView, MixedPolicyView, MixedUpdate, OverrideUpdate,
    RefreshView,
};
// Only tests name the pool's view (the facade writes it as it comes).
#[cfg(test)]
pub(crate) use asg::WarmPoolView;
pub(crate) use clock::{Epoch, SimTime};
pub(crate) use faults::Faults;
#[cfg(test)]
pub(crate) use faults::{BadImage, ImageEffect, LaunchFailure};
pub use jobs::JobRunView;
pub(crate) use maintenance::{MachineId, MaintenanceError, MaintenanceStatus, MaintenanceWindow};
pub(crate) use marathon::{
    AppChange, AppView, BusEvent, BusKind, BusRead, DeploymentView, HealthCheckResultView,
    HealthCheckView, MarathonError, QueueView, TaskFailureView, TaskView,
};
pub use monitor::{AppReport, FinalState, GroupFinalState, GroupReport, Report, TaskMoves};
pub(crate) use services::{
    PhaseView, PlanCommand, PlanView, PodInfoView, PodInstanceStatus, PodTypeStatus, ServiceError,
    StepView,
};
pub use services::{PodView, ServiceReport};
#[cfg(test)]
use std::collections::BTreeSet;

use agents::Mesos;
use asg::{Group, Instance};
use events::{Event, EventQueue};
use maintenance::Maintenance;
use marathon::Marathon;
use monitor::Monitor;
use rng::SimRng;

use super::scenario::{Scenario, millis};

/// The scenario's timings in milliseconds, as the world uses them.
#[derive(Clone, Debug)]
pub(crate) struct Timing {
    pub(crate) jitter: f64,
    pub(crate) boot_ms: u64,
    pub(crate) register_ms: u64,
    pub(crate) terminate_ms: u64,
    pub(crate) launch_retry_ms: u64,
    pub(crate) rebalance_delay_ms: u64,
    /// `agent_ping_timeout` × `max_agent_ping_timeouts`.
    pub(crate) unreachable_after_ms: u64,
    /// The two factors, as the master's `/master/flags` reports them.
    pub(crate) agent_ping_timeout_ms: u64,
    pub(crate) max_agent_ping_timeouts: u32,
    pub(crate) unreachable_relaunch_ms: u64,
    pub(crate) offer_interval_ms: u64,
    pub(crate) kill_ms: u64,
    pub(crate) draining_ms: u64,
}

/// The whole simulated cluster. Facades call `advance_to(now)` before each
/// request, then one of the API methods (spread over this module's files).
pub struct World {
    now: SimTime,
    epoch: Epoch,
    rng: SimRng,
    queue: EventQueue,
    timing: Timing,
    /// The Auto Scaling groups, in scenario order (the first is the one a
    /// one-group call such as `az_counts` means).
    groups: Vec<Group>,
    /// Every instance ever launched, by index (terminated ones stay, as
    /// EC2 keeps listing them for a while).
    instances: Vec<Instance>,
    instance_by_id: std::collections::HashMap<String, usize>,
    mesos: Mesos,
    maintenance: Maintenance,
    marathon: Marathon,
    faults: Faults,
    /// CloudWatch's alarms (the AWS facade answers CloudWatch too).
    alarms: alarms::Alarms,
    monitor: Monitor,
    /// Job runs of frameworks other than Marathon.
    jobs: Vec<jobs::JobRun>,
    /// DC/OS SDK services and their pods.
    services: Vec<services::Service>,
    events_processed: u64,
}

impl World {
    /// Builds the scenario's world in its steady state at time zero: every
    /// instance InService, every agent registered, every task placed,
    /// running and (with health checks) healthy.
    pub(crate) fn new(scenario: &Scenario) -> World {
        let t = &scenario.timings;
        let timing = Timing {
            jitter: t.jitter,
            boot_ms: millis(t.instance_boot_s),
            register_ms: millis(t.agent_register_s),
            terminate_ms: millis(t.instance_terminate_s),
            launch_retry_ms: millis(t.launch_retry_s).max(1),
            rebalance_delay_ms: millis(t.az_rebalance_delay_s),
            unreachable_after_ms: millis(t.agent_ping_timeout_s)
                * u64::from(t.max_agent_ping_timeouts),
            agent_ping_timeout_ms: millis(t.agent_ping_timeout_s),
            max_agent_ping_timeouts: t.max_agent_ping_timeouts,
            unreachable_relaunch_ms: millis(t.unreachable_relaunch_s),
            offer_interval_ms: millis(t.offer_interval_s).max(1),
            kill_ms: millis(t.task_kill_s),
            draining_ms: millis(t.marathon_draining_s),
        };
        let mut rng = SimRng::new(scenario.seed);
        let master_id = rng.uuid();
        let apps = scenario.expanded_apps();
        let mut world = World {
            now: SimTime::ZERO,
            epoch: Epoch {
                unix_ms: t
                    .epoch_unix_s
                    .unwrap_or_else(crate::sim::scenario::defaults::epoch_unix_s)
                    * 1000,
            },
            rng,
            queue: EventQueue::default(),
            timing,
            groups: scenario
                .groups()
                .map(|g| Group::new(g, scenario.agent_of(g)))
                .collect(),
            instances: Vec::new(),
            instance_by_id: Default::default(),
            mesos: Mesos::new(master_id),
            maintenance: Maintenance::default(),
            marathon: Marathon::new(&apps, scenario.marathon_role()),
            faults: scenario.faults.clone(),
            alarms: alarms::Alarms::default(),
            monitor: Monitor::new(apps.len(), scenario.groups().count()),
            jobs: Vec::new(),
            services: Vec::new(),
            events_processed: 0,
        };
        for app in &apps {
            if app.spec.never_healthy_after_relaunch
                && !world.faults.never_healthy_apps.contains(&app.id)
            {
                world.faults.never_healthy_apps.push(app.id.clone());
            }
        }
        world
            .marathon
            .refresh_never_healthy(&world.faults.never_healthy_apps);
        for (gi, g) in scenario.groups().enumerate() {
            world.populate_initial_instances(gi, g.standby, g.protected);
            world.populate_warm_pool(gi);
        }
        world.add_scenario_alarms(&scenario.alarms);
        world.place_initial_tasks();
        world.refresh_failing_checks(&world.faults.failing_health_checks.clone());
        for app in 0..world.marathon.apps.len() {
            world.app_changed(app);
        }
        for gi in 0..world.groups.len() {
            world.observe_group(gi);
        }
        world.add_jobs(&scenario.jobs);
        world.add_services(&scenario.services);
        world
    }

    /// Now, in simulated time.
    pub(crate) fn now(&self) -> SimTime {
        self.now
    }

    pub(crate) fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// Unix milliseconds of `t` (for the facades' timestamps).
    pub(crate) fn unix_ms(&self, t: SimTime) -> u64 {
        self.epoch.unix_ms(t)
    }

    /// How many events the world has processed (for benchmarks).
    #[cfg(test)]
    pub(crate) fn events_processed(&self) -> u64 {
        self.events_processed
    }

    /// Runs every event due at or before `t`, in (time, sequence) order,
    /// then sets the clock to `t`. Time never goes backwards: an earlier `t`
    /// changes nothing.
    pub(crate) fn advance_to(&mut self, t: SimTime) {
        while let Some((at, event)) = self.queue.pop_due(t) {
            self.now = self.now.max(at);
            self.events_processed += 1;
            self.handle(event);
        }
        self.now = self.now.max(t);
    }

    /// When the next thing the world does by itself is due, if anything
    /// is scheduled.
    pub(crate) fn next_due(&self) -> Option<SimTime> {
        self.queue.next_time()
    }

    /// Advances by `ms` milliseconds.
    #[cfg(test)]
    pub(crate) fn advance_by_ms(&mut self, ms: u64) {
        self.advance_to(self.now.plus_ms(ms));
    }

    /// The faults in force.
    pub(crate) fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Switches faults at runtime. Unknown app ids are refused, so a typo
    /// cannot silently disable a fault, and so is an app without a health
    /// check in `failing_health_checks` and a `bad_image` version the launch
    /// template does not have (or a group the world does not have). The
    /// error names the field.
    pub(crate) fn set_faults(&mut self, faults: Faults) -> Result<(), String> {
        for id in &faults.never_healthy_apps {
            if !self.marathon.by_id.contains_key(id) {
                return Err(format!("never_healthy_apps: {id} is not an app"));
            }
        }
        for id in &faults.failing_health_checks {
            match self.marathon.has_health_check(id) {
                None => return Err(format!("failing_health_checks: {id} is not an app")),
                Some(false) => {
                    return Err(format!(
                        "failing_health_checks: {id} has no health check, so its tasks cannot fail one"
                    ));
                }
                Some(true) => {}
            }
        }
        let templates: Vec<(&str, u64)> = self
            .groups
            .iter()
            .map(|g| (g.name.as_str(), g.template.latest))
            .collect();
        faults
            .check_bad_images(&templates)
            .map_err(|message| format!("bad_image: {message}"))?;
        self.marathon
            .refresh_never_healthy(&faults.never_healthy_apps);
        self.refresh_failing_checks(&faults.failing_health_checks);
        self.faults = faults;
        Ok(())
    }

    /// Makes every group's instances of launch template `version` run a
    /// bad image with `effect` (replacing what was said of that version
    /// before), keeping every other fault: how a test breaks the image a
    /// roll goes onto. Refused for a version no template has.
    #[cfg(test)]
    pub(crate) fn set_bad_image(
        &mut self,
        version: &str,
        effect: ImageEffect,
    ) -> Result<(), String> {
        let mut faults = self.faults.clone();
        faults.bad_image.retain(|b| b.version != version);
        faults.bad_image.push(BadImage {
            version: version.to_string(),
            effect,
            group: None,
        });
        self.set_faults(faults)
    }

    /// Sets the role group `group`'s agents offer their resources to
    /// (`None`: unreserved), for every agent of it, registered or not:
    /// how a test makes a group's agents lose (or gain) a role. Refused
    /// for an unknown group.
    #[cfg(test)]
    pub(crate) fn set_group_role(&mut self, group: &str, role: Option<&str>) -> Result<(), String> {
        let found = self.groups.iter_mut().find(|g| g.name == group);
        let g = found.ok_or_else(|| format!("no group {group}"))?;
        g.role = role.map(str::to_string);
        Ok(())
    }

    /// Counts an API call by its action name, for the report.
    pub(crate) fn record_api_call(&mut self, system: &str, action: &str) {
        self.monitor.record_api_call(system, action);
    }

    /// An answer replaced by an injected fault (`/sim/faults`).
    pub(crate) fn record_injected_fault(&mut self, system: &str, answer: &str) {
        self.monitor.record_injected_fault(system, answer);
    }

    fn schedule(&mut self, at: SimTime, event: Event) {
        self.queue.schedule(at, event);
    }

    fn schedule_in(&mut self, ms: u64, event: Event) {
        self.queue.schedule(self.now.plus_ms(ms), event);
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::InstanceBooted(i) => self.on_instance_booted(i),
            Event::AgentRegisters(i) => self.on_agent_registers(i),
            Event::InstanceTerminated(i) => self.on_instance_terminated(i),
            Event::LifecycleHookTimeout(i) => self.on_lifecycle_hook_timeout(i),
            Event::AgentPingTimeout(a) => self.on_agent_ping_timeout(a),
            Event::AgentDrained(a) => self.on_agent_drained(a),
            Event::ReconcileGroup(gi) => {
                self.groups[gi].retry_at = None;
                self.reconcile_group(gi);
            }
            Event::RebalanceCheck(gi) => self.on_rebalance_check(gi),
            Event::TaskStarted(t) => self.on_task_started(t),
            Event::HealthCheck(t) => self.on_health_check(t),
            Event::TaskCrashes(t) => self.on_task_crashes(t),
            Event::AppSettled(app) => self.app_changed(app),
            Event::TaskExpunged(t) => self.on_task_expunged(t),
            Event::LaunchDue(app) => self.launch_missing(app),
            Event::OfferCycle => self.on_offer_cycle(),
            Event::JobStarts(j) => self.on_job_starts(j),
            Event::JobEnds(j) => self.on_job_ends(j),
            Event::JobKilled(j) => self.on_job_killed(j),
            Event::Pod {
                service,
                pod,
                epoch,
                step,
            } => self.on_pod_event(service, pod, epoch, step),
        }
    }

    /// Apps whose tasks are waiting for room, for tests and the report.
    #[cfg(test)]
    pub(crate) fn apps_waiting_for_offers(&self) -> Vec<String> {
        let waiting: BTreeSet<usize> = self.marathon.waiting.clone();
        waiting
            .into_iter()
            .map(|a| self.marathon.apps[a].id.clone())
            .collect()
    }
}
