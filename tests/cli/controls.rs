//! The operator's controls, each through the real binary against the
//! simulator: an interrupt holds until `continue` (a rerun never clears
//! it), an interrupt reaches a live run, a resume re-reads the run-id tag
//! and refuses another environment, the canary hint works as printed,
//! and `--allow-unhealthy` on a resume is honoured (with the page of the
//! force-completed step resolved).

use std::process::Output;

use roller::roll::ports::auto_scaling::{AutoScaling, GroupTag};
use roller::roll::record::checkpoint::Checkpoint;

use super::cluster::{Cluster, Webhook, assert_clean_end, text, wait_for_line};

/// Pauses at wait-registered almost at once (a one-second timeout).
const QUICK_PAUSE: &str =
    "[timeouts]\nscale_up = 1\nderegister = \"1h\"\nhealthy = \"1h\"\ntask_move = \"1h\"\n";

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The `roller plan continue …` command a held run printed, as arguments.
fn printed_continue(output: &Output) -> Vec<String> {
    let said = stderr(output);
    let at = said
        .find("roller plan continue")
        .unwrap_or_else(|| panic!("no continue command in: {said}"));
    said[at..]
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

fn run_printed(cluster: &Cluster, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cluster.roller(&args).output().unwrap()
}

fn originals(cluster: &Cluster) -> Vec<String> {
    cluster
        .group()
        .instances
        .iter()
        .map(|i| i.id.clone())
        .collect()
}

/// What roller could have changed in the group (the world boots
/// instances on its own meanwhile).
fn writable(cluster: &Cluster) -> String {
    let group = cluster.group();
    let mut ids: Vec<String> = group.instances.iter().map(|i| i.id.clone()).collect();
    ids.sort();
    format!(
        "min {} max {} desired {} suspended {:?} tags {:?} instances {ids:?}",
        group.min_size,
        group.max_size,
        group.desired_capacity,
        group.suspended_processes,
        group.tags
    )
}

fn checkpoint(cluster: &Cluster) -> Checkpoint {
    Checkpoint::load(&cluster.checkpoint()).unwrap().unwrap()
}

#[test]
fn an_operators_interrupt_of_a_paused_roll_holds_through_reruns_until_the_printed_continue() {
    let cluster = Cluster::start("demo", QUICK_PAUSE);
    let originals = originals(&cluster);
    let paused = cluster.run(&["--target", "12"]);
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    // No pager is configured: no page can be said to have gone out.
    assert!(
        stderr(&paused).contains("no page went out"),
        "{}",
        text(&paused)
    );
    assert!(!checkpoint(&cluster).pause.unwrap().paged);
    let file = cluster.checkpoint();
    let file = file.to_str().unwrap();
    let base = format!("roller plan continue --file {file}");
    for (target, expected) in [
        (vec![], base.clone()),
        (
            vec!["--phase", "scale-up"],
            format!("{base} --phase scale-up"),
        ),
        (
            vec!["--phase", "scale-up", "--step", "wait-registered"],
            format!("{base} --phase scale-up --step wait-registered"),
        ),
    ] {
        let mut interrupt = vec!["plan", "interrupt", "--file", file];
        interrupt.extend(&target);
        let done = cluster.roller(&interrupt).output().unwrap();
        assert_eq!(done.status.code(), Some(0), "{}", text(&done));
        assert!(
            String::from_utf8_lossy(&done.stdout).contains(": done"),
            "the interrupt of a paused plan changes it: {}",
            text(&done)
        );
        // A rerun (even one that would now get past the wait) is held, and
        // leaves the pause alone.
        let before = checkpoint(&cluster).plan;
        let held = cluster.resume_patiently(&[]);
        assert_eq!(held.status.code(), Some(3), "{}", text(&held));
        assert!(
            stderr(&held).contains(&expected),
            "{expected} in {}",
            text(&held)
        );
        let after = checkpoint(&cluster);
        assert!(after.pause.is_some(), "the pause is kept while held");
        assert_eq!(after.plan, before, "a held rerun changes no step");
        // The command as printed releases it.
        let go = run_printed(&cluster, &printed_continue(&held));
        assert_eq!(go.status.code(), Some(0), "{}", text(&go));
    }
    let resumed = cluster.resume_patiently(&[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_clean_end(&cluster, &originals, 12);
}

#[test]
fn an_interrupt_while_a_run_is_live_is_applied_at_its_next_tick_and_the_run_exits_held() {
    let cluster = Cluster::start("demo", "");
    let originals = originals(&cluster);
    let (child, lines) = cluster.spawn(&["--target", "12"]);
    assert!(wait_for_line(&lines, "scale-up/wait-registered STARTED"));
    let file = cluster.checkpoint();
    let queued = cluster
        .roller(&["plan", "interrupt", "--file", file.to_str().unwrap()])
        .env("USER", "oncall-bob")
        .output()
        .unwrap();
    assert_eq!(queued.status.code(), Some(0), "{}", text(&queued));
    assert!(
        String::from_utf8_lossy(&queued.stdout).contains("queued"),
        "{}",
        text(&queued)
    );
    let mut child = child;
    let status = child.wait().unwrap();
    // Everything the run printed, from the threads that read it.
    let said: Vec<String> = lines.iter().collect();
    let output = std::process::Output {
        status,
        stdout: Vec::new(),
        stderr: said.join("\n").into_bytes(),
    };
    assert_eq!(output.status.code(), Some(3), "{}", text(&output));
    assert!(
        stderr(&output).contains(&format!("roller plan continue --file {}", file.display())),
        "{}",
        text(&output)
    );
    let held = checkpoint(&cluster);
    assert!(held.plan.interrupted);
    assert!(
        held.events
            .iter()
            .any(|e| e.user.as_deref() == Some("oncall-bob") && e.message.contains("interrupt")),
        "the operator is in the event log"
    );
    assert!(
        !roller::roll::record::operations::folder(&file).exists()
            || std::fs::read_dir(roller::roll::record::operations::folder(&file))
                .unwrap()
                .next()
                .is_none(),
        "the queue is emptied once applied"
    );
    let go = run_printed(&cluster, &printed_continue(&output));
    assert_eq!(go.status.code(), Some(0), "{}", text(&go));
    let resumed = cluster.run(&[]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    assert_clean_end(&cluster, &originals, 12);
}

#[test]
fn a_resume_after_abandon_or_under_another_runs_tag_is_refused_and_changes_nothing() {
    let cluster = Cluster::start("demo", QUICK_PAUSE);
    let paused = cluster.run(&["--target", "12"]);
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    let saved = std::fs::read_to_string(cluster.checkpoint()).unwrap();
    let run_id = checkpoint(&cluster).run_id;
    let env = cluster.env_file.to_str().unwrap();
    let abandoned = cluster
        .roller(&["abandon", "--env", env, "--run-id", &run_id])
        .output()
        .unwrap();
    assert_eq!(abandoned.status.code(), Some(0), "{}", text(&abandoned));

    // The checkpoint comes back (a copy, a restore from backup): the roll
    // was abandoned, so its resume must not touch the group.
    std::fs::write(cluster.checkpoint(), &saved).unwrap();
    let before = writable(&cluster);
    let refused = cluster.resume_patiently(&[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        stderr(&refused).contains("carries no roller:run-id tag"),
        "{}",
        text(&refused)
    );
    assert!(stderr(&refused).contains(&run_id), "{}", text(&refused));
    assert_eq!(writable(&cluster), before, "nothing changed");
    assert_eq!(
        std::fs::read_to_string(cluster.checkpoint()).unwrap(),
        saved
    );

    // Another run's tag: refused, naming both ids.
    let aws = cluster.aws();
    cluster.runtime.block_on(async {
        let tag = GroupTag {
            key: "roller:run-id".to_string(),
            value: "another-run".to_string(),
            propagate_at_launch: false,
        };
        aws.put_tags("mesos-agents-demo", &[tag]).await.unwrap();
    });
    let before = writable(&cluster);
    let refused = cluster.resume_patiently(&[]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    let said = stderr(&refused);
    assert!(
        said.contains("another-run") && said.contains(&run_id),
        "{said}"
    );
    assert_eq!(writable(&cluster), before, "nothing changed");
}

#[test]
fn a_checkpoint_made_for_another_environment_is_refused_and_left_untouched() {
    let cluster = Cluster::start("demo", QUICK_PAUSE);
    let paused = cluster.run(&["--target", "12"]);
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    let saved = std::fs::read_to_string(cluster.checkpoint()).unwrap();
    for (flag, value, named) in [
        ("--mesos", "http://127.0.0.1:9", "Mesos masters"),
        ("--region", "eu-west-1", "region"),
    ] {
        let refused = cluster.run(&[flag, value]);
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        let said = stderr(&refused);
        assert!(said.contains("another environment"), "{said}");
        assert!(said.contains(named) && said.contains(value), "{said}");
        assert_eq!(
            std::fs::read_to_string(cluster.checkpoint()).unwrap(),
            saved
        );
    }
}

#[test]
fn the_canary_hint_works_as_printed_and_releases_exactly_one_canary_step() {
    let cluster = Cluster::start("demo", "");
    let originals = originals(&cluster);
    let held = cluster.run(&["--target", "12", "--canary", "2", "--strategy", "serial"]);
    assert_eq!(held.status.code(), Some(3), "{}", text(&held));
    let printed = printed_continue(&held);
    assert!(
        printed.ends_with(&["--phase".to_string(), "replace".to_string()]),
        "{printed:?}"
    );
    let replaced = |c: &Checkpoint| {
        c.plan
            .phases
            .iter()
            .find(|p| p.id == "replace")
            .unwrap()
            .steps
            .iter()
            .filter(|s| s.is_complete())
            .count()
    };
    assert_eq!(replaced(&checkpoint(&cluster)), 0);
    for canary in 1..=2 {
        let go = run_printed(&cluster, &printed);
        assert_eq!(go.status.code(), Some(0), "{}", text(&go));
        let next = cluster.run(&[]);
        if canary == 1 {
            assert_eq!(next.status.code(), Some(3), "{}", text(&next));
            assert_eq!(printed_continue(&next), printed, "the same command again");
            assert_eq!(replaced(&checkpoint(&cluster)), 1, "exactly one canary");
        } else {
            assert_eq!(next.status.code(), Some(0), "{}", text(&next));
        }
    }
    assert_clean_end(&cluster, &originals, 12);
}

#[test]
fn a_drain_canary_holds_the_drain_after_its_agents_and_the_printed_continue_releases_it() {
    let cluster = Cluster::start("demo", "");
    let originals = originals(&cluster);
    let held = cluster.run(&["--target", "12", "--canary", "1"]);
    assert_eq!(held.status.code(), Some(3), "{}", text(&held));
    let printed = printed_continue(&held);
    assert!(
        printed.ends_with(&["--phase".to_string(), "drain".to_string()]),
        "{printed:?}"
    );
    // The canary alone is gone; the drain has not begun.
    let group = cluster.group();
    let gone = originals
        .iter()
        .filter(|id| {
            group
                .instance(id)
                .is_none_or(|i| i.lifecycle_state.is_leaving())
        })
        .count();
    assert_eq!(gone, 1, "{group:?}");
    assert!(checkpoint(&cluster).groups[0].waves.is_empty());
    // A rerun without the continue changes nothing and says the same.
    let again = cluster.run(&[]);
    assert_eq!(again.status.code(), Some(3), "{}", text(&again));
    assert_eq!(printed_continue(&again), printed);
    // `roller status` says held, with the same command.
    let status = cluster
        .roller(&["status", "--env", cluster.env_file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(3), "{}", text(&status));
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("state: held"),
        "{}",
        text(&status)
    );
    // And what the roll was started with, defaults included.
    assert!(
        String::from_utf8_lossy(&status.stdout).contains(
            "on failure: rollback; failure limit 0; CloudWatch alarms: none; Standby: wait; protected: replace"
        ),
        "{}",
        text(&status)
    );
    assert!(
        stderr(&status).contains(&format!("`roller {}`", printed.join(" "))),
        "{}",
        text(&status)
    );
    let go = run_printed(&cluster, &printed);
    assert_eq!(go.status.code(), Some(0), "{}", text(&go));
    let done = cluster.run(&[]);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    assert_clean_end(&cluster, &originals, 12);
}

#[test]
fn allow_unhealthy_on_a_resume_is_recorded_and_honoured_and_a_force_completed_steps_page_resolved()
{
    let hook = Webhook::start();
    let cluster = Cluster::start(
        "hazards",
        "[timeouts]\nhealthy = \"10m\"\nscale_up = \"1h\"\nderegister = \"1h\"\ntask_move = \"1h\"\n[pager]\nwebhook = true\n",
    );
    let originals = originals(&cluster);
    let env = cluster.env_file.to_str().unwrap();
    // The broken app's first move is a failure on the new agents: with
    // --on-failure pause the roll pauses and pages there.
    let paused = cluster
        .roller(&[
            "run",
            "--env",
            env,
            "--target",
            "6",
            "--on-failure",
            "pause",
        ])
        .env("ROLLER_WEBHOOK_URL", &hook.url)
        .output()
        .unwrap();
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    let step = checkpoint(&cluster).pause.unwrap().step;
    let (phase, instance) = step.split_once('/').unwrap();
    // The operator judges the paused step done (its instance is gone)...
    let forced = cluster
        .roller(&[
            "plan",
            "force-complete",
            "--file",
            cluster.checkpoint().to_str().unwrap(),
            "--phase",
            phase,
            "--step",
            instance,
        ])
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced));
    // ...and lets the broken app be for the rest of the roll.
    let resumed = cluster
        .roller(&[
            "run",
            "--env",
            env,
            "--allow-unhealthy",
            "/hazard/never-healthy",
        ])
        .env("ROLLER_WEBHOOK_URL", &hook.url)
        .output()
        .unwrap();
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let pages = hook.bodies();
    assert_eq!(
        pages
            .iter()
            .filter(|p| p.contains("\"event\":\"trigger\""))
            .count(),
        1,
        "{pages:?}"
    );
    assert!(
        pages.iter().any(|p| p.contains("\"event\":\"resolve\"")),
        "the force-completed step's page is resolved: {pages:?}"
    );
    let archived = std::fs::read_dir(cluster.checkpoint().parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".complete.json"))
        .expect("the archived checkpoint");
    let done = Checkpoint::load(&archived).unwrap().unwrap();
    assert_eq!(done.allow_unhealthy, ["/hazard/never-healthy"]);
    assert!(
        done.plan
            .steps()
            .any(|(_, s)| s.message.contains("allowed unhealthy by --allow-unhealthy")),
        "a health wait let the allowed app be"
    );
    let live = cluster.live();
    assert!(originals.iter().all(|id| !live.contains(id)), "{live:?}");
}

#[test]
fn abandon_refuses_another_groups_checkpoint_dry_runs_restores_max_size_as_finish_does_and_resolves_the_page()
 {
    let hook = Webhook::start();
    let cluster = Cluster::start("demo", &format!("{QUICK_PAUSE}[pager]\nwebhook = true\n"));
    // --raise-max: N + K = 25 > MaxSize 24, so MaxSize is raised to 25.
    let paused = cluster
        .roller(&[
            "run",
            "--env",
            cluster.env_file.to_str().unwrap(),
            "--target",
            "13",
            "--raise-max",
        ])
        .env("ROLLER_WEBHOOK_URL", &hook.url)
        .output()
        .unwrap();
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    assert!(
        stderr(&paused).contains("a page went out"),
        "{}",
        text(&paused)
    );
    assert_eq!(cluster.group().max_size, 25);
    let run_id = checkpoint(&cluster).run_id;
    let env = cluster.env_file.to_str().unwrap();

    // Another group's checkpoint, named by --checkpoint: refused, untouched.
    let foreign = cluster.checkpoint().with_file_name("foreign.json");
    let text_of = std::fs::read_to_string(cluster.checkpoint()).unwrap();
    let other = text_of.replace("\"asg\":\"mesos-agents-demo\"", "\"asg\":\"another-asg\"");
    std::fs::write(&foreign, &other).unwrap();
    let refused = cluster
        .roller(&[
            "abandon",
            "--env",
            env,
            "--run-id",
            &run_id,
            "--checkpoint",
            foreign.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        stderr(&refused).contains("belongs to ASG 'another-asg'"),
        "{}",
        text(&refused)
    );
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), other);

    // A dry run says what it would do and does none of it.
    let before = writable(&cluster);
    let dry = cluster
        .roller(&["abandon", "--env", env, "--run-id", &run_id, "--dry-run"])
        .env("ROLLER_WEBHOOK_URL", &hook.url)
        .output()
        .unwrap();
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry));
    let said = String::from_utf8_lossy(&dry.stdout);
    for part in [
        "would:",
        "resume AZRebalance, AlarmNotification, ScheduledActions, InstanceRefresh",
        "restore MaxSize to 24",
        "resolve the roll's open page",
        &format!("remove tag roller:run-id={run_id}"),
    ] {
        assert!(said.contains(part), "{part:?} in {said}");
    }
    assert_eq!(writable(&cluster), before, "a dry run changes nothing");
    assert_eq!(
        std::fs::read_to_string(cluster.checkpoint()).unwrap(),
        text_of
    );

    // The real thing: the finish step's own MaxSize rule (desired is 25,
    // so MaxSize can only come down to 25), said precisely.
    let abandoned = cluster
        .roller(&["abandon", "--env", env, "--run-id", &run_id])
        .env("ROLLER_WEBHOOK_URL", &hook.url)
        .output()
        .unwrap();
    assert_eq!(abandoned.status.code(), Some(0), "{}", text(&abandoned));
    let said = String::from_utf8_lossy(&abandoned.stdout);
    assert!(
        said.contains("done: MaxSize set to 25, not 24: the desired capacity is 25"),
        "{said}"
    );
    assert!(
        said.contains("done: resolved the roll's open page"),
        "{said}"
    );
    let pages = hook.bodies();
    assert!(
        pages.iter().any(|p| p.contains("\"event\":\"resolve\"")),
        "abandon resolves the page: {pages:?}"
    );
    assert!(said.contains("done: tag roller:run-id removed"), "{said}");
    assert!(said.contains("desired capacity left at 25"), "{said}");
    let group = cluster.group();
    assert_eq!(group.max_size, 25);
    assert_eq!(group.desired_capacity, 25);
    assert_eq!(group.tag("roller:run-id"), None);
}

#[test]
fn a_preflight_that_cannot_reach_mesos_or_marathon_is_refused_with_exit_2_and_writes_nothing() {
    let cluster = Cluster::start("demo", "");
    let before = writable(&cluster);
    for (flag, says) in [
        ("--mesos", "preflight cannot read the Mesos agents"),
        ("--marathon", "preflight cannot read Marathon"),
    ] {
        let refused = cluster.run(&["--target", "12", flag, "http://127.0.0.1:9"]);
        assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
        assert!(stderr(&refused).contains(says), "{}", text(&refused));
        assert!(!cluster.checkpoint().exists(), "no checkpoint written");
    }
    assert_eq!(writable(&cluster), before, "nothing changed");
}
