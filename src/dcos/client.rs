//! The services' HTTP client: one base URL per service, `<dcos_url>/
//! service/<name>/` through the DC/OS admin router unless a `[[service]]`
//! table gives the scheduler's own URL; the Marathon credentials (a DC/OS
//! token reaches every service behind the admin router).
//!
//! Reads are tried once per call: a failing read makes the step ask
//! again on its next tick. `replace` is never retried here: a second one
//! would kill the pod its first one relaunched (the roll records its
//! intent and checks where the pod runs before sending it again).

use std::collections::BTreeMap;

use reqwest::header::ACCEPT;
use reqwest::{Method, Url};
use serde::de::DeserializeOwned;

use super::wire;
use crate::http::{HttpAuth, HttpConfigError, HttpSettings};
use crate::roll::ports::services::{Pod, PodTask, ServiceError, ServicePlan, Services};

/// The services' APIs.
#[derive(Debug)]
pub(crate) struct ServicesClient {
    http: reqwest::Client,
    auth: HttpAuth,
    /// The admin router (`https://dcos.example.com/`), ending in `/`.
    dcos_url: Option<Url>,
    /// Services listed with a URL of their own, each ending in `/`.
    listed: BTreeMap<String, Url>,
}

/// Why the client cannot be built; nothing was sent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServicesConfigError {
    #[error("'{url}' is not a usable URL for {what}: {reason}")]
    BadUrl {
        what: String,
        url: String,
        reason: String,
    },
    #[error(transparent)]
    Http(#[from] HttpConfigError),
}

impl ServicesClient {
    /// `dcos_url`: the admin router, if the cluster is DC/OS; `listed`:
    /// (service name, scheduler URL) pairs, which win over it.
    pub(crate) fn new(
        dcos_url: Option<&str>,
        listed: &[(String, String)],
        settings: &HttpSettings,
    ) -> Result<ServicesClient, ServicesConfigError> {
        let dcos_url = dcos_url
            .map(|u| base(u, "dcos_url".to_string()))
            .transpose()?;
        let listed = listed
            .iter()
            .map(|(name, url)| Ok((name.clone(), base(url, format!("service {name}"))?)))
            .collect::<Result<_, ServicesConfigError>>()?;
        Ok(ServicesClient {
            http: settings.client()?,
            auth: settings.auth.clone(),
            dcos_url,
            listed,
        })
    }

    /// The base of `service`'s v1 API, ending in `/`.
    fn base(&self, service: &str) -> Result<Url, ServiceError> {
        if let Some(url) = self.listed.get(service) {
            return Ok(url.clone());
        }
        let no_route = || ServiceError::NoRoute {
            service: service.to_string(),
        };
        let dcos = self.dcos_url.as_ref().ok_or_else(no_route)?;
        // A service in a folder (`/data/kafka`) is `data/kafka` under
        // `/service/`; its name has no other character a path must escape
        // (DC/OS service names are Marathon app ids).
        let name = service.trim_start_matches('/');
        dcos.join(&format!("service/{name}/"))
            .map_err(|_| no_route())
    }

    async fn call(
        &self,
        service: &str,
        method: Method,
        path: &str,
    ) -> Result<(u16, String), ServiceError> {
        let url = self
            .base(service)?
            .join(path)
            .map_err(|e| ServiceError::Unreachable {
                service: service.to_string(),
                reason: format!("bad path {path}: {e}"),
            })?;
        let request = self
            .auth
            .apply(self.http.request(method, url))
            .header(ACCEPT, "application/json");
        let response = request
            .send()
            .await
            .map_err(|e| ServiceError::Unreachable {
                service: service.to_string(),
                reason: crate::http::describe_error(&e),
            })?;
        let status = response.status().as_u16();
        let body = response
            .text()
            .await
            .map_err(|e| ServiceError::Unreachable {
                service: service.to_string(),
                reason: crate::http::describe_error(&e),
            })?;
        Ok((status, body))
    }

    /// A GET whose answer is JSON when its status is one of `ok`.
    async fn read<T: DeserializeOwned>(
        &self,
        service: &str,
        path: &str,
        ok: &[u16],
    ) -> Result<T, ServiceError> {
        let (status, body) = self.call(service, Method::GET, path).await?;
        let call = format!("GET /{path}");
        if !ok.contains(&status) {
            return Err(refused(service, call, status, &body));
        }
        serde_json::from_str(&body).map_err(|e| ServiceError::Decode {
            service: service.to_string(),
            call,
            reason: e.to_string(),
        })
    }
}

/// A refusal, its body said on one line (see `said`).
fn refused(service: &str, call: String, status: u16, body: &str) -> ServiceError {
    ServiceError::Status {
        service: service.to_string(),
        call,
        status,
        body: said(body),
    }
}

/// A body for an error message, on one line: an HTML page (the admin
/// router's 502 while a scheduler is down) by its title, anything else
/// cut at 300 characters.
pub(super) fn said(body: &str) -> String {
    let text = body.trim();
    if text.starts_with('<') {
        // ASCII lowercasing keeps every byte offset.
        let lower = text.to_ascii_lowercase();
        let title = lower.find("<title>").and_then(|at| {
            let from = at + "<title>".len();
            let len = lower[from..].find("</title>")?;
            Some(text[from..from + len].trim().to_string())
        });
        return match title {
            Some(title) if !title.is_empty() => format!("an HTML page, \"{title}\""),
            _ => "an HTML page".to_string(),
        };
    }
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = line.chars().take(300).collect();
    if line.chars().count() > 300 {
        out.push('…');
    }
    if out.is_empty() {
        out = "(no body)".to_string();
    }
    out
}

/// `url` as a base: http(s), ending in `/` so that paths join under it.
fn base(url: &str, what: String) -> Result<Url, ServicesConfigError> {
    let bad = |reason: &str| ServicesConfigError::BadUrl {
        what: what.clone(),
        url: url.to_string(),
        reason: reason.to_string(),
    };
    let mut parsed = Url::parse(url).map_err(|e| bad(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(bad("not http or https"));
    }
    if !parsed.path().ends_with('/') {
        let path = format!("{}/", parsed.path());
        parsed.set_path(&path);
    }
    Ok(parsed)
}

impl Services for ServicesClient {
    fn reachable(&self, service: &str) -> bool {
        self.base(service).is_ok()
    }

    async fn plan(&self, service: &str, plan: &str) -> Result<ServicePlan, ServiceError> {
        // 200 COMPLETE, 202 in progress, 417 with errors: each has the plan.
        let info: wire::PlanInfo = self
            .read(service, &format!("v1/plans/{plan}"), &[200, 202, 417])
            .await?;
        Ok(info.into())
    }

    async fn pods(&self, service: &str) -> Result<Vec<Pod>, ServiceError> {
        let statuses: wire::PodStatuses = self.read(service, "v1/pod/status", &[200]).await?;
        Ok(statuses.into_pods())
    }

    async fn pod_info(&self, service: &str, pod: &str) -> Result<Vec<PodTask>, ServiceError> {
        let tasks: Vec<wire::TaskInfoAndStatus> = self
            .read(service, &format!("v1/pod/{pod}/info"), &[200])
            .await?;
        Ok(tasks.into_iter().map(PodTask::from).collect())
    }

    async fn replace_pod(&self, service: &str, pod: &str) -> Result<(), ServiceError> {
        let path = format!("v1/pod/{pod}/replace");
        let (status, body) = self.call(service, Method::POST, &path).await?;
        if status == 200 {
            return Ok(());
        }
        Err(refused(service, format!("POST /{path}"), status, &body))
    }
}
