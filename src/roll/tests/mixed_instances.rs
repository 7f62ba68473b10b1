//! A roll onto a bad image of a group with a mixed instances policy (the
//! `bad-image-mixed` scenario: three instance types, two on-demand
//! instances and half the rest Spot): the rollback must put back the
//! policy the group had, its template at the old version, its overrides
//! and distribution untouched, never a plain template in its place; and
//! every instance the group ran meanwhile is of one of the overrides'
//! types.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::in_process::settings;
use super::in_process::{cluster, roll};
use crate::roll::engine::Outcome;
use crate::sim::world::ImageEffect;

#[tokio::test(start_paused = true)]
async fn a_bad_image_on_a_mixed_instances_group_rolls_back_to_the_policy_it_had() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("bad-image-mixed", dir.path()).await;
    let (policy_before, spot_before, size) = cluster.sim.world().with(|w| {
        let group = w.describe_groups(&[]).remove(0);
        let spot = w
            .ec2_instances(&[])
            .expect("every instance")
            .iter()
            .filter(|i| i.spot)
            .count();
        (
            group
                .mixed_instances_policy
                .expect("a mixed instances policy"),
            spot,
            group.instances.len(),
        )
    });
    assert_eq!(policy_before.launch_template.version, "1");
    assert!(spot_before > 0, "the scenario runs Spot instances");
    let overrides: BTreeSet<String> = policy_before
        .overrides
        .iter()
        .map(|(t, _)| t.clone())
        .collect();

    // The operator publishes the bad image into the policy's template.
    cluster.sim.world().with(|w| {
        w.set_bad_image("2", ImageEffect::Unhealthy)
            .expect("the fault");
        w.set_launch_template_version("2").expect("version 2");
        let moved = w.describe_groups(&[]).remove(0);
        let policy = moved.mixed_instances_policy.expect("still a policy");
        assert_eq!(policy.launch_template.version, "2");
        assert_eq!(policy.overrides, policy_before.overrides);
    });

    // Every instance type the group shows while the roll runs.
    let seen: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let watcher = {
        let (world, seen) = (cluster.sim.world(), seen.clone());
        tokio::spawn(async move {
            loop {
                world.with(|w| {
                    let group = w.describe_groups(&[]).remove(0);
                    seen.lock()
                        .unwrap()
                        .extend(group.instances.iter().map(|i| i.instance_type.clone()));
                });
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
    };
    let target = u32::try_from(size).expect("a small group");
    let (outcome, _, _) = roll(
        &cluster,
        settings(&dir.path().join("roll.json"), target, &[]),
    )
    .await;
    watcher.abort();
    assert!(matches!(outcome, Outcome::RolledBack { .. }), "{outcome:?}");

    let (after, spot_after) = cluster.sim.world().with(|w| {
        let spot = w
            .ec2_instances(&[])
            .expect("every instance")
            .iter()
            .filter(|i| i.spot && i.state == "running")
            .count();
        (w.describe_groups(&[]).remove(0), spot)
    });
    assert_eq!(
        after.mixed_instances_policy.as_ref(),
        Some(&policy_before),
        "the policy as it was: template at version 1, overrides and distribution untouched"
    );
    assert_eq!(after.instances.len(), size);
    assert!(
        after
            .instances
            .iter()
            .all(|i| i.launch_template.version == "1"),
        "only old instances are left: {:?}",
        after.instances
    );
    assert_eq!(spot_after, spot_before, "the Spot/on-demand mix as before");
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.is_subset(&overrides),
        "instance types {seen:?} outside the overrides {overrides:?}"
    );
    cluster.sim.shutdown().await;
}
