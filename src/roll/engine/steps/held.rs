//! `HeldInstances`: the instances an operator held out of the group's
//! hands when the roll began (in Standby; scale-in protected under
//! `protected = "wait"`) brought into the roll before its scale-up, so
//! the scale-up counts them and the drain moves their tasks as any old
//! agent's.

use super::{StepAction, StepContext, Tick};
use crate::roll::error::RollError;
use crate::roll::ports::Ports;
use crate::roll::ports::auto_scaling::{AutoScaling, LifecycleState};
use crate::roll::record::held::StandbyPolicy;
use crate::roll::record::kinds::WaitKind;

/// Takes the held instances out of Standby (`standby = "terminate"`), or
/// waits for an operator to (`"wait"`) and to lift the scale-in
/// protection of those held for it; done once each is in service and
/// unprotected as asked, or gone from the group (a later step finds an
/// instance gone as it would any).
///
/// Safe to re-run: `ExitStandby` is sent only for instances still in
/// Standby, after the intent is recorded.
pub(crate) struct HeldInstances;

impl StepAction for HeldInstances {
    async fn tick<P: Ports>(&self, cx: &mut StepContext<'_, '_, P>) -> Result<Tick, RollError> {
        let asg = cx.group().asg.clone();
        let held = cx.group().held.clone();
        let policy = cx.roll().standby;
        let group = cx.ports.aws().describe_group(&asg).await?;
        let mut standby = Vec::new();
        let mut arriving = Vec::new();
        let mut protected = Vec::new();
        for h in &held {
            let Some(instance) = group.instance(&h.id) else {
                continue;
            };
            match instance.lifecycle_state {
                LifecycleState::Standby => standby.push(h.id.clone()),
                LifecycleState::InService => {}
                _ => arriving.push(format!("{} ({})", h.id, instance.lifecycle_state.as_aws())),
            }
            if h.protected && instance.protected_from_scale_in {
                protected.push(h.id.clone());
            }
        }
        if !standby.is_empty() && policy == StandbyPolicy::Terminate {
            let list = standby.join(", ");
            cx.intend(format!("exit standby {list} (standby = terminate)"))
                .await?;
            cx.ports.aws().exit_standby(&asg, &standby).await?;
            return Ok(Tick::waiting(
                WaitKind::Operator,
                format!("{list} leaving Standby (standby = terminate)"),
            ));
        }
        let mut waiting = Vec::new();
        if !standby.is_empty() {
            waiting.push(format!(
                "{} in Standby (standby = wait): put them back in service (aws autoscaling exit-standby --auto-scaling-group-name {asg} --instance-ids {}), or rerun with --standby terminate",
                standby.join(", "),
                standby.join(" ")
            ));
        }
        if !arriving.is_empty() {
            waiting.push(format!("{} coming into service", arriving.join(", ")));
        }
        if !protected.is_empty() {
            waiting.push(format!(
                "{} protected from scale-in (protected = wait): lift it (aws autoscaling set-instance-protection --no-protected-from-scale-in --auto-scaling-group-name {asg} --instance-ids {})",
                protected.join(", "),
                protected.join(" ")
            ));
        }
        if waiting.is_empty() {
            let ids: Vec<&str> = held.iter().map(|h| h.id.as_str()).collect();
            return Ok(Tick::Done(format!(
                "{} in service and in the roll",
                ids.join(", ")
            )));
        }
        Ok(Tick::waiting(WaitKind::Operator, waiting.join("; ")))
    }
}
