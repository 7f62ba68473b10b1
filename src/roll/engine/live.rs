//! `Live`: what a running roll shares with those who watch or operate it
//! while it runs (the plan API of `--listen`): the checkpoint as last
//! saved, the operator operations handed in for the runner, and how long
//! the steps it completed took. No I/O and no HTTP here: the server reads
//! and submits through this, the runner drains the operations at its next
//! tick exactly as it drains the file queue (`inbox.rs`), so an operation
//! is applied, logged and checkpointed the same way whichever door it
//! came in by.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use crate::plan::{AddressError, Operation, Outcome, Plan, Status};
use crate::roll::record::checkpoint::{Checkpoint, utc};
use crate::roll::record::env::Timeouts;
use crate::roll::record::operations::QueuedOperation;

/// Upper bounds (cluster seconds) of the step-duration histogram's
/// buckets: from a quick group call to an hour-long wait.
pub(crate) const DURATION_BUCKETS: [f64; 11] = [
    1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0,
];

/// The shared state; `Arc` it and hand one clone to the runner
/// (`RunOptions::live`), one to the server.
pub(crate) struct Live {
    /// The configured timeout of each kind of wait, for `/metrics`.
    timeouts: Timeouts,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The checkpoint as last saved (none before the run has one).
    checkpoint: Option<Arc<Checkpoint>>,
    /// Operations accepted and not yet taken by the runner, oldest first.
    queue: Vec<QueuedOperation>,
    /// Operations the runner has taken and not yet saved: the snapshot
    /// does not show them until its next save.
    in_flight: Vec<QueuedOperation>,
    durations: Durations,
}

/// Durations of the steps completed by this process, in cluster seconds,
/// as a cumulative histogram over `DURATION_BUCKETS`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Durations {
    /// Per bucket of `DURATION_BUCKETS`: steps that took at most its bound.
    pub(crate) at_most: [u64; DURATION_BUCKETS.len()],
    pub(crate) count: u64,
    pub(crate) sum_seconds: f64,
}

/// What a submitted operation came to, judged on the plan as it will be
/// once the operations queued before it are applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Submitted {
    /// It changes the plan: queued for the runner's next tick.
    Queued {
        id: String,
        /// `phase 'drain'`, as events name the target.
        target: String,
    },
    /// It changes nothing (the SDK's 208); nothing was queued.
    AlreadyDone { target: String, status: Status },
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SubmitError {
    #[error("the roll has no plan yet (preflight is running); try again in a moment")]
    NotReady,
    #[error("{0}")]
    Address(#[from] AddressError),
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").finish_non_exhaustive()
    }
}

impl Live {
    pub(crate) fn new(timeouts: Timeouts) -> Arc<Live> {
        Arc::new(Live {
            timeouts,
            state: Mutex::new(State::default()),
        })
    }

    /// The lock, whatever a panicking holder left: every field is valid
    /// after any single assignment.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wraps the runner's observer: the snapshot is updated first, then
    /// `inner` is called (so whoever sees `inner`'s output can already
    /// read the same checkpoint here).
    pub(crate) fn tee<'a>(
        self: &Arc<Self>,
        mut inner: Box<dyn FnMut(&Checkpoint) + Send + 'a>,
    ) -> Box<dyn FnMut(&Checkpoint) + Send + 'a> {
        let live = Arc::clone(self);
        Box::new(move |checkpoint: &Checkpoint| {
            live.observe(checkpoint);
            inner(checkpoint);
        })
    }

    /// Takes `checkpoint` as the current one: it holds every operation
    /// the runner has taken (the runner applies them all, then saves).
    pub(crate) fn observe(&self, checkpoint: &Checkpoint) {
        let snapshot = Arc::new(checkpoint.clone());
        let mut state = self.state();
        state.checkpoint = Some(snapshot);
        state.in_flight.clear();
    }

    /// The checkpoint as last saved.
    pub(crate) fn checkpoint(&self) -> Option<Arc<Checkpoint>> {
        self.state().checkpoint.clone()
    }

    pub(crate) fn timeouts(&self) -> &Timeouts {
        &self.timeouts
    }

    /// Judges `operation` on `phase`/`step` (ids or names, as `roller
    /// plan` takes them) and queues it when it would change the plan.
    /// `user` is who asked, for the event log.
    pub(crate) fn submit(
        &self,
        operation: Operation,
        phase: Option<&str>,
        step: Option<&str>,
        user: &str,
    ) -> Result<Submitted, SubmitError> {
        let mut state = self.state();
        let Some(checkpoint) = &state.checkpoint else {
            return Err(SubmitError::NotReady);
        };
        let mut plan = checkpoint.plan.clone();
        // Two operators asking the same thing before the next tick: the
        // second is told it is already done, as it will be.
        for queued in state.in_flight.iter().chain(&state.queue) {
            apply_queued(&mut plan, queued);
        }
        let target = plan.find(phase, step)?;
        let described = plan.describe(target);
        match plan.apply(operation, target) {
            Outcome::AlreadyDone => Ok(Submitted::AlreadyDone {
                target: described,
                status: plan.status_of(target),
            }),
            Outcome::Changed => {
                let id = uuid::Uuid::new_v4().to_string();
                state.queue.push(QueuedOperation {
                    id: id.clone(),
                    operation: operation.to_string(),
                    phase: phase.map(str::to_string),
                    step: step.map(str::to_string),
                    user: user.to_string(),
                    at: utc(SystemTime::now()),
                });
                Ok(Submitted::Queued {
                    id,
                    target: described,
                })
            }
        }
    }

    /// The operations submitted since the last call, oldest first (the
    /// runner's, at each tick, which applies them and saves).
    pub(crate) fn take_operations(&self) -> Vec<QueuedOperation> {
        let mut state = self.state();
        let taken = std::mem::take(&mut state.queue);
        state.in_flight.extend(taken.iter().cloned());
        taken
    }

    /// A step completed after `took` (cluster time).
    pub(crate) fn step_took(&self, took: Duration) {
        let seconds = took.as_secs_f64();
        let mut state = self.state();
        let durations = &mut state.durations;
        for (bound, count) in DURATION_BUCKETS.iter().zip(&mut durations.at_most) {
            if seconds <= *bound {
                *count += 1;
            }
        }
        durations.count += 1;
        durations.sum_seconds += seconds;
    }

    pub(crate) fn durations(&self) -> Durations {
        self.state().durations.clone()
    }
}

/// A queued operation applied to a copy of the plan (one that no longer
/// parses or addresses nothing is skipped: the runner logs it as ignored).
fn apply_queued<K: Clone + PartialEq>(plan: &mut Plan<K>, queued: &QueuedOperation) {
    let Ok(operation) = queued.operation.parse::<Operation>() else {
        return;
    };
    if let Ok(target) = plan.find(queued.phase.as_deref(), queued.step.as_deref()) {
        plan.apply(operation, target);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeouts() -> Timeouts {
        let minute = Duration::from_secs(60);
        Timeouts {
            scale_up: minute,
            deregister: minute,
            healthy: minute,
            task_move: minute,
            retry: minute,
            operator: minute,
            other_tasks: minute,
            pod_replace: minute,
        }
    }

    /// A serial roll halfway through `replace` (its third step STARTED,
    /// `finish` PENDING).
    fn checkpoint() -> Checkpoint {
        let text = include_str!("../../../fuzz/seeds/checkpoint/serial-1.json");
        Checkpoint::parse(std::path::Path::new("c.json"), text).unwrap()
    }

    #[test]
    fn a_step_duration_lands_in_every_bucket_at_or_above_it() {
        let live = Live::new(timeouts());
        live.step_took(Duration::from_secs(20));
        live.step_took(Duration::from_millis(500));
        let d = live.durations();
        assert_eq!(d.count, 2);
        assert_eq!(d.at_most[0], 1, "0.5 s is at most 1 s");
        assert_eq!(d.at_most[2], 1, "20 s is not at most 15 s");
        assert_eq!(d.at_most[3], 2, "both are at most 30 s");
        assert!((d.sum_seconds - 20.5).abs() < 1e-9);
    }

    #[test]
    fn an_operation_is_judged_after_those_queued_before_it_and_before_a_plan_it_is_refused() {
        let live = Live::new(timeouts());
        assert_eq!(
            live.submit(Operation::Interrupt, None, None, "a"),
            Err(SubmitError::NotReady)
        );
        live.observe(&checkpoint());
        let first = live.submit(Operation::Interrupt, Some("finish"), None, "a");
        assert!(
            matches!(&first, Ok(Submitted::Queued { target, .. }) if target == "phase 'finish'"),
            "{first:?}"
        );
        // Not applied yet, but the second is told how it will be.
        let second = live.submit(Operation::Interrupt, Some("finish"), None, "b");
        assert!(
            matches!(second, Ok(Submitted::AlreadyDone { .. })),
            "{second:?}"
        );
        assert!(matches!(
            live.submit(Operation::Continue, Some("nope"), None, "c"),
            Err(SubmitError::Address(_))
        ));
        let taken = live.take_operations();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].operation, "interrupt");
        assert_eq!(taken[0].phase.as_deref(), Some("finish"));
        assert_eq!(taken[0].user, "a");
        assert!(live.take_operations().is_empty(), "taken once");
        // Taken, not yet saved: still judged as applied.
        let third = live.submit(Operation::Interrupt, Some("finish"), None, "c");
        assert!(
            matches!(third, Ok(Submitted::AlreadyDone { .. })),
            "{third:?}"
        );
        // Saved (here without it, as a stand-in): judged on the save alone.
        live.observe(&checkpoint());
        let fourth = live.submit(Operation::Interrupt, Some("finish"), None, "d");
        assert!(matches!(fourth, Ok(Submitted::Queued { .. })), "{fourth:?}");
    }

    #[test]
    fn the_tee_updates_the_snapshot_before_the_inner_observer_runs() {
        let live = Live::new(timeouts());
        let seen = Arc::new(Mutex::new(false));
        let (reader, flag) = (Arc::clone(&live), Arc::clone(&seen));
        let mut observer = live.tee(Box::new(move |_: &Checkpoint| {
            *flag.lock().unwrap() = reader.checkpoint().is_some();
        }));
        observer(&checkpoint());
        assert!(*seen.lock().unwrap());
    }

    /// The whole path on paused time, with roller's real clients and the
    /// simulator: an interrupt handed in while the scale-up waits is not
    /// in the plan at once (the runner owns it), is applied at the next
    /// tick, logged with its caller, and holds the run.
    #[tokio::test(start_paused = true)]
    async fn an_operation_submitted_while_the_roll_runs_is_applied_at_the_next_tick_and_logged_with_its_caller()
     {
        use crate::plan::Status;
        use crate::roll::engine::Outcome;
        use crate::roll::record::checkpoint::EventKind;
        use crate::roll::run::{RunResult, run};
        use crate::roll::tests::in_process::{cluster, in_service, settings};

        let dir = tempfile::tempdir().unwrap();
        let cluster = cluster("demo", dir.path()).await;
        let target = u32::try_from(in_service(&cluster).await.len()).unwrap();
        let live = Live::new(cluster.env.timeouts.clone());
        let mut settings = settings(&dir.path().join("demo.json"), target, &[]);
        settings.options.live = Some(Arc::clone(&live));
        let submitter = Arc::clone(&live);
        let mut queued_id: Option<String> = None;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let observer = live.tee(Box::new(move |checkpoint: &Checkpoint| {
            let logged = checkpoint
                .events
                .iter()
                .any(|e| e.kind == EventKind::Operator);
            record
                .lock()
                .unwrap()
                .push((checkpoint.plan.interrupted, logged));
            let waiting = checkpoint
                .plan
                .steps()
                .any(|(_, s)| s.id == "wait-registered" && s.status == Status::Started);
            if waiting && queued_id.is_none() {
                match submitter.submit(Operation::Interrupt, None, None, "api 127.0.0.1:5555") {
                    Ok(Submitted::Queued { id, .. }) => queued_id = Some(id),
                    other => panic!("{other:?}"),
                }
            }
        }));
        let (_stop_tx, stop) = tokio::sync::watch::channel(false);
        let result = run(cluster.ports(), &cluster.env, settings, stop, observer)
            .await
            .unwrap();
        let RunResult::Finished {
            outcome,
            checkpoint,
            ..
        } = result
        else {
            panic!("nothing to do")
        };
        assert!(matches!(outcome, Outcome::Held { .. }), "{outcome:?}");
        assert!(checkpoint.plan.interrupted);
        // The interrupt reached the plan in the runner's save, with its
        // event, never before.
        let seen = seen.lock().unwrap().clone();
        assert!(
            seen.iter()
                .all(|(interrupted, logged)| interrupted == logged),
            "{seen:?}"
        );
        assert!(seen.iter().any(|(interrupted, _)| *interrupted), "{seen:?}");
        let event = checkpoint
            .events
            .iter()
            .find(|e| e.kind == EventKind::Operator)
            .expect("the operation is logged");
        assert_eq!(event.user.as_deref(), Some("api 127.0.0.1:5555"));
        assert!(
            event.message.starts_with("interrupt the plan"),
            "{}",
            event.message
        );
        assert_eq!(checkpoint.operations_applied.len(), 1);
        assert!(live.take_operations().is_empty(), "the runner took it");
    }
}
