//! The app fields real clients read from `GET /v2/apps`, with and without
//! `embed=apps.tasks`, each of the JSON type Marathon writes (the 1.5
//! captures and the RAML `App`): counts and deployments always (Marathon's
//! `AppsResource` adds `apps.counts` and `apps.deployments` to every
//! listing), tasks only when embedded, the service port as
//! `portDefinitions` on the host's network.

use super::*;

fn assert_app_fields(app: &Value) {
    let id = &app["id"];
    for (key, check) in [
        ("version", Value::is_string as fn(&Value) -> bool),
        ("versionInfo", Value::is_object),
        ("upgradeStrategy", Value::is_object),
        ("unreachableStrategy", Value::is_object),
        ("backoffSeconds", Value::is_number),
        ("backoffFactor", Value::is_number),
        ("maxLaunchDelaySeconds", Value::is_number),
        ("labels", Value::is_object),
        ("deployments", Value::is_array),
        ("tasksStaged", Value::is_u64),
        ("tasksRunning", Value::is_u64),
        ("tasksHealthy", Value::is_u64),
        ("tasksUnhealthy", Value::is_u64),
        ("instances", Value::is_u64),
        ("healthChecks", Value::is_array),
        ("constraints", Value::is_array),
        ("killSelection", Value::is_string),
        ("portDefinitions", Value::is_array),
        ("networks", Value::is_array),
    ] {
        assert!(
            app.get(key).is_some_and(check),
            "{key} of {id}: {:?}",
            app.get(key)
        );
    }
    for key in ["lastScalingAt", "lastConfigChangeAt"] {
        assert!(app["versionInfo"][key].is_string(), "{key} of {id}");
    }
    assert_eq!(
        app["networks"],
        serde_json::json!([{"mode": "host"}]),
        "{id}"
    );
    let definitions = array(&app["portDefinitions"]);
    assert_eq!(definitions.len(), 1, "{id}");
    assert_eq!(definitions[0]["port"], app["ports"][0], "{id}");
    assert_eq!(definitions[0]["protocol"], "tcp");
    assert!(definitions[0]["labels"].is_object());
}

#[tokio::test]
async fn every_listing_carries_counts_deployments_and_port_definitions_and_tasks_only_embedded() {
    let marathons = Marathons::start(1.0).await;
    let bare = marathons.get_json(0, "/v2/apps").await;
    let embedded = marathons.get_json(0, "/v2/apps?embed=apps.tasks").await;
    let (bare, embedded) = (array(&bare["apps"]), array(&embedded["apps"]));
    assert!(!bare.is_empty());
    assert_eq!(bare.len(), embedded.len());
    for (app, with_tasks) in bare.iter().zip(embedded) {
        assert_app_fields(app);
        assert_app_fields(with_tasks);
        assert!(app.get("tasks").is_none(), "{}", app["id"]);
        assert!(with_tasks["tasks"].is_array(), "{}", app["id"]);
    }
}
