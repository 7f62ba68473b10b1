//! DC/OS SDK data services rolled on the `dcos` scenario (a three-pod
//! `hello-world` and a five-broker Kafka-like service beside msr-55's
//! apps): each pod on an old agent replaced through its service's v1 API,
//! one pod of a service at a time, checked against the simulator's ground
//! truth (where each pod runs, how many of a service were away at once).

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use super::in_process::{app_counts, in_service, roll_to_end, settings};
use crate::roll::engine::Outcome;
use crate::roll::record::checkpoint::{Checkpoint, EventKind};
use crate::roll::run::run;
use crate::sim::Scenario;
use crate::simulated::SimulatedCluster;

/// `dcos` as shipped, changed by `edit`, booted and settled.
async fn dcos(dir: &std::path::Path, edit: impl FnOnce(&mut Scenario)) -> SimulatedCluster {
    let mut scenario = Scenario::load("dcos").expect("built-in scenario");
    edit(&mut scenario);
    let cluster = SimulatedCluster::start(&scenario, 1.0, dir.to_path_buf())
        .await
        .expect("simulated cluster");
    tokio::time::sleep(Duration::from_secs(300)).await;
    cluster
}

/// Rolls every agent of `cluster`, the nightly job drained after a short
/// wait.
async fn roll_all(cluster: &SimulatedCluster, dir: &std::path::Path) -> (Outcome, Checkpoint) {
    let mut env = cluster.env.clone();
    env.timeouts.other_tasks = Duration::from_secs(5 * 60);
    let n = in_service(cluster).await.len();
    let settings = settings(&dir.join("roll.json"), u32::try_from(n).unwrap(), &[]);
    roll_to_end(cluster.ports(), &env, settings).await
}

/// Each pod's (service, pod) → the instance it runs on, from the world.
fn pods_on(cluster: &SimulatedCluster) -> BTreeMap<(String, String), Option<String>> {
    cluster.sim.world().with(|w| {
        w.pods()
            .into_iter()
            .map(|p| ((p.service.clone(), p.pod.clone()), p.instance_id.clone()))
            .collect()
    })
}

#[tokio::test(start_paused = true)]
async fn a_drain_replaces_every_pod_once_one_pod_of_a_service_at_a_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = dcos(dir.path(), |_| {}).await;
    let originals = in_service(&cluster).await;
    let counts = app_counts(&cluster);
    let before = pods_on(&cluster);
    assert_eq!(before.len(), 8, "three hello pods and five brokers");

    let (outcome, done) = roll_all(&cluster, dir.path()).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert!(in_service(&cluster).await.is_disjoint(&originals));
    assert_eq!(app_counts(&cluster), counts);
    // Every pod runs, on a new instance.
    let after = pods_on(&cluster);
    for (pod, instance) in &after {
        let instance = instance
            .as_deref()
            .unwrap_or_else(|| panic!("{pod:?} runs nowhere"));
        assert!(!originals.contains(instance), "{pod:?} still on {instance}");
    }
    let running = cluster
        .sim
        .world()
        .with(|w| w.pods().iter().all(|p| p.running()));
    assert!(running, "every pod running at the end");
    // Each pod replaced once, by roller, recorded and seen done.
    let replaces = &done.services.replaces;
    assert_eq!(replaces.len(), before.len(), "{replaces:#?}");
    let distinct: HashSet<(&str, &str)> = replaces
        .iter()
        .map(|r| (r.service.as_str(), r.pod.as_str()))
        .collect();
    assert_eq!(distinct.len(), replaces.len(), "a pod replaced twice");
    assert!(replaces.iter().all(|r| r.sent && r.done_unix_ms.is_some()));
    // Never two pods of one service away at once; none away now.
    let report = cluster.sim.report();
    assert_eq!(report.services.len(), 2, "{:?}", report.services);
    for s in &report.services {
        assert!(s.max_pods_not_running <= 1, "{s:?}");
        assert_eq!(s.pods_not_running_now, 0, "{s:?}");
    }
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    // Said before it was done, and the old agents deactivated first.
    let intents: Vec<&str> = done
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Intent)
        .map(|e| e.message.as_str())
        .collect();
    let first_replace = intents.iter().position(|m| m.starts_with("replace pod"));
    let deactivate = intents
        .iter()
        .position(|m| m.starts_with("DEACTIVATE_AGENT"));
    assert!(
        matches!((deactivate, first_replace), (Some(d), Some(r)) if d < r),
        "{intents:#?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_service_that_is_deploying_loses_no_pod_until_its_deploy_is_complete() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Kafka's deploy plan runs for the first 40 minutes of the world.
    let deploy_s = 2400.0;
    let cluster = dcos(dir.path(), |s| {
        for service in &mut s.services {
            if service.name == "kafka" {
                service.deploy_s = deploy_s;
            }
        }
    })
    .await;
    // The deploy runs from when the world placed the service, on the
    // world's clock; roller's clock starts from the wall clock with the
    // same pace, so the two differ by what they read now.
    let (world_now, deployed) = cluster.sim.world().with(|w| {
        let now = w.unix_ms(w.now());
        (now, w.deploy_done_unix_ms("kafka").expect("kafka deploys"))
    });
    let roller_now = crate::roll::engine::clock::RollClock::new(1.0).now_unix_ms();
    let deployed = deployed - world_now + roller_now;

    let (outcome, done) = roll_all(&cluster, dir.path()).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let kafka: Vec<u64> = done
        .services
        .replaces
        .iter()
        .filter(|r| r.service == "kafka")
        .map(|r| r.decided_unix_ms)
        .collect();
    assert_eq!(kafka.len(), 5);
    assert!(
        kafka.iter().all(|&t| t >= deployed),
        "a broker replaced while kafka deployed: {kafka:?} (deployed at {deployed})"
    );
    let waited = done
        .events
        .iter()
        .any(|e| e.message.contains("kafka's deploy plan is IN_PROGRESS"));
    assert!(waited, "the wait was said");
}

#[tokio::test(start_paused = true)]
async fn without_a_route_to_a_service_the_roll_is_refused_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = dcos(dir.path(), |_| {}).await;
    let mut env = cluster.env.clone();
    env.dcos_url = None;
    let services = crate::dcos::ServicesClient::new(None, &[], &Default::default()).unwrap();
    let ports = crate::roll::ports::PortSet {
        aws: &cluster.aws,
        mesos: &cluster.mesos,
        marathon: &cluster.marathon,
        pager: &cluster.pager,
        services: &services,
    };
    let n = in_service(&cluster).await.len();
    let settings = settings(
        &dir.path().join("roll.json"),
        u32::try_from(n).unwrap(),
        &[],
    );
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);

    let Err(err) = run(ports, &env, settings, stop, Box::new(|_: &Checkpoint| {})).await else {
        panic!("the roll was not refused");
    };

    assert_eq!(err.label(), "refused", "{err}");
    let message = err.to_string();
    assert!(
        message.contains("hello-world") || message.contains("kafka"),
        "{message}"
    );
    assert!(message.contains("dcos_url"), "{message}");
    assert!(!dir.path().join("roll.json").exists(), "nothing recorded");
}

/// An abandon leaves no old agent deactivated: Mesos would never offer
/// its resources again (pods, job runs and Marathon's tasks all need
/// offers), and nothing but REACTIVATE_AGENT brings it back.
#[tokio::test(start_paused = true)]
async fn an_abandoned_roll_reactivates_the_old_agents_it_deactivated() {
    use crate::roll::record::kinds::GroupIndex;

    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = dcos(dir.path(), |_| {}).await;
    let n = u32::try_from(in_service(&cluster).await.len()).unwrap();
    let path = dir.path().join("roll.json");
    let hit = super::drain::roll_until(&cluster, settings(&path, n, &[]), |c| {
        c.services.replaces.iter().any(|r| r.sent)
    })
    .await;
    assert!(hit, "no pod was replaced");
    let deactivated = || {
        cluster
            .sim
            .world()
            .with(|w| w.agents().iter().filter(|a| a.deactivated).count())
    };
    assert!(deactivated() > 0, "no agent deactivated before the abandon");

    let checkpoint = Checkpoint::load(&path).unwrap().expect("the checkpoint");
    let dry = crate::roll::abandon::plan_of(&checkpoint, &[GroupIndex(0)]);
    assert!(
        dry.iter()
            .any(|l| l.starts_with("reactivate the old agents")),
        "{dry:#?}"
    );
    let abandoned = super::drain::abandon_first_group(&cluster, &path, checkpoint).await;

    assert_eq!(deactivated(), 0, "{:#?}", abandoned.lines);
    assert!(
        abandoned
            .lines
            .iter()
            .any(|l| l.starts_with("reactivated ")),
        "{:#?}",
        abandoned.lines
    );
}

/// Killed right after a replace's intent (before its POST, or before its
/// answer is known), and right after its answer (before the pod is back):
/// the resume finishes the roll, and the service's own count of replace
/// calls says every pod was replaced exactly once.
async fn killed_around_a_replace(sent: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = dcos(dir.path(), |_| {}).await;
    let n = u32::try_from(in_service(&cluster).await.len()).unwrap();
    let path = dir.path().join("roll.json");
    let hit = super::drain::roll_until(&cluster, settings(&path, n, &[]), move |c| {
        c.services
            .replaces
            .iter()
            .any(|r| r.sent == sent && r.done_unix_ms.is_none())
    })
    .await;
    assert!(hit, "the kill point never came");

    let mut env = cluster.env.clone();
    env.timeouts.other_tasks = Duration::from_secs(5 * 60);
    let mut resume = settings(&path, n, &[]);
    resume.request.target = None;
    let (outcome, done) = roll_to_end(cluster.ports(), &env, resume).await;

    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    let report = cluster.sim.report();
    assert_eq!(report.services.len(), 2);
    for s in &report.services {
        assert_eq!(
            (
                s.replaces,
                s.most_replaces_of_one_pod,
                s.pods_not_running_now
            ),
            (s.pods, 1, 0),
            "{}: {s:?}\n{:#?}",
            s.name,
            done.services.replaces
        );
        assert!(s.max_pods_not_running <= 1, "{s:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_kill_between_a_replaces_intent_and_its_answer_replaces_no_pod_twice() {
    killed_around_a_replace(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_kill_after_a_replace_was_sent_replaces_no_pod_twice() {
    killed_around_a_replace(true).await;
}
