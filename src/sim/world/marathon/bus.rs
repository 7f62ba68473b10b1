//! Marathon's event bus, as `/v2/events` streams it: every change a
//! client of `/v2/apps` could see is published when it happens, as
//! Marathon publishes it (`InstanceChangedEventsGenerator` for a task's
//! state, the health check actor for a check, the deployment manager and
//! the API for the rest). The world keeps the events in order with a
//! sequence number; each open stream reads on from its own place.
//!
//! Events are kept only while a stream listens (nothing is published to
//! nobody), and at most `KEEP` of them: a stream that falls further behind
//! is closed, as Marathon closes a slow consumer's stream (1.8+).

use std::collections::VecDeque;

use super::*;

#[cfg(test)]
mod tests;

/// The most events kept for streams still reading.
const KEEP: usize = 200_000;

/// One event, with what its JSON needs, taken when it happened.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BusEvent {
    pub(crate) at_unix_ms: u64,
    pub(crate) kind: BusKind,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum BusKind {
    /// `status_update_event`, then `instance_changed_event`: a task's
    /// state changed (`condition` is the instance's, Marathon's words).
    StatusUpdate {
        task: TaskView,
        message: String,
        condition: &'static str,
    },
    /// `health_status_changed_event`: a task's check turned alive or not.
    HealthChanged {
        app_id: String,
        task_id: String,
        version_unix_ms: u64,
        alive: bool,
    },
    /// `failed_health_check_event`: one failed check.
    FailedCheck {
        app_id: String,
        task_id: String,
        check: HealthCheckView,
    },
    /// `unhealthy_instance_kill_event`: killed for failing its checks.
    UnhealthyKill {
        app_id: String,
        task_id: String,
        version_unix_ms: u64,
        host: String,
        slave_id: String,
    },
    /// `api_post_event`: the app was changed through the API.
    ApiPost { uri: String, app: Box<AppView> },
    /// `event_stream_attached` or `event_stream_detached`: a stream
    /// opened or closed (every stream hears of every other).
    Stream {
        attached: bool,
        remote_address: String,
    },
    /// `deployment_info` (started), `deployment_success` or
    /// `deployment_failed` (cancelled or overridden).
    Deployment {
        event_type: &'static str,
        deployment: DeploymentView,
    },
}

impl BusKind {
    /// The event's `eventType` (a status update is followed by its
    /// `instance_changed_event`, which the facade writes from the same).
    pub(crate) fn event_type(&self) -> &'static str {
        match self {
            BusKind::StatusUpdate { .. } => "status_update_event",
            BusKind::HealthChanged { .. } => "health_status_changed_event",
            BusKind::FailedCheck { .. } => "failed_health_check_event",
            BusKind::UnhealthyKill { .. } => "unhealthy_instance_kill_event",
            BusKind::ApiPost { .. } => "api_post_event",
            BusKind::Stream { attached: true, .. } => "event_stream_attached",
            BusKind::Stream {
                attached: false, ..
            } => "event_stream_detached",
            BusKind::Deployment { event_type, .. } => event_type,
        }
    }
}

/// The events published while streams listen.
#[derive(Clone, Debug, Default)]
pub(crate) struct Bus {
    listeners: usize,
    /// The sequence number the next event gets.
    next: u64,
    /// The latest events, the last one numbered `next - 1`.
    kept: VecDeque<BusEvent>,
}

/// What a stream reading from `from` gets.
#[derive(Debug, PartialEq)]
pub(crate) enum Read {
    /// The events from `from` on, and where to read next.
    Events(Vec<BusEvent>, u64),
    /// Events it had not read are no longer kept: it fell behind.
    Behind,
}

impl Bus {
    /// A stream opens: from now on events are kept for it. Returns where
    /// it starts reading.
    pub(crate) fn listen(&mut self) -> u64 {
        self.listeners += 1;
        self.next
    }

    /// A stream closed; with none left, nothing more is kept.
    pub(crate) fn unlisten(&mut self) {
        self.listeners = self.listeners.saturating_sub(1);
        if self.listeners == 0 {
            self.kept.clear();
        }
    }

    pub(crate) fn listening(&self) -> bool {
        self.listeners > 0
    }

    /// The sequence number of the next event: changes whenever one is
    /// published.
    pub(crate) fn next(&self) -> u64 {
        self.next
    }

    fn publish(&mut self, event: BusEvent) {
        if self.listeners == 0 {
            return;
        }
        self.kept.push_back(event);
        self.next += 1;
        if self.kept.len() > KEEP {
            self.kept.pop_front();
        }
    }

    /// The events from sequence number `from` on. Read by the only
    /// stream, they are no longer kept (with several, the oldest go once
    /// `KEEP` are).
    pub(crate) fn read(&mut self, from: u64) -> Read {
        let first = self.next - self.kept.len() as u64;
        if from < first {
            return Read::Behind;
        }
        let skip = (from - first) as usize;
        let events = if self.listeners == 1 {
            self.kept.drain(..).skip(skip).collect()
        } else {
            self.kept.iter().skip(skip).cloned().collect()
        };
        Read::Events(events, self.next)
    }
}

impl World {
    /// Publishes what `kind` builds, if a stream listens (building it
    /// costs views).
    fn publish(&mut self, kind: impl FnOnce(&World) -> BusKind) {
        if !self.marathon.bus.listening() {
            return;
        }
        let event = BusEvent {
            at_unix_ms: self.unix_ms(self.now),
            kind: kind(self),
        };
        self.marathon.bus.publish(event);
    }

    /// A task's state changed: its status update, in `state` (Mesos'
    /// word; the task's own unless it is gone), with Marathon's condition.
    pub(super) fn publish_status(&mut self, key: TaskKey, state: Option<&'static str>) {
        self.publish(|w| {
            let mut task = w.task_view(key);
            if let Some(state) = state {
                task.state = state;
            }
            let failure = w.marathon.apps[w.marathon.tasks[&key].app]
                .last_failure
                .as_ref()
                .filter(|f| f.task_id == task.id);
            let message = failure.map(|f| f.message.clone()).unwrap_or_default();
            BusKind::StatusUpdate {
                condition: condition(task.state),
                task,
                message,
            }
        });
    }

    /// A check result of a task whose app has the check `spec`: a failure
    /// is published each time, a change of `alive` once.
    pub(super) fn publish_check(
        &mut self,
        key: TaskKey,
        spec: &HealthSpec,
        was_alive: Option<bool>,
    ) {
        let task = &self.marathon.tasks[&key];
        let (a, alive) = (task.app, task.health.alive);
        if alive == Some(false) {
            self.publish(|w| BusKind::FailedCheck {
                app_id: w.marathon.apps[a].id.clone(),
                task_id: w.marathon.tasks[&key].id.clone(),
                check: spec.view(),
            });
        }
        if let Some(alive) = alive
            && was_alive != Some(alive)
        {
            self.publish(|w| BusKind::HealthChanged {
                app_id: w.marathon.apps[a].id.clone(),
                task_id: w.marathon.tasks[&key].id.clone(),
                version_unix_ms: w.unix_ms(w.marathon.apps[a].version),
                alive,
            });
        }
    }

    /// A task killed for failing its checks.
    pub(super) fn publish_unhealthy_kill(&mut self, key: TaskKey) {
        self.publish(|w| {
            let task = w.task_view(key);
            BusKind::UnhealthyKill {
                app_id: task.app_id,
                task_id: task.id,
                version_unix_ms: task.version_unix_ms,
                host: task.host,
                slave_id: task.slave_id,
            }
        });
    }

    /// App `a` was changed through `PUT /v2/apps/{id}`.
    pub(super) fn publish_api_post(&mut self, a: AppIdx) {
        self.publish(|w| {
            let app = w.app_view(a, false);
            BusKind::ApiPost {
                uri: format!("/v2/apps{}", app.id),
                app: Box::new(app),
            }
        });
    }

    /// Deployment `id` started (`deployment_info`), succeeded or failed.
    pub(super) fn publish_deployment(&mut self, event_type: &'static str, id: &str, a: AppIdx) {
        self.publish(|w| BusKind::Deployment {
            event_type,
            deployment: DeploymentView {
                id: id.to_string(),
                version_unix_ms: w.unix_ms(w.now),
                affected_apps: vec![w.marathon.apps[a].id.clone()],
                action: w
                    .marathon
                    .deployments
                    .iter()
                    .find(|d| d.id == id)
                    .map_or("ScaleApplication", |d| d.action),
                current_step: 1,
                total_steps: 1,
            },
        });
    }

    /// A stream from `remote_address` opens: returns where it starts
    /// reading, its own `event_stream_attached` first (Marathon's stream
    /// subscribes, then publishes it).
    pub(crate) fn listen_to_marathon(&mut self, remote_address: &str) -> u64 {
        let from = self.marathon.bus.listen();
        self.publish(|_| BusKind::Stream {
            attached: true,
            remote_address: remote_address.to_string(),
        });
        from
    }

    /// A stream closed: the others hear `event_stream_detached`.
    pub(crate) fn stop_listening_to_marathon(&mut self, remote_address: &str) {
        self.marathon.bus.unlisten();
        self.publish(|_| BusKind::Stream {
            attached: false,
            remote_address: remote_address.to_string(),
        });
    }

    /// The events from `from` on.
    pub(crate) fn marathon_events(&mut self, from: u64) -> Read {
        self.marathon.bus.read(from)
    }

    /// Changes whenever Marathon publishes an event.
    pub(crate) fn marathon_event_seq(&self) -> u64 {
        self.marathon.bus.next()
    }
}

/// Marathon's instance condition for a task in Mesos state `state`.
fn condition(state: &str) -> &'static str {
    match state {
        "TASK_STAGING" => "Staging",
        "TASK_RUNNING" => "Running",
        "TASK_KILLING" => "Killing",
        "TASK_KILLED" => "Killed",
        "TASK_FAILED" => "Failed",
        "TASK_LOST" => "Gone",
        "TASK_UNREACHABLE" => "Unreachable",
        _ => "Unknown",
    }
}
