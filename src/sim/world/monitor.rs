//! The monitor: the world's ground truth about a roll, which later issues
//! judge the roller by. Per app, the simulated time spent below its floor
//! (serving < ceil(instances × minimumHealthCapacity), where serving is
//! healthy with health checks and running without), degraded (serving
//! fewer than its instance count, a surge's extra instances left out) and
//! at zero (an outage), integrated exactly in milliseconds between events; relaunches
//! per app and per task lineage; peak and final instances per AZ and
//! instances beyond desired, for the whole cluster and per group; task-time
//! on agents an app's roles do not accept (misplaced); API calls by action;
//! per DC/OS SDK service, its pods away at once and the longest absence
//! (`services/watch`).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde::Serialize;

use super::World;
use super::clock::SimTime;
use super::events::{AppIdx, GroupIdx, TaskKey};

#[derive(Clone, Debug, Default)]
struct AppWatch {
    serving: u32,
    floor: u32,
    instances: u32,
    below_since: Option<SimTime>,
    zero_since: Option<SimTime>,
    degraded_since: Option<SimTime>,
    below_ms: u64,
    zero_ms: u64,
    degraded_ms: u64,
    relaunches: u32,
    /// Live tasks on agents its roles do not accept, since `misplaced_at`.
    misplaced: u32,
    misplaced_at: SimTime,
    /// Task-milliseconds misplaced before `misplaced_at`.
    misplaced_ms: u64,
}

/// Instances per AZ over time, for one group or the whole cluster (every
/// group's instances per AZ name, summed).
#[derive(Clone, Debug, Default)]
struct Shape {
    az_peak: BTreeMap<String, u32>,
    az_now: BTreeMap<String, u32>,
    beyond_peak: u32,
    beyond_since: Option<SimTime>,
    beyond_ms: u64,
    peak_desired: u32,
    /// The most instances pending or in service at once (every AZ's
    /// summed at the same moment, not each AZ's own peak).
    peak_live: u32,
}

impl Shape {
    fn observe(&mut self, now: SimTime, counts: BTreeMap<String, u32>, desired: u32) {
        for (az, &c) in &counts {
            let peak = self.az_peak.entry(az.clone()).or_insert(0);
            *peak = (*peak).max(c);
        }
        self.peak_desired = self.peak_desired.max(desired);
        let live: u32 = counts.values().sum();
        self.peak_live = self.peak_live.max(live);
        self.az_now = counts;
        let beyond = live.saturating_sub(desired);
        self.beyond_peak = self.beyond_peak.max(beyond);
        match (self.beyond_since, beyond > 0) {
            (None, true) => self.beyond_since = Some(now),
            (Some(since), false) => {
                self.beyond_ms += now.since(since);
                self.beyond_since = None;
            }
            _ => {}
        }
    }

    fn beyond_ms(&self, now: SimTime) -> u64 {
        self.beyond_ms + self.beyond_since.map_or(0, |s| now.since(s))
    }
}

/// One group's record besides its shape.
#[derive(Clone, Debug, Default)]
struct GroupWatch {
    shape: Shape,
    launched: u32,
    terminated: u32,
}

#[derive(Clone, Debug)]
struct Lineage {
    app: AppIdx,
    first_task_id: String,
    moves: u32,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Monitor {
    apps: Vec<AppWatch>,
    lineages: HashMap<TaskKey, Lineage>,
    cluster: Shape,
    groups: Vec<GroupWatch>,
    launched: u32,
    terminated: u32,
    launch_failures: u32,
    api_calls: BTreeMap<String, u64>,
    injected_faults: BTreeMap<String, u64>,
    repeated_terminations: Vec<String>,
    terminations_of_gone: Vec<String>,
}

impl Monitor {
    pub(crate) fn new(apps: usize, groups: usize) -> Monitor {
        Monitor {
            apps: vec![AppWatch::default(); apps],
            groups: vec![GroupWatch::default(); groups],
            ..Monitor::default()
        }
    }

    /// How many of an app's live tasks are on agents its roles do not
    /// accept, from `now` on: the task-time is integrated between changes.
    pub(crate) fn observe_misplaced(&mut self, a: AppIdx, now: SimTime, misplaced: u32) {
        let w = &mut self.apps[a];
        w.misplaced_ms += u64::from(w.misplaced) * now.since(w.misplaced_at);
        w.misplaced_at = now;
        w.misplaced = misplaced;
    }

    /// An app's serving count, floor or instances may have changed at `now`.
    /// `target`: what it must serve not to be degraded (its instances
    /// without a surge's extra ones).
    pub(crate) fn observe_app(
        &mut self,
        a: AppIdx,
        now: SimTime,
        serving: u32,
        floor: u32,
        instances: u32,
        target: u32,
    ) {
        let w = &mut self.apps[a];
        let degraded = serving < target;
        match (w.degraded_since, degraded) {
            (None, true) => w.degraded_since = Some(now),
            (Some(since), false) => {
                w.degraded_ms += now.since(since);
                w.degraded_since = None;
            }
            _ => {}
        }
        let below = serving < floor;
        let zero = instances > 0 && serving == 0;
        match (w.below_since, below) {
            (None, true) => w.below_since = Some(now),
            (Some(since), false) => {
                w.below_ms += now.since(since);
                w.below_since = None;
            }
            _ => {}
        }
        match (w.zero_since, zero) {
            (None, true) => w.zero_since = Some(now),
            (Some(since), false) => {
                w.zero_ms += now.since(since);
                w.zero_since = None;
            }
            _ => {}
        }
        w.serving = serving;
        w.floor = floor;
        w.instances = instances;
    }

    pub(crate) fn task_moved(&mut self, a: AppIdx, lineage: TaskKey, first_task_id: &str) {
        self.apps[a].relaunches += 1;
        self.lineages
            .entry(lineage)
            .or_insert_with(|| Lineage {
                app: a,
                first_task_id: first_task_id.to_string(),
                moves: 0,
            })
            .moves += 1;
    }

    /// A group's live instances per AZ (by name) and desired capacity
    /// after a change.
    pub(crate) fn observe_group(
        &mut self,
        g: GroupIdx,
        now: SimTime,
        counts: BTreeMap<String, u32>,
        desired: u32,
    ) {
        self.groups[g].shape.observe(now, counts, desired);
    }

    /// The whole cluster's (every group's, summed) after a change.
    pub(crate) fn observe_cluster(
        &mut self,
        now: SimTime,
        counts: BTreeMap<String, u32>,
        desired: u32,
    ) {
        self.cluster.observe(now, counts, desired);
    }

    pub(crate) fn instance_launched(&mut self, g: GroupIdx) {
        self.launched += 1;
        self.groups[g].launched += 1;
    }

    pub(crate) fn instance_terminated(&mut self, g: GroupIdx) {
        self.terminated += 1;
        self.groups[g].terminated += 1;
    }

    /// A TerminateInstanceInAutoScalingGroup call for an instance whose
    /// termination had already begun.
    pub(crate) fn termination_repeated(&mut self, instance: &str) {
        self.repeated_terminations.push(instance.to_string());
    }

    /// A TerminateInstanceInAutoScalingGroup call for an instance already
    /// gone (terminated, or never in the group).
    pub(crate) fn termination_of_gone(&mut self, instance: &str) {
        self.terminations_of_gone.push(instance.to_string());
    }

    pub(crate) fn launch_failed(&mut self) {
        self.launch_failures += 1;
    }

    pub(crate) fn record_injected_fault(&mut self, system: &str, answer: &str) {
        *self
            .injected_faults
            .entry(format!("{system}:{answer}"))
            .or_default() += 1;
    }

    pub(crate) fn record_api_call(&mut self, system: &str, action: &str) {
        *self
            .api_calls
            .entry(format!("{system}:{action}"))
            .or_default() += 1;
    }
}

/// One app's record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AppReport {
    pub id: String,
    pub instances: u32,
    pub(crate) floor: u32,
    pub(crate) serving: u32,
    pub(crate) below_floor_ms: u64,
    pub(crate) at_zero_ms: u64,
    /// Serving fewer than its instance count (a surge's extra instances
    /// left out).
    pub(crate) degraded_ms: u64,
    pub(crate) relaunches: u32,
    /// Task-milliseconds its live tasks spent on agents its roles do not
    /// accept.
    pub(crate) misplaced_task_ms: u64,
    /// The app may never run a second task (Marathon's single-instance
    /// label, or upgradeStrategy 0/0): moving it means a gap, counted in
    /// `single_instance_gap_ms`, not as an outage.
    pub(crate) single_instance: bool,
}

/// How often one task (followed across its replacements) was moved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskMoves {
    pub(crate) app: String,
    pub(crate) first_task_id: String,
    pub(crate) moves: u32,
}

/// One group's record: its instances per AZ and its final state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupReport {
    pub name: String,
    /// The role its agents' resources are reserved to (`None`: `*`).
    pub(crate) role: Option<String>,
    pub(crate) az_peak: BTreeMap<String, u32>,
    pub az_final: BTreeMap<String, u32>,
    pub(crate) peak_instances_beyond_desired: u32,
    pub(crate) ms_beyond_desired: u64,
    /// The highest desired capacity the group ever had.
    pub peak_desired_capacity: u32,
    /// The most instances it had pending or in service at once, looked
    /// at on every change (what a surge cap bounds).
    pub peak_instances: u32,
    pub(crate) instances_launched: u32,
    pub(crate) instances_terminated: u32,
    pub final_state: GroupFinalState,
}

/// A group's state when the report was taken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GroupFinalState {
    pub(crate) desired_capacity: u32,
    pub(crate) instances_live: u32,
    pub agents_registered: usize,
}

/// The final state of the world when the report was taken (every group's
/// instances and desired capacities summed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FinalState {
    pub(crate) desired_capacity: u32,
    pub(crate) instances_live: u32,
    pub(crate) agents_registered: usize,
    pub(crate) tasks: usize,
    pub(crate) apps_below_floor_now: usize,
}

/// The monitor's report (`GET /sim/report`, and the file at exit).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Report {
    pub simulated_ms: u64,
    pub apps: Vec<AppReport>,
    pub apps_ever_below_floor: usize,
    pub apps_with_outage: usize,
    pub(crate) total_below_floor_ms: u64,
    pub(crate) total_outage_ms: u64,
    /// App-milliseconds single-instance apps spent at zero: the gaps of
    /// their kill and relaunch, which their owners accepted.
    pub(crate) single_instance_gap_ms: u64,
    /// App-milliseconds serving fewer than the instance count.
    pub(crate) total_degraded_ms: u64,
    pub relaunches: u64,
    /// Only lineages that moved at least once, most moved first.
    pub(crate) task_moves: Vec<TaskMoves>,
    /// Task-milliseconds tasks spent on agents their app's roles do not
    /// accept (ground truth: placement never does it, so a roll must not
    /// make it other than 0).
    pub misplaced_task_ms: u64,
    /// The whole cluster's instances per AZ (every group's, by AZ name).
    pub az_peak: BTreeMap<String, u32>,
    pub(crate) az_final: BTreeMap<String, u32>,
    pub peak_instances_beyond_desired: u32,
    pub(crate) ms_beyond_desired: u64,
    pub(crate) instances_launched: u32,
    pub(crate) instances_terminated: u32,
    pub(crate) launch_failures: u32,
    pub(crate) api_calls: BTreeMap<String, u64>,
    /// Answers the faults of `/sim/faults` replaced (`aws:Throttling`,
    /// `mesos:503`, …): a fault test can tell they were felt.
    pub injected_faults: BTreeMap<String, u64>,
    /// The highest desired capacity the cluster ever had (the groups'
    /// summed).
    pub(crate) peak_desired_capacity: u32,
    /// The most instances pending or in service at once, every group's
    /// summed at the same moment.
    pub peak_instances: u32,
    /// Instances a termination was asked for again after it had begun,
    /// one entry per repeated call (a roller must send each one once).
    pub repeated_terminations: Vec<String>,
    /// Instances a termination was asked for when already gone.
    pub terminations_of_gone: Vec<String>,
    pub(crate) final_state: FinalState,
    /// Each group's record, in scenario order.
    pub groups: Vec<GroupReport>,
    /// Each DC/OS SDK service's record, in scenario order.
    pub services: Vec<super::ServiceReport>,
}

impl Report {
    /// A few lines for a terminal.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let secs = |ms: u64| ms as f64 / 1000.0;
        let _ = writeln!(
            out,
            "simulated {:.1} s: {} apps, {} below their floor at some point ({:.1} s in all), {} with an outage ({:.1} s in all)",
            secs(self.simulated_ms),
            self.apps.len(),
            self.apps_ever_below_floor,
            secs(self.total_below_floor_ms),
            self.apps_with_outage,
            secs(self.total_outage_ms),
        );
        let _ = writeln!(
            out,
            "degraded (serving fewer than their instances): {} apps, {:.1} app-s in all",
            self.apps.iter().filter(|a| a.degraded_ms > 0).count(),
            secs(self.total_degraded_ms),
        );
        let _ = writeln!(
            out,
            "tasks relaunched: {}; instances launched {}, terminated {}, failed launches {}",
            self.relaunches,
            self.instances_launched,
            self.instances_terminated,
            self.launch_failures
        );
        let per_az = |m: &BTreeMap<String, u32>| {
            m.iter()
                .map(|(az, n)| format!("{az}={n}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = writeln!(
            out,
            "instances: at most {} pending or in service at once; per AZ: peak {}; final {}; \
             beyond desired: peak {} for {:.1} s",
            self.peak_instances,
            per_az(&self.az_peak),
            per_az(&self.az_final),
            self.peak_instances_beyond_desired,
            secs(self.ms_beyond_desired)
        );
        for s in &self.services {
            let _ = writeln!(
                out,
                "service {}: at most {} of {} pods away at once, the longest {:.1} s; {} away now; \
                 {} pod replaces, at most {} of one pod",
                s.name,
                s.max_pods_not_running,
                s.pods,
                secs(s.longest_pod_away_ms),
                s.pods_not_running_now,
                s.replaces,
                s.most_replaces_of_one_pod
            );
        }
        for app in self.apps.iter().filter(|a| a.at_zero_ms > 0) {
            let what = if app.single_instance {
                "gap of a single-instance app"
            } else {
                "outage"
            };
            let _ = writeln!(
                out,
                "{what}: {} at zero for {:.1} s (below floor {:.1} s)",
                app.id,
                secs(app.at_zero_ms),
                secs(app.below_floor_ms)
            );
        }
        out
    }
}

impl World {
    /// The monitor's report at the current simulated time (open intervals
    /// are counted up to now).
    pub(crate) fn report(&self) -> Report {
        let now = self.now;
        let m = &self.monitor;
        let apps: Vec<AppReport> = m
            .apps
            .iter()
            .enumerate()
            .map(|(a, w)| AppReport {
                id: self.app_id(a).to_string(),
                instances: w.instances,
                floor: w.floor,
                serving: w.serving,
                below_floor_ms: w.below_ms + w.below_since.map_or(0, |s| now.since(s)),
                at_zero_ms: w.zero_ms + w.zero_since.map_or(0, |s| now.since(s)),
                degraded_ms: w.degraded_ms + w.degraded_since.map_or(0, |s| now.since(s)),
                relaunches: w.relaunches,
                misplaced_task_ms: w.misplaced_ms
                    + u64::from(w.misplaced) * now.since(w.misplaced_at),
                single_instance: self.marathon.apps[a].no_second_task(),
            })
            .collect();
        let mut task_moves: Vec<TaskMoves> = m
            .lineages
            .values()
            .map(|l| TaskMoves {
                app: self.app_id(l.app).to_string(),
                first_task_id: l.first_task_id.clone(),
                moves: l.moves,
            })
            .collect();
        task_moves.sort_by(|x, y| {
            y.moves
                .cmp(&x.moves)
                .then_with(|| x.first_task_id.cmp(&y.first_task_id))
        });
        let (counts, desired) = self.cluster_az_counts();
        let groups = self.group_reports();
        let outages = || apps.iter().filter(|a| !a.single_instance);
        Report {
            simulated_ms: now.as_millis(),
            apps_ever_below_floor: apps.iter().filter(|a| a.below_floor_ms > 0).count(),
            apps_with_outage: outages().filter(|a| a.at_zero_ms > 0).count(),
            total_below_floor_ms: apps.iter().map(|a| a.below_floor_ms).sum(),
            total_outage_ms: outages().map(|a| a.at_zero_ms).sum(),
            single_instance_gap_ms: apps
                .iter()
                .filter(|a| a.single_instance)
                .map(|a| a.at_zero_ms)
                .sum(),
            total_degraded_ms: apps.iter().map(|a| a.degraded_ms).sum(),
            relaunches: apps.iter().map(|a| u64::from(a.relaunches)).sum(),
            misplaced_task_ms: apps.iter().map(|a| a.misplaced_task_ms).sum(),
            final_state: FinalState {
                desired_capacity: desired,
                instances_live: counts.values().sum(),
                agents_registered: self
                    .mesos
                    .agents
                    .iter()
                    .filter(|a| a.is_registered())
                    .count(),
                tasks: self.marathon.tasks.len(),
                apps_below_floor_now: apps.iter().filter(|a| a.serving < a.floor).count(),
            },
            apps,
            task_moves,
            az_peak: m.cluster.az_peak.clone(),
            az_final: counts,
            peak_instances_beyond_desired: m.cluster.beyond_peak,
            ms_beyond_desired: m.cluster.beyond_ms(now),
            instances_launched: m.launched,
            instances_terminated: m.terminated,
            launch_failures: m.launch_failures,
            api_calls: m.api_calls.clone(),
            injected_faults: m.injected_faults.clone(),
            peak_desired_capacity: m.cluster.peak_desired,
            peak_instances: m.cluster.peak_live,
            repeated_terminations: m.repeated_terminations.clone(),
            terminations_of_gone: m.terminations_of_gone.clone(),
            groups,
            services: self.service_reports(),
        }
    }

    fn group_reports(&self) -> Vec<GroupReport> {
        let now = self.now;
        self.groups
            .iter()
            .enumerate()
            .map(|(gi, g)| {
                let watch = &self.monitor.groups[gi];
                let counts = self.group_az_counts(gi);
                GroupReport {
                    name: g.name.clone(),
                    role: g.role.clone(),
                    az_peak: watch.shape.az_peak.clone(),
                    az_final: g.azs.iter().cloned().zip(counts.iter().copied()).collect(),
                    peak_instances_beyond_desired: watch.shape.beyond_peak,
                    ms_beyond_desired: watch.shape.beyond_ms(now),
                    peak_desired_capacity: watch.shape.peak_desired,
                    peak_instances: watch.shape.peak_live,
                    instances_launched: watch.launched,
                    instances_terminated: watch.terminated,
                    final_state: GroupFinalState {
                        desired_capacity: g.desired,
                        instances_live: counts.iter().sum(),
                        agents_registered: self
                            .mesos
                            .agents
                            .iter()
                            .filter(|a| a.group == gi && a.is_registered())
                            .count(),
                    },
                }
            })
            .collect()
    }
}
