//! Apps that may never run a second task (Marathon's single-instance
//! label, carried by every DC/OS SDK scheduler, or an owner's
//! upgradeStrategy 0/0) rolled on the `dcos` scenario: each moves by kill
//! and relaunch, never by surge, and its gap is said; and a surge Marathon
//! refuses (422) pauses the roll naming the app and Marathon's reason,
//! with the wave's other surges undone.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use super::in_process::{app_counts, cluster, in_service, roll, roll_to_end, settings};
use crate::marathon::MarathonClient;
use crate::roll::decide::roll_plan::RollStrategy;
use crate::roll::engine::Outcome;
use crate::roll::ports::PortSet;
use crate::roll::ports::auto_scaling::AutoScaling;
use crate::roll::ports::marathon::{
    App, Deployment, KillOutcome, Marathon, MarathonError, QueuedLaunch,
};
use crate::roll::record::checkpoint::{Checkpoint, EventKind};
use crate::roll::record::env::GroupSpec;
use crate::roll::run::RunSettings;
use crate::simulated::SimulatedCluster;

/// The `dcos` scenario's apps that may never run two tasks.
const NO_SECOND_TASK: [&str; 3] = ["/hello-world", "/kafka", "/ops/leader"];

/// The most instances each of `apps` ever had, from every version Marathon
/// stored of it.
fn most_instances_ever(cluster: &SimulatedCluster, apps: &[&str]) -> BTreeMap<String, u32> {
    cluster.sim.world().with(|w| {
        apps.iter()
            .map(|id| {
                let most = w
                    .app_versions(id)
                    .expect("a known app")
                    .into_iter()
                    .filter_map(|v| w.app_at_version(id, v).expect("a known app"))
                    .map(|view| view.instances)
                    .max()
                    .unwrap_or(0);
                (id.to_string(), most)
            })
            .collect()
    })
}

fn intents(done: &Checkpoint) -> Vec<&str> {
    done.events
        .iter()
        .filter(|e| e.kind == EventKind::Intent)
        .map(|e| e.message.as_str())
        .collect()
}

/// Rolls `scenario`'s group `group` (its only one when `None`) with
/// `strategy` and checks the ground truth: complete, every original
/// replaced, every app back at its count, no outage, and each app of
/// `single` never with a second task, moved, down only while relaunched,
/// its relaunch said before it was made.
async fn rolls_without_a_second_task(
    scenario: &str,
    group: Option<&str>,
    strategy: RollStrategy,
    single: &[&str],
) {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster(scenario, dir.path()).await;
    let mut env = cluster.env.clone();
    // The `dcos` scenario's nightly job outlasts the drain: drained after
    // a short wait rather than waited out (`other_tasks.rs` tests that).
    env.timeouts.other_tasks = Duration::from_secs(5 * 60);
    if let Some(name) = group {
        env.groups = vec![GroupSpec::named(name)];
    }
    let originals: HashSet<String> = match group {
        Some(name) => {
            let g = cluster.aws.describe_group(name).await.expect("group");
            g.instances.into_iter().map(|i| i.id).collect()
        }
        None => in_service(&cluster).await,
    };
    let counts = app_counts(&cluster);
    let mut settings = settings(
        &dir.path().join("roll.json"),
        u32::try_from(originals.len()).unwrap(),
        &[],
    );
    settings.request.strategy = Some(strategy);
    let (outcome, done) = roll_to_end(cluster.ports(), &env, settings).await;

    assert!(
        matches!(outcome, Outcome::Complete { .. }),
        "{scenario} {strategy:?}: {outcome:?}"
    );
    let now = in_service(&cluster).await;
    assert!(
        now.is_disjoint(&originals),
        "{scenario} {strategy:?}: an original is left"
    );
    assert_eq!(app_counts(&cluster), counts, "{scenario} {strategy:?}");
    // Never a second task, so never a 422 either (it would have paused).
    for (app, most) in most_instances_ever(&cluster, single) {
        assert_eq!(
            most, 1,
            "{scenario} {strategy:?}: {app} had {most} instances"
        );
    }
    let report = cluster.sim.report();
    assert_eq!(
        report.apps_with_outage,
        0,
        "{scenario} {strategy:?}: {}",
        report.summary()
    );
    for app in report
        .apps
        .iter()
        .filter(|a| single.contains(&a.id.as_str()))
    {
        // Moved (it ran on an old agent), down only while relaunched: its
        // start and first health checks, not a wait of the roll's.
        assert!(app.single_instance, "{}", app.id);
        assert!(
            app.relaunches >= 1,
            "{scenario} {strategy:?}: {} never moved",
            app.id
        );
        assert!(
            app.at_zero_ms > 0 && app.at_zero_ms < 120_000,
            "{scenario} {strategy:?}: {} down for {} ms",
            app.id,
            app.at_zero_ms
        );
    }
    // Each relaunch said before it was made, naming why.
    let said = intents(&done);
    for app in single {
        assert!(
            said.iter().any(|m| m.contains(app)
                && (m.contains("relaunched with no second task") || m.starts_with("relaunch "))),
            "{scenario} {strategy:?}: no intent says {app} is relaunched: {said:#?}"
        );
    }
    cluster.sim.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_drain_moves_single_instance_apps_by_kill_and_relaunch_never_two_tasks() {
    rolls_without_a_second_task("dcos", None, RollStrategy::Drain, &NO_SECOND_TASK).await;
}

#[tokio::test(start_paused = true)]
async fn a_serial_roll_moves_a_single_instance_app_by_kill_and_relaunch() {
    rolls_without_a_second_task(
        "demo-cluster",
        Some("mesos-agents-demo"),
        RollStrategy::Serial,
        &["/hello-world"],
    )
    .await;
}

/// Roller's Marathon adapter with the apps' labels and upgrade strategies
/// hidden from the roll: as if an app were made single-instance after
/// roller read it, Marathon refuses the surge roller plans for it.
struct LabelsHidden<'a>(&'a MarathonClient);

fn hidden(mut app: App) -> App {
    app.labels.clear();
    app.no_surge = None;
    app
}

impl Marathon for LabelsHidden<'_> {
    async fn apps(&self) -> Result<Arc<Vec<App>>, MarathonError> {
        let apps = self.0.apps().await?;
        Ok(Arc::new(apps.iter().cloned().map(hidden).collect()))
    }
    async fn app(&self, id: &str) -> Result<App, MarathonError> {
        self.0.app(id).await.map(hidden)
    }
    async fn deployments(&self) -> Result<Vec<Deployment>, MarathonError> {
        self.0.deployments().await
    }
    async fn launch_queue(&self) -> Result<Vec<QueuedLaunch>, MarathonError> {
        self.0.launch_queue().await
    }
    async fn scale_app(&self, id: &str, instances: u32) -> Result<String, MarathonError> {
        self.0.scale_app(id, instances).await
    }
    async fn follow_deployment(&self, id: &str, timeout: Duration) -> Result<(), MarathonError> {
        self.0.follow_deployment(id, timeout).await
    }
    async fn cancel_deployment(&self, id: &str) -> Result<Option<String>, MarathonError> {
        self.0.cancel_deployment(id).await
    }
    async fn reset_delay(&self, app: &str) -> Result<(), MarathonError> {
        self.0.reset_delay(app).await
    }
    async fn kill_tasks(
        &self,
        task_ids: &[String],
        scale: bool,
    ) -> Result<KillOutcome, MarathonError> {
        self.0.kill_tasks(task_ids, scale).await
    }
}

async fn roll_with_labels_hidden(
    cluster: &SimulatedCluster,
    settings: RunSettings,
) -> (Outcome, Checkpoint) {
    let marathon = LabelsHidden(&cluster.marathon);
    let ports = PortSet {
        aws: &cluster.aws,
        mesos: &cluster.mesos,
        marathon: &marathon,
        pager: &cluster.pager,
        services: &cluster.services,
    };
    roll_to_end(ports, &cluster.env, settings).await
}

#[tokio::test(start_paused = true)]
async fn a_surge_marathon_refuses_pauses_naming_the_app_with_the_waves_surges_undone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = cluster("dcos", dir.path()).await;
    let counts = app_counts(&cluster);
    let target = u32::try_from(in_service(&cluster).await.len()).unwrap();
    let path = dir.path().join("dcos.json");
    let mut first = settings(&path, target, &[]);
    first.request.strategy = Some(RollStrategy::Drain);

    let (outcome, paused) = roll_with_labels_hidden(&cluster, first).await;

    let Outcome::Paused { step, reason, .. } = outcome else {
        panic!("expected a pause: {outcome:?}");
    };
    assert!(step.starts_with("drain/wave-"), "{step}");
    assert!(
        reason.contains("Marathon refused to scale /hello-world to 2")
            || reason.contains("Marathon refused to scale /kafka to 2"),
        "{reason}"
    );
    assert!(
        reason.contains("Single instance app may only have one instance"),
        "{reason}"
    );
    assert!(
        reason.contains("MARATHON_SINGLE_INSTANCE_APP"),
        "the way out: {reason}"
    );
    // No app left scaled up: the wave's other surges were set back.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let now = app_counts(&cluster);
    let above: Vec<_> = now.iter().filter(|(app, n)| **n > counts[*app]).collect();
    assert!(above.is_empty(), "apps left surged: {above:?}");
    assert!(
        paused.groups[0].open_surges().next().is_none(),
        "{:?}",
        paused.groups[0].surges
    );
    for (app, most) in most_instances_ever(&cluster, &["/hello-world", "/kafka"]) {
        assert_eq!(most, 1, "{app} had {most} instances");
    }

    // Rerun with Marathon's labels read: it completes, without a surge of
    // a single-instance app.
    let mut resume = settings(&path, target, &[]);
    resume.request.target = None;
    resume.request.strategy = None;
    let (outcome, _, _) = roll(&cluster, resume).await;
    assert!(matches!(outcome, Outcome::Complete { .. }), "{outcome:?}");
    assert_eq!(app_counts(&cluster), counts);
    let report = cluster.sim.report();
    assert_eq!(report.apps_with_outage, 0, "{}", report.summary());
    cluster.sim.shutdown().await;
}
