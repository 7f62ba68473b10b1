//! `WarmPool` (before the scale-up) and `RollbackWarmPool` (after the
//! rollback restored the group's launch source): every instance waiting
//! in the group's warm pool that was launched from another source than
//! the one the group launches from now is terminated, and the step waits
//! until the pool holds none and its refill is ready (`Warmed:Pending` no
//! more), so that the scale-up's launches are warm starts. AWS's own way to update a warm pool: its
//! instances keep the template they were launched from, "you can
//! terminate existing instances in the warm pool" and the pool refills
//! from the group's template at once (user guide, "Updating instances in
//! a warm pool"); an Instance Refresh does the same, after the group's
//! instances. roller does it first, so that a scale-up that draws on the
//! pool can only bring current instances into the group, and a rollback
//! leaves no bad-image instance warm for the next scale-out.
//!
//! A group without a warm pool: one DescribeWarmPool, done.
//!
//! Safe to re-run: the intent is written before the terminations; each
//! termination checks first that the instance still waits in the pool
//! (one already leaving is `AlreadyGone`), and the pool's state is read
//! again on every tick.

use super::{StepAction, StepContext, Tick};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::AutoScaling;
use crate::roll::record::checkpoint::EventKind;
use crate::roll::record::kinds::WaitKind;

/// Replaces the warm pool's outdated instances (`rollback`: after the
/// group's launch source was set back, its instances launched from the
/// rolled-onto, bad source).
pub(crate) struct ReplaceWarmPool {
    pub(crate) rollback: bool,
}

impl StepAction for ReplaceWarmPool {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let asg = cx.group().asg.clone();
        let Some(pool) = cx.ports.aws().warm_pool(&asg).await? else {
            return Ok(Tick::Done(format!("{asg} has no warm pool")));
        };
        let group = cx.ports.aws().describe_group(&asg).await?;
        let source = group.launch_source.as_ref();
        let left = pool.any_outdated(source);
        let what = if self.rollback {
            "launched from the rolled-back source"
        } else {
            "launched from an outdated source"
        };
        if left == 0 {
            // Refilling: the scale-up draws only on instances that are
            // ready (a warm start); wait for those on their way in.
            let filling = pool.filling();
            if filling > 0 {
                return Ok(Tick::waiting(
                    WaitKind::Registered,
                    format!(
                        "waiting for {filling} warm instance(s) launching into {asg}'s warm pool from the group's launch source"
                    ),
                ));
            }
            return Ok(Tick::Done(format!(
                "no instance of the warm pool ({} waiting) is {what}",
                pool.instances.len()
            )));
        }
        let going: Vec<String> = pool.outdated(source).map(|i| i.id.clone()).collect();
        if !going.is_empty() {
            cx.intend(format!(
                "terminate {} warm instance(s) of {asg} {what}, so that the pool refills from the group's launch source: {}",
                going.len(),
                going.join(", ")
            ))
            .await?;
            for id in &going {
                let result = cx.ports.aws().terminate_warm_instance(&asg, id).await?;
                cx.record(EventKind::Terminate, format!("warm {id}: {result}"));
            }
        }
        Ok(Tick::waiting(
            // The pool's refill is launches, timed as the scale-up's.
            WaitKind::Registered,
            format!("waiting for {left} warm instance(s) {what} to leave {asg}'s warm pool"),
        ))
    }
}
