//! The environment's tables: `[timeouts]`, one deadline per kind of
//! wait, and `[pager]`, where pages go.

use std::time::Duration;

/// One deadline per kind of wait (table `[timeouts]`; values like "90s",
/// "15m", "1h" or a number of seconds). Defaults come from the write-up's
/// ~4 minutes per agent, with margins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Timeouts {
    /// New instances booted and registered as active Mesos agents
    /// (`scale_up`, default 20 min).
    pub(crate) scale_up: Duration,
    /// A terminated instance's agent gone from Mesos (`deregister`,
    /// default 10 min).
    pub(crate) deregister: Duration,
    /// Every Marathon app healthy after a termination (`healthy`, default
    /// 15 min).
    pub(crate) healthy: Duration,
    /// Tasks moved off an agent before its termination, surges included
    /// (`task_move`, default 10 min).
    pub(crate) task_move: Duration,
    /// A call failing for a passing reason (5xx, throttling, a timeout, no
    /// leader) outside any other wait, retried each poll (`retry`, default
    /// 10 min).
    pub(crate) retry: Duration,
    /// Instances an operator is to hand back under `standby = "wait"` or
    /// `protected = "wait"`: out of Standby, scale-in protection lifted
    /// (`operator`, default 1 h, as Instance Refresh waits).
    pub(crate) operator: Duration,
    /// Other frameworks' tasks left alone on an emptied old agent (a
    /// Metronome job run), waited for before the agent is drained with
    /// `DRAIN_AGENT` (`other_tasks`, default 2 h: a nightly job ends).
    pub(crate) other_tasks: Duration,
    /// One pod of a DC/OS SDK service replaced (`pod replace`): its
    /// service healthy first, then its recovery plan COMPLETE with the
    /// pod running on a new agent (`pod_replace`, default 30 min: a
    /// broker's volume replicated again takes a while).
    pub(crate) pod_replace: Duration,
}

/// What the roll does once `timeouts.other_tasks` has passed on an old
/// agent that still runs other frameworks' tasks (key `other_tasks`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum OtherTasksPolicy {
    /// Mesos' `DRAIN_AGENT` with `max_grace_period`: their frameworks see
    /// them killed with the grace they asked for (at most that), then the
    /// agent goes.
    #[default]
    Drain,
    /// Pause and page: a person decides.
    Pause,
}

impl OtherTasksPolicy {
    pub(crate) const NAMES: [&'static str; 2] = ["drain", "pause"];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OtherTasksPolicy::Drain => "drain",
            OtherTasksPolicy::Pause => "pause",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<OtherTasksPolicy> {
        match text.trim() {
            "drain" => Some(OtherTasksPolicy::Drain),
            "pause" => Some(OtherTasksPolicy::Pause),
            _ => None,
        }
    }
}

/// `max_grace_period` when none is given: the longest kill grace a task of
/// another framework gets when its agent is drained.
pub(crate) const DEFAULT_MAX_GRACE_PERIOD: Duration = Duration::from_secs(10 * 60);

/// Where pages go (table `[pager]`). Secrets are not here: the routing key
/// comes from `ROLLER_PAGERDUTY_ROUTING_KEY(_FILE)`, the webhook URL from
/// `ROLLER_WEBHOOK_URL(_FILE)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PagerSettings {
    /// Send PagerDuty Events v2 pages (key `pagerduty`, default false).
    pub(crate) pagerduty: bool,
    /// PagerDuty's events URL (key `pagerduty_events_url`), default
    /// `https://events.pagerduty.com/v2/enqueue`.
    pub(crate) pagerduty_events_url: Option<String>,
    /// Post to the webhook too (key `webhook`, default false).
    pub(crate) webhook: bool,
    /// The page's `source` (key `source`, default the host name).
    pub(crate) source: Option<String>,
}

impl Timeouts {
    /// The values used for keys `[timeouts]` leaves out.
    pub(crate) const DEFAULT: Timeouts = Timeouts {
        scale_up: Duration::from_secs(20 * 60),
        deregister: Duration::from_secs(10 * 60),
        healthy: Duration::from_secs(15 * 60),
        task_move: Duration::from_secs(10 * 60),
        retry: Duration::from_secs(10 * 60),
        operator: Duration::from_secs(60 * 60),
        other_tasks: Duration::from_secs(2 * 60 * 60),
        pod_replace: Duration::from_secs(30 * 60),
    };
}
