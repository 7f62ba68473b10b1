//! No secret leaves the process except where it belongs: a roll that
//! pauses and pages through PagerDuty and a webhook, then one whose pager
//! cannot be reached, with every secret set to a value that cannot occur
//! by chance; none may appear in any output, the checkpoint, its lock, or
//! the webhook's page. The PagerDuty routing key goes to PagerDuty only,
//! as the Events v2 body's `routing_key`.

use super::cluster::{Cluster, Webhook, files_in, text};

const ROUTING_KEY: &str = "R0UT1NGKEYsecret5f3a9";
const WEBHOOK_TOKEN: &str = "W3BH00Ktokensecret77c1";
const AWS_KEY_ID: &str = "AKIASECRETID4b2e";
const AWS_SECRET: &str = "AWSSECRETvalue0d9b81";

fn secrets() -> [&'static str; 4] {
    [ROUTING_KEY, WEBHOOK_TOKEN, AWS_KEY_ID, AWS_SECRET]
}

fn assert_no_secret(what: &str, text: &str) {
    for secret in secrets() {
        assert!(!text.contains(secret), "{what} carries a secret:\n{text}");
    }
}

#[test]
fn no_secret_appears_in_outputs_checkpoint_pages_or_errors() {
    let webhook = Webhook::start();
    let pagerduty = Webhook::start();
    let cluster = Cluster::start(
        "demo",
        &format!(
            "[timeouts]\nscale_up = 1\nderegister = \"1h\"\nhealthy = \"1h\"\ntask_move = \"1h\"\n\
             [pager]\nwebhook = true\npagerduty = true\npagerduty_events_url = \"{}\"\n",
            pagerduty.url
        ),
    );
    let with_secrets = |args: &[&str], webhook_url: &str| {
        cluster
            .roller(args)
            // A rerun must pause again, whenever the new agents register:
            // the first move's wait times out.
            .env("ROLLER_TIMEOUTS_TASK_MOVE", "1")
            .env("ROLLER_PAGERDUTY_ROUTING_KEY", ROUTING_KEY)
            .env("ROLLER_WEBHOOK_URL", webhook_url)
            .env("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
            .env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
            .output()
            .unwrap()
    };
    let env = cluster.env_file.to_str().unwrap().to_string();
    let hook_url = format!("{}?token={WEBHOOK_TOKEN}", webhook.url);

    // A pause: both pages go out.
    let paused = with_secrets(&["run", "--env", &env, "--target", "12"], &hook_url);
    assert_eq!(paused.status.code(), Some(3), "{}", text(&paused));
    assert_no_secret("the paused run's output", &text(&paused));
    let hooked = webhook.bodies();
    assert_eq!(hooked.len(), 1, "{hooked:?}");
    assert_no_secret("the webhook's page", &hooked[0]);
    let paged = pagerduty.bodies();
    assert_eq!(paged.len(), 1, "{paged:?}");
    let page: serde_json::Value = serde_json::from_str(&paged[0]).unwrap();
    assert_eq!(page["routing_key"], ROUTING_KEY, "{page}");
    let mut rest = page.clone();
    rest.as_object_mut().unwrap().remove("routing_key");
    assert_no_secret(
        "the PagerDuty page beside its routing key",
        &rest.to_string(),
    );

    // Status, both ways, and a rerun whose pagers cannot be reached: the
    // error says so without the URL's secret.
    for args in [
        vec!["status", "--env", &env],
        vec!["status", "--env", &env, "--json"],
    ] {
        let shown = with_secrets(&args, &hook_url);
        assert_no_secret("roller status", &text(&shown));
    }
    let unreachable = format!("http://127.0.0.1:9/hook?token={WEBHOOK_TOKEN}");
    let again = with_secrets(&["run", "--env", &env], &unreachable);
    assert_eq!(again.status.code(), Some(3), "{}", text(&again));
    let said = text(&again);
    assert!(said.contains("did not go out"), "{said}");
    assert_no_secret("a rerun whose webhook is unreachable", &said);

    // Everything written beside the checkpoint.
    let dir = cluster.dir.path().join("checkpoints");
    let files = files_in(&dir);
    assert!(files.len() >= 2, "{files:?}");
    for file in files {
        let bytes = std::fs::read(dir.join(&file)).unwrap();
        assert_no_secret(&file, &String::from_utf8_lossy(&bytes));
    }
}
