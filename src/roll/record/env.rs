//! The environment a roll runs against: the validated content of the
//! `--env ENV.toml` file, with `ROLLER_<KEY>` variables and command-line
//! flags layered on top (flags win, then variables, then the file).
//!
//! Parsing is strict: an unknown key, a missing required key or a bad value
//! is an `EnvError` naming the key and where it came from. No secret lives
//! here: the PagerDuty routing key and the webhook URL are read from their
//! own variables (see `crate::pager`), never from this file, and a key that
//! looks like a secret is refused without its value being repeated.
//!
//! `examples/roller.env.toml` documents every key; `resolve` is the one
//! place that reads them.

mod error;
mod groups;
mod max_surge;
mod secrets;
mod services;
mod tables;
mod value;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) use error::{EnvError, Origin};
pub(crate) use groups::GroupSpec;
pub(crate) use max_surge::MaxSurge;
use secrets::{find_secret, secret_instead};
pub(crate) use services::ServiceSpec;
pub(crate) use tables::{DEFAULT_MAX_GRACE_PERIOD, OtherTasksPolicy, PagerSettings, Timeouts};
#[cfg(test)]
pub(crate) use value::parse_duration;

use super::held::{ProtectedPolicy, StandbyPolicy};
use crate::roll::ports::auto_scaling::{AgentMatch, ScalingProcess};
use value::Raw;

/// Everything a roll needs to know about where it runs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Environment {
    /// The cluster's groups, in the order they are rolled (`[[group]]`
    /// tables; one, `asg`, when the file has none). Never empty: the
    /// first names the checkpoint (`asg()`).
    pub(crate) groups: Vec<GroupSpec>,
    /// AWS region; `None` leaves it to the AWS config chain.
    pub(crate) region: Option<String>,
    /// AWS profile; `None` leaves it to the AWS config chain.
    pub(crate) profile: Option<String>,
    /// An AWS endpoint override (the simulator, moto); `None` for AWS.
    pub(crate) aws_endpoint_url: Option<String>,
    /// Mesos master URLs (at least one).
    pub(crate) mesos: Vec<String>,
    /// Marathon URLs (at least one).
    pub(crate) marathon: Vec<String>,
    /// The DC/OS admin router (key `dcos_url`): SDK services are reached
    /// at `<dcos_url>/service/<name>/v1/…` with Marathon's credentials.
    pub(crate) dcos_url: Option<String>,
    /// SDK services reached at a URL of their own (`[[service]]` tables).
    pub(crate) services: Vec<ServiceSpec>,
    /// How an EC2 instance is matched to its Mesos agent (key `match`).
    pub(crate) agent_match: AgentMatch,
    /// Simulated seconds per real second: every wait, poll interval and
    /// timeout is divided by it. 1 outside the simulator; finite and > 0.
    pub(crate) time_scale: f64,
    /// How often a wait looks again (key `poll_interval`, default 5 s).
    pub(crate) poll_interval: Duration,
    /// How long a task of an app without health checks must have run
    /// before the roll counts it as up (key `settle_time`, default 30 s):
    /// Marathon calls it running the moment it starts.
    pub(crate) settle_time: Duration,
    /// How long the first moves onto the new agents must stay up before
    /// any old agent goes or another wave starts (key `bake`, flag
    /// `--bake`); `None`: twice the longest health-check interval of the
    /// apps moved, at least a minute. `0s` turns the bake off.
    pub(crate) bake: Option<Duration>,
    /// How many distinct apps, or distinct new agents, may fail on the
    /// new image before the roll counts it as bad (key `failure_limit`,
    /// flag `--failure-limit`); `None`: not given (a new roll takes 0, the
    /// first failure; a resume keeps its own).
    pub(crate) failure_limit: Option<u32>,
    /// How many instances above its size each group may hold during the
    /// roll (key `max_surge`, flag `--max-surge`: `6` or `10%`); `None`:
    /// the group's instance maintenance policy, else no cap.
    pub(crate) max_surge: Option<MaxSurge>,
    /// What the roll does with instances in Standby (key `standby`, flag
    /// `--standby`; default `wait`, as Instance Refresh).
    pub(crate) standby: StandbyPolicy,
    /// What the roll does with instances protected from scale-in (key
    /// `protected`, flag `--protected`; default `replace`).
    pub(crate) protected: ProtectedPolicy,
    /// What the roll does with other frameworks' tasks still on an emptied
    /// old agent after `timeouts.other_tasks` (key `other_tasks`; default
    /// `drain`).
    pub(crate) other_tasks: OtherTasksPolicy,
    /// The longest kill grace their tasks get from `DRAIN_AGENT` (key
    /// `max_grace_period`, default 10 min).
    pub(crate) max_grace_period: Duration,
    /// CloudWatch alarms whose ALARM state counts as a failure on the new
    /// image (key `alarms`, flag `--alarm`); `None`: not given (a new roll
    /// watches none; a resume keeps its own).
    pub(crate) alarms: Option<Vec<String>>,
    /// How long each kind of wait may last before the roll pauses (table
    /// `[timeouts]`).
    pub(crate) timeouts: Timeouts,
    /// Where pages go (table `[pager]`); secrets come from variables.
    pub(crate) pager: PagerSettings,
    /// Where checkpoints live (default `checkpoints`).
    pub(crate) checkpoint_dir: PathBuf,
    /// Where checkpoints live off the host, instead of `checkpoint_dir`:
    /// `s3://bucket` or `s3://bucket/folder` (key `checkpoint_store`); the
    /// checkpoint is `<folder>/<asg>.json`, its ETag the run's lease.
    pub(crate) checkpoint_store: Option<String>,
    /// The S3 endpoint for `checkpoint_store` and `--checkpoint s3://…`
    /// (key `checkpoint_endpoint_url`: moto, an S3-compatible store);
    /// `None` for AWS (or `AWS_ENDPOINT_URL_S3`).
    pub(crate) checkpoint_endpoint_url: Option<String>,
    /// PEM certificates trusted for Mesos, Marathon and the pager on top
    /// of the system's roots (key `ca_bundle`, e.g. the DC/OS cluster CA).
    /// TLS is always verified; there is no way to turn that off.
    pub(crate) ca_bundle: Option<PathBuf>,
    /// The scaling processes suspended for the roll (key
    /// `suspend_processes`; default AZRebalance, AlarmNotification,
    /// ScheduledActions). Never empty.
    pub(crate) suspend_processes: Vec<ScalingProcess>,
}

/// `poll_interval` when none is given: often enough that a roll of
/// ~4 minutes per agent notices a change within seconds, rarely enough to
/// be no load on Mesos and Marathon.
pub(crate) const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// `settle_time` when none is given: longer than a task that crashes on
/// start (a bad image, a missing dependency) takes to crash, short enough
/// to cost a healthy roll little.
pub(crate) const DEFAULT_SETTLE_TIME: Duration = Duration::from_secs(30);

/// `checkpoint_dir` when none is given, relative to the working directory.
pub(crate) const DEFAULT_CHECKPOINT_DIR: &str = "checkpoints";

/// `suspend_processes` when none is given: AZRebalance (else terminating
/// one instance can make AWS launch in one AZ and terminate in another),
/// AlarmNotification and ScheduledActions (else a scaling policy or a
/// schedule changes the desired capacity under the roll), InstanceRefresh
/// (else a refresh started during the roll replaces instances without
/// draining their agents).
pub(crate) fn default_suspend_processes() -> Vec<ScalingProcess> {
    vec![
        ScalingProcess::AZRebalance,
        ScalingProcess::AlarmNotification,
        ScalingProcess::ScheduledActions,
        ScalingProcess::InstanceRefresh,
    ]
}

/// Every key the environment knows, dotted inside a table. A variable or
/// flag is read only for these, so other `ROLLER_*` variables (secrets,
/// test settings) are never looked at.
const KEYS: &[&str] = &[
    "asg",
    "region",
    "profile",
    "aws_endpoint_url",
    "mesos",
    "marathon",
    "dcos_url",
    "match",
    "time_scale",
    "poll_interval",
    "settle_time",
    "bake",
    "failure_limit",
    "max_surge",
    "standby",
    "protected",
    "other_tasks",
    "max_grace_period",
    "alarms",
    "checkpoint_dir",
    "checkpoint_store",
    "checkpoint_endpoint_url",
    "ca_bundle",
    "suspend_processes",
    "complete_lifecycle_hooks",
    "timeouts.scale_up",
    "timeouts.deregister",
    "timeouts.healthy",
    "timeouts.task_move",
    "timeouts.retry",
    "timeouts.operator",
    "timeouts.other_tasks",
    "timeouts.pod_replace",
    "pager.pagerduty",
    "pager.pagerduty_events_url",
    "pager.webhook",
    "pager.source",
];

/// The tables of the file; their keys are in `KEYS` as `table.key`.
const TABLES: &[&str] = &["timeouts", "pager"];

impl Environment {
    /// The first group's ASG: the group of a one-group environment, the
    /// one a cluster's checkpoint is named after.
    pub(crate) fn asg(&self) -> &str {
        self.groups.first().map_or("", |g| g.asg.as_str())
    }

    /// The environment from, lowest precedence first: the defaults, the
    /// file (`file` is its path, for messages, and its text), the
    /// `ROLLER_<KEY>` variables `vars` looks up, and `flags`.
    ///
    /// A variable is named after its key, upper-cased, a table's name
    /// joined with `_`: `ROLLER_ASG`, `ROLLER_TIMEOUTS_HEALTHY`,
    /// `ROLLER_PAGER_SOURCE`. An empty variable counts as unset (shells
    /// export empty ones). Lists are comma-separated in variables and flags.
    ///
    /// A flag is `(key, value)`, the key as in the file (`time_scale`,
    /// `timeouts.healthy`) or as a long flag without its dashes
    /// (`time-scale`, `timeouts-healthy`); messages call it
    /// `--time-scale`. When a key is given twice, the last one wins.
    ///
    /// Every layer is checked, not only the winning one: a wrong value in
    /// the file is an error even when a flag overrides it, so the file is
    /// never found broken on the day the flag is dropped.
    pub(crate) fn resolve(
        file: Option<(&Path, &str)>,
        vars: &dyn Fn(&str) -> Option<String>,
        flags: &[(&str, String)],
    ) -> Result<Environment, EnvError> {
        let file = match file {
            Some((path, text)) => {
                let table = parse_file(path, text)?;
                check_file_keys(path, &table)?;
                Some((path, table))
            }
            None => None,
        };
        check_flag_keys(flags)?;
        let listed = match &file {
            Some((path, table)) => groups::read(path, table)?,
            None => Vec::new(),
        };
        let services = match &file {
            Some((path, table)) => services::read(path, table)?,
            None => Vec::new(),
        };
        let layers = Layers { file, vars, flags };
        let mut groups = groups::resolve(listed, &layers)?;
        // Hooks named at the top level are roller's in every group.
        let shared = layers
            .get("complete_lifecycle_hooks", value::hook_names)?
            .unwrap_or_default();
        for group in &mut groups {
            for hook in shared.iter().rev() {
                if !group.complete_lifecycle_hooks.contains(hook) {
                    group.complete_lifecycle_hooks.insert(0, hook.clone());
                }
            }
        }
        Ok(Environment {
            groups,
            region: layers.get("region", value::text)?,
            profile: layers.get("profile", value::text)?,
            aws_endpoint_url: layers.get("aws_endpoint_url", value::url)?,
            mesos: layers.required("mesos", "the Mesos master URLs", value::urls)?,
            marathon: layers.required("marathon", "the Marathon URLs", value::urls)?,
            dcos_url: layers.get("dcos_url", value::url)?,
            services,
            agent_match: layers.get("match", value::agent_match)?.unwrap_or_default(),
            time_scale: layers.get("time_scale", value::time_scale)?.unwrap_or(1.0),
            poll_interval: layers
                .get("poll_interval", value::duration)?
                .unwrap_or(DEFAULT_POLL_INTERVAL),
            settle_time: layers
                .get("settle_time", value::duration)?
                .unwrap_or(DEFAULT_SETTLE_TIME),
            bake: layers.get("bake", value::duration)?,
            failure_limit: layers.get("failure_limit", value::count)?,
            max_surge: layers.get("max_surge", value::max_surge)?,
            standby: layers.get("standby", value::standby)?.unwrap_or_default(),
            protected: layers
                .get("protected", value::protected)?
                .unwrap_or_default(),
            other_tasks: layers
                .get("other_tasks", value::other_tasks)?
                .unwrap_or_default(),
            max_grace_period: layers
                .get("max_grace_period", value::duration)?
                .unwrap_or(DEFAULT_MAX_GRACE_PERIOD),
            alarms: layers.get("alarms", value::alarm_names)?,
            timeouts: layers.timeouts()?,
            pager: layers.pager()?,
            checkpoint_dir: layers
                .get("checkpoint_dir", value::path)?
                .unwrap_or_else(|| PathBuf::from(DEFAULT_CHECKPOINT_DIR)),
            checkpoint_store: layers.get("checkpoint_store", value::s3_prefix)?,
            checkpoint_endpoint_url: layers.get("checkpoint_endpoint_url", value::url)?,
            ca_bundle: layers.get("ca_bundle", value::path)?,
            suspend_processes: layers
                .get("suspend_processes", value::processes)?
                .unwrap_or_else(default_suspend_processes),
        })
    }
}

/// The three layers above the defaults.
struct Layers<'a> {
    file: Option<(&'a Path, toml::Table)>,
    vars: &'a dyn Fn(&str) -> Option<String>,
    flags: &'a [(&'a str, String)],
}

impl Layers<'_> {
    /// The value of `key` from the highest layer that has one, after
    /// checking it in every layer that has one.
    fn get<T>(
        &self,
        key: &str,
        read: fn(Raw<'_>) -> Result<T, value::Expected>,
    ) -> Result<Option<T>, EnvError> {
        debug_assert!(KEYS.contains(&key), "`{key}` is missing from KEYS");
        let check = |origin: Origin, raw: Raw<'_>| {
            read(raw).map_err(|expected| EnvError::BadValue {
                key: key.to_string(),
                origin,
                expected,
                given: raw.given(),
            })
        };
        let mut found = None;
        if let Some((path, table)) = &self.file
            && let Some(value) = file_value(table, key)
        {
            found = Some(check(Origin::File(path.to_path_buf()), Raw::Toml(value))?);
        }
        let variable = variable_name(key);
        if let Some(text) = (self.vars)(&variable).filter(|text| !text.is_empty()) {
            found = Some(check(Origin::Variable(variable), Raw::Text(&text))?);
        }
        for (_, text) in self
            .flags
            .iter()
            .filter(|(name, _)| known_flag(name) == Some(key))
        {
            found = Some(check(Origin::Flag(flag_name(key)), Raw::Text(text))?);
        }
        Ok(found)
    }

    /// Where `key` was given last (a flag, else a variable, else the
    /// file), with its value for a message; `None` when nowhere.
    fn origin_of(&self, key: &str) -> Option<(Origin, String)> {
        if let Some((_, text)) = self
            .flags
            .iter()
            .rev()
            .find(|(name, _)| known_flag(name) == Some(key))
        {
            return Some((Origin::Flag(flag_name(key)), Raw::Text(text).given()));
        }
        let variable = variable_name(key);
        if let Some(text) = (self.vars)(&variable).filter(|text| !text.is_empty()) {
            return Some((Origin::Variable(variable), Raw::Text(&text).given()));
        }
        let (path, table) = self.file.as_ref()?;
        let value = file_value(table, key)?;
        Some((Origin::File(path.to_path_buf()), Raw::Toml(value).given()))
    }

    /// Table `[timeouts]`, a default for each key it leaves out.
    fn timeouts(&self) -> Result<Timeouts, EnvError> {
        let timeout = |key: &str, default: Duration| -> Result<Duration, EnvError> {
            Ok(self.get(key, value::duration)?.unwrap_or(default))
        };
        Ok(Timeouts {
            scale_up: timeout("timeouts.scale_up", Timeouts::DEFAULT.scale_up)?,
            deregister: timeout("timeouts.deregister", Timeouts::DEFAULT.deregister)?,
            healthy: timeout("timeouts.healthy", Timeouts::DEFAULT.healthy)?,
            task_move: timeout("timeouts.task_move", Timeouts::DEFAULT.task_move)?,
            retry: timeout("timeouts.retry", Timeouts::DEFAULT.retry)?,
            operator: timeout("timeouts.operator", Timeouts::DEFAULT.operator)?,
            other_tasks: timeout("timeouts.other_tasks", Timeouts::DEFAULT.other_tasks)?,
            pod_replace: timeout("timeouts.pod_replace", Timeouts::DEFAULT.pod_replace)?,
        })
    }

    /// Table `[pager]`: where pages go, nothing sent unless asked.
    fn pager(&self) -> Result<PagerSettings, EnvError> {
        Ok(PagerSettings {
            pagerduty: self
                .get("pager.pagerduty", value::boolean)?
                .unwrap_or(false),
            pagerduty_events_url: self.get("pager.pagerduty_events_url", value::url)?,
            webhook: self.get("pager.webhook", value::boolean)?.unwrap_or(false),
            source: self.get("pager.source", value::text)?,
        })
    }

    fn required<T>(
        &self,
        key: &str,
        meaning: &'static str,
        read: fn(Raw<'_>) -> Result<T, value::Expected>,
    ) -> Result<T, EnvError> {
        self.get(key, read)?.ok_or_else(|| EnvError::MissingKey {
            key: key.to_string(),
            meaning,
            file: self.file.as_ref().map(|(path, _)| path.to_path_buf()),
        })
    }
}

/// `ROLLER_` and the key upper-cased, a table joined with `_`.
fn variable_name(key: &str) -> String {
    format!("ROLLER_{}", key.replace('.', "_").to_ascii_uppercase())
}

/// The long flag of a key, without its dashes: `timeouts-healthy`.
fn flag_name(key: &str) -> String {
    match key {
        // One name a flag, repeated (`--alarm A --alarm B`).
        "alarms" => "alarm".to_string(),
        _ => key.replace(['.', '_'], "-"),
    }
}

/// The key a flag sets, whether named as in the file or as a flag.
fn known_flag(name: &str) -> Option<&'static str> {
    KEYS.iter()
        .copied()
        .find(|key| *key == name || flag_name(key) == name)
}

/// The file's value for a (possibly dotted) key; the tables were checked
/// to be tables before.
fn file_value<'t>(table: &'t toml::Table, key: &str) -> Option<&'t toml::Value> {
    match key.split_once('.') {
        Some((outer, inner)) => table.get(outer)?.as_table()?.get(inner),
        None => table.get(key),
    }
}

fn parse_file(path: &Path, text: &str) -> Result<toml::Table, EnvError> {
    text.parse::<toml::Table>().map_err(|err| EnvError::Syntax {
        path: path.to_path_buf(),
        at: err.span().map(|span| line_and_column(text, span.start)),
        message: err.message().trim_end().to_string(),
    })
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// Secrets first (so a secret under an unknown name is called a secret),
/// then unknown keys and tables that are not tables.
fn check_file_keys(path: &Path, table: &toml::Table) -> Result<(), EnvError> {
    let origin = || Origin::File(path.to_path_buf());
    if let Some((key, instead)) = find_secret(table, "") {
        return Err(EnvError::SecretKey {
            key,
            origin: origin(),
            instead,
        });
    }
    for (name, value) in table {
        if TABLES.contains(&name.as_str()) {
            let Some(inner) = value.as_table() else {
                return Err(EnvError::BadValue {
                    key: name.clone(),
                    origin: origin(),
                    expected: format!("a table [{name}]"),
                    given: Raw::Toml(value).given(),
                });
            };
            for inner_name in inner.keys() {
                let key = format!("{name}.{inner_name}");
                if !KEYS.contains(&key.as_str()) {
                    return Err(EnvError::UnknownKey {
                        key,
                        origin: origin(),
                        known: known_in(Some(name)),
                    });
                }
            }
        } else if !KEYS.contains(&name.as_str()) && name != groups::KEY && name != services::KEY {
            return Err(EnvError::UnknownKey {
                key: name.clone(),
                origin: origin(),
                known: known_in(None),
            });
        }
    }
    Ok(())
}

/// A flag the CLI passes for a key that does not exist is refused like an
/// unknown key in the file: silently dropping it would roll with a default.
fn check_flag_keys(flags: &[(&str, String)]) -> Result<(), EnvError> {
    for (name, _) in flags {
        if let Some(instead) = secret_instead(name) {
            return Err(EnvError::SecretKey {
                key: name.to_string(),
                origin: Origin::Flag(flag_name(name)),
                instead,
            });
        }
        if known_flag(name).is_none() {
            return Err(EnvError::UnknownKey {
                key: name.to_string(),
                origin: Origin::Flag(flag_name(name)),
                known: KEYS.join(", "),
            });
        }
    }
    Ok(())
}

/// The keys allowed at the top level (`None`, tables shown as `[name]`) or
/// in a table.
fn known_in(table: Option<&str>) -> String {
    match table {
        None => KEYS
            .iter()
            .filter(|key| !key.contains('.'))
            .map(|key| key.to_string())
            .chain(TABLES.iter().map(|name| format!("[{name}]")))
            .chain(std::iter::once(format!("[[{}]]", groups::KEY)))
            .chain(std::iter::once(format!("[[{}]]", services::KEY)))
            .collect::<Vec<_>>()
            .join(", "),
        Some(table) => KEYS
            .iter()
            .filter_map(|key| key.strip_prefix(table)?.strip_prefix('.'))
            .collect::<Vec<_>>()
            .join(", "),
    }
}
