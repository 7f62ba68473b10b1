//! Contract tests of the warm-pool calls moto has as well as the
//! simulator: a pool put by another client (PutWarmPool, as Terraform or
//! the console would) is read back through the adapter, a group without
//! one reads `None` (AWS answers DescribeWarmPool with no configuration),
//! and a deleted pool is gone. What instances a pool holds is not in the
//! contract: moto 5.2 launches none ("Does not create/return any
//! Instances currently"); the simulator's tests cover them
//! (`aws::contract::simulator_warm_pool`, `sim::world::asg::warm_pool`).

use aws_sdk_autoscaling::types as asg;

use super::super::{Backend, GroupSetup};
use crate::roll::ports::auto_scaling::AutoScaling;

pub(crate) async fn a_warm_pool_put_by_another_client_is_read_back_and_deleted<B: Backend>() {
    let b = B::provide(GroupSetup::sized(1, 4, 2)).await;
    let none = b.aws().warm_pool(b.group()).await.expect("described");
    assert_eq!(none, None, "no pool yet");
    b.raw_auto_scaling()
        .put_warm_pool()
        .auto_scaling_group_name(b.group())
        .min_size(1)
        .max_group_prepared_capacity(3)
        .pool_state(asg::WarmPoolState::Running)
        .instance_reuse_policy(
            asg::InstanceReusePolicy::builder()
                .reuse_on_scale_in(true)
                .build(),
        )
        .send()
        .await
        .expect("put a warm pool");
    let pool = b
        .aws()
        .warm_pool(b.group())
        .await
        .expect("described")
        .expect("a pool");
    assert_eq!(
        (
            pool.min_size,
            pool.max_group_prepared_capacity,
            pool.pool_state.as_str()
        ),
        (1, Some(3), "Running")
    );
    assert!(
        pool.instances
            .iter()
            .all(|i| i.lifecycle_state.as_aws().starts_with("Warmed:")),
        "{:?}",
        pool.instances
    );
    b.raw_auto_scaling()
        .delete_warm_pool()
        .auto_scaling_group_name(b.group())
        .force_delete(true)
        .send()
        .await
        .expect("deleted");
    let gone = b.aws().warm_pool(b.group()).await.expect("described");
    assert_eq!(gone, None, "deleted");
}
