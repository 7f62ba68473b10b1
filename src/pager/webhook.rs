//! A generic JSON webhook: a Slack-compatible `text` line plus the page's
//! fields, for teams that route alerts elsewhere than PagerDuty.

use serde::Serialize;

use crate::http::Secret;
use crate::metrics::System;
use crate::retry::{Backoff, retry};
use crate::roll::ports::pager::{Page, Pager, PagerError};

#[derive(Clone, Debug)]
pub(crate) struct Webhook {
    client: reqwest::Client,
    /// Webhook URLs carry their own credential (Slack's do): a secret.
    url: Secret,
    backoff: Backoff,
}

#[derive(Serialize)]
struct Message<'a> {
    text: String,
    event: &'static str,
    dedup_key: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    severity: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'a std::collections::BTreeMap<String, String>>,
}

impl Webhook {
    pub(crate) fn new(client: reqwest::Client, url: Secret) -> Webhook {
        Webhook {
            client,
            url,
            backoff: Backoff::DEFAULT,
        }
    }

    #[cfg(test)]
    pub(crate) fn with_backoff(mut self, backoff: Backoff) -> Webhook {
        self.backoff = backoff;
        self
    }

    async fn send(&self, action: &'static str, message: &Message<'_>) -> Result<(), PagerError> {
        // A webhook may post a chat message per request: retry only what
        // was certainly not acted upon (refused connections, 429).
        send_json(
            &self.client,
            self.url.expose(),
            message,
            System::Webhook,
            action,
            self.backoff,
            |status| status == 429,
            false,
        )
        .await
    }
}

impl Pager for Webhook {
    async fn trigger(&self, page: &Page) -> Result<(), PagerError> {
        let mut text = format!(
            "[{}] {}",
            page.severity.as_str().to_uppercase(),
            page.summary
        );
        if let Some(command) = page.details.get("resume_command") {
            text.push_str(&format!("\nResume with: {command}"));
        }
        let message = Message {
            text,
            event: "trigger",
            dedup_key: &page.dedup_key,
            severity: Some(page.severity.as_str()),
            source: Some(&page.source),
            details: Some(&page.details),
        };
        self.send("trigger", &message).await
    }

    async fn resolve(&self, dedup_key: &str) -> Result<(), PagerError> {
        let message = Message {
            text: format!("[RESOLVED] {dedup_key}"),
            event: "resolve",
            dedup_key,
            severity: None,
            source: None,
            details: None,
        };
        self.send("resolve", &message).await
    }
}

/// Why one attempt failed, and whether another may be made.
enum Attempt {
    Retry(PagerError),
    Final(PagerError),
}

impl std::fmt::Display for Attempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attempt::Retry(err) | Attempt::Final(err) => write!(f, "{err}"),
        }
    }
}

/// POSTs `body` as JSON with retries. `retry_status` says which HTTP
/// statuses mean "not processed, try again"; `retry_ambiguous` whether a
/// timeout or a dropped connection (which may have been processed) may be
/// retried too. Errors never include the URL, which may hold a secret.
#[allow(clippy::too_many_arguments)]
pub(super) async fn send_json(
    client: &reqwest::Client,
    url: &str,
    body: &impl Serialize,
    system: System,
    action: &'static str,
    backoff: Backoff,
    retry_status: impl Fn(u16) -> bool,
    retry_ambiguous: bool,
) -> Result<(), PagerError> {
    let sink = match system {
        System::PagerDuty => "PagerDuty",
        _ => "the webhook",
    };
    let result = retry(
        backoff,
        |attempt: &Attempt| matches!(attempt, Attempt::Retry(_)),
        || async {
            crate::metrics::call(system);
            let sent = client.post(url).json(body).send().await;
            crate::metrics::answered(system, sent.as_ref().ok().map(|r| r.status().as_u16()));
            let response = match sent {
                Ok(response) => response,
                Err(err) => {
                    let connect = err.is_connect();
                    let error = PagerError::Unreachable {
                        sink,
                        action,
                        reason: describe(err),
                    };
                    return Err(if connect || retry_ambiguous {
                        Attempt::Retry(error)
                    } else {
                        Attempt::Final(error)
                    });
                }
            };
            let status = response.status().as_u16();
            if response.status().is_success() {
                return Ok(());
            }
            let text = response.text().await.unwrap_or_default();
            let error = PagerError::Refused {
                sink,
                action,
                status,
                body: text.chars().take(300).collect(),
            };
            Err(if retry_status(status) {
                Attempt::Retry(error)
            } else {
                Attempt::Final(error)
            })
        },
    )
    .await;
    result.map_err(|attempt| match attempt {
        Attempt::Retry(err) | Attempt::Final(err) => err,
    })
}

/// reqwest's messages name the URL; say what happened without it.
fn describe(err: reqwest::Error) -> String {
    if err.is_timeout() {
        "timed out".to_string()
    } else if err.is_connect() {
        "connection failed".to_string()
    } else {
        err.without_url().to_string()
    }
}
