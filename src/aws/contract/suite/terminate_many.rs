//! Contract tests of `terminate_many`, the drain's way of terminating a
//! tick's emptied agents: their instances checked together (at most 50
//! to a DescribeAutoScalingInstances, as AWS allows), several sent at
//! once, and the first round with an error the last.

use super::super::{Backend, GroupSetup};
use super::{assert_calls, describe, group_instance_ids, started_and_refused};
use crate::roll::ports::auto_scaling::{AutoScaling, Termination, TerminationRequest};

/// An id no group holds (AWS and moto ignore it in a describe).
const UNKNOWN: &str = "i-0123456789abcdef0";

fn with_decrement(ids: &[String]) -> Vec<TerminationRequest<'_>> {
    ids.iter()
        .map(|instance| TerminationRequest {
            instance,
            replace: false,
        })
        .collect()
}

/// 53 instances and one the group does not hold: two checks (50 and 4
/// ids), every instance terminated with its decrement, the unknown one
/// answered `AlreadyGone`, each answer in the order asked.
pub(in super::super) async fn terminations_sent_together_are_checked_fifty_at_a_time<B: Backend>() {
    let b = B::provide(GroupSetup::sized(0, 60, 53)).await;
    let mut ids = group_instance_ids(&b).await;
    assert_eq!(ids.len(), 53);
    ids.insert(20, UNKNOWN.to_string());
    let answers = b
        .aws()
        .terminate_many(b.group(), &with_decrement(&ids))
        .await;
    assert_eq!(answers.len(), ids.len(), "{answers:?}");
    for (id, answer) in ids.iter().zip(&answers) {
        match answer {
            Ok(Termination::AlreadyGone) => assert_eq!(id, UNKNOWN),
            Ok(Termination::Started(_)) => assert_ne!(id, UNKNOWN),
            Err(e) => panic!("{id}: {e}"),
        }
    }
    assert_calls(&b, "DescribeAutoScalingInstances", 2);
    assert_calls(&b, "TerminateInstanceInAutoScalingGroup", 53);
    assert_eq!(describe(&b).await.desired_capacity, 0);
}

/// 17 instances, MinSize 2: fifteen decrements fit. The first round of
/// eight goes through; the second's last is refused (its seven others
/// kept); the third round is not sent.
pub(in super::super) async fn a_round_with_an_error_is_the_last_its_other_answers_kept<
    B: Backend,
>() {
    let b = B::provide(GroupSetup::sized(2, 20, 17)).await;
    let ids = group_instance_ids(&b).await;
    assert_eq!(ids.len(), 17);
    let answers = b
        .aws()
        .terminate_many(b.group(), &with_decrement(&ids))
        .await;
    assert_eq!(
        answers.len(),
        16,
        "two rounds of eight answered: {answers:?}"
    );
    assert_eq!(started_and_refused(&answers), (15, 1), "{answers:?}");
    assert_calls(&b, "TerminateInstanceInAutoScalingGroup", 15);
    let g = describe(&b).await;
    assert_eq!(g.desired_capacity, 2);
    assert!(
        g.instance(&ids[16]).is_some(),
        "the third round was not sent"
    );
}
