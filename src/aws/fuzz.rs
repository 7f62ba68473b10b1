//! The AWS fuzz target's body (see `crate::fuzz_targets`): one answer of
//! AWS, handed to the SDK by an in-memory HTTP client, read by the
//! adapter's own operations. So the SDK parses the body (an error body of
//! the Query or EC2 protocol, or a result) and `error.rs` and `client.rs`
//! turn it into the port's types, exactly as for a real answer.
//!
//! The input's first byte chooses the operation (`% 6`) and the HTTP
//! status (`/ 6 % 5`, of `STATUSES`); the rest is the body. The seeds in
//! `fuzz/seeds/aws/` start with a printable such byte (`<` is the first
//! operation with the first status).
//!
//! The first operation, DescribeAutoScalingGroups, is read twice: with the
//! group's instances read by `group_instances` and with the SDK decoding
//! all of it. The two must agree (the target panics if not).

use std::cell::RefCell;
use std::sync::Arc;

use aws_sdk_autoscaling::config::Credentials;
use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, SharedHttpConnector, http_client_fn,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::http::StatusCode;
use aws_smithy_types::body::SdkBody;

use super::{AwsAutoScaling, AwsSettings};
use crate::roll::ports::auto_scaling::{AutoScaling, ScalingProcess};

const GROUP: &str = "fuzz-asg";
const STATUSES: [u16; 5] = [400, 403, 500, 503, 200];

/// A group the writes' checks accept, answered to their
/// DescribeAutoScalingGroups so that the write itself reads the body.
const GROUP_XML: &str = "<DescribeAutoScalingGroupsResponse \
    xmlns=\"http://autoscaling.amazonaws.com/doc/2011-01-01/\"><DescribeAutoScalingGroupsResult>\
    <AutoScalingGroups><member><AutoScalingGroupName>fuzz-asg</AutoScalingGroupName>\
    <MinSize>1</MinSize><MaxSize>5</MaxSize><DesiredCapacity>3</DesiredCapacity>\
    <AvailabilityZones><member>us-east-1a</member></AvailabilityZones><Instances><member>\
    <InstanceId>i-1</InstanceId><AvailabilityZone>us-east-1a</AvailabilityZone>\
    <LifecycleState>InService</LifecycleState><HealthStatus>Healthy</HealthStatus>\
    <ProtectedFromScaleIn>false</ProtectedFromScaleIn></member></Instances></member>\
    </AutoScalingGroups></DescribeAutoScalingGroupsResult><ResponseMetadata>\
    <RequestId>r-1</RequestId></ResponseMetadata></DescribeAutoScalingGroupsResponse>";

/// What the in-memory HTTP client answers now.
#[derive(Clone, Default)]
struct Answer {
    status: u16,
    body: Arc<Vec<u8>>,
    /// Answer DescribeAutoScalingGroups with `GROUP_XML`, not the body.
    group_for_writes: bool,
}

thread_local! {
    static ANSWER: RefCell<Answer> = RefCell::default();
    /// One runtime and one adapter per thread: building them costs far
    /// more than one call.
    static ADAPTER: (tokio::runtime::Runtime, AwsAutoScaling) = adapter();
}

#[derive(Debug)]
struct Canned;

impl HttpConnector for Canned {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let answer = ANSWER.with(|a| a.borrow().clone());
        let describes_groups = request
            .body()
            .bytes()
            .is_some_and(|b| contains(b, b"Action=DescribeAutoScalingGroups"));
        let (status, body) = if answer.group_for_writes && describes_groups {
            (200, GROUP_XML.as_bytes().to_vec())
        } else {
            (answer.status, answer.body.to_vec())
        };
        let status = StatusCode::try_from(status).expect("a valid HTTP status");
        HttpConnectorFuture::ready(Ok(HttpResponse::new(status, SdkBody::from(body))))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The adapter as `AwsSettings::connect` builds it, on paused time (the
/// adapter's own backoff sleeps cost nothing), one attempt per call.
fn adapter() -> (tokio::runtime::Runtime, AwsAutoScaling) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a tokio runtime");
    let settings = AwsSettings {
        region: Some("us-east-1".to_string()),
        endpoint_url: Some("http://aws.fuzz.invalid".to_string()),
        max_attempts: 1,
        ..AwsSettings::default()
    };
    let sdk = runtime.block_on(
        settings
            .loader()
            .credentials_provider(Credentials::new("AKIDFUZZ", "fuzz", None, None, "fuzz"))
            .http_client(http_client_fn(|_, _| SharedHttpConnector::new(Canned)))
            .load(),
    );
    let adapter = AwsAutoScaling::new(&sdk, None);
    (runtime, adapter)
}

/// DescribeAutoScalingGroups answered `body` (200): the group as the
/// adapter reads it, its instances read by `group_instances`, and as it
/// reads it with the SDK decoding all of it (what the error says, if it
/// fails). The two must be the same.
#[cfg(test)]
pub(crate) fn describe_both(body: &[u8]) -> (String, String) {
    ANSWER.with(|a| {
        *a.borrow_mut() = Answer {
            status: 200,
            body: Arc::new(body.to_vec()),
            group_for_writes: false,
        }
    });
    describe_both_ways()
}

/// DescribeAutoScalingGroups answered `body` (200), read with roller
/// reading the instances or not: how many it read itself (`None`: the
/// SDK read them), and how many the SDK's group holds.
#[cfg(test)]
pub(crate) fn instances_read(body: &[u8], reads_instances: bool) -> (Option<usize>, usize) {
    describe_both(body);
    ADAPTER.with(|(runtime, aws)| {
        let mut aws = aws.clone();
        aws.reads_instances = reads_instances;
        let (raw, read) = runtime
            .block_on(aws.describe_raw(GROUP))
            .expect("a group the SDK reads");
        (read.map(|r| r.len()), raw.instances().len())
    })
}

fn describe_both_ways() -> (String, String) {
    ADAPTER.with(|(runtime, aws)| {
        let mut by_sdk = aws.clone();
        by_sdk.reads_instances = false;
        let show = |read: Result<_, super::AwsError>| match read {
            Ok(group) => format!("{group:?}"),
            Err(err) => format!("{err} [{}]", err.label()),
        };
        runtime.block_on(async {
            (
                show(aws.describe_group(GROUP).await),
                show(by_sdk.describe_group(GROUP).await),
            )
        })
    })
}

pub(crate) fn answers(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let operation = usize::from(selector) % 6;
    let status = STATUSES[usize::from(selector) / 6 % STATUSES.len()];
    ANSWER.with(|a| {
        *a.borrow_mut() = Answer {
            status,
            body: Arc::new(body.to_vec()),
            group_for_writes: operation >= 3,
        }
    });
    if operation == 0 {
        let (read_here, read_by_sdk) = describe_both_ways();
        assert_eq!(
            read_here, read_by_sdk,
            "the group's instances read by roller and by the SDK differ"
        );
        return;
    }
    ADAPTER.with(|(runtime, aws)| {
        let result: Result<String, super::AwsError> = runtime.block_on(async {
            Ok(match operation {
                1 => format!("{:?}", aws.scaling_activities(GROUP, 10).await?),
                2 => format!("{:?}", aws.describe_instances(&["i-1".to_string()]).await?),
                3 => format!("{:?}", aws.terminate_instance(GROUP, "i-1").await?),
                4 => format!("{:?}", aws.set_desired_capacity(GROUP, 4).await?),
                _ => format!(
                    "{:?}",
                    aws.suspend_processes(GROUP, &[ScalingProcess::AZRebalance])
                        .await?
                ),
            })
        });
        if let Err(err) = result {
            // What the roll shows and files under.
            let _ = (err.to_string(), err.label());
        }
    });
}
