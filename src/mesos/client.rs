//! Reaching the leading Mesos master over HTTP: finding it among the
//! configured masters, following a non-leader's 307 (with the credentials,
//! which a client's own redirect handling would drop), remembering it and
//! finding it again when it fails, and retrying only what is safe to send
//! twice.

use std::future::Future;
use std::sync::Mutex;

use reqwest::{Method, StatusCode, Url};

use crate::http::{HttpAuth, HttpSettings};
use crate::metrics::System;
use crate::retry::{Backoff, retry};
use crate::roll::ports::mesos::MesosError;

use super::wire::StateLeader;

/// Redirects followed within one attempt: a non-leader points at the
/// leader, which answers; more hops mean masters disagree about the leader.
const MAX_REDIRECTS: usize = 3;

/// A /master/slaves of 10,000 agents is a few tens of MB; anything larger
/// is not a Mesos answer and must not eat the roller's memory.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// How much of an error body goes into an error message.
const EXCERPT_CHARS: usize = 200;

/// How to reach the Mesos masters.
#[derive(Clone, Debug)]
pub(crate) struct MesosSettings {
    /// Base URLs of the masters, e.g. `http://10.0.0.1:5050`; any of them
    /// may be the leader.
    pub(crate) masters: Vec<String>,
    pub(crate) http: HttpSettings,
    /// For each call; finding the leader is part of every attempt.
    pub(crate) backoff: Backoff,
    pub(crate) agent_listing: AgentListing,
}

impl MesosSettings {
    pub(crate) fn new(masters: Vec<String>) -> MesosSettings {
        MesosSettings {
            masters,
            http: HttpSettings::default(),
            backoff: Backoff::DEFAULT,
            agent_listing: AgentListing::default(),
        }
    }
}

/// Which endpoint lists the agents. Each falls back to the other when the
/// master does not have it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum AgentListing {
    /// `GET /master/slaves`: every Mesos version.
    #[default]
    MasterSlaves,
    /// v1 `GET_AGENTS`: Mesos 1.0 and later.
    OperatorApi,
}

/// Whether a call may be sent again after a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Replay {
    /// Reads, and edits that re-read before they write: always.
    Always,
    /// Everything else: only when the failure proves the master did not
    /// act on it (no connection, no leader, a redirect, 503).
    IfNotProcessed,
}

/// One HTTP call to the leader.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub(crate) method: Method,
    /// Relative to the master's base URL, e.g. `master/slaves`.
    pub(crate) path: &'static str,
    pub(crate) body: Option<Vec<u8>>,
    pub(crate) replay: Replay,
    /// How errors name the call, e.g. `POST /api/v1 DRAIN_AGENT`.
    pub(crate) endpoint: String,
}

impl Call {
    pub(crate) fn get(path: &'static str) -> Call {
        Call {
            method: Method::GET,
            path,
            body: None,
            replay: Replay::Always,
            endpoint: format!("GET /{path}"),
        }
    }

    pub(crate) fn post(path: &'static str, body: Vec<u8>, replay: Replay) -> Call {
        Call {
            method: Method::POST,
            path,
            body: Some(body),
            replay,
            endpoint: format!("POST /{path}"),
        }
    }
}

/// An HTTP answer, whatever its status.
struct Answer {
    status: StatusCode,
    location: Option<String>,
    body: Vec<u8>,
}

/// The Mesos master adapter: implements `MesosMaster` (in `master.rs`).
#[derive(Debug)]
pub(crate) struct MesosClient {
    http: reqwest::Client,
    auth: HttpAuth,
    masters: Vec<Url>,
    /// The leader's base URL once known. Never held across an await.
    leader: Mutex<Option<Url>>,
    backoff: Backoff,
    pub(crate) agent_listing: AgentListing,
}

impl MesosClient {
    pub(crate) fn new(settings: MesosSettings) -> Result<MesosClient, MesosError> {
        if settings.masters.is_empty() {
            return Err(MesosError::Config {
                reason: "no Mesos master URL given".to_string(),
            });
        }
        let masters = settings
            .masters
            .iter()
            .map(|url| base_url(url))
            .collect::<Result<Vec<Url>, MesosError>>()?;
        let http = settings.http.client().map_err(|err| MesosError::Config {
            reason: err.to_string(),
        })?;
        Ok(MesosClient {
            http,
            auth: settings.http.auth,
            masters,
            leader: Mutex::new(None),
            backoff: settings.backoff,
            agent_listing: settings.agent_listing,
        })
    }

    /// The leader as last seen, if any (for tests and diagnostics).
    #[cfg(test)]
    pub(crate) fn known_leader(&self) -> Option<String> {
        self.cached_leader().map(|url| url.to_string())
    }

    /// Sends `call` to the leader and returns the body of a 2xx answer,
    /// retrying what `call.replay` allows with the configured backoff.
    pub(crate) async fn send(&self, call: &Call) -> Result<Vec<u8>, MesosError> {
        retry(
            self.backoff,
            |err| may_send_again(err, call.replay),
            || self.send_once(call),
        )
        .await
    }

    /// Retries `attempt` (which makes its own calls with `send_once`) as a
    /// whole, e.g. a read-modify-write of the schedule.
    pub(crate) async fn with_retries<T, F, Fut>(
        &self,
        replay: Replay,
        attempt: F,
    ) -> Result<T, MesosError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, MesosError>>,
    {
        retry(self.backoff, |err| may_send_again(err, replay), attempt).await
    }

    /// One attempt: find the leader if needed, send, follow redirects.
    pub(crate) async fn send_once(&self, call: &Call) -> Result<Vec<u8>, MesosError> {
        let leader = match self.cached_leader() {
            Some(leader) => leader,
            None => {
                let leader = self.discover().await?;
                self.remember_leader(&leader);
                leader
            }
        };
        let mut url = leader.join(call.path).map_err(|err| MesosError::Config {
            reason: format!("cannot join '{}' to {leader}: {err}", call.path),
        })?;
        for _ in 0..=MAX_REDIRECTS {
            let answer = match self
                .exchange(
                    call.method.clone(),
                    url.clone(),
                    call.body.clone(),
                    &call.endpoint,
                )
                .await
            {
                Ok(answer) => answer,
                Err(err) => {
                    // The leader may have died: look again next time.
                    self.forget_leader();
                    return Err(err);
                }
            };
            if answer.status.is_redirection() {
                let next = redirect_target(&url, answer.location.as_deref(), &call.endpoint)?;
                self.remember_leader(&origin(&next));
                url = next;
                continue;
            }
            return self.judge(answer, &call.endpoint);
        }
        self.forget_leader();
        Err(MesosError::RedirectLoop {
            endpoint: call.endpoint.clone(),
            hops: MAX_REDIRECTS,
            last: url.to_string(),
        })
    }

    /// A 2xx body, or the error the status stands for.
    fn judge(&self, answer: Answer, endpoint: &str) -> Result<Vec<u8>, MesosError> {
        let status = answer.status;
        if status.is_success() {
            return Ok(answer.body);
        }
        let body = excerpt(&answer.body);
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(MesosError::Unauthorized {
                endpoint: endpoint.to_string(),
                status: status.as_u16(),
            }),
            StatusCode::SERVICE_UNAVAILABLE => {
                // "No leader elected", or a new leader still recovering:
                // either way, ask around again.
                self.forget_leader();
                if body.to_ascii_lowercase().contains("no leader") {
                    Err(MesosError::NoLeader {
                        masters: self.master_list(),
                        detail: body,
                    })
                } else {
                    Err(MesosError::HttpStatus {
                        endpoint: endpoint.to_string(),
                        status: status.as_u16(),
                        body,
                    })
                }
            }
            _ => Err(MesosError::HttpStatus {
                endpoint: endpoint.to_string(),
                status: status.as_u16(),
                body,
            }),
        }
    }

    /// Asks each master in turn who leads. `/master/redirect` answers 307
    /// to the leader (the leader to itself) or 503 without one; masters
    /// without it are asked for `/master/state` instead.
    async fn discover(&self) -> Result<Url, MesosError> {
        const ENDPOINT: &str = "GET /master/redirect";
        let mut no_leader = Vec::new();
        let mut failures = Vec::new();
        let mut refusal = None;
        for master in &self.masters {
            let url = join(master, "master/redirect")?;
            let answer = match self
                .exchange(Method::GET, url.clone(), None, ENDPOINT)
                .await
            {
                Ok(answer) => answer,
                Err(err) => {
                    failures.push(format!("{master}: {err}"));
                    continue;
                }
            };
            match answer.status {
                status if status.is_redirection() => {
                    return Ok(origin(&redirect_target(
                        &url,
                        answer.location.as_deref(),
                        ENDPOINT,
                    )?));
                }
                // A proxy in front of the masters that follows the
                // redirect itself: talking to it reaches the leader.
                status if status.is_success() => return Ok(master.clone()),
                StatusCode::SERVICE_UNAVAILABLE => no_leader.push(master.to_string()),
                StatusCode::NOT_FOUND => match self.leader_from_state(master).await {
                    Ok(Some(leader)) => return Ok(leader),
                    Ok(None) => no_leader.push(master.to_string()),
                    Err(err) => failures.push(format!("{master}: {err}")),
                },
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                    refusal = Some(MesosError::Unauthorized {
                        endpoint: ENDPOINT.to_string(),
                        status: answer.status.as_u16(),
                    });
                }
                status => failures.push(format!(
                    "{master}: HTTP {}: {}",
                    status.as_u16(),
                    excerpt(&answer.body)
                )),
            }
        }
        if let Some(refusal) = refusal {
            return Err(refusal);
        }
        if !no_leader.is_empty() {
            let mut detail = format!(
                "{} answered that no leader is elected",
                no_leader.join(", ")
            );
            if !failures.is_empty() {
                detail.push_str(&format!("; {}", failures.join("; ")));
            }
            return Err(MesosError::NoLeader {
                masters: self.master_list(),
                detail,
            });
        }
        Err(MesosError::Unreachable {
            endpoint: "leader discovery".to_string(),
            url: self.master_list(),
            reason: failures.join("; "),
        })
    }

    /// The leader from `/master/state` (`leader_info`, else the `leader`
    /// pid), or a non-leader's redirect of that request.
    async fn leader_from_state(&self, master: &Url) -> Result<Option<Url>, MesosError> {
        const ENDPOINT: &str = "GET /master/state";
        let url = join(master, "master/state")?;
        let answer = self
            .exchange(Method::GET, url.clone(), None, ENDPOINT)
            .await?;
        if answer.status.is_redirection() {
            return Ok(Some(origin(&redirect_target(
                &url,
                answer.location.as_deref(),
                ENDPOINT,
            )?)));
        }
        let body = self.judge(answer, ENDPOINT)?;
        let state: StateLeader =
            serde_json::from_slice(&body).map_err(|err| MesosError::BadResponse {
                endpoint: ENDPOINT.to_string(),
                reason: err.to_string(),
            })?;
        let Some(address) = state.leader_address() else {
            return Ok(None);
        };
        let leader = Url::parse(&format!("{}://{address}/", master.scheme())).map_err(|err| {
            MesosError::BadResponse {
                endpoint: ENDPOINT.to_string(),
                reason: format!("leader address '{address}': {err}"),
            }
        })?;
        Ok(Some(leader))
    }

    /// One HTTP request with the credentials; the whole body is read
    /// (bounded) before returning.
    async fn exchange(
        &self,
        method: Method,
        url: Url,
        body: Option<Vec<u8>>,
        endpoint: &str,
    ) -> Result<Answer, MesosError> {
        let transport_error = |err: reqwest::Error| transport_error(err, endpoint, &url);
        let mut request = self
            .auth
            .apply(self.http.request(method.clone(), url.clone()))
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body);
        }
        crate::metrics::call(System::Mesos);
        let sent = request.send().await;
        crate::metrics::answered(
            System::Mesos,
            sent.as_ref().ok().map(|r| r.status().as_u16()),
        );
        let mut response = sent.map_err(transport_error)?;
        let status = response.status();
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        // Room for the whole body when its length is announced (and within
        // the limit): `/master/slaves` of 4,000 agents is 3 MB, grown
        // chunk by chunk otherwise.
        let announced = response.content_length().unwrap_or(0) as usize;
        let mut body = Vec::with_capacity(announced.min(MAX_BODY_BYTES));
        while let Some(chunk) = response.chunk().await.map_err(transport_error)? {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(MesosError::BadResponse {
                    endpoint: endpoint.to_string(),
                    reason: format!("the body is larger than {MAX_BODY_BYTES} bytes"),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            location,
            body,
        })
    }

    fn cached_leader(&self) -> Option<Url> {
        self.leader.lock().ok().and_then(|leader| leader.clone())
    }

    fn remember_leader(&self, leader: &Url) {
        if let Ok(mut cached) = self.leader.lock() {
            *cached = Some(leader.clone());
        }
    }

    fn forget_leader(&self) {
        if let Ok(mut cached) = self.leader.lock() {
            *cached = None;
        }
    }

    fn master_list(&self) -> String {
        let masters: Vec<String> = self.masters.iter().map(Url::to_string).collect();
        masters.join(", ")
    }
}

/// Whether a failed call may be sent again (see `Replay`).
pub(crate) fn may_send_again(err: &MesosError, replay: Replay) -> bool {
    match err {
        // Nothing reached a leader, or the leader refused before acting.
        MesosError::NoLeader { .. }
        | MesosError::Unreachable { .. }
        | MesosError::RedirectLoop { .. }
        | MesosError::HttpStatus { status: 503, .. } => true,
        // The request may have been acted upon.
        MesosError::Timeout { .. } | MesosError::Transport { .. } => replay == Replay::Always,
        MesosError::HttpStatus { status, .. } => {
            replay == Replay::Always && (500..600).contains(status) && *status != 501
        }
        MesosError::Unauthorized { .. }
        | MesosError::Unsupported { .. }
        | MesosError::BadResponse { .. }
        | MesosError::Config { .. } => false,
    }
}

/// A master URL as the base of its endpoints: `http://h:5050/prefix/`.
fn base_url(raw: &str) -> Result<Url, MesosError> {
    let trimmed = raw.trim();
    let mut url = Url::parse(trimmed).map_err(|err| MesosError::Config {
        reason: format!("the master URL '{trimmed}' is not a URL: {err}"),
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(MesosError::Config {
            reason: format!("the master URL '{trimmed}' must be http:// or https:// with a host"),
        });
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url.set_query(None);
    url.set_fragment(None);
    Ok(url)
}

fn join(base: &Url, path: &str) -> Result<Url, MesosError> {
    base.join(path).map_err(|err| MesosError::Config {
        reason: format!("cannot join '{path}' to {base}: {err}"),
    })
}

/// Where a redirect points, resolved against the URL that answered it: a
/// protocol-relative `//host:port/...` keeps the scheme we called with.
fn redirect_target(from: &Url, location: Option<&str>, endpoint: &str) -> Result<Url, MesosError> {
    let bad = |reason: String| MesosError::BadResponse {
        endpoint: endpoint.to_string(),
        reason,
    };
    let location = location.ok_or_else(|| bad("a redirect without a Location".to_string()))?;
    from.join(location)
        .map_err(|err| bad(format!("a redirect to '{location}': {err}")))
}

/// `scheme://host:port/` of `url`: a master's base.
fn origin(url: &Url) -> Url {
    let mut origin = url.clone();
    origin.set_path("/");
    origin.set_query(None);
    origin.set_fragment(None);
    origin
}

fn transport_error(err: reqwest::Error, endpoint: &str, url: &Url) -> MesosError {
    let url = url.to_string();
    let endpoint = endpoint.to_string();
    // A failed connection (refused, or timed out while connecting) never
    // delivered the request: that is what makes it safe to send again.
    if err.is_connect() {
        MesosError::Unreachable {
            endpoint,
            url,
            reason: error_chain(&err),
        }
    } else if err.is_timeout() {
        MesosError::Timeout { endpoint, url }
    } else {
        MesosError::Transport {
            endpoint,
            url,
            reason: error_chain(&err),
        }
    }
}

/// reqwest's top-level message is vague ("error sending request"): the
/// sources say what happened ("Connection refused").
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut message = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// The start of a body, on one line, for an error message.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut excerpt: String = text
        .trim()
        .chars()
        .take(EXCERPT_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.trim().chars().count() > EXCERPT_CHARS {
        excerpt.push('…');
    }
    excerpt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protocol_relative_location_keeps_the_scheme_of_the_url_called() {
        let called = Url::parse("https://m1:5050/master/slaves").unwrap();
        let target = redirect_target(&called, Some("//m2:5050/master/slaves?x=1"), "e").unwrap();
        assert_eq!(target.as_str(), "https://m2:5050/master/slaves?x=1");
        assert_eq!(origin(&target).as_str(), "https://m2:5050/");
    }

    #[test]
    fn a_master_url_becomes_a_base_for_its_endpoints() {
        let base = base_url("http://10.0.0.1:5050").unwrap();
        assert_eq!(
            join(&base, "master/slaves").unwrap().as_str(),
            "http://10.0.0.1:5050/master/slaves"
        );
        let prefixed = base_url("https://dcos.example.com/mesos").unwrap();
        assert_eq!(
            join(&prefixed, "master/slaves").unwrap().as_str(),
            "https://dcos.example.com/mesos/master/slaves"
        );
    }

    #[test]
    fn a_master_url_without_a_scheme_is_a_config_error() {
        assert_eq!(base_url("10.0.0.1:5050").unwrap_err().label(), "config");
        assert_eq!(base_url("ftp://m1/").unwrap_err().label(), "config");
    }

    #[test]
    fn only_failures_that_prove_nothing_happened_replay_a_write() {
        let timeout = MesosError::Timeout {
            endpoint: "e".into(),
            url: "u".into(),
        };
        let refused = MesosError::Unreachable {
            endpoint: "e".into(),
            url: "u".into(),
            reason: "Connection refused".into(),
        };
        let status = |status| MesosError::HttpStatus {
            endpoint: "e".into(),
            status,
            body: String::new(),
        };
        assert!(may_send_again(&timeout, Replay::Always));
        assert!(!may_send_again(&timeout, Replay::IfNotProcessed));
        assert!(may_send_again(&refused, Replay::IfNotProcessed));
        assert!(may_send_again(&status(503), Replay::IfNotProcessed));
        assert!(!may_send_again(&status(500), Replay::IfNotProcessed));
        assert!(may_send_again(&status(500), Replay::Always));
        assert!(!may_send_again(&status(400), Replay::Always));
    }

    #[test]
    fn an_error_body_excerpt_is_short_and_on_one_line() {
        let long = format!("line one\nline two {}", "x".repeat(500));
        let excerpt = excerpt(long.as_bytes());
        assert!(!excerpt.contains('\n'));
        assert_eq!(excerpt.chars().count(), EXCERPT_CHARS + 1);
    }
}
