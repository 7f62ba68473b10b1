//! What the roll's commands (`run`, `status`, `abandon`) share: the
//! environment resolved from its file, the `ROLLER_*` variables and flags;
//! where its checkpoint is; the async runtime; and the real adapters
//! (AWS, Mesos, Marathon, pager) built from it, credentials read from the
//! process environment only.

use std::path::{Path, PathBuf};

use super::error::CliError;
use crate::aws::{AwsAutoScaling, AwsSettings, S3Checkpoint, S3Location};
use crate::dcos::ServicesClient;
use crate::http::{HttpAuth, HttpSettings};
use crate::marathon::MarathonClient;
use crate::mesos::{MesosClient, MesosSettings};
use crate::pager::{DEFAULT_EVENTS_URL, PagerDuty, Sink, Sinks, Webhook};
use crate::roll::ports::PortSet;
use crate::roll::record::checkpoint::{Checkpoint, CheckpointStore};
use crate::roll::record::env::Environment;

/// The environment: the file at `path`, then `ROLLER_*` variables, then
/// `flags` (key, value as typed).
pub(super) fn environment_from(
    path: &Path,
    flags: &[(&str, String)],
) -> Result<Environment, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| {
        CliError::Env(crate::roll::record::env::EnvError::Read {
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

/// `--checkpoint` when given, else `<checkpoint_dir>/<asg>.json`: for
/// the commands that read or write a local checkpoint only. One kept in S3
/// (`--checkpoint s3://…` or `checkpoint_store`) is refused by name,
/// never taken for a file that is not there.
pub(super) fn checkpoint_path(
    explicit: &Option<PathBuf>,
    env: &Environment,
    command: &str,
) -> Result<PathBuf, CliError> {
    let in_s3 = match explicit {
        Some(path) => S3Location::is_s3(&path.to_string_lossy()),
        None => env.checkpoint_store.is_some(),
    };
    if in_s3 {
        return Err(CliError::BadFlag(format!(
            "`roller {command}` works on a local checkpoint file, and this one is in S3: copy it \
             down (`aws s3 cp s3://… ./asg.json`), run `roller {command} --checkpoint ./asg.json`, \
             and copy it back (or delete the S3 object once the roll is abandoned)"
        )));
    }
    Ok(explicit
        .clone()
        .unwrap_or_else(|| Checkpoint::default_path(&env.checkpoint_dir, env.asg())))
}

/// Where `roller run` and `roller status` keep the checkpoint:
/// `--checkpoint` (a path or `s3://bucket/key`), else the env file's
/// `checkpoint_store` (`s3://bucket[/folder]`, the object
/// `<folder>/<asg>.json`), else `<checkpoint_dir>/<asg>.json`.
pub(super) async fn checkpoint_store(
    explicit: &Option<PathBuf>,
    env: &Environment,
) -> Result<CheckpointStore, CliError> {
    let location = match explicit {
        Some(path) if S3Location::is_s3(&path.to_string_lossy()) => {
            S3Location::parse(&path.to_string_lossy())
                .map_err(|e| CliError::BadFlag(format!("--checkpoint: {e}")))?
        }
        Some(path) => return Ok(CheckpointStore::file(path.clone())),
        None => match &env.checkpoint_store {
            Some(prefix) => S3Location::for_group(prefix, env.asg()).map_err(CliError::BadFlag)?,
            None => {
                return Ok(CheckpointStore::file(Checkpoint::default_path(
                    &env.checkpoint_dir,
                    env.asg(),
                )));
            }
        },
    };
    s3_store(
        location,
        AwsSettings {
            region: env.region.clone(),
            profile: env.profile.clone(),
            endpoint_url: env.checkpoint_endpoint_url.clone(),
            ..AwsSettings::default()
        },
    )
    .await
}

/// `--checkpoint` without an env file (`roller status --checkpoint …`):
/// an S3 object is reached with the AWS chain's region, profile and
/// endpoint (`AWS_REGION`, `AWS_PROFILE`, `AWS_ENDPOINT_URL_S3`).
pub(super) async fn checkpoint_store_alone(
    explicit: Option<&PathBuf>,
) -> Result<CheckpointStore, CliError> {
    let Some(path) = explicit else {
        return Err(CliError::BadFlag(
            "give --env ENV.toml or --checkpoint PATH".to_string(),
        ));
    };
    let text = path.to_string_lossy();
    if !S3Location::is_s3(&text) {
        return Ok(CheckpointStore::file(path.clone()));
    }
    let location =
        S3Location::parse(&text).map_err(|e| CliError::BadFlag(format!("--checkpoint: {e}")))?;
    s3_store(location, AwsSettings::default()).await
}

async fn s3_store(
    location: S3Location,
    settings: AwsSettings,
) -> Result<CheckpointStore, CliError> {
    let object = S3Checkpoint::connect(&settings, location)
        .await
        .map_err(|e| CliError::Adapter(format!("S3 checkpoint: {e}")))?;
    Ok(CheckpointStore::object(Box::new(object)))
}

pub(super) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    crate::roll::run::runtime().map_err(CliError::Runtime)
}

/// The real adapters, one of each.
pub(super) struct Clients {
    pub(super) aws: AwsAutoScaling,
    pub(super) mesos: MesosClient,
    pub(super) marathon: MarathonClient,
    pub(super) pager: Sinks,
    pub(super) services: ServicesClient,
}

impl Clients {
    /// The roll's ports, borrowed from these clients.
    pub(super) fn ports(
        &self,
    ) -> PortSet<'_, AwsAutoScaling, MesosClient, MarathonClient, Sinks, ServicesClient> {
        PortSet {
            aws: &self.aws,
            mesos: &self.mesos,
            marathon: &self.marathon,
            pager: &self.pager,
            services: &self.services,
        }
    }
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
    // One HTTP client for Mesos, Marathon, the services and the pager (the
    // same timeouts and roots; each system's credentials go with its
    // requests): the system's root certificates loaded once, not four
    // times, before the roll's first call.
    let base = HttpSettings {
        ca_bundle: env.ca_bundle.clone(),
        ..HttpSettings::default()
    };
    let client = base
        .client()
        .map_err(|e| CliError::Adapter(format!("HTTP client: {e}")))?;
    let http = |system: &str| -> Result<HttpSettings, CliError> {
        Ok(HttpSettings {
            auth: HttpAuth::from_env(system)
                .map_err(|e| CliError::Adapter(format!("{system} credentials: {e}")))?,
            shared: Some(client.clone()),
            ..base.clone()
        })
    };
    let mesos = MesosClient::new(MesosSettings {
        http: http("MESOS")?,
        ..MesosSettings::new(env.mesos.clone())
    })
    .map_err(|e| CliError::Adapter(format!("Mesos: {e}")))?;
    let marathon = MarathonClient::new(&env.marathon, &http("MARATHON")?)
        .map_err(|e| CliError::Adapter(format!("Marathon: {e}")))?
        .with_event_stream();
    // Behind the admin router, the token that reaches Marathon reaches the
    // services too.
    let listed: Vec<(String, String)> = env
        .services
        .iter()
        .map(|s| (s.name.clone(), s.url.clone()))
        .collect();
    let services = ServicesClient::new(env.dcos_url.as_deref(), &listed, &http("MARATHON")?)
        .map_err(|e| CliError::Adapter(format!("DC/OS services: {e}")))?;
    let mut sinks = Vec::new();
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
        services,
    })
}
