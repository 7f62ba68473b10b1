//! What only moto shows (`scripts/with-moto cargo test aws`): where moto
//! is looser than AWS, a `moto_difference_*` test shows moto's behaviour
//! (through the adapter or the raw SDK) so that a moto upgrade that
//! changes it is noticed; the adapter follows AWS's documented behaviour
//! regardless, which the contract suite (`aws::contract`) checks on moto
//! and on the simulator alike. Also here: the credentials chain reaching
//! moto through the environment alone.
//!
//! Each test gets its own group from the contract's moto backend, so all
//! of them share one moto server and run in parallel.

use std::collections::BTreeSet;
use std::time::Duration;

use super::contract::moto::{Moto, moto_url};
use super::contract::{Backend, GroupSetup};
use super::{AwsError, AwsSettings};
use crate::roll::ports::auto_scaling::{AutoScaling, LifecycleState, ScalingProcess, Termination};

async fn first_instance(m: &Moto) -> String {
    m.aws()
        .describe_group(m.group())
        .await
        .expect("describe")
        .instances[0]
        .id
        .clone()
}

#[tokio::test]
async fn moto_difference_instances_are_in_service_at_once() {
    // Real AWS (and the simulator) shows a scale-up Pending for minutes;
    // moto skips it. The roll waits on InService and the Mesos agent, so
    // it works with both.
    let m = Moto::provide(GroupSetup::sized(0, 4, 0)).await;
    m.aws()
        .set_desired_capacity(m.group(), 2)
        .await
        .expect("scale up");
    let g = m.aws().describe_group(m.group()).await.expect("describe");
    assert_eq!(g.instances.len(), 2);
    assert!(
        g.instances
            .iter()
            .all(|i| i.lifecycle_state == LifecycleState::InService)
    );
}

#[tokio::test]
async fn moto_difference_one_launch_batch_is_one_reservation_in_a_single_az() {
    // AWS spreads a scale-up over the emptiest AZs, one reservation per
    // instance; moto puts a whole batch in one random AZ and one
    // reservation. The simulator models AWS, and the contract's moto
    // backend grows its groups one instance at a time to match.
    let m = Moto::provide(GroupSetup::sized(0, 9, 0)).await;
    m.aws()
        .set_desired_capacity(m.group(), 6)
        .await
        .expect("scale up");
    let g = m.aws().describe_group(m.group()).await.expect("describe");
    let azs: BTreeSet<&str> = g
        .instances
        .iter()
        .map(|i| i.availability_zone.as_str())
        .collect();
    assert_eq!(g.instances.len(), 6);
    assert_eq!(azs.len(), 1, "moto balanced after all? {azs:?}");

    let ids: Vec<String> = g.instances.iter().map(|i| i.id.clone()).collect();
    let out = m
        .raw_ec2()
        .describe_instances()
        .set_instance_ids(Some(ids))
        .send()
        .await
        .expect("describe instances");
    assert_eq!(out.reservations().len(), 1, "one reservation for the batch");
}

#[tokio::test]
async fn moto_difference_desired_above_max_size_is_accepted_when_sent_anyway() {
    // The adapter refuses it before sending (see the contract); sent
    // anyway, moto accepts what AWS answers with a ValidationError.
    let m = Moto::provide(GroupSetup::sized(1, 3, 2)).await;
    m.raw_auto_scaling()
        .set_desired_capacity()
        .auto_scaling_group_name(m.group())
        .desired_capacity(4)
        .send()
        .await
        .expect("moto accepts desired > MaxSize");
    assert_eq!(
        m.aws()
            .describe_group(m.group())
            .await
            .expect("describe")
            .desired_capacity,
        4
    );
}

#[tokio::test]
async fn moto_difference_a_terminated_instance_leaves_the_group_at_once() {
    // AWS (and the simulator) lists it Terminating until EC2 has shut it
    // down; moto drops it from the group as it answers.
    let m = Moto::provide(GroupSetup::sized(0, 5, 3)).await;
    let victim = first_instance(&m).await;
    m.aws()
        .terminate_instance(m.group(), &victim)
        .await
        .expect("terminate");
    let g = m.aws().describe_group(m.group()).await.expect("describe");
    assert!(g.instance(&victim).is_none(), "moto drops it at once");
    assert_eq!(g.instances.len(), 2);
}

#[tokio::test]
async fn moto_difference_terminating_an_instance_no_group_holds_is_an_html_500() {
    let m = Moto::provide(GroupSetup::sized(0, 5, 2)).await;
    let victim = first_instance(&m).await;
    m.aws()
        .terminate_instance(m.group(), &victim)
        .await
        .expect("terminate");

    // Sent anyway, moto answers an HTML 500 (AWS: a ValidationError); the
    // adapter maps it to "unavailable", and terminate_instance, which looks
    // before it writes, reports AlreadyGone without sending.
    let err = m
        .aws()
        .send_terminate(&victim, true)
        .await
        .expect_err("moto 500");
    assert_eq!(err.label(), "unavailable", "{err}");
    assert_eq!(
        m.aws()
            .terminate_instance(m.group(), &victim)
            .await
            .expect("check first"),
        Termination::AlreadyGone
    );
}

#[tokio::test]
async fn moto_difference_a_terminate_below_min_size_is_performed_when_sent_anyway() {
    // The adapter refuses it before sending (see the contract); sent
    // anyway, moto decrements below MinSize (AWS: ValidationError).
    let m = Moto::provide(GroupSetup::sized(2, 5, 2)).await;
    let victim = first_instance(&m).await;
    m.raw_auto_scaling()
        .terminate_instance_in_auto_scaling_group()
        .instance_id(&victim)
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .expect("moto accepts the decrement");
    assert_eq!(
        m.aws()
            .describe_group(m.group())
            .await
            .expect("describe")
            .desired_capacity,
        1
    );
}

#[tokio::test]
async fn moto_difference_a_write_on_an_unknown_group_sent_anyway_is_an_html_500() {
    // AWS (and the simulator) answers a ValidationError; moto fails with
    // an HTML 500, which maps to "unavailable". The adapter describes the
    // group before every write, so it reports group_not_found on both.
    let m = Moto::provide(GroupSetup::sized(0, 1, 0)).await;
    let missing = format!("{}-missing", m.group());
    let sent = m
        .raw_auto_scaling()
        .set_desired_capacity()
        .auto_scaling_group_name(&missing)
        .desired_capacity(1)
        .send()
        .await
        .expect_err("unknown group");
    let mapped = AwsError::from_sdk("SetDesiredCapacity", &missing, sent);
    assert_eq!(mapped.label(), "unavailable", "{mapped}");
}

#[tokio::test]
async fn moto_difference_a_process_aws_does_not_know_is_suspended() {
    // AWS (and the simulator) answers a ValidationError.
    let m = Moto::provide(GroupSetup::sized(0, 3, 1)).await;
    m.aws()
        .suspend_processes(m.group(), &[ScalingProcess::Other("Nap".into())])
        .await
        .expect("moto suspends any name");
    let g = m.aws().describe_group(m.group()).await.expect("describe");
    assert_eq!(
        g.suspended_processes,
        vec![ScalingProcess::Other("Nap".into())]
    );
}

#[tokio::test]
async fn moto_difference_min_size_above_max_size_is_stored_when_sent_anyway() {
    // The adapter refuses it before sending (see the contract); AWS (and
    // the simulator) answers a ValidationError.
    let m = Moto::provide(GroupSetup::sized(0, 3, 0)).await;
    m.raw_auto_scaling()
        .update_auto_scaling_group()
        .auto_scaling_group_name(m.group())
        .min_size(2)
        .max_size(1)
        .send()
        .await
        .expect("moto accepts min > max");
    let g = m.aws().describe_group(m.group()).await.expect("describe");
    assert_eq!((g.min_size, g.max_size), (2, 1));
}

#[tokio::test]
async fn moto_difference_scaling_activities_of_a_known_group_are_an_empty_list() {
    // moto records no scaling activities at all; their paging and parsing
    // is tested against the simulator and a scripted server (`aws::tests`).
    let m = Moto::provide(GroupSetup::sized(0, 3, 1)).await;
    let activities = m
        .aws()
        .scaling_activities(m.group(), 50)
        .await
        .expect("activities");
    assert!(activities.is_empty());
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
