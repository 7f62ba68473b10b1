//! What the Mesos and Marathon adapters share about HTTP: the client (TLS
//! roots, timeouts, no automatic redirects), credentials read from the
//! environment or a file but never from argv, a `Secret` type that never
//! prints its content, and how an answer's JSON body is parsed.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A credential. Its `Debug` and `Display` print `<redacted>`, so it can
/// sit in any struct that is logged or checkpointed by mistake.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    #[cfg(test)]
    pub(crate) fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The only way to read the value: call sites are easy to audit.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How to authenticate to Mesos or Marathon.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum HttpAuth {
    #[default]
    None,
    /// HTTP basic auth (Marathon's `--http_credentials`, Mesos' basic auth).
    Basic { user: String, password: Secret },
    /// A DC/OS ACS token, sent as `Authorization: token=<token>`.
    DcosToken(Secret),
}

#[derive(Debug, thiserror::Error)]
pub enum HttpConfigError {
    #[error("cannot read {what} from '{}': {source}", path.display())]
    ReadFile {
        what: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{what} is empty; set it or unset it")]
    Empty { what: String },
    #[error("{user} is set but neither {password} nor {password}_FILE is: basic auth needs both")]
    MissingPassword { user: String, password: String },
    #[error("the CA bundle '{}' holds no usable PEM certificate: {reason}", path.display())]
    CaBundle { path: PathBuf, reason: String },
    #[error("cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

impl HttpAuth {
    /// Reads credentials for `system` (`MESOS` or `MARATHON`) from the
    /// environment: `ROLLER_<SYSTEM>_TOKEN` (or `_TOKEN_FILE`) for a DC/OS
    /// token, else `ROLLER_<SYSTEM>_USER` with `ROLLER_<SYSTEM>_PASSWORD` (or
    /// `_PASSWORD_FILE`) for basic auth, else none.
    pub(crate) fn from_env(system: &str) -> Result<HttpAuth, HttpConfigError> {
        Self::from_lookup(system, |name| std::env::var(name).ok())
    }

    /// `from_env` with the environment passed in, for tests.
    pub(crate) fn from_lookup(
        system: &str,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<HttpAuth, HttpConfigError> {
        let name = |suffix: &str| format!("ROLLER_{system}_{suffix}");
        if let Some(token) = secret_from(&lookup, &name("TOKEN"))? {
            return Ok(HttpAuth::DcosToken(token));
        }
        let Some(user) = lookup(&name("USER")) else {
            return Ok(HttpAuth::None);
        };
        match secret_from(&lookup, &name("PASSWORD"))? {
            Some(password) => Ok(HttpAuth::Basic { user, password }),
            None => Err(HttpConfigError::MissingPassword {
                user: name("USER"),
                password: name("PASSWORD"),
            }),
        }
    }

    pub(crate) fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            HttpAuth::None => request,
            HttpAuth::Basic { user, password } => request.basic_auth(user, Some(password.expose())),
            HttpAuth::DcosToken(token) => request.header(
                reqwest::header::AUTHORIZATION,
                format!("token={}", token.expose()),
            ),
        }
    }
}

/// A secret from the environment variable `var`, or from the file named by
/// `var_FILE`; `None` when neither is set.
pub(crate) fn secret_from_env(var: &str) -> Result<Option<Secret>, HttpConfigError> {
    secret_from(&|name: &str| std::env::var(name).ok(), var)
}

/// A secret from variable `var`, or from the file named by `var_FILE`
/// (trailing newline removed).
pub(crate) fn secret_from(
    lookup: &impl Fn(&str) -> Option<String>,
    var: &str,
) -> Result<Option<Secret>, HttpConfigError> {
    let file_var = format!("{var}_FILE");
    let value = match (lookup(var), lookup(&file_var)) {
        (Some(value), _) => value,
        (None, Some(path)) => std::fs::read_to_string(&path)
            .map_err(|source| HttpConfigError::ReadFile {
                what: file_var.clone(),
                path: PathBuf::from(path),
                source,
            })?
            .trim_end_matches(['\n', '\r'])
            .to_string(),
        (None, None) => return Ok(None),
    };
    if value.is_empty() {
        return Err(HttpConfigError::Empty {
            what: var.to_string(),
        });
    }
    Ok(Some(Secret(value)))
}

/// Settings of one HTTP client.
#[derive(Clone, Debug)]
pub(crate) struct HttpSettings {
    /// The whole request, connection included: a server that accepts and
    /// never answers must not hang the roll.
    pub(crate) request_timeout: Duration,
    pub(crate) connect_timeout: Duration,
    /// Extra PEM roots (e.g. the DC/OS CA) on top of the system's.
    pub(crate) ca_bundle: Option<PathBuf>,
    pub(crate) auth: HttpAuth,
    /// A client already built from these same timeouts and CA bundle, to
    /// use rather than build another: each build loads the system's root
    /// certificates again (a few milliseconds each), and a process talks
    /// to Mesos, Marathon, the DC/OS services and its pager with the same
    /// ones. Authentication is per request, not in the client.
    pub(crate) shared: Option<reqwest::Client>,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            request_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(3),
            ca_bundle: None,
            auth: HttpAuth::None,
            shared: None,
        }
    }
}

impl HttpSettings {
    /// A client that never follows redirects by itself: a non-leader's 307
    /// is followed by the adapter, which keeps the credentials that reqwest
    /// would drop when the redirect changes host.
    pub(crate) fn client(&self) -> Result<reqwest::Client, HttpConfigError> {
        if let Some(client) = &self.shared {
            return Ok(client.clone());
        }
        let mut builder = reqwest::Client::builder()
            .timeout(self.request_timeout)
            .connect_timeout(self.connect_timeout)
            .redirect(reqwest::redirect::Policy::none());
        if let Some(path) = &self.ca_bundle {
            for certificate in read_ca_bundle(path)? {
                builder = builder.add_root_certificate(certificate);
            }
        }
        Ok(builder.build()?)
    }
}

fn read_ca_bundle(path: &Path) -> Result<Vec<reqwest::Certificate>, HttpConfigError> {
    let pem = std::fs::read(path).map_err(|source| HttpConfigError::ReadFile {
        what: "the CA bundle".to_string(),
        path: path.to_path_buf(),
        source,
    })?;
    let certificates =
        reqwest::Certificate::from_pem_bundle(&pem).map_err(|err| HttpConfigError::CaBundle {
            path: path.to_path_buf(),
            reason: err.to_string(),
        })?;
    if certificates.is_empty() {
        return Err(HttpConfigError::CaBundle {
            path: path.to_path_buf(),
            reason: "no certificate found".to_string(),
        });
    }
    Ok(certificates)
}

/// A reqwest error with its causes (reqwest's own text stops at "error
/// sending request").
pub(crate) fn describe_error(err: &reqwest::Error) -> String {
    let mut text = if err.is_timeout() {
        "timed out".to_string()
    } else if err.is_connect() {
        "cannot connect".to_string()
    } else {
        "request failed".to_string()
    };
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Parses an answer's JSON body. Its text is checked as UTF-8 once, whole,
/// then parsed as text: serde_json reading bytes checks every string it
/// keeps, key by key, which was a tenth of parsing Marathon's `/v2/apps`
/// of 20,000 tasks. A body that is not UTF-8 is refused either way.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    body: &[u8],
) -> Result<T, serde_json::Error> {
    let text = std::str::from_utf8(body).map_err(|err| {
        <serde_json::Error as serde::de::Error>::custom(format!(
            "the body is not UTF-8 text: {err}"
        ))
    })?;
    serde_json::from_str(text)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn a_secret_never_prints_its_value() {
        let auth = HttpAuth::Basic {
            user: "ops".into(),
            password: Secret::new("hunter2"),
        };
        assert!(!format!("{auth:?}").contains("hunter2"));
        assert_eq!(Secret::new("hunter2").to_string(), "<redacted>");
    }

    #[test]
    fn a_token_wins_over_basic_auth_and_is_read_from_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "abc.def\n").unwrap();
        let lookup = env(&[
            ("ROLLER_MARATHON_TOKEN_FILE", file.to_str().unwrap()),
            ("ROLLER_MARATHON_USER", "ops"),
        ]);
        assert_eq!(
            HttpAuth::from_lookup("MARATHON", lookup).unwrap(),
            HttpAuth::DcosToken(Secret::new("abc.def"))
        );
    }

    #[test]
    fn a_user_without_a_password_is_refused_naming_both_variables() {
        let err = HttpAuth::from_lookup("MESOS", env(&[("ROLLER_MESOS_USER", "ops")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ROLLER_MESOS_USER") && err.contains("ROLLER_MESOS_PASSWORD"));
    }

    #[test]
    fn no_credentials_means_no_auth() {
        assert_eq!(
            HttpAuth::from_lookup("MESOS", env(&[])).unwrap(),
            HttpAuth::None
        );
    }

    #[test]
    fn a_ca_bundle_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ca.pem");
        std::fs::write(&file, "not a certificate").unwrap();
        let settings = HttpSettings {
            ca_bundle: Some(file),
            ..HttpSettings::default()
        };
        let err = settings.client().unwrap_err().to_string();
        assert!(err.contains("ca.pem"), "{err}");
    }

    #[test]
    fn a_shared_client_is_handed_out_rather_than_another_built() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ca.pem");
        std::fs::write(&file, "not a certificate").unwrap();
        // Built anew, the bundle would be read and refused.
        let settings = HttpSettings {
            ca_bundle: Some(file),
            shared: Some(HttpSettings::default().client().unwrap()),
            ..HttpSettings::default()
        };
        assert!(settings.client().is_ok());
    }
}
