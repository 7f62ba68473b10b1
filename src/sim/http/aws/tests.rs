//! The simulator's AWS facade beyond the contract: the adapter's protocol
//! tests run on it and on moto alike in `aws::contract`; here is what only
//! the simulator shows. `simulator_difference_*` tests show AWS's
//! documented behaviour where moto is looser (boot time, AZ balancing,
//! MaxSize and MinSize checked by the world, scaling activities); the rest
//! covers what no adapter call exercises: fields the adapter ignores, EC2
//! lookups by id, injected faults and malformed requests. All of it runs on
//! the `demo` world (12 instances over 3 AZs, MinSize 12, MaxSize 24).

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime};

use aws_sdk_autoscaling::error::ProvideErrorMetadata;

use crate::aws::AwsError;
use crate::aws::contract::Backend;
use crate::aws::contract::simulator::Simulated;
use crate::roll::ports::auto_scaling::{
    AutoScaling, LaunchSource, LifecycleState, ScalingProcess, Termination,
};
use crate::sim::Scenario;
use crate::sim::shared::{ApiFaults, SystemFaults};

const GROUP: &str = "mesos-agents-demo";
/// 2024-01-01T00:00:00Z: pinned here, since a served world otherwise
/// starts at the wall clock.
const EPOCH_S: u64 = 1_704_067_200;

/// The facade over a fresh `demo` world with a fixed epoch.
async fn demo() -> Simulated {
    let mut scenario = Scenario::builtin("demo")
        .expect("demo is embedded")
        .expect("demo is valid");
    scenario.timings.epoch_unix_s = Some(EPOCH_S);
    Simulated::start(&scenario).await
}

async fn first_instance(sim: &Simulated, n: usize) -> String {
    sim.aws()
        .describe_group(GROUP)
        .await
        .expect("describe")
        .instances[n]
        .id
        .clone()
}

#[tokio::test]
async fn simulator_difference_a_group_starts_balanced_over_its_azs_at_the_scenarios_epoch() {
    // moto puts a launch batch in one AZ; AWS (and the simulator) spreads
    // it. Every id, template and time is the scenario's, reproducibly.
    let sim = demo().await;
    let g = sim.aws().describe_group(GROUP).await.expect("describe");
    assert_eq!((g.min_size, g.max_size, g.desired_capacity), (12, 24, 12));
    assert_eq!(
        g.availability_zones,
        ["us-east-1a", "us-east-1b", "us-east-1c"]
    );
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
        assert!(i.id.starts_with("i-0"), "{}", i.id);
        assert_eq!(i.launch_source, g.launch_source);
    }

    let ids: Vec<String> = g.instances.iter().map(|i| i.id.clone()).collect();
    let found = sim
        .aws()
        .describe_instances(&ids)
        .await
        .expect("describe instances");
    assert_eq!(found.len(), 12);
    for i in &found {
        assert_eq!(
            i.launch_time,
            Some(SystemTime::UNIX_EPOCH + Duration::from_secs(EPOCH_S))
        );
    }
}

#[tokio::test]
async fn the_group_xml_parses_with_the_sdk_down_to_the_fields_the_adapter_ignores() {
    let sim = demo().await;
    let out = sim
        .raw_auto_scaling()
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
}

#[tokio::test]
async fn simulator_difference_a_write_on_an_unknown_group_sent_anyway_is_a_validation_error() {
    // moto answers an HTML 500; AWS a ValidationError, which the adapter's
    // mapping turns into the label its own check gives.
    let sim = demo().await;
    let missing = "mesos-agents-missing";
    let sent = sim
        .raw_auto_scaling()
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
async fn simulator_difference_a_process_aws_does_not_know_is_a_validation_error() {
    // moto suspends any name it is given.
    let sim = demo().await;
    let err = sim
        .aws()
        .suspend_processes(GROUP, &[ScalingProcess::Other("Nap".into())])
        .await
        .expect_err("unknown process");
    assert_eq!(err.label(), "validation", "{err}");
    let g = sim.aws().describe_group(GROUP).await.expect("describe");
    assert!(g.suspended_processes.is_empty());
}

#[tokio::test]
async fn simulator_difference_min_size_above_max_size_sent_anyway_is_a_validation_error() {
    // The adapter refuses it before sending (see the contract); moto
    // stores it, AWS answers a ValidationError.
    let sim = demo().await;
    let sent = sim
        .raw_auto_scaling()
        .update_auto_scaling_group()
        .auto_scaling_group_name(GROUP)
        .min_size(5)
        .max_size(4)
        .send()
        .await
        .expect_err("min > max");
    assert_eq!(sent.code(), Some("ValidationError"));
    let g = sim.aws().describe_group(GROUP).await.expect("describe");
    assert_eq!((g.min_size, g.max_size), (12, 24));
}

#[tokio::test]
async fn simulator_difference_a_scale_up_is_pending_and_spread_over_the_emptiest_azs() {
    // moto puts a scale-up in service at once and in one AZ; AWS (and the
    // simulator) boots for minutes and balances the AZs.
    let sim = demo().await;
    let aws = sim.aws();
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
async fn simulator_difference_desired_above_max_size_sent_anyway_is_refused_like_aws() {
    let sim = demo().await;
    let sent = sim
        .raw_auto_scaling()
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
    let g = sim.aws().describe_group(GROUP).await.expect("describe");
    assert_eq!(g.desired_capacity, 12);
}

#[tokio::test]
async fn simulator_difference_a_terminated_instance_is_listed_terminating_while_it_shuts_down() {
    // moto drops the instance at once and has the activity over; AWS lists
    // it Terminating, its activity InProgress, until EC2 has shut it down.
    let sim = demo().await;
    let aws = sim.aws();
    aws.update_size_limits(GROUP, 0, 24)
        .await
        .expect("lower MinSize");
    let victim = first_instance(&sim, 0).await;
    match aws
        .terminate_instance(GROUP, &victim)
        .await
        .expect("terminate")
    {
        Termination::Started(activity) => {
            assert_eq!(activity.status, "InProgress");
            assert!(activity.end_time.is_none());
        }
        other => panic!("expected Started, got {other:?}"),
    }
    let after = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(after.desired_capacity, 11);
    assert_eq!(
        after.instance(&victim).map(|i| i.lifecycle_state.clone()),
        Some(LifecycleState::Terminating)
    );
}

#[tokio::test]
async fn simulator_difference_a_terminate_below_min_size_sent_anyway_is_refused_like_aws() {
    // moto decrements below MinSize; AWS answers a ValidationError.
    let sim = demo().await;
    let victim = first_instance(&sim, 0).await;
    let sent = sim
        .raw_auto_scaling()
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
    let g = sim.aws().describe_group(GROUP).await.expect("describe");
    assert_eq!(g.desired_capacity, 12);
    assert_eq!(
        g.instance(&victim).map(|i| i.lifecycle_state.clone()),
        Some(LifecycleState::InService)
    );
}

#[tokio::test]
async fn simulator_difference_scaling_activities_are_recorded_newest_first_across_pages() {
    // moto records none; AWS (and the simulator) records every launch and
    // termination. 12 launches and 1 termination, 5 per page: 3 pages.
    let sim = demo().await;
    let aws = sim.adapter_with(1, Some(5)).await;
    aws.update_size_limits(GROUP, 0, 24)
        .await
        .expect("lower MinSize");
    let victim = first_instance(&sim, 3).await;
    aws.terminate_instance(GROUP, &victim)
        .await
        .expect("terminate");

    let all = aws
        .scaling_activities(GROUP, 100)
        .await
        .expect("activities");
    assert_eq!(all.len(), 13);
    assert_eq!(sim.calls("DescribeScalingActivities"), Some(3));
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
async fn ec2_instance_ids_asked_by_name_must_exist_as_on_ec2() {
    let sim = demo().await;
    let ec2 = sim.raw_ec2();
    let known = first_instance(&sim, 0).await;
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
    let sim = demo().await;
    sim.world().set_api_faults(ApiFaults {
        aws_throttle_rate: 1.0,
        ..ApiFaults::default()
    });
    let aws = sim.adapter_with(2, None).await;
    let err = aws.describe_group(GROUP).await.expect_err("throttled");
    assert_eq!(err.label(), "throttled", "{err}");
    assert!(err.is_transient());
    assert_eq!(sim.calls("DescribeAutoScalingGroups"), Some(2), "one retry");
    let err = aws
        .describe_instances(&["i-0123".to_string()])
        .await
        .expect_err("EC2 throttled too");
    assert_eq!(err.label(), "throttled", "{err}");

    sim.world().set_api_faults(ApiFaults::default());
    aws.describe_group(GROUP).await.expect("answers again");
}

#[tokio::test]
async fn an_error_fault_is_unavailable_and_latency_delays_every_answer() {
    let sim = demo().await;
    sim.world().set_api_faults(ApiFaults {
        aws: SystemFaults {
            error_rate: 1.0,
            latency_ms: 0,
        },
        ..ApiFaults::default()
    });
    let aws = sim.aws();
    let err = aws.describe_group(GROUP).await.expect_err("5xx");
    assert_eq!(err.label(), "unavailable", "{err}");
    let err = aws
        .describe_instances(&["i-0123".to_string()])
        .await
        .expect_err("5xx");
    assert_eq!(err.label(), "unavailable", "{err}");

    sim.world().set_api_faults(ApiFaults {
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
    let sim = demo().await;
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
    assert_eq!(sim.calls("(unknown action)"), Some(2));
}

/// The demo with a version 8 of its template published (it runs 7).
async fn demo_with_version_8() -> Simulated {
    let mut scenario = Scenario::builtin("demo")
        .expect("demo is embedded")
        .expect("demo is valid");
    scenario.timings.epoch_unix_s = Some(EPOCH_S);
    scenario.group.launch_template.latest_version = Some(8);
    Simulated::start(&scenario).await
}

fn template_version(source: &Option<LaunchSource>) -> Option<&str> {
    match source {
        Some(LaunchSource::Template { version, .. }) => version.as_deref(),
        _ => None,
    }
}

#[tokio::test]
async fn the_adapter_moves_the_group_to_a_new_template_version_that_only_new_instances_get() {
    let sim = demo_with_version_8().await;
    let aws = sim.aws();
    let before = aws.describe_group(GROUP).await.expect("describe");
    let Some(LaunchSource::Template { id, name, .. }) = before.launch_source.clone() else {
        panic!("a launch template: {:?}", before.launch_source);
    };
    // What a roll (or an operator) sends: the template as the group names
    // it, at the new version. The adapter sends the id alone.
    let new = LaunchSource::Template {
        id: id.clone(),
        name: name.clone(),
        version: Some("8".into()),
    };
    aws.set_launch_source(GROUP, &new)
        .await
        .expect("version 8 exists");
    let after = aws.describe_group(GROUP).await.expect("describe");
    assert_eq!(after.launch_source, Some(new.clone()));
    assert!(
        after
            .instances
            .iter()
            .all(|i| template_version(&i.launch_source) == Some("7")),
        "running instances keep their version"
    );

    aws.set_desired_capacity(GROUP, 15)
        .await
        .expect("set desired");
    let grown = aws.describe_group(GROUP).await.expect("describe");
    let (new_ones, old_ones): (Vec<_>, Vec<_>) = grown
        .instances
        .iter()
        .partition(|i| i.lifecycle_state == LifecycleState::Pending);
    assert_eq!((new_ones.len(), old_ones.len()), (3, 12));
    for i in &new_ones {
        assert_eq!(i.launch_source, Some(new.clone()), "{}", i.id);
    }
    for i in &old_ones {
        assert_eq!(template_version(&i.launch_source), Some("7"), "{}", i.id);
        assert_ne!(i.launch_source, grown.launch_source, "{} is outdated", i.id);
    }
    // DescribeAutoScalingInstances tells each instance's own version too.
    let listed = sim
        .raw_auto_scaling()
        .describe_auto_scaling_instances()
        .send()
        .await
        .expect("describe instances");
    for i in listed.auto_scaling_instances() {
        let id = i.instance_id().unwrap_or_default();
        let expected = if new_ones.iter().any(|n| n.id == id) {
            "8"
        } else {
            "7"
        };
        let template = i.launch_template().expect("a launch template");
        assert_eq!(template.version(), Some(expected), "{id}");
        assert_eq!(template.launch_template_id(), id_of(&new), "{id}");
    }
    // A new version is a new image.
    let ec2 = sim
        .raw_ec2()
        .describe_instances()
        .set_instance_ids(Some(vec![new_ones[0].id.clone(), old_ones[0].id.clone()]))
        .send()
        .await
        .expect("describe");
    let images: BTreeSet<String> = ec2
        .reservations()
        .iter()
        .flat_map(|r| r.instances())
        .filter_map(|i| i.image_id().map(str::to_string))
        .collect();
    assert_eq!(images.len(), 2, "{images:?}");
}

fn id_of(source: &LaunchSource) -> Option<&str> {
    match source {
        LaunchSource::Template { id, .. } => id.as_deref(),
        LaunchSource::Configuration { .. } | LaunchSource::MixedInstances(_) => None,
    }
}

#[tokio::test]
async fn a_launch_template_aws_refuses_is_a_validation_error_and_aliases_are_kept_as_set() {
    let sim = demo_with_version_8().await;
    let template = |id: Option<&str>, name: Option<&str>, version: Option<&str>| {
        aws_sdk_autoscaling::types::LaunchTemplateSpecification::builder()
            .set_launch_template_id(id.map(String::from))
            .set_launch_template_name(name.map(String::from))
            .set_version(version.map(String::from))
            .build()
    };
    let g = sim.aws().describe_group(GROUP).await.expect("describe");
    let id = id_of(g.launch_source.as_ref().expect("a source"))
        .expect("an id")
        .to_string();
    let cases = [
        (
            template(Some(&id), Some("mesos-agent"), Some("8")),
            "Valid requests must contain either launchTemplateId or LaunchTemplateName",
        ),
        (
            template(None, Some("not-ours"), Some("8")),
            "The specified launch template, with template name not-ours, does not exist.",
        ),
        (
            template(Some(&id), None, Some("9")),
            "version 9 does not exist",
        ),
    ];
    for (spec, expected) in cases {
        let err = sim
            .raw_auto_scaling()
            .update_auto_scaling_group()
            .auto_scaling_group_name(GROUP)
            .launch_template(spec.clone())
            .desired_capacity(13)
            .send()
            .await
            .expect_err("refused");
        assert_eq!(err.code(), Some("ValidationError"), "{spec:?}");
        assert!(
            err.message().is_some_and(|m| m.contains(expected)),
            "{spec:?}: {:?}",
            err.message()
        );
    }
    let unchanged = sim.aws().describe_group(GROUP).await.expect("describe");
    assert_eq!(
        unchanged.desired_capacity, 12,
        "a refused call changes nothing"
    );
    assert_eq!(template_version(&unchanged.launch_source), Some("7"));

    // By name, `$Latest`: the group shows it as set; a launch resolves it.
    sim.raw_auto_scaling()
        .update_auto_scaling_group()
        .auto_scaling_group_name(GROUP)
        .launch_template(template(None, Some("mesos-agent"), Some("$Latest")))
        .desired_capacity(13)
        .send()
        .await
        .expect("accepted");
    let g = sim.aws().describe_group(GROUP).await.expect("describe");
    assert_eq!(template_version(&g.launch_source), Some("$Latest"));
    let launched = g
        .instances
        .iter()
        .find(|i| i.lifecycle_state == LifecycleState::Pending)
        .expect("one launched");
    assert_eq!(template_version(&launched.launch_source), Some("8"));
}

#[tokio::test]
async fn an_update_the_world_cannot_model_is_refused_not_ignored() {
    let sim = demo().await;
    let err = sim
        .raw_auto_scaling()
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

#[tokio::test]
async fn a_suspended_process_gives_awss_reason_with_when_it_was_suspended() {
    // boto3 saw "User suspended at the simulated time"; AWS writes the
    // time in whole seconds ("User suspended at 2011-10-07T22:02:06Z").
    let sim = demo().await;
    let reasons = || async {
        let out = sim
            .raw_auto_scaling()
            .describe_auto_scaling_groups()
            .auto_scaling_group_names(GROUP)
            .send()
            .await
            .expect("describe");
        out.auto_scaling_groups()[0]
            .suspended_processes()
            .iter()
            .map(|p| {
                (
                    p.process_name().unwrap_or_default().to_string(),
                    p.suspension_reason().unwrap_or_default().to_string(),
                )
            })
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let suspend = |names: &'static [&'static str]| {
        sim.raw_auto_scaling()
            .suspend_processes()
            .auto_scaling_group_name(GROUP)
            .set_scaling_processes(Some(names.iter().map(|n| n.to_string()).collect()))
            .send()
    };
    suspend(&["AZRebalance"]).await.expect("suspend");
    let first = reasons().await;
    // The world's clock runs at real time from the epoch: a few seconds
    // at most have passed.
    assert!(
        first["AZRebalance"].starts_with("User suspended at 2024-01-01T00:00:0")
            && first["AZRebalance"].ends_with('Z')
            && first["AZRebalance"].len() == "User suspended at 2024-01-01T00:00:00Z".len(),
        "{first:?}"
    );
    // A second suspension keeps the first one's time; a new process
    // gets its own.
    sim.world().with(|w| w.advance_by_ms(90_500));
    suspend(&["AZRebalance", "Launch"]).await.expect("suspend");
    let second = reasons().await;
    assert_eq!(second["AZRebalance"], first["AZRebalance"]);
    assert!(
        second["Launch"].starts_with("User suspended at 2024-01-01T00:01:3"),
        "{second:?}"
    );
    // Resumed and suspended again: the new time.
    sim.raw_auto_scaling()
        .resume_processes()
        .auto_scaling_group_name(GROUP)
        .scaling_processes("AZRebalance")
        .send()
        .await
        .expect("resume");
    sim.world().with(|w| w.advance_by_ms(600_000));
    suspend(&["AZRebalance"]).await.expect("suspend");
    let third = reasons().await;
    assert!(
        third["AZRebalance"].starts_with("User suspended at 2024-01-01T00:11:3"),
        "{third:?}"
    );
    assert_eq!(third["Launch"], second["Launch"]);
}

/// The facade over a fresh `cluster` world: a private group
/// (`mesos-agents-prod`, 55) and a public one (`mesos-agents-public`, 5).
async fn cluster() -> Simulated {
    let mut scenario = Scenario::builtin("cluster")
        .expect("cluster is embedded")
        .expect("cluster is valid");
    scenario.timings.epoch_unix_s = Some(EPOCH_S);
    Simulated::start(&scenario).await
}

const PRIVATE: &str = "mesos-agents-prod";
const PUBLIC: &str = "mesos-agents-public";

fn filter(name: &str, values: &[&str]) -> aws_sdk_autoscaling::types::Filter {
    values
        .iter()
        .fold(
            aws_sdk_autoscaling::types::Filter::builder().name(name),
            |f, v| f.values(*v),
        )
        .build()
}

/// The names DescribeAutoScalingGroups answers with these filters.
async fn groups_filtered(
    sim: &Simulated,
    filters: Vec<aws_sdk_autoscaling::types::Filter>,
) -> Vec<String> {
    let out = sim
        .raw_auto_scaling()
        .describe_auto_scaling_groups()
        .set_filters(Some(filters))
        .send()
        .await
        .expect("describe");
    out.auto_scaling_groups()
        .iter()
        .filter_map(|g| g.auto_scaling_group_name().map(str::to_string))
        .collect()
}

#[tokio::test]
async fn every_group_is_described_when_none_is_named_and_pages_follow_max_records() {
    let sim = cluster().await;
    let all = sim
        .raw_auto_scaling()
        .describe_auto_scaling_groups()
        .send()
        .await
        .expect("describe");
    let names: Vec<&str> = all
        .auto_scaling_groups()
        .iter()
        .filter_map(|g| g.auto_scaling_group_name())
        .collect();
    assert_eq!(names, [PRIVATE, PUBLIC], "every group, in name order");
    assert_eq!(all.next_token(), None);
    let sizes: Vec<usize> = all
        .auto_scaling_groups()
        .iter()
        .map(|g| g.instances().len())
        .collect();
    assert_eq!(sizes, [55, 5]);

    let first = sim
        .raw_auto_scaling()
        .describe_auto_scaling_groups()
        .max_records(1)
        .send()
        .await
        .expect("page 1");
    assert_eq!(first.auto_scaling_groups().len(), 1);
    assert_eq!(
        first.auto_scaling_groups()[0].auto_scaling_group_name(),
        Some(PRIVATE)
    );
    let token = first.next_token().expect("a second page").to_string();
    let second = sim
        .raw_auto_scaling()
        .describe_auto_scaling_groups()
        .max_records(1)
        .next_token(token)
        .send()
        .await
        .expect("page 2");
    assert_eq!(
        second.auto_scaling_groups()[0].auto_scaling_group_name(),
        Some(PUBLIC)
    );
    assert_eq!(second.next_token(), None, "the last page");
}

#[tokio::test]
async fn groups_are_filtered_by_tag_key_tag_value_and_tag_key_value_as_aws_documents() {
    let sim = cluster().await;
    // Another roll's mark on the public group only.
    sim.raw_auto_scaling()
        .create_or_update_tags()
        .tags(
            aws_sdk_autoscaling::types::Tag::builder()
                .resource_id(PUBLIC)
                .resource_type("auto-scaling-group")
                .key("roller:run-id")
                .value("run-1")
                .propagate_at_launch(false)
                .build(),
        )
        .send()
        .await
        .expect("tagged");
    assert_eq!(
        groups_filtered(&sim, vec![filter("tag-key", &["roller:run-id"])]).await,
        [PUBLIC]
    );
    // Values of one filter are ORed, filters ANDed.
    assert_eq!(
        groups_filtered(&sim, vec![filter("tag-key", &["roller:run-id", "Tier"])]).await,
        [PRIVATE, PUBLIC]
    );
    assert_eq!(
        groups_filtered(
            &sim,
            vec![
                filter("tag-key", &["Tier"]),
                filter("tag-value", &["private"])
            ]
        )
        .await,
        [PRIVATE]
    );
    assert_eq!(
        groups_filtered(&sim, vec![filter("tag:Tier", &["public"])]).await,
        [PUBLIC]
    );
    assert_eq!(
        groups_filtered(&sim, vec![filter("tag:Tier", &["private", "public"])]).await,
        [PRIVATE, PUBLIC]
    );
    assert!(
        groups_filtered(&sim, vec![filter("tag:roller:run-id", &["run-2"])])
            .await
            .is_empty()
    );
    // Named groups are filtered too.
    let named = sim
        .raw_auto_scaling()
        .describe_auto_scaling_groups()
        .auto_scaling_group_names(PRIVATE)
        .filters(filter("tag-key", &["roller:run-id"]))
        .send()
        .await
        .expect("describe");
    assert!(named.auto_scaling_groups().is_empty());

    let err = sim
        .raw_auto_scaling()
        .describe_auto_scaling_groups()
        .filters(filter("auto-scaling-group", &[PUBLIC]))
        .send()
        .await
        .expect_err("not a filter of this call");
    assert_eq!(err.code(), Some("ValidationError"));
}

#[tokio::test]
async fn every_action_answers_for_each_group_by_name_and_ec2_lists_every_groups_instances() {
    let sim = cluster().await;
    let asg = sim.raw_auto_scaling();
    asg.set_desired_capacity()
        .auto_scaling_group_name(PUBLIC)
        .desired_capacity(6)
        .send()
        .await
        .expect("scaled");
    asg.suspend_processes()
        .auto_scaling_group_name(PUBLIC)
        .scaling_processes("AZRebalance")
        .send()
        .await
        .expect("suspended");
    let out = asg
        .describe_auto_scaling_groups()
        .send()
        .await
        .expect("describe");
    let (private, public) = (&out.auto_scaling_groups()[0], &out.auto_scaling_groups()[1]);
    assert_eq!(private.desired_capacity(), Some(55));
    assert!(private.suspended_processes().is_empty());
    assert_eq!(public.desired_capacity(), Some(6));
    assert_eq!(public.suspended_processes().len(), 1);
    assert_eq!(
        public
            .launch_template()
            .and_then(|t| t.launch_template_name()),
        Some("mesos-agent-public")
    );

    // Activities: the public group's own, and every group's unnamed.
    let public_activities = asg
        .describe_scaling_activities()
        .auto_scaling_group_name(PUBLIC)
        .send()
        .await
        .expect("activities");
    let newest = &public_activities.activities()[0];
    assert_eq!(newest.auto_scaling_group_name(), Some(PUBLIC));
    assert_eq!(newest.status_code().map(|s| s.as_str()), Some("InProgress"));
    let every = asg
        .describe_scaling_activities()
        .max_records(100)
        .send()
        .await
        .expect("activities");
    let groups: BTreeSet<&str> = every
        .activities()
        .iter()
        .filter_map(|a| a.auto_scaling_group_name())
        .collect();
    assert_eq!(groups, BTreeSet::from([PRIVATE, PUBLIC]));

    let err = asg
        .set_desired_capacity()
        .auto_scaling_group_name("mesos-agents-nope")
        .desired_capacity(1)
        .send()
        .await
        .expect_err("no such group");
    assert_eq!(err.code(), Some("ValidationError"));

    let tagged = sim
        .raw_ec2()
        .describe_instances()
        .filters(
            aws_sdk_ec2::types::Filter::builder()
                .name("tag:aws:autoscaling:groupName")
                .values(PUBLIC)
                .build(),
        )
        .send()
        .await
        .expect("instances");
    let public_instances: usize = tagged
        .reservations()
        .iter()
        .map(|r| r.instances().len())
        .sum();
    assert_eq!(public_instances, 6, "five, and the one launching");
    let all = sim
        .raw_ec2()
        .describe_instances()
        .max_results(1000)
        .send()
        .await
        .expect("instances");
    let every_instance: usize = all.reservations().iter().map(|r| r.instances().len()).sum();
    assert_eq!(every_instance, 61);
}

/// Instance refreshes through the SDK as another hand would start them
/// (moto has none): one active per group, the adapter reads each status,
/// and a cancel goes Cancelling, then Cancelled.
#[tokio::test(start_paused = true)]
async fn an_instance_refresh_is_started_described_and_cancelled_as_aws_answers() {
    let sim = demo().await;
    let raw = sim.raw_auto_scaling();
    assert!(
        sim.aws()
            .instance_refreshes(GROUP)
            .await
            .unwrap()
            .is_empty()
    );
    let started = raw
        .start_instance_refresh()
        .auto_scaling_group_name(GROUP)
        .send()
        .await
        .expect("started");
    let id = started.instance_refresh_id().expect("an id").to_string();
    let again = raw
        .start_instance_refresh()
        .auto_scaling_group_name(GROUP)
        .send()
        .await
        .expect_err("one active refresh per group");
    assert_eq!(again.code(), Some("InstanceRefreshInProgress"));
    let seen = sim.aws().instance_refreshes(GROUP).await.unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        (seen[0].id.as_str(), seen[0].status.as_str()),
        (id.as_str(), "InProgress")
    );
    assert!(seen[0].is_active() && seen[0].start_time.is_some());

    let cancelled = raw
        .cancel_instance_refresh()
        .auto_scaling_group_name(GROUP)
        .send()
        .await
        .expect("cancelled");
    assert_eq!(cancelled.instance_refresh_id(), Some(id.as_str()));
    let seen = sim.aws().instance_refreshes(GROUP).await.unwrap();
    assert_eq!(seen[0].status, "Cancelling");
    assert!(seen[0].is_active(), "a cancelling refresh still replaces");
    sim.world().with(|w| {
        let later = crate::sim::world::SimTime::from_millis(w.now().as_millis() + 31_000);
        w.advance_to(later);
    });
    let seen = sim.aws().instance_refreshes(GROUP).await.unwrap();
    assert_eq!(seen[0].status, "Cancelled");
    assert!(!seen[0].is_active());
    let none = raw
        .cancel_instance_refresh()
        .auto_scaling_group_name(GROUP)
        .send()
        .await
        .expect_err("nothing to cancel");
    assert_eq!(none.code(), Some("ActiveInstanceRefreshNotFound"));
}

/// An operator's IAM policy written before roller called
/// DescribeAutoScalingInstances must not stop a roll at its first
/// termination (at 3 a.m.): the refusal is logged once, naming the
/// permission, and every termination describes the group instead, as
/// before, MinSize still checked.
#[tokio::test]
async fn a_policy_refusing_describe_auto_scaling_instances_terminates_by_describing_the_group_and_warns_once()
 {
    #[derive(Clone)]
    struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let lines = Lines(Default::default());
    let sink = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .without_time()
        .with_ansi(false)
        .with_writer(move || sink.clone())
        .finish();
    let _log = tracing::subscriber::set_default(subscriber);

    let sim = demo().await;
    sim.world().set_api_faults(ApiFaults {
        aws_denied: vec!["DescribeAutoScalingInstances".to_string()],
        ..ApiFaults::default()
    });
    let aws = sim.adapter_with(1, None).await;
    aws.set_desired_capacity(GROUP, 14).await.expect("raise");
    let ids: Vec<String> = aws
        .describe_group(GROUP)
        .await
        .expect("describe")
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect();
    let describes = sim.calls("DescribeAutoScalingGroups").unwrap();
    for victim in &ids[..2] {
        let done = aws.terminate_instance(GROUP, victim).await;
        assert!(matches!(done, Ok(Termination::Started(_))), "{done:?}");
    }
    assert_eq!(
        sim.calls("DescribeAutoScalingInstances"),
        Some(1),
        "refused once, then never asked again"
    );
    assert_eq!(
        sim.calls("DescribeAutoScalingGroups"),
        Some(describes + 2),
        "each termination described the group"
    );
    let err = aws
        .terminate_instance(GROUP, &ids[2])
        .await
        .expect_err("below MinSize");
    assert!(
        err.to_string()
            .contains("desired capacity 12 − 1 would fall below MinSize 12"),
        "{err}"
    );
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let warns: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("DescribeAutoScalingInstances was refused"))
        .collect();
    assert_eq!(warns.len(), 1, "{text}");
    assert!(
        warns[0].contains("WARN")
            && warns[0].contains("(AccessDenied)")
            && warns[0].contains("add autoscaling:DescribeAutoScalingInstances")
            && warns[0].contains("only slower"),
        "{text}"
    );
}

#[test]
fn a_denied_action_the_simulator_does_not_answer_is_refused_by_name() {
    let faults = ApiFaults {
        aws_denied: vec!["DescribeAutoScalingInstance".to_string()],
        ..ApiFaults::default()
    };
    let err = faults.check().expect_err("a typo");
    assert!(
        err.contains("aws_denied: \"DescribeAutoScalingInstance\""),
        "{err}"
    );
}
