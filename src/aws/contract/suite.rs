//! The contract tests themselves, each generic over the backend and run on
//! both by `contract_tests!`. A check belongs here only if AWS, moto and
//! the simulator all agree on it; where they do not, the test that shows
//! the difference lives with its backend.

use std::collections::BTreeSet;

pub(super) use super::suite_alarms::an_alarm_put_and_set_by_another_client_reads_back_with_its_state_and_reason;
pub(super) use super::suite_held::protection_reads_back_and_exit_standby_sends_only_standby_instances;
pub(super) use super::suite_hooks::lifecycle_hooks_put_by_another_client_are_read_with_aws_defaults;
mod mixed;
mod terminate_many;
mod warm_pool;

pub(super) use mixed::a_mixed_instances_policy_reads_back_and_only_its_version_is_written;
pub(super) use terminate_many::{
    a_round_with_an_error_is_the_last_its_other_answers_kept,
    terminations_sent_together_are_checked_fifty_at_a_time,
};
pub(super) use warm_pool::a_warm_pool_put_by_another_client_is_read_back_and_deleted;

use super::{Backend, GroupSetup, THREE_AZS};
use crate::roll::ports::auto_scaling::{
    AutoScaling, AutoScalingError, AutoScalingGroup, GroupTag, LaunchSource, LifecycleState,
    ScalingProcess, Termination,
};

fn tag(k: &str, v: &str, p: bool) -> GroupTag {
    GroupTag {
        key: k.to_string(),
        value: v.to_string(),
        propagate_at_launch: p,
    }
}

/// Checks how often the backend answered `action`, where it counts: that
/// is how a test sees pages turned, or a write the adapter did not send.
fn assert_calls<B: Backend>(b: &B, action: &str, expected: u64) {
    if let Some(seen) = b.calls(action) {
        assert_eq!(seen, expected, "{action} requests");
    }
}

fn suspended(g: &AutoScalingGroup) -> BTreeSet<ScalingProcess> {
    g.suspended_processes.iter().cloned().collect()
}

async fn describe<B: Backend>(b: &B) -> AutoScalingGroup {
    b.aws().describe_group(b.group()).await.expect("describe")
}

pub(super) async fn describe_group_reports_sizes_instances_launch_template_tags_and_azs<
    B: Backend,
>() {
    let b = B::provide(GroupSetup {
        tags: &[("Environment", "contract")],
        ..GroupSetup::sized(1, 5, 3)
    })
    .await;
    let g = describe(&b).await;
    assert_eq!(g.name, b.group());
    assert_eq!((g.min_size, g.max_size, g.desired_capacity), (1, 5, 3));
    assert_eq!(
        g.availability_zones
            .iter()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        THREE_AZS.iter().copied().collect::<BTreeSet<_>>()
    );
    assert!(g.suspended_processes.is_empty());
    assert_eq!(g.tags, vec![tag("Environment", "contract", false)]);
    match &g.launch_source {
        Some(LaunchSource::Template { id, name, version }) => {
            assert!(
                id.as_deref().is_some_and(|id| id.starts_with("lt-")),
                "{id:?}"
            );
            assert_eq!(name.as_deref(), Some(b.launch_template()));
            assert!(version.is_some(), "no version");
        }
        other => panic!("expected the group's launch template, got {other:?}"),
    }
    assert_eq!(g.instances.len(), 3);
    for i in &g.instances {
        assert!(i.id.starts_with("i-") && i.id.len() == 19, "{}", i.id);
        assert!(g.availability_zones.contains(&i.availability_zone));
        assert_eq!(i.lifecycle_state, LifecycleState::InService);
        assert_eq!(i.health_status, "Healthy");
        assert!(!i.protected_from_scale_in);
        assert!(
            matches!(i.launch_source, Some(LaunchSource::Template { .. })),
            "{:?}",
            i.launch_source
        );
    }
    assert_calls(&b, "DescribeAutoScalingGroups", 1);
}

pub(super) async fn an_unknown_group_is_an_error_naming_it_not_an_empty_success<B: Backend>() {
    let b = B::provide(GroupSetup::sized(0, 1, 0)).await;
    let aws = b.aws();
    let missing = format!("{}-missing", b.group());
    let err = aws
        .describe_group(&missing)
        .await
        .expect_err("unknown group");
    assert_eq!(err.label(), "group_not_found");
    assert!(err.to_string().contains(&missing), "{err}");
    for err in [
        aws.set_desired_capacity(&missing, 1)
            .await
            .expect_err("set desired"),
        aws.suspend_processes(&missing, &[ScalingProcess::AZRebalance])
            .await
            .expect_err("suspend"),
        aws.scaling_activities(&missing, 10)
            .await
            .expect_err("activities"),
    ] {
        assert_eq!(err.label(), "group_not_found", "{err}");
    }

    // What the adapter builds on: AWS leaves unknown names out of the
    // list, an empty success. (A write sent anyway on an unknown group is
    // where the backends differ: see their tests.)
    let none = b
        .raw_auto_scaling()
        .describe_auto_scaling_groups()
        .auto_scaling_group_names(&missing)
        .send()
        .await
        .expect("describe unknown");
    assert!(none.auto_scaling_groups().is_empty());
}

pub(super) async fn set_desired_capacity_moves_desired_and_the_group_follows<B: Backend>() {
    let b = B::provide(GroupSetup::sized(1, 6, 2)).await;
    b.aws()
        .set_desired_capacity(b.group(), 4)
        .await
        .expect("set desired");
    let g = describe(&b).await;
    assert_eq!(g.desired_capacity, 4);
    assert_eq!(g.instances.len(), 4);
    assert_calls(&b, "SetDesiredCapacity", 1);
}

pub(super) async fn desired_outside_the_size_limits_is_refused_before_sending<B: Backend>() {
    // moto would accept both (AWS refuses them with a ValidationError):
    // the adapter refuses them itself, so it acts as on AWS everywhere.
    let b = B::provide(GroupSetup::sized(1, 3, 2)).await;
    let err = b
        .aws()
        .set_desired_capacity(b.group(), 4)
        .await
        .expect_err("over max");
    assert_eq!(err.label(), "refused");
    assert!(err.to_string().contains("MaxSize 3"), "{err}");
    let err = b
        .aws()
        .set_desired_capacity(b.group(), 0)
        .await
        .expect_err("under min");
    assert_eq!(err.label(), "refused");
    assert!(err.to_string().contains("MinSize 1"), "{err}");
    assert_eq!(describe(&b).await.desired_capacity, 2);
    assert_calls(&b, "SetDesiredCapacity", 0);
}

pub(super) async fn terminate_decrements_desired_and_a_second_terminate_is_already_gone<
    B: Backend,
>() {
    let b = B::provide(GroupSetup::sized(1, 5, 3)).await;
    let aws = b.aws();
    let victim = describe(&b).await.instances[0].id.clone();

    match aws
        .terminate_instance(b.group(), &victim)
        .await
        .expect("terminate")
    {
        Termination::Started(activity) => {
            assert!(!activity.id.is_empty());
            assert!(
                activity.description.contains(&victim),
                "{}",
                activity.description
            );
            assert_eq!(activity.status, "InProgress");
            assert!(
                activity.cause.contains("user request"),
                "{}",
                activity.cause
            );
            assert!(activity.start_time.is_some());
        }
        other => panic!("expected Started, got {other:?}"),
    }
    let after = describe(&b).await;
    assert_eq!(after.desired_capacity, 2);
    // How long the victim stays listed differs (see the backends' tests);
    // that no replacement is launched does not.
    let others = after.instances.iter().filter(|i| i.id != victim).count();
    assert_eq!(others, 2, "no replacement launched");

    assert_eq!(
        aws.terminate_instance(b.group(), &victim)
            .await
            .expect("again"),
        Termination::AlreadyGone
    );
    assert_eq!(describe(&b).await.desired_capacity, 2);
    assert_calls(&b, "TerminateInstanceInAutoScalingGroup", 1);
}

pub(super) async fn terminate_and_replace_keeps_desired_and_the_group_launches_one_in_its_place<
    B: Backend,
>() {
    // At MinSize: without a decrement there is nothing to refuse.
    let b = B::provide(GroupSetup::sized(2, 5, 2)).await;
    let aws = b.aws();
    let victim = describe(&b).await.instances[0].id.clone();
    match aws
        .terminate_and_replace(b.group(), &victim)
        .await
        .expect("terminate")
    {
        Termination::Started(activity) => {
            assert!(
                activity.description.contains(&victim),
                "{}",
                activity.description
            );
            assert_eq!(activity.status, "InProgress");
        }
        other => panic!("expected Started, got {other:?}"),
    }
    let after = describe(&b).await;
    assert_eq!(after.desired_capacity, 2);
    let staying = after
        .instances
        .iter()
        .filter(|i| i.id != victim && !i.lifecycle_state.is_leaving())
        .count();
    assert_eq!(staying, 2, "a replacement launched: {:?}", after.instances);
    assert_eq!(
        aws.terminate_and_replace(b.group(), &victim)
            .await
            .expect("again"),
        Termination::AlreadyGone
    );
    assert_eq!(describe(&b).await.desired_capacity, 2);
    assert_calls(&b, "TerminateInstanceInAutoScalingGroup", 1);
}

pub(super) async fn a_terminate_below_min_size_is_refused_before_sending<B: Backend>() {
    // moto would decrement below MinSize (AWS refuses): the adapter
    // refuses it itself.
    let b = B::provide(GroupSetup::sized(2, 5, 2)).await;
    let victim = describe(&b).await.instances[0].id.clone();
    let err = b
        .aws()
        .terminate_instance(b.group(), &victim)
        .await
        .expect_err("below min");
    assert_eq!(err.label(), "refused");
    assert!(err.to_string().contains("MinSize 2"), "{err}");
    let g = describe(&b).await;
    assert_eq!(g.desired_capacity, 2);
    assert_eq!(
        g.instance(&victim).map(|i| i.lifecycle_state.clone()),
        Some(LifecycleState::InService)
    );
    assert_calls(&b, "TerminateInstanceInAutoScalingGroup", 0);
}

/// Issue 32: a drain terminating hundreds of instances a tick described
/// the whole group (thousands of instances) before each. After one
/// describe, each termination looks at its own instance and counts its
/// own decrements; MinSize holds all the same.
pub(super) async fn terminations_after_a_describe_look_at_their_instance_and_still_stop_at_min_size<
    B: Backend,
>() {
    let b = B::provide(GroupSetup::sized(2, 5, 4)).await;
    let aws = b.aws();
    let ids = group_instance_ids(&b).await;
    for victim in &ids[..2] {
        let done = aws.terminate_instance(b.group(), victim).await;
        assert!(matches!(done, Ok(Termination::Started(_))), "{done:?}");
    }
    assert_calls(&b, "DescribeAutoScalingGroups", 1);
    assert_calls(&b, "DescribeAutoScalingInstances", 2);
    // A termination already sent is gone, whatever the sizes say.
    assert_eq!(
        aws.terminate_instance(b.group(), &ids[0])
            .await
            .expect("again"),
        Termination::AlreadyGone
    );
    let err = aws
        .terminate_instance(b.group(), &ids[2])
        .await
        .expect_err("below min");
    assert_eq!(err.label(), "refused");
    assert!(
        err.to_string()
            .contains("desired capacity 2 − 1 would fall below MinSize 2"),
        "{err}"
    );
    assert_calls(&b, "TerminateInstanceInAutoScalingGroup", 2);
    let g = describe(&b).await;
    assert_eq!(g.desired_capacity, 2);
}

/// The drain sends a tick's terminations a few at once: each must count
/// the decrements of the others in flight, or all would pass the MinSize
/// check against the same desired capacity (and moto would perform them).
pub(super) async fn terminations_sent_at_once_count_each_others_decrements_against_min_size<
    B: Backend,
>() {
    let b = B::provide(GroupSetup::sized(2, 6, 5)).await;
    let aws = b.aws();
    let ids = group_instance_ids(&b).await;
    let answers = futures_util::future::join_all(
        ids.iter()
            .map(|victim| aws.terminate_instance(b.group(), victim)),
    )
    .await;
    assert_eq!(started_and_refused(&answers), (3, 2), "{answers:?}");
    assert_calls(&b, "TerminateInstanceInAutoScalingGroup", 3);
    assert_eq!(describe(&b).await.desired_capacity, 2);
}

pub(super) async fn suspend_and_resume_touch_exactly_the_listed_processes<B: Backend>() {
    let b = B::provide(GroupSetup::sized(0, 3, 1)).await;
    let (aws, group) = (b.aws(), b.group());
    aws.suspend_processes(group, &[ScalingProcess::AZRebalance])
        .await
        .expect("suspend");
    assert_eq!(
        suspended(&describe(&b).await),
        BTreeSet::from([ScalingProcess::AZRebalance])
    );

    aws.suspend_processes(
        group,
        &[
            ScalingProcess::HealthCheck,
            ScalingProcess::ReplaceUnhealthy,
        ],
    )
    .await
    .expect("suspend two more");
    aws.resume_processes(group, &[ScalingProcess::AZRebalance])
        .await
        .expect("resume");
    assert_eq!(
        suspended(&describe(&b).await),
        BTreeSet::from([
            ScalingProcess::HealthCheck,
            ScalingProcess::ReplaceUnhealthy
        ])
    );

    // An empty list would mean all nine processes to AWS.
    for err in [
        aws.suspend_processes(group, &[])
            .await
            .expect_err("empty suspend"),
        aws.resume_processes(group, &[])
            .await
            .expect_err("empty resume"),
    ] {
        assert_eq!(err.label(), "refused", "{err}");
    }
    assert_eq!(suspended(&describe(&b).await).len(), 2);
}

pub(super) async fn size_limits_change_only_when_they_keep_the_desired_capacity<B: Backend>() {
    let b = B::provide(GroupSetup::sized(1, 3, 2)).await;
    let (aws, group) = (b.aws(), b.group());
    aws.update_size_limits(group, 0, 10).await.expect("update");
    let g = describe(&b).await;
    assert_eq!((g.min_size, g.max_size, g.desired_capacity), (0, 10, 2));

    for (min, max) in [(3, 2), (0, 1), (3, 5)] {
        let err = aws
            .update_size_limits(group, min, max)
            .await
            .expect_err("refused");
        assert_eq!(err.label(), "refused", "{min}..{max}: {err}");
    }
    assert_calls(&b, "UpdateAutoScalingGroup", 1);

    let g = describe(&b).await;
    assert_eq!((g.min_size, g.max_size), (0, 10));
}

pub(super) async fn tags_round_trip_create_overwrite_and_delete<B: Backend>() {
    let b = B::provide(GroupSetup {
        tags: &[("Environment", "contract")],
        ..GroupSetup::sized(0, 2, 0)
    })
    .await;
    let (aws, group) = (b.aws(), b.group());
    aws.put_tags(
        group,
        &[tag("roller:plan", "p-1", false), tag("team", "infra", true)],
    )
    .await
    .expect("put");
    let g = describe(&b).await;
    assert_eq!(g.tag("roller:plan"), Some("p-1"));
    assert!(g.tags.contains(&tag("team", "infra", true)), "{:?}", g.tags);

    aws.put_tags(group, &[tag("roller:plan", "p-2", false)])
        .await
        .expect("overwrite");
    aws.delete_tags(group, &["team".to_string()])
        .await
        .expect("delete");
    let mut tags = describe(&b).await.tags;
    tags.sort_by(|a, b| a.key.cmp(&b.key));
    assert_eq!(
        tags,
        vec![
            tag("Environment", "contract", false),
            tag("roller:plan", "p-2", false)
        ]
    );
}

pub(super) async fn groups_tagged_lists_the_groups_with_the_key_whatever_its_value<B: Backend>() {
    let b = B::provide(GroupSetup {
        tags: &[("Environment", "contract")],
        ..GroupSetup::sized(0, 2, 0)
    })
    .await;
    let (aws, group) = (b.aws(), b.group());
    // A key of this test's own: other tests share moto's groups.
    let key = format!("roller:contract-{group}");
    let names = |groups: Vec<AutoScalingGroup>| -> Vec<String> {
        groups.into_iter().map(|g| g.name).collect()
    };
    let before = aws.groups_tagged(&key).await.expect("list before");
    assert!(!names(before).contains(&group.to_string()));
    let untagged = aws.groups_tagged("Environment").await.expect("list");
    assert!(
        untagged.iter().all(|g| g.tag("Environment").is_some()),
        "a group without the key came back: {untagged:?}"
    );

    aws.put_tags(group, &[tag(&key, "run-1", false)])
        .await
        .expect("put");
    for adapter in [aws.clone(), b.aws_paging_by(1).await] {
        let found = adapter.groups_tagged(&key).await.expect("list after");
        assert_eq!(names(found.clone()), vec![group.to_string()], "{found:?}");
        assert_eq!(found[0].tag(&key), Some("run-1"));
        assert_eq!(found[0].instances.len(), 0);
    }
}

pub(super) async fn scaling_activities_of_a_known_group_parse<B: Backend>() {
    // Which activities exist differs (moto records none, AWS and the
    // simulator record every launch); that the answer parses does not.
    let b = B::provide(GroupSetup::sized(0, 3, 2)).await;
    let all = b
        .aws()
        .scaling_activities(b.group(), 50)
        .await
        .expect("activities");
    let ids: BTreeSet<&str> = all.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids.len(), all.len(), "no activity twice");
    assert!(all.iter().all(|a| !a.id.is_empty() && !a.status.is_empty()));
    let one = b.aws().scaling_activities(b.group(), 1).await.expect("one");
    assert!(one.len() <= 1);
}

pub(super) async fn describe_instances_pages_through_the_groups_instances_and_skips_unknown_ids<
    B: Backend,
>() {
    let b = B::provide(GroupSetup::sized(0, 12, 12)).await;
    // Each instance is its own reservation on both backends, as when Auto
    // Scaling launches them: 12 of them, 5 per page, are 3 pages.
    let aws = b.aws_paging_by(5).await;
    let g = describe(&b).await;
    let mut asked: Vec<String> = g.instances.iter().map(|i| i.id.clone()).collect();
    asked.push("i-00000000000000000".to_string());
    let found = aws
        .describe_instances(&asked)
        .await
        .expect("describe instances");
    assert_calls(&b, "DescribeInstances", 3);
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
        assert!(i.launch_time.is_some());
        assert_eq!(
            i.availability_zone.as_deref(),
            g.instance(&i.id).map(|gi| gi.availability_zone.as_str())
        );
    }
    assert!(aws.describe_instances(&[]).await.expect("none").is_empty());
}

/// What other clients of the same APIs ask (boto3, the AWS CLI, the
/// DC/OS tooling), which the adapter never sends: DescribeAutoScalingInstances,
/// DescribeTags, and DescribeInstances filtered by the group's tag and a
/// private IP. AWS and moto answer them; so must the simulator.
pub(super) async fn what_other_clients_ask_is_answered_instances_tags_and_instance_filters<
    B: Backend,
>() {
    let b = B::provide(GroupSetup {
        tags: &[("team", "infra")],
        ..GroupSetup::sized(0, 6, 3)
    })
    .await;
    let g = describe(&b).await;
    let ids: BTreeSet<String> = g.instances.iter().map(|i| i.id.clone()).collect();
    let first = g.instances[0].id.clone();

    let one = b
        .raw_auto_scaling()
        .describe_auto_scaling_instances()
        .instance_ids(&first)
        .send()
        .await
        .expect("DescribeAutoScalingInstances by id");
    let listed = one.auto_scaling_instances();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].instance_id(), Some(first.as_str()));
    assert_eq!(listed[0].auto_scaling_group_name(), Some(b.group()));
    assert_eq!(listed[0].lifecycle_state(), Some("InService"));
    assert_eq!(
        listed[0].availability_zone(),
        g.instance(&first).map(|i| i.availability_zone.as_str())
    );
    assert!(
        listed[0]
            .health_status()
            .is_some_and(|h| h.eq_ignore_ascii_case("healthy"))
    );
    let all = b
        .raw_auto_scaling()
        .describe_auto_scaling_instances()
        .send()
        .await
        .expect("DescribeAutoScalingInstances");
    let ours: BTreeSet<String> = all
        .auto_scaling_instances()
        .iter()
        .filter(|i| i.auto_scaling_group_name() == Some(b.group()))
        .filter_map(|i| i.instance_id().map(str::to_string))
        .collect();
    assert_eq!(ours, ids);

    let tags = b
        .raw_auto_scaling()
        .describe_tags()
        .filters(
            aws_sdk_autoscaling::types::Filter::builder()
                .name("auto-scaling-group")
                .values(b.group())
                .build(),
        )
        .send()
        .await
        .expect("DescribeTags");
    let team = tags
        .tags()
        .iter()
        .find(|t| t.key() == Some("team"))
        .unwrap_or_else(|| panic!("the group's tag: {:?}", tags.tags()));
    assert_eq!(team.value(), Some("infra"));
    assert_eq!(team.resource_id(), Some(b.group()));
    assert_eq!(team.resource_type(), Some("auto-scaling-group"));
    assert!(
        tags.tags()
            .iter()
            .all(|t| t.resource_id() == Some(b.group()))
    );

    let by_group = b
        .raw_ec2()
        .describe_instances()
        .filters(ec2_filter("tag:aws:autoscaling:groupName", b.group()))
        .send()
        .await
        .expect("DescribeInstances by the group's tag");
    let found: BTreeSet<String> = instance_ids(&by_group).into_iter().collect();
    assert_eq!(found, ids);
    let ip = b
        .aws()
        .describe_instances(std::slice::from_ref(&first))
        .await
        .expect("the first instance")[0]
        .private_ip
        .expect("a private ip")
        .to_string();
    // Other tests' groups on the same backend may reuse the address (on
    // moto, every test's network has the same CIDR): filters are ANDed.
    let by_ip = b
        .raw_ec2()
        .describe_instances()
        .filters(ec2_filter("private-ip-address", &ip))
        .filters(ec2_filter("tag:aws:autoscaling:groupName", b.group()))
        .send()
        .await
        .expect("DescribeInstances by private IP");
    assert_eq!(instance_ids(&by_ip), [first]);
}

fn ec2_filter(name: &str, value: &str) -> aws_sdk_ec2::types::Filter {
    aws_sdk_ec2::types::Filter::builder()
        .name(name)
        .values(value)
        .build()
}

/// The ids of the group's instances, as described.
/// How many of `answers` started a termination, and how many the
/// adapter refused (MinSize).
fn started_and_refused(answers: &[Result<Termination, AutoScalingError>]) -> (usize, usize) {
    let started = answers
        .iter()
        .filter(|a| matches!(a, Ok(Termination::Started(_))))
        .count();
    let refused = answers
        .iter()
        .filter(|a| matches!(a, Err(e) if e.label() == "refused"))
        .count();
    (started, refused)
}

async fn group_instance_ids<B: Backend>(b: &B) -> Vec<String> {
    describe(b)
        .await
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect()
}

/// The instances of a DescribeInstances answer, in its order.
fn instance_ids(
    answer: &aws_sdk_ec2::operation::describe_instances::DescribeInstancesOutput,
) -> Vec<String> {
    answer
        .reservations()
        .iter()
        .flat_map(|r| r.instances())
        .filter_map(|i| i.instance_id().map(str::to_string))
        .collect()
}

/// EnterStandby and ExitStandby, as an operator (or the console) uses
/// them before a roll: the instance stays in the group as Standby, out of
/// the desired capacity, and the adapter reads the state; ExitStandby
/// brings it back. AWS's activity texts say what happened.
pub(super) async fn standby_takes_an_instance_out_of_desired_and_back<B: Backend>() {
    let b = B::provide(GroupSetup::sized(0, 6, 3)).await;
    let g = describe(&b).await;
    let first = g.instances[0].id.clone();

    let entered = b
        .raw_auto_scaling()
        .enter_standby()
        .auto_scaling_group_name(b.group())
        .instance_ids(&first)
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .expect("EnterStandby");
    let activities = entered.activities();
    assert_eq!(activities.len(), 1, "{activities:?}");
    let description = activities[0].description().unwrap_or_default();
    // moto writes "StandBy", AWS "Standby".
    assert!(
        description
            .to_ascii_lowercase()
            .starts_with("moving ec2 instance to standby:"),
        "{description}"
    );
    assert!(description.ends_with(&first), "{description}");
    let cause = activities[0].cause().unwrap_or_default();
    assert!(
        cause.contains("shrinking the capacity from 3 to 2"),
        "{cause}"
    );

    let g = describe(&b).await;
    assert_eq!(g.desired_capacity, 2);
    assert_eq!(
        g.instance(&first).map(|i| i.lifecycle_state.clone()),
        Some(LifecycleState::Standby)
    );
    assert_eq!(
        g.instances
            .iter()
            .filter(|i| i.lifecycle_state == LifecycleState::InService)
            .count(),
        2
    );

    let exited = b
        .raw_auto_scaling()
        .exit_standby()
        .auto_scaling_group_name(b.group())
        .instance_ids(&first)
        .send()
        .await
        .expect("ExitStandby");
    let activities = exited.activities();
    assert_eq!(activities.len(), 1, "{activities:?}");
    assert_eq!(
        activities[0].status_code().map(|s| s.as_str()),
        Some("PreInService")
    );
    let cause = activities[0].cause().unwrap_or_default();
    assert!(
        cause.contains("increasing the capacity from 2 to 3"),
        "{cause}"
    );
    let g = describe(&b).await;
    assert_eq!(g.desired_capacity, 3);
    assert_eq!(
        g.instance(&first).map(|i| i.lifecycle_state.clone()),
        Some(LifecycleState::InService)
    );
}
