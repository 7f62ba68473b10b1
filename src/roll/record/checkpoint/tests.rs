//! The checkpoint's own tests: time formatting, schema versions and
//! migration, environment differences, the run lock.

use super::*;
use crate::roll::record::kinds::{GroupStep, StepKind};

#[test]
fn utc_formats_known_instants() {
    assert_eq!(utc(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_300_000);
    assert_eq!(utc(at), "2026-11-21T22:26:40Z");
    let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
    assert_eq!(utc(leap), "2000-02-29T00:00:00Z");
}

#[test]
fn a_newer_schema_is_named_as_such_and_garbage_as_corrupt() {
    let path = Path::new("c.json");
    let newer = Checkpoint::parse(path, r#"{"version": 99, "whatever": 1}"#).unwrap_err();
    assert!(
        matches!(newer, CheckpointError::Newer { found: 99, .. }),
        "{newer}"
    );
    let corrupt = Checkpoint::parse(path, "{not json").unwrap_err();
    assert!(
        matches!(corrupt, CheckpointError::Corrupt { .. }),
        "{corrupt}"
    );
    let unversioned = Checkpoint::parse(path, "{}").unwrap_err();
    assert!(unversioned.to_string().contains("version"), "{unversioned}");
}

#[test]
fn a_paused_schema_1_checkpoint_is_migrated_to_typed_steps_and_a_delayed_step() {
    let text = include_str!("v1_paused.json");
    let checkpoint = Checkpoint::parse(Path::new("v1.json"), text).unwrap();
    assert_eq!(checkpoint.version, VERSION);
    // The pause no longer holds the plan: its step reads DELAYED.
    assert!(!checkpoint.plan.interrupted);
    let at = checkpoint.find_step("replace/i-1").unwrap();
    assert_eq!(
        checkpoint.plan.step(at).status,
        crate::plan::Status::Delayed
    );
    assert!(checkpoint.pause.as_ref().unwrap().paged);
    assert_eq!(checkpoint.plan.steps().count(), 9);
    assert!(checkpoint.plan.steps().all(|(_, s)| s.kind.is_some()));
    assert_eq!(
        checkpoint.plan.step(at).kind,
        Some(GroupStep::new(
            GroupIndex(0),
            StepKind::Replace {
                instance: "i-1".to_string()
            }
        ))
    );
    assert_eq!(checkpoint.events[4].kind, EventKind::Operator);
    // Written back, it reads the same as today's schema.
    let again = Checkpoint::parse(
        Path::new("v2.json"),
        std::str::from_utf8(&checkpoint.to_json(Path::new("v2.json")).unwrap()).unwrap(),
    )
    .unwrap();
    assert_eq!(again, checkpoint);
}

#[test]
fn a_schema_1_step_roller_does_not_know_is_refused_by_name() {
    let text = include_str!("v1_paused.json").replace("\"unlock\"", "\"reboot\"");
    let err = Checkpoint::parse(Path::new("v1.json"), &text).unwrap_err();
    assert!(err.to_string().contains("finish/reboot"), "{err}");
}

#[test]
fn event_kinds_are_written_as_their_names() {
    for kind in [
        EventKind::Start,
        EventKind::Intent,
        EventKind::Step,
        EventKind::Stop,
        EventKind::Resume,
        EventKind::Pause,
        EventKind::Paged,
        EventKind::PageFailed,
        EventKind::PageResolved,
        EventKind::Failure,
        EventKind::Terminate,
        EventKind::Surge,
        EventKind::Rebalance,
        EventKind::Operator,
        EventKind::Held,
    ] {
        let json = serde_json::to_value(kind).unwrap();
        assert_eq!(json, serde_json::Value::from(kind.as_str()));
        assert_eq!(serde_json::from_value::<EventKind>(json).unwrap(), kind);
    }
}

#[test]
fn another_region_or_master_is_a_difference_but_their_order_is_not() {
    let then = RecordedEnvironment {
        region: Some("us-east-1".to_string()),
        aws_endpoint_url: None,
        mesos: vec!["http://m1:5050".to_string(), "http://m2:5050/".to_string()],
        marathon: vec!["http://k:8080".to_string()],
        agent_match: "ip".to_string(),
    };
    let mut now = then.clone();
    now.mesos.reverse();
    assert!(then.differences(&now).is_empty());
    now.region = Some("eu-west-1".to_string());
    now.marathon = vec!["http://other:8080".to_string()];
    let found = then.differences(&now);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("eu-west-1"), "{found:?}");
    assert!(found[1].contains("http://other:8080"), "{found:?}");
}

#[test]
fn a_second_lock_on_one_checkpoint_is_refused_until_the_first_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("asg.json");
    let first = RunLock::acquire(&checkpoint).unwrap();
    assert!(matches!(
        RunLock::acquire(&checkpoint),
        Err(RunLockError::Held { .. })
    ));
    assert!(RunLock::is_held(&checkpoint));
    drop(first);
    assert!(!RunLock::is_held(&checkpoint));
    assert!(RunLock::acquire(&checkpoint).is_ok());
}

/// A checkpoint roller wrote (a serial roll midway), as JSON to edit.
fn written() -> serde_json::Value {
    serde_json::from_str(include_str!(
        "../../../../fuzz/seeds/checkpoint/serial-1.json"
    ))
    .unwrap()
}

fn parse_value(value: &serde_json::Value) -> Result<Checkpoint, CheckpointError> {
    Checkpoint::parse(Path::new("c.json"), &value.to_string())
}

#[test]
fn a_checkpoint_roller_wrote_loads() {
    parse_value(&written()).unwrap();
}

// Found by fuzzing (`scripts/fuzz checkpoint`): a checkpoint's plan was
// never checked as a plan, so a dependency on no phase loaded, and the
// phase waited for it forever.
#[test]
fn a_checkpoint_whose_plan_depends_on_a_phase_it_lacks_is_refused() {
    let mut value = written();
    value["plan"]["phases"][1]["depends_on"] = serde_json::json!(["prepar{e"]);
    let err = parse_value(&value).unwrap_err();
    assert_eq!(err.label(), "checkpoint_corrupt");
    assert!(
        err.to_string()
            .contains("its plan is not valid: 'scale-up' depends on 'prepar{e'"),
        "{err}"
    );
}

#[test]
fn a_checkpoint_with_two_steps_of_one_id_is_refused() {
    let mut value = written();
    let first = value["plan"]["phases"][0]["steps"][0]["id"].clone();
    value["plan"]["phases"][0]["steps"][1]["id"] = first;
    let err = parse_value(&value).unwrap_err();
    assert!(
        err.to_string().contains("used by more than one element"),
        "{err}"
    );
}

#[test]
fn a_checkpoint_with_a_step_without_an_id_is_refused() {
    let mut value = written();
    value["plan"]["phases"][0]["steps"][0]["id"] = serde_json::json!("");
    let err = parse_value(&value).unwrap_err();
    assert!(err.to_string().contains("step 'lock' has no id"), "{err}");
}

#[test]
fn a_checkpoint_with_a_canary_phase_that_never_chose_its_canaries_is_refused() {
    let mut value = written();
    let phase = &mut value["plan"]["phases"][2];
    phase["strategy"] = serde_json::json!("serial-canary");
    phase.as_object_mut().unwrap().remove("canary");
    let err = parse_value(&value).unwrap_err();
    assert!(err.to_string().contains("no chosen canary steps"), "{err}");
}

#[test]
fn a_checkpoint_of_a_schema_that_never_existed_is_refused() {
    let mut value = written();
    value["version"] = serde_json::json!(0);
    let err = parse_value(&value).unwrap_err();
    assert_eq!(err.label(), "checkpoint_corrupt");
    assert!(
        err.to_string().contains("schema version 0 does not exist"),
        "{err}"
    );
}

// Found by fuzzing (`scripts/fuzz checkpoint`): a time scale written with
// more digits than an f64 holds was read one unit in the last place off.
// The time scale is a simulator's setting, no longer recorded: an old
// checkpoint's, whatever its digits, is dropped when read, and the
// checkpoint reads the same after a save.
#[test]
fn an_old_checkpoints_time_scale_is_dropped_whatever_its_digits() {
    let digits = "1.06666666666666666666666666666666666666666";
    let text = written()
        .to_string()
        .replace("\"time_scale\":1.0", &format!("\"time_scale\":{digits}"));
    assert!(text.contains(digits), "the seed's time_scale changed");
    let path = Path::new("c.json");
    let loaded = Checkpoint::parse(path, &text).unwrap();
    let saved = loaded.to_json(path).unwrap();
    let saved = std::str::from_utf8(&saved).unwrap();
    assert!(!saved.contains("time_scale"), "{saved}");
    let again = Checkpoint::parse(path, saved).unwrap();
    assert_eq!(again, loaded);
}

/// What the module doc says: every schema from 1 on is read, and a
/// checkpoint is written as `VERSION`, whatever schema it was read as.
#[test]
fn every_older_schema_is_read_and_written_back_as_the_current_one() {
    let v1 = include_str!("v1_paused.json");
    let v2 = written().to_string();
    let v3 = as_schema_3(&two_groups());
    for (schema, text) in [(1, v1.to_string()), (2, v2), (3, v3)] {
        let read: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(read["version"], serde_json::json!(schema));
        let loaded = Checkpoint::parse(Path::new("c.json"), &text)
            .unwrap_or_else(|e| panic!("schema {schema}: {e}"));
        let saved: serde_json::Value =
            serde_json::from_slice(&loaded.to_json(Path::new("c.json")).unwrap()).unwrap();
        assert_eq!(
            saved["version"],
            serde_json::json!(VERSION),
            "schema {schema}"
        );
    }
    assert_eq!(VERSION, 4, "a new schema needs its migration and this test");
}

/// A checkpoint of two groups, as this roller writes it.
fn two_groups() -> Checkpoint {
    let mut one = parse_value(&written()).unwrap();
    let mut other = one.groups[0].clone();
    other.asg = "public".to_string();
    for i in &mut other.instances {
        i.id = format!("{}-public", i.id);
    }
    one.groups.push(other);
    let plans: Vec<_> = one
        .groups
        .iter()
        .map(|g| crate::roll::decide::cluster_plan::GroupPlan {
            asg: &g.asg,
            instances: &g.instances,
            raise_max: false,
            held: false,
        })
        .collect();
    let plan = crate::roll::decide::cluster_plan::build_cluster(
        &plans,
        crate::roll::decide::roll_plan::PlanOptions {
            strategy: crate::roll::decide::roll_plan::RollStrategy::Drain,
            ..Default::default()
        },
    );
    one.plan = plan;
    one.progress.clear();
    one.pause = None;
    one
}

/// `checkpoint` as schema 3 wrote it: no group in the steps' kinds (the
/// group was read off the phase's id), the simulator's time scale in the
/// environment.
fn as_schema_3(checkpoint: &Checkpoint) -> String {
    let mut value: serde_json::Value =
        serde_json::from_slice(&checkpoint.to_json(Path::new("c.json")).unwrap()).unwrap();
    value["version"] = serde_json::json!(3);
    value["environment"]["time_scale"] = serde_json::json!(1.0);
    for phase in value["plan"]["phases"].as_array_mut().unwrap() {
        for step in phase["steps"].as_array_mut().unwrap() {
            step["kind"].as_object_mut().unwrap().remove("group");
        }
    }
    value.to_string()
}

#[test]
fn a_schema_3_cluster_checkpoint_gives_each_step_the_group_its_phase_named() {
    let two = two_groups();
    let migrated = Checkpoint::parse(Path::new("c.json"), &as_schema_3(&two)).unwrap();
    assert_eq!(migrated, two);
    // Both groups have steps: the prefix was read, not defaulted.
    let groups: std::collections::BTreeSet<usize> = migrated
        .plan
        .steps()
        .map(|(_, s)| s.kind.as_ref().unwrap().group.0)
        .collect();
    assert_eq!(groups.into_iter().collect::<Vec<_>>(), [0, 1]);
}

#[test]
fn a_schema_3_phase_naming_a_group_the_checkpoint_does_not_roll_is_refused() {
    let text = as_schema_3(&two_groups()).replace("\"public:drain\"", "\"gone:drain\"");
    let err = Checkpoint::parse(Path::new("c.json"), &text).unwrap_err();
    assert!(
        err.to_string()
            .contains("phase 'gone:drain' names a group the checkpoint does not roll"),
        "{err}"
    );
}

#[test]
fn a_step_acting_on_a_group_the_checkpoint_does_not_hold_is_refused() {
    let mut value: serde_json::Value =
        serde_json::from_slice(&two_groups().to_json(Path::new("c.json")).unwrap()).unwrap();
    value["plan"]["phases"][0]["steps"][0]["kind"]["group"] = serde_json::json!(2);
    let err = parse_value(&value).unwrap_err();
    assert_eq!(err.label(), "checkpoint_corrupt");
    assert!(
        err.to_string()
            .contains("acts on group 2, but the checkpoint rolls 2 group(s)"),
        "{err}"
    );
    value["plan"]["phases"][0]["steps"][0]["kind"]
        .as_object_mut()
        .unwrap()
        .remove("group");
    let err = parse_value(&value).unwrap_err();
    assert!(err.to_string().contains("\"group\""), "{err}");
}

#[test]
fn a_capped_group_asks_for_at_most_its_ceiling_and_expects_what_its_last_batch_set() {
    let mut checkpoint = parse_value(&written()).unwrap();
    let group = &mut checkpoint.groups[0];
    let k = u32::try_from(group.instances.len()).unwrap();
    let uncapped = group.target + k;
    let sent = group.terminated();
    assert_eq!(group.scale_up_desired(), uncapped - sent);
    assert_eq!(group.expected_desired(1), uncapped - 1);
    assert!(uncapped - sent > group.target + 1, "the cap must bind");
    group.surge = Some(super::SurgeCap {
        cap: 1,
        from: "--max-surge 1".to_string(),
        ceiling: group.target + 1,
        batches: k,
        min_healthy_bound: None,
        raised: None,
    });
    // The ceiling, less the terminations with decrement sent since.
    assert_eq!(group.scale_up_desired(), group.target + 1 - sent);
    assert_eq!(group.peak_desired(), group.target + 1);
    // A batch raised it to 7 when 2 terminations had landed: 3 landed
    // now is one decrement since.
    group.surge.as_mut().unwrap().raised = Some(super::Raised {
        batch: 2,
        desired: 7,
        terminated: 2,
    });
    assert_eq!(group.expected_desired(3), 6);
    assert_eq!(group.expected_desired(2), 7);
    // The checkpoint keeps it all.
    let text = checkpoint.to_json(Path::new("c.json")).unwrap();
    let back = Checkpoint::parse(Path::new("c.json"), std::str::from_utf8(&text).unwrap()).unwrap();
    assert_eq!(back.groups[0].surge, checkpoint.groups[0].surge);
}

#[test]
fn a_capped_group_has_its_old_instances_replaced_until_only_the_last_decrements_are_left() {
    let mut checkpoint = parse_value(&written()).unwrap();
    let group = &mut checkpoint.groups[0];
    for i in &mut group.instances {
        i.terminate_sent = false;
    }
    let k = group.instances.len();
    let target = group.target;
    // Uncapped: every termination decrements, as always.
    assert!(!group.replaces_next());
    group.surge = Some(super::SurgeCap {
        cap: 2,
        from: "--max-surge 2".to_string(),
        ceiling: target + 2,
        batches: 6,
        min_healthy_bound: None,
        raised: Some(super::Raised {
            batch: 1,
            desired: target + 2,
            terminated: 0,
        }),
    });
    // The first old instance left without the roll (EC2 reclaimed it):
    // the group replaced it; the roll's own decrements make up for it.
    group.instances[0].terminate_sent = true;
    group.instances[0].reclaimed = true;
    let mut replaced = Vec::new();
    for n in 1..k {
        let replace = group.replaces_next();
        group.instances[n].terminate_sent = true;
        group.instances[n].replaced = replace;
        replaced.push(replace);
    }
    // Replaced while more were left than the 2 decrements to the target,
    // then the last two with a decrement.
    let mut expected = vec![true; k - 3];
    expected.extend([false, false]);
    assert_eq!(replaced, expected);
    assert_eq!(group.terminated(), 2);
    assert_eq!(group.scale_up_desired(), target);
    assert_eq!(group.above_target(), None, "the decrements made up for it");
    // Uncapped, the same reclaimed instance leaves the group one above.
    group.surge = None;
    for i in &mut group.instances[1..] {
        i.replaced = false;
    }
    assert!(
        group
            .above_target()
            .is_some_and(|s| s.contains(&format!("ends at {}", target + 1))),
        "{:?}",
        group.above_target()
    );
    // A replaced termination is written and read back.
    group.instances[1].replaced = true;
    let text = checkpoint.to_json(Path::new("c.json")).unwrap();
    let back = Checkpoint::parse(Path::new("c.json"), std::str::from_utf8(&text).unwrap()).unwrap();
    assert!(back.groups[0].instances[1].replaced);
}

/// Pins issue 32's growth: every wave's kills and every surge's tasks
/// were written on every save for the rest of the roll (2.4 MB a write
/// on `big`).
#[test]
fn a_complete_waves_kills_and_a_done_surges_tasks_are_forgotten_and_open_ones_kept() {
    let text = include_str!("../../../../fuzz/seeds/checkpoint/drain-canary-2.json");
    let mut checkpoint = Checkpoint::parse(Path::new("c.json"), text).unwrap();
    let wave = |step: &str, kills: &[&str]| WaveRecord {
        step: step.to_string(),
        kills: kills.iter().map(|k| k.to_string()).collect(),
        apps: vec!["/web".to_string()],
        sent: true,
    };
    let surge = |app: &str, state: SurgeState| Surge {
        app: app.to_string(),
        instances: 3,
        instance: "wave-1".to_string(),
        task: format!("{app}.1"),
        extra_tasks: vec![format!("{app}.2"), format!("{app}.3")],
        state,
        kill_sent: state == SurgeState::Done,
    };
    let group = &mut checkpoint.groups[0];
    group.waves = vec![wave("wave-1", &["t1", "t2"]), wave("wave-2", &["t3"])];
    group.surges = vec![
        surge("/done", SurgeState::Done),
        surge("/open", SurgeState::Killing),
    ];
    // wave-1 still runs: nothing is forgotten.
    let before = checkpoint.clone();
    checkpoint.forget_finished_moves();
    assert_eq!(checkpoint.groups[0].waves, before.groups[0].waves);

    let at = checkpoint.find_step("drain/wave-1").unwrap();
    checkpoint.plan.step_mut(at).status = crate::plan::Status::Complete;
    checkpoint.forget_finished_moves();
    let group = &checkpoint.groups[0];
    assert!(group.waves[0].kills.is_empty(), "{:?}", group.waves[0]);
    assert_eq!(group.waves[0].apps, ["/web"], "the moved apps stay");
    assert_eq!(
        group.waves[1].kills,
        ["t3"],
        "a wave not complete keeps its kills"
    );
    assert!(group.surges[0].extra_tasks.is_empty());
    assert_eq!(
        group.surges[0].task, "",
        "a done surge's task is not read again"
    );
    assert_eq!(group.surges[0].app, "/done");
    assert_eq!(
        group.surges[1], before.groups[0].surges[1],
        "an open surge is kept whole"
    );
    // What is written reads back the same.
    let json = checkpoint.to_json(Path::new("c.json")).unwrap();
    let again = Checkpoint::parse(Path::new("c.json"), std::str::from_utf8(&json).unwrap());
    assert_eq!(again.unwrap(), checkpoint);
}

/// Issue 32: at 2,000 agents the events were 1.3 MB of every write.
#[test]
fn old_routine_events_are_left_out_of_the_file_but_not_the_latest_of_a_kind_or_any_other_event() {
    let mut checkpoint = parse_value(&written()).unwrap();
    // Written before events were left out: none were.
    assert_eq!(
        (checkpoint.events_dropped, checkpoint.events_in_log),
        (0, 0)
    );
    let event = |kind: EventKind, n: usize| Event {
        at: "2026-01-01T00:00:00Z".to_string(),
        kind,
        message: format!("{kind} {n}"),
        user: None,
        label: None,
    };
    checkpoint.events = vec![
        event(EventKind::Start, 0),
        event(EventKind::Intent, 1),
        event(EventKind::Failure, 2),
        event(EventKind::Step, 3),
        event(EventKind::Intent, 4),
        event(EventKind::Surge, 5),
        // The cut: the log beside the checkpoint has everything before.
        event(EventKind::Intent, 6),
        event(EventKind::Terminate, 7),
    ];
    let (view, in_log) = checkpoint.events_as_written(6);
    let messages: Vec<&str> = view.iter().map(|e| e.message.as_str()).collect();
    // The start and the failure stay; so do the last completion and
    // surge (none after the cut); older intents go.
    assert_eq!(
        messages,
        [
            "start 0",
            "failure 2",
            "step 3",
            "surge 5",
            "intent 6",
            "terminate 7"
        ]
    );
    assert_eq!(in_log, 4);
    assert_eq!(
        checkpoint.events_as_written(0),
        (checkpoint.events.clone(), 0)
    );

    checkpoint.events = view;
    (checkpoint.events_dropped, checkpoint.events_in_log) = (2, 4);
    let json = checkpoint.to_json(Path::new("c.json")).unwrap();
    let back = Checkpoint::parse(Path::new("c.json"), std::str::from_utf8(&json).unwrap());
    assert_eq!(back.unwrap(), checkpoint);
}
