//! Editing the maintenance schedule without clobbering it. Mesos has one
//! schedule for the whole cluster and `POST /master/maintenance/schedule`
//! replaces it, so every edit is read, change only our machines, write.
//! These functions are the "change" step: pure, so the rules (foreign
//! windows survive untouched, repeating an edit changes nothing, a machine
//! appears in at most one window, no window is left empty) are tested
//! without a master.

use crate::roll::ports::mesos::{
    MachineId, MaintenanceSchedule, MaintenanceWindow, ScheduleChange, Unavailability,
};

/// A schedule after an edit, and what the edit did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Edited {
    pub(crate) schedule: MaintenanceSchedule,
    pub(crate) change: ScheduleChange,
}

impl Edited {
    /// Whether the schedule must be written back at all: an edit that
    /// changes nothing is not posted, so a concurrent operator's update
    /// cannot be undone by a no-op of ours.
    pub(crate) fn needs_write(&self) -> bool {
        !self.change.changed.is_empty()
    }
}

/// `schedule` with the `machines` not yet scheduled added as one new
/// window. Machines already in any window (ours from an earlier call, or
/// another operator's) keep the window they are in: Mesos allows a machine
/// in one window only, and moving it would change someone else's plan.
pub(crate) fn schedule_machines(
    schedule: &MaintenanceSchedule,
    machines: &[MachineId],
    unavailability: Unavailability,
) -> Edited {
    let mut change = ScheduleChange::default();
    for machine in machines {
        let seen = |list: &[MachineId]| list.iter().any(|m| m.same_machine(machine));
        if seen(&change.changed) || seen(&change.unchanged) {
            continue;
        }
        if schedule.windows.iter().any(|w| seen(&w.machines)) {
            change.unchanged.push(machine.clone());
        } else {
            change.changed.push(machine.clone());
        }
    }
    let mut schedule = schedule.clone();
    if !change.changed.is_empty() {
        schedule.windows.push(MaintenanceWindow {
            machines: change.changed.clone(),
            unavailability,
        });
    }
    Edited { schedule, change }
}

/// `schedule` without `machines`, wherever they are. Other machines in the
/// same windows stay; a window left without machines is dropped (Mesos
/// refuses empty windows).
pub(crate) fn unschedule_machines(
    schedule: &MaintenanceSchedule,
    machines: &[MachineId],
) -> Edited {
    let wanted = |m: &MachineId| machines.iter().any(|ours| ours.same_machine(m));
    let mut change = ScheduleChange::default();
    let mut windows = Vec::with_capacity(schedule.windows.len());
    for window in &schedule.windows {
        if !window.machines.iter().any(wanted) {
            windows.push(window.clone());
            continue;
        }
        let (removed, kept): (Vec<MachineId>, Vec<MachineId>) =
            window.machines.iter().cloned().partition(|m| wanted(m));
        change.changed.extend(removed);
        if !kept.is_empty() {
            windows.push(MaintenanceWindow {
                machines: kept,
                unavailability: window.unavailability,
            });
        }
    }
    for machine in machines {
        let seen = |list: &[MachineId]| list.iter().any(|m| m.same_machine(machine));
        if !seen(&change.changed) && !seen(&change.unchanged) {
            change.unchanged.push(machine.clone());
        }
    }
    Edited {
        schedule: MaintenanceSchedule { windows },
        change,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(hostname: &str, ip: &str) -> MachineId {
        MachineId {
            hostname: Some(hostname.to_string()),
            ip: Some(ip.to_string()),
        }
    }

    fn hour_from(start_nanos: i64) -> Unavailability {
        Unavailability {
            start_nanos,
            duration_nanos: Some(3_600_000_000_000),
        }
    }

    /// Another operator's schedule: two machines in one window, one in an
    /// indefinite window, and a machine known by hostname only.
    fn foreign() -> MaintenanceSchedule {
        MaintenanceSchedule {
            windows: vec![
                MaintenanceWindow {
                    machines: vec![
                        machine("machine1", "10.0.0.1"),
                        machine("machine2", "10.0.0.2"),
                    ],
                    unavailability: hour_from(1_443_830_400_000_000_000),
                },
                MaintenanceWindow {
                    machines: vec![MachineId {
                        hostname: Some("myhost".to_string()),
                        ip: None,
                    }],
                    unavailability: Unavailability {
                        start_nanos: 1_470_849_373_150_643_200,
                        duration_nanos: None,
                    },
                },
            ],
        }
    }

    #[test]
    fn scheduling_our_machines_keeps_every_foreign_window_as_it_was() {
        let ours = [machine("agent-7", "10.1.0.7")];
        let edited = schedule_machines(&foreign(), &ours, hour_from(5));
        assert_eq!(edited.schedule.windows[..2], foreign().windows[..]);
        assert_eq!(
            edited.schedule.windows[2],
            MaintenanceWindow {
                machines: ours.to_vec(),
                unavailability: hour_from(5),
            }
        );
        assert_eq!(edited.change.changed, ours.to_vec());
        assert!(edited.needs_write());
    }

    #[test]
    fn scheduling_the_same_machines_twice_leaves_one_window() {
        let ours = [
            machine("agent-7", "10.1.0.7"),
            machine("agent-8", "10.1.0.8"),
        ];
        let once = schedule_machines(&foreign(), &ours, hour_from(5));
        let twice = schedule_machines(&once.schedule, &ours, hour_from(99));
        assert_eq!(twice.schedule, once.schedule);
        assert_eq!(twice.change.unchanged, ours.to_vec());
        assert!(!twice.needs_write());
    }

    #[test]
    fn a_machine_in_another_operators_window_is_left_there() {
        let ours = [
            machine("MACHINE2", "10.0.0.2"),
            machine("agent-7", "10.1.0.7"),
        ];
        let edited = schedule_machines(&foreign(), &ours, hour_from(5));
        assert_eq!(
            edited.change.unchanged,
            vec![machine("MACHINE2", "10.0.0.2")]
        );
        assert_eq!(edited.change.changed, vec![machine("agent-7", "10.1.0.7")]);
        assert_eq!(edited.schedule.windows.len(), 3);
        assert_eq!(edited.schedule.windows[0], foreign().windows[0]);
    }

    #[test]
    fn a_machine_named_twice_in_one_request_is_scheduled_once() {
        let ours = [
            machine("agent-7", "10.1.0.7"),
            machine("Agent-7", "10.1.0.7"),
        ];
        let edited = schedule_machines(&MaintenanceSchedule::default(), &ours, hour_from(5));
        assert_eq!(edited.schedule.windows.len(), 1);
        assert_eq!(edited.schedule.windows[0].machines.len(), 1);
    }

    #[test]
    fn scheduling_nothing_new_writes_nothing() {
        let edited = schedule_machines(&foreign(), &[], hour_from(5));
        assert_eq!(edited.schedule, foreign());
        assert!(!edited.needs_write());
    }

    #[test]
    fn unscheduling_removes_only_our_machines_and_drops_windows_left_empty() {
        let ours = [machine("agent-7", "10.1.0.7")];
        let scheduled = schedule_machines(&foreign(), &ours, hour_from(5)).schedule;
        let edited = unschedule_machines(&scheduled, &ours);
        assert_eq!(edited.schedule, foreign());
        assert_eq!(edited.change.changed, ours.to_vec());
        assert!(edited.needs_write());
    }

    #[test]
    fn unscheduling_one_machine_of_a_shared_window_keeps_the_others_and_the_time() {
        let edited = unschedule_machines(&foreign(), &[machine("machine1", "10.0.0.1")]);
        assert_eq!(
            edited.schedule.windows[0],
            MaintenanceWindow {
                machines: vec![machine("machine2", "10.0.0.2")],
                unavailability: hour_from(1_443_830_400_000_000_000),
            }
        );
        assert_eq!(edited.schedule.windows[1], foreign().windows[1]);
    }

    #[test]
    fn unscheduling_twice_changes_nothing_the_second_time() {
        let ours = [machine("machine3", "10.0.0.3")];
        let edited = unschedule_machines(&foreign(), &ours);
        assert_eq!(edited.schedule, foreign());
        assert_eq!(edited.change.unchanged, ours.to_vec());
        assert!(!edited.needs_write());
    }

    #[test]
    fn a_machine_known_by_hostname_only_is_not_the_same_as_one_with_an_ip() {
        let with_ip = [machine("myhost", "10.0.0.9")];
        let edited = unschedule_machines(&foreign(), &with_ip);
        assert_eq!(edited.schedule, foreign());
    }
}
