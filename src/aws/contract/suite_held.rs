//! Contract tests of the calls behind `--standby` and `--protected`:
//! scale-in protection set and lifted by another client
//! (SetInstanceProtection, as Terraform or an operator would) reads back
//! through the adapter, and the adapter's ExitStandby brings back the
//! instances in Standby among those it is given, and only those, so a
//! second call after a crash is a no-op.

use super::{Backend, GroupSetup};
use crate::roll::ports::auto_scaling::{AutoScaling, LifecycleState};

pub(crate) async fn protection_reads_back_and_exit_standby_sends_only_standby_instances<
    B: Backend,
>() {
    let b = B::provide(GroupSetup::sized(0, 6, 3)).await;
    let g = b.aws().describe_group(b.group()).await.expect("group");
    let (first, second) = (g.instances[0].id.clone(), g.instances[1].id.clone());
    assert!(g.instances.iter().all(|i| !i.protected_from_scale_in));

    for protected in [true, false] {
        b.raw_auto_scaling()
            .set_instance_protection()
            .auto_scaling_group_name(b.group())
            .instance_ids(&second)
            .protected_from_scale_in(protected)
            .send()
            .await
            .expect("SetInstanceProtection");
        let g = b.aws().describe_group(b.group()).await.expect("group");
        let read = g.instance(&second).map(|i| i.protected_from_scale_in);
        assert_eq!(read, Some(protected), "{:?}", g.instances);
    }

    b.raw_auto_scaling()
        .enter_standby()
        .auto_scaling_group_name(b.group())
        .instance_ids(&first)
        .should_decrement_desired_capacity(true)
        .send()
        .await
        .expect("EnterStandby");
    let both = [first.clone(), second.clone()];
    // `second` is in service: sent along, AWS would refuse the whole call.
    b.aws()
        .exit_standby(b.group(), &both)
        .await
        .expect("ExitStandby of the one in Standby");
    let g = b.aws().describe_group(b.group()).await.expect("group");
    assert_eq!(g.desired_capacity, 3);
    let state = |id: &str| g.instance(id).map(|i| i.lifecycle_state.clone());
    assert_eq!(state(&first), Some(LifecycleState::InService));
    assert_eq!(state(&second), Some(LifecycleState::InService));
    b.aws()
        .exit_standby(b.group(), &both)
        .await
        .expect("a second call, none in Standby: nothing sent");
    let again = b.aws().describe_group(b.group()).await.expect("group");
    assert_eq!(again.desired_capacity, 3);
}
