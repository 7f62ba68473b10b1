//! A capped surge's later batches (`--max-surge`, or the group's instance
//! maintenance policy): `OpenBatch` waits for the batch before it to be
//! terminated, raises the desired capacity into the room those old
//! agents left (never above the surge's ceiling), waits for the new
//! instances as active Mesos agents, and then opens its own old agents
//! to the drain's waves. Every old agent has been under the roll's
//! maintenance window since the scale-up, so what the waves move off
//! this batch lands on its new agents, never on an old agent a later
//! batch empties: each task still moves once.

use super::scale_up::{record_raise, wait_registered};
use super::{StepAction, StepContext, Tick};
use crate::roll::decide::roll_plan::batch_id;
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::AutoScaling;

/// Opens batch `batch` (from 2).
///
/// Safe to re-run: the raise is recorded with its intent before the call,
/// and the value is absolute (sent again until the wait begins); the wait
/// only reads; opening is a number that only grows.
pub(crate) struct OpenBatch {
    pub(crate) batch: u32,
}

impl StepAction for OpenBatch {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let batch = self.batch;
        if cx.group().opened_batches >= batch {
            return Ok(Tick::Done(format!("batch {batch} is open to the drain")));
        }
        let raised = cx.group().surge.as_ref().and_then(|s| s.raised);
        if raised.is_none_or(|r| r.batch < batch) {
            if let Some(waiting) = before_terminated(cx, batch).await? {
                return Ok(Tick::NotYet(waiting));
            }
            raise(cx, batch).await?;
        } else {
            resend_lost_raise(cx, batch).await?;
        }
        let id = cx.id_of(&batch_id(batch));
        match wait_registered(cx, &id).await? {
            Tick::Done(registered) => {
                let old = cx
                    .group()
                    .instances
                    .iter()
                    .filter(|i| i.batch == batch)
                    .count();
                cx.group_mut().opened_batches = batch;
                cx.save().await?;
                Ok(Tick::Done(format!(
                    "batch {batch}: {registered}; its {old} old agent(s) open to the drain"
                )))
            }
            other => Ok(other),
        }
    }
}

/// What batch `batch` still waits for before it may launch: the old
/// agents of the batches before it not terminated yet, or terminations
/// sent that the group has not finished (the raise is counted from
/// terminations that have all landed); `None` when nothing.
async fn before_terminated<P: Ports>(
    cx: &mut StepContext<'_, '_, P>,
    batch: u32,
) -> Result<Option<String>, RollError> {
    let left: Vec<String> = cx
        .group()
        .instances
        .iter()
        .filter(|i| i.batch < batch && !i.terminate_sent)
        .map(|i| i.id.clone())
        .collect();
    if !left.is_empty() {
        return Ok(Some(format!(
            "batch {batch} launches once batch {} is terminated: {} old instance(s) left ({})",
            batch - 1,
            left.len(),
            named(&left)
        )));
    }
    let group = cx.observed_group().await?;
    let landing: Vec<String> = cx
        .group()
        .instances
        .iter()
        .filter(|i| i.terminate_sent && !i.reclaimed && group.still_has(&i.id))
        .map(|i| i.id.clone())
        .collect();
    if !landing.is_empty() {
        return Ok(Some(format!(
            "batch {batch} launches once the group has finished terminating {}",
            named(&landing)
        )));
    }
    Ok(None)
}

/// Raises the desired capacity for batch `batch`: N + K − terminated, at
/// most the surge's ceiling; recorded with the intent, then sent.
async fn raise<P: Ports>(cx: &mut StepContext<'_, '_, P>, batch: u32) -> Result<(), RollError> {
    let desired = cx.group().scale_up_desired();
    let asg = cx.group().asg.clone();
    let said = record_raise(cx, batch, desired);
    cx.intend(format!("set desired capacity of {asg} to {desired}{said}"))
        .await?;
    cx.ports.aws().set_desired_capacity(&asg, desired).await?;
    Ok(())
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
