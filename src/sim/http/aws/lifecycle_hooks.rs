//! The lifecycle-hook actions of Auto Scaling over the world:
//! PutLifecycleHook, DescribeLifecycleHooks, DeleteLifecycleHook,
//! CompleteLifecycleAction and RecordLifecycleActionHeartbeat, their
//! parameters read as the SDK sends them and their answers in AWS's XML.

use super::query::{Params, QueryError, world_error};
use super::xml::Xml;
use crate::sim::scenario::LifecycleHookSpec;
use crate::sim::world::{ActionRef, World};

/// The lifecycle-hook actions the facade answers.
pub(super) const ACTIONS: &[&str] = &[
    "PutLifecycleHook",
    "DescribeLifecycleHooks",
    "DeleteLifecycleHook",
    "CompleteLifecycleAction",
    "RecordLifecycleActionHeartbeat",
];

/// The answer to a lifecycle-hook action (`None` for other actions); an
/// answer's body is `None` for actions whose result is empty.
pub(super) fn dispatch(
    w: &mut World,
    action: &str,
    p: &Params,
) -> Option<Result<Option<String>, QueryError>> {
    Some(match action {
        "PutLifecycleHook" => put(w, p).map(|()| Some(String::new())),
        "DescribeLifecycleHooks" => describe(w, p).map(Some),
        "DeleteLifecycleHook" => delete(w, p).map(|()| Some(String::new())),
        "CompleteLifecycleAction" => complete(w, p).map(|()| Some(String::new())),
        "RecordLifecycleActionHeartbeat" => heartbeat(w, p).map(|()| Some(String::new())),
        _ => return None,
    })
}

/// PutLifecycleHook: AWS's defaults for what is left out (heartbeat
/// timeout 3600 s, default result ABANDON); the transition is required
/// when the hook is new (the simulator requires it always).
fn put(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let heartbeat_timeout = match p.int("HeartbeatTimeout")? {
        None => 3600,
        Some(n) => u64::try_from(n).unwrap_or(0),
    };
    let spec = LifecycleHookSpec {
        name: p.required("LifecycleHookName")?.to_string(),
        transition: p.required("LifecycleTransition")?.to_string(),
        heartbeat_timeout,
        default_result: p.get("DefaultResult").unwrap_or("ABANDON").to_string(),
    };
    w.put_lifecycle_hook(group, &spec).map_err(world_error)
}

fn describe(w: &mut World, p: &Params) -> Result<String, QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let names = p.list("LifecycleHookNames.member");
    let hooks = w.lifecycle_hooks(group, &names).map_err(world_error)?;
    let mut x = Xml::new();
    x.open("LifecycleHooks");
    for h in &hooks {
        x.open("member")
            .leaf("LifecycleHookName", &h.name)
            .leaf("AutoScalingGroupName", &h.group_name)
            .leaf("LifecycleTransition", h.transition)
            .leaf("HeartbeatTimeout", h.heartbeat_timeout_s.to_string())
            .leaf("GlobalTimeout", h.global_timeout_s.to_string())
            .leaf("DefaultResult", h.default_result)
            .close("member");
    }
    x.close("LifecycleHooks");
    Ok(x.finish())
}

fn delete(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let name = p.required("LifecycleHookName")?;
    w.delete_lifecycle_hook(group, name).map_err(world_error)
}

fn complete(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let hook = p.required("LifecycleHookName")?;
    let result = p.required("LifecycleActionResult")?;
    let continue_ = match result {
        "CONTINUE" => true,
        "ABANDON" => false,
        other => {
            return Err(QueryError::sender(
                "ValidationError",
                format!(
                    "Valid values for LifecycleActionResult are CONTINUE and ABANDON, not {other}"
                ),
            ));
        }
    };
    let action = action_ref(p)?;
    w.complete_lifecycle_action(group, hook, action, continue_)
        .map_err(world_error)
}

fn heartbeat(w: &mut World, p: &Params) -> Result<(), QueryError> {
    let group = p.required("AutoScalingGroupName")?;
    let hook = p.required("LifecycleHookName")?;
    let action = action_ref(p)?;
    w.record_lifecycle_action_heartbeat(group, hook, action)
        .map_err(world_error)
}

/// The action named by `InstanceId` or `LifecycleActionToken` (one of
/// them is required).
fn action_ref(p: &Params) -> Result<ActionRef<'_>, QueryError> {
    match (p.get("InstanceId"), p.get("LifecycleActionToken")) {
        (Some(id), _) if !id.is_empty() => Ok(ActionRef::Instance(id)),
        (_, Some(token)) if !token.is_empty() => Ok(ActionRef::Token(token)),
        _ => Err(QueryError::sender(
            "ValidationError",
            "Either an InstanceId or a LifecycleActionToken must be given",
        )),
    }
}
