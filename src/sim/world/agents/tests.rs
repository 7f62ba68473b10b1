//! The agent rules that depend on an agent's Mesos version.

use super::agent_capabilities;
use crate::sim::scenario::Scenario;
use crate::sim::world::{MesosError, World};

/// Two agents of Mesos `version`.
fn agents_of(version: &str) -> World {
    let text = format!(
        r#"
        [group]
        name = "agents"
        min_size = 2
        max_size = 2
        desired_capacity = 2

        [agent]
        version = "{version}"
        "#
    );
    World::new(&Scenario::from_toml(&text, "test").expect("valid scenario"))
}

#[test]
fn drain_agent_of_an_agent_older_than_1_9_is_refused_as_not_capable_of_draining() {
    let mut w = agents_of("1.8.1");
    let agent = w.agents().remove(0);
    assert!(!agent.capabilities.contains(&"AGENT_DRAINING"));
    let err = w.drain_agent(&agent.id).expect_err("not capable");
    assert_eq!(err.label(), "not_capable_of_draining");
    assert_eq!(
        err.to_string(),
        format!("Agent {} is not capable of draining", agent.id)
    );
    let after = w.agent(&agent.id).expect("still registered");
    assert!(after.drain.is_none() && !after.deactivated);
    // Deactivation needs no capability.
    w.deactivate_agent(&agent.id).expect("known");
}

#[test]
fn a_1_9_agent_drains_and_a_1_10_agent_announces_task_resource_limits_too() {
    let mut w = agents_of("1.9.0");
    let agent = w.agents().remove(0);
    w.drain_agent(&agent.id).expect("capable");
    assert!(matches!(
        w.reactivate_agent("nope"),
        Err(MesosError::NotDeactivated { .. })
    ));
    assert_eq!(
        agent_capabilities("1.10.0").last(),
        Some(&"TASK_RESOURCE_LIMITS")
    );
    assert!(!agent_capabilities("1.9.0").contains(&"TASK_RESOURCE_LIMITS"));
    assert!(agent_capabilities("1.9.0").contains(&"AGENT_DRAINING"));
}
