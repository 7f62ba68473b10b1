//! CloudWatch alarms, as far as a roll reads them: each alarm's name, its
//! metric (kept as put, never evaluated: the world has no metrics), its
//! state with the reason and time of its last change, and changes
//! scheduled at a simulated time (a scenario's `alarm_at_s`, a test's
//! regression). A new alarm starts in `INSUFFICIENT_DATA`, as CloudWatch's
//! do until their first evaluation.

use serde::{Deserialize, Serialize};

use super::{SimTime, World};
use crate::sim::scenario::millis;

/// An alarm of a scenario (`[[alarms]]`): its name, and the moment it
/// goes to ALARM, if it does.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AlarmSpec {
    pub(crate) name: String,
    /// Its state at the start: `OK` (the default), `ALARM` or
    /// `INSUFFICIENT_DATA`.
    #[serde(default = "ok")]
    pub(crate) state: String,
    /// Simulated seconds from the start at which it goes to ALARM.
    #[serde(default)]
    pub(crate) alarm_at_s: Option<f64>,
    /// The StateReason it goes to ALARM with.
    #[serde(default = "threshold_crossed")]
    pub(crate) alarm_reason: String,
}

fn ok() -> String {
    "OK".to_string()
}

fn threshold_crossed() -> String {
    "Threshold Crossed: 3 out of the last 3 datapoints were greater than the threshold (simulated)"
        .to_string()
}

/// The states CloudWatch knows.
pub(crate) const STATES: &[&str] = &["OK", "ALARM", "INSUFFICIENT_DATA"];

/// An alarm as PutMetricAlarm put it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct AlarmDefinition {
    pub(crate) name: String,
    pub(crate) namespace: Option<String>,
    pub(crate) metric_name: Option<String>,
    pub(crate) statistic: Option<String>,
    pub(crate) period: Option<i64>,
    pub(crate) evaluation_periods: i64,
    pub(crate) threshold: Option<f64>,
    pub(crate) comparison_operator: String,
}

/// One alarm with its state.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AlarmView {
    pub(crate) definition: AlarmDefinition,
    pub(crate) state: String,
    pub(crate) reason: String,
    /// When the definition was last put (Unix ms).
    pub(crate) configured_unix_ms: u64,
    /// When the state last changed (Unix ms).
    pub(crate) updated_unix_ms: u64,
}

/// A state change due at a simulated time.
#[derive(Clone, Debug, PartialEq)]
struct Scheduled {
    at: SimTime,
    name: String,
    state: String,
    reason: String,
}

/// Every alarm, in the order they were put, and the changes to come.
#[derive(Clone, Debug, Default)]
pub(crate) struct Alarms {
    alarms: Vec<AlarmView>,
    scheduled: Vec<Scheduled>,
}

impl World {
    /// The scenario's alarms, at time zero.
    pub(super) fn add_scenario_alarms(&mut self, specs: &[AlarmSpec]) {
        for spec in specs {
            self.put_metric_alarm(AlarmDefinition {
                name: spec.name.clone(),
                evaluation_periods: 1,
                comparison_operator: "GreaterThanThreshold".to_string(),
                ..AlarmDefinition::default()
            });
            let reason = format!("{} at the start of the simulation", spec.state);
            let _ = self.set_alarm_state(&spec.name, &spec.state, &reason);
            if let Some(at_s) = spec.alarm_at_s {
                self.schedule_alarm_state(
                    &spec.name,
                    SimTime::ZERO.plus_ms(millis(at_s)),
                    "ALARM",
                    &spec.alarm_reason,
                );
            }
        }
    }

    /// PutMetricAlarm: a new alarm in INSUFFICIENT_DATA, or an alarm's
    /// definition replaced (its state kept, as CloudWatch keeps it until
    /// its next evaluation).
    pub(crate) fn put_metric_alarm(&mut self, definition: AlarmDefinition) {
        let now = self.unix_ms(self.now);
        if let Some(alarm) = self
            .alarms
            .alarms
            .iter_mut()
            .find(|a| a.definition.name == definition.name)
        {
            alarm.definition = definition;
            alarm.configured_unix_ms = now;
            return;
        }
        self.alarms.alarms.push(AlarmView {
            definition,
            state: "INSUFFICIENT_DATA".to_string(),
            reason: "Unchecked: Initial alarm creation".to_string(),
            configured_unix_ms: now,
            updated_unix_ms: now,
        });
    }

    /// SetAlarmState: `state` (one of `STATES`) with `reason`, now.
    /// Unknown alarm: `Err` with CloudWatch's message.
    pub(crate) fn set_alarm_state(
        &mut self,
        name: &str,
        state: &str,
        reason: &str,
    ) -> Result<(), String> {
        self.apply_due_alarm_states();
        let now = self.unix_ms(self.now);
        let alarm = self
            .alarms
            .alarms
            .iter_mut()
            .find(|a| a.definition.name == name)
            .ok_or_else(|| format!("Alarm {name} not found"))?;
        if alarm.state != state {
            alarm.updated_unix_ms = now;
        }
        alarm.state = state.to_string();
        alarm.reason = reason.to_string();
        Ok(())
    }

    /// Has alarm `name` change to `state` with `reason` at `at` (a test's
    /// or a scenario's regression). A change of an alarm deleted by then
    /// is dropped.
    pub(crate) fn schedule_alarm_state(
        &mut self,
        name: &str,
        at: SimTime,
        state: &str,
        reason: &str,
    ) {
        self.alarms.scheduled.push(Scheduled {
            at,
            name: name.to_string(),
            state: state.to_string(),
            reason: reason.to_string(),
        });
    }

    /// DescribeAlarms by name: the named alarms that exist, by name (as
    /// CloudWatch lists them); unknown names are left out.
    pub(crate) fn describe_alarms(&mut self, names: &[String]) -> Vec<AlarmView> {
        self.apply_due_alarm_states();
        let mut found: Vec<AlarmView> = self
            .alarms
            .alarms
            .iter()
            .filter(|a| names.contains(&a.definition.name))
            .cloned()
            .collect();
        found.sort_by(|a, b| a.definition.name.cmp(&b.definition.name));
        found
    }

    /// DescribeAlarms without names: every alarm.
    pub(crate) fn describe_all_alarms(&mut self) -> Vec<AlarmView> {
        self.apply_due_alarm_states();
        let mut all = self.alarms.alarms.clone();
        all.sort_by(|a, b| a.definition.name.cmp(&b.definition.name));
        all
    }

    /// DeleteAlarms: the named alarms that exist are deleted.
    pub(crate) fn delete_alarms(&mut self, names: &[String]) {
        self.alarms
            .alarms
            .retain(|a| !names.contains(&a.definition.name));
    }

    /// The scheduled changes due by now, applied in time order, each at
    /// its own time.
    fn apply_due_alarm_states(&mut self) {
        let now = self.now;
        let mut due: Vec<Scheduled> = Vec::new();
        self.alarms.scheduled.retain(|s| {
            if s.at <= now {
                due.push(s.clone());
                false
            } else {
                true
            }
        });
        due.sort_by_key(|s| s.at);
        for change in due {
            let at = self.unix_ms(change.at);
            if let Some(alarm) = self
                .alarms
                .alarms
                .iter_mut()
                .find(|a| a.definition.name == change.name)
            {
                if alarm.state != change.state {
                    alarm.updated_unix_ms = at;
                }
                alarm.state = change.state;
                alarm.reason = change.reason;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::Scenario;
    use crate::sim::world::World;

    const WITH_ALARMS: &str = r#"
        [group]
        name = "agents"
        min_size = 3
        max_size = 6
        desired_capacity = 3

        [[apps]]
        id = "/web"
        instances = 2

        [[alarms]]
        name = "api-p99-latency"
        alarm_at_s = 600
        alarm_reason = "Threshold Crossed: p99 912 ms"

        [[alarms]]
        name = "api-5xx-rate"
        state = "INSUFFICIENT_DATA"
    "#;

    #[test]
    fn a_scenario_alarm_goes_to_alarm_at_its_time_with_its_reason() {
        let scenario = Scenario::from_toml(WITH_ALARMS, "alarms").expect("valid");
        let mut world = World::new(&scenario);
        let names = ["api-p99-latency".to_string(), "api-5xx-rate".to_string()];
        let start = world.describe_alarms(&names);
        let states: Vec<(&str, &str)> = start
            .iter()
            .map(|a| (a.definition.name.as_str(), a.state.as_str()))
            .collect();
        assert_eq!(
            states,
            [
                ("api-5xx-rate", "INSUFFICIENT_DATA"),
                ("api-p99-latency", "OK")
            ]
        );
        world.advance_by_ms(599_000);
        assert_eq!(world.describe_alarms(&names[..1])[0].state, "OK");
        world.advance_by_ms(2_000);
        let fired = &world.describe_alarms(&names[..1])[0];
        assert_eq!(fired.state, "ALARM");
        assert_eq!(fired.reason, "Threshold Crossed: p99 912 ms");
        assert_eq!(
            fired.updated_unix_ms,
            world.unix_ms(crate::sim::world::SimTime::ZERO.plus_ms(600_000)),
            "at its own time, not when it was read"
        );
        assert!(world.describe_alarms(&["nope".to_string()]).is_empty());
        world.delete_alarms(&names[..1]);
        assert_eq!(world.describe_all_alarms().len(), 1);
    }

    #[test]
    fn a_scenario_alarm_in_a_state_cloudwatch_lacks_is_refused() {
        let text = WITH_ALARMS.replace("INSUFFICIENT_DATA", "FIRING");
        let err = Scenario::from_toml(&text, "alarms").expect_err("refused");
        let said = err.to_string();
        assert!(said.contains("alarms[1].state"), "{said}");
    }
}
