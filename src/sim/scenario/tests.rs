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
fn a_single_instance_app_marathon_would_not_create_is_refused() {
    let label = "[apps.labels]\nMARATHON_SINGLE_INSTANCE_APP = \"true\"";
    // Two instances: Marathon's `complyWithSingleInstanceLabelRules`.
    let text = MINIMAL.replace("instances = 2", &format!("instances = 2\n{label}"));
    let message = refused(&text);
    assert!(
        message.contains("Single instance app may only have one instance"),
        "{message}"
    );
    // One instance, but Marathon's default upgradeStrategy (1/1).
    let text = MINIMAL.replace("instances = 2", &format!("instances = 1\n{label}"));
    let message = refused(&text);
    assert!(message.contains("max_over_capacity = 0"), "{message}");
    // As DC/OS deploys an SDK scheduler: accepted.
    let text = MINIMAL.replace(
        "instances = 2",
        &format!("instances = 1\nmin_health_capacity = 0\nmax_over_capacity = 0\n{label}"),
    );
    let s = Scenario::from_toml(&text, "test.toml").expect("valid");
    assert!(s.apps[0].single_instance());
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

/// A private group and a public one (`slave_public`, smaller agents).
const CLUSTER: &str = r#"
    [[groups]]
    name = "private"
    min_size = 3
    max_size = 6
    desired_capacity = 3

    [[groups]]
    name = "public"
    min_size = 2
    max_size = 4
    desired_capacity = 2
    role = "slave_public"
    [groups.agent]
    cpus = 2
    mem = 4096

    [agent]
    cpus = 8
    mem = 16384

    [[apps]]
    id = "/web"
    instances = 2

    [[apps]]
    id = "/edge/lb"
    instances = 2
    accepted_resource_roles = ["slave_public"]
"#;

#[test]
fn groups_tables_make_a_cluster_whose_groups_keep_their_own_shape_and_role() {
    let s = Scenario::from_toml(CLUSTER, "cluster").expect("valid");
    let names: Vec<&str> = s.groups().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["private", "public"]);
    assert_eq!(s.group.name, "private", "the first group is `group`");
    let public = &s.other_groups[0];
    assert_eq!(public.role.as_deref(), Some(PUBLIC_ROLE));
    assert_eq!(s.agent_of(public).cpus, 2.0);
    assert_eq!(s.agent_of(&s.group).cpus, 8.0, "the top-level [agent]");
    assert_eq!(s.marathon_role(), Some("slave_public"));
    let apps = s.expanded_apps();
    assert!(apps[0].spec.accepts(None) && !apps[0].spec.accepts(Some(PUBLIC_ROLE)));
    assert!(apps[1].spec.accepts(Some(PUBLIC_ROLE)) && !apps[1].spec.accepts(None));
}

#[test]
fn the_one_group_form_is_a_cluster_of_one_without_a_role() {
    let s = Scenario::from_toml(MINIMAL, "minimal").expect("valid");
    assert_eq!(s.groups().count(), 1);
    assert!(s.other_groups.is_empty());
    assert_eq!(s.marathon_role(), None);
    let listed = MINIMAL.replace("[group]", "[[groups]]");
    let s = Scenario::from_toml(&listed, "listed").expect("valid");
    assert_eq!(s.group.name, "agents");
    // Refusals name the form used: `group.` for [group], `groups[i]` else.
    let message = refused(&listed.replace("desired_capacity = 3", "desired_capacity = 9"));
    assert!(
        message.contains("groups[0] (agents).desired_capacity"),
        "{message}"
    );
}

#[test]
fn both_forms_at_once_or_neither_are_refused_naming_groups() {
    let both = format!(
        "{MINIMAL}\n[[groups]]\nname = \"more\"\nmin_size = 1\nmax_size = 1\ndesired_capacity = 1\n"
    );
    let message = refused(&both);
    assert!(
        message.contains("groups: give either one [group]"),
        "{message}"
    );
    let neither = "[[apps]]\nid = \"/web\"\ninstances = 1\n";
    let message = refused(neither);
    assert!(message.contains("groups: a scenario needs"), "{message}");
}

#[test]
fn a_group_name_given_twice_is_refused() {
    let text = CLUSTER.replace("name = \"public\"", "name = \"private\"");
    let message = refused(&text);
    assert!(
        message.contains("groups[1] (private).name: group private appears more than once"),
        "{message}"
    );
}

#[test]
fn a_bad_role_is_refused_naming_the_groups_role() {
    for (role, why) in [
        ("*", "is the unreserved role"),
        ("", "cannot be empty"),
        ("-public", "cannot start with a dash"),
        ("slave public", "whitespace"),
        ("a//b", "two adjacent slashes"),
        ("a/..", "cannot be ., .. or *"),
    ] {
        let text = CLUSTER.replace("role = \"slave_public\"", &format!("role = {role:?}"));
        let message = refused(&text);
        assert!(
            message.contains("groups[1] (public).role"),
            "{role}: {message}"
        );
        assert!(message.contains(why), "{role}: {message}");
    }
    let text = CLUSTER
        .replace("role = \"slave_public\"", "role = \"a/b\"")
        .replace("[\"slave_public\"]", "[\"a/b\"]");
    Scenario::from_toml(&text, "hierarchical").expect("a hierarchical role is a role");
}

#[test]
fn marathon_has_one_role_so_two_reserved_roles_are_refused() {
    let text = CLUSTER.replace(
        "    [[groups]]\n    name = \"public\"",
        "    [[groups]]\n    name = \"gpu\"\n    min_size = 1\n    max_size = 1\n    desired_capacity = 1\n    role = \"gpu\"\n\n    [[groups]]\n    name = \"public\"",
    );
    let message = refused(&text);
    assert!(message.contains("groups[2] (public).role"), "{message}");
    assert!(message.contains("one role (--mesos_role)"), "{message}");
}

#[test]
fn an_apps_roles_must_be_valid_and_accept_some_groups_agents() {
    for (roles, why) in [
        ("[]", "must name at least one role"),
        ("[\"bad role\"]", "whitespace"),
        (
            "[\"ads\"]",
            "accepts no group's agents (their roles: *, slave_public)",
        ),
    ] {
        let text = CLUSTER.replace("[\"slave_public\"]", roles);
        let message = refused(&text);
        assert!(
            message.contains("apps[1] (/edge/lb).accepted_resource_roles"),
            "{roles}: {message}"
        );
        assert!(message.contains(why), "{roles}: {message}");
    }
    // A public app is checked against the public agents' shape.
    let text = CLUSTER.replace(
        "instances = 2\n    accepted_resource_roles",
        "instances = 2\n    cpus = 4\n    accepted_resource_roles",
    );
    let message = refused(&text);
    assert!(
        message.contains("apps[1] (/edge/lb).cpus: 4 does not fit on an agent"),
        "{message}"
    );
}

#[test]
fn a_bad_image_may_name_its_group_and_then_spares_the_others() {
    let text = format!(
        "{}\n[groups.launch_template]\nlatest_version = 2\n[faults]\nbad_image = {{ version = \"2\", effect = \"crash\", group = \"public\" }}\n",
        CLUSTER.split("[agent]").next().expect("groups")
    );
    let s = Scenario::from_toml(&text, "bad public").expect("valid");
    assert_eq!(
        s.faults.image_effect("public", "2"),
        Some(ImageEffect::Crash)
    );
    assert_eq!(s.faults.image_effect("private", "2"), None);
    let message = refused(&text.replace("group = \"public\"", "group = \"nope\""));
    assert!(
        message.contains("faults.bad_image: group \"nope\" is not a group"),
        "{message}"
    );
    // The private group's template has only version 1.
    let message = refused(&text.replace("group = \"public\"", "group = \"private\""));
    assert!(message.contains("(1 to 1)"), "{message}");
}

#[test]
fn a_job_gets_metronomes_defaults() {
    let text = format!("{MINIMAL}\n[[jobs]]\nid = \"nightly-backup\"\nduration_s = 7200\n");
    let s = Scenario::from_toml(&text, "jobs").expect("valid");
    let job = &s.jobs[0];
    assert_eq!(job.framework, "metronome");
    assert_eq!((job.cpus, job.mem), (1.0, 128.0));
    assert_eq!(job.start_s, 0.0);
    assert_eq!(job.grace_s, 3.0);
}

#[test]
fn a_bad_job_is_refused_by_field_name() {
    let job = |fields: &str| {
        format!("{MINIMAL}\n[[jobs]]\nid = \"backup\"\nstart_s = 200\nduration_s = 60\n{fields}\n")
    };
    let cases = [
        (job("retries = 3"), "retries"),
        (
            job("framework = \"marathon\""),
            "jobs[0].framework: must name a framework other than Marathon",
        ),
        (
            job("").replace("id = \"backup\"", "id = \" \""),
            "jobs[0].id: must not be empty",
        ),
        (
            job("").replace("start_s = 200", "start_s = -1"),
            "jobs[0].start_s: must be a number at least 0",
        ),
        (
            job("").replace("duration_s = 60", "duration_s = 0"),
            "jobs[0].duration_s: must be a number above 0",
        ),
        (
            job("grace_s = -5"),
            "jobs[0].grace_s: must be a number at least 0",
        ),
        (
            job("cpus = 64"),
            "jobs[0].cpus: a run of 64 cpus and 128 MB fits on no unreserved agent",
        ),
        (
            format!("{}\n[[jobs]]\nid = \"backup\"\nduration_s = 1\n", job("")),
            "jobs[1].id: job backup of framework metronome appears more than once",
        ),
    ];
    for (text, expected) in cases {
        let err = refused(&text);
        assert!(err.contains(expected), "{expected}\n  got: {err}");
    }
    // Another framework may have a job of the same id.
    let other = format!(
        "{}\n[[jobs]]\nframework = \"chronos\"\nid = \"backup\"\nduration_s = 1\n",
        job("")
    );
    Scenario::from_toml(&other, "two frameworks").expect("valid");
}

#[test]
fn a_job_that_fits_only_on_agents_reserved_to_a_role_is_refused() {
    let text = r#"
        [[groups]]
        name = "private"
        min_size = 1
        max_size = 2
        desired_capacity = 1
        [groups.agent]
        cpus = 2
        mem = 4096

        [[groups]]
        name = "public"
        min_size = 1
        max_size = 2
        desired_capacity = 1
        role = "slave_public"
        [groups.agent]
        cpus = 8
        mem = 16384

        [[jobs]]
        id = "backup"
        cpus = 4
        duration_s = 60
    "#;
    let err = refused(text);
    assert!(
        err.contains("jobs[0].cpus: a run of 4 cpus and 128 MB fits on no unreserved agent"),
        "{err}"
    );
    Scenario::from_toml(&text.replace("cpus = 4\n", "cpus = 2\n"), "fits").expect("valid");
}
