//! The world as the HTTP facades share it: one `World` behind a lock, a
//! clock that maps real time to simulated time (`--time-scale K`: K
//! simulated seconds per real second), the API-level faults the facades
//! inject, and the peers (three masters, three Marathons) with their leader.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::world::{SimTime, World};

/// Real time to simulated time. Built on `tokio::time::Instant`, so tests
/// that pause tokio's clock pause the world's too.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SimClock {
    started: tokio::time::Instant,
    /// Simulated seconds per real second (>= 1 in practice).
    time_scale: f64,
}

impl SimClock {
    pub(crate) fn new(time_scale: f64) -> SimClock {
        SimClock {
            started: tokio::time::Instant::now(),
            time_scale,
        }
    }

    pub(crate) fn time_scale(&self) -> f64 {
        self.time_scale
    }

    /// The simulated time now.
    pub(crate) fn now(&self) -> SimTime {
        let real = self.started.elapsed().as_secs_f64();
        SimTime::from_millis((real * self.time_scale * 1000.0) as u64)
    }

    /// The real instant at which the simulated clock reads `t`.
    pub(crate) fn instant_of(&self, t: SimTime) -> tokio::time::Instant {
        let real = t.as_millis() as f64 / 1000.0 / self.time_scale.max(f64::MIN_POSITIVE);
        self.started + Duration::from_secs_f64(real.min(1e9))
    }

    /// How long in real time a simulated duration lasts.
    #[cfg(test)]
    pub(crate) fn real(&self, simulated: std::time::Duration) -> std::time::Duration {
        simulated.div_f64(self.time_scale.max(f64::MIN_POSITIVE))
    }
}

/// Errors and latency a facade injects into its answers (switchable at
/// runtime through `/sim/faults`).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct ApiFaults {
    pub(crate) aws: SystemFaults,
    pub(crate) mesos: SystemFaults,
    pub(crate) marathon: SystemFaults,
    /// Share of AWS calls answered with a `Throttling` error (0.0 to 1.0).
    pub(crate) aws_throttle_rate: f64,
    /// AWS actions (`DescribeAutoScalingInstances`) every call of which is
    /// refused with 403 `AccessDenied`, as IAM refuses an action the
    /// caller's policy lacks: an operator's policy written before roller
    /// called it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) aws_denied: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct SystemFaults {
    /// Share of calls answered with a 5xx (0.0 to 1.0).
    pub(crate) error_rate: f64,
    /// Added to every answer, in real milliseconds.
    pub(crate) latency_ms: u64,
}

impl ApiFaults {
    /// Refuses a rate outside 0..=1, naming the field (`aws.error_rate`).
    pub(crate) fn check(&self) -> Result<(), String> {
        let rate = |field: &str, value: f64| {
            if (0.0..=1.0).contains(&value) {
                Ok(())
            } else {
                Err(format!("{field}: {value} is not a share between 0 and 1"))
            }
        };
        for (field, system) in [
            ("aws.error_rate", &self.aws),
            ("mesos.error_rate", &self.mesos),
            ("marathon.error_rate", &self.marathon),
        ] {
            rate(field, system.error_rate)?;
        }
        rate("aws_throttle_rate", self.aws_throttle_rate)?;
        match self
            .aws_denied
            .iter()
            .find(|a| !crate::sim::http::aws::knows_action(a))
        {
            Some(a) => Err(format!(
                "aws_denied: {a:?} is not an AWS action the simulator answers"
            )),
            None => Ok(()),
        }
    }
}

/// Several servers of one system, one of which leads. Non-leaders redirect
/// (Mesos: 307 to the leader) or proxy (Marathon) to `url(leader())`.
#[derive(Debug)]
pub(crate) struct Peers {
    urls: Vec<String>,
    leader: AtomicUsize,
    /// An election under way: no peer leads (Mesos answers 503 "No leader
    /// elected", Marathon "Could not determine the current leader").
    leaderless: AtomicBool,
}

impl Peers {
    /// `urls` in index order (e.g. `http://127.0.0.1:PORT`); peer 0 leads.
    pub(crate) fn new(urls: Vec<String>) -> Peers {
        Peers {
            urls,
            leader: AtomicUsize::new(0),
            leaderless: AtomicBool::new(false),
        }
    }

    pub(crate) fn urls(&self) -> &[String] {
        &self.urls
    }

    pub(crate) fn url(&self, index: usize) -> &str {
        &self.urls[index]
    }

    /// The peer that leads, or led last while there is no leader.
    pub(crate) fn leader(&self) -> usize {
        self.leader.load(Ordering::SeqCst)
    }

    /// Whether any peer leads now.
    pub(crate) fn has_leader(&self) -> bool {
        !self.leaderless.load(Ordering::SeqCst)
    }

    /// The leader now, `None` during an election.
    pub(crate) fn current_leader(&self) -> Option<usize> {
        self.has_leader().then(|| self.leader())
    }

    /// A leader change (a fault scenarios and `/sim/faults` can trigger).
    pub(crate) fn set_leader(&self, index: usize) {
        let last = self.urls.len().saturating_sub(1);
        self.leader.store(index.min(last), Ordering::SeqCst);
        self.leaderless.store(false, Ordering::SeqCst);
    }

    /// Starts an election: no peer leads until `set_leader`.
    pub(crate) fn lose_leader(&self) {
        self.leaderless.store(true, Ordering::SeqCst);
    }
}

/// The world shared by every facade and the control endpoints.
#[derive(Clone)]
pub struct SharedWorld {
    world: Arc<Mutex<World>>,
    clock: SimClock,
    faults: Arc<Mutex<ApiFaults>>,
    /// The Marathons, once served: the masters name the leading one as the
    /// framework's `webui_url`, as Marathon registers it.
    marathons: Arc<OnceLock<Arc<Peers>>>,
    /// The sequence number of Marathon's next event, sent whenever an
    /// access to the world published one: what wakes `/v2/events`.
    marathon_events: Arc<tokio::sync::watch::Sender<u64>>,
    /// Set when the simulator shuts down: open streams end.
    closing: Arc<tokio::sync::watch::Sender<bool>>,
}

impl SharedWorld {
    pub(crate) fn new(world: World, clock: SimClock) -> SharedWorld {
        SharedWorld {
            world: Arc::new(Mutex::new(world)),
            clock,
            faults: Arc::default(),
            marathons: Arc::default(),
            marathon_events: Arc::new(tokio::sync::watch::Sender::new(0)),
            closing: Arc::new(tokio::sync::watch::Sender::new(false)),
        }
    }

    /// Tells the facades where the Marathons are (once; later calls are
    /// ignored).
    pub(crate) fn set_marathons(&self, marathons: Arc<Peers>) {
        let _ = self.marathons.set(marathons);
    }

    /// The leading Marathon's URL (`http://host:port`), Marathon's
    /// framework `webui_url`; empty while none is known (no Marathons
    /// served, or an election under way), as Mesos writes an unset one.
    pub(crate) fn marathon_webui_url(&self) -> String {
        match self.marathons.get() {
            Some(peers) if peers.has_leader() => {
                peers.url(peers.leader()).trim_end_matches('/').to_string()
            }
            _ => String::new(),
        }
    }

    pub(crate) fn clock(&self) -> SimClock {
        self.clock
    }

    /// Locks the world, brings it up to the current simulated time, and
    /// runs `f` on it. Never hold this across an `.await`.
    pub fn with<R>(&self, f: impl FnOnce(&mut World) -> R) -> R {
        let mut world = self
            .world
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = self.clock.now();
        if now > world.now() {
            world.advance_to(now);
        }
        let result = f(&mut world);
        let seq = world.marathon_event_seq();
        self.marathon_events.send_if_modified(|sent| {
            let changed = *sent != seq;
            *sent = seq;
            changed
        });
        result
    }

    /// Ends the open streams (`/v2/events`): the simulator shuts down.
    pub(crate) fn close_streams(&self) {
        self.closing.send_replace(true);
    }

    /// Turns true when the simulator shuts down.
    pub(crate) fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Wakes whenever Marathon published an event.
    pub(crate) fn marathon_events(&self) -> tokio::sync::watch::Receiver<u64> {
        self.marathon_events.subscribe()
    }

    pub(crate) fn api_faults(&self) -> ApiFaults {
        self.faults
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    pub(crate) fn set_api_faults(&self, faults: ApiFaults) {
        *self
            .faults
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = faults;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn simulated_time_runs_time_scale_times_faster_than_real_time() {
        let clock = SimClock::new(60.0);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(clock.now(), SimTime::from_millis(120_000));
        assert_eq!(
            clock.real(Duration::from_secs(90)),
            Duration::from_millis(1500)
        );
    }

    #[test]
    fn a_leader_change_outside_the_peers_picks_the_last() {
        let peers = Peers::new(vec!["a".into(), "b".into(), "c".into()]);
        assert_eq!(peers.leader(), 0);
        peers.set_leader(7);
        assert_eq!(peers.leader(), 2);
        peers.lose_leader();
        assert_eq!(peers.current_leader(), None);
        peers.set_leader(1);
        assert_eq!(peers.current_leader(), Some(1));
    }
}

#[cfg(test)]
mod timing_tests {
    //! Deregistration and relaunch timings seen the way the facades see
    //! them: through `SharedWorld` on tokio's clock, paused, so simulated
    //! minutes pass instantly and exactly.

    use std::time::Duration;

    use super::*;
    use crate::sim::Scenario;

    fn agent_of(world: &mut World, instance: &str) -> Option<String> {
        world
            .agents()
            .into_iter()
            .find(|agent| agent.attributes.values().any(|v| v == instance))
            .map(|agent| agent.id)
    }

    #[tokio::test(start_paused = true)]
    async fn a_terminated_agent_leaves_after_75_s_and_its_tasks_come_back_elsewhere() {
        let scenario = Scenario::builtin("demo").unwrap().unwrap();
        let shared = SharedWorld::new(World::new(&scenario), SimClock::new(1.0));
        let (instance, agent, tasks_before) = shared.with(|world| {
            let group = world.describe_groups(&[]).remove(0);
            // The instance whose agent holds the most tasks.
            let tasks = world.tasks();
            let (instance, agent) = group
                .instances
                .iter()
                .filter_map(|i| Some((i.instance_id.clone(), agent_of(world, &i.instance_id)?)))
                .max_by_key(|(_, agent)| tasks.iter().filter(|t| &t.slave_id == agent).count())
                .unwrap();
            (instance, agent, tasks.len())
        });
        let on_agent = |world: &mut World| {
            world
                .tasks()
                .into_iter()
                .filter(|t| t.slave_id == agent)
                .count()
        };
        assert!(shared.with(on_agent) > 0);
        shared.with(|world| world.terminate_instance(&instance, false).unwrap());

        // Gone from EC2 within the terminate time, the agent is still
        // registered (unanswering) until 75 s of missed pings have passed.
        tokio::time::advance(Duration::from_secs(60)).await;
        assert!(shared.with(|w| w.agents().iter().any(|a| a.id == agent)));
        tokio::time::advance(Duration::from_secs(60)).await;
        assert!(!shared.with(|w| w.agents().iter().any(|a| a.id == agent)));

        // ~3 s after TASK_UNREACHABLE Marathon relaunches them elsewhere.
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(shared.with(on_agent), 0);
        let running = shared.with(|w| {
            w.tasks()
                .iter()
                .filter(|t| t.state == "TASK_RUNNING")
                .count()
        });
        assert_eq!(running, tasks_before);
    }
}
