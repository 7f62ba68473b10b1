//! The operating guide's "Many clusters" examples (`examples/k8s-cronjob.yaml`,
//! `examples/k8s-job.yaml`, `examples/metronome-job.json`), checked as an
//! operator would rely on them: each parses and has the fields its
//! scheduler requires; its command line is a `roller run` that roller's
//! own parser accepts, down to the values of its flags and, where the
//! example carries it, the environment file, resolved with the job's
//! variables as `roller run` resolves it; the checkpoint is in S3; the
//! secrets come from files mounted from the scheduler's secrets; a pause
//! or a rollback is never retried blindly; and the guide links each
//! file, and whatever it quotes of them it quotes exactly.
//!
//! No YAML crate is in roller's dependency tree, so the YAML is read by
//! PyYAML (`yaml.safe_load_all`, through `python3`, which the test suite
//! already needs) and handed over as JSON.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use clap::Parser;
use serde_json::Value;

use super::{Cli, Command, RunArgs};
use crate::aws::S3Location;
use crate::roll::record::env::Environment;

const CRONJOB: &str = "examples/k8s-cronjob.yaml";
const JOB: &str = "examples/k8s-job.yaml";
const METRONOME: &str = "examples/metronome-job.json";
/// The operating guide, whose "Many clusters" section points at them.
const GUIDE: &str = "docs/operating.md";

/// The secrets roller reads from variables (docs/reference.md, "The
/// environment file"):
/// each may be given as `NAME_FILE`, the path of a file holding it.
const SECRETS: &[&str] = &[
    "ROLLER_PAGERDUTY_ROUTING_KEY",
    "ROLLER_WEBHOOK_URL",
    "ROLLER_MARATHON_TOKEN",
    "ROLLER_MARATHON_PASSWORD",
    "ROLLER_MESOS_TOKEN",
    "ROLLER_MESOS_PASSWORD",
    "ROLLER_API_TOKEN",
];

/// The exit codes no job may retry blindly: 3 a pause or hold (a human
/// was paged), 5 a rollback (the image is bad), 2 a refusal (it would be
/// refused again).
const NEVER_RETRIED: [u64; 3] = [2, 3, 5];

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every document of a YAML file, as JSON.
fn yaml_documents(relative: &str) -> Vec<Value> {
    const TO_JSON: &str = "import json, sys, yaml\n\
        json.dump(list(yaml.safe_load_all(open(sys.argv[1]))), sys.stdout)";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    let output = std::process::Command::new("python3")
        .args(["-c", TO_JSON])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("python3 is needed to read {relative}: {e}"));
    assert!(
        output.status.success(),
        "{relative} is not YAML that PyYAML reads (python3 with PyYAML is needed: \
         apt-get install python3-yaml or pip install pyyaml):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("PyYAML's JSON")
}

/// `value[path]`, which must be there.
fn at<'a>(value: &'a Value, path: &[&str], what: &str) -> &'a Value {
    path.iter().fold(value, |value, key| {
        value
            .get(key)
            .unwrap_or_else(|| panic!("{what}: no {}", path.join(".")))
    })
}

fn text<'a>(value: &'a Value, path: &[&str], what: &str) -> &'a str {
    at(value, path, what)
        .as_str()
        .unwrap_or_else(|| panic!("{what}: {} is not a string", path.join(".")))
}

fn strings(value: &Value, what: &str) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{what}: not a list"))
        .iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("{what}: {v} is not a string"))
                .to_string()
        })
        .collect()
}

/// A cron line of five fields, as both Kubernetes and Metronome take it.
fn assert_cron(cron: &str, what: &str) {
    assert_eq!(cron.split_whitespace().count(), 5, "{what}: cron {cron:?}");
}

/// What a job runs and with what, as the test needs it.
struct JobRun {
    what: String,
    argv: Vec<String>,
    /// Plain variables: name, value.
    vars: BTreeMap<String, String>,
    /// Variables set from the scheduler's secret store (by reference).
    secret_vars: BTreeSet<String>,
    /// Paths where the scheduler mounts a secret as a file.
    secret_files: Vec<String>,
}

/// The `roller run` of a job, parsed and checked as `roller run` parses
/// and checks it before it reaches any cluster, its environment file
/// (found in `env_files` by the path the job names) resolved with the
/// job's variables and flags.
fn check_roll(run: &JobRun, env_files: &BTreeMap<String, String>) -> Environment {
    let what = &run.what;
    assert_eq!(
        run.argv.first().map(|a| a.rsplit('/').next().unwrap_or(a)),
        Some("roller"),
        "{what}: {:?} does not run roller",
        run.argv
    );
    let cli = Cli::try_parse_from(&run.argv)
        .unwrap_or_else(|err| panic!("{what}: roller refuses {:?}:\n{err}", run.argv));
    let Command::Run(args) = cli.command else {
        panic!("{what}: {:?} is not `roller run`", run.argv);
    };
    let args: &RunArgs = &args;
    super::run_command::request(args)
        .unwrap_or_else(|err| panic!("{what}: roller refuses {:?}: {err}", run.argv));
    assert!(!args.dry_run, "{what}: a job that only prints the plan");
    assert!(!args.target.is_empty(), "{what}: a new roll needs --target");
    assert_eq!(
        args.select.as_deref(),
        Some("outdated"),
        "{what}: a job run again and again must replace only what is outdated"
    );
    check_secrets(run);
    let env_path = args.env.to_string_lossy().into_owned();
    let text = env_files
        .get(&env_path)
        .unwrap_or_else(|| panic!("{what}: no example holds its env file {env_path}"));
    let vars = |name: &str| run.vars.get(name).cloned();
    let env = Environment::resolve(
        Some((&args.env, text)),
        &vars,
        &super::run_command::flags(args),
    )
    .unwrap_or_else(|err| panic!("{what}: {env_path}: {err}"));
    let in_s3 = match &args.checkpoint {
        Some(path) => S3Location::parse(&path.to_string_lossy()).is_ok(),
        None => env
            .checkpoint_store
            .as_deref()
            .is_some_and(|store| S3Location::for_group(store, env.asg()).is_ok()),
    };
    assert!(
        in_s3,
        "{what}: the checkpoint must be in S3 for a job to resume elsewhere"
    );
    if env.pager.pagerduty {
        assert!(
            gives(run, "ROLLER_PAGERDUTY_ROUTING_KEY"),
            "{what}: [pager] pagerduty = true without a routing key"
        );
    }
    env
}

/// Whether the job gives secret `name`, by value from the secret store
/// or as a file.
fn gives(run: &JobRun, name: &str) -> bool {
    run.secret_vars.contains(name) || run.vars.contains_key(&format!("{name}_FILE"))
}

/// Secrets come from the scheduler's secret store, never inline: a
/// `_FILE` variable names a file mounted from a secret, a secret's own
/// variable is set from the store. The PagerDuty routing key and the
/// Marathon token are given.
fn check_secrets(run: &JobRun) {
    let what = &run.what;
    for (name, value) in &run.vars {
        let secret = SECRETS
            .iter()
            .find(|s| *name == **s || name.strip_suffix("_FILE") == Some(**s));
        match secret {
            Some(_) if name.ends_with("_FILE") => assert!(
                run.secret_files.iter().any(|file| file == value),
                "{what}: {name}={value} is not a file mounted from a secret ({:?})",
                run.secret_files
            ),
            Some(_) => panic!("{what}: the secret {name} is written inline"),
            None => {}
        }
    }
    for name in ["ROLLER_PAGERDUTY_ROUTING_KEY", "ROLLER_MARATHON_TOKEN"] {
        assert!(gives(run, name), "{what}: {name}(_FILE) is not given");
    }
}

/// A Kubernetes pod template's container `roller`, run as a job.
fn pod_run(template: &Value, what: &str) -> JobRun {
    let spec = at(template, &["spec"], what);
    assert_eq!(
        text(spec, &["restartPolicy"], what),
        "Never",
        "{what}: a podFailurePolicy needs restartPolicy Never"
    );
    let container = &at(spec, &["containers"], what)[0];
    let mut argv = strings(at(container, &["command"], what), what);
    argv.extend(strings(at(container, &["args"], what), what));
    // Files of the secret volumes, where the container mounts them.
    let mut secret_files = Vec::new();
    let volumes = at(spec, &["volumes"], what).as_array().expect("volumes");
    for mount in at(container, &["volumeMounts"], what)
        .as_array()
        .expect("volumeMounts")
    {
        let name = text(mount, &["name"], what);
        let volume = volumes
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("{what}: no volume {name}"));
        if let Some(secret) = volume.get("secret") {
            let dir = text(mount, &["mountPath"], what);
            for item in secret["items"].as_array().expect("secret items") {
                secret_files.push(format!("{dir}/{}", text(item, &["path"], what)));
            }
        }
    }
    let mut vars = BTreeMap::new();
    let mut secret_vars = BTreeSet::new();
    for var in container["env"].as_array().into_iter().flatten() {
        let name = text(var, &["name"], what).to_string();
        match (var.get("value"), var.pointer("/valueFrom/secretKeyRef")) {
            (Some(value), None) => {
                vars.insert(name, value.as_str().expect("a string value").to_string());
            }
            (None, Some(_)) => {
                secret_vars.insert(name);
            }
            _ => panic!("{what}: {name} is neither a value nor a secret's"),
        }
    }
    JobRun {
        what: what.to_string(),
        argv,
        vars,
        secret_vars,
        secret_files,
    }
}

/// A Job's spec (the CronJob's `jobTemplate.spec`): a pause, a hold, a
/// refusal or a rollback fails the Job at once, retried never.
fn check_job_spec(spec: &Value, what: &str) -> JobRun {
    let rules = at(spec, &["podFailurePolicy", "rules"], what)
        .as_array()
        .expect("rules");
    let fail_job: BTreeSet<u64> = rules
        .iter()
        .filter(|rule| rule["action"] == "FailJob")
        .flat_map(|rule| rule["onExitCodes"]["values"].as_array().cloned())
        .flatten()
        .filter_map(|code| code.as_u64())
        .collect();
    for code in NEVER_RETRIED {
        assert!(
            fail_job.contains(&code),
            "{what}: exit {code} is retried ({fail_job:?})"
        );
    }
    assert!(
        !fail_job.contains(&130),
        "{what}: exit 130 (SIGTERM, checkpoint written) must be retried"
    );
    pod_run(at(spec, &["template"], what), what)
}

/// The env files the ConfigMaps of `documents` carry, by the path a pod
/// of `template` sees them at.
fn env_files(documents: &[Value], template: &Value, what: &str) -> BTreeMap<String, String> {
    let spec = &template["spec"];
    let container = &spec["containers"][0];
    let mut files = BTreeMap::new();
    for mount in container["volumeMounts"].as_array().into_iter().flatten() {
        let volume = spec["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == mount["name"]);
        let Some(map) = volume.and_then(|v| v["configMap"]["name"].as_str()) else {
            continue;
        };
        let config = documents
            .iter()
            .find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == map)
            .unwrap_or_else(|| panic!("{what}: no ConfigMap {map}"));
        for (key, value) in config["data"].as_object().expect("data") {
            let dir = text(mount, &["mountPath"], what);
            files.insert(format!("{dir}/{key}"), value.as_str().expect("text").into());
        }
    }
    files
}

#[test]
fn the_cronjob_example_rolls_each_cluster_alone_from_an_s3_checkpoint() {
    let documents = yaml_documents(CRONJOB);
    let cronjobs: Vec<&Value> = documents
        .iter()
        .filter(|d| d["kind"] == "CronJob")
        .collect();
    assert!(
        cronjobs.len() >= 2,
        "one CronJob per cluster, several shown"
    );
    let mut checkpoints = BTreeSet::new();
    for cronjob in cronjobs {
        let name = text(cronjob, &["metadata", "name"], CRONJOB);
        let what = format!("{CRONJOB} {name}");
        assert_eq!(text(cronjob, &["apiVersion"], &what), "batch/v1");
        let spec = at(cronjob, &["spec"], &what);
        assert_cron(text(spec, &["schedule"], &what), &what);
        assert_eq!(text(spec, &["concurrencyPolicy"], &what), "Forbid");
        let job = at(spec, &["jobTemplate", "spec"], &what);
        let run = check_job_spec(job, &what);
        let files = env_files(&documents, &job["template"], &what);
        let env = check_roll(&run, &files);
        let store = env.checkpoint_store.as_deref().expect("checked in S3");
        let location = S3Location::for_group(store, env.asg()).expect("checked");
        assert!(
            checkpoints.insert((location.bucket, location.key)),
            "{what}: two clusters share one checkpoint"
        );
    }
}

#[test]
fn the_one_off_job_example_runs_the_cronjobs_roll_once() {
    let documents = yaml_documents(JOB);
    assert_eq!(documents.len(), 1, "{JOB}: one Job");
    let job = &documents[0];
    assert_eq!(text(job, &["apiVersion"], JOB), "batch/v1");
    assert_eq!(text(job, &["kind"], JOB), "Job");
    let run = check_job_spec(at(job, &["spec"], JOB), JOB);
    // Its env file is the CronJob example's ConfigMap.
    let cronjobs = yaml_documents(CRONJOB);
    let files = env_files(&cronjobs, &job["spec"]["template"], JOB);
    check_roll(&run, &files);
}

#[test]
fn the_metronome_example_rolls_one_cluster_on_a_schedule_that_forbids_overlaps() {
    let job: Value = serde_json::from_str(&read(METRONOME))
        .unwrap_or_else(|err| panic!("{METRONOME} is not JSON: {err}"));
    let id = text(&job, &["id"], METRONOME);
    // Metronome's job id: dot-separated names of lowercase letters,
    // digits and dashes, none starting or ending with a dash.
    assert!(
        id.split('.').all(|part| !part.is_empty()
            && !part.starts_with('-')
            && !part.ends_with('-')
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')),
        "{METRONOME}: id {id:?}"
    );
    let run = at(&job, &["run"], METRONOME);
    assert!(
        at(run, &["cpus"], METRONOME)
            .as_f64()
            .is_some_and(|c| c > 0.0)
    );
    assert!(
        at(run, &["mem"], METRONOME)
            .as_f64()
            .is_some_and(|m| m >= 32.0)
    );
    assert_eq!(
        text(run, &["restart", "policy"], METRONOME),
        "NEVER",
        "{METRONOME}: ON_FAILURE would retry a pause and a rollback"
    );
    let cmd = text(run, &["cmd"], METRONOME);
    assert!(
        run.get("args").is_none(),
        "{METRONOME}: cmd or args, not both"
    );
    // The shell runs `cmd`: without quotes, variables or operators, its
    // words are what roller gets.
    assert!(
        !cmd.contains(['\'', '"', '$', '`', ';', '&', '|', '<', '>', '\\', '*']),
        "{METRONOME}: cmd {cmd:?} needs a shell to read"
    );
    let argv: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
    let secrets = at(run, &["secrets"], METRONOME)
        .as_object()
        .expect("secrets");
    let mut vars = BTreeMap::new();
    let mut secret_vars = BTreeSet::new();
    for (name, value) in at(run, &["env"], METRONOME).as_object().expect("env") {
        match (value.as_str(), value["secret"].as_str()) {
            (Some(value), _) => {
                vars.insert(name.clone(), value.to_string());
            }
            (None, Some(secret)) => {
                assert!(secrets.contains_key(secret), "{METRONOME}: {secret}");
                secret_vars.insert(name.clone());
            }
            _ => panic!("{METRONOME}: {name} is neither a value nor a secret's"),
        }
    }
    let secret_files = at(run, &["volumes"], METRONOME)
        .as_array()
        .expect("volumes")
        .iter()
        .filter(|volume| {
            volume["secret"]
                .as_str()
                .is_some_and(|s| secrets.contains_key(s))
        })
        .map(|volume| text(volume, &["containerPath"], METRONOME).to_string())
        .collect();
    let roll = JobRun {
        what: METRONOME.to_string(),
        argv,
        vars,
        secret_vars,
        secret_files,
    };
    // The env file comes from the secret store (`envfile`): the operating
    // guide has it hold the CronJob example's file of the same name.
    let configmaps = yaml_documents(CRONJOB);
    let config = configmaps
        .iter()
        .find(|d| d["kind"] == "ConfigMap")
        .expect("the CronJob example's ConfigMap");
    let env_files = roll
        .secret_files
        .iter()
        .filter_map(|path| {
            let name = path.rsplit('/').next()?;
            let text = config["data"][name].as_str()?;
            Some((path.clone(), text.to_string()))
        })
        .collect();
    check_roll(&roll, &env_files);
    let schedules = at(&job, &["schedules"], METRONOME)
        .as_array()
        .expect("schedules");
    assert_eq!(schedules.len(), 1, "Metronome takes one schedule a job");
    for schedule in schedules {
        let what = format!("{METRONOME} schedule");
        assert!(!text(schedule, &["id"], &what).is_empty());
        assert_cron(text(schedule, &["cron"], &what), &what);
        assert_eq!(text(schedule, &["concurrencyPolicy"], &what), "FORBID");
        assert_eq!(schedule["enabled"], Value::Bool(true), "{what}");
    }
}

/// A typo in a flag must fail the tests above: the parse they rely on
/// refuses it.
#[test]
fn a_misspelt_flag_in_a_job_command_line_is_refused() {
    let line = ["roller", "run", "--env", "e.toml", "--target", "5"];
    assert!(Cli::try_parse_from(line).is_ok());
    for typo in ["--selct", "--log-fromat", "--checkpiont"] {
        let mut argv = line.to_vec();
        argv.extend([typo, "x"]);
        assert!(Cli::try_parse_from(&argv).is_err(), "{typo}");
    }
    let mut argv = line.to_vec();
    argv.extend(["--select", "outdatd"]);
    let cli = Cli::try_parse_from(&argv).expect("clap takes any word");
    let Command::Run(args) = cli.command else {
        panic!("run")
    };
    assert!(
        super::run_command::request(&args).is_err(),
        "--select outdatd"
    );
}

/// The operating guide's "Many clusters" section links every example
/// file, and every YAML or JSON block it quotes is a piece of one of
/// them, character for character.
#[test]
fn the_operating_guide_quotes_the_job_examples_as_they_are() {
    let guide = read(GUIDE);
    let start = guide
        .find("\n## Many clusters\n")
        .unwrap_or_else(|| panic!("{GUIDE}: a section \"Many clusters\""))
        + 1;
    let end = guide[start..]
        .find("\n## ")
        .map_or(guide.len(), |at| start + at);
    let section = &guide[start..end];
    let files: Vec<(&str, String)> = [CRONJOB, JOB, METRONOME]
        .into_iter()
        .map(|name| (name, read(name)))
        .collect();
    // The guide is in docs/: its links climb one folder to the examples.
    for (name, _) in &files {
        assert!(
            section.contains(&format!("](../{name})")),
            "the section links {name}"
        );
    }
    let mut rest = section;
    while let Some(open) = rest.find("\n```") {
        let after = &rest[open + 4..];
        let (info, body) = after.split_once('\n').expect("a fence's line");
        let close = body.find("\n```").expect("a closed fence");
        let block = &body[..close + 1];
        rest = &body[close + 4..];
        if matches!(info.trim(), "yaml" | "json") {
            assert!(
                files.iter().any(|(_, text)| text.contains(block)),
                "{GUIDE} quotes what no example holds:\n{block}"
            );
        }
    }
}
