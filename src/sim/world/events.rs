//! The discrete-event queue: what happens next and when. Events are
//! processed in (time, sequence) order, so two events at the same instant
//! run in the order they were scheduled and a seed reproduces a run.
//!
//! Events name things by stable keys (indices that are never reused, task
//! serials), and each handler checks the thing is still in the state the
//! event was scheduled for: a stale event (a task killed before its start)
//! is simply ignored, so nothing ever has to be unscheduled.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::clock::SimTime;
use super::services::PodStep;

/// Index of an Auto Scaling group in the world (scenario order).
pub(crate) type GroupIdx = usize;
/// Index of an instance in the world (never reused).
pub(crate) type InstanceIdx = usize;
/// Index of a Mesos agent in the world (never reused).
pub(crate) type AgentIdx = usize;
/// Index of a Marathon app in the world (apps are never deleted).
pub(crate) type AppIdx = usize;
/// Serial of a Marathon task (never reused).
pub(crate) type TaskKey = u64;

/// Something the world does by itself at a given time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// An instance finished booting: Pending → InService.
    InstanceBooted(InstanceIdx),
    /// The Mesos agent on an InService instance registers with the master.
    AgentRegisters(InstanceIdx),
    /// A terminating instance is gone (Terminating → Terminated).
    InstanceTerminated(InstanceIdx),
    /// A lifecycle hook's heartbeat timeout (or the global timeout) of a
    /// waiting instance may have run out.
    LifecycleHookTimeout(InstanceIdx),
    /// An agent missed its last allowed ping: the master marks it
    /// unreachable and removes it (only if it is still not answering).
    AgentPingTimeout(AgentIdx),
    /// A drained agent's tasks are all gone: DRAINING → DRAINED.
    AgentDrained(AgentIdx),
    /// A group compares its instances with its desired capacity.
    ReconcileGroup(GroupIdx),
    /// A group's AZRebalance looks at its AZ counts (if not suspended).
    RebalanceCheck(GroupIdx),
    /// A staging task starts running.
    TaskStarted(TaskKey),
    /// A health check of a running task reports.
    HealthCheck(TaskKey),
    /// A running task on a bad image crashes (TASK_FAILED).
    TaskCrashes(TaskKey),
    /// A task of an app without health checks has run for the settle
    /// time: the monitor looks at the app again (its floor may rise).
    AppSettled(AppIdx),
    /// Marathon gives up on an unreachable/lost task (unreachableStrategy
    /// 0/0): it is expunged and the app asks for a replacement.
    TaskExpunged(TaskKey),
    /// An app's launch delay (backoff) is over: place its missing tasks.
    LaunchDue(AppIdx),
    /// Marathon looks again at offers for apps still missing tasks.
    OfferCycle,
    /// A job run of another framework starts (or looks for room again).
    JobStarts(usize),
    /// A job run has run its duration: it finishes, if still running.
    JobEnds(usize),
    /// A job run killed by a drain has used its grace: it is gone.
    JobKilled(usize),
    /// The next step of an SDK service's pod (stale unless the pod is
    /// still at `epoch`).
    Pod {
        service: usize,
        pod: usize,
        epoch: u64,
        step: PodStep,
    },
}

#[derive(Debug)]
struct Scheduled {
    at: SimTime,
    seq: u64,
    event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// Timed events, earliest first, ties in scheduling order.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Reverse<Scheduled>>,
    next_seq: u64,
}

impl EventQueue {
    pub(crate) fn schedule(&mut self, at: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Scheduled { at, seq, event }));
    }

    pub(crate) fn next_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse(s)| s.at)
    }

    /// The earliest event if it is due at or before `until`.
    pub(crate) fn pop_due(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        if self.next_time()? > until {
            return None;
        }
        self.heap.pop().map(|Reverse(s)| (s.at, s.event))
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_out_by_time_then_by_scheduling_order() {
        let mut q = EventQueue::default();
        q.schedule(SimTime(20), Event::OfferCycle);
        q.schedule(SimTime(10), Event::ReconcileGroup(0));
        q.schedule(SimTime(10), Event::RebalanceCheck(1));
        assert_eq!(q.next_time(), Some(SimTime(10)));
        assert_eq!(
            q.pop_due(SimTime(15)),
            Some((SimTime(10), Event::ReconcileGroup(0)))
        );
        assert_eq!(
            q.pop_due(SimTime(15)),
            Some((SimTime(10), Event::RebalanceCheck(1)))
        );
        assert_eq!(q.pop_due(SimTime(15)), None);
        assert_eq!(q.len(), 1);
    }
}
