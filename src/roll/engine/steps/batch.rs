//! A capped surge's later batches (`--max-surge`, or the group's instance
//! maintenance policy): `OpenBatch` waits for the old agents of the
//! batches before it to be terminated (the group launched a new instance
//! in each one's place, within its ceiling: `GroupRoll::replaces_next`),
//! waits for those new instances as active Mesos agents, and then opens
//! old agents to the drain's waves: its own, and more while the new
//! agents' free resources take their tasks (`take_in`). Every old agent
//! has been under the roll's maintenance window since the scale-up, so
//! what the waves move off an open batch lands on new agents, never on
//! an old agent a later batch empties: each task still moves once.

use super::batch_room::{beyond_said, take_in};
use super::scale_up::wait_registered;
use super::{StepAction, StepContext, Tick};
use crate::roll::decide::roll_plan::batch_id;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::AutoScaling;

/// Opens batch `batch` (from 2).
///
/// Safe to re-run: it sends nothing but a lost raise's absolute value
/// again; the wait only reads; which old agents open is recorded with
/// the step's completion, and opening only grows.
pub(crate) struct OpenBatch {
    pub(crate) batch: u32,
}

impl StepAction for OpenBatch {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let batch = self.batch;
        if cx.group().opened_batches >= batch {
            return Ok(Tick::Done(format!("batch {batch} is open to the drain")));
        }
        if let Some(waiting) = before_terminated(cx, batch) {
            return Ok(Tick::NotYet(waiting));
        }
        resend_lost_raise(cx, batch).await?;
        let id = cx.id_of(&batch_id(batch));
        let registered = wait_registered(cx, &id).await?;
        if !cx.group().instances.iter().any(|i| i.batch >= batch) {
            // Every old agent went (those before it are terminated): what
            // is left is the new instances launched in their place.
            let Tick::Done(registered) = registered else {
                return Ok(registered);
            };
            cx.group_mut().opened_batches = batch;
            return Ok(Tick::Done(format!(
                "batch {batch}: {registered}; nothing left to open (earlier batches took its \
                 old agents in)"
            )));
        }
        match registered {
            Tick::Done(registered) => {
                let (opened, beyond) = take_in(cx, batch).await?;
                if opened == 0 {
                    return Ok(Tick::waiting(
                        crate::roll::record::kinds::WaitKind::TaskMoves,
                        format!(
                            "batch {batch}: {registered}, but they have no room for another \
                             old agent's tasks"
                        ),
                    ));
                }
                cx.group_mut().opened_batches = batch;
                cx.save().await?;
                Ok(Tick::Done(format!(
                    "batch {batch}: {registered}; {opened} old agent(s) open to the drain{}",
                    beyond_said(beyond)
                )))
            }
            other => Ok(other),
        }
    }
}

/// What batch `batch` still waits for before its new agents can be
/// there: old agents of the batches before it not terminated yet.
fn before_terminated<P: Ports>(cx: &StepContext<'_, '_, P>, batch: u32) -> Option<String> {
    let left: Vec<String> = cx
        .group()
        .instances
        .iter()
        .filter(|i| i.batch < batch && !i.terminate_sent)
        .map(|i| i.id.clone())
        .collect();
    (!left.is_empty()).then(|| {
        format!(
            "batch {batch} opens once batch {} is terminated: {} old instance(s) left ({})",
            batch - 1,
            left.len(),
            named(&left)
        )
    })
}

/// A raise recorded whose call may never have landed (a crash between
/// the intent and the call): when the group's desired capacity is below
/// what the raise set (less the terminations landed since), the same
/// absolute value is sent again.
async fn resend_lost_raise<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    batch: u32,
) -> Result<(), RollError> {
    let group = cx.observed_group().await?;
    let record = cx.group();
    let expected = record.expected_desired(record.terminations_landed(&group));
    if group.desired_capacity >= expected {
        return Ok(());
    }
    let asg = record.asg.clone();
    cx.intend(format!(
        "set desired capacity of {asg} to {expected} again (batch {batch}: the group has {}, \
         the raise's call was lost)",
        group.desired_capacity
    ))
    .await?;
    cx.ports.aws().set_desired_capacity(&asg, expected).await?;
    Ok(())
}

/// A few ids, and how many in all when there are more.
fn named(ids: &[String]) -> String {
    if ids.len() > 3 {
        format!("{}, … {} in all", ids[..3].join(", "), ids.len())
    } else {
        ids.join(", ")
    }
}
