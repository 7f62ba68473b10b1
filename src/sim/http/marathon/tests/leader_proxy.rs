//! A non-leading Marathon as `LeaderProxyFilter` makes it: it forwards
//! every request to the leader and hands back the leader's answer with
//! `X-Marathon-Via`, refuses a request it forwarded before, and with no
//! leader answers 503. The roller's adapter is given only a follower.

use super::*;

/// An adapter that knows only Marathon `index`.
fn client_of(marathons: &Marathons, index: usize) -> MarathonClient {
    client_for(&marathons.urls[index..=index])
}

#[tokio::test]
async fn the_adapter_given_only_a_follower_reads_and_writes_through_the_leader() {
    let marathons = Marathons::start(1.0).await;
    let follower = client_of(&marathons, 1);
    let leader = client_of(&marathons, 0);
    assert_eq!(
        follower.leader().await.expect("leader"),
        Some(marathons.authority(0))
    );
    let through = follower.apps().await.expect("apps");
    let direct = leader.apps().await.expect("apps");
    assert_eq!(through, direct);

    let deployment = follower.scale_app("/ops/metrics", 3).await.expect("scaled");
    let listed = leader.deployments().await.expect("deployments");
    assert_eq!(
        listed.iter().map(|d| &d.id).collect::<Vec<_>>(),
        [&deployment]
    );
    let rollback = follower
        .cancel_deployment(&deployment)
        .await
        .expect("cancelled")
        .expect("a rollback");
    assert_eq!(leader.app("/ops/metrics").await.expect("app").instances, 2);
    assert_ne!(rollback, deployment);
}

#[tokio::test]
async fn a_followers_answer_is_the_leaders_with_the_way_it_came() {
    let marathons = Marathons::start(1.0).await;
    let via = format!("1.1 {}", marathons.authority(2));
    for path in ["/v2/apps", "/v2/info", "/v2/leader", "/ping", "/v2/nope"] {
        let answer = marathons.get(2, path).await;
        assert_eq!(
            answer.headers()["x-marathon-leader"],
            marathons.urls[0].as_str(),
            "{path}"
        );
        assert_eq!(answer.headers()["x-marathon-via"], via.as_str(), "{path}");
        let direct = marathons.get(0, path).await;
        assert_eq!(answer.status(), direct.status(), "{path}");
        assert!(direct.headers().get("x-marathon-via").is_none(), "{path}");
    }
    // `/v2/info` is the leader's: elected, the leader's own host.
    let info = marathons.get_json(2, "/v2/info").await;
    let leader_info = marathons.get_json(0, "/v2/info").await;
    assert_eq!(info["elected"], true);
    assert_eq!(info, leader_info);
}

#[tokio::test]
async fn a_request_a_follower_already_forwarded_is_a_proxying_loop() {
    let marathons = Marathons::start(1.0).await;
    let answer = reqwest::Client::new()
        .get(format!("{}/v2/apps", marathons.urls[1]))
        .header("X-Marathon-Via", format!("1.1 {}", marathons.authority(1)))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 502);
    assert!(
        answer
            .text()
            .await
            .expect("a body")
            .contains("Detected proxying loop.")
    );
    // Another Marathon's mark is no loop for this one.
    let answer = reqwest::Client::new()
        .get(format!("{}/v2/apps", marathons.urls[1]))
        .header("X-Marathon-Via", format!("1.1 {}", marathons.authority(2)))
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 200);
}
