//! The crash harness (`scripts/crash` runs its full form): `roller run`
//! killed with SIGKILL at a checkpoint write (it kills itself there, set by
//! `ROLLER_CRASH_AT`, so each point is reached on purpose) or after a
//! random real delay inside a wait, sometimes killed again on its resume,
//! then run again with the same command, which must finish (exit 0) and
//! leave exactly what an uninterrupted roll leaves, checked against the
//! simulator's ground truth.
//!
//! A trial is written `SCENARIO STRATEGY KILL[,KILL…]`, each kill being
//! `after:K` / `before:K` (the K-th checkpoint write of that run) or
//! `ms:T` (T real milliseconds into that run): the first kill applies to
//! the first run, the next to its resume, and so on.
//!
//! A scenario of one group is rolled with `--target N` (its size); one of
//! several (`demo-cluster`, `cluster`) as `roller sim --write-env` sets
//! it up: every group a `[[group]]` table with its size as its target,
//! every run (the first and each resume) without `--target`, one plan and
//! one checkpoint (named after the first group) for the whole cluster.
//! The ground truth is then checked for every group: each its own N, its
//! own originals, its own N + K, processes, MaxSize and tag; the apps,
//! outages, misplaced tasks, maintenance and the checkpoint are the
//! cluster's.
//!
//! Settings of the full run (`crash_harness`, ignored unless asked for):
//! - `CRASH_SCENARIOS` (default `demo demo-cluster msr-55 bad-image`;
//!   `bad-image` is rolled onto its bad version and must end rolled back,
//!   exit 5; `cluster` runs too, at msr-55's time scale),
//!   `CRASH_STRATEGIES` (default `drain serial`);
//! - `CRASH_WRITES` (`all`, the default: every write, both sides; or a
//!   number: that many writes spread over the roll);
//! - `CRASH_RANDOM` (default 10): kills at random delays per roll, and
//!   `CRASH_DOUBLE` (default 10): a write kill whose resume is killed too;
//! - `CRASH_SEED` (default 1), `CRASH_JOBS` (default 2: trials at once);
//! - `CRASH_ONLY`: one trial, as printed after a failure, and nothing else.

use std::collections::{BTreeSet, VecDeque};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use roller::roll::ports::auto_scaling::{AutoScalingGroup, LaunchSource, LifecycleState};
use roller::sim::world::GroupReport;

use super::cluster::{Cluster, MSR_TIME_SCALE, TIME_SCALE, files_in, text};
use super::s3::{Bucket, files};

/// How one run of a trial is killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kill {
    /// Right after the K-th checkpoint write is durable.
    After(u64),
    /// Right before the K-th checkpoint write.
    Before(u64),
    /// After this many real milliseconds.
    Ms(u64),
}

impl Kill {
    fn parse(text: &str) -> Result<Kill, String> {
        let (kind, n) = text
            .split_once(':')
            .ok_or_else(|| format!("{text}: expected after:K, before:K or ms:T"))?;
        let n: u64 = n.parse().map_err(|_| format!("{text}: not a number"))?;
        match kind {
            "after" if n > 0 => Ok(Kill::After(n)),
            "before" if n > 0 => Ok(Kill::Before(n)),
            "ms" => Ok(Kill::Ms(n)),
            _ => Err(format!(
                "{text}: expected after:K, before:K (K ≥ 1) or ms:T"
            )),
        }
    }

    fn label(self) -> String {
        match self {
            Kill::After(k) => format!("after:{k}"),
            Kill::Before(k) => format!("before:{k}"),
            Kill::Ms(t) => format!("ms:{t}"),
        }
    }
}

/// One crash trial: a fresh cluster, its roll killed as `kills` say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Trial {
    pub(crate) scenario: String,
    pub(crate) strategy: String,
    pub(crate) kills: Vec<Kill>,
}

impl Trial {
    pub(crate) fn parse(text: &str) -> Result<Trial, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let [scenario, strategy, kills] = words[..] else {
            return Err(format!(
                "{text:?}: expected SCENARIO STRATEGY KILL[,KILL…], e.g. demo drain after:3,before:1"
            ));
        };
        let kills = kills
            .split(',')
            .map(Kill::parse)
            .collect::<Result<_, _>>()?;
        Ok(Trial {
            scenario: scenario.to_string(),
            strategy: strategy.to_string(),
            kills,
        })
    }

    pub(crate) fn label(&self) -> String {
        let kills: Vec<String> = self.kills.iter().map(|k| k.label()).collect();
        format!("{} {} {}", self.scenario, self.strategy, kills.join(","))
    }

    /// The command that runs this trial alone.
    pub(crate) fn reproduce(&self) -> String {
        let store = if in_s3() { "CRASH_STORE=s3 " } else { "" };
        format!("{store}CRASH_ONLY='{}' scripts/crash", self.label())
    }
}

/// What a trial came to.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Killed as asked, resumed, and the end is clean; the phases the
    /// first kill caught under way (none known: the checkpoint was in S3,
    /// archived, or not written yet).
    Survived(Vec<String>),
    /// The first run finished before its kill point: the roll has fewer
    /// writes (or is shorter) than the point.
    NotReached,
    /// Anything else: why, with the outputs.
    Failed(String),
}

/// Whether a roll of `scenario` ends rolled back: `bad-image`'s group is
/// pointed at its bad launch template version before the roll, whose
/// agents fail every task placed there, so the roll finds the failure
/// and turns around (exit 5), and every trial kills it somewhere in
/// the roll, the detection or the rollback.
fn rolls_back(scenario: &str) -> bool {
    scenario == "bad-image"
}

/// A fresh cluster of `scenario`, set up for its roll: its environment
/// lists every group when it has several.
fn start(scenario: &str) -> Cluster {
    let cluster = Cluster::start_whole_at(scenario, time_scale(scenario), "");
    if rolls_back(scenario) {
        let sim = cluster.sim.as_ref().unwrap();
        sim.world()
            .with(|w| w.set_launch_template_version("2"))
            .unwrap();
    }
    cluster
}

/// Whether a run that was not killed ended as the roll of `scenario`
/// should: done (0), or rolled back (5) for a roll onto a bad image.
fn ended_well(scenario: &str, status: &ExitStatus) -> bool {
    if rolls_back(scenario) {
        status.code() == Some(5)
    } else {
        status.success()
    }
}

/// The scenarios of 55 private agents roll for some seven simulated
/// hours: run faster.
fn time_scale(scenario: &str) -> f64 {
    if matches!(scenario, "msr-55" | "cluster") {
        MSR_TIME_SCALE
    } else {
        TIME_SCALE
    }
}

/// One group of a trial's cluster as it was before the roll: what its
/// end is judged against.
#[derive(Clone, Debug)]
struct GroupBefore {
    name: String,
    /// Its instances not on their way out: each must be replaced (or,
    /// rolled back, be all that is left).
    originals: Vec<String>,
    /// The agents it must end with: its target.
    n: u32,
    suspended: BTreeSet<String>,
    max_size: u32,
    /// With a capped surge (a strategy `drain+surgeX`): the most
    /// instances it may ever hold, pending or in service.
    ceiling: Option<u32>,
}

/// Every group of `cluster` as it is now. A group rolled alone ends at
/// the size it has (its `--target`); the groups of a cluster rolled
/// whole at their `[[group]]` tables' targets.
fn groups_before(cluster: &Cluster) -> Vec<GroupBefore> {
    let whole = cluster.groups.len() > 1;
    cluster
        .groups
        .iter()
        .map(|(name, target)| {
            let group = cluster.group_named(name);
            let originals: Vec<String> = group
                .instances
                .iter()
                .filter(|i| !i.lifecycle_state.is_leaving())
                .map(|i| i.id.clone())
                .collect();
            GroupBefore {
                name: name.clone(),
                n: if whole {
                    *target
                } else {
                    originals.len() as u32
                },
                originals,
                suspended: group
                    .suspended_processes
                    .iter()
                    .map(|p| p.as_str().to_string())
                    .collect(),
                max_size: group.max_size,
                ceiling: None,
            }
        })
        .collect()
}

/// The arguments of every run of a trial, the first and each resume: one
/// group is rolled to its size (`--target N`); a cluster of several whole,
/// as its environment's `[[group]]` tables say (no `--target`).
fn run_args(groups: &[GroupBefore], strategy: &str) -> Vec<String> {
    let mut args = Vec::new();
    if let [one] = groups {
        args.extend(["--target".to_string(), one.n.to_string()]);
    }
    // `drain+surge4`, `drain+surge10%`: the drain with `--max-surge`.
    match strategy.split_once("+surge") {
        Some((strategy, surge)) => args.extend([
            "--strategy".to_string(),
            strategy.to_string(),
            "--max-surge".to_string(),
            surge.to_string(),
        ]),
        None => args.extend(["--strategy".to_string(), strategy.to_string()]),
    }
    args
}

/// Sets each group's ceiling when `strategy` caps the surge
/// (`drain+surge4`, `drain+surge10%`: a share of its size, rounded up).
fn cap_groups(groups: &mut [GroupBefore], strategy: &str) {
    let Some((_, surge)) = strategy.split_once("+surge") else {
        return;
    };
    for g in groups {
        let size = g.originals.len() as u32;
        let cap = match surge.strip_suffix('%') {
            Some(p) => (size * p.parse::<u32>().expect("a share"))
                .div_ceil(100)
                .max(1),
            None => surge.parse().expect("a count"),
        };
        g.ceiling = Some(size.max(g.n) + cap);
    }
}

/// Runs `roller run …` with `kill` applied; the exit status and output.
fn run_killed(cluster: &Cluster, args: &[String], kill: Option<Kill>) -> (ExitStatus, Output) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut command = cluster.run_command(&args);
    command.env_remove(roller::crash_point::VAR);
    match kill {
        None => {
            let output = command.output().unwrap();
            (output.status, output)
        }
        Some(point @ (Kill::After(_) | Kill::Before(_))) => {
            let output = command
                .env(roller::crash_point::VAR, point.label())
                .output()
                .unwrap();
            (output.status, output)
        }
        Some(Kill::Ms(ms)) => {
            let mut child = command
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_millis(ms);
            while Instant::now() < deadline {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            if child.try_wait().unwrap().is_none() {
                let _ = child.kill(); // SIGKILL on Unix
            }
            let output = child.wait_with_output().unwrap();
            (output.status, output)
        }
    }
}

fn killed(status: &ExitStatus) -> bool {
    status.signal() == Some(libc::SIGKILL)
}

/// Runs one trial on a fresh cluster; its real duration comes back too.
pub(crate) fn run_trial(trial: &Trial) -> (Verdict, Duration) {
    let started = Instant::now();
    let verdict = trial_verdict(trial);
    (verdict, started.elapsed())
}

/// `CRASH_STORE=s3`: the checkpoint in a fresh moto S3 bucket per trial
/// (`scripts/crash` then runs under `scripts/with-moto`).
fn in_s3() -> bool {
    std::env::var("CRASH_STORE").is_ok_and(|v| v == "s3")
}

fn trial_verdict(trial: &Trial) -> Verdict {
    let cluster = start(&trial.scenario);
    let bucket = in_s3().then(|| Bucket::create(&cluster));
    if let Some(bucket) = &bucket {
        bucket.use_for(&cluster);
    }
    let mut groups = groups_before(&cluster);
    cap_groups(&mut groups, &trial.strategy);
    let args = run_args(&groups, &trial.strategy);
    let mut log = String::new();
    let mut finished = false;
    let mut under_way = Vec::new();
    for (i, &kill) in trial.kills.iter().enumerate() {
        let (status, output) = run_killed(&cluster, &args, Some(kill));
        log.push_str(&format!(
            "--- run {} (kill {}):\n{}\n",
            i + 1,
            kill.label(),
            tail(&text(&output))
        ));
        if killed(&status) {
            if i == 0 && bucket.is_none() {
                under_way = phases_under_way(&cluster);
                log.push_str(&format!("--- killed in: {}\n", under_way.join(", ")));
            }
            // Killed after its last act, the archive: the roll is complete
            // (`roller status` finds no checkpoint), and the same command
            // would start a new roll of every instance (`--select all`),
            // not resume this one. An operator stops here too.
            if archived_and_gone(&cluster, bucket.as_ref()) {
                finished = true;
                break;
            }
            continue;
        }
        if ended_well(&trial.scenario, &status) {
            if i == 0 {
                return Verdict::NotReached;
            }
            finished = true;
            break;
        }
        return Verdict::Failed(format!(
            "run {} (kill {}) exited {status} instead of being killed or finishing\n{log}",
            i + 1,
            kill.label()
        ));
    }
    if !finished {
        let (status, output) = run_killed(&cluster, &args, None);
        log.push_str(&format!("--- rerun:\n{}\n", tail(&text(&output))));
        if !ended_well(&trial.scenario, &status) {
            return Verdict::Failed(format!("the rerun exited {status}\n{log}"));
        }
    }
    let end = if rolls_back(&trial.scenario) {
        End::RolledBack
    } else {
        End::Replaced
    };
    let problems = ground_truth(&cluster, &groups, end, bucket.as_ref());
    if problems.is_empty() {
        Verdict::Survived(under_way)
    } else {
        Verdict::Failed(format!("{}\n{log}", problems.join("\n")))
    }
}

/// The phases of the live checkpoint's plan that have begun and not
/// ended: where a kill caught the roll (`drain`, or at a cluster's group
/// boundary `<asg1>:drain` and `<asg2>:scale-up`). Read from the file's
/// JSON, not through roller's types: what was written is what counts.
fn phases_under_way(cluster: &Cluster) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(cluster.checkpoint()) else {
        return Vec::new();
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
        return vec!["(an unreadable checkpoint)".to_string()];
    };
    let phases = json["plan"]["phases"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    phases
        .iter()
        .filter(|phase| {
            let statuses: Vec<&str> = phase["steps"]
                .as_array()
                .map(|steps| steps.iter().filter_map(|s| s["status"].as_str()).collect())
                .unwrap_or_default();
            !statuses.iter().all(|s| *s == "PENDING") && !statuses.iter().all(|s| *s == "COMPLETE")
        })
        .filter_map(|phase| phase["id"].as_str().map(str::to_string))
        .collect()
}

/// Whether the roll's checkpoint is archived and no live one is left.
fn archived_and_gone(cluster: &Cluster, bucket: Option<&Bucket>) -> bool {
    match bucket {
        Some(bucket) => {
            let keys = bucket.keys(cluster);
            !keys.is_empty() && keys.iter().all(|k| k.ends_with(".complete.json"))
        }
        None => {
            !cluster.checkpoint().exists()
                && files_in(&cluster.dir.path().join("checkpoints"))
                    .iter()
                    .any(|name| name.ends_with(".complete.json"))
        }
    }
}

/// The last lines of a run's output (enough to see how it ended).
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let from = lines.len().saturating_sub(25);
    lines[from..].join("\n")
}

/// How a roll ends when nothing interrupts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// Every original instance replaced.
    Replaced,
    /// Rolled back: the originals, and only they, in the group, which
    /// launches from the version they run again.
    RolledBack,
}

/// What an uninterrupted roll leaves, as the simulator knows it: every
/// group's end (each difference as one sentence opening with the group's
/// name), then the cluster's.
fn ground_truth(
    cluster: &Cluster,
    groups: &[GroupBefore],
    end: End,
    bucket: Option<&Bucket>,
) -> Vec<String> {
    let now: Vec<AutoScalingGroup> = groups
        .iter()
        .map(|g| cluster.group_named(&g.name))
        .collect();
    let report = cluster.report();
    let mut problems = Vec::new();
    for (before, now) in groups.iter().zip(&now) {
        let found = match report.groups.iter().find(|r| r.name == before.name) {
            Some(record) => group_truth(before, now, record, end),
            None => vec!["the simulator's report has no record of the group".to_string()],
        };
        problems.extend(found.into_iter().map(|p| format!("{}: {p}", before.name)));
    }
    if !report.repeated_terminations.is_empty() {
        problems.push(format!(
            "terminations sent twice: {:?}",
            report.repeated_terminations
        ));
    }
    if !report.terminations_of_gone.is_empty() {
        problems.push(format!(
            "terminations sent for instances already gone: {:?}",
            report.terminations_of_gone
        ));
    }
    if report.apps_with_outage > 0 {
        problems.push(format!(
            "{} apps had an outage: {}",
            report.apps_with_outage,
            report.summary()
        ));
    }
    if report.misplaced_task_ms > 0 {
        problems.push(format!(
            "tasks ran {} ms on agents of a role their app does not accept",
            report.misplaced_task_ms
        ));
    }
    // DC/OS SDK services: every pod back, one of a service away at a
    // time, each replaced once (a rollback may move a pod back).
    for service in &report.services {
        if service.pods_not_running_now > 0 {
            problems.push(format!(
                "service {}: {} of {} pods not running at the end",
                service.name, service.pods_not_running_now, service.pods
            ));
        }
        if end == End::RolledBack {
            continue;
        }
        if service.max_pods_not_running > 1 {
            problems.push(format!(
                "service {}: {} pods away at once",
                service.name, service.max_pods_not_running
            ));
        }
        if service.most_replaces_of_one_pod > 1 {
            problems.push(format!(
                "service {}: a pod replaced {} times",
                service.name, service.most_replaces_of_one_pod
            ));
        }
    }
    for app in &report.apps {
        let before = cluster.instances.get(&app.id).copied();
        if before != Some(app.instances) {
            problems.push(format!(
                "app {} has {} instances, had {before:?} (a surge left?)",
                app.id, app.instances
            ));
        }
    }
    let (windows, down) = cluster.sim.as_ref().unwrap().world().with(|w| {
        (
            w.maintenance_schedule().len(),
            w.maintenance_status().down.len(),
        )
    });
    if windows + down > 0 {
        problems.push(format!(
            "maintenance left: {windows} windows, {down} machines down"
        ));
    }
    problems.extend(checkpoint_truth(cluster, bucket));
    problems
}

/// What an uninterrupted roll leaves of one group: `now` as Auto Scaling
/// describes it, `record` the simulator's record of it.
fn group_truth(
    before: &GroupBefore,
    now: &AutoScalingGroup,
    record: &GroupReport,
    end: End,
) -> Vec<String> {
    let mut problems = Vec::new();
    let n = before.n;
    let in_service: Vec<&str> = now
        .instances
        .iter()
        .filter(|i| i.lifecycle_state == LifecycleState::InService)
        .map(|i| i.id.as_str())
        .collect();
    if in_service.len() as u32 != n {
        problems.push(format!(
            "{} instances InService, not {n}: {in_service:?}",
            in_service.len()
        ));
    }
    let left: Vec<&String> = before
        .originals
        .iter()
        .filter(|id| now.instances.iter().any(|i| &i.id == *id))
        .collect();
    match end {
        End::Replaced if !left.is_empty() => {
            problems.push(format!("original instances still in the group: {left:?}"));
        }
        End::RolledBack => {
            let mut kept: Vec<&str> = in_service.clone();
            kept.sort_unstable();
            let mut wanted: Vec<&str> = before.originals.iter().map(String::as_str).collect();
            wanted.sort_unstable();
            if kept != wanted {
                problems.push(format!(
                    "rolled back, but InService are {kept:?}, not the originals {wanted:?}"
                ));
            }
            let version = match &now.launch_source {
                Some(LaunchSource::Template { version, .. }) => version.clone(),
                _ => None,
            };
            if version.as_deref() != Some("1") {
                problems.push(format!(
                    "rolled back, but the group launches from {:?}, not version 1",
                    now.launch_source
                ));
            }
        }
        End::Replaced => {}
    }
    if now.desired_capacity != n {
        problems.push(format!(
            "desired capacity {}, not {n}",
            now.desired_capacity
        ));
    }
    if now.max_size != before.max_size {
        problems.push(format!(
            "MaxSize {}, was {} before the roll",
            now.max_size, before.max_size
        ));
    }
    let mut suspended: BTreeSet<&str> =
        now.suspended_processes.iter().map(|p| p.as_str()).collect();
    // A roll that leaves the group's AZs uneven keeps AZRebalance
    // suspended (and says so), so as not to move agents meanwhile.
    let uneven = {
        let counts: Vec<u32> = record.az_final.values().copied().collect();
        counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0) > 1
    };
    let expected: BTreeSet<&str> = before.suspended.iter().map(String::as_str).collect();
    if uneven && !expected.contains("AZRebalance") {
        suspended.remove("AZRebalance");
    }
    if suspended != expected {
        problems.push(format!(
            "suspended processes {:?}, were {expected:?} before the roll",
            now.suspended_processes
        ));
    }
    if let Some(tag) = now.tag("roller:run-id") {
        problems.push(format!("the run-id tag is still on the group: {tag}"));
    }
    if record.final_state.agents_registered as u32 != n {
        problems.push(format!(
            "{} agents registered, not {n}",
            record.final_state.agents_registered
        ));
    }
    if let Some(ceiling) = before.ceiling
        && record.peak_instances > ceiling
    {
        problems.push(format!(
            "{} instances pending or in service at once, above the surge's ceiling {ceiling}",
            record.peak_instances
        ));
    }
    let k = before.originals.len() as u32;
    if record.peak_desired_capacity > n + k {
        problems.push(format!(
            "desired capacity reached {}, above N + K = {}",
            record.peak_desired_capacity,
            n + k
        ));
    }
    problems
}

/// The roll's checkpoint archived, once, and no live one left: in the
/// bucket (and nothing written locally), or in the checkpoint folder.
fn checkpoint_truth(cluster: &Cluster, bucket: Option<&Bucket>) -> Vec<String> {
    let mut problems = Vec::new();
    // Archived under the live checkpoint's name (a cluster's: its first
    // group's), whichever group's step ran last or a resume came after.
    let live = cluster.checkpoint();
    let stem = format!(
        "{}.",
        live.file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
    );
    let misnamed = |name: &str| {
        let file = name.rsplit('/').next().unwrap_or(name);
        (!file.starts_with(&stem))
            .then(|| format!("the checkpoint was archived as {name}, not under the name {stem}…"))
    };
    if let Some(bucket) = bucket {
        let keys = bucket.keys(cluster);
        let archived: Vec<&String> = keys
            .iter()
            .filter(|k| k.ends_with(".complete.json"))
            .collect();
        if archived.len() != 1 || keys.len() != 1 {
            problems.push(format!(
                "the bucket holds {keys:?}, not one archived checkpoint"
            ));
        }
        problems.extend(archived.iter().filter_map(|k| misnamed(k)));
        if files(cluster.dir.path()) != 0 {
            problems.push("a checkpoint was written locally".to_string());
        }
        return problems;
    }
    if cluster.checkpoint().exists() {
        problems.push(format!(
            "the checkpoint {} was not archived",
            cluster.checkpoint().display()
        ));
    }
    let archived: Vec<String> = files_in(&cluster.dir.path().join("checkpoints"))
        .into_iter()
        .filter(|name| name.ends_with(".complete.json"))
        .collect();
    if archived.len() != 1 {
        problems.push(format!("{} archived checkpoints, not 1", archived.len()));
    }
    problems.extend(archived.iter().filter_map(|name| misnamed(name)));
    problems
}

/// A small deterministic generator (xorshift64*): the same seed, the same
/// trials.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}={v}: not a number"))
        })
        .unwrap_or(default)
}

/// What a batch of trials came to.
#[derive(Default)]
struct Tally {
    /// The trials killed as asked (the others never reached their point).
    total: usize,
    failures: Vec<(Trial, String)>,
    /// Each trial that survived, with the phases its first kill caught
    /// under way.
    survivors: Vec<(Trial, Vec<String>)>,
}

/// Runs trials `jobs` at a time; prints one line per trial as it ends.
fn run_all(trials: Vec<Trial>, jobs: usize) -> Tally {
    let queue = Arc::new(Mutex::new(VecDeque::from(trials)));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let workers: Vec<_> = (0..jobs.max(1))
        .map(|_| {
            let queue = queue.clone();
            let tally = tally.clone();
            std::thread::spawn(move || {
                loop {
                    let Some(trial) = queue.lock().unwrap().pop_front() else {
                        break;
                    };
                    let (verdict, took) = run_trial(&trial);
                    let took = format!("{:.1} s", took.as_secs_f64());
                    let word = match &verdict {
                        Verdict::Survived(under_way) if !under_way.is_empty() => {
                            format!("survived ({took}; killed in {})", under_way.join(", "))
                        }
                        Verdict::Survived(_) => format!("survived ({took})"),
                        Verdict::NotReached => {
                            format!("not reached (the roll ended first) ({took})")
                        }
                        Verdict::Failed(_) => format!("FAILED ({took})"),
                    };
                    println!("{}: {word}", trial.label());
                    let mut tally = tally.lock().unwrap();
                    match verdict {
                        Verdict::Survived(under_way) => {
                            tally.total += 1;
                            tally.survivors.push((trial, under_way));
                        }
                        Verdict::NotReached => {}
                        Verdict::Failed(why) => {
                            tally.total += 1;
                            tally.failures.push((trial, why));
                        }
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    std::mem::take(&mut *tally.lock().unwrap())
}

/// Counts the checkpoint writes of an uninterrupted roll, by probes: a
/// run killed after write K either dies there or finishes first.
fn count_writes(scenario: &str, strategy: &str) -> (u64, Duration) {
    // Double until a probe is not reached (that probe, an uninterrupted
    // roll, gives the roll's real time), then bisect.
    let (mut low, mut high) = (0u64, 64u64);
    let roll_time;
    loop {
        let trial = Trial {
            scenario: scenario.to_string(),
            strategy: strategy.to_string(),
            kills: vec![Kill::After(high)],
        };
        let (reached, took) = probe(&trial);
        if !reached {
            roll_time = took;
            break;
        }
        low = high;
        high *= 2;
    }
    while high - low > 1 {
        let mid = (low + high) / 2;
        let trial = Trial {
            scenario: scenario.to_string(),
            strategy: strategy.to_string(),
            kills: vec![Kill::After(mid)],
        };
        if probe(&trial).0 {
            low = mid;
        } else {
            high = mid;
        }
    }
    (low, roll_time)
}

/// Whether the first run of `trial` reaches its kill point, and how long
/// that run took (real time).
fn probe(trial: &Trial) -> (bool, Duration) {
    let cluster = start(&trial.scenario);
    if in_s3() {
        Bucket::create(&cluster).use_for(&cluster);
    }
    let args = run_args(&groups_before(&cluster), &trial.strategy);
    let started = Instant::now();
    let (status, output) = run_killed(&cluster, &args, trial.kills.first().copied());
    let took = started.elapsed();
    assert!(
        killed(&status) || ended_well(&trial.scenario, &status),
        "an uninterrupted roll of {} ({}) failed:\n{}",
        trial.scenario,
        trial.strategy,
        text(&output)
    );
    (killed(&status), took)
}

/// How many trials of each kind one roll gets.
struct Sampling {
    /// `None`: every write; a number: that many writes spread over the roll.
    spread: Option<u64>,
    /// Kills at random real delays.
    random: u64,
    /// Write kills whose resume is killed too.
    double: u64,
}

/// The trials of one roll of `writes` checkpoint writes and `roll_time`
/// (real): each write chosen killed on both sides, then the random and
/// the double kills.
fn trials_for(
    scenario: &str,
    strategy: &str,
    (writes, roll_time): (u64, Duration),
    sampling: &Sampling,
    rng: &mut Rng,
) -> Vec<Trial> {
    let trial = |kills: Vec<Kill>| Trial {
        scenario: scenario.to_string(),
        strategy: strategy.to_string(),
        kills,
    };
    let points: Vec<u64> = match sampling.spread {
        None => (1..=writes).collect(),
        Some(count) => {
            let count = count.min(writes).max(1);
            (0..count).map(|i| 1 + i * writes / count).collect()
        }
    };
    let mut trials = Vec::new();
    for &k in &points {
        trials.push(trial(vec![Kill::After(k)]));
        trials.push(trial(vec![Kill::Before(k)]));
    }
    let ms = roll_time.as_millis() as u64;
    for _ in 0..sampling.random {
        trials.push(trial(vec![Kill::Ms(1 + rng.below(ms))]));
    }
    for _ in 0..sampling.double {
        let first = 1 + rng.below(writes);
        let second = 1 + rng.below(writes.saturating_sub(first).max(8));
        let kinds = [Kill::After(first), Kill::Before(first)];
        trials.push(trial(vec![
            kinds[rng.below(2) as usize],
            if rng.below(2) == 0 {
                Kill::After(second)
            } else {
                Kill::Ms(1 + rng.below(ms))
            },
        ]));
    }
    trials
}

fn report(tally: &Tally) -> String {
    let mut out = format!(
        "crash harness: {}/{} survived\n",
        tally.total - tally.failures.len(),
        tally.total
    );
    for (trial, why) in &tally.failures {
        out.push_str(&format!(
            "\nFAILED {}\n  reproduce: {}\n{why}\n",
            trial.label(),
            trial.reproduce()
        ));
    }
    out
}

/// The full harness (`scripts/crash`).
#[test]
#[ignore = "long: run by scripts/crash"]
fn crash_harness() {
    let jobs = env_number("CRASH_JOBS", 2) as usize;
    if let Ok(only) = std::env::var("CRASH_ONLY") {
        let trial = Trial::parse(&only).unwrap_or_else(|e| panic!("CRASH_ONLY: {e}"));
        let tally = run_all(vec![trial], 1);
        let summary = report(&tally);
        println!("{summary}");
        assert!(tally.failures.is_empty() && tally.total == 1, "{summary}");
        return;
    }
    let spread = match std::env::var("CRASH_WRITES").as_deref() {
        Err(_) | Ok("all") => None,
        Ok(n) => Some(n.parse().expect("CRASH_WRITES: all or a number")),
    };
    let sampling = Sampling {
        spread,
        random: env_number("CRASH_RANDOM", 10),
        double: env_number("CRASH_DOUBLE", 10),
    };
    let mut rng = Rng(env_number("CRASH_SEED", 1).max(1));
    let mut trials = Vec::new();
    for scenario in env_list("CRASH_SCENARIOS", "demo demo-cluster msr-55 bad-image") {
        for strategy in env_list("CRASH_STRATEGIES", "drain serial") {
            let (writes, roll_time) = count_writes(&scenario, &strategy);
            println!(
                "{scenario} {strategy}: {writes} checkpoint writes, {:.1} s a roll",
                roll_time.as_secs_f64()
            );
            trials.extend(trials_for(
                &scenario,
                &strategy,
                (writes, roll_time),
                &sampling,
                &mut rng,
            ));
        }
    }
    println!("{} trials, {jobs} at a time", trials.len());
    let tally = run_all(trials, jobs);
    let summary = report(&tally);
    println!("{summary}");
    assert!(
        tally.failures.is_empty(),
        "{} failed: see above",
        tally.failures.len()
    );
}

/// The sample CI runs: 27 fixed crash points of the `demo` drain roll
/// (after and before writes across its ~56, two resumes killed again, a
/// kill inside a wait).
#[test]
fn a_fixed_sample_of_crash_points_of_demo_all_resume_to_a_clean_end() {
    let points = [1u64, 2, 3, 5, 8, 12, 17, 23, 30, 38, 46, 52];
    let mut trials: Vec<Trial> = Vec::new();
    for k in points {
        for kill in [Kill::After(k), Kill::Before(k)] {
            trials.push(Trial {
                scenario: "demo".into(),
                strategy: "drain".into(),
                kills: vec![kill],
            });
        }
    }
    for kills in [
        vec![Kill::After(5), Kill::After(3)],
        vec![Kill::Before(12), Kill::Before(2)],
        vec![Kill::Ms(400)],
    ] {
        trials.push(Trial {
            scenario: "demo".into(),
            strategy: "drain".into(),
            kills,
        });
    }
    let count = trials.len();
    let tally = run_all(trials, 2);
    let summary = report(&tally);
    assert!(tally.failures.is_empty(), "{summary}");
    // The points lie inside the roll (its write count varies by a few
    // with timing): a point the roll never reaches tests nothing.
    assert!(
        tally.total >= 22,
        "only {} of {count} reached\n{summary}",
        tally.total
    );
}

/// The capped surge's sample CI runs: `demo` at `--max-surge 1` (one
/// new agent at a time, each batch taking in what its free resources
/// hold; old agents terminated without a decrement, the last with one;
/// ~80 writes since a step's completion rides on its tick's write),
/// killed at points inside batches and across their
/// boundaries, one resume killed again; every trial must end clean and
/// never above 12 + 1 instances pending or in service (the simulator's
/// peak).
#[test]
fn a_fixed_sample_of_crash_points_of_a_capped_demo_roll_all_resume_never_above_the_cap() {
    let mut trials: Vec<Trial> = Vec::new();
    for k in [15u64, 30, 45, 60] {
        for kill in [Kill::After(k), Kill::Before(k)] {
            trials.push(Trial {
                scenario: "demo".into(),
                strategy: "drain+surge1".into(),
                kills: vec![kill],
            });
        }
    }
    trials.push(Trial {
        scenario: "demo".into(),
        strategy: "drain+surge1".into(),
        kills: vec![Kill::After(60), Kill::After(30)],
    });
    let tally = run_all(trials, 2);
    let summary = report(&tally);
    assert!(tally.failures.is_empty(), "{summary}");
    assert!(tally.total >= 8, "only {} reached\n{summary}", tally.total);
}

/// The rollback's sample CI runs: `bad-image` rolled onto its bad version
/// (every task placed on a new agent fails its checks), killed at 48
/// points through the detection and the rollback, each resumed to the
/// rolled-back end (exit 5, the originals only, version 1 again). The
/// drain's roll writes its checkpoint ~51 times and finds the failure at
/// about the 17th write (measured in-process; the serial's ~47 and 16):
/// the points start a little before it and run to the archive, on both
/// sides of each write, with two resumes killed again.
#[test]
fn a_fixed_sample_of_crash_points_through_a_bad_images_detection_and_rollback_all_end_rolled_back()
{
    let trial = |strategy: &str, kills: Vec<Kill>| Trial {
        scenario: "bad-image".into(),
        strategy: strategy.into(),
        kills,
    };
    let mut trials: Vec<Trial> = Vec::new();
    let drain = [
        12u64, 14, 15, 16, 17, 18, 19, 20, 22, 24, 26, 28, 30, 33, 36, 39, 42, 45, 48, 50,
    ];
    for (strategy, points) in [("drain", &drain[..]), ("serial", &[15u64, 17, 25][..])] {
        for &k in points {
            for kill in [Kill::After(k), Kill::Before(k)] {
                trials.push(trial(strategy, vec![kill]));
            }
        }
    }
    trials.push(trial("drain", vec![Kill::After(18), Kill::After(4)]));
    trials.push(trial("serial", vec![Kill::Before(20), Kill::Before(6)]));
    let count = trials.len();
    let tally = run_all(trials, 2);
    let summary = report(&tally);
    assert!(tally.failures.is_empty(), "{summary}");
    assert!(
        tally.total >= 40,
        "only {} of {count} reached\n{summary}",
        tally.total
    );
}

/// The cluster's sample CI runs: `demo-cluster` (12 private agents, 3
/// public ones) rolled whole by one plan, drain, with no `--target`,
/// killed at 8 points of its ~110 writes, each resumed to every group's
/// clean end. Both groups scale up together (new agents booting, old ones
/// put under a window) before the first drains, from about write 10 to
/// 20: three points fall in that stretch, one a double kill, and one of
/// them must be seen to (its kill found both scale-ups under way; two do
/// in every run so far). The others: the prepare, the first group's drain
/// and terminations, the second group's drain, the finish.
#[test]
fn a_fixed_sample_of_crash_points_of_a_whole_cluster_roll_all_resume_to_every_groups_clean_end() {
    const BOUNDARY: [&str; 2] = [
        "mesos-agents-demo:scale-up",
        "mesos-agents-demo-public:scale-up",
    ];
    let trial = |kills: Vec<Kill>| Trial {
        scenario: "demo-cluster".into(),
        strategy: "drain".into(),
        kills,
    };
    let trials = vec![
        trial(vec![Kill::After(8)]),
        trial(vec![Kill::Before(12)]),
        trial(vec![Kill::After(16)]),
        trial(vec![Kill::After(14), Kill::After(6)]),
        trial(vec![Kill::After(30)]),
        trial(vec![Kill::After(50)]),
        trial(vec![Kill::Before(80)]),
        trial(vec![Kill::After(100)]),
    ];
    let count = trials.len();
    let tally = run_all(trials, 2);
    let summary = report(&tally);
    assert!(tally.failures.is_empty(), "{summary}");
    assert!(
        tally.total >= count - 1,
        "only {} of {count} reached\n{summary}",
        tally.total
    );
    let at_boundary = tally.survivors.iter().any(|(_, under_way)| {
        BOUNDARY
            .iter()
            .all(|phase| under_way.iter().any(|p| p == phase))
    });
    let seen: Vec<String> = tally
        .survivors
        .iter()
        .map(|(trial, under_way)| format!("{}: {}", trial.label(), under_way.join(", ")))
        .collect();
    assert!(
        at_boundary,
        "no kill caught {BOUNDARY:?} under way together:\n{}",
        seen.join("\n")
    );
}

/// The ground truth is every group's: on `demo-cluster` whose first group
/// alone was rolled (an environment naming that group only, as a harness
/// checking the first group twice, or the first group only, would never
/// notice), the check finds the second group's agents never replaced, and
/// says so of that group and nothing else.
#[test]
fn a_cluster_whose_second_group_was_left_unrolled_fails_the_ground_truth_naming_that_group() {
    let cluster = Cluster::start_at("demo-cluster", TIME_SCALE, "");
    let groups = groups_before(&cluster);
    assert_eq!(groups.len(), 2);
    let first = &groups[0];
    let done = cluster.run(&["--target", &first.n.to_string(), "--strategy", "drain"]);
    assert!(done.status.success(), "{}", text(&done));
    let problems = ground_truth(&cluster, &groups, End::Replaced, None);
    let second = &groups[1];
    let [problem] = &problems[..] else {
        panic!("one problem expected, of {}: {problems:#?}", second.name);
    };
    assert!(
        problem.starts_with(&format!(
            "{}: original instances still in the group",
            second.name
        )),
        "{problem}"
    );
    assert!(
        second.originals.iter().all(|id| problem.contains(id)),
        "{problem}"
    );
}

#[test]
fn trials_parse_back_from_their_labels_and_bad_ones_are_refused() {
    let trial = Trial::parse("demo drain after:3,before:1,ms:250").unwrap();
    assert_eq!(
        trial.kills,
        vec![Kill::After(3), Kill::Before(1), Kill::Ms(250)]
    );
    assert_eq!(Trial::parse(&trial.label()).unwrap(), trial);
    for bad in [
        "demo drain",
        "demo drain after:0",
        "demo drain later:3",
        "x y z w",
    ] {
        assert!(Trial::parse(bad).is_err(), "{bad}");
    }
}
