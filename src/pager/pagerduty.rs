//! PagerDuty Events API v2: `trigger` and `resolve` with a stable
//! `dedup_key`, so a page repeated by a rerun does not page twice.

use serde::Serialize;

use super::webhook::send_json;
use crate::http::{HttpConfigError, Secret};
use crate::metrics::System;
use crate::retry::Backoff;
use crate::roll::ports::pager::{Page, Pager, PagerError};

pub(crate) const DEFAULT_EVENTS_URL: &str = "https://events.pagerduty.com/v2/enqueue";

#[derive(Clone, Debug)]
pub(crate) struct PagerDuty {
    client: reqwest::Client,
    events_url: String,
    routing_key: Secret,
    backoff: Backoff,
}

#[derive(Serialize)]
struct Event<'a> {
    routing_key: &'a str,
    event_action: &'static str,
    dedup_key: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<Payload<'a>>,
}

#[derive(Serialize)]
struct Payload<'a> {
    summary: &'a str,
    source: &'a str,
    severity: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    component: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    class: Option<&'a str>,
    custom_details: &'a std::collections::BTreeMap<String, String>,
}

/// PagerDuty truncates a summary at 1024 characters; cut it ourselves so the
/// end we keep is the beginning a human reads.
const MAX_SUMMARY: usize = 1024;

impl PagerDuty {
    pub(crate) fn new(
        client: reqwest::Client,
        events_url: impl Into<String>,
        routing_key: Secret,
    ) -> PagerDuty {
        PagerDuty {
            client,
            events_url: events_url.into(),
            routing_key,
            backoff: Backoff::DEFAULT,
        }
    }

    /// The routing key from `ROLLER_PAGERDUTY_ROUTING_KEY` or the file named
    /// by `ROLLER_PAGERDUTY_ROUTING_KEY_FILE`; `None` when neither is set.
    pub(crate) fn routing_key_from_env() -> Result<Option<Secret>, HttpConfigError> {
        crate::http::secret_from_env("ROLLER_PAGERDUTY_ROUTING_KEY")
    }

    #[cfg(test)]
    pub(crate) fn with_backoff(mut self, backoff: Backoff) -> PagerDuty {
        self.backoff = backoff;
        self
    }

    async fn send(&self, action: &'static str, event: &Event<'_>) -> Result<(), PagerError> {
        // Retrying is safe: the dedup key makes a repeated event the same
        // incident. 429 means rate-limited: back off and retry.
        send_json(
            &self.client,
            &self.events_url,
            event,
            System::PagerDuty,
            action,
            self.backoff,
            |status| status == 429 || status >= 500,
            true,
        )
        .await
    }
}

impl Pager for PagerDuty {
    async fn trigger(&self, page: &Page) -> Result<(), PagerError> {
        let summary: String = page.summary.chars().take(MAX_SUMMARY).collect();
        let event = Event {
            routing_key: self.routing_key.expose(),
            event_action: "trigger",
            dedup_key: &page.dedup_key,
            payload: Some(Payload {
                summary: &summary,
                source: &page.source,
                severity: page.severity.as_str(),
                component: page.component.as_deref(),
                group: page.group.as_deref(),
                class: page.class.as_deref(),
                custom_details: &page.details,
            }),
        };
        self.send("trigger", &event).await
    }

    async fn resolve(&self, dedup_key: &str) -> Result<(), PagerError> {
        let event = Event {
            routing_key: self.routing_key.expose(),
            event_action: "resolve",
            dedup_key,
            payload: None,
        };
        self.send("resolve", &event).await
    }
}
