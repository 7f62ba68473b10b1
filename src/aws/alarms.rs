//! The CloudWatch call of the AWS port over the SDK: DescribeAlarms by
//! name, metric and composite alarms alike (`AlarmTypes` names both: left
//! out, AWS answers metric alarms only), 100 names a request (AWS's
//! maximum), every page followed. Its client goes to the same endpoint as
//! Auto Scaling's (`AWS_ENDPOINT_URL`, the environment's
//! `aws_endpoint_url`): the simulator and moto answer CloudWatch there too.

use std::time::SystemTime;

use aws_sdk_cloudwatch::types::{AlarmType, StateValue};

use super::client::{AwsAutoScaling, next_token};
use super::error::AwsError;
use crate::roll::ports::auto_scaling::{AlarmState, AlarmStateValue};

/// AlarmNames.member.N holds at most 100 names.
const NAMES_PER_REQUEST: usize = 100;

impl AwsAutoScaling {
    pub(super) async fn describe_named_alarms(
        &self,
        names: &[String],
    ) -> Result<Vec<AlarmState>, AwsError> {
        const OP: &str = "DescribeAlarms";
        let mut found = Vec::new();
        for chunk in names.chunks(NAMES_PER_REQUEST) {
            let target = chunk.join(",");
            let mut token: Option<String> = None;
            loop {
                let out = self
                    .cloudwatch
                    .describe_alarms()
                    .set_alarm_names(Some(chunk.to_vec()))
                    .alarm_types(AlarmType::MetricAlarm)
                    .alarm_types(AlarmType::CompositeAlarm)
                    .set_next_token(token.clone())
                    .send()
                    .await
                    .map_err(|e| AwsError::from_sdk(OP, &target, e))?;
                for a in out.metric_alarms() {
                    found.push(alarm(
                        OP,
                        &target,
                        a.alarm_name(),
                        a.state_value(),
                        a.state_reason(),
                        a.state_updated_timestamp(),
                    )?);
                }
                for a in out.composite_alarms() {
                    found.push(alarm(
                        OP,
                        &target,
                        a.alarm_name(),
                        a.state_value(),
                        a.state_reason(),
                        a.state_updated_timestamp(),
                    )?);
                }
                token = next_token(OP, &target, token.as_deref(), out.next_token())?;
                if token.is_none() {
                    break;
                }
            }
        }
        Ok(found)
    }
}

/// One alarm of the answer; a nameless or stateless one is a bad answer.
fn alarm(
    operation: &'static str,
    target: &str,
    name: Option<&str>,
    state: Option<&StateValue>,
    reason: Option<&str>,
    updated: Option<&aws_sdk_cloudwatch::primitives::DateTime>,
) -> Result<AlarmState, AwsError> {
    let name =
        name.ok_or_else(|| AwsError::bad_response(operation, target, "an alarm without a name"))?;
    let state = state.ok_or_else(|| {
        AwsError::bad_response(
            operation,
            target,
            format!("alarm {name} without StateValue"),
        )
    })?;
    Ok(AlarmState {
        name: name.to_string(),
        state: AlarmStateValue::parse(state.as_str()),
        reason: reason.unwrap_or_default().to_string(),
        updated: updated.and_then(|t| SystemTime::try_from(*t).ok()),
    })
}
