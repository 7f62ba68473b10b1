//! The forms a value of the environment takes (text, URL, list, duration,
//! process names…), read alike from the file, a variable or a flag. Each
//! reader returns, when it refuses, the form it expected: the caller adds
//! the key, the origin and the value given.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use reqwest::Url;

use super::tables::OtherTasksPolicy;
use crate::roll::ports::auto_scaling::{AgentMatch, ScalingProcess};
use crate::roll::record::held::{ProtectedPolicy, StandbyPolicy};

/// A value as given: a TOML value from the file, or the text of a variable
/// or flag (where a list is comma-separated).
#[derive(Clone, Copy, Debug)]
pub(super) enum Raw<'a> {
    Toml(&'a toml::Value),
    Text(&'a str),
}

/// What a reader expected, when it refused.
pub(super) type Expected = String;

/// The Auto Scaling processes AWS knows, in its documentation's order.
/// Anything else in `suspend_processes` is a typo AWS would refuse mid-roll.
pub(super) const PROCESS_NAMES: &[&str] = &[
    "Launch",
    "Terminate",
    "AddToLoadBalancer",
    "AlarmNotification",
    "AZRebalance",
    "HealthCheck",
    "InstanceRefresh",
    "ReplaceUnhealthy",
    "ScheduledActions",
];

/// Longer values are cut: an error message is no place for a whole table.
const GIVEN_MAX_CHARS: usize = 100;

impl<'a> Raw<'a> {
    /// A TOML string or a variable's or flag's text.
    fn as_text(self) -> Option<&'a str> {
        match self {
            Raw::Toml(value) => value.as_str(),
            Raw::Text(text) => Some(text),
        }
    }

    /// The value for an error message: as written, cut short, and with any
    /// URL credentials removed so a message never repeats a password.
    pub(super) fn given(&self) -> String {
        let shown = match self {
            Raw::Toml(value) => value.to_string(),
            Raw::Text(text) => format!("{text:?}"),
        };
        let shown = without_userinfo(&shown);
        if shown.chars().count() > GIVEN_MAX_CHARS {
            let cut: String = shown.chars().take(GIVEN_MAX_CHARS).collect();
            format!("{cut}…")
        } else {
            shown
        }
    }
}

/// A non-empty string.
pub(super) fn text(raw: Raw<'_>) -> Result<String, Expected> {
    let expected = || "a non-empty string".to_string();
    let text = raw.as_text().ok_or_else(expected)?.trim();
    if text.is_empty() {
        return Err(expected());
    }
    Ok(text.to_string())
}

/// A path (kept as given: relative paths are relative to the working
/// directory, like the default `checkpoints`).
pub(super) fn path(raw: Raw<'_>) -> Result<PathBuf, Expected> {
    text(raw)
        .map(PathBuf::from)
        .map_err(|_| "a non-empty path".to_string())
}

/// `s3://bucket` or `s3://bucket/folder`.
pub(super) fn s3_prefix(raw: Raw<'_>) -> Result<String, Expected> {
    let expected = || "an S3 URL: s3://bucket or s3://bucket/folder".to_string();
    let text = text(raw).map_err(|_| expected())?;
    match text.strip_prefix("s3://") {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') => Ok(text),
        _ => Err(expected()),
    }
}

/// An http(s) URL with a host and no credentials.
pub(super) fn url(raw: Raw<'_>) -> Result<String, Expected> {
    let text = text(raw).map_err(|_| "an http(s) URL as a string".to_string())?;
    http_url(&text)?;
    Ok(text)
}

/// A non-empty list of http(s) URLs.
pub(super) fn urls(raw: Raw<'_>) -> Result<Vec<String>, Expected> {
    let expected = || {
        "a non-empty list of http(s) URLs (in the file [\"http://host:port\", …], in a variable or flag comma-separated)"
            .to_string()
    };
    let urls = list(raw).ok_or_else(expected)?;
    if urls.is_empty() {
        return Err(expected());
    }
    for url in &urls {
        http_url(url)
            .map_err(|why| format!("{}; '{}' is not: {why}", expected(), without_userinfo(url)))?;
    }
    Ok(urls)
}

/// `ip`, `dns` or `attribute:NAME`.
pub(super) fn agent_match(raw: Raw<'_>) -> Result<AgentMatch, Expected> {
    let expected = || "ip, dns or attribute:NAME".to_string();
    let text = text(raw).map_err(|_| expected())?;
    AgentMatch::from_str(&text).map_err(|_| expected())
}

/// A finite number > 0.
pub(super) fn time_scale(raw: Raw<'_>) -> Result<f64, Expected> {
    let expected = || "a finite number > 0 (simulated seconds per real second)".to_string();
    let scale = match raw {
        Raw::Toml(toml::Value::Float(scale)) => *scale,
        // Exact for any sensible scale; a huge integer only loses precision.
        Raw::Toml(toml::Value::Integer(scale)) => *scale as f64,
        Raw::Text(text) => text.trim().parse().map_err(|_| expected())?,
        Raw::Toml(_) => return Err(expected()),
    };
    if scale.is_finite() && scale > 0.0 {
        Ok(scale)
    } else {
        Err(expected())
    }
}

/// `ignore`, `wait` or `terminate` (`standby`).
pub(super) fn standby(raw: Raw<'_>) -> Result<StandbyPolicy, Expected> {
    let expected = || StandbyPolicy::NAMES.join(", ");
    text(raw)
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(expected)
}

/// `replace`, `ignore` or `wait` (`protected`).
pub(super) fn protected(raw: Raw<'_>) -> Result<ProtectedPolicy, Expected> {
    let expected = || ProtectedPolicy::NAMES.join(", ");
    text(raw)
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(expected)
}

/// `drain` or `pause` (`other_tasks`).
pub(super) fn other_tasks(raw: Raw<'_>) -> Result<OtherTasksPolicy, Expected> {
    let expected = || OtherTasksPolicy::NAMES.join(", ");
    text(raw)
        .ok()
        .and_then(|t| OtherTasksPolicy::parse(&t))
        .ok_or_else(expected)
}

/// A count ≥ 0 (`failure_limit`): a whole number, in the file or as text.
pub(super) fn count(raw: Raw<'_>) -> Result<u32, Expected> {
    let expected = || "a whole number ≥ 0".to_string();
    match raw {
        Raw::Toml(toml::Value::Integer(n)) => u32::try_from(*n).map_err(|_| expected()),
        Raw::Text(text) => text.trim().parse().map_err(|_| expected()),
        Raw::Toml(_) => Err(expected()),
    }
}

/// A surge cap: a number of instances (at least 1) or a share of the
/// group's size, `6` or `"10%"`.
pub(super) fn max_surge(raw: Raw<'_>) -> Result<super::MaxSurge, Expected> {
    let text = match raw {
        Raw::Toml(toml::Value::Integer(n)) => n.to_string(),
        Raw::Toml(toml::Value::String(s)) => s.clone(),
        Raw::Text(text) => text.to_string(),
        Raw::Toml(_) => String::new(),
    };
    super::MaxSurge::parse(&text).map_err(|_| {
        "a number of instances (at least 1) or a share of the group's size (1% to 100%), \
         such as 6 or \"10%\""
            .to_string()
    })
}

/// A duration > 0: a whole number of seconds, or text such as "90s",
/// "15m", "1h", "1h30m".
pub(super) fn duration(raw: Raw<'_>) -> Result<Duration, Expected> {
    let expected =
        || "a duration > 0: whole seconds, or text like \"90s\", \"15m\", \"1h30m\"".to_string();
    let duration = match raw {
        Raw::Toml(toml::Value::Integer(seconds)) => {
            Duration::from_secs(u64::try_from(*seconds).map_err(|_| expected())?)
        }
        _ => raw
            .as_text()
            .and_then(parse_duration)
            .ok_or_else(expected)?,
    };
    if duration.is_zero() {
        return Err(expected());
    }
    Ok(duration)
}

/// `true` or `false`.
pub(super) fn boolean(raw: Raw<'_>) -> Result<bool, Expected> {
    match raw {
        Raw::Toml(toml::Value::Boolean(value)) => Ok(*value),
        Raw::Text(text) if text.trim() == "true" => Ok(true),
        Raw::Text(text) if text.trim() == "false" => Ok(false),
        _ => Err("true or false".to_string()),
    }
}

/// A list of CloudWatch alarm names (1 to 255 characters, no control
/// characters, as CloudWatch allows them; no comma, which separates them
/// in a variable or flag), each once; an empty list is none.
pub(super) fn alarm_names(raw: Raw<'_>) -> Result<Vec<String>, Expected> {
    let expected = |why: &str| {
        format!("a list of CloudWatch alarm names (in a variable or flag comma-separated){why}")
    };
    let names = list(raw).ok_or_else(|| expected(""))?;
    let mut alarms: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let valid = !name.trim().is_empty()
            && name.chars().count() <= 255
            && !name.chars().any(|c| c.is_control() || c == ',');
        if !valid {
            return Err(expected(&format!(" ('{name}' is not one)")));
        }
        if !alarms.contains(&name) {
            alarms.push(name);
        }
    }
    Ok(alarms)
}

/// A non-empty list of Auto Scaling process names, each once.
/// A list of lifecycle hook names as AWS allows them (`[A-Za-z0-9-_/]+`,
/// at most 255 characters); an empty list is none.
pub(super) fn hook_names(raw: Raw<'_>) -> Result<Vec<String>, Expected> {
    let expected = |why: &str| {
        format!(
            "a list of lifecycle hook names (letters, digits, -, _ and /; in a variable or flag comma-separated){why}"
        )
    };
    let names = list(raw).ok_or_else(|| expected(""))?;
    let mut hooks: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let valid = !name.is_empty()
            && name.len() <= 255
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/'));
        if !valid {
            return Err(expected(&format!(" ('{name}' is not one)")));
        }
        if !hooks.contains(&name) {
            hooks.push(name);
        }
    }
    Ok(hooks)
}

pub(super) fn processes(raw: Raw<'_>) -> Result<Vec<ScalingProcess>, Expected> {
    // An empty list is refused rather than read as "none": AWS reads an
    // empty list as all nine processes, Launch and Terminate included.
    let expected = |why: &str| {
        format!(
            "a non-empty list of Auto Scaling processes among {}{why}",
            PROCESS_NAMES.join(", ")
        )
    };
    let names = list(raw).ok_or_else(|| expected(""))?;
    if names.is_empty() {
        return Err(expected(""));
    }
    let mut processes: Vec<ScalingProcess> = Vec::with_capacity(names.len());
    for name in &names {
        if !PROCESS_NAMES.contains(&name.as_str()) {
            return Err(expected(&format!(" ('{name}' is not one)")));
        }
        let process = ScalingProcess::parse(name);
        if !processes.contains(&process) {
            processes.push(process);
        }
    }
    Ok(processes)
}

/// Parses "90", "90s", "15m", "1h", "1h30m", "1h30m15s": units in
/// decreasing order, each at most once. `None` for anything else
/// (fractions, "ms", "1m1h", overflow). Zero is a duration here; the keys
/// refuse it.
pub(crate) fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok().map(Duration::from_secs);
    }
    let mut rest = text;
    let mut seconds: u64 = 0;
    // The last unit read: each must be smaller than the one before.
    let mut last: u64 = u64::MAX;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let number: u64 = rest[..digits].parse().ok()?;
        let (unit, tail) = match rest[digits..].chars().next()? {
            'h' => (3600, &rest[digits + 1..]),
            'm' => (60, &rest[digits + 1..]),
            's' => (1, &rest[digits + 1..]),
            _ => return None,
        };
        if unit >= last {
            return None;
        }
        last = unit;
        seconds = seconds.checked_add(number.checked_mul(unit)?)?;
        rest = tail;
    }
    if last == u64::MAX {
        return None;
    }
    Some(Duration::from_secs(seconds))
}

/// The items of a list: a TOML array of strings, or comma-separated text
/// (empty items dropped, so a trailing comma is harmless). `None` when the
/// value is not a list.
fn list(raw: Raw<'_>) -> Option<Vec<String>> {
    match raw {
        Raw::Toml(toml::Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(|s| s.trim().to_string()))
            .collect(),
        Raw::Text(text) => Some(
            text.split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        Raw::Toml(_) => None,
    }
}

/// Refuses anything the HTTP clients would refuse later, mid-roll.
fn http_url(text: &str) -> Result<(), Expected> {
    let url =
        Url::parse(text).map_err(|err| format!("an http(s) URL like http://host:port ({err})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("an http(s) URL (the scheme must be http or https)".to_string());
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("an http(s) URL with a host".to_string());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "a URL without credentials (they would show in files and process lists): use ROLLER_MESOS_USER / ROLLER_MARATHON_USER with …_PASSWORD(_FILE), or …_TOKEN(_FILE)"
                .to_string(),
        );
    }
    Ok(())
}

/// `text` with the `user:password@` of every URL in it replaced by
/// `<redacted>@`.
pub(super) fn without_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("://") {
        let authority_start = start + 3;
        out.push_str(&rest[..authority_start]);
        rest = &rest[authority_start..];
        let authority_end = rest
            .find(['/', ',', '"', '\'', ' ', ']', '?', '#'])
            .unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            out.push_str("<redacted>");
            rest = &rest[at..];
        }
    }
    out.push_str(rest);
    out
}
