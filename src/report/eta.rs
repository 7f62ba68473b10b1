//! The live view's ETA: what is left of the plan, step by step, at the
//! pace this roll has shown so far, with a default for what it has not
//! shown yet. A linear count of agents replaced says nothing of a drain,
//! which replaces no agent for minutes (scale-up, the sample and its
//! bake, the bulk wave) and then many at once.
//!
//! The model, phase after phase (they run one after another, but for the
//! drain's terminations, which overlap its waves):
//! - quick steps (tag, suspend, desired, windows, finish): their mean, or
//!   `QUICK`;
//! - the new agents' registration: `REGISTER` less what it has waited;
//! - a serial replacement: the mean of those done, or `REPLACE`;
//! - the drain: the sample at its own pace once seen, or `WAVE`; each
//!   later wave at the mean later wave's pace, or the longer of the
//!   sample's and `WAVE` (it moves the slowest apps too); a drain
//!   runs `DRAIN_WAVES` waves as a rule (the sample, then the rest: an app
//!   that cannot spare all its old tasks at once is surged by all);
//!   the bake's time left before wave-2 (`BAKE` when it has not begun);
//! - terminations: as agents empty mostly once the bulk wave is done, one
//!   termination (its mean from sent to done, or `TERMINATE`) after the
//!   drain (an emptied agent's place under `max_unavailable` is free once
//!   its instance is out of service: the limit spaces the sends a poll
//!   apart, not EC2's shutdowns, so they overlap and their completions
//!   give no rate: a few agents empty early, the many at the drain's
//!   end); with a capped surge (a termination keeps its place until it
//!   is over), at the rate seen (two or more done; no sooner than one
//!   termination after the drain's last wave), else in batches of
//!   `max_unavailable` per AZ of `TERMINATE` each;
//! - a capped surge's batches (`batch-N`), one after another: each left
//!   at the pace seen between batches opening (two or more), else
//!   `BATCH` (a launch, a move cycle, the terminations); the last one's
//!   moves and terminations after it. Only the batches that will still
//!   open old agents count: those not open yet over the last batch's
//!   size (batches grow as the new agents take more in);
//! - the rollback's moves and terminations: `ROLLBACK_STEP` each.
//!
//! The checkpoint says what is left; `Pace` keeps what this process saw
//! of how long things took (cluster time), so a resumed run starts with
//! defaults and learns.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::plan::{Status, Step};
use crate::roll::record::checkpoint::{Checkpoint, GroupRoll};
use crate::roll::record::kinds::{GroupStep, StepKind, WaitKind};

/// A step that acts and is done within a tick or two.
pub(crate) const QUICK: Duration = Duration::from_secs(5);
/// New instances booting and registering as Mesos agents.
pub(crate) const REGISTER: Duration = Duration::from_secs(4 * 60);
/// One serial replacement (moves, terminate, deregister, healthy).
pub(crate) const REPLACE: Duration = Duration::from_secs(3 * 60);
/// One drain wave (kills and surges, replacements healthy).
pub(crate) const WAVE: Duration = Duration::from_secs(2 * 60);
/// Waves a drain runs as a rule: the sample, then the rest (an app that
/// can spare only some of its old tasks is surged by all of them, not
/// left a wave more; a third comes only for apps still replacing a task).
pub(crate) const DRAIN_WAVES: usize = 2;
/// The bake, when it has not begun (its shortest).
pub(crate) const BAKE: Duration = Duration::from_secs(60);
/// One termination: the machine put down (Mesos drops its agent at
/// once) and the instance terminated, seen at the next poll or two.
pub(crate) const TERMINATE: Duration = Duration::from_secs(20);
/// One batch of a capped surge: its new instances launched and
/// registered, its old agents' tasks moved, those agents terminated.
pub(crate) const BATCH: Duration = Duration::from_secs(4 * 60 + 2 * 60 + 20);
/// A rollback's moves, or its terminations.
pub(crate) const ROLLBACK_STEP: Duration = Duration::from_secs(3 * 60);

/// How long a class of step took, as seen.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Class {
    Quick,
    Replace,
    /// The drain's first wave, its sample: one task each of a tenth of the
    /// apps, the quickest to move; not the pace of the waves after it.
    Sample,
    Wave,
    Terminate,
}

/// What this process saw of the roll's pace.
#[derive(Debug, Default)]
pub(crate) struct Pace {
    /// When each step (`phase/step`) was first seen begun.
    begun: HashMap<String, SystemTime>,
    /// When each termination was first seen sent (its wait turned to
    /// Mesos dropping the agent).
    sent: HashMap<String, SystemTime>,
    /// Steps seen complete.
    done: BTreeSet<String>,
    /// Durations seen, by class: (count, total).
    took: HashMap<Class, (u32, Duration)>,
    /// When terminations were seen complete.
    terminated: Vec<SystemTime>,
    /// When a capped surge's batches were seen open.
    opened: Vec<SystemTime>,
}

impl Pace {
    /// Takes in what `checkpoint` shows at `now`.
    pub(crate) fn observe(&mut self, checkpoint: &Checkpoint, now: SystemTime) {
        for (index, step) in checkpoint.plan.steps() {
            let name = format!("{}/{}", checkpoint.plan.phases[index.phase].id, step.id);
            let status = step.status();
            if status == Status::Pending || self.done.contains(&name) {
                continue;
            }
            let begun = *self.begun.entry(name.clone()).or_insert(now);
            let kind = kind_of(step);
            let bake_until = bake_until(checkpoint, step);
            let waiting_for_mesos = checkpoint
                .progress
                .get(&step.id)
                .and_then(|p| p.wait.as_ref())
                .is_some_and(|w| w.kind == WaitKind::Deregistered);
            if matches!(kind, Some(StepKind::Terminate { .. })) && waiting_for_mesos {
                self.sent.entry(name.clone()).or_insert(now);
            }
            if !step.is_complete() {
                continue;
            }
            self.done.insert(name.clone());
            // Seen complete at its first sight: how long it took is unknown.
            if begun == now {
                continue;
            }
            let (class, from) = match kind {
                Some(StepKind::Replace { .. }) => (Class::Replace, begun),
                // A later wave waits out the bake first: not its pace.
                Some(StepKind::DrainWave { wave }) if wave > 1 => {
                    (Class::Wave, bake_until.map_or(begun, |b| b.max(begun)))
                }
                Some(StepKind::DrainWave { .. }) => (Class::Sample, begun),
                // A termination waits for the drain from the start: its
                // own time begins once it is sent.
                Some(StepKind::Terminate { .. }) => {
                    self.terminated.push(now);
                    match self.sent.get(&name) {
                        Some(&sent) => (Class::Terminate, sent),
                        None => continue,
                    }
                }
                Some(StepKind::OpenBatch { .. }) => {
                    self.opened.push(now);
                    continue;
                }
                Some(StepKind::WaitRegistered) | Some(StepKind::RollbackMoves) => continue,
                Some(StepKind::RollbackTerminate) => continue,
                _ => (Class::Quick, begun),
            };
            let took = now.duration_since(from).unwrap_or_default();
            let entry = self.took.entry(class).or_insert((0, Duration::ZERO));
            entry.0 += 1;
            entry.1 += took;
        }
    }

    fn mean(&self, class: Class, default: Duration) -> Duration {
        match self.took.get(&class) {
            Some(&(n, total)) if n > 0 => total / n,
            _ => default,
        }
    }

    /// How long since `name` was first seen begun.
    fn elapsed(&self, name: &str, now: SystemTime) -> Duration {
        self.begun
            .get(name)
            .and_then(|b| now.duration_since(*b).ok())
            .unwrap_or_default()
    }

    /// The time left for what `checkpoint` has not done yet, at `now`;
    /// zero once the plan is complete.
    pub(crate) fn eta(&self, checkpoint: &Checkpoint, now: SystemTime) -> Duration {
        let plan = &checkpoint.plan;
        if plan.is_complete() {
            return Duration::ZERO;
        }
        let quick = self.mean(Class::Quick, QUICK);
        let replace = self.mean(Class::Replace, REPLACE);
        let sample = self.mean(Class::Sample, WAVE);
        // A later wave moves every app the sample did not, the slowest
        // to get healthy among them: no quicker than the sample, nor
        // than `WAVE` until one is seen.
        let wave = self.mean(Class::Wave, sample.max(WAVE));
        let left =
            |expected: Duration, name: &str| expected.saturating_sub(self.elapsed(name, now));

        let mut serial = Duration::ZERO;
        let mut drain = Duration::ZERO;
        let mut waves_seen = 0usize;
        let mut wave_two_begun = false;
        let mut terminations_left = 0usize;
        let mut drains = false;
        let mut batches_left = 0u32;
        for (index, step) in plan.steps() {
            let name = format!("{}/{}", plan.phases[index.phase].id, step.id);
            let kind = kind_of(step);
            if let Some(StepKind::DrainWave { wave }) = kind {
                drains = true;
                waves_seen += 1;
                wave_two_begun |= wave > 1 && step.status() != Status::Pending;
            }
            if step.is_complete() {
                continue;
            }
            match kind {
                Some(StepKind::WaitRegistered) => serial += left(REGISTER, &name),
                Some(StepKind::Replace { .. }) => serial += left(replace, &name),
                Some(StepKind::DrainWave { wave: 1 }) => drain += left(sample, &name),
                Some(StepKind::DrainWave { .. }) => {
                    let since_bake = bake_until(checkpoint, step)
                        .and_then(|b| now.duration_since(b).ok())
                        .unwrap_or_default();
                    drain += wave.saturating_sub(since_bake);
                }
                Some(StepKind::Terminate { .. }) => terminations_left += 1,
                Some(StepKind::OpenBatch { .. }) => batches_left += 1,
                Some(StepKind::RollbackMoves) | Some(StepKind::RollbackTerminate) => {
                    serial += left(ROLLBACK_STEP, &name)
                }
                _ => serial += left(quick, &name),
            }
        }
        if drains {
            drain += drain_not_planned_yet(checkpoint, now, wave, waves_seen, wave_two_begun);
        }
        let batches_left =
            batches_left.min(checkpoint.groups.iter().map(batches_still_opening).sum());
        let batches = match batches_left {
            0 => Duration::ZERO,
            // The last batch's moves and terminations come after it opens.
            n => self.batch_pace() * n + wave + self.mean(Class::Terminate, TERMINATE),
        };
        serial
            + self
                .terminations_end(checkpoint, drain, terminations_left)
                .max(batches)
    }

    /// The time from one batch opening to the next, as seen (two or more
    /// opened), else `BATCH`.
    fn batch_pace(&self) -> Duration {
        match self.opened.as_slice() {
            [first, .., last] => {
                last.duration_since(*first).unwrap_or_default() / (self.opened.len() as u32 - 1)
            }
            _ => BATCH,
        }
    }

    /// When the last of `left` terminations should be done, `drain` being
    /// when the drain's waves should be: one termination (as seen, sent to
    /// done) after the drain; with a capped surge (each keeps its place
    /// until it is over) at the rate seen once two are done (and no sooner
    /// than one after the drain), else in batches of `max_unavailable`
    /// per AZ after it.
    fn terminations_end(&self, checkpoint: &Checkpoint, drain: Duration, left: usize) -> Duration {
        if left == 0 {
            return drain;
        }
        let terminate = self.mean(Class::Terminate, TERMINATE);
        if checkpoint.groups.iter().all(|g| g.surge.is_none()) {
            // Uncapped, they overlap: no rate to extrapolate (a few
            // agents empty early, the many at the drain's end, and all
            // of those are done about one termination after it).
            return drain + terminate;
        }
        match self.terminated.as_slice() {
            [first, .., last] => {
                let span = last.duration_since(*first).unwrap_or_default();
                let per = span / (self.terminated.len() as u32 - 1);
                (per * left as u32).max(drain + terminate)
            }
            _ => {
                let azs: BTreeSet<&str> = checkpoint
                    .groups
                    .iter()
                    .flat_map(|g| &g.instances)
                    .map(|i| i.availability_zone.as_str())
                    .collect();
                let at_once = (checkpoint.max_unavailable.max(1) as usize) * azs.len().max(1);
                drain + terminate * left.div_ceil(at_once) as u32
            }
        }
    }
}

/// What a running drain has yet to put in its plan: the waves not
/// appended yet (of `DRAIN_WAVES`, `waves_seen` being), each at `wave`'s
/// pace, and the bake's time left before wave-2 begins (`BAKE` when it has
/// not begun). Nothing once every wave is complete.
fn drain_not_planned_yet(
    checkpoint: &Checkpoint,
    now: SystemTime,
    wave: Duration,
    waves_seen: usize,
    wave_two_begun: bool,
) -> Duration {
    let open_wave = checkpoint
        .plan
        .steps()
        .map(|(_, s)| s)
        .find(|s| matches!(kind_of(s), Some(StepKind::DrainWave { .. })) && !s.is_complete());
    let Some(open) = open_wave else {
        return Duration::ZERO;
    };
    let waves = wave * DRAIN_WAVES.saturating_sub(waves_seen) as u32;
    if wave_two_begun {
        return waves;
    }
    waves
        + match bake_until(checkpoint, open) {
            Some(until) => until.duration_since(now).unwrap_or_default(),
            None => BAKE,
        }
}

fn kind_of(step: &Step<GroupStep>) -> Option<StepKind> {
    step.kind.as_ref().map(|k| k.kind.clone())
}

/// When the bake of the group `step` acts on ends, once it has begun.
fn bake_until(checkpoint: &Checkpoint, step: &Step<GroupStep>) -> Option<SystemTime> {
    let group = checkpoint.group(step.kind.as_ref()?.group);
    group
        .bake_until_unix_ms
        .map(|ms| UNIX_EPOCH + Duration::from_millis(ms))
}

/// How many more of a capped group's batches will open old agents: its
/// old agents not open yet, over as many as its last batch opened (a
/// batch takes in at least as many as the one before it as a rule: the
/// new agents only grow), at least the cap; none once every old agent is
/// open (its later batch steps then only see the last ones go).
fn batches_still_opening(group: &GroupRoll) -> u32 {
    let Some(surge) = &group.surge else {
        return 0;
    };
    let unopened = group
        .instances
        .iter()
        .filter(|i| i.batch > group.opened_batches && !i.terminate_sent)
        .count();
    let last = group
        .instances
        .iter()
        .filter(|i| i.batch == group.opened_batches)
        .count()
        .max(surge.cap as usize)
        .max(1);
    u32::try_from(unopened.div_ceil(last)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::{Pace, TERMINATE, batches_still_opening};
    use crate::roll::record::checkpoint::{Checkpoint, SurgeCap};

    /// The fuzz seed's checkpoint (a serial roll of one group).
    fn seed() -> Checkpoint {
        let text = include_str!("../../fuzz/seeds/checkpoint/serial-1.json");
        Checkpoint::parse(Path::new("seed.json"), text).expect("the seed parses")
    }

    /// When `pace` ends `left` terminations after `drain` in `checkpoint`
    /// with `group` uncapped, then with it as it is (capped).
    fn ends_uncapped_then_capped(
        pace: &Pace,
        checkpoint: &mut Checkpoint,
        group: crate::roll::record::checkpoint::GroupRoll,
        drain: Duration,
        left: usize,
    ) -> (Duration, Duration) {
        let mut uncapped = group.clone();
        uncapped.surge = None;
        checkpoint.groups = vec![uncapped];
        let uncapped_end = pace.terminations_end(checkpoint, drain, left);
        checkpoint.groups = vec![group];
        (uncapped_end, pace.terminations_end(checkpoint, drain, left))
    }

    /// The fuzz seed's group (12 old instances), capped at `cap`, its
    /// instances in batches as `batches` says, `opened` of them open.
    fn capped(
        cap: u32,
        batches: &[u32],
        opened: u32,
    ) -> crate::roll::record::checkpoint::GroupRoll {
        let mut group = seed().groups[0].clone();
        assert_eq!(group.instances.len(), batches.len());
        for (instance, &batch) in group.instances.iter_mut().zip(batches) {
            instance.batch = batch;
            instance.terminate_sent = false;
        }
        group.surge = Some(SurgeCap {
            cap,
            from: "--max-surge".to_string(),
            ceiling: 12 + cap,
            batches: batches.iter().copied().max().unwrap_or(0),
            min_healthy_bound: None,
            raised: None,
        });
        group.opened_batches = opened;
        group
    }

    #[test]
    fn batches_still_opening_counts_the_unopened_over_what_the_last_batch_took_in() {
        // Batch 1 took five in; seven left over five a batch: two more.
        let group = capped(2, &[1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5], 1);
        assert_eq!(batches_still_opening(&group), 2);
        // A last batch that took fewer than the cap counts as the cap: six
        // left over two.
        let group = capped(2, &[1, 1, 1, 1, 1, 2, 3, 3, 4, 4, 5, 5], 2);
        assert_eq!(batches_still_opening(&group), 3);
        // Every old instance open: the later batch steps open none.
        let group = capped(2, &[1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3], 3);
        assert_eq!(batches_still_opening(&group), 0);
        // Not capped: no batches at all.
        let mut group = capped(2, &[1; 12], 1);
        group.surge = None;
        assert_eq!(batches_still_opening(&group), 0);
    }

    #[test]
    fn an_uncapped_rolls_terminations_seen_give_no_rate_a_capped_ones_do() {
        let drain = Duration::from_secs(60);
        let group = capped(2, &[1; 12], 1);
        let mut checkpoint = seed();
        // Two agents emptied early, done a minute apart: as a rate, a
        // minute for each of the ten left.
        let start = std::time::UNIX_EPOCH + Duration::from_secs(1_000);
        let pace = Pace {
            terminated: vec![start, start + Duration::from_secs(60)],
            ..Pace::default()
        };
        let (uncapped, capped) =
            ends_uncapped_then_capped(&pace, &mut checkpoint, group, drain, 10);
        assert_eq!(uncapped, drain + TERMINATE);
        assert_eq!(capped, Duration::from_secs(600));
    }

    #[test]
    fn terminations_not_seen_yet_end_one_termination_after_the_drain_unless_capped() {
        let drain = Duration::from_secs(600);
        let group = capped(2, &[1; 12], 1);
        let mut checkpoint = seed();
        checkpoint.max_unavailable = 1;
        let azs: std::collections::BTreeSet<&str> = group
            .instances
            .iter()
            .map(|i| i.availability_zone.as_str())
            .collect();
        let rounds = 12u32.div_ceil(u32::try_from(azs.len()).unwrap());
        assert!(rounds > 1, "the seed's instances are all in one round");
        let pace = Pace::default();
        let (uncapped, capped) =
            ends_uncapped_then_capped(&pace, &mut checkpoint, group, drain, 12);
        // Uncapped: an emptied agent's place is free once it is out of
        // service, so EC2's shutdowns overlap: one termination's time.
        assert_eq!(uncapped, drain + TERMINATE);
        // Capped: each keeps its place until it is over, one per AZ.
        assert_eq!(capped, drain + TERMINATE * rounds);
    }
}
