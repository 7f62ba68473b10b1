//! The bus misses nothing: whatever a client of `/v2/apps` could see
//! change, an event was published for, through scales, kills, failing
//! checks, bad images, lost agents and cancelled deployments.

use crate::sim::scenario::Scenario;
use crate::sim::world::{BadImage, Faults, ImageEffect, SimTime, World};

/// What `/v2/apps` (tasks, counts, deployments, last failure embedded)
/// shows of each app, but for timestamps, on which Marathon's bus is
/// silent (a check's `lastSuccess` moves without an event).
fn visible(w: &World) -> Vec<String> {
    w.apps(true)
        .iter()
        .map(|app| {
            let tasks: Vec<String> = app
                .tasks
                .iter()
                .flatten()
                .map(|t| {
                    let checks: Vec<(bool, u32)> = t
                        .health_check_results
                        .iter()
                        .map(|r| (r.alive, r.consecutive_failures))
                        .collect();
                    format!("{} {} {} {:?}", t.id, t.slave_id, t.state, checks)
                })
                .collect();
            format!(
                "{} i{} s{} r{} h{} u{} d{:?} v{} f{:?} {:?}",
                app.id,
                app.instances,
                app.tasks_staged,
                app.tasks_running,
                app.tasks_healthy,
                app.tasks_unhealthy,
                app.deployments,
                app.version_unix_ms,
                app.last_task_failure.as_ref().map(|f| &f.task_id),
                tasks
            )
        })
        .collect()
}

/// Runs `world` for `secs` simulated seconds in half-second steps; each
/// step that changed what `/v2/apps` shows must have published an event.
/// Returns how many steps changed something.
fn run_checked(w: &mut World, secs: u64, seen: &mut Vec<String>, what: &str) -> usize {
    let mut changed = 0;
    for _ in 0..secs * 2 {
        let before = w.marathon_event_seq();
        w.advance_by_ms(500);
        changed += check(w, before, seen, what);
    }
    changed
}

/// After an action: if `/v2/apps` changed, an event was published.
fn check(w: &World, before: u64, seen: &mut Vec<String>, what: &str) -> usize {
    let now = visible(w);
    if now == *seen {
        return 0;
    }
    assert!(
        w.marathon_event_seq() > before,
        "{what} at {:?}: /v2/apps changed with no event:\n{}",
        w.now(),
        now.iter()
            .zip(seen.iter())
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("  was {b}\n  now {a}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    *seen = now;
    1
}

#[test]
fn every_change_to_the_apps_is_published() {
    let scenario = Scenario::builtin("demo")
        .expect("embedded")
        .expect("parses");
    let mut w = World::new(&scenario);
    w.advance_to(SimTime::from_secs(1));
    w.listen_to_marathon("test");
    let mut seen = visible(&w);
    let apps = w.apps(true);
    let checked: Vec<String> = apps
        .iter()
        .filter(|a| !a.health_checks.is_empty())
        .map(|a| a.id.clone())
        .collect();
    assert!(checked.len() >= 2, "demo has apps with checks");
    let mut changes = 0;

    // A scale up and its deployment to the end.
    let before = w.marathon_event_seq();
    let target = apps[0].instances + 2;
    w.update_app_instances(&apps[0].id, target, false)
        .expect("scaled");
    changes += check(&w, before, &mut seen, "scale up");
    changes += run_checked(&mut w, 240, &mut seen, "scale up");

    // Kills, replaced and scaled away.
    let tasks = w.apps(true);
    let replaced = tasks[1].tasks.as_ref().expect("embedded")[0].id.clone();
    let scaled = tasks[2].tasks.as_ref().expect("embedded")[0].id.clone();
    let before = w.marathon_event_seq();
    w.kill_tasks(&[replaced], false);
    w.kill_tasks(&[scaled], true);
    changes += check(&w, before, &mut seen, "kills");
    changes += run_checked(&mut w, 240, &mut seen, "kills");

    // Checks failing on one app, relaunches never healthy on another.
    let before = w.marathon_event_seq();
    w.set_faults(Faults {
        failing_health_checks: vec![checked[0].clone()],
        never_healthy_apps: vec![checked[1].clone()],
        ..Faults::default()
    })
    .expect("faults");
    changes += check(&w, before, &mut seen, "faults on");
    let victim = w.apps(true)[3].tasks.as_ref().expect("embedded")[0]
        .id
        .clone();
    let before = w.marathon_event_seq();
    w.kill_tasks(&[victim], false);
    changes += check(&w, before, &mut seen, "a kill under the faults");
    changes += run_checked(&mut w, 300, &mut seen, "failing checks");
    let before = w.marathon_event_seq();
    w.set_faults(Faults::default()).expect("faults off");
    changes += check(&w, before, &mut seen, "faults off");
    changes += run_checked(&mut w, 300, &mut seen, "recovery");

    // An instance terminated under its agent: its tasks are lost and
    // relaunched.
    let group = w.describe_groups(&[]).remove(0);
    let instance = group.instances[0].instance_id.clone();
    let before = w.marathon_event_seq();
    w.terminate_instance(&instance, false).expect("terminated");
    changes += check(&w, before, &mut seen, "terminate");
    changes += run_checked(&mut w, 400, &mut seen, "lost agent");

    // A scale cancelled half-way, and one forced over another.
    let app = w.apps(false)[4].clone();
    let before = w.marathon_event_seq();
    let id = w
        .update_app_instances(&app.id, app.instances + 3, false)
        .expect("scaled");
    changes += check(&w, before, &mut seen, "second scale");
    changes += run_checked(&mut w, 2, &mut seen, "second scale");
    let before = w.marathon_event_seq();
    w.cancel_deployment(&id, false).expect("cancelled");
    changes += check(&w, before, &mut seen, "cancel");
    let before = w.marathon_event_seq();
    w.update_app_instances(&app.id, app.instances + 1, true)
        .expect("forced");
    changes += check(&w, before, &mut seen, "forced scale");
    changes += run_checked(&mut w, 300, &mut seen, "after cancel");

    // A bad image on every agent: relaunched tasks crash (TASK_FAILED,
    // the app's last failure) or never pass a check.
    let version = group.instances[1].launch_template.version.clone();
    for effect in [ImageEffect::Crash, ImageEffect::Unhealthy] {
        let before = w.marathon_event_seq();
        w.set_faults(Faults {
            bad_image: vec![BadImage {
                version: version.clone(),
                effect,
                group: None,
            }],
            ..Faults::default()
        })
        .expect("bad image");
        changes += check(&w, before, &mut seen, "bad image");
        let apps = w.apps(true);
        let victims: Vec<String> = apps
            .iter()
            .filter_map(|a| a.tasks.as_ref()?.first().map(|t| t.id.clone()))
            .take(4)
            .collect();
        let before = w.marathon_event_seq();
        w.kill_tasks(&victims, false);
        changes += check(&w, before, &mut seen, "kills on a bad image");
        changes += run_checked(&mut w, 300, &mut seen, "bad image");
    }
    assert!(changes > 20, "the run changed the apps often: {changes}");
}

fn an_event() -> super::BusEvent {
    super::BusEvent {
        at_unix_ms: 0,
        kind: super::BusKind::Stream {
            attached: true,
            remote_address: String::new(),
        },
    }
}

#[test]
fn a_lone_streams_events_go_once_read_and_a_stream_left_behind_is_told() {
    use super::{Bus, KEEP, Read};
    let mut bus = Bus::default();
    bus.publish(an_event());
    assert_eq!(bus.next(), 0, "nothing is kept for nobody");
    let lone = bus.listen();
    for _ in 0..3 {
        bus.publish(an_event());
    }
    assert_eq!(bus.read(lone), Read::Events(vec![an_event(); 3], lone + 3));
    assert!(bus.kept.is_empty(), "read by the only stream: dropped");
    let other = bus.listen();
    for _ in 0..=KEEP {
        bus.publish(an_event());
    }
    assert_eq!(bus.read(lone + 3), Read::Behind);
    match bus.read(other + 1) {
        Read::Events(events, next) => {
            assert_eq!(events.len(), KEEP);
            assert_eq!(next, other + 1 + KEEP as u64);
        }
        Read::Behind => panic!("the latest KEEP are kept"),
    }
}
