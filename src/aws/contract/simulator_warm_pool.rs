//! The adapter's warm-pool calls against the simulator's facade only:
//! moto launches no instance into a pool, so there is nothing to page
//! through or terminate there. DescribeWarmPool pages through the pool
//! (NextToken), each instance with the template version it was launched
//! from; a warm instance's termination leaves the desired capacity as it
//! is, and terminating it again is `AlreadyGone`.

use super::simulator::Simulated;
use super::{Backend, GroupSetup};
use crate::roll::ports::auto_scaling::{AutoScaling, LaunchSource, Termination};
use crate::sim::scenario::WarmPoolSpec;

#[tokio::test]
async fn a_warm_pool_pages_and_its_instances_are_terminated_once_without_decrement() {
    let b = Simulated::provide(GroupSetup::sized(1, 6, 2)).await;
    let group = b.group().to_string();
    b.world().with(|w| {
        w.put_warm_pool(&group, &WarmPoolSpec::default())
            .expect("pool put")
    });
    let paged = b.aws_paging_by(1).await;
    let pool = paged
        .warm_pool(&group)
        .await
        .expect("described")
        .expect("a pool");
    assert_eq!(
        pool.instances.len(),
        4,
        "MaxSize 6 − desired 2, across pages"
    );
    assert_eq!(b.calls("DescribeWarmPool"), Some(4));
    let source = b
        .aws()
        .describe_group(&group)
        .await
        .expect("group")
        .launch_source;
    assert!(
        pool.instances
            .iter()
            .all(|i| !i.is_outdated(source.as_ref())),
        "filled from the group's template: {:?}",
        pool.instances
    );
    assert!(matches!(
        pool.instances[0].launch_source,
        Some(LaunchSource::Template { .. })
    ));
    let victim = pool.instances[0].id.clone();
    let started = b
        .aws()
        .terminate_warm_instance(&group, &victim)
        .await
        .expect("terminated");
    assert!(matches!(started, Termination::Started(_)), "{started:?}");
    let again = b
        .aws()
        .terminate_warm_instance(&group, &victim)
        .await
        .expect("answered");
    assert_eq!(again, Termination::AlreadyGone);
    let g = b.aws().describe_group(&group).await.expect("group");
    assert_eq!(g.desired_capacity, 2, "no decrement");
    assert_eq!(b.calls("TerminateInstanceInAutoScalingGroup"), Some(1));
}
