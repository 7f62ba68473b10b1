//! moto as a contract backend: a uniquely named VPC, subnets, launch
//! template and group per test on the one moto server that
//! `scripts/with-moto` starts (`ROLLER_TEST_MOTO_URL`). Nothing resets
//! moto, so tests run in parallel without seeing each other's groups.

use aws_sdk_autoscaling::types as asg;
use aws_sdk_ec2::types as ec2;

use super::{Backend, GroupSetup};
use crate::aws::{AwsAutoScaling, AwsSettings};

/// The moto server's URL. Missing, the test fails saying how to get one,
/// rather than passing without having checked anything.
pub(crate) fn moto_url() -> String {
    match std::env::var("ROLLER_TEST_MOTO_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "ROLLER_TEST_MOTO_URL is unset: these tests need moto; run scripts/with-moto cargo test"
        ),
    }
}

fn settings(page_size: Option<u32>) -> AwsSettings {
    AwsSettings {
        region: Some("us-east-1".to_string()),
        endpoint_url: Some(moto_url()),
        page_size,
        ..AwsSettings::default()
    }
}

/// One test's private corner of moto.
pub(crate) struct Moto {
    aws: AwsAutoScaling,
    asg: aws_sdk_autoscaling::Client,
    ec2: aws_sdk_ec2::Client,
    cloudwatch: aws_sdk_cloudwatch::Client,
    name: String,
    template: String,
}

impl Moto {
    /// The raw EC2 client, for what moto does on its own.
    pub(crate) fn raw_ec2(&self) -> &aws_sdk_ec2::Client {
        &self.ec2
    }

    async fn create_network(
        ec2: &aws_sdk_ec2::Client,
        name: &str,
        azs: &[&str],
    ) -> (Vec<String>, String) {
        let vpc = ec2
            .create_vpc()
            .cidr_block("10.0.0.0/16")
            .send()
            .await
            .expect("create vpc");
        let vpc_id = vpc
            .vpc()
            .and_then(|v| v.vpc_id())
            .expect("vpc id")
            .to_string();
        let mut subnets = Vec::new();
        for (n, az) in azs.iter().enumerate() {
            let subnet = ec2
                .create_subnet()
                .vpc_id(&vpc_id)
                .cidr_block(format!("10.0.{}.0/24", n + 1))
                .availability_zone(*az)
                .send()
                .await
                .expect("create subnet");
            subnets.push(
                subnet
                    .subnet()
                    .and_then(|s| s.subnet_id())
                    .expect("subnet id")
                    .to_string(),
            );
        }
        let template = format!("{name}-lt");
        ec2.create_launch_template()
            .launch_template_name(&template)
            .launch_template_data(
                ec2::RequestLaunchTemplateData::builder()
                    .image_id("ami-12c6146b")
                    .instance_type(ec2::InstanceType::T3Micro)
                    .build(),
            )
            .send()
            .await
            .expect("create launch template");
        (subnets, template)
    }
}

impl Backend for Moto {
    async fn provide(group: GroupSetup) -> Moto {
        let settings = settings(None);
        let aws = settings.connect().await.expect("connect to moto");
        let sdk = settings.loader().load().await;
        let asg = aws_sdk_autoscaling::Client::new(&sdk);
        let ec2 = aws_sdk_ec2::Client::new(&sdk);
        let cloudwatch = aws_sdk_cloudwatch::Client::new(&sdk);
        let name = format!("roller-contract-{}", uuid::Uuid::new_v4().simple());
        let (subnets, template) = Moto::create_network(&ec2, &name, group.azs).await;

        let tags = group
            .tags
            .iter()
            .map(|(k, v)| {
                asg::Tag::builder()
                    .resource_id(&name)
                    .resource_type("auto-scaling-group")
                    .key(*k)
                    .value(*v)
                    .propagate_at_launch(false)
                    .build()
            })
            .collect();
        asg.create_auto_scaling_group()
            .auto_scaling_group_name(&name)
            .launch_template(
                asg::LaunchTemplateSpecification::builder()
                    .launch_template_name(&template)
                    .version("$Latest")
                    .build(),
            )
            .min_size(0)
            .max_size(to_i32(group.max))
            .desired_capacity(0)
            .vpc_zone_identifier(subnets.join(","))
            .set_tags(Some(tags))
            .send()
            .await
            .expect("create group");
        // moto launches a whole batch as one reservation, where Auto
        // Scaling (and the simulator) gives each instance its own: grown
        // one instance at a time, the group's instances page alike.
        for desired in 1..=group.desired {
            asg.set_desired_capacity()
                .auto_scaling_group_name(&name)
                .desired_capacity(to_i32(desired))
                .send()
                .await
                .expect("grow group");
        }
        if group.min > 0 {
            asg.update_auto_scaling_group()
                .auto_scaling_group_name(&name)
                .min_size(to_i32(group.min))
                .send()
                .await
                .expect("raise MinSize");
        }
        Moto {
            aws,
            asg,
            ec2,
            cloudwatch,
            name,
            template,
        }
    }

    fn aws(&self) -> &AwsAutoScaling {
        &self.aws
    }

    async fn aws_paging_by(&self, page_size: u32) -> AwsAutoScaling {
        settings(Some(page_size))
            .connect()
            .await
            .expect("connect to moto")
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
        &self.name
    }

    fn launch_template(&self) -> &str {
        &self.template
    }

    fn calls(&self, _action: &str) -> Option<u64> {
        None
    }
}

fn to_i32(n: u32) -> i32 {
    i32::try_from(n).expect("a test's group size fits in i32")
}

contract_tests!(Moto);
