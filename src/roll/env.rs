//! The environment a roll runs against: the validated content of the
//! `--env ENV.toml` file, with `ROLLER_<KEY>` variables and command-line
//! flags layered on top (flags win, then variables, then the file).
//!
//! Parsing is strict: an unknown key, a missing required key or a bad value
//! is an `EnvError` naming the key and where it came from. No secret lives
//! here: the PagerDuty routing key and the webhook URL are read from their
//! own variables (see `crate::pager`), never from this file.

use std::path::PathBuf;
use std::time::Duration;

use crate::roll::ports::auto_scaling::{AgentMatch, ScalingProcess};

/// Everything a roll needs to know about where it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Environment {
    /// The Auto Scaling group whose instances are the Mesos agents.
    pub asg: String,
    /// AWS region; `None` leaves it to the AWS config chain.
    pub region: Option<String>,
    /// AWS profile; `None` leaves it to the AWS config chain.
    pub profile: Option<String>,
    /// An AWS endpoint override (the simulator, moto); `None` for AWS.
    pub aws_endpoint_url: Option<String>,
    /// Mesos master URLs (at least one).
    pub mesos: Vec<String>,
    /// Marathon URLs (at least one).
    pub marathon: Vec<String>,
    /// How an EC2 instance is matched to its Mesos agent (key `match`).
    pub agent_match: AgentMatch,
    /// Simulated seconds per real second: every wait, poll interval and
    /// timeout is divided by it. 1 outside the simulator; finite and > 0.
    pub time_scale: f64,
    /// How often a wait looks again (key `poll_interval`, default 5 s).
    pub poll_interval: Duration,
    pub timeouts: Timeouts,
    pub pager: PagerSettings,
    /// Where checkpoints live (default `checkpoints`).
    pub checkpoint_dir: PathBuf,
    /// The scaling processes suspended for the roll (key
    /// `suspend_processes`; default AZRebalance, AlarmNotification,
    /// ScheduledActions). Never empty.
    pub suspend_processes: Vec<ScalingProcess>,
}

/// One deadline per kind of wait (table `[timeouts]`; values like "90s",
/// "15m", "1h" or a number of seconds). Defaults come from the write-up's
/// ~4 minutes per agent, with margins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// New instances booted and registered as active Mesos agents
    /// (`scale_up`, default 20 min).
    pub scale_up: Duration,
    /// A terminated instance's agent gone from Mesos (`deregister`,
    /// default 10 min).
    pub deregister: Duration,
    /// Every Marathon app healthy after a termination (`healthy`, default
    /// 15 min).
    pub healthy: Duration,
    /// Tasks moved off an agent before its termination, surges included
    /// (`task_move`, default 10 min).
    pub task_move: Duration,
}

/// Where pages go (table `[pager]`). Secrets are not here: the routing key
/// comes from `ROLLER_PAGERDUTY_ROUTING_KEY(_FILE)`, the webhook URL from
/// `ROLLER_WEBHOOK_URL(_FILE)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PagerSettings {
    /// Send PagerDuty Events v2 pages (key `pagerduty`, default false).
    pub pagerduty: bool,
    /// PagerDuty's events URL (key `pagerduty_events_url`), default
    /// `https://events.pagerduty.com/v2/enqueue`.
    pub pagerduty_events_url: Option<String>,
    /// Post to the webhook too (key `webhook`, default false).
    pub webhook: bool,
    /// The page's `source` (key `source`, default the host name).
    pub source: Option<String>,
}

impl Timeouts {
    pub const DEFAULT: Timeouts = Timeouts {
        scale_up: Duration::from_secs(20 * 60),
        deregister: Duration::from_secs(10 * 60),
        healthy: Duration::from_secs(15 * 60),
        task_move: Duration::from_secs(10 * 60),
    };
}

impl Environment {
    /// A real-world duration scaled to this environment's clock.
    pub fn scaled(&self, simulated: Duration) -> Duration {
        simulated.div_f64(self.time_scale)
    }
}
