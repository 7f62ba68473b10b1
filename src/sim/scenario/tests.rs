//! The scenario format: defaults, refusals by field, the shipped scenarios.

use super::*;
use crate::sim::world::ImageEffect;

const MINIMAL: &str = r#"
    [group]
    name = "agents"
    min_size = 3
    max_size = 6
    desired_capacity = 3

    [[apps]]
    id = "/web"
    instances = 2
"#;

fn refused(text: &str) -> String {
    match Scenario::from_toml(text, "test.toml") {
        Ok(_) => panic!("scenario was accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_minimal_scenario_gets_the_real_systems_defaults() {
    let s = Scenario::from_toml(MINIMAL, "minimal").expect("valid");
    assert_eq!(s.timings.instance_boot_s, 90.0);
    assert_eq!(s.timings.agent_ping_timeout_s, 15.0);
    assert_eq!(s.timings.max_agent_ping_timeouts, 5);
    assert_eq!(s.group.availability_zones.len(), 3);
    let app = &s.apps[0];
    assert_eq!((app.cpus, app.mem), (1.0, 128.0));
    assert_eq!(app.min_health_capacity, 1.0);
    assert_eq!(app.backoff_factor, 1.15);
    assert_eq!(app.max_launch_delay_s, 3600.0);
    assert!(app.health_check.is_none());
}

#[test]
fn api_faults_are_read_from_the_scenario_and_bad_rates_refused() {
    let text = format!(
        "{MINIMAL}\n[api_faults]\naws_throttle_rate = 0.2\n[api_faults.marathon]\nerror_rate = 0.1\nlatency_ms = 50\n"
    );
    let s = Scenario::from_toml(&text, "faulty").expect("valid");
    assert_eq!(s.api_faults.aws_throttle_rate, 0.2);
    assert_eq!(s.api_faults.marathon.latency_ms, 50);
    let err = refused(&text.replace("error_rate = 0.1", "error_rate = 2.0"));
    assert!(
        err.contains("api_faults.marathon.error_rate: 2 is not a share between 0 and 1"),
        "{err}"
    );
}

#[test]
fn an_unknown_field_is_refused_by_name() {
    let text = MINIMAL.replace("instances = 2", "instances = 2\nhealthchecks = true");
    let message = refused(&text);
    assert!(message.contains("healthchecks"), "{message}");
}

#[test]
fn a_missing_required_field_is_refused_by_name() {
    let text = MINIMAL.replace("desired_capacity = 3", "");
    let message = refused(&text);
    assert!(message.contains("desired_capacity"), "{message}");
}

#[test]
fn a_field_of_the_wrong_type_is_refused_by_name() {
    let text = MINIMAL.replace("instances = 2", "instances = \"two\"");
    let message = refused(&text);
    assert!(message.contains("instances"), "{message}");
}

#[test]
fn a_desired_capacity_above_max_is_refused() {
    let text = MINIMAL.replace("desired_capacity = 3", "desired_capacity = 7");
    let message = refused(&text);
    assert!(message.contains("group.desired_capacity"), "{message}");
}

#[test]
fn an_unsimulated_constraint_is_refused() {
    let text = MINIMAL.replace(
        "instances = 2",
        "instances = 2\nconstraints = [[\"rack\", \"GROUP_BY\"]]",
    );
    let message = refused(&text);
    assert!(message.contains("constraints"), "{message}");
}

#[test]
fn a_min_health_capacity_above_one_is_refused() {
    let text = MINIMAL.replace("instances = 2", "instances = 2\nmin_health_capacity = 1.5");
    let message = refused(&text);
    assert!(message.contains("min_health_capacity"), "{message}");
}

#[test]
fn a_counted_app_without_a_placeholder_is_refused() {
    let text = MINIMAL.replace("instances = 2", "instances = 2\ncount = 3");
    let message = refused(&text);
    assert!(message.contains("{n}"), "{message}");
}

#[test]
fn a_fault_naming_an_unknown_app_is_refused() {
    let text = format!("{MINIMAL}\n[faults]\nnever_healthy_apps = [\"/nope\"]\n");
    let message = refused(&text);
    assert!(message.contains("faults.never_healthy_apps"), "{message}");
}

#[test]
fn failing_health_checks_need_an_app_with_a_health_check() {
    let text = format!("{MINIMAL}\n[faults]\nfailing_health_checks = [\"/web\"]\n");
    let message = refused(&text);
    assert!(
        message.contains("faults.failing_health_checks"),
        "{message}"
    );
    assert!(message.contains("/web has no health check"), "{message}");
    let checked = MINIMAL.replace("instances = 2", "instances = 2\n[apps.health_check]");
    let text = format!("{checked}\n[faults]\nfailing_health_checks = [\"/web\"]\n");
    Scenario::from_toml(&text, "test.toml").expect("an app with a check is accepted");
}

#[test]
fn a_launch_template_names_its_versions_and_the_group_one_of_them() {
    let s = Scenario::from_toml(MINIMAL, "minimal").expect("valid");
    let lt = &s.group.launch_template;
    assert_eq!(
        (lt.version.as_str(), lt.latest(), lt.default_number()),
        ("1", 1, 1)
    );
    let with = |table: &str| format!("{MINIMAL}\n[group.launch_template]\n{table}\n");
    let s = Scenario::from_toml(&with("version = \"3\""), "t").expect("valid");
    assert_eq!(
        s.group.launch_template.latest(),
        3,
        "the version is the latest"
    );
    let s = Scenario::from_toml(&with("version = \"$Latest\"\nlatest_version = 4"), "t")
        .expect("valid");
    assert_eq!(s.group.launch_template.latest(), 4);
    for (table, field) in [
        (
            "version = \"3\"\nlatest_version = 2",
            "group.launch_template.version",
        ),
        ("version = \"latest\"", "group.launch_template.version"),
        ("version = \"0\"", "group.launch_template.version"),
        ("latest_version = 0", "group.launch_template.latest_version"),
        (
            "latest_version = 2\ndefault_version = 3",
            "group.launch_template.default_version",
        ),
    ] {
        let message = refused(&with(table));
        assert!(message.contains(field), "{table}: {message}");
    }
}

#[test]
fn a_bad_image_is_one_table_or_a_list_of_the_templates_versions() {
    let base = format!("{MINIMAL}\n[group.launch_template]\nlatest_version = 3\n");
    let one =
        format!("{base}\n[faults]\nbad_image = {{ version = \"2\", effect = \"unhealthy\" }}\n");
    let s = Scenario::from_toml(&one, "one").expect("valid");
    assert_eq!(
        s.faults.image_effect("agents", "2"),
        Some(ImageEffect::Unhealthy)
    );
    assert_eq!(s.faults.image_effect("agents", "1"), None);
    let many = format!(
        "{base}\n[faults]\nbad_image = [{{ version = \"2\", effect = \"crash\" }}, {{ version = \"3\", effect = \"unregistered\" }}]\n"
    );
    let s = Scenario::from_toml(&many, "many").expect("valid");
    assert_eq!(
        s.faults.image_effect("agents", "2"),
        Some(ImageEffect::Crash)
    );
    assert_eq!(
        s.faults.image_effect("agents", "3"),
        Some(ImageEffect::Unregistered)
    );
    for (bad, expected) in [
        (
            one.replace("\"2\"", "\"4\""),
            "faults.bad_image: version \"4\" is not a version of the launch template (1 to 3)",
        ),
        (
            many.replace("\"3\", effect", "\"2\", effect"),
            "faults.bad_image: version 2 appears more than once",
        ),
        (one.replace("unhealthy", "sick"), "unknown variant `sick`"),
        (one.replace("effect", "effects"), "unknown field `effects`"),
    ] {
        let message = refused(&bad);
        assert!(message.contains(expected), "{message}");
    }
}

#[test]
fn the_bad_image_scenario_starts_on_a_good_image_with_the_bad_one_published() {
    let s = Scenario::load("bad-image").expect("shipped");
    let lt = &s.group.launch_template;
    assert_eq!((lt.version.as_str(), lt.latest()), ("1", 2));
    assert_eq!(
        s.faults.image_effect("mesos-agents-bad-image", "2"),
        Some(ImageEffect::Unhealthy)
    );
    assert_eq!(s.faults.image_effect("mesos-agents-bad-image", "1"), None);
    assert_eq!(s.group.desired_capacity, 6);
    assert_eq!(s.group.availability_zones.len(), 3);
    let apps = s.expanded_apps();
    assert!(apps.iter().any(|a| a.spec.health_check.is_none()));
    assert!(apps.iter().any(|a| a.spec.instances == 1));
    assert!(
        apps.iter()
            .any(|a| a.spec.instances >= 3 && a.spec.min_health_capacity <= 0.5)
    );
}

#[test]
fn an_unknown_suspended_process_is_refused() {
    let text = MINIMAL.replace(
        "desired_capacity = 3",
        "desired_capacity = 3\nsuspended_processes = [\"AZRebalancing\"]",
    );
    let message = refused(&text);
    assert!(message.contains("AZRebalancing"), "{message}");
}

#[test]
fn counted_apps_expand_with_zero_padded_numbers() {
    let text = MINIMAL.replace("id = \"/web\"", "id = \"/svc/app-{n}\"\ncount = 12");
    let s = Scenario::from_toml(&text, "counted").expect("valid");
    let apps = s.expanded_apps();
    assert_eq!(apps.len(), 12);
    assert_eq!(apps[0].id, "/svc/app-01");
    assert_eq!(apps[11].id, "/svc/app-12");
    assert_eq!(s.task_count(), 24);
}

#[test]
fn every_shipped_scenario_loads_by_name() {
    for name in builtin_names() {
        let s = Scenario::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!s.apps.is_empty(), "{name} has apps");
    }
}

#[test]
fn a_scenario_loads_from_a_path_and_a_missing_path_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mine.toml");
    std::fs::write(&path, MINIMAL).expect("write");
    let s = Scenario::load(path.to_str().expect("utf-8 path")).expect("loads");
    assert_eq!(s.group.name, "agents");
    let missing = Scenario::load("/definitely/not/here.toml").expect_err("missing");
    assert_eq!(missing.label(), "scenario_unreadable");
}
