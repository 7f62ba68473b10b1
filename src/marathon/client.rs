//! The Marathon HTTP client: one or more Marathon URLs, the leader
//! preferred, every call bounded by the HTTP timeouts and retried through
//! `crate::retry` only when that is safe.
//!
//! Any Marathon answers for the cluster: a non-leader proxies the request
//! to the leader (adding `X-Marathon-Leader`), answers 503 "Could not
//! determine the current leader" during an election, or 502 when it cannot
//! reach the leader. So a failure on one URL moves on to the next, and a
//! round over every URL that fails is retried with backoff. Reads are
//! retried on any transient failure; writes (scale, kill) only when the
//! failure proves Marathon never acted on them: a refused connection, a
//! 503, or a proxy's 502 that says the leader was never reached.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode, Url};

use super::events::{Connect, EventWatch, Mark, same_origin};
use super::wire;
use crate::http::{HttpAuth, HttpConfigError, HttpSettings};
use crate::metrics::System;
use crate::retry::{Backoff, retry};
use crate::roll::ports::marathon::{
    App, Deployment, KillOutcome, Marathon, MarathonError, QueuedLaunch,
};

/// The header by which every Marathon names the leader that served a
/// request (`http://host:port`).
const LEADER_HEADER: &str = "X-Marathon-Leader";

/// What a Marathon (or the leader proxy inside it) says when a request
/// was refused before reaching the leader, so it is safe to send again.
const NOT_PROCESSED_502: [&str; 3] = [
    "Could not determine the current leader",
    "Connection to leader refused",
    "Detected proxying loop",
];

/// How often `follow_deployment` looks at `/v2/deployments`.
#[cfg(test)]
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Why a client cannot be built; nothing was sent.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MarathonConfigError {
    #[error("no Marathon URL given")]
    NoUrl,
    #[error("'{url}' is not a usable Marathon URL: {reason}")]
    BadUrl { url: String, reason: String },
    #[error(transparent)]
    Http(#[from] HttpConfigError),
}

impl MarathonConfigError {
    #[cfg(test)]
    pub(crate) fn label(&self) -> &'static str {
        match self {
            MarathonConfigError::NoUrl => "no_url",
            MarathonConfigError::BadUrl { .. } => "bad_url",
            MarathonConfigError::Http(_) => "http_config",
        }
    }
}

/// A Marathon cluster reached over HTTP.
#[derive(Debug)]
pub(crate) struct MarathonClient {
    http: reqwest::Client,
    auth: HttpAuth,
    /// Base URLs, each ending in `/` (a path prefix such as DC/OS's
    /// `/service/marathon/` is kept).
    bases: Vec<Url>,
    /// The index of the base to try first: the leader when known, else the
    /// last one that answered (shared with the event stream's follower).
    preferred: Arc<AtomicUsize>,
    /// Whether the leader was looked up once (multi-URL clients only).
    leader_sought: AtomicBool,
    backoff: Backoff,
    #[cfg(test)]
    poll_interval: Duration,
    /// Whether `/v2/apps` answers are kept while Marathon's event stream
    /// is quiet (`with_event_stream`).
    follows_events: bool,
    /// The stream's follower, started by the first `apps`.
    events: OnceLock<EventWatch>,
    /// The last `/v2/apps` answer and where the stream stood when it was
    /// asked for.
    kept: Mutex<Option<KeptApps>>,
    /// Writes this client has begun or ended: an answer asked for while
    /// one was under way is not kept past it.
    writes: AtomicU64,
}

#[derive(Debug)]
struct KeptApps {
    apps: Arc<Vec<App>>,
    mark: Mark,
    writes: u64,
    read_at: tokio::time::Instant,
}

/// The longest a kept `/v2/apps` answer is used, however quiet the
/// stream: a bound on the harm of an event Marathon never sent.
pub(crate) const KEPT_APPS_MAX_AGE: Duration = Duration::from_secs(30);

/// One request, as every attempt sends it.
struct Call<'a> {
    operation: &'static str,
    method: Method,
    path: &'a [&'a str],
    query: &'a [(&'a str, &'a str)],
    body: Option<Vec<u8>>,
    /// Safe to send twice (reads).
    idempotent: bool,
}

impl<'a> Call<'a> {
    /// A read: a GET without a body, safe to send twice.
    fn read(
        operation: &'static str,
        path: &'a [&'a str],
        query: &'a [(&'a str, &'a str)],
    ) -> Call<'a> {
        Call {
            operation,
            method: Method::GET,
            path,
            query,
            body: None,
            idempotent: true,
        }
    }
}

/// An HTTP answer the caller interprets (2xx, 4xx).
struct Answer {
    status: StatusCode,
    body: Vec<u8>,
}

/// What one attempt against one URL came to.
enum Attempt {
    Answered(Answer),
    /// Marathon surely did not act: any call may go elsewhere.
    NotProcessed(String),
    /// Marathon may have acted: only a read may go elsewhere.
    MaybeProcessed(String),
}

/// Why a round over every URL failed.
enum RoundError {
    /// Every URL failed in a way that allows another round.
    AllFailed(String),
    /// A write may have been acted upon: stop.
    Uncertain(String),
}

impl std::fmt::Display for RoundError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoundError::AllFailed(why) | RoundError::Uncertain(why) => f.write_str(why),
        }
    }
}

impl MarathonClient {
    /// A client for the Marathons at `urls` (any of them, leader or not).
    pub(crate) fn new(
        urls: &[impl AsRef<str>],
        settings: &HttpSettings,
    ) -> Result<MarathonClient, MarathonConfigError> {
        if urls.is_empty() {
            return Err(MarathonConfigError::NoUrl);
        }
        let bases = urls
            .iter()
            .map(|url| parse_base(url.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(MarathonClient {
            http: settings.client()?,
            auth: settings.auth.clone(),
            bases,
            preferred: Arc::new(AtomicUsize::new(0)),
            leader_sought: AtomicBool::new(false),
            backoff: Backoff::DEFAULT,
            #[cfg(test)]
            poll_interval: DEFAULT_POLL_INTERVAL,
            follows_events: false,
            events: OnceLock::new(),
            kept: Mutex::new(None),
            writes: AtomicU64::new(0),
        })
    }

    /// Follows Marathon's event stream and keeps the last `/v2/apps`
    /// answer while the stream says nothing changed (see
    /// `crate::marathon::events`), for at most `KEPT_APPS_MAX_AGE`.
    pub(crate) fn with_event_stream(mut self) -> MarathonClient {
        self.follows_events = true;
        self
    }

    /// Reads `/v2/apps` at every call again, as a client without
    /// `with_event_stream` does (tests that count a tick's reads).
    #[cfg(test)]
    pub(crate) fn stop_keeping_apps(&mut self) {
        self.follows_events = false;
    }

    /// Every app with its tasks, read from Marathon.
    async fn read_apps(&self) -> Result<Vec<App>, MarathonError> {
        let call = Call::read(
            "GET /v2/apps",
            &["v2", "apps"],
            &[
                ("embed", "apps.tasks"),
                ("embed", "apps.counts"),
                ("embed", "apps.deployments"),
                // Not in the list's answer unless asked (`/v2/apps/{id}`
                // embeds it always): the failure watch reads it.
                ("embed", "apps.lastTaskFailure"),
            ],
        );
        let answer = self.execute(&call).await?;
        if !answer.status.is_success() {
            return Err(unexpected(call.operation, &answer, None));
        }
        wire::parse_apps(&answer.body).map_err(|err| unparsable(call.operation, &err))
    }

    /// The stream's follower, started on first use.
    fn event_watch(&self) -> &EventWatch {
        self.events.get_or_init(|| {
            EventWatch::start(Connect {
                http: self.http.clone(),
                auth: self.auth.clone(),
                streams: self
                    .bases
                    .iter()
                    .map(|base| endpoint(base, &["v2", "events"], &[("plan-format", "light")]))
                    .collect(),
                preferred: self.preferred.clone(),
            })
        })
    }

    /// The kept answer, if the stream has been quiet since it was asked
    /// for (the same mark) and it is young enough.
    fn kept_apps(&self, mark: Mark) -> Option<Arc<Vec<App>>> {
        let writes = self.writes.load(Ordering::SeqCst);
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.as_ref()
            .filter(|k| {
                k.mark == mark && k.writes == writes && k.read_at.elapsed() < KEPT_APPS_MAX_AGE
            })
            .map(|k| k.apps.clone())
    }

    fn keep_apps(&self, kept: Option<KeptApps>) {
        *self.kept.lock().unwrap_or_else(|p| p.into_inner()) = kept;
    }

    pub(crate) fn with_backoff(mut self, backoff: Backoff) -> MarathonClient {
        self.backoff = backoff;
        self
    }

    #[cfg(test)]
    pub(crate) fn with_poll_interval(mut self, interval: Duration) -> MarathonClient {
        self.poll_interval = interval;
        self
    }

    /// The leader's `host:port` from `GET /v2/leader`, `None` while there
    /// is none (404). When it is one of the configured URLs, later calls
    /// go to it first, saving the proxy hop.
    #[cfg(test)]
    pub(crate) async fn leader(&self) -> Result<Option<String>, MarathonError> {
        // This is the lookup `execute` would otherwise make first.
        self.leader_sought.store(true, Ordering::Relaxed);
        let call = Call::read("GET /v2/leader", &["v2", "leader"], &[]);
        let answer = self.execute(&call).await?;
        match answer.status {
            StatusCode::NOT_FOUND => Ok(None),
            status if status.is_success() => {
                let leader: wire::Leader = parse(call.operation, &answer.body)?;
                if let Some(index) = self.index_of_authority(&leader.leader) {
                    self.preferred.store(index, Ordering::Relaxed);
                }
                Ok(Some(leader.leader))
            }
            _ => Err(unexpected(call.operation, &answer, None)),
        }
    }

    /// Sends `call`, in rounds over every URL, retried with backoff while
    /// each round fails in a way that allows it.
    async fn execute(&self, call: &Call<'_>) -> Result<Answer, MarathonError> {
        let writes = call.method != Method::GET;
        if writes {
            // A change this client makes is not waited for on the stream.
            self.writes.fetch_add(1, Ordering::SeqCst);
            self.keep_apps(None);
        }
        self.seek_leader_once().await;
        let answered = retry(
            self.backoff,
            |err| matches!(err, RoundError::AllFailed(_)),
            || self.round(call),
        )
        .await;
        if writes {
            self.writes.fetch_add(1, Ordering::SeqCst);
        }
        answered.map_err(|err| match err {
            RoundError::AllFailed(detail) => MarathonError::Unavailable {
                operation: call.operation,
                attempts: self.backoff.attempts.max(1),
                detail,
            },
            RoundError::Uncertain(detail) => MarathonError::OutcomeUnknown {
                operation: call.operation,
                detail,
            },
        })
    }

    /// With several URLs, asks once which one leads, so calls go to it
    /// directly. Best effort, one round, no retry: a failure here only
    /// costs a proxy hop later.
    async fn seek_leader_once(&self) {
        if self.bases.len() < 2 || self.leader_sought.swap(true, Ordering::Relaxed) {
            return;
        }
        let call = Call::read("GET /v2/leader", &["v2", "leader"], &[]);
        if let Ok(answer) = self.round(&call).await
            && answer.status.is_success()
            && let Ok(leader) = serde_json::from_slice::<wire::Leader>(&answer.body)
            && let Some(index) = self.index_of_authority(&leader.leader)
        {
            self.preferred.store(index, Ordering::Relaxed);
        }
    }

    /// One try of every URL, the preferred first.
    async fn round(&self, call: &Call<'_>) -> Result<Answer, RoundError> {
        let count = self.bases.len();
        let start = self.preferred.load(Ordering::Relaxed) % count;
        let mut failures = Vec::new();
        for step in 0..count {
            let index = (start + step) % count;
            let base = &self.bases[index];
            match self.attempt(index, call).await {
                Attempt::Answered(answer) => return Ok(answer),
                Attempt::NotProcessed(why) => failures.push(format!("{base}: {why}")),
                Attempt::MaybeProcessed(why) if call.idempotent => {
                    failures.push(format!("{base}: {why}"))
                }
                Attempt::MaybeProcessed(why) => {
                    return Err(RoundError::Uncertain(format!("{base}: {why}")));
                }
            }
        }
        Err(RoundError::AllFailed(failures.join("; ")))
    }

    async fn attempt(&self, index: usize, call: &Call<'_>) -> Attempt {
        let url = endpoint(&self.bases[index], call.path, call.query);
        let mut request = self
            .http
            .request(call.method.clone(), url)
            .header(ACCEPT, "application/json");
        if let Some(body) = &call.body {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone());
        }
        crate::metrics::call(System::Marathon);
        let sent = self.auth.apply(request).send().await;
        crate::metrics::answered(
            System::Marathon,
            sent.as_ref().ok().map(|r| r.status().as_u16()),
        );
        let response = match sent {
            Ok(response) => response,
            // Nothing reached Marathon when the connection itself failed.
            Err(err) if err.is_connect() => {
                return Attempt::NotProcessed(crate::http::describe_error(&err));
            }
            Err(err) => return Attempt::MaybeProcessed(crate::http::describe_error(&err)),
        };
        let status = response.status();
        let leader = response
            .headers()
            .get(LEADER_HEADER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| Url::parse(value).ok());
        let body = match response.bytes().await {
            Ok(body) => body.to_vec(),
            Err(err) => return Attempt::MaybeProcessed(crate::http::describe_error(&err)),
        };
        if status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::TOO_MANY_REQUESTS {
            return Attempt::NotProcessed(format!("HTTP {status}: {}", message(&body)));
        }
        if status == StatusCode::BAD_GATEWAY {
            let text = String::from_utf8_lossy(&body);
            let why = format!("HTTP {status}: {}", message(&body));
            return if NOT_PROCESSED_502.iter().any(|m| text.contains(m)) {
                Attempt::NotProcessed(why)
            } else {
                Attempt::MaybeProcessed(why)
            };
        }
        if status.is_server_error() {
            return Attempt::MaybeProcessed(format!("HTTP {status}: {}", message(&body)));
        }
        // Answered: prefer the leader that served it when it is one of
        // ours, else the URL that answered.
        let preferred = leader
            .and_then(|url| self.index_of_url(&url))
            .unwrap_or(index);
        self.preferred.store(preferred, Ordering::Relaxed);
        Attempt::Answered(Answer { status, body })
    }

    fn index_of_url(&self, url: &Url) -> Option<usize> {
        self.bases.iter().position(|base| same_origin(base, url))
    }

    /// The configured URL whose `host:port` is `authority` (as
    /// `/v2/leader` names the leader).
    fn index_of_authority(&self, authority: &str) -> Option<usize> {
        self.bases.iter().position(|base| {
            let host = base.host_str().unwrap_or_default();
            match base.port_or_known_default() {
                Some(port) => authority == format!("{host}:{port}"),
                None => authority == host,
            }
        })
    }
}

impl Marathon for MarathonClient {
    async fn apps(&self) -> Result<Arc<Vec<App>>, MarathonError> {
        if !self.follows_events {
            return self.read_apps().await.map(Arc::new);
        }
        // Where the stream stands before asking: a change heard while the
        // answer is on its way makes the next call ask again.
        let mark = self.event_watch().mark();
        let writes = self.writes.load(Ordering::SeqCst);
        if let Some(apps) = mark.and_then(|mark| self.kept_apps(mark)) {
            return Ok(apps);
        }
        // The old answer goes first: two at once would double the peak.
        self.keep_apps(None);
        let read_at = tokio::time::Instant::now();
        let apps = Arc::new(self.read_apps().await?);
        self.keep_apps(mark.map(|mark| KeptApps {
            apps: apps.clone(),
            mark,
            writes,
            read_at,
        }));
        Ok(apps)
    }

    async fn app(&self, id: &str) -> Result<App, MarathonError> {
        let path = app_path(id);
        let call = Call::read(
            "GET /v2/apps/{id}",
            &path,
            &[
                ("embed", "app.tasks"),
                ("embed", "app.counts"),
                ("embed", "app.deployments"),
            ],
        );
        let answer = self.execute(&call).await?;
        if !answer.status.is_success() {
            return Err(unexpected(call.operation, &answer, Some(id)));
        }
        wire::parse_app(&answer.body).map_err(|err| unparsable(call.operation, &err))
    }

    async fn deployments(&self) -> Result<Vec<Deployment>, MarathonError> {
        let call = Call::read("GET /v2/deployments", &["v2", "deployments"], &[]);
        let answer = self.execute(&call).await?;
        if !answer.status.is_success() {
            return Err(unexpected(call.operation, &answer, None));
        }
        wire::parse_deployments(&answer.body).map_err(|err| unparsable(call.operation, &err))
    }

    async fn launch_queue(&self) -> Result<Vec<QueuedLaunch>, MarathonError> {
        let call = Call::read("GET /v2/queue", &["v2", "queue"], &[]);
        let answer = self.execute(&call).await?;
        if !answer.status.is_success() {
            return Err(unexpected(call.operation, &answer, None));
        }
        wire::parse_queue(&answer.body).map_err(|err| unparsable(call.operation, &err))
    }

    async fn scale_app(&self, id: &str, instances: u32) -> Result<String, MarathonError> {
        // No read first: the roll scales only apps its tick has just
        // listed (a wave scales hundreds). A PUT to an id Marathon no
        // longer has is taken as a create (`withoutPriorAppDefinition`),
        // which Marathon refuses with 422, an app needing a `cmd`, `args`
        // or a `container` that this body has none of; a refusal is then
        // told plainly when the app is gone.
        let path = app_path(id);
        let body = serde_json::to_vec(&wire::ScaleBody { instances })
            .map_err(|err| unparsable("PUT /v2/apps/{id}", &err))?;
        let call = Call {
            operation: "PUT /v2/apps/{id}",
            method: Method::PUT,
            path: &path,
            query: &[],
            body: Some(body),
            idempotent: false,
        };
        let answer = self.execute(&call).await?;
        if !answer.status.is_success() {
            let refused = unexpected(call.operation, &answer, Some(id));
            if answer.status == StatusCode::UNPROCESSABLE_ENTITY
                && let Err(gone @ MarathonError::AppNotFound { .. }) = self.app(id).await
            {
                return Err(gone);
            }
            return Err(refused);
        }
        let result: wire::DeploymentResult = parse(call.operation, &answer.body)?;
        Ok(result.deployment_id)
    }

    #[cfg(test)]
    async fn follow_deployment(&self, id: &str, timeout: Duration) -> Result<(), MarathonError> {
        let started = tokio::time::Instant::now();
        let deadline = started + timeout;
        let timed_out = || MarathonError::DeploymentTimeout {
            id: id.to_string(),
            waited: started.elapsed(),
        };
        loop {
            // The deadline also bounds a slow or retried read.
            let deployments = tokio::time::timeout_at(deadline, self.deployments())
                .await
                .map_err(|_| timed_out())??;
            if !deployments.iter().any(|d| d.id == id) {
                return Ok(());
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Err(timed_out());
            }
            tokio::time::sleep_until(deadline.min(now + self.poll_interval)).await;
        }
    }

    async fn cancel_deployment(&self, id: &str) -> Result<Option<String>, MarathonError> {
        let call = Call {
            operation: "DELETE /v2/deployments/{id}",
            method: Method::DELETE,
            path: &["v2", "deployments", id],
            query: &[],
            body: None,
            idempotent: false,
        };
        let answer = self.execute(&call).await?;
        if answer.status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !answer.status.is_success() {
            return Err(unexpected(call.operation, &answer, None));
        }
        let result: wire::DeploymentResult = parse(call.operation, &answer.body)?;
        Ok(Some(result.deployment_id))
    }

    async fn reset_delay(&self, app: &str) -> Result<(), MarathonError> {
        let mut path = vec!["v2", "queue"];
        path.extend(app.trim_matches('/').split('/'));
        path.push("delay");
        let call = Call {
            operation: "DELETE /v2/queue/{id}/delay",
            method: Method::DELETE,
            path: &path,
            query: &[],
            body: None,
            // Dropping a delay twice is dropping it once.
            idempotent: true,
        };
        let answer = self.execute(&call).await?;
        if answer.status.is_success() || answer.status == StatusCode::NOT_FOUND {
            return Ok(());
        }
        Err(unexpected(call.operation, &answer, None))
    }

    async fn kill_tasks(
        &self,
        task_ids: &[String],
        scale: bool,
    ) -> Result<KillOutcome, MarathonError> {
        if task_ids.is_empty() {
            return Ok(KillOutcome::Killed(Vec::new()));
        }
        let operation = "POST /v2/tasks/delete";
        let body = serde_json::to_vec(&wire::TaskIds { ids: task_ids })
            .map_err(|err| unparsable(operation, &err))?;
        let call = Call {
            operation,
            method: Method::POST,
            path: &["v2", "tasks", "delete"],
            query: &[("scale", if scale { "true" } else { "false" })],
            body: Some(body),
            idempotent: false,
        };
        let answer = self.execute(&call).await?;
        if !answer.status.is_success() {
            let target = format!("the app(s) of tasks {}", task_ids.join(", "));
            return Err(unexpected(operation, &answer, Some(&target)));
        }
        let result: wire::KillResult = parse(operation, &answer.body)?;
        Ok(KillOutcome::from(result))
    }
}

fn parse_base(url: &str) -> Result<Url, MarathonConfigError> {
    let bad = |reason: &str| MarathonConfigError::BadUrl {
        url: without_userinfo(url),
        reason: reason.to_string(),
    };
    let mut base = Url::parse(url.trim()).map_err(|err| bad(&err.to_string()))?;
    if !matches!(base.scheme(), "http" | "https") {
        return Err(bad("the scheme must be http or https"));
    }
    if base.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    if base.query().is_some() || base.fragment().is_some() {
        return Err(bad("a query or fragment has no place in a base URL"));
    }
    if !base.username().is_empty() || base.password().is_some() {
        return Err(bad(
            "credentials do not belong in the URL (they would show in process lists); use ROLLER_MARATHON_USER and ROLLER_MARATHON_PASSWORD(_FILE)",
        ));
    }
    if !base.path().ends_with('/') {
        let path = format!("{}/", base.path());
        base.set_path(&path);
    }
    Ok(base)
}

/// `url` with any `user:password@` cut out, so an error never repeats a
/// credential someone put in a URL.
fn without_userinfo(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            format!("{}<redacted>{}", &url[..scheme_end + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}

/// `base` + path segments (each percent-encoded) + query pairs.
fn endpoint(base: &Url, path: &[&str], query: &[(&str, &str)]) -> Url {
    let mut url = base.clone();
    if let Ok(mut segments) = url.path_segments_mut() {
        segments.pop_if_empty().extend(path);
    }
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    url
}

/// `/a/b` → `["v2", "apps", "a", "b"]`.
fn app_path(id: &str) -> Vec<&str> {
    ["v2", "apps"]
        .into_iter()
        .chain(id.split('/').filter(|segment| !segment.is_empty()))
        .collect()
}

pub(super) fn parse<T: serde::de::DeserializeOwned>(
    operation: &'static str,
    body: &[u8],
) -> Result<T, MarathonError> {
    serde_json::from_slice(body).map_err(|err| unparsable(operation, &err))
}

fn unparsable(operation: &'static str, err: &serde_json::Error) -> MarathonError {
    MarathonError::Unparsable {
        operation,
        reason: err.to_string(),
    }
}

/// The error for an answer the operation does not expect; `target` names
/// the app (or tasks) the call was about.
fn unexpected(operation: &'static str, answer: &Answer, target: Option<&str>) -> MarathonError {
    let status = answer.status;
    match (status, target) {
        (StatusCode::CONFLICT, _) => {
            let locked: wire::Locked = serde_json::from_slice(&answer.body).unwrap_or_default();
            MarathonError::Conflict {
                operation,
                target: target.unwrap_or("the resource").to_string(),
                deployments: locked.deployments.into_iter().map(|d| d.id).collect(),
            }
        }
        (StatusCode::NOT_FOUND, Some(app)) => MarathonError::AppNotFound {
            operation,
            app: app.to_string(),
        },
        (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN, _) => MarathonError::Unauthorized {
            operation,
            status: status.as_u16(),
            message: message(&answer.body),
        },
        _ => MarathonError::Rejected {
            operation,
            status: status.as_u16(),
            message: message(&answer.body),
        },
    }
}

/// A short, printable account of a body: Marathon's `message` when it is
/// JSON, else the first line of text, cut to a readable length.
pub(super) fn message(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Message {
        message: String,
        /// A validation's (422) findings: `[{"path", "errors": [...]}]`.
        #[serde(default)]
        details: Vec<Detail>,
    }
    #[derive(serde::Deserialize)]
    struct Detail {
        #[serde(default)]
        path: String,
        #[serde(default)]
        errors: Vec<String>,
    }
    let text = match serde_json::from_slice::<Message>(body) {
        Ok(json) => {
            let found: Vec<String> = json
                .details
                .iter()
                .flat_map(|d| {
                    d.errors.iter().map(|e| match d.path.as_str() {
                        "" | "/" => e.clone(),
                        path => format!("{path}: {e}"),
                    })
                })
                .collect();
            if found.is_empty() {
                json.message
            } else {
                format!("{}: {}", json.message, found.join("; "))
            }
        }
        Err(_) => String::from_utf8_lossy(body).trim().to_string(),
    };
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None if line.is_empty() => "(empty body)".to_string(),
        None => line.to_string(),
    }
}
