//! Faults the world can be told to suffer, at construction (the scenario's
//! `[faults]` table) and at runtime (`World::set_faults`): the ways a real
//! cluster misbehaves during a roll that the roller must notice.

use serde::{Deserialize, Serialize};

/// World-level faults. API-level faults (error rates, latency, throttling,
/// leader changes) belong to the HTTP facades, not to the world.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Faults {
    /// Every instance launch fails (as EC2 capacity errors do): the group
    /// records a failed scaling activity, launches nothing and retries.
    #[serde(default)]
    pub launches_fail: bool,
    /// The agents of the next N instances to be terminated stay registered
    /// and keep answering pings after their instance is gone, so Mesos
    /// never deregisters them.
    #[serde(default)]
    pub agents_outlive_instances: u32,
    /// Apps (by id) whose relaunched tasks never become healthy (or, without
    /// health checks, fail right after starting). Tasks running when the
    /// fault is switched on are not affected.
    #[serde(default)]
    pub never_healthy_apps: Vec<String>,
    /// Apps (by id; each must have a health check) whose running tasks,
    /// healthy ones included, fail every health check while listed: as a
    /// dependency failing or a leak would. Marathon marks them unhealthy
    /// and kills each after `maxConsecutiveFailures` (no launch delay:
    /// TASK_KILLED); relaunched tasks fail once their grace is over.
    /// Survivors pass again once the app is no longer listed.
    #[serde(default)]
    pub failing_health_checks: Vec<String>,
    /// Instances coming into service while this is set boot, but their
    /// Mesos agent never registers (a broken image, a wrong master URL in
    /// user data): the group grows and Mesos does not.
    #[serde(default)]
    pub agents_never_register: bool,
}
