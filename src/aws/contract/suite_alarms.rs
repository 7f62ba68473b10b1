//! The contract test of the CloudWatch call (DescribeAlarms by name),
//! against moto and the simulator alike: an alarm put and set by another
//! client (the operator's tooling: PutMetricAlarm, SetAlarmState) reads
//! back through the adapter with its state, reason and time; a name
//! CloudWatch does not know is left out, not an error.

use std::time::Duration;

use aws_sdk_cloudwatch::types::{ComparisonOperator, StateValue, Statistic};

use super::{Backend, GroupSetup};
use crate::roll::ports::auto_scaling::{AlarmStateValue, AutoScaling};

pub(crate) async fn an_alarm_put_and_set_by_another_client_reads_back_with_its_state_and_reason<
    B: Backend,
>() {
    let b = B::provide(GroupSetup::sized(1, 4, 1)).await;
    // moto's alarms are shared by every test: a name of this test's own.
    let name = format!("{}-p99-latency", b.group());
    let missing = format!("{}-no-such-alarm", b.group());
    let cw = b.raw_cloudwatch();
    cw.put_metric_alarm()
        .alarm_name(&name)
        .namespace("Mesos/Apps")
        .metric_name("p99_latency_ms")
        .statistic(Statistic::Average)
        .period(60)
        .evaluation_periods(3)
        .threshold(500.0)
        .comparison_operator(ComparisonOperator::GreaterThanThreshold)
        .send()
        .await
        .expect("put the alarm");

    let aws = b.aws();
    let put = aws
        .describe_alarms(std::slice::from_ref(&name))
        .await
        .expect("described");
    assert_eq!(put.len(), 1, "{put:?}");
    assert_eq!(put[0].name, name);
    // AWS starts an alarm in INSUFFICIENT_DATA (the simulator too); moto
    // in OK. Neither is ALARM.
    assert!(
        matches!(
            put[0].state,
            AlarmStateValue::Ok | AlarmStateValue::InsufficientData
        ),
        "{put:?}"
    );
    assert!(!put[0].in_alarm());

    let reason = "Threshold Crossed: 3 datapoints [912.0, 880.5, 903.1] were greater than the threshold (500.0).";
    cw.set_alarm_state()
        .alarm_name(&name)
        .state_value(StateValue::Alarm)
        .state_reason(reason)
        .send()
        .await
        .expect("set the alarm's state");
    let firing = aws
        .describe_alarms(&[missing.clone(), name.clone()])
        .await
        .expect("described");
    assert_eq!(firing.len(), 1, "the unknown name is left out: {firing:?}");
    assert_eq!(firing[0].state, AlarmStateValue::Alarm);
    assert!(firing[0].in_alarm());
    assert_eq!(firing[0].reason, reason);
    let updated = firing[0].updated.expect("StateUpdatedTimestamp");
    let age = std::time::SystemTime::now()
        .duration_since(updated)
        .unwrap_or_default();
    // The simulator's clock starts at its scenario's epoch: only a time
    // that parses is asked of it.
    assert!(age < Duration::from_secs(10 * 365 * 86_400), "{updated:?}");

    let none = aws
        .describe_alarms(std::slice::from_ref(&missing))
        .await
        .expect("described");
    assert!(none.is_empty(), "{none:?}");
    assert!(
        aws.describe_alarms(&[]).await.expect("no call").is_empty(),
        "no names, nothing"
    );
    if let Some(calls) = b.calls("DescribeAlarms") {
        assert_eq!(calls, 3, "no names is no call");
    }
    cw.delete_alarms()
        .alarm_names(&name)
        .send()
        .await
        .expect("delete the alarm");
}
