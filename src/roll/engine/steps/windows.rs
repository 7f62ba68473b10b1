//! The roll's Mesos maintenance windows: an old agent's machine put in
//! one before anything of it moves (merged into Mesos' schedule), so that
//! Marathon places nothing new there and its replacements go elsewhere.

use std::time::{Duration, SystemTime};

use super::StepContext;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::mesos::{MachineId, MesosMaster, Unavailability};
use crate::roll::record::checkpoint::RolledInstance;

/// How long a maintenance window lasts (cluster time).
pub(super) const WINDOW: Duration = Duration::from_secs(4 * 3600);

impl<P: Ports> StepContext<'_, '_, P> {
    /// Puts the agent's machine in a maintenance window (merged into the
    /// schedule; already there is a no-op), recorded first so finish
    /// removes it. Asked once per process and machine.
    pub(super) async fn schedule_maintenance(
        &mut self,
        record: &RolledInstance,
    ) -> Result<(), RollError> {
        if self.memory.scheduled.contains(&record.id) {
            return Ok(());
        }
        let machine = record.machine();
        let id = machine.machine_id();
        let group = self.group_mut();
        if !group.maintenance.contains(&machine) {
            group.maintenance.push(machine);
        }
        self.intend(format!("maintenance window for {}", record.hostname))
            .await?;
        self.schedule_windows(&[id]).await?;
        self.memory.scheduled.insert(record.id.clone());
        Ok(())
    }

    /// Puts `machines` under the roll's maintenance window (from a minute
    /// ago, for `WINDOW` of the roll's time), merged into Mesos' schedule:
    /// a machine already there changes nothing. The machines are the
    /// caller's to record first, so that finish removes their windows.
    pub(super) async fn schedule_windows(
        &mut self,
        machines: &[MachineId],
    ) -> Result<(), RollError> {
        let start = SystemTime::now() - Duration::from_secs(60);
        self.ports
            .mesos()
            .schedule_maintenance(
                machines,
                Unavailability::new(start, self.clock.window_span(WINDOW)),
            )
            .await?;
        Ok(())
    }
}
