//! `Environment::resolve`: layering, defaults, every refusal with the words
//! the operator reads, durations, and the shipped example file.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;

const MINIMAL: &str = r#"
asg = "mesos-agents-prod"
mesos = ["http://mesos-master-1.internal:5050"]
marathon = ["http://marathon-1.internal:8080"]
"#;

const FILE: &str = "prod.env.toml";

fn no_vars(_: &str) -> Option<String> {
    None
}

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

fn flag(key: &'static str, value: &str) -> (&'static str, String) {
    (key, value.to_string())
}

fn from_file(text: &str) -> Result<Environment, EnvError> {
    Environment::resolve(Some((Path::new(FILE), text)), &no_vars, &[])
}

fn with_minimal(extra: &str) -> String {
    format!("{MINIMAL}\n{extra}")
}

/// The error's message, after checking it is the expected kind.
fn refused(result: Result<Environment, EnvError>, label: &str) -> String {
    match result {
        Ok(env) => panic!("expected {label}, resolved {env:?}"),
        Err(err) => {
            assert_eq!(err.label(), label, "{err}");
            err.to_string()
        }
    }
}

#[test]
fn a_file_with_only_the_required_keys_gets_every_default() {
    let env = from_file(MINIMAL).unwrap();
    assert_eq!(
        env,
        Environment {
            groups: vec![GroupSpec::named("mesos-agents-prod")],
            region: None,
            profile: None,
            aws_endpoint_url: None,
            mesos: vec!["http://mesos-master-1.internal:5050".to_string()],
            marathon: vec!["http://marathon-1.internal:8080".to_string()],
            dcos_url: None,
            services: Vec::new(),
            agent_match: AgentMatch::PrivateIp,
            time_scale: 1.0,
            poll_interval: Duration::from_secs(5),
            settle_time: DEFAULT_SETTLE_TIME,
            bake: None,
            failure_limit: None,
            max_surge: None,
            standby: StandbyPolicy::Wait,
            protected: ProtectedPolicy::Replace,
            other_tasks: OtherTasksPolicy::Drain,
            max_grace_period: Duration::from_secs(600),
            alarms: None,
            timeouts: Timeouts::DEFAULT,
            pager: PagerSettings::default(),
            checkpoint_dir: PathBuf::from("checkpoints"),
            checkpoint_store: None,
            checkpoint_endpoint_url: None,
            ca_bundle: None,
            suspend_processes: vec![
                ScalingProcess::AZRebalance,
                ScalingProcess::AlarmNotification,
                ScalingProcess::ScheduledActions,
                ScalingProcess::InstanceRefresh,
            ],
        }
    );
}

#[test]
fn every_key_is_read_from_the_file() {
    let env = from_file(
        r#"
asg = "mesos-agents-prod"
region = "eu-west-1"
profile = "prod-admin"
aws_endpoint_url = "http://127.0.0.1:5000"
mesos = ["http://mesos-master-1.internal:5050", "https://mesos-master-2.internal:5050"]
marathon = ["http://marathon-1.internal:8080"]
match = "attribute:instance_id"
time_scale = 60
poll_interval = "2s"
checkpoint_dir = "/var/lib/roller"
suspend_processes = ["AZRebalance", "HealthCheck"]
standby = "terminate"
protected = "ignore"
other_tasks = "pause"
max_grace_period = "90s"

[timeouts]
operator = "2h"
other_tasks = "30m"
scale_up = "30m"
deregister = 120
healthy = "1h30m"
task_move = "45s"

[pager]
pagerduty = true
pagerduty_events_url = "https://events.eu.pagerduty.com/v2/enqueue"
webhook = true
source = "roller@bastion-1"
"#,
    )
    .unwrap();
    assert_eq!(env.region.as_deref(), Some("eu-west-1"));
    assert_eq!(env.profile.as_deref(), Some("prod-admin"));
    assert_eq!(
        env.aws_endpoint_url.as_deref(),
        Some("http://127.0.0.1:5000")
    );
    assert_eq!(env.mesos.len(), 2);
    assert_eq!(
        env.agent_match,
        AgentMatch::Attribute("instance_id".to_string())
    );
    assert_eq!(env.time_scale, 60.0);
    assert_eq!(env.poll_interval, Duration::from_secs(2));
    assert_eq!(env.standby, StandbyPolicy::Terminate);
    assert_eq!(env.protected, ProtectedPolicy::Ignore);
    assert_eq!(env.other_tasks, OtherTasksPolicy::Pause);
    assert_eq!(env.max_grace_period, Duration::from_secs(90));
    assert_eq!(env.checkpoint_dir, PathBuf::from("/var/lib/roller"));
    assert_eq!(
        env.suspend_processes,
        vec![ScalingProcess::AZRebalance, ScalingProcess::HealthCheck]
    );
    assert_eq!(
        env.timeouts,
        Timeouts {
            scale_up: Duration::from_secs(30 * 60),
            deregister: Duration::from_secs(120),
            healthy: Duration::from_secs(90 * 60),
            task_move: Duration::from_secs(45),
            retry: Timeouts::DEFAULT.retry,
            operator: Duration::from_secs(2 * 3600),
            other_tasks: Duration::from_secs(30 * 60),
            pod_replace: Timeouts::DEFAULT.pod_replace,
        }
    );
    assert_eq!(
        env.pager,
        PagerSettings {
            pagerduty: true,
            pagerduty_events_url: Some("https://events.eu.pagerduty.com/v2/enqueue".to_string()),
            webhook: true,
            source: Some("roller@bastion-1".to_string()),
        }
    );
}

#[test]
fn a_variable_beats_the_file_and_a_flag_beats_both_for_a_scalar() {
    let file = with_minimal("time_scale = 2");
    let file = Some((Path::new(FILE), file.as_str()));
    let var = vars(&[("ROLLER_TIME_SCALE", "30")]);

    let env = Environment::resolve(file, &no_vars, &[]).unwrap();
    assert_eq!(env.time_scale, 2.0);
    let env = Environment::resolve(file, &var, &[]).unwrap();
    assert_eq!(env.time_scale, 30.0);
    let env = Environment::resolve(file, &var, &[flag("time_scale", "600")]).unwrap();
    assert_eq!(env.time_scale, 600.0);
}

#[test]
fn a_variable_beats_the_file_and_a_flag_beats_both_for_a_list() {
    let file = Some((Path::new(FILE), MINIMAL));
    let var = vars(&[(
        "ROLLER_MESOS",
        "http://mesos-master-2.internal:5050, http://mesos-master-3.internal:5050",
    )]);

    let env = Environment::resolve(file, &var, &[]).unwrap();
    assert_eq!(
        env.mesos,
        vec![
            "http://mesos-master-2.internal:5050",
            "http://mesos-master-3.internal:5050"
        ]
    );
    let env = Environment::resolve(
        file,
        &var,
        &[flag("mesos", "http://mesos-master-9.internal:5050,")],
    )
    .unwrap();
    assert_eq!(env.mesos, vec!["http://mesos-master-9.internal:5050"]);
}

#[test]
fn a_variable_beats_the_file_and_a_flag_beats_both_for_a_timeout() {
    let file = with_minimal("[timeouts]\nhealthy = 60");
    let file = Some((Path::new(FILE), file.as_str()));
    let var = vars(&[("ROLLER_TIMEOUTS_HEALTHY", "2m")]);

    let env = Environment::resolve(file, &no_vars, &[]).unwrap();
    assert_eq!(env.timeouts.healthy, Duration::from_secs(60));
    let env = Environment::resolve(file, &var, &[]).unwrap();
    assert_eq!(env.timeouts.healthy, Duration::from_secs(120));
    let env = Environment::resolve(file, &var, &[flag("timeouts.healthy", "1h")]).unwrap();
    assert_eq!(env.timeouts.healthy, Duration::from_secs(3600));
    // The other timeouts keep their defaults.
    assert_eq!(env.timeouts.scale_up, Timeouts::DEFAULT.scale_up);
}

#[test]
fn variables_are_named_after_their_keys_upper_cased_with_tables_joined() {
    let var = vars(&[
        ("ROLLER_ASG", "mesos-agents-prod"),
        ("ROLLER_MESOS", "http://m1:5050"),
        ("ROLLER_MARATHON", "http://mt1:8080"),
        ("ROLLER_MATCH", "dns"),
        ("ROLLER_PAGER_SOURCE", "roller-ci"),
        ("ROLLER_PAGER_PAGERDUTY", "true"),
        ("ROLLER_SUSPEND_PROCESSES", "AZRebalance,Launch"),
        ("ROLLER_CHECKPOINT_DIR", "/tmp/roller"),
    ]);
    let env = Environment::resolve(None, &var, &[]).unwrap();
    assert_eq!(env.asg(), "mesos-agents-prod");
    assert_eq!(env.agent_match, AgentMatch::PrivateDns);
    assert_eq!(env.pager.source.as_deref(), Some("roller-ci"));
    assert!(env.pager.pagerduty);
    assert_eq!(
        env.suspend_processes,
        vec![ScalingProcess::AZRebalance, ScalingProcess::Launch]
    );
    assert_eq!(env.checkpoint_dir, PathBuf::from("/tmp/roller"));
}

#[test]
fn only_variables_of_known_keys_are_looked_up_so_other_roller_variables_are_ignored() {
    let asked = RefCell::new(Vec::new());
    let others = vars(&[
        ("ROLLER_PAGERDUTY_ROUTING_KEY", "R0UT1NGKEY"),
        ("ROLLER_TEST_MOTO_URL", "http://127.0.0.1:5000"),
        ("ROLLER_MARATHON_TOKEN", "t0ken"),
        ("ROLLER_NOT_A_KEY", "whatever"),
    ]);
    let lookup = |name: &str| {
        asked.borrow_mut().push(name.to_string());
        others(name)
    };
    Environment::resolve(Some((Path::new(FILE), MINIMAL)), &lookup, &[]).unwrap();
    let asked = asked.into_inner();
    let expected: Vec<String> = KEYS.iter().map(|key| variable_name(key)).collect();
    for name in &asked {
        assert!(expected.contains(name), "looked up {name}");
    }
    assert!(asked.contains(&"ROLLER_TIMEOUTS_HEALTHY".to_string()));
}

#[test]
fn an_empty_variable_counts_as_unset() {
    let var = vars(&[("ROLLER_TIME_SCALE", ""), ("ROLLER_ASG", "")]);
    let env = Environment::resolve(Some((Path::new(FILE), MINIMAL)), &var, &[]).unwrap();
    assert_eq!(env.time_scale, 1.0);
    assert_eq!(env.asg(), "mesos-agents-prod");
}

#[test]
fn without_a_file_the_required_keys_may_come_from_flags() {
    let env = Environment::resolve(
        None,
        &no_vars,
        &[
            flag("asg", "mesos-agents-prod"),
            flag("mesos", "http://m1:5050,http://m2:5050"),
            flag("marathon", "http://mt1:8080"),
        ],
    )
    .unwrap();
    assert_eq!(env.mesos.len(), 2);
}

#[test]
fn a_flag_may_be_named_as_in_the_file_or_as_a_dashed_flag() {
    let file = Some((Path::new(FILE), MINIMAL));
    let dotted = [flag("timeouts.task_move", "90s")];
    let dashed = [flag("timeouts-task-move", "90s")];
    for flags in [&dotted[..], &dashed[..]] {
        let env = Environment::resolve(file, &no_vars, flags).unwrap();
        assert_eq!(env.timeouts.task_move, Duration::from_secs(90));
    }
    let env = Environment::resolve(file, &no_vars, &[flag("poll-interval", "1s")]).unwrap();
    assert_eq!(env.poll_interval, Duration::from_secs(1));
}

#[test]
fn of_two_flags_for_one_key_the_last_wins() {
    let env = Environment::resolve(
        Some((Path::new(FILE), MINIMAL)),
        &no_vars,
        &[flag("region", "us-east-1"), flag("region", "eu-west-1")],
    )
    .unwrap();
    assert_eq!(env.region.as_deref(), Some("eu-west-1"));
}

#[test]
fn durations_are_whole_seconds_or_hours_minutes_and_seconds_in_that_order() {
    let secs = |s: u64| Some(Duration::from_secs(s));
    let table: &[(&str, Option<Duration>)] = &[
        ("90", secs(90)),
        ("90s", secs(90)),
        ("15m", secs(900)),
        ("1h", secs(3600)),
        ("1h30m", secs(5400)),
        ("1h30m15s", secs(5415)),
        ("2m30s", secs(150)),
        (" 45s ", secs(45)),
        ("0s", secs(0)),
        ("", None),
        ("s", None),
        ("1.5m", None),
        ("500ms", None),
        ("1m1h", None),
        ("1m1m", None),
        ("1d", None),
        ("-5s", None),
        ("1 h", None),
        ("h1", None),
        ("99999999999999999999s", None),
        ("9999999999999999999h", None),
    ];
    for (text, expected) in table {
        assert_eq!(parse_duration(text), *expected, "parsing {text:?}");
    }
}

#[test]
fn a_duration_of_zero_a_negative_number_or_a_fraction_is_refused() {
    for bad in [
        "poll_interval = 0",
        "poll_interval = -5",
        "poll_interval = 1.5",
    ] {
        let message = refused(from_file(&with_minimal(bad)), "env_bad_value");
        assert!(message.contains("`poll_interval`"), "{message}");
        assert!(message.contains("a duration > 0"), "{message}");
    }
    let message = refused(
        from_file(&with_minimal("[timeouts]\nscale_up = \"0s\"")),
        "env_bad_value",
    );
    assert!(message.contains("`timeouts.scale_up`"), "{message}");
}

#[test]
fn an_unreadable_file_names_its_path_and_what_to_check() {
    let err = EnvError::Read {
        path: PathBuf::from("/etc/roller/prod.env.toml"),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory"),
    };
    assert_eq!(err.label(), "env_unreadable");
    let message = err.to_string();
    assert!(message.contains("/etc/roller/prod.env.toml"), "{message}");
    assert!(message.contains("No such file"), "{message}");
    assert!(
        message.contains("check the path given to --env"),
        "{message}"
    );
}

#[test]
fn a_toml_syntax_error_names_the_file_line_and_column() {
    let message = refused(
        from_file("asg = \"mesos-agents-prod\"\nmesos = [\n"),
        "env_syntax",
    );
    assert!(message.contains(FILE), "{message}");
    assert!(message.contains("line 2, column 10"), "{message}");
    assert!(message.contains("fix the syntax"), "{message}");

    let message = refused(from_file("asg = 1\nasg = 2\n"), "env_syntax");
    assert!(message.contains("line 2, column 1"), "{message}");
    assert!(message.contains("duplicate"), "{message}");
}

#[test]
fn a_toml_syntax_error_never_repeats_the_line_it_is_on() {
    let message = refused(
        from_file("asg = \"mesos-agents-prod\"\nnote = \"R0UT1NGKEY\n"),
        "env_syntax",
    );
    assert!(!message.contains("R0UT1NGKEY"), "{message}");
    assert!(message.contains("line 2"), "{message}");
}

#[test]
fn an_unknown_top_level_key_is_refused_naming_it_the_file_and_the_known_keys() {
    let message = refused(
        from_file(&with_minimal("poll_intervall = \"5s\"")),
        "env_unknown_key",
    );
    assert!(message.contains("`poll_intervall`"), "{message}");
    assert!(message.contains(&format!("file '{FILE}'")), "{message}");
    assert!(message.contains("poll_interval,"), "{message}");
    assert!(message.contains("[timeouts]"), "{message}");
}

#[test]
fn an_unknown_key_in_a_table_is_refused_with_the_keys_of_that_table() {
    let message = refused(
        from_file(&with_minimal("[timeouts]\nhealth = \"5m\"")),
        "env_unknown_key",
    );
    assert!(message.contains("`timeouts.health`"), "{message}");
    assert!(
        message.contains("scale_up, deregister, healthy, task_move, retry"),
        "{message}"
    );
}

#[test]
fn a_table_given_as_a_plain_value_is_refused() {
    let message = refused(from_file(&with_minimal("pager = true")), "env_bad_value");
    assert!(message.contains("`pager`"), "{message}");
    assert!(message.contains("a table [pager]"), "{message}");
}

#[test]
fn a_flag_for_an_unknown_key_is_refused() {
    let message = refused(
        Environment::resolve(
            Some((Path::new(FILE), MINIMAL)),
            &no_vars,
            &[flag("dry_run", "true")],
        ),
        "env_unknown_key",
    );
    assert!(message.contains("`dry_run` in flag --dry-run"), "{message}");
}

#[test]
fn a_missing_required_key_says_what_it_is_and_where_to_set_it() {
    let message = refused(
        from_file("mesos = [\"http://m1:5050\"]\nmarathon = [\"http://mt1:8080\"]"),
        "env_missing_key",
    );
    assert!(message.contains("missing `asg`"), "{message}");
    assert!(message.contains("Auto Scaling group"), "{message}");
    assert!(message.contains(&format!("'{FILE}'")), "{message}");
    assert!(message.contains("variable ROLLER_ASG"), "{message}");
    assert!(message.contains("flag --asg"), "{message}");

    let message = refused(
        Environment::resolve(None, &no_vars, &[flag("asg", "g")]),
        "env_missing_key",
    );
    assert!(message.contains("missing `mesos`"), "{message}");
    assert!(
        message.contains("the environment file (--env)"),
        "{message}"
    );
}

#[test]
fn a_value_of_the_wrong_type_names_the_key_its_origin_the_form_and_the_value() {
    let message = refused(
        from_file(&with_minimal("time_scale = \"fast\"")),
        "env_bad_value",
    );
    assert!(message.contains("`time_scale` = \"fast\""), "{message}");
    assert!(message.contains(&format!("file '{FILE}'")), "{message}");
    assert!(message.contains("a finite number > 0"), "{message}");

    let message = refused(
        Environment::resolve(
            Some((Path::new(FILE), MINIMAL)),
            &vars(&[("ROLLER_PAGER_WEBHOOK", "yes")]),
            &[],
        ),
        "env_bad_value",
    );
    assert!(message.contains("`pager.webhook` = \"yes\""), "{message}");
    assert!(
        message.contains("variable ROLLER_PAGER_WEBHOOK"),
        "{message}"
    );
    assert!(message.contains("true or false"), "{message}");

    let message = refused(
        Environment::resolve(
            Some((Path::new(FILE), MINIMAL)),
            &no_vars,
            &[flag("timeouts.deregister", "10 minutes")],
        ),
        "env_bad_value",
    );
    assert!(
        message.contains("`timeouts.deregister` = \"10 minutes\""),
        "{message}"
    );
    assert!(message.contains("flag --timeouts-deregister"), "{message}");
    assert!(message.contains("\"1h30m\""), "{message}");

    let message = refused(from_file(&with_minimal("region = 1")), "env_bad_value");
    assert!(message.contains("`region` = 1"), "{message}");
    assert!(message.contains("a non-empty string"), "{message}");
}

#[test]
fn a_bad_value_is_refused_even_when_a_higher_layer_overrides_it() {
    let file = with_minimal("match = \"hostname\"");
    let message = refused(
        Environment::resolve(
            Some((Path::new(FILE), file.as_str())),
            &no_vars,
            &[flag("match", "ip")],
        ),
        "env_bad_value",
    );
    assert!(message.contains("`match` = \"hostname\""), "{message}");
    assert!(message.contains("ip, dns or attribute:NAME"), "{message}");
}

#[test]
fn a_list_key_given_a_single_string_in_the_file_is_refused() {
    let file = "asg = \"g\"\nmesos = \"http://m1:5050\"\nmarathon = [\"http://mt1:8080\"]";
    let message = refused(from_file(file), "env_bad_value");
    assert!(message.contains("`mesos`"), "{message}");
    assert!(
        message.contains("a non-empty list of http(s) URLs"),
        "{message}"
    );
}

#[test]
fn urls_must_be_http_or_https_with_a_host() {
    for bad in [
        "\"ftp://m1:5050\"",
        "\"m1:5050\"",
        "\"http://\"",
        "\"mesos-master-1\"",
    ] {
        let file = format!("asg = \"g\"\nmesos = [{bad}]\nmarathon = [\"http://mt1:8080\"]");
        let message = refused(from_file(&file), "env_bad_value");
        assert!(message.contains("`mesos`"), "{bad}: {message}");
    }
    let message = refused(
        from_file(&with_minimal("aws_endpoint_url = \"localhost\"")),
        "env_bad_value",
    );
    assert!(message.contains("`aws_endpoint_url`"), "{message}");
}

#[test]
fn credentials_in_a_url_are_refused_without_being_repeated() {
    let file =
        "asg = \"g\"\nmesos = [\"http://ops:hunter2@m1:5050\"]\nmarathon = [\"http://mt1:8080\"]";
    let message = refused(from_file(file), "env_bad_value");
    assert!(!message.contains("hunter2"), "{message}");
    assert!(!message.contains("ops:"), "{message}");
    assert!(message.contains("<redacted>@m1:5050"), "{message}");
    assert!(message.contains("ROLLER_MESOS_USER"), "{message}");
}

#[test]
fn an_empty_url_list_is_refused() {
    let file = "asg = \"g\"\nmesos = [\"http://m1:5050\"]\nmarathon = []";
    let message = refused(from_file(file), "env_bad_value");
    assert!(message.contains("`marathon` = []"), "{message}");
    let message = refused(
        Environment::resolve(
            Some((Path::new(FILE), MINIMAL)),
            &no_vars,
            &[flag("marathon", " , ")],
        ),
        "env_bad_value",
    );
    assert!(message.contains("flag --marathon"), "{message}");
}

#[test]
fn an_unknown_process_is_refused_with_the_list_of_valid_ones() {
    let message = refused(
        from_file(&with_minimal(
            "suspend_processes = [\"AZRebalance\", \"AzRebalance\"]",
        )),
        "env_bad_value",
    );
    assert!(message.contains("'AzRebalance' is not one"), "{message}");
    assert!(
        message.contains(
            "Launch, Terminate, AddToLoadBalancer, AlarmNotification, AZRebalance, HealthCheck, InstanceRefresh, ReplaceUnhealthy, ScheduledActions"
        ),
        "{message}"
    );
}

#[test]
fn a_standby_or_protected_policy_is_one_of_instance_refreshs_and_a_flag_overrides_the_file() {
    let message = refused(
        from_file(&with_minimal("standby = \"refresh\"")),
        "env_bad_value",
    );
    assert!(
        message.contains("`standby`") && message.contains("ignore, wait, terminate"),
        "{message}"
    );
    let message = refused(
        from_file(&with_minimal("protected = \"terminate\"")),
        "env_bad_value",
    );
    assert!(message.contains("replace, ignore, wait"), "{message}");
    let flags = [
        ("standby", "ignore".to_string()),
        ("protected", "wait".to_string()),
    ];
    let env = Environment::resolve(
        Some((Path::new(FILE), &with_minimal("standby = \"terminate\""))),
        &no_vars,
        &flags,
    )
    .unwrap();
    assert_eq!(env.standby, StandbyPolicy::Ignore);
    assert_eq!(env.protected, ProtectedPolicy::Wait);
}

#[test]
fn an_empty_process_list_is_refused_because_aws_reads_it_as_all() {
    let message = refused(
        from_file(&with_minimal("suspend_processes = []")),
        "env_bad_value",
    );
    assert!(message.contains("`suspend_processes` = []"), "{message}");
    assert!(message.contains("a non-empty list"), "{message}");
}

#[test]
fn a_process_named_twice_is_suspended_once() {
    let env = from_file(&with_minimal(
        "suspend_processes = [\"AZRebalance\", \"AZRebalance\"]",
    ))
    .unwrap();
    assert_eq!(env.suspend_processes, vec![ScalingProcess::AZRebalance]);
}

#[test]
fn every_valid_process_name_is_one_the_auto_scaling_port_knows() {
    for name in value::PROCESS_NAMES {
        let process = ScalingProcess::parse(name);
        assert!(!matches!(process, ScalingProcess::Other(_)), "{name}");
        assert_eq!(process.as_str(), *name);
    }
}

#[test]
fn a_time_scale_must_be_finite_and_positive() {
    for bad in ["0", "-1", "nan", "inf", "fast"] {
        let result = Environment::resolve(
            Some((Path::new(FILE), MINIMAL)),
            &vars(&[("ROLLER_TIME_SCALE", bad)]),
            &[],
        );
        refused(result, "env_bad_value");
    }
    let env = from_file(&with_minimal("time_scale = 0.5")).unwrap();
    assert_eq!(env.time_scale, 0.5);
}

#[test]
fn a_match_names_ip_dns_or_an_attribute() {
    let env = from_file(&with_minimal("match = \"attribute:ec2_id\"")).unwrap();
    assert_eq!(env.agent_match, AgentMatch::Attribute("ec2_id".to_string()));
    refused(
        from_file(&with_minimal("match = \"attribute:\"")),
        "env_bad_value",
    );
}

#[test]
fn secrets_in_the_file_are_refused_with_where_they_belong_and_without_their_value() {
    let cases = [
        ("routing_key", "ROLLER_PAGERDUTY_ROUTING_KEY_FILE"),
        ("webhook_url", "ROLLER_WEBHOOK_URL"),
        ("aws_secret_access_key", "AWS credential chain"),
        ("aws_access_key_id", "AWS credential chain"),
        ("token", "ROLLER_MARATHON_TOKEN"),
        ("password", "ROLLER_MARATHON_PASSWORD"),
        ("pagerduty_routing_key", "ROLLER_PAGERDUTY_ROUTING_KEY"),
        ("marathon_token", "ROLLER_MARATHON_TOKEN"),
        ("api_token", "ROLLER_API_TOKEN_FILE"),
    ];
    for (key, instead) in cases {
        let message = refused(
            from_file(&with_minimal(&format!("{key} = \"S3CR3T-VALUE\""))),
            "env_secret_key",
        );
        assert!(!message.contains("S3CR3T-VALUE"), "{key}: {message}");
        assert!(message.contains(&format!("`{key}`")), "{key}: {message}");
        assert!(message.contains(FILE), "{key}: {message}");
        assert!(message.contains(instead), "{key}: {message}");
    }
}

#[test]
fn a_secret_inside_a_table_is_refused_as_a_secret_not_as_an_unknown_key() {
    let message = refused(
        from_file(&with_minimal(
            "[pager]\npagerduty = true\nrouting_key = \"S3CR3T\"",
        )),
        "env_secret_key",
    );
    assert!(message.contains("`pager.routing_key`"), "{message}");
    assert!(!message.contains("S3CR3T"), "{message}");
}

#[test]
fn a_secret_passed_as_a_flag_is_refused_without_its_value() {
    let message = refused(
        Environment::resolve(
            Some((Path::new(FILE), MINIMAL)),
            &no_vars,
            &[flag("webhook_url", "https://hooks.example/S3CR3T")],
        ),
        "env_secret_key",
    );
    assert!(!message.contains("S3CR3T"), "{message}");
    assert!(message.contains("ROLLER_WEBHOOK_URL"), "{message}");
}

#[test]
fn no_known_key_looks_like_a_secret() {
    for key in KEYS {
        let name = key.rsplit('.').next().unwrap_or(key);
        assert_eq!(secret_instead(name), None, "{key}");
    }
}

#[test]
fn every_error_has_its_own_label() {
    let origin = || Origin::File(PathBuf::from(FILE));
    let errors = [
        EnvError::Read {
            path: PathBuf::from(FILE),
            source: std::io::Error::other("x"),
        },
        EnvError::Syntax {
            path: PathBuf::from(FILE),
            at: None,
            message: "x".to_string(),
        },
        EnvError::UnknownKey {
            key: "x".to_string(),
            origin: origin(),
            known: String::new(),
        },
        EnvError::MissingKey {
            key: "asg".to_string(),
            meaning: "x",
            file: None,
        },
        EnvError::BadValue {
            key: "x".to_string(),
            origin: origin(),
            expected: String::new(),
            given: String::new(),
        },
        EnvError::SecretKey {
            key: "x".to_string(),
            origin: origin(),
            instead: "x",
        },
    ];
    let labels: Vec<&str> = errors.iter().map(EnvError::label).collect();
    assert_eq!(
        labels,
        [
            "env_unreadable",
            "env_syntax",
            "env_unknown_key",
            "env_missing_key",
            "env_bad_value",
            "env_secret_key"
        ]
    );
}

const EXAMPLE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/roller.env.toml"
));

fn example_path() -> &'static Path {
    Path::new("examples/roller.env.toml")
}

#[test]
fn the_example_file_resolves() {
    let env = Environment::resolve(Some((example_path(), EXAMPLE)), &no_vars, &[]).unwrap();
    assert_eq!(env.asg(), "mesos-agents-prod");
}

/// The example shows optional keys commented out; each must still be
/// valid the day someone removes its `# `.
#[test]
fn the_example_file_resolves_with_every_commented_out_key_enabled() {
    let mut enabled = 0;
    let text: String = EXAMPLE
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(rest)
                if rest
                    .split_once(" = ")
                    .is_some_and(|(key, _)| KEYS.iter().any(|k| k.ends_with(key))) =>
            {
                enabled += 1;
                format!("{rest}\n")
            }
            _ => format!("{line}\n"),
        })
        .collect();
    assert!(enabled > 0, "no commented-out key found");
    Environment::resolve(Some((example_path(), &text)), &no_vars, &[]).unwrap();
}

#[test]
fn the_example_file_shows_every_key() {
    for key in KEYS {
        let name = key.rsplit('.').next().unwrap_or(key);
        assert!(
            EXAMPLE.lines().any(|line| line
                .trim_start_matches("# ")
                .starts_with(&format!("{name} = "))),
            "{key} missing from the example"
        );
    }
    for table in TABLES {
        assert!(EXAMPLE.contains(&format!("[{table}]")), "[{table}]");
    }
}

#[test]
fn the_checkpoint_store_is_an_s3_bucket_with_an_optional_folder() {
    let env = from_file(&with_minimal(
        "checkpoint_store = \"s3://ops-rolls/prod\"\ncheckpoint_endpoint_url = \"http://127.0.0.1:5000\"",
    ))
    .unwrap();
    assert_eq!(env.checkpoint_store.as_deref(), Some("s3://ops-rolls/prod"));
    assert_eq!(
        env.checkpoint_endpoint_url.as_deref(),
        Some("http://127.0.0.1:5000")
    );
    assert_eq!(from_file(MINIMAL).unwrap().checkpoint_store, None);
    for bad in ["\"/var/lib/roller\"", "\"s3://\"", "\"s3:///prod\"", "3"] {
        let message = refused(
            from_file(&with_minimal(&format!("checkpoint_store = {bad}"))),
            "env_bad_value",
        );
        assert!(message.contains("`checkpoint_store`"), "{bad}: {message}");
        assert!(message.contains("s3://bucket"), "{bad}: {message}");
    }
}

const CLUSTER: &str = r#"
mesos = ["http://mesos-master-1.internal:5050"]
marathon = ["http://marathon-1.internal:8080"]

[[group]]
name = "mesos-agents-private"
target = 40

[[group]]
name = "mesos-agents-public"
select = "outdated"
"#;

#[test]
fn group_tables_list_a_clusters_groups_in_order_and_the_first_names_it() {
    let env = from_file(CLUSTER).unwrap();
    assert_eq!(env.asg(), "mesos-agents-private");
    assert_eq!(
        env.groups,
        vec![
            GroupSpec {
                asg: "mesos-agents-private".to_string(),
                target: Some(40),
                select: None,
                complete_lifecycle_hooks: Vec::new(),
            },
            GroupSpec {
                asg: "mesos-agents-public".to_string(),
                target: None,
                select: Some("outdated".to_string()),
                complete_lifecycle_hooks: Vec::new(),
            },
        ]
    );
    // The one-group form is a cluster of one.
    let one = from_file(MINIMAL).unwrap();
    assert_eq!(one.groups, vec![GroupSpec::named("mesos-agents-prod")]);
}

#[test]
fn a_bad_group_table_is_refused_naming_the_table_and_the_key() {
    let with = |extra: &str| format!("{CLUSTER}{extra}");
    for (text, label, said) in [
        (
            with("\n[[group]]\nname = \"mesos-agents-private\"\n"),
            "env_bad_value",
            "`group[3].name`",
        ),
        (
            with("\n[[group]]\nname = \"a:b\"\n"),
            "env_bad_value",
            "without ':'",
        ),
        (
            with("\n[[group]]\nname = \"c\"\ntarget = 0\n"),
            "env_bad_value",
            "`group[3].target` = 0",
        ),
        (
            with("\n[[group]]\nname = \"c\"\nsize = 3\n"),
            "env_unknown_key",
            "`group[3].size`",
        ),
        (
            with("\n[[group]]\ntarget = 3\n"),
            "env_bad_value",
            "`group[3].name` = nothing",
        ),
        (
            format!("asg = \"x\"\n{CLUSTER}"),
            "env_bad_value",
            "no `asg` beside [[group]] tables",
        ),
        (
            with_minimal("group = 3"),
            "env_bad_value",
            "[[group]] tables",
        ),
    ] {
        let message = refused(from_file(&text), label);
        assert!(message.contains(said), "{said} in {message}");
    }
    // A flag `--asg` beside a cluster file is refused, naming the flag.
    let flagged = Environment::resolve(
        Some((Path::new(FILE), CLUSTER)),
        &no_vars,
        &[("asg", "x".to_string())],
    );
    let message = refused(flagged, "env_bad_value");
    assert!(message.contains("flag --asg"), "{message}");
}

#[test]
fn hooks_named_at_the_top_level_are_rollers_in_every_group_and_a_table_adds_its_own() {
    let text = CLUSTER
        .replace(
            "marathon = [\"http://marathon-1.internal:8080\"]\n",
            "marathon = [\"http://marathon-1.internal:8080\"]\ncomplete_lifecycle_hooks = [\"drain-agent\"]\n",
        )
        .replace(
            "select = \"outdated\"\n",
            "select = \"outdated\"\ncomplete_lifecycle_hooks = [\"edge/deregister\", \"drain-agent\"]\n",
        );
    let env = from_file(&text).unwrap();
    assert_eq!(env.groups[0].complete_lifecycle_hooks, ["drain-agent"]);
    assert_eq!(
        env.groups[1].complete_lifecycle_hooks,
        ["edge/deregister", "drain-agent"]
    );
    let from_var = Environment::resolve(
        Some((Path::new(FILE), MINIMAL)),
        &vars(&[("ROLLER_COMPLETE_LIFECYCLE_HOOKS", "a, b")]),
        &[],
    )
    .unwrap();
    assert_eq!(from_var.groups[0].complete_lifecycle_hooks, ["a", "b"]);
    assert!(
        from_file(MINIMAL).unwrap().groups[0]
            .complete_lifecycle_hooks
            .is_empty()
    );
}

#[test]
fn a_hook_name_aws_would_refuse_is_refused_naming_the_key() {
    let said = refused(
        from_file(&with_minimal(
            "complete_lifecycle_hooks = [\"drain agent\"]",
        )),
        "env_bad_value",
    );
    assert!(said.contains("complete_lifecycle_hooks"), "{said}");
    assert!(said.contains("'drain agent' is not one"), "{said}");
    let table = CLUSTER.replace(
        "target = 40\n",
        "target = 40\ncomplete_lifecycle_hooks = \"drain-agent\"\n",
    );
    let said = refused(from_file(&table), "env_bad_value");
    assert!(said.contains("group[1].complete_lifecycle_hooks"), "{said}");
}

#[test]
fn alarms_come_from_the_file_a_variable_or_repeated_alarm_flags() {
    assert_eq!(from_file(MINIMAL).unwrap().alarms, None, "not given");
    let env = from_file(&with_minimal(
        r#"alarms = ["api-p99-latency", "api 5xx rate", "api-p99-latency"]"#,
    ))
    .unwrap();
    assert_eq!(
        env.alarms,
        Some(vec![
            "api-p99-latency".to_string(),
            "api 5xx rate".to_string()
        ]),
        "each once, spaces allowed as CloudWatch allows them"
    );
    let from_var = Environment::resolve(
        Some((Path::new(FILE), MINIMAL)),
        &vars(&[("ROLLER_ALARMS", "a,b")]),
        &[],
    )
    .unwrap();
    assert_eq!(
        from_var.alarms,
        Some(vec!["a".to_string(), "b".to_string()])
    );
    let from_flag = Environment::resolve(
        Some((Path::new(FILE), MINIMAL)),
        &no_vars,
        &[flag("alarms", "c")],
    )
    .unwrap();
    assert_eq!(from_flag.alarms, Some(vec!["c".to_string()]));
    let empty = from_file(&with_minimal("alarms = []")).unwrap();
    assert_eq!(empty.alarms, Some(Vec::new()), "none, said on purpose");
}

#[test]
fn a_bad_alarm_name_is_refused_naming_the_key_and_the_flag() {
    let said = refused(
        from_file(&with_minimal("alarms = [\"api\\tlatency\"]")),
        "env_bad_value",
    );
    assert!(said.contains("alarms"), "{said}");
    assert!(said.contains("CloudWatch alarm names"), "{said}");
    let long = "x".repeat(256);
    let said = refused(
        Environment::resolve(
            Some((Path::new(FILE), MINIMAL)),
            &no_vars,
            &[flag("alarms", &long)],
        ),
        "env_bad_value",
    );
    assert!(said.contains("--alarm"), "{said}");
}

#[test]
fn services_are_reached_through_dcos_url_or_a_service_table_each() {
    let env = from_file(&with_minimal(
        r#"
dcos_url = "https://dcos.example.com"

[[service]]
name = "/kafka"
url = "http://kafka.marathon.l4lb.thisdcos.directory:80"

[[service]]
name = "cassandra"
url = "https://cassandra.internal"
"#,
    ))
    .unwrap();
    assert_eq!(env.dcos_url.as_deref(), Some("https://dcos.example.com"));
    let names: Vec<&str> = env.services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["kafka", "cassandra"], "a leading / is dropped");
    assert_eq!(
        env.services[0].url,
        "http://kafka.marathon.l4lb.thisdcos.directory:80"
    );
    assert_eq!(env.timeouts.pod_replace, Duration::from_secs(30 * 60));
}

#[test]
fn a_bad_service_table_is_refused_by_its_key() {
    let text = |tables: &str| with_minimal(tables);
    let missing_url = refused(
        from_file(&text("[[service]]\nname = \"kafka\"\n")),
        "env_bad_value",
    );
    assert!(missing_url.contains("service[1].url"), "{missing_url}");
    let twice = refused(
        from_file(&text(
            "[[service]]\nname = \"kafka\"\nurl = \"http://a\"\n[[service]]\nname = \"kafka\"\nurl = \"http://b\"\n",
        )),
        "env_bad_value",
    );
    assert!(twice.contains("service[2].name"), "{twice}");
    let unknown = refused(
        from_file(&text(
            "[[service]]\nname = \"kafka\"\nurl = \"http://a\"\nport = 1\n",
        )),
        "env_unknown_key",
    );
    assert!(unknown.contains("service[1].port"), "{unknown}");
    let not_http = refused(
        from_file(&text("dcos_url = \"ftp://x\"\n")),
        "env_bad_value",
    );
    assert!(not_http.contains("dcos_url"), "{not_http}");
}
