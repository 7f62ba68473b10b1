//! EC2 taking an instance away on its own, as a Spot interruption or a
//! hardware failure does: the machine stops at once (its Mesos agent stops
//! answering, and its tasks are lost when the master gives up on it), the
//! group finds the instance terminated by its EC2 health check and launches
//! a replacement, its desired capacity unchanged.

use super::*;

impl World {
    /// Takes running instance `instance_id` away as EC2 would reclaim it.
    /// Refused (with why) for an instance that is not running or already
    /// terminating: a test's typo must not pass silently.
    pub(crate) fn reclaim_instance(&mut self, instance_id: &str) -> Result<(), String> {
        let idx = match self.instance_by_id.get(instance_id) {
            Some(&i) if self.instances[i].state.machine_runs() => i,
            Some(_) => return Err(format!("instance {instance_id} is not running")),
            None => return Err(format!("no instance {instance_id}")),
        };
        if self.instances[idx].terminate_activity.is_some() {
            return Err(format!("instance {instance_id} is already terminating"));
        }
        let gi = self.instances[idx].group;
        // Auto Scaling's words for an instance EC2 stopped under it.
        let cause = format!(
            "At {} an instance was taken out of service in response to an EC2 health check indicating it has been terminated or stopped.",
            self.now
        );
        self.begin_termination(idx, cause);
        self.reconcile_group(gi);
        self.observe_group(gi);
        Ok(())
    }
}
