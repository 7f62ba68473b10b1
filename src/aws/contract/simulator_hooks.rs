//! The adapter's lifecycle-action calls against the simulator's facade
//! only: moto holds no instance in a wait state, so there is nothing to
//! complete there. A terminated instance of a group with a termination
//! hook reads `Terminating:Wait`; completing its action is `Completed`,
//! completing it again `NotWaiting` (AWS's "No active Lifecycle Action
//! found"), and a hook the group does not have is AWS's ValidationError.

use super::simulator::Simulated;
use super::{Backend, GroupSetup};
use crate::roll::ports::auto_scaling::{
    AutoScaling, LifecycleActionCompletion, LifecycleActionResult, LifecycleState, Termination,
};
use crate::sim::scenario::LifecycleHookSpec;

#[tokio::test]
async fn a_held_termination_is_completed_once_and_then_no_longer_waits() {
    let b = Simulated::provide(GroupSetup::sized(1, 4, 3)).await;
    let group = b.group().to_string();
    b.world().with(|w| {
        w.put_lifecycle_hook(
            &group,
            &LifecycleHookSpec {
                name: "drain-agent".to_string(),
                transition: "autoscaling:EC2_INSTANCE_TERMINATING".to_string(),
                heartbeat_timeout: 3600,
                default_result: "ABANDON".to_string(),
            },
        )
        .expect("hook put")
    });
    let aws = b.aws();
    let victim = aws.describe_group(&group).await.expect("group").instances[0]
        .id
        .clone();
    let started = aws
        .terminate_instance(&group, &victim)
        .await
        .expect("terminated");
    assert!(matches!(started, Termination::Started(_)), "{started:?}");
    let held = aws.describe_group(&group).await.expect("group");
    assert_eq!(
        held.instance(&victim).map(|i| &i.lifecycle_state),
        Some(&LifecycleState::TerminatingWait)
    );
    assert!(!held.still_has(&victim), "a held termination is leaving");

    let complete = |hook: &'static str| {
        let (group, victim) = (group.clone(), victim.clone());
        async move {
            aws.complete_lifecycle_action(&group, hook, &victim, LifecycleActionResult::Continue)
                .await
        }
    };
    let unknown = complete("no-such-hook").await.expect_err("no such hook");
    assert_eq!(unknown.label(), "validation", "{unknown}");
    assert_eq!(
        complete("drain-agent").await.expect("completed"),
        LifecycleActionCompletion::Completed
    );
    let after = aws.describe_group(&group).await.expect("group");
    assert_eq!(
        after.instance(&victim).map(|i| &i.lifecycle_state),
        Some(&LifecycleState::TerminatingProceed)
    );
    assert_eq!(
        complete("drain-agent").await.expect("answered"),
        LifecycleActionCompletion::NotWaiting,
        "completing again is no failure"
    );
    assert_eq!(b.calls("CompleteLifecycleAction"), Some(3));
}
