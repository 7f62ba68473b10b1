//! Contract tests of the lifecycle-hook calls moto has as well as the
//! simulator: hooks put by another client (PutLifecycleHook, as Terraform
//! or the console would) are read back through the adapter with AWS's
//! defaults. The waits themselves (moto holds no instance in a wait
//! state) are the simulator's: `sim::world::asg::hooks` and
//! `sim::http::aws::tests`.

use std::time::Duration;

use super::{Backend, GroupSetup};
use crate::roll::ports::auto_scaling::{
    AutoScaling, HookTransition, LifecycleActionResult, LifecycleHook,
};

pub(crate) async fn lifecycle_hooks_put_by_another_client_are_read_with_aws_defaults<B: Backend>() {
    let b = B::provide(GroupSetup::sized(1, 4, 2)).await;
    let none = b.aws().lifecycle_hooks(b.group()).await.expect("no hooks");
    assert!(none.is_empty(), "{none:?}");
    b.raw_auto_scaling()
        .put_lifecycle_hook()
        .auto_scaling_group_name(b.group())
        .lifecycle_hook_name("log-shipper")
        .lifecycle_transition("autoscaling:EC2_INSTANCE_TERMINATING")
        .heartbeat_timeout(600)
        .default_result("CONTINUE")
        .send()
        .await
        .expect("put the log shipper's hook");
    b.raw_auto_scaling()
        .put_lifecycle_hook()
        .auto_scaling_group_name(b.group())
        .lifecycle_hook_name("bootstrap")
        .lifecycle_transition("autoscaling:EC2_INSTANCE_LAUNCHING")
        .send()
        .await
        .expect("put a launch hook with AWS's defaults");
    let mut hooks = b.aws().lifecycle_hooks(b.group()).await.expect("hooks");
    hooks.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        hooks,
        vec![
            LifecycleHook {
                name: "bootstrap".to_string(),
                transition: HookTransition::Launching,
                heartbeat_timeout: Duration::from_secs(3600),
                default_result: LifecycleActionResult::Abandon,
            },
            LifecycleHook {
                name: "log-shipper".to_string(),
                transition: HookTransition::Terminating,
                heartbeat_timeout: Duration::from_secs(600),
                default_result: LifecycleActionResult::Continue,
            },
        ]
    );
    assert!(hooks[1].on_termination() && hooks[0].on_launch());
}
