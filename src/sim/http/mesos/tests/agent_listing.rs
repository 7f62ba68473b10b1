//! The agent fields a Mesos 1.9 master writes and real clients read:
//! `/master/slaves` (Mesos' `SlaveWriter` and `SlavesWriter::writeSlave`,
//! src/master/readonly_handler.cpp) and GET_AGENTS (`createAgentResponse`,
//! src/common/protobuf_utils.cpp), each with its JSON type.

use serde_json::Value;

use super::{Masters, get_json};

/// The JSON type of a value, to name in a failed assertion.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn assert_kinds(what: &str, value: &Value, expected: &[(&str, &str)]) {
    for (field, want) in expected {
        let got = value.get(field).map_or("absent", kind);
        assert_eq!(got, *want, "{what}.{field}");
    }
}

/// The first agent that runs a task (every `demo` app has tasks at once).
fn busy<'a>(agents: &'a [Value], used: &str) -> &'a Value {
    agents
        .iter()
        .find(|a| a[used].as_array().is_some_and(|r| !r.is_empty()))
        .expect("an agent with a task")
}

fn by_name<'a>(resources: &'a Value, name: &str) -> Option<&'a Value> {
    resources
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["name"] == name)
}

#[tokio::test]
async fn master_slaves_writes_every_field_of_a_1_9_master_with_its_type() {
    let masters = Masters::start().await;
    let slaves = get_json(format!("{}/master/slaves", masters.urls[0])).await;
    let agents = slaves["slaves"].as_array().expect("slaves");
    assert_eq!(agents.len(), 12);
    for agent in agents {
        assert_kinds(
            "slave",
            agent,
            &[
                ("id", "string"),
                ("pid", "string"),
                ("hostname", "string"),
                ("port", "integer"),
                ("attributes", "object"),
                ("registered_time", "float"),
                ("resources", "object"),
                ("used_resources", "object"),
                ("offered_resources", "object"),
                ("reserved_resources", "object"),
                ("unreserved_resources", "object"),
                ("reserved_resources_full", "object"),
                ("unreserved_resources_full", "array"),
                ("used_resources_full", "array"),
                ("offered_resources_full", "array"),
                ("active", "bool"),
                ("deactivated", "bool"),
                ("version", "string"),
                ("capabilities", "array"),
                // Only for a drained agent.
                ("drain_info", "absent"),
                ("estimated_drain_start_time_seconds", "absent"),
            ],
        );
        // Mesos' `json(Resources)` writes the four scalars always.
        for resources in ["resources", "used_resources", "offered_resources"] {
            for name in ["cpus", "gpus", "mem", "disk"] {
                assert!(agent[resources][name].is_number(), "{resources}.{name}");
            }
        }
        let capabilities: Vec<&str> = agent["capabilities"]
            .as_array()
            .expect("capabilities")
            .iter()
            .map(|c| c.as_str().expect("a capability's name"))
            .collect();
        assert!(capabilities.contains(&"AGENT_DRAINING"), "{capabilities:?}");
        assert!(capabilities.contains(&"AGENT_OPERATION_FEEDBACK"));
    }
    // The tasks' host ports are used RANGES, as `used_resources` has them.
    let agent = busy(agents, "used_resources_full");
    let ports = by_name(&agent["used_resources_full"], "ports").expect("used ports");
    assert_eq!(ports["type"], "RANGES");
    assert!(ports["ranges"]["range"][0]["begin"].is_u64());
    assert!(agent["used_resources"]["ports"].is_string());
}

#[tokio::test]
async fn the_master_answers_without_its_prefix_as_libprocess_delegates_to_it() {
    let masters = Masters::start().await;
    let prefixed = get_json(format!("{}/master/slaves", masters.urls[0])).await;
    let bare = get_json(format!("{}/slaves", masters.urls[0])).await;
    assert_eq!(prefixed, bare);
    let answer = Masters::raw()
        .post(format!("{}/master/api/v1", masters.urls[0]))
        .json(&serde_json::json!({"type": "GET_AGENTS"}))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 200);
    // A follower redirects the bare path to the same bare path.
    let answer = Masters::raw()
        .get(format!("{}/slaves", masters.urls[1]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 307);
    assert_eq!(
        answer.headers()["location"],
        format!("//{}/slaves", masters.authority(0)).as_str()
    );
}

#[tokio::test]
async fn get_agents_writes_capabilities_and_allocated_ports_as_protobuf_json() {
    let masters = Masters::start().await;
    let answer: Value = Masters::raw()
        .post(format!("{}/api/v1", masters.urls[0]))
        .json(&serde_json::json!({"type": "GET_AGENTS"}))
        .send()
        .await
        .expect("an answer")
        .json()
        .await
        .expect("JSON");
    let agents = answer["get_agents"]["agents"].as_array().expect("agents");
    assert_eq!(agents.len(), 12);
    for agent in agents {
        assert_kinds(
            "agent",
            agent,
            &[
                ("agent_info", "object"),
                ("active", "bool"),
                ("deactivated", "bool"),
                ("pid", "string"),
                ("registered_time", "object"),
                ("total_resources", "array"),
                ("version", "string"),
                ("capabilities", "array"),
                // Empty repeated fields and unset messages are left out.
                ("offered_resources", "absent"),
                ("drain_info", "absent"),
                ("estimated_drain_start_time", "absent"),
            ],
        );
        assert_kinds(
            "agent_info",
            &agent["agent_info"],
            &[
                ("id", "object"),
                ("hostname", "string"),
                ("port", "integer"),
                ("resources", "array"),
                ("attributes", "array"),
            ],
        );
        let types: Vec<&str> = agent["capabilities"]
            .as_array()
            .expect("capabilities")
            .iter()
            .map(|c| c["type"].as_str().expect("{\"type\": NAME}"))
            .collect();
        assert!(types.contains(&"AGENT_DRAINING"), "{types:?}");
    }
    let agent = busy(agents, "allocated_resources");
    let ports = by_name(&agent["allocated_resources"], "ports").expect("allocated ports");
    assert_eq!(ports["type"], "RANGES");
    assert_eq!(ports["role"], "*");
}
