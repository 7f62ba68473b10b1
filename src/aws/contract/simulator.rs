//! The simulator as a contract backend: a `Simulator` serving a scenario
//! built for the test (one group, no apps) on loopback, with its AWS
//! facade answering the adapter. It runs at time scale 1 on real time:
//! nothing here waits for simulated events, and real sockets need a
//! running clock. The facade's own tests (`sim::http::aws::tests`) start
//! it on other scenarios through `Simulated::start`.

use std::time::Duration;

use aws_sdk_autoscaling::config::Credentials;

use super::{Backend, GroupSetup};
use crate::aws::{AwsAutoScaling, AwsSettings, AwsTimeouts};
use crate::sim::shared::SharedWorld;
use crate::sim::{Scenario, SimOptions, Simulator};

/// The group of the scenarios `provide` builds.
const GROUP: &str = "mesos-agents-contract";

/// A running simulator and the adapter pointed at it; dropping it stops
/// the servers.
pub(crate) struct Simulated {
    sim: Simulator,
    aws: AwsAutoScaling,
    asg: aws_sdk_autoscaling::Client,
    ec2: aws_sdk_ec2::Client,
    cloudwatch: aws_sdk_cloudwatch::Client,
    group: String,
    template: String,
}

impl Simulated {
    /// Serves `scenario`; the adapter makes one attempt per call, so a
    /// test sees each request the facade answers.
    pub(crate) async fn start(scenario: &Scenario) -> Simulated {
        let sim = Simulator::start(scenario, SimOptions::default())
            .await
            .expect("start the simulator");
        let url = sim.endpoints().aws_endpoint_url.clone();
        let sdk = sdk(&url, 1, None).await;
        Simulated {
            aws: AwsAutoScaling::new(&sdk, None),
            asg: aws_sdk_autoscaling::Client::new(&sdk),
            ec2: aws_sdk_ec2::Client::new(&sdk),
            cloudwatch: aws_sdk_cloudwatch::Client::new(&sdk),
            group: scenario.group.name.clone(),
            template: scenario.group.launch_template.name.clone(),
            sim,
        }
    }

    /// The adapter with `attempts` per call (the SDK retries the rest)
    /// and the given page size.
    pub(crate) async fn adapter_with(
        &self,
        attempts: u32,
        page_size: Option<u32>,
    ) -> AwsAutoScaling {
        AwsAutoScaling::new(&sdk(self.url(), attempts, page_size).await, page_size)
    }

    /// The raw EC2 client, for what the adapter never sends.
    pub(crate) fn raw_ec2(&self) -> &aws_sdk_ec2::Client {
        &self.ec2
    }

    /// The facade's URL (`AWS_ENDPOINT_URL`).
    pub(crate) fn url(&self) -> &str {
        &self.sim.endpoints().aws_endpoint_url
    }

    pub(crate) fn world(&self) -> SharedWorld {
        self.sim.world()
    }

    /// A raw form POST, for what no SDK would send.
    pub(crate) async fn post(&self, body: &str) -> (u16, String) {
        let response = reqwest::Client::new()
            .post(self.url())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.to_string())
            .send()
            .await
            .expect("post");
        let status = response.status().as_u16();
        (status, response.text().await.expect("body"))
    }
}

/// Short timeouts: the facade is on loopback, and a test that hangs
/// should fail in seconds. Dummy credentials, so no developer's own are
/// read.
async fn sdk(url: &str, attempts: u32, page_size: Option<u32>) -> aws_config::SdkConfig {
    let settings = AwsSettings {
        region: Some("us-east-1".to_string()),
        endpoint_url: Some(url.to_string()),
        timeouts: AwsTimeouts {
            connect: Duration::from_secs(1),
            read: Duration::from_secs(2),
            attempt: Duration::from_secs(3),
            operation: Duration::from_secs(8),
        },
        max_attempts: attempts,
        page_size,
        ..AwsSettings::default()
    };
    settings
        .loader()
        .credentials_provider(Credentials::new("AKIDSIM", "sim-secret", None, None, "sim"))
        .load()
        .await
}

/// The scenario for one contract test: the group as asked, no apps.
/// Written as TOML so that it passes the same validation as any scenario.
fn scenario(group: &GroupSetup) -> Scenario {
    let quoted = |items: &[&str]| {
        items
            .iter()
            .map(|s| format!("{s:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let tags: String = group
        .tags
        .iter()
        .map(|(k, v)| format!("{k:?} = {v:?}\n"))
        .collect();
    let text = format!(
        r#"
description = "one group for an AWS contract test"

[group]
name = "{GROUP}"
min_size = {min}
max_size = {max}
desired_capacity = {desired}
availability_zones = [{azs}]

[group.tags]
{tags}"#,
        min = group.min,
        max = group.max,
        desired = group.desired,
        azs = quoted(group.azs),
    );
    Scenario::from_toml(&text, "contract").expect("a valid contract scenario")
}

impl Backend for Simulated {
    async fn provide(group: GroupSetup) -> Simulated {
        Simulated::start(&scenario(&group)).await
    }

    fn aws(&self) -> &AwsAutoScaling {
        &self.aws
    }

    async fn aws_paging_by(&self, page_size: u32) -> AwsAutoScaling {
        self.adapter_with(1, Some(page_size)).await
    }

    fn raw_auto_scaling(&self) -> &aws_sdk_autoscaling::Client {
        &self.asg
    }

    fn raw_ec2(&self) -> &aws_sdk_ec2::Client {
        &self.ec2
    }

    fn raw_cloudwatch(&self) -> &aws_sdk_cloudwatch::Client {
        &self.cloudwatch
    }

    fn group(&self) -> &str {
        &self.group
    }

    fn launch_template(&self) -> &str {
        &self.template
    }

    fn calls(&self, action: &str) -> Option<u64> {
        let key = format!("aws:{action}");
        Some(self.sim.report().api_calls.get(&key).copied().unwrap_or(0))
    }
}

contract_tests!(Simulated);
