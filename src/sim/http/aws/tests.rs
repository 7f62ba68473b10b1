//! Contract tests: the roller's real AWS adapter (`crate::aws`) against the
//! facade serving the `demo` world on loopback, mirroring the adapter's
//! moto tests (`aws::moto_tests`). Where moto is looser than AWS, the test
//! is named after the difference and shows the facade doing what AWS does.
//! The world runs at time scale 1 on real time: nothing here waits for
//! simulated events, and real sockets need a running clock.

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime};

use aws_sdk_autoscaling::config::Credentials;
use aws_sdk_autoscaling::error::ProvideErrorMetadata;

use crate::aws::{AwsAutoScaling, AwsError, AwsSettings, AwsTimeouts};
use crate::roll::ports::auto_scaling::{
    AutoScaling, GroupTag, LaunchSource, LifecycleState, ScalingProcess, Termination,
};
use crate::sim::shared::{ApiFaults, SharedWorld, SimClock, SystemFaults};
use crate::sim::{Scenario, World};

const GROUP: &str = "mesos-agents-demo";
/// 2024-01-01T00:00:00Z, the scenarios' default epoch.
const EPOCH_S: u64 = 1_704_067_200;

/// The facade over a fresh `demo` world on 127.0.0.1:0; dropping it stops
/// the server.
struct Sim {
    url: String,
    world: SharedWorld,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Sim {
    async fn start() -> Sim {
        let scenario = Scenario::builtin("demo")
            .expect("demo is embedded")
            .expect("demo is valid");
        let world = SharedWorld::new(World::new(&scenario), SimClock::new(1.0));
        let app = super::router(world.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Sim { url, world, task }
    }

    fn settings(&self, attempts: u32, page_size: Option<u32>) -> AwsSettings {
        AwsSettings {
            region: Some("us-east-1".to_string()),
            endpoint_url: Some(self.url.clone()),
            timeouts: AwsTimeouts {
                connect: Duration::from_secs(1),
                read: Duration::from_secs(2),
                attempt: Duration::from_secs(3),
                operation: Duration::from_secs(8),
            },
            max_attempts: attempts,
            page_size,
            ..AwsSettings::default()
        }
    }

    async fn sdk(&self, attempts: u32, page_size: Option<u32>) -> aws_config::SdkConfig {
        self.settings(attempts, page_size)
            .loader()
            .credentials_provider(Credentials::new("AKIDSIM", "sim-secret", None, None, "sim"))
            .load()
            .await
    }

    /// The adapter as the roller builds it, with dummy credentials.
    async fn adapter(&self) -> AwsAutoScaling {
        self.adapter_with(1, None).await
    }

    async fn adapter_with(&self, attempts: u32, page_size: Option<u32>) -> AwsAutoScaling {
        AwsAutoScaling::new(&self.sdk(attempts, page_size).await, page_size)
    }

    /// The raw SDK clients, for what the adapter refuses before sending.
    async fn raw(&self) -> (aws_sdk_autoscaling::Client, aws_sdk_ec2::Client) {
        let sdk = self.sdk(1, None).await;
        (
            aws_sdk_autoscaling::Client::new(&sdk),
            aws_sdk_ec2::Client::new(&sdk),
        )
    }

    fn calls(&self, action: &str) -> u64 {
        self.world.with(|w| {
            w.report()
                .api_calls
                .get(&format!("aws:{action}"))
                .copied()
                .unwrap_or(0)
        })
    }

    /// A raw form POST, for what no SDK would send.
    async fn post(&self, body: &str) -> (u16, String) {
        let response = reqwest::Client::new()
            .post(&self.url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.to_string())
            .send()
            .await
            .expect("post");
        let status = response.status().as_u16();
        (status, response.text().await.expect("body"))
    }
}

fn tag(k: &str, v: &str, p: bool) -> GroupTag {
    GroupTag {
        key: k.to_string(),
        value: v.to_string(),
        propagate_at_launch: p,
    }
}

#[tokio::test]
async fn describe_group_reports_sizes_instances_launch_template_and_azs() {
    let sim = Sim::start().await;
    let g = sim
        .adapter()
        .await
        .describe_group(GROUP)
        .await
        .expect("describe");
    assert_eq!(g.name, GROUP);
    assert_eq!((g.min_size, g.max_size, g.desired_capacity), (12, 24, 12));
    assert_eq!(
        g.availability_zones,
        ["us-east-1a", "us-east-1b", "us-east-1c"]
    );
    assert!(g.suspended_processes.is_empty());
    assert_eq!(g.tags, vec![tag("Environment", "demo", false)]);
    match &g.launch_source {
        Some(LaunchSource::Template { id, name, version }) => {
            assert!(
                id.as_deref().is_some_and(|id| id.starts_with("lt-0")),
                "{id:?}"
            );
            assert_eq!(name.as_deref(), Some("mesos-agent"));
            assert_eq!(version.as_deref(), Some("7"));
        }
        other => panic!("expected the group's launch template, got {other:?}"),
    }
    assert_eq!(g.instances.len(), 12);
    for az in &g.availability_zones {
        let n = g
            .instances
            .iter()
            .filter(|i| &i.availability_zone == az)
            .count();
        assert_eq!(n, 4, "{az}");
    }
    for i in &g.instances {
        assert!(i.id.starts_with("i-0") && i.id.len() == 19, "{}", i.id);
        assert_eq!(i.lifecycle_state, LifecycleState::InService);
        assert_eq!(i.health_status, "Healthy");
        assert!(!i.protected_from_scale_in);
        assert_eq!(i.launch_source, g.launch_source);
    }
    assert_eq!(sim.calls("DescribeAutoScalingGroups"), 1);
}

#[tokio::test]
async fn the_group_xml_parses_with_the_sdk_down_to_the_fields_the_adapter_ignores() {
    let sim = Sim::start().await;
    let (asg, _) = sim.raw().await;
    let out = asg
        .describe_auto_scaling_groups()
        .auto_scaling_group_names(GROUP)
        .send()
        .await
        .expect("describe");
    assert_eq!(out.next_token(), None);
    let g = &out.auto_scaling_groups()[0];
    assert!(
        g.auto_scaling_group_arn().is_some_and(|a| a
            .starts_with("arn:aws:autoscaling:us-east-1:123456789012:autoScalingGroup:")
            && a.ends_with(":autoScalingGroupName/mesos-agents-demo")),
        "{:?}",
        g.auto_scaling_group_arn()
    );
    assert_eq!(g.created_time().map(|t| t.secs()), Some(EPOCH_S as i64));
    assert_eq!(g.health_check_type(), Some("EC2"));
    assert_eq!(g.default_cooldown(), Some(300));
    assert_eq!(g.termination_policies(), ["Default"]);
    assert_eq!(
        g.vpc_zone_identifier().map(|s| s.split(',').count()),
        Some(3)
    );
    assert_eq!(g.tags()[0].resource_type(), Some("auto-scaling-group"));
    assert_eq!(g.tags()[0].resource_id(), Some(GROUP));
    assert_eq!(g.instances()[0].instance_type(), Some("m5.2xlarge"));

    // Unknown names are left out, as AWS does: an empty list, no error.
    let none = asg
        .describe_auto_scaling_groups()
        .auto_scaling_group_names("nope")
        .send()
        .await
        .expect("describe unknown");
    assert!(none.auto_scaling_groups().is_empty());
}

#[tokio::test]
async fn an_unknown_group_is_an_error_naming_it_not_an_empty_success() {
    let sim = Sim::start().await;
    let aws = sim.adapter().await;
    let missing = "mesos-agents-missing";
    let err = aws
        .describe_group(missing)
        .await
        .expect_err("unknown group");
    assert_eq!(err.label(), "group_not_found");
    assert!(err.to_string().contains(missing), "{err}");
    for err in [
        aws.set_desired_capacity(missing, 1)
            .await
            .expect_err("set desired"),
        aws.suspend_processes(missing, &[ScalingProcess::AZRebalance])
            .await
            .expect_err("suspend"),
        aws.scaling_activities(missing, 10)
            .await
            .expect_err("activities"),
    ] {
        assert_eq!(err.label(), "group_not_found", "{err}");
    }

    // Sent anyway, a write on an unknown group is AWS's ValidationError,
    // which the adapter's mapping turns into the same label.
    let (asg, _) = sim.raw().await;
    let sent = asg
        .set_desired_capacity()
        .auto_scaling_group_name(missing)
        .desired_capacity(1)
        .send()
        .await
        .expect_err("unknown group");
    assert_eq!(sent.code(), Some("ValidationError"));
    let mapped = AwsError::from_sdk("SetDesiredCapacity", missing, sent);
    assert_eq!(mapped.label(), "group_not_found", "{mapped}");
}

#[tokio::test]
async fn simulator_difference_a_scale_up_is_pending_and_spread_over_the_emptiest_azs() {
    // moto puts a scale-up in service at once and in one AZ; AWS (and the
    // simulator) boots for minutes and balances the AZs.
    let sim = Sim::start().await;
    let aws = sim.adapter().await;
    aws.set_desired_capacity(GROUP, 15)
        .await
        .expect("set desired");
    let g = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(g.desired_capacity, 15);
    assert_eq!(g.instances.len(), 15);
    let pending: Vec<_> = g
        .instances
        .iter()
        .filter(|i| i.lifecycle_state == LifecycleState::Pending)
        .collect();
    assert_eq!(pending.len(), 3);
    let azs: BTreeSet<&str> = pending
        .iter()
        .map(|i| i.availability_zone.as_str())
        .collect();
    assert_eq!(azs.len(), 3, "one new instance per AZ: {azs:?}");
}

#[tokio::test]
async fn simulator_difference_desired_above_max_size_is_refused_like_aws_not_accepted_like_moto() {
    let sim = Sim::start().await;
    let aws = sim.adapter().await;
    let err = aws
        .set_desired_capacity(GROUP, 25)
        .await
        .expect_err("over max");
    assert_eq!(err.label(), "refused");
    assert!(err.to_string().contains("MaxSize 24"), "{err}");

    // Sent anyway, the facade answers AWS's ValidationError (moto accepts).
    let (asg, _) = sim.raw().await;
    let sent = asg
        .set_desired_capacity()
        .auto_scaling_group_name(GROUP)
        .desired_capacity(25)
        .send()
        .await
        .expect_err("AWS refuses desired > MaxSize");
    assert_eq!(sent.code(), Some("ValidationError"));
    assert!(
        sent.message()
            .is_some_and(|m| m.contains("above max value 24")),
        "{:?}",
        sent.message()
    );
    assert_eq!(
        AwsError::from_sdk("SetDesiredCapacity", GROUP, sent).label(),
        "validation"
    );
    let g = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(g.desired_capacity, 12);
}

#[tokio::test]
async fn terminate_decrements_desired_and_a_second_terminate_is_already_gone() {
    let sim = Sim::start().await;
    let aws = sim.adapter().await;
    aws.update_size_limits(GROUP, 0, 24)
        .await
        .expect("lower MinSize");
    let victim = aws.describe_group(GROUP).await.expect("describe").instances[0]
        .id
        .clone();

    match aws
        .terminate_instance(GROUP, &victim)
        .await
        .expect("terminate")
    {
        Termination::Started(activity) => {
            assert!(!activity.id.is_empty());
            assert_eq!(activity.status, "InProgress");
            assert!(
                activity.description.contains(&victim),
                "{}",
                activity.description
            );
            assert!(activity.start_time.is_some() && activity.end_time.is_none());
        }
        other => panic!("expected Started, got {other:?}"),
    }
    let after = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(after.desired_capacity, 11);
    // moto drops the instance at once; AWS lists it Terminating meanwhile.
    assert_eq!(
        after.instance(&victim).map(|i| i.lifecycle_state.clone()),
        Some(LifecycleState::Terminating)
    );
    assert_eq!(
        aws.terminate_instance(GROUP, &victim).await.expect("again"),
        Termination::AlreadyGone
    );
    assert_eq!(
        aws.describe_group(GROUP)
            .await
            .expect("describe")
            .desired_capacity,
        11
    );
    assert_eq!(sim.calls("TerminateInstanceInAutoScalingGroup"), 1);
}

#[tokio::test]
async fn simulator_difference_a_terminate_below_min_size_is_refused_like_aws() {
    let sim = Sim::start().await;
    let aws = sim.adapter().await;
    let victim = aws.describe_group(GROUP).await.expect("describe").instances[0]
        .id
        .clone();
    let err = aws
        .terminate_instance(GROUP, &victim)
        .await
        .expect_err("below min");
    assert_eq!(err.label(), "refused");
    assert!(err.to_string().contains("MinSize 12"), "{err}");

    // Sent anyway: AWS's ValidationError (moto decrements below MinSize).
    let (asg, _) = sim.raw().await;
    let sent = asg
        .terminate_instance_in_auto_scaling_group()
        .instance_id(&victim)
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .expect_err("AWS refuses");
    assert_eq!(sent.code(), Some("ValidationError"));
    assert!(
        sent.message().is_some_and(|m| m.contains("min size")),
        "{:?}",
        sent.message()
    );
    let g = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(g.desired_capacity, 12);
    assert_eq!(
        g.instance(&victim).map(|i| i.lifecycle_state.clone()),
        Some(LifecycleState::InService)
    );
}

#[tokio::test]
async fn suspend_and_resume_touch_exactly_the_listed_processes() {
    let sim = Sim::start().await;
    let aws = sim.adapter().await;
    let suspended = |g: &crate::roll::ports::auto_scaling::AutoScalingGroup| {
        g.suspended_processes
            .iter()
            .cloned()
            .collect::<BTreeSet<_>>()
    };
    aws.suspend_processes(GROUP, &[ScalingProcess::AZRebalance])
        .await
        .expect("suspend");
    let g = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(suspended(&g), BTreeSet::from([ScalingProcess::AZRebalance]));

    aws.suspend_processes(
        GROUP,
        &[
            ScalingProcess::HealthCheck,
            ScalingProcess::ReplaceUnhealthy,
        ],
    )
    .await
    .expect("suspend two more");
    aws.resume_processes(GROUP, &[ScalingProcess::AZRebalance])
        .await
        .expect("resume");
    let g = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(
        suspended(&g),
        BTreeSet::from([
            ScalingProcess::HealthCheck,
            ScalingProcess::ReplaceUnhealthy
        ])
    );
    for err in [
        aws.suspend_processes(GROUP, &[])
            .await
            .expect_err("empty suspend"),
        aws.resume_processes(GROUP, &[])
            .await
            .expect_err("empty resume"),
    ] {
        assert_eq!(err.label(), "refused", "{err}");
    }

    // A process AWS does not know is its ValidationError.
    let err = aws
        .suspend_processes(GROUP, &[ScalingProcess::Other("Nap".into())])
        .await
        .expect_err("unknown process");
    assert_eq!(err.label(), "validation", "{err}");
    assert_eq!(
        suspended(&aws.describe_group(GROUP).await.expect("describe")).len(),
        2
    );
}

#[tokio::test]
async fn size_limits_change_only_when_they_keep_the_desired_capacity() {
    let sim = Sim::start().await;
    let aws = sim.adapter().await;
    aws.update_size_limits(GROUP, 0, 30).await.expect("update");
    let g = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!((g.min_size, g.max_size, g.desired_capacity), (0, 30, 12));
    for (min, max) in [(3, 2), (0, 11), (13, 20)] {
        let err = aws
            .update_size_limits(GROUP, min, max)
            .await
            .expect_err("refused");
        assert_eq!(err.label(), "refused", "{min}..{max}: {err}");
    }

    // Sent anyway, AWS's rule min <= max is the facade's too.
    let (asg, _) = sim.raw().await;
    let sent = asg
        .update_auto_scaling_group()
        .auto_scaling_group_name(GROUP)
        .min_size(5)
        .max_size(4)
        .send()
        .await
        .expect_err("min > max");
    assert_eq!(sent.code(), Some("ValidationError"));
    let g = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!((g.min_size, g.max_size), (0, 30));
}

#[tokio::test]
async fn tags_round_trip_create_overwrite_and_delete() {
    let sim = Sim::start().await;
    let aws = sim.adapter().await;
    aws.put_tags(
        GROUP,
        &[tag("roller:plan", "p-1", false), tag("team", "infra", true)],
    )
    .await
    .expect("put");
    let g = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(g.tag("roller:plan"), Some("p-1"));
    assert!(g.tags.contains(&tag("team", "infra", true)), "{:?}", g.tags);

    aws.put_tags(GROUP, &[tag("roller:plan", "p-2", false)])
        .await
        .expect("overwrite");
    aws.delete_tags(GROUP, &["team".to_string()])
        .await
        .expect("delete");
    let g = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(
        g.tags,
        vec![
            tag("Environment", "demo", false),
            tag("roller:plan", "p-2", false)
        ]
    );
}

#[tokio::test]
async fn simulator_difference_scaling_activities_are_recorded_newest_first_across_pages() {
    // moto records none; AWS (and the simulator) records every launch and
    // termination. 12 launches and 1 termination, 5 per page: 3 pages.
    let sim = Sim::start().await;
    let aws = sim.adapter_with(1, Some(5)).await;
    aws.update_size_limits(GROUP, 0, 24)
        .await
        .expect("lower MinSize");
    let victim = aws.describe_group(GROUP).await.expect("describe").instances[3]
        .id
        .clone();
    aws.terminate_instance(GROUP, &victim)
        .await
        .expect("terminate");

    let all = aws
        .scaling_activities(GROUP, 100)
        .await
        .expect("activities");
    assert_eq!(all.len(), 13);
    assert_eq!(sim.calls("DescribeScalingActivities"), 3);
    assert_eq!(all[0].status, "InProgress");
    assert!(
        all[0].description.contains(&victim),
        "{}",
        all[0].description
    );
    assert!(all[0].cause.contains("user request"), "{}", all[0].cause);
    for a in &all[1..] {
        assert_eq!(a.status, "Successful", "{a:?}");
        assert!(
            a.description
                .starts_with("Launching a new EC2 instance: i-0"),
            "{}",
            a.description
        );
        assert_eq!(
            a.start_time,
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(EPOCH_S))
        );
        assert!(a.end_time.is_some());
    }
    let ids: BTreeSet<&str> = all.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids.len(), 13, "no activity twice across pages");

    let first = aws.scaling_activities(GROUP, 2).await.expect("two");
    assert_eq!(first.len(), 2);
    assert_eq!(first[0].id, all[0].id);
}

#[tokio::test]
async fn describe_instances_pages_through_reservations_with_private_addresses() {
    let sim = Sim::start().await;
    let aws = sim.adapter_with(1, Some(5)).await;
    let g = aws.describe_group(GROUP).await.expect("describe");
    let mut asked: Vec<String> = g.instances.iter().map(|i| i.id.clone()).collect();
    asked.push("i-00000000000000000".to_string());
    let found = aws
        .describe_instances(&asked)
        .await
        .expect("describe instances");
    // 12 instances, 5 per page: 3 pages; the unknown id is simply absent.
    assert_eq!(sim.calls("DescribeInstances"), 3);
    assert_eq!(
        found.iter().map(|i| i.id.as_str()).collect::<BTreeSet<_>>(),
        g.instances
            .iter()
            .map(|i| i.id.as_str())
            .collect::<BTreeSet<_>>()
    );
    for i in &found {
        let ip = i.private_ip.expect("private ip").to_string();
        assert!(ip.starts_with("10.0."), "{ip}");
        assert_eq!(
            i.private_dns_name.as_deref(),
            Some(format!("ip-{}.ec2.internal", ip.replace('.', "-")).as_str())
        );
        assert_eq!(i.state, "running");
        assert_eq!(
            i.launch_time,
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(EPOCH_S))
        );
        let az = i.availability_zone.clone().expect("az");
        assert_eq!(
            g.instance(&i.id).map(|gi| gi.availability_zone.clone()),
            Some(az)
        );
    }
    assert!(aws.describe_instances(&[]).await.expect("none").is_empty());
}

#[tokio::test]
async fn ec2_instance_ids_asked_by_name_must_exist_as_on_ec2() {
    let sim = Sim::start().await;
    let (_, ec2) = sim.raw().await;
    let known = sim
        .adapter()
        .await
        .describe_group(GROUP)
        .await
        .expect("describe")
        .instances[0]
        .id
        .clone();
    let out = ec2
        .describe_instances()
        .instance_ids(&known)
        .send()
        .await
        .expect("known id");
    let instances: Vec<_> = out
        .reservations()
        .iter()
        .flat_map(|r| r.instances())
        .collect();
    assert_eq!(instances.len(), 1);
    assert_eq!(instances[0].instance_id(), Some(known.as_str()));
    assert_eq!(
        instances[0].state().and_then(|s| s.code()),
        Some(16),
        "running is code 16"
    );

    let err = ec2
        .describe_instances()
        .instance_ids("i-0000000000000dead")
        .send()
        .await
        .expect_err("unknown id");
    assert_eq!(err.code(), Some("InvalidInstanceID.NotFound"));
    assert!(
        err.message()
            .is_some_and(|m| m.contains("i-0000000000000dead"))
    );

    let err = ec2
        .describe_instances()
        .instance_ids(&known)
        .max_results(5)
        .send()
        .await
        .expect_err("ids with MaxResults");
    assert_eq!(err.code(), Some("InvalidParameterCombination"));
}

#[tokio::test]
async fn a_throttling_fault_is_retried_by_the_sdk_then_reported_as_throttled() {
    let sim = Sim::start().await;
    sim.world.set_api_faults(ApiFaults {
        aws_throttle_rate: 1.0,
        ..ApiFaults::default()
    });
    let aws = sim.adapter_with(2, None).await;
    let err = aws.describe_group(GROUP).await.expect_err("throttled");
    assert_eq!(err.label(), "throttled", "{err}");
    assert!(err.is_transient());
    assert_eq!(sim.calls("DescribeAutoScalingGroups"), 2, "one retry");
    let err = aws
        .describe_instances(&["i-0123".to_string()])
        .await
        .expect_err("EC2 throttled too");
    assert_eq!(err.label(), "throttled", "{err}");

    sim.world.set_api_faults(ApiFaults::default());
    aws.describe_group(GROUP).await.expect("answers again");
}

#[tokio::test]
async fn an_error_fault_is_unavailable_and_latency_delays_every_answer() {
    let sim = Sim::start().await;
    sim.world.set_api_faults(ApiFaults {
        aws: SystemFaults {
            error_rate: 1.0,
            latency_ms: 0,
        },
        ..ApiFaults::default()
    });
    let aws = sim.adapter().await;
    let err = aws.describe_group(GROUP).await.expect_err("5xx");
    assert_eq!(err.label(), "unavailable", "{err}");
    let err = aws
        .describe_instances(&["i-0123".to_string()])
        .await
        .expect_err("5xx");
    assert_eq!(err.label(), "unavailable", "{err}");

    sim.world.set_api_faults(ApiFaults {
        aws: SystemFaults {
            error_rate: 0.0,
            latency_ms: 300,
        },
        ..ApiFaults::default()
    });
    let started = Instant::now();
    aws.describe_group(GROUP).await.expect("slow but fine");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn unknown_actions_get_each_services_error_document() {
    let sim = Sim::start().await;
    let (status, body) = sim.post("Action=Frobnicate&Version=2011-01-01").await;
    assert_eq!(status, 400);
    assert!(
        body.contains(r#"<ErrorResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/"><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>The action Frobnicate is not valid for this web service.</Message></Error><RequestId>"#),
        "{body}"
    );
    let (status, body) = sim.post("Action=RunInstances&Version=2016-11-15").await;
    assert_eq!(status, 400);
    assert!(
        body.contains("<Response><Errors><Error><Code>InvalidAction</Code>"),
        "{body}"
    );
    assert!(body.contains("<RequestID>"), "{body}");
    let (status, body) = sim.post("Version=2011-01-01").await;
    assert_eq!(status, 400);
    assert!(body.contains("<Code>MissingAction</Code>"), "{body}");
    // An action of one service under the other's version is not valid.
    let (status, body) = sim
        .post("Action=DescribeInstances&Version=2011-01-01")
        .await;
    assert_eq!(status, 400);
    assert!(body.contains("<Code>InvalidAction</Code>"), "{body}");
    assert_eq!(sim.calls("(unknown action)"), 2);
}

#[tokio::test]
async fn an_update_the_world_cannot_model_is_refused_not_ignored() {
    let sim = Sim::start().await;
    let (asg, _) = sim.raw().await;
    let err = asg
        .update_auto_scaling_group()
        .auto_scaling_group_name(GROUP)
        .health_check_type("ELB")
        .send()
        .await
        .expect_err("not modelled");
    assert_eq!(err.code(), Some("ValidationError"));
    assert!(err.message().is_some_and(|m| m.contains("HealthCheckType")));
}

#[test]
fn error_and_throttle_rates_share_the_draw_so_both_hold() {
    use super::injected_fault;
    use super::query::Service;
    let faults = ApiFaults {
        aws: SystemFaults {
            error_rate: 0.2,
            latency_ms: 0,
        },
        aws_throttle_rate: 0.5,
        ..ApiFaults::default()
    };
    let code = |draw: f64, service: Service| {
        injected_fault(&faults, service, draw, 0.9).map(|e| (e.status.as_u16(), e.code))
    };
    assert_eq!(
        code(0.1, Service::AutoScaling),
        Some((500, "InternalFailure".into()))
    );
    // Throttling covers half of the remaining 80 %: draws 0.2 .. 0.6.
    assert_eq!(
        code(0.5, Service::AutoScaling),
        Some((400, "Throttling".into()))
    );
    assert_eq!(
        code(0.5, Service::Ec2),
        Some((503, "RequestLimitExceeded".into()))
    );
    assert_eq!(code(0.61, Service::AutoScaling), None);
    assert_eq!(
        injected_fault(&ApiFaults::default(), Service::Ec2, 0.0, 0.0),
        None
    );
}
