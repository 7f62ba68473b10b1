//! The simulator's lifecycle hooks: the wait states, the heartbeat
//! timeout and its default result, completions and heartbeats, and AWS's
//! errors for an action that does not wait.

use super::*;
use crate::sim::scenario::Scenario;

/// Three instances, exact timings (boot 90 s, shutdown 30 s), and the
/// hooks given as `[[group.lifecycle_hooks]]` tables.
fn world(hooks: &str) -> World {
    let text = format!(
        r#"
    [group]
    name = "agents"
    min_size = 1
    max_size = 6
    desired_capacity = 3
    {hooks}
"#
    );
    World::new(&Scenario::from_toml(&text, "test").expect("valid scenario"))
}

const SHIPPER: &str = r#"
    [[group.lifecycle_hooks]]
    name = "log-shipper"
    transition = "autoscaling:EC2_INSTANCE_TERMINATING"
    heartbeat_timeout = 600
"#;

fn state_of(w: &World, id: &str) -> Option<&'static str> {
    w.describe_groups(&[])
        .remove(0)
        .instances
        .into_iter()
        .find(|i| i.instance_id == id)
        .map(|i| i.lifecycle_state)
}

fn first_instance(w: &World) -> String {
    w.describe_groups(&[]).remove(0).instances[0]
        .instance_id
        .clone()
}

fn secs(s: u64) -> SimTime {
    SimTime::from_secs(s)
}

#[test]
fn a_termination_hook_holds_the_instance_in_terminating_wait_until_its_heartbeat_timeout() {
    let mut w = world(SHIPPER);
    let id = first_instance(&w);
    w.terminate_instance(&id, true).expect("terminated");
    assert_eq!(state_of(&w, &id), Some("Terminating:Wait"));
    w.advance_to(secs(599));
    assert_eq!(state_of(&w, &id), Some("Terminating:Wait"));
    // ABANDON by default: on a termination it ends the same way.
    w.advance_to(secs(600));
    assert_eq!(state_of(&w, &id), Some("Terminating:Proceed"));
    w.advance_to(secs(630));
    assert_eq!(
        state_of(&w, &id),
        None,
        "terminated and gone from the group"
    );
}

#[test]
fn completing_the_action_ends_the_wait_at_once_and_a_second_completion_is_refused() {
    let mut w = world(SHIPPER);
    let id = first_instance(&w);
    w.terminate_instance(&id, true).expect("terminated");
    w.advance_to(secs(10));
    w.complete_lifecycle_action("agents", "log-shipper", ActionRef::Instance(&id), true)
        .expect("completed");
    assert_eq!(state_of(&w, &id), Some("Terminating:Proceed"));
    let again = w
        .complete_lifecycle_action("agents", "log-shipper", ActionRef::Instance(&id), true)
        .expect_err("no action waits any more");
    assert_eq!(again.code(), "ValidationError");
    assert_eq!(
        again.aws_message(),
        format!("No active Lifecycle Action found with instance ID {id}")
    );
    w.advance_to(secs(40));
    assert_eq!(state_of(&w, &id), None);
}

#[test]
fn a_heartbeat_restarts_the_hooks_timer() {
    let mut w = world(SHIPPER);
    let id = first_instance(&w);
    w.terminate_instance(&id, true).expect("terminated");
    w.advance_to(secs(500));
    w.record_lifecycle_action_heartbeat("agents", "log-shipper", ActionRef::Instance(&id))
        .expect("heartbeat");
    w.advance_to(secs(1099));
    assert_eq!(state_of(&w, &id), Some("Terminating:Wait"));
    w.advance_to(secs(1100));
    assert_eq!(state_of(&w, &id), Some("Terminating:Proceed"));
}

#[test]
fn the_instance_waits_for_every_hook_of_its_transition() {
    let mut w = world(&format!(
        "{SHIPPER}
    [[group.lifecycle_hooks]]
    name = \"drain\"
    transition = \"autoscaling:EC2_INSTANCE_TERMINATING\"
    heartbeat_timeout = 3600
    default_result = \"CONTINUE\"
"
    ));
    let id = first_instance(&w);
    w.terminate_instance(&id, true).expect("terminated");
    w.complete_lifecycle_action("agents", "drain", ActionRef::Instance(&id), true)
        .expect("completed");
    assert_eq!(
        state_of(&w, &id),
        Some("Terminating:Wait"),
        "the log shipper's hook still holds it"
    );
    w.advance_to(secs(600));
    assert_eq!(state_of(&w, &id), Some("Terminating:Proceed"));
}

#[test]
fn a_launch_hook_holds_new_instances_in_pending_wait_and_abandon_terminates_them() {
    let mut w = world(
        r#"
    [[group.lifecycle_hooks]]
    name = "bootstrap"
    transition = "autoscaling:EC2_INSTANCE_LAUNCHING"
    heartbeat_timeout = 300
"#,
    );
    w.set_desired_capacity("agents", 4).expect("within bounds");
    let pending = |w: &World| {
        w.describe_groups(&[])
            .remove(0)
            .instances
            .into_iter()
            .find(|i| i.lifecycle_state.starts_with("Pending"))
            .map(|i| (i.instance_id, i.lifecycle_state))
    };
    let (id, state) = pending(&w).expect("one launch");
    assert_eq!(state, "Pending");
    w.advance_to(secs(90));
    assert_eq!(state_of(&w, &id), Some("Pending:Wait"));
    // Default ABANDON after 300 s: terminated, and the group launches
    // another in its place.
    w.advance_to(secs(390));
    assert_eq!(state_of(&w, &id), Some("Terminating"));
    let (other, _) = pending(&w).expect("a replacement launch");
    assert_ne!(other, id);
}

#[test]
fn a_launch_hook_continued_puts_the_instance_in_service() {
    let mut w = world(
        r#"
    [[group.lifecycle_hooks]]
    name = "bootstrap"
    transition = "autoscaling:EC2_INSTANCE_LAUNCHING"
"#,
    );
    w.set_desired_capacity("agents", 4).expect("within bounds");
    w.advance_to(secs(90));
    let id = w
        .describe_groups(&[])
        .remove(0)
        .instances
        .into_iter()
        .find(|i| i.lifecycle_state == "Pending:Wait")
        .expect("held at launch")
        .instance_id;
    let token_is_refused =
        w.complete_lifecycle_action("agents", "bootstrap", ActionRef::Token("not-a-token"), true);
    assert!(token_is_refused.is_err());
    w.complete_lifecycle_action("agents", "bootstrap", ActionRef::Instance(&id), true)
        .expect("completed");
    assert_eq!(state_of(&w, &id), Some("InService"));
}

#[test]
fn hooks_are_described_put_replaced_and_deleted_as_aws_does() {
    let mut w = world(SHIPPER);
    let hooks = w.lifecycle_hooks("agents", &[]).expect("described");
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].name, "log-shipper");
    assert_eq!(hooks[0].transition, "autoscaling:EC2_INSTANCE_TERMINATING");
    assert_eq!(hooks[0].heartbeat_timeout_s, 600);
    assert_eq!(hooks[0].global_timeout_s, 60_000);
    assert_eq!(hooks[0].default_result, "ABANDON");

    let spec = |timeout| LifecycleHookSpec {
        name: "log-shipper".to_string(),
        transition: "autoscaling:EC2_INSTANCE_TERMINATING".to_string(),
        heartbeat_timeout: timeout,
        default_result: "CONTINUE".to_string(),
    };
    let refused = w
        .put_lifecycle_hook("agents", &spec(10))
        .expect_err("below 30 s");
    assert_eq!(refused.code(), "ValidationError");
    w.put_lifecycle_hook("agents", &spec(7200)).expect("put");
    let hooks = w.lifecycle_hooks("agents", &[]).expect("described");
    assert_eq!(hooks.len(), 1, "replaced, not added");
    assert_eq!(
        (hooks[0].heartbeat_timeout_s, hooks[0].global_timeout_s),
        (7200, 172_800),
        "the global timeout is capped at 48 h"
    );
    w.delete_lifecycle_hook("agents", "log-shipper")
        .expect("deleted");
    assert!(w.lifecycle_hooks("agents", &[]).expect("none").is_empty());
    assert!(w.delete_lifecycle_hook("agents", "log-shipper").is_err());
    assert!(w.lifecycle_hooks("nope", &[]).is_err());
}
