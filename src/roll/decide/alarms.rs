//! Alarms (pure): whether a CloudWatch alarm the roll watches
//! (`alarms`, `--alarm`) is in ALARM, which counts as a failure on the new
//! image, with the alarm's reason as evidence. An alarm is already an
//! aggregate (a latency, an error rate over the fleet), so one is always
//! decisive: `--failure-limit` does not weigh it. The preflight's
//! refusals (names CloudWatch does not know, an alarm already in ALARM
//! before anything changed) are here too.

use crate::roll::ports::auto_scaling::AlarmState;
use crate::roll::record::checkpoint::utc;

use super::failure::Evidence;

/// The first watched alarm in ALARM, in the order the roll names them,
/// unless that episode was acknowledged (`--acknowledge-failure`: the
/// same alarm going to ALARM again later is a new failure).
pub(crate) fn in_alarm(
    states: &[AlarmState],
    watched: &[String],
    acknowledged: &[String],
) -> Option<Evidence> {
    watched.iter().find_map(|name| {
        let alarm = states.iter().find(|a| &a.name == name && a.in_alarm())?;
        let since = alarm.updated.map(utc);
        let key = format!("alarm/{name}/{}", since.as_deref().unwrap_or("?"));
        if acknowledged.contains(&key) {
            return None;
        }
        let when = since.map(|t| format!(" since {t}")).unwrap_or_default();
        let reason = if alarm.reason.is_empty() {
            "(no reason given)"
        } else {
            alarm.reason.as_str()
        };
        Some(Evidence {
            key,
            app: None,
            task: None,
            agent: None,
            instance: None,
            what: format!("CloudWatch alarm {name} in ALARM{when}: {reason}"),
            since: alarm.updated,
        })
    })
}

/// Why the preflight refuses the watched alarms, if it does: names
/// CloudWatch does not know (a typo would leave the roll unwatched), or
/// an alarm already in ALARM (a roll cannot tell an alarm that was firing
/// before it from its own regression).
pub(crate) fn refusal(states: &[AlarmState], watched: &[String]) -> Option<String> {
    let unknown: Vec<&str> = watched
        .iter()
        .filter(|name| !states.iter().any(|a| &a.name == *name))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        return Some(format!(
            "CloudWatch knows no alarm named {} (alarms, --alarm): fix the name, or create the alarm first",
            unknown.join(", ")
        ));
    }
    let firing: Vec<String> = watched
        .iter()
        .filter_map(|name| states.iter().find(|a| &a.name == name && a.in_alarm()))
        .map(|a| format!("{} ({})", a.name, a.reason))
        .collect();
    if !firing.is_empty() {
        return Some(format!(
            "CloudWatch alarm {} already in ALARM before the roll: a roll cannot tell an alarm that \
             fired before it from its own regression. Start the roll once the alarm is back to OK, \
             or leave it out of alarms / --alarm",
            firing.join(", ")
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::roll::ports::auto_scaling::AlarmStateValue;

    fn alarm(name: &str, state: AlarmStateValue) -> AlarmState {
        AlarmState {
            name: name.to_string(),
            state,
            reason: "Threshold Crossed: p99 latency 900 ms".to_string(),
            updated: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000)),
        }
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_alarm_in_alarm_is_a_failure_with_its_reason_and_since_when() {
        let states = [
            alarm("errors", AlarmStateValue::Ok),
            alarm("latency", AlarmStateValue::Alarm),
        ];
        let found = in_alarm(&states, &names(&["errors", "latency"]), &[]).expect("a failure");
        assert_eq!(
            found.what,
            "CloudWatch alarm latency in ALARM since 2027-01-15T08:00:00Z: Threshold Crossed: p99 latency 900 ms"
        );
        assert_eq!(found.sentence(), found.what);
        assert!(found.app.is_none() && found.agent.is_none());
    }

    #[test]
    fn ok_insufficient_data_and_unwatched_alarms_are_no_failure() {
        let states = [
            alarm("errors", AlarmStateValue::Ok),
            alarm("latency", AlarmStateValue::InsufficientData),
            alarm("other", AlarmStateValue::Alarm),
        ];
        assert_eq!(in_alarm(&states, &names(&["errors", "latency"]), &[]), None);
    }

    #[test]
    fn an_acknowledged_alarm_episode_is_not_found_again_but_a_new_one_is() {
        let mut states = [alarm("latency", AlarmStateValue::Alarm)];
        let watched = names(&["latency"]);
        let first = in_alarm(&states, &watched, &[]).expect("a failure");
        assert_eq!(
            in_alarm(&states, &watched, std::slice::from_ref(&first.key)),
            None
        );
        states[0].updated = states[0].updated.map(|t| t + Duration::from_secs(600));
        assert!(in_alarm(&states, &watched, &[first.key]).is_some());
    }

    #[test]
    fn the_preflight_refuses_unknown_names_then_alarms_already_firing() {
        let states = [
            alarm("errors", AlarmStateValue::Ok),
            alarm("latency", AlarmStateValue::Alarm),
        ];
        let unknown = refusal(&states, &names(&["errors", "latnecy"])).expect("refused");
        assert!(unknown.contains("no alarm named latnecy"), "{unknown}");
        let firing = refusal(&states, &names(&["errors", "latency"])).expect("refused");
        assert!(firing.contains("latency (Threshold Crossed"), "{firing}");
        assert!(firing.contains("cannot tell"), "{firing}");
        assert_eq!(refusal(&states, &names(&["errors"])), None);
    }
}
