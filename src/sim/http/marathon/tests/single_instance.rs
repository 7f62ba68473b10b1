//! Single-instance apps as Marathon keeps them: the label
//! `MARATHON_SINGLE_INSTANCE_APP: "true"` (every DC/OS SDK scheduler's)
//! makes a second instance invalid (422, `complyWithSingleInstanceLabelRules`),
//! checked before any deployment's lock; an owner's upgradeStrategy 0/0
//! alone is not Marathon's to enforce. Raw and through roller's adapter.

use super::*;

#[tokio::test(start_paused = true)]
async fn a_second_instance_of_a_single_instance_app_is_refused_as_marathon_refuses_it() {
    let marathons = Marathons(PeerServers::start_on("dcos", 1.0, router).await);
    marathons.advance(60_000);
    let kafka = marathons.get_json(0, "/v2/apps/kafka").await;
    assert_eq!(
        kafka["app"]["labels"]["MARATHON_SINGLE_INSTANCE_APP"],
        "true"
    );
    assert_eq!(kafka["app"]["labels"]["DCOS_SERVICE_NAME"], "kafka");
    assert_eq!(kafka["app"]["upgradeStrategy"]["maximumOverCapacity"], 0.0);

    let (status, body) = marathons
        .send(
            reqwest::Method::PUT,
            "/v2/apps/kafka",
            Some(serde_json::json!({"instances": 2})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["message"], "Object is not valid");
    assert_eq!(body["details"][0]["path"], "/");
    assert_eq!(
        body["details"][0]["errors"][0],
        "Single instance app may only have one instance"
    );
    // Nothing changed: no deployment, still one instance.
    let kafka = marathons.get_json(0, "/v2/apps/kafka").await;
    assert_eq!(kafka["app"]["instances"], 1);
    assert_eq!(kafka["app"]["deployments"], serde_json::json!([]));

    // Through roller's adapter: the app is never to be surged, and the
    // refusal carries Marathon's reason.
    let client = marathons.client();
    let app = client.app("/kafka").await.expect("app");
    assert_eq!(app.no_surge, Some(NoSurge::SingleInstanceLabel));
    let err = client.scale_app("/kafka", 2).await.unwrap_err();
    assert!(
        matches!(&err, MarathonError::Rejected { status: 422, message, .. }
            if message.contains("Single instance app may only have one instance")),
        "{err:?}"
    );
    // Scaling it to one (or to zero) is valid.
    client.scale_app("/kafka", 1).await.expect("one instance");

    // upgradeStrategy 0/0 without the label: Marathon scales it; roller
    // honours the owner's choice by reading it, not Marathon.
    let leader = client.app("/ops/leader").await.expect("app");
    assert_eq!(leader.no_surge, Some(NoSurge::NoOverCapacity));
    client
        .scale_app("/ops/leader", 2)
        .await
        .expect("Marathon allows it");
}
