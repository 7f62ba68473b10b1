//! The CloudWatch actions over the world's alarms (`2010-08-01`, the
//! `awsQuery` protocol, as aws-sdk-cloudwatch up to 1.99 and moto speak
//! it): PutMetricAlarm, DescribeAlarms, SetAlarmState and DeleteAlarms,
//! their parameters read as the SDK sends them and their answers in
//! CloudWatch's XML (the API reference's `DescribeAlarms` response:
//! `MetricAlarms`/`member` with `AlarmName`, `AlarmArn`, `StateValue`,
//! `StateReason`, `StateUpdatedTimestamp`, …).

use super::ACCOUNT;
use super::query::{Params, QueryError, Service, page};
use super::xml::{Xml, timestamp};
use crate::sim::world::{ALARM_STATES, AlarmDefinition, AlarmView, World};

/// The CloudWatch actions the facade answers.
pub(super) const ACTIONS: &[&str] = &[
    "PutMetricAlarm",
    "DescribeAlarms",
    "SetAlarmState",
    "DeleteAlarms",
];

/// DescribeAlarms' MaxRecords: 1 to 100, default 50.
const DEFAULT_ALARM_PAGE: usize = 50;
const MAX_ALARM_PAGE: usize = 100;
/// AlarmNames holds at most 100 names.
const MAX_NAMES: usize = 100;

/// The answer to a CloudWatch action (`None` for other actions); an
/// answer's body is `None` for actions whose result is empty.
pub(super) fn dispatch(
    w: &mut World,
    action: &str,
    p: &Params,
) -> Option<Result<Option<String>, QueryError>> {
    Some(match action {
        "PutMetricAlarm" => put(w, p).map(|()| None),
        "DescribeAlarms" => describe(w, p).map(Some),
        "SetAlarmState" => set_state(w, p).map(|()| None),
        "DeleteAlarms" => {
            w.delete_alarms(&p.list("AlarmNames.member"));
            Ok(None)
        }
        _ => return None,
    })
}

fn put(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let name = p.required("AlarmName")?;
    let evaluation_periods = p
        .int("EvaluationPeriods")?
        .ok_or_else(|| missing("EvaluationPeriods"))?;
    let threshold = match p.get("Threshold") {
        None => None,
        Some(t) => Some(t.parse::<f64>().map_err(|_| {
            QueryError::invalid(
                Service::CloudWatch,
                format!("Value '{t}' for parameter Threshold is not a valid number"),
            )
        })?),
    };
    w.put_metric_alarm(AlarmDefinition {
        name: name.to_string(),
        namespace: p.get("Namespace").map(str::to_string),
        metric_name: p.get("MetricName").map(str::to_string),
        statistic: p.get("Statistic").map(str::to_string),
        period: p.int("Period")?,
        evaluation_periods,
        threshold,
        comparison_operator: p.required("ComparisonOperator")?.to_string(),
    });
    Ok(())
}

fn missing(name: &str) -> QueryError {
    QueryError::sender(
        "MissingParameter",
        format!("The request must contain the parameter {name}"),
    )
}

fn set_state(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let name = p.required("AlarmName")?;
    let state = p.required("StateValue")?;
    let reason = p.required("StateReason")?;
    if !ALARM_STATES.contains(&state) {
        return Err(QueryError::invalid(
            Service::CloudWatch,
            format!(
                "1 validation error detected: Value '{state}' at 'stateValue' failed to satisfy constraint: Member must satisfy enum value set: [INSUFFICIENT_DATA, ALARM, OK]"
            ),
        ));
    }
    w.set_alarm_state(name, state, reason).map_err(|message| {
        let mut err = QueryError::sender("ResourceNotFound", message);
        err.status = axum::http::StatusCode::NOT_FOUND;
        err
    })
}

/// DescribeAlarms by name (every alarm without names). Every world alarm
/// is a metric alarm: AlarmTypes without `MetricAlarm` finds none, and
/// without AlarmTypes AWS answers metric alarms only, which is all.
fn describe(w: &mut World, p: &Params) -> Result<String, QueryError> {
    let names = p.list("AlarmNames.member");
    if names.len() > MAX_NAMES {
        return Err(QueryError::invalid(
            Service::CloudWatch,
            format!(
                "1 validation error detected: Value at 'alarmNames' failed to satisfy constraint: Member must have length less than or equal to {MAX_NAMES}"
            ),
        ));
    }
    let types = p.list("AlarmTypes.member");
    let max = match p.int("MaxRecords")? {
        None => DEFAULT_ALARM_PAGE,
        Some(n) if (1..=MAX_ALARM_PAGE as i64).contains(&n) => n as usize,
        Some(n) => {
            return Err(QueryError::invalid(
                Service::CloudWatch,
                format!(
                    "1 validation error detected: Value '{n}' at 'maxRecords' failed to satisfy constraint: Member must have value between 1 and 100"
                ),
            ));
        }
    };
    let metric = types.is_empty() || types.iter().any(|t| t == "MetricAlarm");
    let alarms: Vec<AlarmView> = if !metric {
        Vec::new()
    } else if names.is_empty() {
        w.describe_all_alarms()
    } else {
        w.describe_alarms(&names)
    };
    let (alarms, next) = page(
        Service::CloudWatch,
        alarms,
        |a| a.definition.name.as_str(),
        p.get("NextToken"),
        max,
    )?;
    let mut x = Xml::new();
    x.open("MetricAlarms");
    for a in &alarms {
        metric_alarm(&mut x, a);
    }
    x.close("MetricAlarms");
    x.empty("CompositeAlarms");
    x.opt_leaf("NextToken", next);
    Ok(x.finish())
}

fn metric_alarm(x: &mut Xml, a: &AlarmView) {
    let d = &a.definition;
    x.open("member")
        .leaf("AlarmName", &d.name)
        .leaf(
            "AlarmArn",
            format!("arn:aws:cloudwatch:us-east-1:{ACCOUNT}:alarm:{}", d.name),
        )
        .leaf(
            "AlarmConfigurationUpdatedTimestamp",
            timestamp(a.configured_unix_ms),
        )
        .leaf("ActionsEnabled", "true")
        .empty("OKActions")
        .empty("AlarmActions")
        .empty("InsufficientDataActions")
        .leaf("StateValue", &a.state)
        .leaf("StateReason", &a.reason)
        .leaf("StateUpdatedTimestamp", timestamp(a.updated_unix_ms))
        .opt_leaf("MetricName", d.metric_name.as_deref())
        .opt_leaf("Namespace", d.namespace.as_deref())
        .opt_leaf("Statistic", d.statistic.as_deref())
        .empty("Dimensions")
        .opt_leaf("Period", d.period)
        .leaf("EvaluationPeriods", d.evaluation_periods)
        .opt_leaf("Threshold", d.threshold)
        .leaf("ComparisonOperator", &d.comparison_operator)
        .leaf("StateTransitionedTimestamp", timestamp(a.updated_unix_ms))
        .close("member");
}
