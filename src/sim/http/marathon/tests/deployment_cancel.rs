//! `DELETE /v2/deployments/{id}` as Marathon's `DeploymentsResource`
//! answers it, driven through the roller's real adapter
//! (`cancel_deployment`) and raw: without `force` a rollback deployment
//! (200, `{"version", "deploymentId"}`), with `force` 202 and no body, an
//! unknown id 404 `DeploymentPlan <id> does not exist`.

use super::*;
use crate::sim::world::Faults;

/// `/web/frontend` (4 instances, health-checked) scaled to 6 while its new
/// tasks can never become healthy: a surge's scale-up that will not end by
/// itself. Returns the deployment's id.
async fn a_stuck_scale_up(marathons: &Marathons, client: &MarathonClient) -> String {
    marathons.world.with(|w| {
        w.set_faults(Faults {
            never_healthy_apps: vec!["/web/frontend".into()],
            ..Faults::default()
        })
        .expect("a known app")
    });
    let deployment = client.scale_app("/web/frontend", 6).await.expect("scaled");
    // Past the new tasks' start, into their checks' failures: they run,
    // not healthy, and the deployment is still there.
    marathons.advance(75_000);
    let app = client.app("/web/frontend").await.expect("app");
    assert_eq!(app.instances, 6);
    assert_eq!(app.deployments, vec![deployment.clone()]);
    assert!(app.tasks_healthy < 6, "{app:?}");
    deployment
}

#[tokio::test]
async fn cancelling_a_scale_up_whose_tasks_never_become_healthy_rolls_the_app_back() {
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    let stuck = a_stuck_scale_up(&marathons, &client).await;

    let rollback = client
        .cancel_deployment(&stuck)
        .await
        .expect("cancelled")
        .expect("a rollback deployment");
    assert_ne!(rollback, stuck);
    let app = client.app("/web/frontend").await.expect("app");
    assert_eq!(app.instances, 4, "back to the instances before the surge");
    let listed: Vec<String> = client
        .deployments()
        .await
        .expect("deployments")
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(listed, vec![rollback.clone()], "the rollback replaced it");

    // The surplus tasks are killed as a scale-down kills (the unhealthy
    // new ones, not the healthy originals); once they are gone the
    // rollback is done.
    marathons.advance(30_000);
    assert!(client.deployments().await.expect("deployments").is_empty());
    let app = client.app("/web/frontend").await.expect("app");
    assert_eq!(
        (app.instances, app.tasks_running, app.tasks_healthy),
        (4, 4, 4)
    );
    // The cancelled deployment is no longer there to cancel.
    assert_eq!(
        client.cancel_deployment(&stuck).await.expect("an answer"),
        None
    );
}

#[tokio::test]
async fn the_rollback_answer_is_a_deployment_result_with_marathons_header() {
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    let stuck = a_stuck_scale_up(&marathons, &client).await;
    let answer = reqwest::Client::new()
        .delete(format!("{}/v2/deployments/{stuck}", marathons.urls[0]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 200);
    let rollback = answer.headers()["marathon-deployment-id"]
        .to_str()
        .expect("text")
        .to_string();
    let body: Value = answer.json().await.expect("JSON");
    assert_eq!(
        keys(&body),
        BTreeSet::from(["deploymentId".to_string(), "version".to_string()])
    );
    assert_eq!(body["deploymentId"], rollback.as_str());
    // The rollback is a new version of the app, with the old count.
    let versions = marathons
        .get_json(0, "/v2/apps/web/frontend/versions")
        .await;
    assert_eq!(versions["versions"][0], body["version"]);
}

#[tokio::test]
async fn a_forced_cancel_drops_the_deployment_and_rolls_nothing_back() {
    let marathons = Marathons::start(1.0).await;
    let client = marathons.client();
    let stuck = a_stuck_scale_up(&marathons, &client).await;
    let answer = reqwest::Client::new()
        .delete(format!(
            "{}/v2/deployments/{stuck}?force=true",
            marathons.urls[0]
        ))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 202);
    assert!(answer.bytes().await.expect("a body").is_empty());
    assert!(client.deployments().await.expect("deployments").is_empty());
    let app = client.app("/web/frontend").await.expect("app");
    assert_eq!(app.instances, 6, "no rollback: the target stays");
    assert!(app.deployments.is_empty());
}

#[tokio::test]
async fn an_unknown_deployment_is_marathons_404_and_none_for_the_adapter() {
    let marathons = Marathons::start(1.0).await;
    let id = "5ed4c0c5-9ff8-4a6f-a0cd-f57f59a34b43";
    let answer = reqwest::Client::new()
        .delete(format!("{}/v2/deployments/{id}", marathons.urls[1]))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 404);
    let body: Value = answer.json().await.expect("JSON");
    assert_eq!(
        body["message"],
        format!("DeploymentPlan {id} does not exist").as_str()
    );
    let client = marathons.client();
    assert_eq!(client.cancel_deployment(id).await.expect("an answer"), None);
    // Marathon serves no GET of one deployment.
    let get = marathons.get(0, &format!("/v2/deployments/{id}")).await;
    assert_eq!(get.status(), 405);
}
