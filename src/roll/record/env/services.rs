//! The DC/OS SDK services roller reaches by a URL of their own: the
//! `[[service]]` tables of the environment file.
//!
//! ```toml
//! dcos_url = "https://dcos.example.com"   # services behind the admin router
//!
//! [[service]]
//! name = "kafka"                          # as it registered with Mesos
//! url = "http://kafka.marathon.l4lb.thisdcos.directory:80"
//! ```
//!
//! A service found on the cluster (a Marathon app labelled
//! `DCOS_COMMONS_API_VERSION`) is reached at `<dcos_url>/service/<name>/`
//! unless a table names it. The tables live only in the file.

use std::path::Path;

use super::error::{EnvError, Origin};
use super::groups::bad;
use super::value::{self, Raw};

/// One `[[service]]` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServiceSpec {
    /// The service's name (its Mesos framework's, `DCOS_SERVICE_NAME`).
    pub(crate) name: String,
    /// Its scheduler's API (the v1 paths go under it).
    pub(crate) url: String,
}

pub(super) const KEY: &str = "service";
const SERVICE_KEYS: &[&str] = &["name", "url"];

/// The `[[service]]` tables of the file `table` read from `path` (empty
/// when it has none), each naming a service no other table names.
pub(super) fn read(path: &Path, table: &toml::Table) -> Result<Vec<ServiceSpec>, EnvError> {
    let Some(value) = table.get(KEY) else {
        return Ok(Vec::new());
    };
    let expected =
        "one or more [[service]] tables, each with name = \"SERVICE\" and url = \"http(s)://…\"";
    let Some(tables) = value.as_array().filter(|a| !a.is_empty()) else {
        return Err(bad(path, KEY.to_string(), expected, value));
    };
    let mut services: Vec<ServiceSpec> = Vec::new();
    for (n, entry) in tables.iter().enumerate() {
        let at = |key: &str| format!("service[{}].{key}", n + 1);
        let Some(entry) = entry.as_table() else {
            return Err(bad(path, format!("service[{}]", n + 1), expected, entry));
        };
        if let Some(unknown) = entry.keys().find(|k| !SERVICE_KEYS.contains(&k.as_str())) {
            return Err(EnvError::UnknownKey {
                key: at(unknown),
                origin: Origin::File(path.to_path_buf()),
                known: SERVICE_KEYS.join(", "),
            });
        }
        let name = match entry.get("name") {
            Some(v) => v
                .as_str()
                .map(|s| s.trim().trim_start_matches('/').to_string())
                .filter(|s| !s.is_empty() && !s.contains(char::is_whitespace))
                .ok_or_else(|| {
                    bad(
                        path,
                        at("name"),
                        "the service's name as it registered with Mesos (its DCOS_SERVICE_NAME)",
                        v,
                    )
                })?,
            None => return Err(missing(path, at("name"), "name = \"SERVICE\"")),
        };
        if services.iter().any(|s| s.name == name) {
            return Err(bad(
                path,
                at("name"),
                "a service no other [[service]] table names",
                &toml::Value::String(name),
            ));
        }
        let url = match entry.get("url") {
            Some(v) => value::url(Raw::Toml(v)).map_err(|expected| EnvError::BadValue {
                key: at("url"),
                origin: Origin::File(path.to_path_buf()),
                expected,
                given: Raw::Toml(v).given(),
            })?,
            None => {
                return Err(missing(
                    path,
                    at("url"),
                    "url = \"http(s)://…\", the scheduler's API (v1 paths go under it)",
                ));
            }
        };
        services.push(ServiceSpec { name, url });
    }
    Ok(services)
}

fn missing(path: &Path, key: String, expected: &str) -> EnvError {
    EnvError::BadValue {
        key,
        origin: Origin::File(path.to_path_buf()),
        expected: expected.to_string(),
        given: "nothing".to_string(),
    }
}
