//! What the roll's commands (`run`, `status`, `abandon`) share: the
//! environment resolved from its file, the `ROLLER_*` variables and flags;
//! where its checkpoint is; the async runtime; and the real adapters
//! (AWS, Mesos, Marathon, pager) built from it, credentials read from the
//! process environment only.

use std::path::{Path, PathBuf};

use super::error::CliError;
use crate::aws::AwsSettings;
use crate::http::{HttpAuth, HttpSettings};
use crate::marathon::MarathonClient;
use crate::mesos::{MesosClient, MesosSettings};
use crate::pager::{DEFAULT_EVENTS_URL, PagerDuty, Sink, Sinks, Webhook};
use crate::roll::checkpoint::Checkpoint;
use crate::roll::env::Environment;

/// The environment: the file at `path`, then `ROLLER_*` variables, then
/// `flags` (key, value as typed).
pub(super) fn environment_from(
    path: &Path,
    flags: &[(&str, String)],
) -> Result<Environment, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| {
        CliError::Env(crate::roll::env::EnvError::Read {
            path: path.to_path_buf(),
            source,
        })
    })?;
    Environment::resolve(
        Some((path, &text)),
        &|name: &str| std::env::var(name).ok(),
        flags,
    )
    .map_err(CliError::Env)
}

/// `--checkpoint` when given, else `<checkpoint_dir>/<asg>.json`.
pub(super) fn checkpoint_path(explicit: &Option<PathBuf>, env: &Environment) -> PathBuf {
    explicit
        .clone()
        .unwrap_or_else(|| Checkpoint::default_path(&env.checkpoint_dir, &env.asg))
}

pub(super) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    crate::roll::run::runtime().map_err(CliError::Runtime)
}

/// The real adapters, one of each.
pub(super) struct Clients {
    pub(super) aws: crate::aws::AwsAutoScaling,
    pub(super) mesos: MesosClient,
    pub(super) marathon: MarathonClient,
    pub(super) pager: Sinks,
}

pub(super) async fn clients(env: &Environment) -> Result<Clients, CliError> {
    let aws = AwsSettings {
        region: env.region.clone(),
        profile: env.profile.clone(),
        endpoint_url: env.aws_endpoint_url.clone(),
        ..AwsSettings::default()
    }
    .connect()
    .await
    .map_err(|e| CliError::Adapter(format!("AWS: {e}")))?;
    let http = |system: &str| -> Result<HttpSettings, CliError> {
        Ok(HttpSettings {
            auth: HttpAuth::from_env(system)
                .map_err(|e| CliError::Adapter(format!("{system} credentials: {e}")))?,
            ca_bundle: env.ca_bundle.clone(),
            ..HttpSettings::default()
        })
    };
    let mesos = MesosClient::new(MesosSettings {
        http: http("MESOS")?,
        ..MesosSettings::new(env.mesos.clone())
    })
    .map_err(|e| CliError::Adapter(format!("Mesos: {e}")))?;
    let marathon = MarathonClient::new(&env.marathon, &http("MARATHON")?)
        .map_err(|e| CliError::Adapter(format!("Marathon: {e}")))?;
    let mut sinks = Vec::new();
    let client = HttpSettings {
        ca_bundle: env.ca_bundle.clone(),
        ..HttpSettings::default()
    }
    .client()
    .map_err(|e| CliError::Adapter(format!("pager: {e}")))?;
    if env.pager.pagerduty {
        let key = PagerDuty::routing_key_from_env()
            .map_err(|e| CliError::Adapter(format!("PagerDuty: {e}")))?
            .ok_or_else(|| {
                CliError::Adapter(
                    "[pager] pagerduty = true but neither ROLLER_PAGERDUTY_ROUTING_KEY nor ROLLER_PAGERDUTY_ROUTING_KEY_FILE is set".to_string(),
                )
            })?;
        let url = env
            .pager
            .pagerduty_events_url
            .clone()
            .unwrap_or_else(|| DEFAULT_EVENTS_URL.to_string());
        sinks.push(Sink::PagerDuty(PagerDuty::new(client.clone(), url, key)));
    }
    if env.pager.webhook {
        let url = crate::http::secret_from_env("ROLLER_WEBHOOK_URL")
            .map_err(|e| CliError::Adapter(format!("webhook: {e}")))?
            .ok_or_else(|| {
                CliError::Adapter(
                    "[pager] webhook = true but neither ROLLER_WEBHOOK_URL nor ROLLER_WEBHOOK_URL_FILE is set".to_string(),
                )
            })?;
        sinks.push(Sink::Webhook(Webhook::new(client, url)));
    }
    Ok(Clients {
        aws,
        mesos,
        marathon,
        pager: Sinks(sinks),
    })
}
