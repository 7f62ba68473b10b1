//! `roller run` and `roller status` against the simulator, through the
//! real binary and its real adapters: a full roll judged by the monitor,
//! a dry run that writes nothing, pause on timeout and resume, a resume
//! with another target refused, two runs at once, SIGTERM mid-wait and
//! the lost-checkpoint hazard; and `roller status` of the checkpoints they
//! leave (complete, paused, held), which writes nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

use roller::roll::ports::auto_scaling::AutoScaling;

use super::cluster::{
    Cluster, MSR_TIME_SCALE, TIME_SCALE, Webhook, assert_clean_end, files_in, text, wait_for_line,
};

#[test]
fn a_full_roll_of_the_demo_cluster_replaces_every_agent_without_an_outage() {
    let cluster = Cluster::start("demo", "");
    let originals: Vec<String> = cluster
        .group()
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect();
    let output = cluster.run(&["--target", "12"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("roll-mesos-agents-demo (dependency strategy) (COMPLETE)"),
        "{stdout}"
    );
    assert!(stdout.contains("roll complete"), "{stdout}");
    assert_clean_end(&cluster, &originals, 12);
    // The checkpoint is archived, the lock file free, and no secret written.
    let dir = cluster.dir.path().join("checkpoints");
    let files = files_in(&dir);
    assert!(
        files.iter().any(|f| f.ends_with(".complete.json")),
        "{files:?}"
    );
    assert!(!cluster.checkpoint().exists());
    // Status of the archived checkpoint: complete, exit 0, nothing written.
    let archived = files
        .iter()
        .find(|f| f.ends_with(".complete.json"))
        .map(|f| dir.join(f))
        .unwrap();
    for json in [false, true] {
        let mut args = vec!["status", "--checkpoint", archived.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let status = cluster.roller(&args).output().unwrap();
        assert_eq!(status.status.code(), Some(0), "{}", text(&status));
        let shown = String::from_utf8_lossy(&status.stdout);
        if json {
            let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
            assert_eq!(json["state"], "complete", "{shown}");
        } else {
            assert!(shown.contains("state: complete\n"), "{shown}");
        }
        assert_eq!(files_in(&dir), files, "status wrote nothing");
    }
    // The checkpoints and the lock beside them: 0600.
    assert!(files.iter().any(|f| f.ends_with(".lock")), "{files:?}");
    for file in files
        .iter()
        .filter(|f| f.ends_with(".json") || f.ends_with(".lock"))
    {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(!text.contains("AWS_SECRET"), "{file}");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(dir.join(file)).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600, "{file}");
    }
    // Cron can call it again: every instance now runs the group's launch
    // template, so `--select outdated` finds nothing and exits 0 at once.
    let again = cluster.run(&["--target", "12", "--select", "outdated"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("nothing to replace"),
        "{}",
        text(&again)
    );
    assert_eq!(cluster.group().tag("roller:run-id"), None);
}

#[test]
fn a_full_roll_of_msr_55_replaces_all_55_agents_without_an_outage() {
    let cluster = Cluster::start_at("msr-55", MSR_TIME_SCALE, "");
    let originals: Vec<String> = cluster
        .group()
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect();
    assert_eq!(originals.len(), 55);
    let output = cluster.run(&["--target", "55"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_clean_end(&cluster, &originals, 55);
    // As cron sees it: the log on stderr, one timestamped line per state
    // change (55 terminations, not 55 trees), and the final tree once.
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    crate::demo::assert_log_lines(&stderr);
    let log_lines = stderr.lines().count();
    assert!(
        (55..1000).contains(&log_lines),
        "{log_lines} log lines:\n{stderr}"
    );
    for instance in &originals {
        assert!(
            stderr.contains(&format!(" INFO terminate/{instance} COMPLETE: ")),
            "{instance}: no line for its termination"
        );
    }
    assert_eq!(
        stdout.matches("(dependency strategy)").count(),
        1,
        "{stdout}"
    );
    assert!(
        stdout.starts_with("roll-mesos-agents-prod (dependency strategy) (COMPLETE)\n"),
        "{stdout}"
    );
    let report = cluster.report();
    // Single-instance apps were surged, not left to an outage.
    let archived = files_in(&cluster.dir.path().join("checkpoints"))
        .into_iter()
        .find(|f| f.ends_with(".complete.json"))
        .expect("archived checkpoint");
    let record =
        std::fs::read_to_string(cluster.dir.path().join("checkpoints").join(archived)).unwrap();
    assert!(record.contains("\"surge\""), "no surge recorded");
    // The defaults keep every app at its own floor.
    assert_eq!(report.apps_ever_below_floor, 0, "{}", report.summary());
    eprintln!(
        "msr-55 roll: {:.0} simulated s, {} relaunches, {} apps ever below floor, {log_lines} log lines, {} lines on stdout",
        report.simulated_ms as f64 / 1000.0,
        report.relaunches,
        report.apps_ever_below_floor,
        stdout.lines().count()
    );
}

#[test]
fn run_json_streams_one_typed_object_a_line_and_ends_with_the_result() {
    let cluster = Cluster::start("demo", "");
    let originals = cluster.live();
    let output = cluster.run(&["--target", "12", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert_clean_end(&cluster, &originals, 12);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let objects: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[0], "event", "the roll's start first: {stdout}");
    assert_eq!(objects[0]["kind"], "start");
    for kind in ["event", "step", "phase", "plan"] {
        assert!(kinds.contains(&kind), "no {kind}: {stdout}");
    }
    // Each termination is a step object with its wait spelled out.
    let waits: Vec<&serde_json::Value> = objects
        .iter()
        .filter(|o| o["type"] == "step" && o["wait"]["kind"] == "deregistered")
        .collect();
    assert!(waits.len() >= 12, "{stdout}");
    // All under the one configured deregistration timeout.
    let timeout = &waits[0]["wait"]["timeout_s"];
    assert!(timeout.as_u64().unwrap() > 0, "{timeout}");
    assert!(waits.iter().all(|w| &w["wait"]["timeout_s"] == timeout));
    let last = objects.last().unwrap();
    assert_eq!(kinds.iter().filter(|k| **k == "result").count(), 1);
    assert_eq!(last["type"], "result");
    assert_eq!(last["outcome"], "complete");
    assert_eq!(last["exit_code"], 0);
    assert_eq!(last["plan"]["status"], "COMPLETE");
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .starts_with("roll complete: "),
        "{last}"
    );
    // The log still went to stderr.
    crate::demo::assert_log_lines(&String::from_utf8_lossy(&output.stderr));
}

#[test]
fn preflight_refuses_a_target_beyond_max_size_and_instances_matching_no_agent_changing_nothing() {
    let cluster = Cluster::start("demo", "");
    let before = cluster.group();
    // 20 + 12 > MaxSize 24.
    let output = cluster.run(&["--target", "20"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("MaxSize 24 < N + K = 20 + 12"),
        "{}",
        text(&output)
    );
    // Matched by an attribute no agent has: every instance is unmatched.
    let output = cluster
        .roller(&[
            "run",
            "--env",
            cluster.env_file.to_str().unwrap(),
            "--target",
            "12",
        ])
        .env("ROLLER_MATCH", "attribute:ec2_instance_id")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("match no single active Mesos agent"),
        "{}",
        text(&output)
    );
    assert_eq!(cluster.group(), before);
    // No checkpoint (the run's empty lock file stays, as lock files do).
    let files = files_in(&cluster.dir.path().join("checkpoints"));
    assert!(files.iter().all(|f| f.ends_with(".lock")), "{files:?}");
}

#[test]
fn a_target_or_canary_that_cannot_be_rolled_is_refused_by_preflight_naming_the_flag_and_writing_nothing()
 {
    let cluster = Cluster::start("demo", "");
    let before = cluster.group();
    let checkpoints = cluster.dir.path().join("checkpoints");
    // The demo group has 12 instances: K = 12.
    let cases: [(&[&str], &str, &str); 4] = [
        (
            &["--target", "4294967295", "--raise-max", "--dry-run"],
            "--target 4294967295 is above 100000",
            "give the number of agents the cluster must have",
        ),
        (
            &["--target", "99995", "--raise-max", "--dry-run"],
            "--target 99995 with 12 instance(s) to replace needs N + K = 100007",
            "give a --target of at most 99988",
        ),
        (
            &["--target", "0", "--dry-run"],
            "--target 0 would leave no agent",
            "give the number of agents the cluster must have",
        ),
        (
            &["--target", "12", "--canary", "0", "--dry-run"],
            "--canary 0 would hold no step",
            "(at least 1), or leave --canary out",
        ),
    ];
    for (args, refusal, what_to_do) in cases {
        let output = cluster.run(args);
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(refusal), "{}", text(&output));
        assert!(stderr.contains(what_to_do), "{}", text(&output));
        assert!(!stderr.contains("panicked"), "{}", text(&output));
        // No checkpoint, no lock file: a dry run writes nothing.
        assert_eq!(files_in(&checkpoints), Vec::<String>::new());
    }
    // A real run gets the same refusal before it changes anything.
    let output = cluster.run(&["--target", "4294967295", "--raise-max"]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--target 4294967295 is above 100000"),
        "{}",
        text(&output)
    );
    assert_eq!(cluster.group(), before);
    // No checkpoint (the run's empty lock file stays, as lock files do).
    let files = files_in(&checkpoints);
    assert!(files.iter().all(|f| f.ends_with(".lock")), "{files:?}");
}

#[test]
fn a_dry_run_prints_the_plan_and_changes_and_writes_nothing() {
    let cluster = Cluster::start("demo", "");
    let before = cluster.group();
    let output = cluster.run(&["--target", "12", "--dry-run"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("would replace 12 instance(s) of mesos-agents-demo and end with 12 agents (desired peaks at 24)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("roll-mesos-agents-demo (dependency strategy) (PENDING)\n├─ prepare"),
        "{stdout}"
    );
    // The settings an operator reads before saying yes: held instances
    // and the alarms that would stop it (none named here).
    for line in [
        "instances in Standby: wait (--standby); protected from scale-in: replace (--protected)",
        "CloudWatch alarms that stop the roll in ALARM: none (--alarm)",
    ] {
        assert!(stdout.contains(line), "{line:?} in {stdout}");
    }
    // The drain's first wave, from today's placement.
    assert!(
        stdout.contains("the first drain wave would kill ")
            && stdout.contains(" of the 12 old agent(s) would then be empty"),
        "{stdout}"
    );
    assert_eq!(cluster.group(), before);
    // No checkpoint (the run's empty lock file stays, as lock files do).
    let files = files_in(&cluster.dir.path().join("checkpoints"));
    assert!(files.iter().all(|f| f.ends_with(".lock")), "{files:?}");
}

// The operator's report: on the two-group `cluster`, the dry run said
// "would replace 55 instance(s) of mesos-agents-prod" and nothing of the
// public group it would also replace, and its JSON listed group 0 only.
#[test]
fn a_dry_run_of_a_cluster_names_every_group_in_text_and_json() {
    let cluster = Cluster::start_whole_at("demo-cluster", TIME_SCALE, "");
    let before = cluster.group();
    let output = cluster.run(&["--dry-run"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in [
        "dry run: would replace 15 instance(s) of 2 groups, one group emptied at a time:",
        "  12 instance(s) of mesos-agents-demo and end with 12 agents (desired peaks at 24)",
        "  3 instance(s) of mesos-agents-demo-public and end with 3 agents (desired peaks at 6)",
    ] {
        assert!(stdout.contains(line), "{line:?} in {stdout}");
    }
    // The first drain wave, group by group.
    for asg in ["mesos-agents-demo", "mesos-agents-demo-public"] {
        assert!(
            stdout.contains(&format!("{asg}: the first drain wave would kill ")),
            "{asg}'s preview in {stdout}"
        );
    }

    let json = cluster.run(&["--dry-run", "--json"]);
    assert_eq!(json.status.code(), Some(0), "{}", text(&json));
    let value: serde_json::Value =
        serde_json::from_slice(&json.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&json)));
    let groups = value["groups"].as_array().expect("groups");
    let named: Vec<(&str, usize, u64)> = groups
        .iter()
        .map(|g| {
            (
                g["asg"].as_str().unwrap(),
                g["instances"].as_array().unwrap().len(),
                g["desired_peak"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        named,
        [
            ("mesos-agents-demo", 12, 24),
            ("mesos-agents-demo-public", 3, 6)
        ]
    );
    assert_eq!(value["instances"].as_array().unwrap().len(), 15);
    assert_eq!(cluster.group(), before, "a dry run changes nothing");
}

#[test]
fn a_timeout_pauses_with_exit_3_and_a_rerun_resumes_while_another_target_is_refused() {
    // One simulated second to register twelve new agents: sure to time out.
    let cluster = Cluster::start(
        "demo",
        "[timeouts]\nscale_up = 1\nderegister = \"1h\"\nhealthy = \"1h\"\ntask_move = \"1h\"\n",
    );
    let originals: Vec<String> = cluster
        .group()
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect();
    let paused = cluster.run(&["--target", "12"]);
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    let stderr = String::from_utf8_lossy(&paused.stderr);
    assert!(
        stderr.contains("paused at scale-up/wait-registered"),
        "{stderr}"
    );
    assert!(stderr.contains("roller run --env"), "{stderr}");
    let checkpoint = std::fs::read_to_string(cluster.checkpoint()).unwrap();
    assert!(checkpoint.contains("\"pause\":{"), "{checkpoint}");

    // The run is over: its lock file goes, and status must not bring it
    // back (it only looks), while its exit code says "paused".
    let checkpoints = cluster.dir.path().join("checkpoints");
    std::fs::remove_file(checkpoints.join("mesos-agents-demo.json.lock")).unwrap();
    let before = files_in(&checkpoints);
    let status = cluster
        .roller(&["status", "--env", cluster.env_file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(3), "{}", text(&status));
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(shown.contains("state: paused\n"), "{shown}");
    assert!(
        shown.contains("PAUSED at scale-up/wait-registered"),
        "{shown}"
    );
    assert!(shown.contains("no run holds the lock"), "{shown}");
    let said = String::from_utf8_lossy(&status.stderr);
    assert!(
        said.contains("the roll is paused at scale-up/wait-registered"),
        "{said}"
    );
    assert!(said.contains("resume with: roller run --env"), "{said}");
    assert_eq!(files_in(&checkpoints), before, "status wrote nothing");

    let other = cluster.run(&["--target", "13"]);
    assert_eq!(other.status.code(), Some(2), "{}", text(&other));
    assert!(String::from_utf8_lossy(&other.stderr).contains("--target 13 differs"));
    let other = cluster.run(&["--strategy", "serial"]);
    assert_eq!(other.status.code(), Some(2), "{}", text(&other));
    assert!(
        String::from_utf8_lossy(&other.stderr)
            .contains("--strategy drain; --strategy serial differs"),
        "{}",
        text(&other)
    );
    let bad = cluster.run(&["--strategy", "fast"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown strategy 'fast'"));
    // The floor is the roll's (capacity, the default): another is refused,
    // an unknown one named, and the old flag with the new one refused.
    let other = cluster.run(&["--min-healthy", "one"]);
    assert_eq!(other.status.code(), Some(2), "{}", text(&other));
    assert!(
        String::from_utf8_lossy(&other.stderr)
            .contains("--min-healthy capacity; --min-healthy one differs"),
        "{}",
        text(&other)
    );
    let bad = cluster.run(&["--min-healthy", "half"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("unknown floor 'half': expected capacity"),
        "{}",
        text(&bad)
    );
    let both = cluster.run(&["--min-healthy", "one", "--honor-min-health"]);
    assert_eq!(both.status.code(), Some(2), "{}", text(&both));

    // The scenario "heals": the operator gives the wait its real timeout.
    let resumed = cluster.resume_patiently(&[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_clean_end(&cluster, &originals, 12);
}

#[test]
fn sigterm_mid_wait_exits_130_a_lost_checkpoint_is_refused_and_the_rerun_finishes() {
    let cluster = Cluster::start("demo", "");
    let originals: Vec<String> = cluster
        .group()
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect();
    let (mut child, lines) = cluster.spawn(&["--target", "12"]);
    assert!(wait_for_line(&lines, "scale-up/wait-registered STARTED"));

    // A second run on the same checkpoint is refused while the first holds it.
    let second = cluster.run(&["--target", "12"]);
    assert_eq!(second.status.code(), Some(2), "{}", text(&second));
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("another roller run holds"),
        "{}",
        text(&second)
    );

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(cluster.checkpoint().exists());

    // The checkpoint is lost: the ASG's run-id tag makes a rerun refuse
    // rather than scale again.
    let aside = cluster.dir.path().join("aside.json");
    std::fs::rename(cluster.checkpoint(), &aside).unwrap();
    let desired_before = cluster.group().desired_capacity;
    let refused = cluster.run(&["--target", "12"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("roller:run-id"), "{stderr}");
    assert!(stderr.contains("roller abandon --run-id"), "{stderr}");
    assert_eq!(cluster.group().desired_capacity, desired_before);
    assert!(desired_before <= 24);

    std::fs::rename(&aside, cluster.checkpoint()).unwrap();
    let resumed = cluster.run(&[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_clean_end(&cluster, &originals, 12);
}

#[test]
fn a_canary_roll_waits_for_plan_continue_on_the_checkpoint_which_the_event_log_records() {
    let cluster = Cluster::start("demo", "");
    let originals: Vec<String> = cluster
        .group()
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect();
    let held = cluster.run(&["--target", "12", "--canary", "1", "--strategy", "serial"]);
    assert_eq!(held.status.code(), Some(3), "{}", text(&held));
    let stderr = String::from_utf8_lossy(&held.stderr);
    assert!(stderr.contains("roller plan continue --file"), "{stderr}");
    // Nothing was replaced yet: the canary waits before acting.
    let group = cluster.group();
    assert!(originals.iter().all(|id| group.instance(id).is_some()));

    let checkpoint = cluster.checkpoint();
    let status = cluster
        .roller(&[
            "status",
            "--checkpoint",
            checkpoint.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(3), "{}", text(&status));
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(json["state"], "held");
    assert!(
        String::from_utf8_lossy(&status.stderr).contains("roller plan continue --file"),
        "{}",
        text(&status)
    );

    let go = cluster
        .roller(&[
            "plan",
            "continue",
            "--file",
            checkpoint.to_str().unwrap(),
            "--phase",
            "replace",
        ])
        .env("USER", "oncall-alice")
        .output()
        .unwrap();
    assert_eq!(go.status.code(), Some(0), "{}", text(&go));
    let recorded = std::fs::read_to_string(&checkpoint).unwrap();
    assert!(
        recorded.contains("\"user\": \"oncall-alice\""),
        "{recorded}"
    );
    assert!(recorded.contains("continue phase 'replace'"), "{recorded}");

    let resumed = cluster.run(&[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_clean_end(&cluster, &originals, 12);
}

#[test]
fn with_on_failure_pause_an_app_never_healthy_after_relaunch_pauses_and_pages_and_once_healed_the_rerun_completes()
 {
    let hook = Webhook::start();
    let cluster = Cluster::start(
        "hazards",
        "[timeouts]\nhealthy = \"10m\"\nscale_up = \"1h\"\nderegister = \"1h\"\ntask_move = \"1h\"\n[pager]\nwebhook = true\n",
    );
    let originals: Vec<String> = cluster
        .group()
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect();
    // The env file is named relative to the folder roller runs in; the
    // page's resume command must work from anywhere.
    let paused = cluster
        .roller(&[
            "run",
            "--env",
            "env.toml",
            "--target",
            "6",
            "--on-failure",
            "pause",
        ])
        .env("ROLLER_WEBHOOK_URL", &hook.url)
        .output()
        .unwrap();
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    let stderr = String::from_utf8_lossy(&paused.stderr);
    assert!(stderr.contains("paused at drain/wave-"), "{stderr}");
    assert!(stderr.contains("a page went out"), "{stderr}");
    assert!(stderr.contains("/hazard/never-healthy"), "{stderr}");
    // The secret URL is never printed; the page went out with the step.
    assert!(
        !stderr.contains(&hook.url) && !String::from_utf8_lossy(&paused.stdout).contains(&hook.url)
    );
    let pages = hook.bodies();
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert!(pages[0].contains("\"event\":\"trigger\""), "{pages:?}");
    assert!(pages[0].contains("mesos-agents-hazards"), "{pages:?}");
    let absolute = format!("roller run --env {}", cluster.env_file.display());
    assert!(pages[0].contains(&absolute), "{absolute} in {pages:?}");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert!(
        pages[0].contains(&format!("\"source\":\"{}\"", host.trim())),
        "the page's source is this host: {pages:?}"
    );
    let recorded = std::fs::read_to_string(cluster.checkpoint()).unwrap();
    assert!(!recorded.contains(&hook.url));

    // Heal the app: its relaunched tasks become healthy from now on.
    let control = format!(
        "{}/faults",
        cluster.sim.as_ref().unwrap().endpoints().control()
    );
    cluster.runtime.block_on(async {
        let response = reqwest::Client::builder()
            .no_proxy()
            .build()
            .unwrap()
            .post(&control)
            .body(r#"{"world": {"never_healthy_apps": []}}"#)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success());
    });

    // The operator, having healed it, acknowledges the failure.
    let resumed = cluster
        .roller(&[
            "run",
            "--env",
            cluster.env_file.to_str().unwrap(),
            "--acknowledge-failure",
        ])
        .env("ROLLER_WEBHOOK_URL", &hook.url)
        .output()
        .unwrap();
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_clean_end(&cluster, &originals, 6);
    let pages = hook.bodies();
    assert!(
        pages.iter().any(|p| p.contains("\"event\":\"resolve\"")),
        "the page is resolved once past the step: {pages:?}"
    );
}

#[test]
fn abandon_removes_only_its_own_tag_resumes_what_it_suspended_and_never_changes_capacity() {
    let cluster = Cluster::start(
        "demo",
        "[timeouts]\nscale_up = 1\nderegister = \"1h\"\nhealthy = \"1h\"\ntask_move = \"1h\"\n",
    );
    let paused = cluster.run(&["--target", "12"]);
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cluster.checkpoint()).unwrap()).unwrap();
    let run_id = record["run_id"].as_str().unwrap().to_string();
    let before = cluster.group();
    assert_eq!(before.tag("roller:run-id"), Some(run_id.as_str()));
    assert_eq!(before.suspended_processes.len(), 4);

    let env = cluster.env_file.to_str().unwrap();
    let wrong = cluster
        .roller(&[
            "abandon",
            "--env",
            env,
            "--run-id",
            "someone-else",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(2), "{}", text(&wrong));
    assert_eq!(cluster.group().tag("roller:run-id"), Some(run_id.as_str()));
    let error: serde_json::Value = serde_json::from_slice(&wrong.stdout).unwrap();
    assert_eq!(error["error"]["exit_code"], 2, "{error}");

    // What it would do, as JSON, changing nothing.
    let would = cluster
        .roller(&[
            "abandon",
            "--env",
            env,
            "--run-id",
            &run_id,
            "--dry-run",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(would.status.code(), Some(0), "{}", text(&would));
    let report: serde_json::Value = serde_json::from_slice(&would.stdout).unwrap();
    assert_eq!(report["run_id"], run_id.as_str());
    assert_eq!(report["dry_run"], true);
    assert_eq!(report["done"], serde_json::json!([]));
    let steps = report["would"].as_array().unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s.as_str().unwrap().contains("roller:run-id")),
        "{report}"
    );
    assert_eq!(cluster.group().tag("roller:run-id"), Some(run_id.as_str()));

    let abandoned = cluster
        .roller(&["abandon", "--env", env, "--run-id", &run_id])
        .output()
        .unwrap();
    assert_eq!(abandoned.status.code(), Some(0), "{}", text(&abandoned));
    let after = cluster.group();
    assert_eq!(after.tag("roller:run-id"), None);
    // As at the end of a roll: AZRebalance stays suspended while the AZs
    // are uneven (mid-launch here), and the output says how to resume it.
    let said = String::from_utf8_lossy(&abandoned.stdout);
    let kept: Vec<&str> = after
        .suspended_processes
        .iter()
        .map(|p| p.as_str())
        .collect();
    match kept.as_slice() {
        [] => {}
        ["AZRebalance"] => assert!(said.contains("AZRebalance left suspended"), "{said}"),
        other => panic!("only AZRebalance may stay suspended: {other:?}"),
    }
    assert_eq!(after.desired_capacity, before.desired_capacity);
    assert!(!cluster.checkpoint().exists());
    assert!(
        files_in(&cluster.dir.path().join("checkpoints"))
            .iter()
            .any(|f| f.contains(".abandoned.")),
    );
}

/// An environment whose endpoints nobody serves: what `run` must refuse
/// before it talks to anyone.
fn offline_env(dir: &Path) -> PathBuf {
    let path = dir.join("env.toml");
    std::fs::write(
        &path,
        format!(
            "asg = \"mesos-agents-demo\"\nregion = \"us-east-1\"\naws_endpoint_url = \"http://127.0.0.1:9\"\n\
             mesos = [\"http://127.0.0.1:9\"]\nmarathon = [\"http://127.0.0.1:9\"]\ncheckpoint_dir = \"{}\"\n",
            dir.join("checkpoints").display()
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_corrupt_newer_or_foreign_checkpoint_is_refused_with_exit_2_and_left_untouched() {
    let dir = TempDir::new().unwrap();
    let env = offline_env(dir.path());
    let checkpoints = dir.path().join("checkpoints");
    std::fs::create_dir_all(&checkpoints).unwrap();
    let path = checkpoints.join("mesos-agents-demo.json");
    let cases = [
        ("{ not json", "not a roller checkpoint"),
        (r#"{"version": 7, "run_id": "x"}"#, "schema version 7"),
    ];
    for (content, says) in cases {
        std::fs::write(&path, content).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_roller"))
            .args(["run", "--env", env.to_str().unwrap(), "--target", "12"])
            .env("AWS_ACCESS_KEY_ID", "simulated")
            .env("AWS_SECRET_ACCESS_KEY", "simulated")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", text(&output));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(says),
            "{}",
            text(&output)
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), content);
    }
    // A checkpoint of another group, named by --checkpoint.
    let cluster = Cluster::start(
        "demo",
        "[timeouts]\nscale_up = 1\nderegister = \"1h\"\nhealthy = \"1h\"\ntask_move = \"1h\"\n",
    );
    assert_eq!(cluster.run(&["--target", "12"]).status.code(), Some(3));
    let foreign = std::fs::read_to_string(cluster.checkpoint())
        .unwrap()
        .replace("\"asg\":\"mesos-agents-demo\"", "\"asg\":\"another-asg\"");
    std::fs::write(&path, &foreign).unwrap();
    let output = cluster.run(&["--checkpoint", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("belongs to ASG 'another-asg'"),
        "{}",
        text(&output)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), foreign);

    // status --json of the paused run.
    let status = cluster
        .roller(&[
            "status",
            "--env",
            cluster.env_file.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(3), "{}", text(&status));
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(json["locked"], false);
    assert_eq!(json["state"], "paused");
    assert_eq!(json["target"], 12);
    assert_eq!(json["pause"]["step"], "scale-up/wait-registered");
    // A pause is the step backing off (DELAYED); WAITING is left to
    // operators' interrupts, which a rerun never clears.
    assert_eq!(json["plan"]["status"], "DELAYED");
    assert_eq!(json["pause"]["paged"], false);
}

#[test]
fn another_writer_changing_desired_capacity_pauses_the_roll_before_any_termination() {
    let cluster = Cluster::start(
        "demo",
        "[timeouts]\nscale_up = 1\nderegister = \"1h\"\nhealthy = \"1h\"\ntask_move = \"1h\"\n",
    );
    let originals: Vec<String> = cluster
        .group()
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect();
    let paused = cluster.run(&["--target", "12"]);
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    assert_eq!(cluster.group().desired_capacity, 24);
    // Someone else raises the group while the roll is paused.
    let aws = cluster.aws();
    cluster.runtime.block_on(async {
        aws.update_size_limits("mesos-agents-demo", 12, 25)
            .await
            .unwrap();
        aws.set_desired_capacity("mesos-agents-demo", 25)
            .await
            .unwrap();
    });
    let resumed = cluster.resume_patiently(&[]);
    // A pause (exit 3, a page when a pager is set), never a fight.
    assert_eq!(resumed.status.code(), Some(3), "{}", text(&resumed));
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(stderr.contains("desired capacity is 25"), "{stderr}");
    assert!(stderr.contains("another writer"), "{stderr}");
    let group = cluster.group();
    assert_eq!(group.desired_capacity, 25);
    assert!(
        originals.iter().all(|id| group.instance(id).is_some()),
        "nothing terminated"
    );
    assert!(cluster.checkpoint().exists());
}

#[test]
fn bad_environment_files_and_flags_are_refused_with_exit_2_naming_the_thing() {
    let dir = TempDir::new().unwrap();
    let env = offline_env(dir.path());
    let run = |extra: &[&str], env_file: &Path| {
        let mut args = vec!["run", "--env", env_file.to_str().unwrap()];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_roller"))
            .args(&args)
            .env("AWS_ACCESS_KEY_ID", "simulated")
            .env("AWS_SECRET_ACCESS_KEY", "simulated")
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .output()
            .unwrap()
    };
    let output = run(&["--target", "3", "--select", "newest"], &env);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("older-than=14d"));
    // An age whose seconds overflow: refused, not a panic.
    let output = run(
        &["--target", "3", "--select", "older-than=213503982334602d"],
        &env,
    );
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no instance can be that old"),
        "{}",
        text(&output)
    );

    let typo = dir.path().join("typo.toml");
    let original = std::fs::read_to_string(&env).unwrap();
    std::fs::write(&typo, format!("{original}time_scael = 3\n")).unwrap();
    let output = run(&["--target", "3"], &typo);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("time_scael"));

    let secret = dir.path().join("secret.toml");
    std::fs::write(
        &secret,
        format!("{original}[pager]\nrouting_key = \"R0UT1NG\"\n"),
    )
    .unwrap();
    let output = run(&["--target", "3"], &secret);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    let all = text(&output);
    assert!(all.contains("ROLLER_PAGERDUTY_ROUTING_KEY"), "{all}");
    assert!(
        !all.contains("R0UT1NG"),
        "the secret is never echoed: {all}"
    );

    let output = run(&["--target", "3"], &dir.path().join("missing.toml"));
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("missing.toml"));
}

#[test]
fn an_instance_not_in_service_is_refused_unless_left_out_with_skip_not_in_service() {
    // Slow time: a new instance stays Pending for 90 simulated s = 9 s real.
    let cluster = Cluster::start_at("demo", 10.0, "");
    let aws = cluster.aws();
    cluster.runtime.block_on(async {
        aws.set_desired_capacity("mesos-agents-demo", 13)
            .await
            .unwrap();
    });
    let refused = cluster.run(&["--target", "12", "--dry-run"]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("not InService"), "{stderr}");
    assert!(stderr.contains("--skip-not-in-service"), "{stderr}");

    let skipped = cluster.run(&["--target", "12", "--dry-run", "--skip-not-in-service"]);
    assert_eq!(skipped.status.code(), Some(0), "{}", text(&skipped));
    let stdout = String::from_utf8_lossy(&skipped.stdout);
    assert!(
        stdout.contains("left out of the roll (not InService)"),
        "{stdout}"
    );
    assert!(stdout.contains("would replace 12 instance(s)"), "{stdout}");
}

#[test]
fn by_default_an_app_failing_on_the_new_agents_rolls_the_cluster_back_with_exit_5_and_a_page() {
    let hook = Webhook::start();
    let cluster = Cluster::start(
        "hazards",
        "[timeouts]\nhealthy = \"10m\"\nscale_up = \"1h\"\nderegister = \"1h\"\ntask_move = \"1h\"\n[pager]\nwebhook = true\n",
    );
    let before = cluster.group();
    let env = cluster.env_file.to_str().unwrap();
    // Nothing to roll back yet: refused, nothing written.
    let nothing = cluster
        .roller(&["rollback", "--env", env])
        .env("ROLLER_WEBHOOK_URL", &hook.url)
        .output()
        .unwrap();
    assert_eq!(nothing.status.code(), Some(2), "{}", text(&nothing));
    assert!(
        text(&nothing).contains("no roll in progress"),
        "{}",
        text(&nothing)
    );
    assert!(!cluster.checkpoint().exists());

    let rolled = cluster
        .roller(&["run", "--env", env, "--target", "6", "--json"])
        .env("ROLLER_WEBHOOK_URL", &hook.url)
        .output()
        .unwrap();
    assert_eq!(rolled.status.code(), Some(5), "{}", text(&rolled));
    let stdout = String::from_utf8_lossy(&rolled.stdout);
    let result: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(result["outcome"], "rolled_back", "{result}");
    assert_eq!(result["exit_code"], 5, "{result}");
    assert!(
        result["message"]
            .as_str()
            .unwrap()
            .contains("/hazard/never-healthy"),
        "{result}"
    );
    // The page says so; the group is as it was; the checkpoint archived.
    let pages = hook.bodies();
    assert!(
        pages
            .iter()
            .any(|p| p.contains("rolled") && p.contains("back")),
        "{pages:?}"
    );
    let after = cluster.group();
    let ids = |g: &roller::roll::ports::auto_scaling::AutoScalingGroup| {
        let mut ids: Vec<String> = g.instances.iter().map(|i| i.id.clone()).collect();
        ids.sort();
        ids
    };
    // The broken app is not in the drain's sample, so its failure is found
    // once other agents were emptied and some old instances terminated:
    // as many new ones stay, and the output names each of them.
    assert_eq!(ids(&after).len(), ids(&before).len());
    let said = text(&rolled);
    for kept in ids(&after).iter().filter(|id| !ids(&before).contains(id)) {
        assert!(
            said.contains("kept") && said.contains(kept.as_str()),
            "{kept}: {said}"
        );
    }
    assert_eq!(after.desired_capacity, before.desired_capacity);
    assert_eq!(after.max_size, before.max_size);
    assert_eq!(after.tag("roller:run-id"), None);
    assert!(!cluster.checkpoint().exists(), "archived");
    assert!(
        files_in(&cluster.dir.path().join("checkpoints"))
            .iter()
            .any(|f| f.ends_with(".complete.json")),
        "archived beside"
    );
}
