//! Pager sinks: PagerDuty's Events API v2 and a generic JSON webhook
//! (Slack-compatible `text`), and `Sinks`, which sends to every configured
//! one. Secrets (routing key, webhook URL) are `Secret`s: never printed.

mod pagerduty;
mod webhook;

pub(crate) use pagerduty::{DEFAULT_EVENTS_URL, PagerDuty};
pub(crate) use webhook::Webhook;

use crate::roll::ports::pager::{Page, Pager, PagerError};

/// One configured destination.
#[derive(Clone, Debug)]
pub(crate) enum Sink {
    PagerDuty(PagerDuty),
    Webhook(Webhook),
}

impl Pager for Sink {
    async fn trigger(&self, page: &Page) -> Result<(), PagerError> {
        match self {
            Sink::PagerDuty(sink) => sink.trigger(page).await,
            Sink::Webhook(sink) => sink.trigger(page).await,
        }
    }

    async fn resolve(&self, dedup_key: &str) -> Result<(), PagerError> {
        match self {
            Sink::PagerDuty(sink) => sink.resolve(dedup_key).await,
            Sink::Webhook(sink) => sink.resolve(dedup_key).await,
        }
    }
}

/// Every configured sink; one failing does not keep the others from being
/// told, and the failures are reported together.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sinks(pub(crate) Vec<Sink>);

impl Sinks {
    async fn each<'a, F, Fut>(&'a self, send: F) -> Result<(), PagerError>
    where
        F: Fn(&'a Sink) -> Fut,
        Fut: std::future::Future<Output = Result<(), PagerError>>,
    {
        let mut errors = Vec::new();
        for sink in &self.0 {
            if let Err(err) = send(sink).await {
                errors.push(err);
            }
        }
        match errors.len() {
            0 => Ok(()),
            1 => Err(errors.remove(0)),
            _ => Err(PagerError::Several(errors)),
        }
    }
}

impl Pager for Sinks {
    fn is_configured(&self) -> bool {
        !self.0.is_empty()
    }

    async fn trigger(&self, page: &Page) -> Result<(), PagerError> {
        self.each(|sink| sink.trigger(page)).await
    }

    async fn resolve(&self, dedup_key: &str) -> Result<(), PagerError> {
        self.each(|sink| sink.resolve(dedup_key)).await
    }
}

#[cfg(test)]
mod tests;
