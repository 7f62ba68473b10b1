//! The scenario's `[timings]`: how long things take, with the real
//! systems' defaults.

use serde::Deserialize;

use super::defaults;

/// How long things take, in (simulated) seconds.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Timings {
    /// Unix time (seconds) of the simulation's start. Unset, a served
    /// simulator starts at the wall clock, as a real master's clock is:
    /// the roller writes maintenance windows in wall-clock time, and they
    /// must mean the same to both. Set it for reproducible timestamps (a
    /// bare `World` without it starts at 2024-01-01).
    #[serde(default)]
    pub(crate) epoch_unix_s: Option<u64>,
    /// Spread (a fraction, 0 = exact) applied to boot, registration and
    /// task start times, drawn from the seed.
    #[serde(default)]
    pub(crate) jitter: f64,
    /// Pending → InService (EC2 boot plus Auto Scaling's checks).
    #[serde(default = "defaults::instance_boot_s")]
    pub(crate) instance_boot_s: f64,
    /// InService → the Mesos agent registered with the master.
    #[serde(default = "defaults::agent_register_s")]
    pub(crate) agent_register_s: f64,
    /// Terminating → Terminated (EC2 shutting-down).
    #[serde(default = "defaults::instance_terminate_s")]
    pub(crate) instance_terminate_s: f64,
    /// After a failed launch, when the group tries again.
    #[serde(default = "defaults::launch_retry_s")]
    pub(crate) launch_retry_s: f64,
    /// How long after a change AZRebalance looks at the AZ counts.
    #[serde(default = "defaults::az_rebalance_delay_s")]
    pub(crate) az_rebalance_delay_s: f64,
    /// Mesos `--agent_ping_timeout` (15 s).
    #[serde(default = "defaults::agent_ping_timeout_s")]
    pub(crate) agent_ping_timeout_s: f64,
    /// Mesos `--max_agent_ping_timeouts` (5).
    #[serde(default = "defaults::max_agent_ping_timeouts")]
    pub(crate) max_agent_ping_timeouts: u32,
    /// From TASK_UNREACHABLE/TASK_LOST to Marathon launching the
    /// replacement (unreachableStrategy 0/0 plus its reaction, ~3 s).
    #[serde(default = "defaults::unreachable_relaunch_s")]
    pub(crate) unreachable_relaunch_s: f64,
    /// How often Marathon sees offers again for apps it could not place
    /// (Mesos `--allocation_interval`, 1 s).
    #[serde(default = "defaults::offer_interval_s")]
    pub(crate) offer_interval_s: f64,
    /// From a kill to the task being gone (Mesos
    /// `--executor_shutdown_grace_period`, 5 s).
    #[serde(default = "defaults::task_kill_s")]
    pub(crate) task_kill_s: f64,
    /// Marathon `--draining_seconds` (0): how long before a maintenance
    /// window Marathon starts declining the machine's offers.
    #[serde(default)]
    pub(crate) marathon_draining_s: f64,
}

impl Default for Timings {
    fn default() -> Timings {
        Timings {
            epoch_unix_s: None,
            jitter: 0.0,
            instance_boot_s: defaults::instance_boot_s(),
            agent_register_s: defaults::agent_register_s(),
            instance_terminate_s: defaults::instance_terminate_s(),
            launch_retry_s: defaults::launch_retry_s(),
            az_rebalance_delay_s: defaults::az_rebalance_delay_s(),
            agent_ping_timeout_s: defaults::agent_ping_timeout_s(),
            max_agent_ping_timeouts: defaults::max_agent_ping_timeouts(),
            unreachable_relaunch_s: defaults::unreachable_relaunch_s(),
            offer_interval_s: defaults::offer_interval_s(),
            task_kill_s: defaults::task_kill_s(),
            marathon_draining_s: 0.0,
        }
    }
}

/// Seconds (as written in scenarios) to the world's milliseconds.
pub(crate) fn millis(seconds: f64) -> u64 {
    (seconds * 1000.0).round().max(0.0) as u64
}
