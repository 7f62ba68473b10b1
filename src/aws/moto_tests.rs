//! The AWS adapter against moto (`scripts/with-moto cargo test aws`).
//!
//! All tests share one moto server and run in parallel: each builds its
//! own uniquely named VPC, subnets, launch template and group, and nothing
//! resets moto. Where moto is looser than AWS, a test named after the
//! difference shows moto's behaviour through the raw SDK and the adapter
//! following AWS's documented one.

use std::collections::BTreeSet;
use std::time::Duration;

use aws_sdk_autoscaling::types as asg;
use aws_sdk_ec2::types as ec2;

use super::{AwsAutoScaling, AwsSettings};
use crate::roll::ports::auto_scaling::{
    AutoScaling, GroupTag, LaunchSource, LifecycleState, ScalingProcess, Termination,
};

fn moto_url() -> String {
    match std::env::var("ROLLER_TEST_MOTO_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "ROLLER_TEST_MOTO_URL is unset: these tests need moto; run scripts/with-moto cargo test"
        ),
    }
}

/// One test's private corner of moto.
struct World {
    aws: AwsAutoScaling,
    asg: aws_sdk_autoscaling::Client,
    ec2: aws_sdk_ec2::Client,
    name: String,
    subnets: Vec<String>,
    template: String,
}

impl World {
    async fn new(test: &str) -> World {
        World::with_page_size(test, None).await
    }

    async fn with_page_size(test: &str, page_size: Option<u32>) -> World {
        let settings = AwsSettings {
            region: Some("us-east-1".to_string()),
            endpoint_url: Some(moto_url()),
            page_size,
            ..AwsSettings::default()
        };
        let aws = settings.connect().await.expect("connect to moto");
        let sdk = settings.loader().load().await;
        let asg = aws_sdk_autoscaling::Client::new(&sdk);
        let ec2 = aws_sdk_ec2::Client::new(&sdk);
        let name = format!("roller-{test}-{}", uuid::Uuid::new_v4().simple());

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
        for (n, az) in ["us-east-1a", "us-east-1b", "us-east-1c"]
            .iter()
            .enumerate()
        {
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
        World {
            aws,
            asg,
            ec2,
            name,
            subnets,
            template,
        }
    }

    /// Creates this test's group (named `self.name`) over the 3 subnets.
    async fn group(&self, min: i32, max: i32, desired: i32) -> &str {
        self.asg
            .create_auto_scaling_group()
            .auto_scaling_group_name(&self.name)
            .launch_template(
                asg::LaunchTemplateSpecification::builder()
                    .launch_template_name(&self.template)
                    .version("$Latest")
                    .build(),
            )
            .min_size(min)
            .max_size(max)
            .desired_capacity(desired)
            .vpc_zone_identifier(self.subnets.join(","))
            .send()
            .await
            .expect("create group");
        &self.name
    }
}

#[tokio::test]
async fn describe_group_reports_sizes_instances_launch_template_and_azs() {
    let w = World::new("describe").await;
    let group = w.group(1, 5, 3).await;
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!(g.name, group);
    assert_eq!((g.min_size, g.max_size, g.desired_capacity), (1, 5, 3));
    assert_eq!(
        g.availability_zones.iter().collect::<BTreeSet<_>>(),
        ["us-east-1a", "us-east-1b", "us-east-1c"]
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>()
            .iter()
            .collect()
    );
    assert!(g.suspended_processes.is_empty());
    assert_eq!(g.instances.len(), 3);
    match &g.launch_source {
        Some(LaunchSource::Template { name, .. }) => {
            assert_eq!(name.as_deref(), Some(w.template.as_str()))
        }
        other => panic!("expected the group's launch template, got {other:?}"),
    }
    for i in &g.instances {
        assert!(i.id.starts_with("i-"), "{}", i.id);
        assert!(g.availability_zones.contains(&i.availability_zone));
        assert_eq!(i.health_status, "Healthy");
        assert!(!i.protected_from_scale_in);
        assert!(matches!(
            i.launch_source,
            Some(LaunchSource::Template { .. })
        ));
    }
}

#[tokio::test]
async fn moto_difference_instances_are_in_service_at_once() {
    // Real AWS shows Pending for minutes; moto skips it. The roll waits on
    // InService and the Mesos agent, so it works with both.
    let w = World::new("inservice").await;
    let group = w.group(0, 4, 2).await;
    let g = w.aws.describe_group(group).await.expect("describe");
    assert!(
        g.instances
            .iter()
            .all(|i| i.lifecycle_state == LifecycleState::InService)
    );
}

#[tokio::test]
async fn moto_difference_one_launch_batch_lands_in_a_single_az() {
    // AWS spreads a scale-up over the emptiest AZs; moto puts a whole
    // batch in one random AZ. The simulator models AWS's balancing.
    let w = World::new("onaz").await;
    let group = w.group(0, 9, 6).await;
    let g = w.aws.describe_group(group).await.expect("describe");
    let azs: BTreeSet<&str> = g
        .instances
        .iter()
        .map(|i| i.availability_zone.as_str())
        .collect();
    assert_eq!(g.instances.len(), 6);
    assert_eq!(azs.len(), 1, "moto balanced after all? {azs:?}");
}

#[tokio::test]
async fn an_unknown_group_is_an_error_naming_it_not_an_empty_success() {
    let w = World::new("unknown").await;
    let missing = format!("{}-missing", w.name);
    let err = w
        .aws
        .describe_group(&missing)
        .await
        .expect_err("unknown group");
    assert_eq!(err.label(), "group_not_found");
    assert!(err.to_string().contains(&missing), "{err}");
    for err in [
        w.aws
            .set_desired_capacity(&missing, 1)
            .await
            .expect_err("set desired"),
        w.aws
            .suspend_processes(&missing, &[ScalingProcess::AZRebalance])
            .await
            .expect_err("suspend"),
        w.aws
            .scaling_activities(&missing, 10)
            .await
            .expect_err("activities"),
    ] {
        assert_eq!(err.label(), "group_not_found", "{err}");
    }
}

#[tokio::test]
async fn set_desired_capacity_moves_desired_and_the_group_follows() {
    let w = World::new("desired").await;
    let group = w.group(1, 6, 2).await;
    w.aws
        .set_desired_capacity(group, 4)
        .await
        .expect("set desired");
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!(g.desired_capacity, 4);
    assert_eq!(g.instances.len(), 4);
}

#[tokio::test]
async fn moto_difference_desired_above_max_size_is_refused_by_the_adapter() {
    let w = World::new("overmax").await;
    let group = w.group(1, 3, 2).await;
    let err = w
        .aws
        .set_desired_capacity(group, 4)
        .await
        .expect_err("over max");
    assert_eq!(err.label(), "refused");
    assert!(err.to_string().contains("MaxSize 3"), "{err}");
    assert_eq!(
        w.aws
            .describe_group(group)
            .await
            .expect("describe")
            .desired_capacity,
        2
    );

    // What moto itself does with the same request (AWS: ValidationError).
    w.asg
        .set_desired_capacity()
        .auto_scaling_group_name(group)
        .desired_capacity(4)
        .send()
        .await
        .expect("moto accepts desired > MaxSize");
    assert_eq!(
        w.aws
            .describe_group(group)
            .await
            .expect("describe")
            .desired_capacity,
        4
    );
}

#[tokio::test]
async fn terminate_decrements_desired_and_a_second_terminate_is_already_gone() {
    let w = World::new("terminate").await;
    let group = w.group(1, 5, 3).await;
    let before = w.aws.describe_group(group).await.expect("describe");
    let victim = before.instances[0].id.clone();

    match w
        .aws
        .terminate_instance(group, &victim)
        .await
        .expect("terminate")
    {
        Termination::Started(activity) => assert!(!activity.id.is_empty()),
        other => panic!("expected Started, got {other:?}"),
    }
    let after = w.aws.describe_group(group).await.expect("describe");
    assert_eq!(after.desired_capacity, 2);
    assert!(after.instance(&victim).is_none(), "moto drops it at once");
    assert_eq!(after.instances.len(), 2, "no replacement launched");

    assert_eq!(
        w.aws
            .terminate_instance(group, &victim)
            .await
            .expect("again"),
        Termination::AlreadyGone
    );
    assert_eq!(
        w.aws
            .describe_group(group)
            .await
            .expect("describe")
            .desired_capacity,
        2
    );
}

#[tokio::test]
async fn moto_difference_terminating_an_instance_no_group_holds_is_an_html_500() {
    let w = World::new("html500").await;
    let group = w.group(0, 5, 2).await;
    let victim = w
        .aws
        .describe_group(group)
        .await
        .expect("describe")
        .instances[0]
        .id
        .clone();
    w.aws
        .terminate_instance(group, &victim)
        .await
        .expect("terminate");

    // Sent anyway, moto answers an HTML 500 (AWS: a ValidationError); the
    // adapter maps it to "unavailable", and terminate_instance, which looks
    // before it writes, reports AlreadyGone without sending.
    let err = w.aws.send_terminate(&victim).await.expect_err("moto 500");
    assert_eq!(err.label(), "unavailable", "{err}");
    assert_eq!(
        w.aws
            .terminate_instance(group, &victim)
            .await
            .expect("check first"),
        Termination::AlreadyGone
    );
}

#[tokio::test]
async fn moto_difference_a_terminate_below_min_size_is_refused_by_the_adapter() {
    let w = World::new("belowmin").await;
    let group = w.group(2, 5, 2).await;
    let victim = w
        .aws
        .describe_group(group)
        .await
        .expect("describe")
        .instances[0]
        .id
        .clone();
    let err = w
        .aws
        .terminate_instance(group, &victim)
        .await
        .expect_err("below min");
    assert_eq!(err.label(), "refused");
    assert!(err.to_string().contains("MinSize 2"), "{err}");
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!(g.desired_capacity, 2);
    assert!(g.instance(&victim).is_some());

    // moto itself decrements below MinSize (AWS: ValidationError).
    w.asg
        .terminate_instance_in_auto_scaling_group()
        .instance_id(&victim)
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .expect("moto accepts the decrement");
    assert_eq!(
        w.aws
            .describe_group(group)
            .await
            .expect("describe")
            .desired_capacity,
        1
    );
}

#[tokio::test]
async fn suspend_and_resume_touch_exactly_the_listed_processes() {
    let w = World::new("processes").await;
    let group = w.group(0, 3, 1).await;
    let suspended = |g: &crate::roll::ports::auto_scaling::AutoScalingGroup| {
        g.suspended_processes
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>()
    };

    w.aws
        .suspend_processes(group, &[ScalingProcess::AZRebalance])
        .await
        .expect("suspend");
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!(suspended(&g), BTreeSet::from([ScalingProcess::AZRebalance]));

    w.aws
        .suspend_processes(
            group,
            &[
                ScalingProcess::HealthCheck,
                ScalingProcess::ReplaceUnhealthy,
            ],
        )
        .await
        .expect("suspend two more");
    w.aws
        .resume_processes(group, &[ScalingProcess::AZRebalance])
        .await
        .expect("resume");
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!(
        suspended(&g),
        BTreeSet::from([
            ScalingProcess::HealthCheck,
            ScalingProcess::ReplaceUnhealthy
        ])
    );

    // An empty list would mean all nine processes to AWS.
    for err in [
        w.aws
            .suspend_processes(group, &[])
            .await
            .expect_err("empty suspend"),
        w.aws
            .resume_processes(group, &[])
            .await
            .expect_err("empty resume"),
    ] {
        assert_eq!(err.label(), "refused", "{err}");
    }
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!(suspended(&g).len(), 2);
}

#[tokio::test]
async fn size_limits_change_only_when_they_keep_the_desired_capacity() {
    let w = World::new("limits").await;
    let group = w.group(1, 3, 2).await;
    w.aws
        .update_size_limits(group, 0, 10)
        .await
        .expect("update");
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!((g.min_size, g.max_size, g.desired_capacity), (0, 10, 2));

    for (min, max) in [(3, 2), (0, 1), (3, 5)] {
        let err = w
            .aws
            .update_size_limits(group, min, max)
            .await
            .expect_err("refused");
        assert_eq!(err.label(), "refused", "{min}..{max}: {err}");
    }
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!((g.min_size, g.max_size), (0, 10));
}

#[tokio::test]
async fn tags_round_trip_create_overwrite_and_delete() {
    let w = World::new("tags").await;
    let group = w.group(0, 2, 0).await;
    let tag = |k: &str, v: &str, p: bool| GroupTag {
        key: k.to_string(),
        value: v.to_string(),
        propagate_at_launch: p,
    };
    w.aws
        .put_tags(
            group,
            &[tag("roller:plan", "p-1", false), tag("team", "infra", true)],
        )
        .await
        .expect("put");
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!(g.tag("roller:plan"), Some("p-1"));
    assert!(g.tags.contains(&tag("team", "infra", true)));

    w.aws
        .put_tags(group, &[tag("roller:plan", "p-2", false)])
        .await
        .expect("overwrite");
    w.aws
        .delete_tags(group, &["team".to_string()])
        .await
        .expect("delete");
    let g = w.aws.describe_group(group).await.expect("describe");
    assert_eq!(g.tags, vec![tag("roller:plan", "p-2", false)]);
}

#[tokio::test]
async fn moto_difference_scaling_activities_of_a_known_group_are_an_empty_list() {
    // moto records no scaling activities at all; the paging and parsing of
    // real ones is tested against a scripted server in `aws::tests`.
    let w = World::new("activities").await;
    let group = w.group(0, 3, 1).await;
    let activities = w
        .aws
        .scaling_activities(group, 50)
        .await
        .expect("activities");
    assert!(activities.is_empty());
}

#[tokio::test]
async fn describe_instances_pages_through_reservations_and_skips_unknown_ids() {
    let w = World::with_page_size("instances", Some(5)).await;
    let mut ids = Vec::new();
    // One reservation per call, so 12 reservations: 3 pages of 5.
    for n in 0..12 {
        let out = w
            .ec2
            .run_instances()
            .image_id("ami-12c6146b")
            .min_count(1)
            .max_count(1)
            .subnet_id(&w.subnets[n % 3])
            .send()
            .await
            .expect("run instance");
        ids.push(out.instances()[0].instance_id().expect("id").to_string());
    }
    let mut asked = ids.clone();
    asked.push("i-00000000000000000".to_string());
    let found = w
        .aws
        .describe_instances(&asked)
        .await
        .expect("describe instances");
    assert_eq!(
        found.iter().map(|i| i.id.clone()).collect::<BTreeSet<_>>(),
        ids.iter().cloned().collect::<BTreeSet<_>>()
    );
    for i in &found {
        let ip = i.private_ip.expect("private ip");
        assert!(ip.to_string().starts_with("10.0."), "{ip}");
        assert!(i.private_dns_name.as_deref().is_some_and(|d| !d.is_empty()));
        assert_eq!(i.state, "running");
        assert!(i.launch_time.is_some());
        assert!(
            i.availability_zone
                .as_deref()
                .is_some_and(|az| az.starts_with("us-east-1"))
        );
    }
    assert!(
        w.aws
            .describe_instances(&[])
            .await
            .expect("none")
            .is_empty()
    );
}

#[tokio::test]
async fn group_instances_have_ec2_addresses() {
    let w = World::new("addresses").await;
    let group = w.group(0, 4, 3).await;
    let g = w.aws.describe_group(group).await.expect("describe");
    let ids: Vec<String> = g.instances.iter().map(|i| i.id.clone()).collect();
    let found = w
        .aws
        .describe_instances(&ids)
        .await
        .expect("describe instances");
    assert_eq!(found.len(), 3);
    assert!(found.iter().all(|i| i.private_ip.is_some()));
}

/// Only meaningful inside the child process that the next test starts:
/// no region, endpoint or credentials in the settings, so everything comes
/// from the environment chain. Answering "group not found" proves the call
/// reached moto through `AWS_ENDPOINT_URL`.
#[tokio::test]
#[ignore = "run in a child process by env_credentials_skip_imds_and_aws_endpoint_url_reaches_moto"]
async fn child_connects_through_the_environment_alone() {
    let started = std::time::Instant::now();
    let aws = AwsSettings::default().connect().await.expect("connect");
    // Asking the silent IMDS would cost at least its 1 s read timeout.
    let connecting = started.elapsed();
    assert!(
        connecting < Duration::from_millis(800),
        "connect took {connecting:?}"
    );
    let err = aws
        .describe_group("roller-child-probe-missing")
        .await
        .expect_err("no such group");
    assert_eq!(err.label(), "group_not_found", "{err}");
}

#[test]
fn env_credentials_skip_imds_and_aws_endpoint_url_reaches_moto() {
    let url = moto_url();
    // An IMDS that accepts and never answers: consulting it would cost the
    // IMDS client's timeouts (1 s and more), so the child's fast connect
    // proves the chain stopped at the environment's credentials.
    let imds = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let imds_url = format!("http://{}", imds.local_addr().expect("addr"));
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for socket in imds.incoming().flatten() {
            held.push(socket);
        }
    });
    let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "aws::moto_tests::child_connects_through_the_environment_alone",
            "--ignored",
        ])
        .env_remove("AWS_EC2_METADATA_DISABLED")
        .env("AWS_EC2_METADATA_SERVICE_ENDPOINT", &imds_url)
        .env("AWS_ENDPOINT_URL", &url)
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .output()
        .expect("run child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
