//! A cluster's groups: the `[[group]]` tables of the environment file.
//!
//! ```toml
//! [[group]]
//! name = "mesos-agents-private"   # the ASG
//! target = 40                     # agents it must have when done
//!
//! [[group]]
//! name = "mesos-agents-public"
//! target = 5
//! select = "outdated"             # optional: --select for this group
//! ```
//!
//! The tables live only in the file (a cluster is not something to spell
//! in variables); `--target NAME=N` may set a group's target. A file with
//! the single `asg` key is a one-group cluster, as it always was.

use std::path::Path;

use super::error::{EnvError, Origin};
use super::value::Raw;

/// One group of the cluster, as the file names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    /// The ASG's name.
    pub(crate) asg: String,
    /// Agents it must have when done (`None`: from `--target NAME=N`).
    pub(crate) target: Option<u32>,
    /// Which of its instances are replaced (`None`: `--select`).
    pub(crate) select: Option<String>,
}

impl GroupSpec {
    /// A group whose target and selection come from the flags.
    pub(crate) fn named(asg: &str) -> GroupSpec {
        GroupSpec {
            asg: asg.to_string(),
            target: None,
            select: None,
        }
    }
}

/// The key of the tables, and the keys each may hold.
pub(super) const KEY: &str = "group";
const GROUP_KEYS: &[&str] = &["name", "target", "select"];

/// The `[[group]]` tables of the file `table` read from `path` (empty
/// when it has none). Each names an ASG no other table names, without a
/// colon (AWS allows none: roller uses it to prefix a group's phases).
pub(super) fn read(path: &Path, table: &toml::Table) -> Result<Vec<GroupSpec>, EnvError> {
    let Some(value) = table.get(KEY) else {
        return Ok(Vec::new());
    };
    let origin = || Origin::File(path.to_path_buf());
    let bad = |key: String, expected: &str, given: &toml::Value| EnvError::BadValue {
        key,
        origin: origin(),
        expected: expected.to_string(),
        given: Raw::Toml(given).given(),
    };
    let Some(tables) = value.as_array().filter(|a| !a.is_empty()) else {
        return Err(bad(
            KEY.to_string(),
            "one or more [[group]] tables, each with name = \"ASG\" and target = N",
            value,
        ));
    };
    let mut groups: Vec<GroupSpec> = Vec::new();
    for (n, entry) in tables.iter().enumerate() {
        let at = |key: &str| format!("group[{}].{key}", n + 1);
        let Some(entry) = entry.as_table() else {
            return Err(bad(
                format!("group[{}]", n + 1),
                "a [[group]] table with name = \"ASG\" and target = N",
                entry,
            ));
        };
        if let Some(unknown) = entry.keys().find(|k| !GROUP_KEYS.contains(&k.as_str())) {
            return Err(EnvError::UnknownKey {
                key: at(unknown),
                origin: origin(),
                known: GROUP_KEYS.join(", "),
            });
        }
        let asg = match entry.get("name") {
            Some(v) => v
                .as_str()
                .filter(|s| !s.trim().is_empty() && !s.contains(':'))
                .map(str::to_string)
                .ok_or_else(|| {
                    bad(
                        at("name"),
                        "the Auto Scaling group's name (a non-empty string without ':')",
                        v,
                    )
                })?,
            None => {
                return Err(EnvError::BadValue {
                    key: at("name"),
                    origin: origin(),
                    expected: "name = \"ASG\", the Auto Scaling group this table rolls".to_string(),
                    given: "nothing".to_string(),
                });
            }
        };
        if groups.iter().any(|g| g.asg == asg) {
            return Err(bad(
                at("name"),
                "a group no other [[group]] table names",
                &toml::Value::String(asg),
            ));
        }
        let target = match entry.get("target") {
            Some(v) => Some(
                v.as_integer()
                    .and_then(|i| u32::try_from(i).ok())
                    .filter(|i| *i > 0)
                    .ok_or_else(|| {
                        bad(
                            at("target"),
                            "the number of agents the group must have when done (at least 1)",
                            v,
                        )
                    })?,
            ),
            None => None,
        };
        let select = match entry.get("select") {
            Some(v) => Some(v.as_str().map(str::to_string).ok_or_else(|| {
                bad(
                    at("select"),
                    "all, outdated or older-than=AGE, as a string",
                    v,
                )
            })?),
            None => None,
        };
        groups.push(GroupSpec {
            asg,
            target,
            select,
        });
    }
    Ok(groups)
}
