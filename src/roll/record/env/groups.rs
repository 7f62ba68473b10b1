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
//! complete_lifecycle_hooks = ["drain-agent"]  # optional: roller's hooks
//! ```
//!
//! The tables live only in the file (a cluster is not something to spell
//! in variables); `--target NAME=N` may set a group's target. A file with
//! the single `asg` key is a one-group cluster, as it always was.

use std::path::Path;

use super::Layers;
use super::error::{EnvError, Origin};
use super::value::{self, Raw};

/// One group of the cluster, as the file names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    /// The ASG's name.
    pub(crate) asg: String,
    /// Agents it must have when done (`None`: from `--target NAME=N`).
    pub(crate) target: Option<u32>,
    /// Which of its instances are replaced (`None`: `--select`).
    pub(crate) select: Option<String>,
    /// The termination lifecycle hooks that are roller's to complete
    /// (key `complete_lifecycle_hooks`, in the table or at the top level
    /// for every group): roller completes them with CONTINUE once the
    /// agent is empty and down. The group's other hooks are waited for.
    pub(crate) complete_lifecycle_hooks: Vec<String>,
}

impl GroupSpec {
    /// A group whose target and selection come from the flags.
    pub(crate) fn named(asg: &str) -> GroupSpec {
        GroupSpec {
            asg: asg.to_string(),
            target: None,
            select: None,
            complete_lifecycle_hooks: Vec::new(),
        }
    }
}

/// The key of the tables, and the keys each may hold.
pub(super) const KEY: &str = "group";
const GROUP_KEYS: &[&str] = &["name", "target", "select", "complete_lifecycle_hooks"];

/// The cluster's groups: the `[[group]]` tables `listed`, or, when the
/// file has none, the one group key `asg` names. An `asg` beside the
/// tables is refused: which would be rolled could only be guessed.
pub(super) fn resolve(
    listed: Vec<GroupSpec>,
    layers: &Layers<'_>,
) -> Result<Vec<GroupSpec>, EnvError> {
    if listed.is_empty() {
        let asg = layers.required(
            "asg",
            "the Auto Scaling group whose instances are the Mesos agents",
            value::text,
        )?;
        return Ok(vec![GroupSpec::named(&asg)]);
    }
    if let Some((origin, given)) = layers.origin_of("asg") {
        return Err(EnvError::BadValue {
            key: "asg".to_string(),
            origin,
            expected: "no `asg` beside [[group]] tables: the tables name every group of \
                       the cluster (to roll one group alone, give it a file of its own)"
                .to_string(),
            given,
        });
    }
    Ok(listed)
}

/// The `[[group]]` tables of the file `table` read from `path` (empty
/// when it has none). Each names an ASG no other table names, without a
/// colon (AWS allows none: roller uses it to prefix a group's phases).
pub(super) fn read(path: &Path, table: &toml::Table) -> Result<Vec<GroupSpec>, EnvError> {
    let Some(value) = table.get(KEY) else {
        return Ok(Vec::new());
    };
    let Some(tables) = value.as_array().filter(|a| !a.is_empty()) else {
        return Err(bad(
            path,
            KEY.to_string(),
            "one or more [[group]] tables, each with name = \"ASG\" and target = N",
            value,
        ));
    };
    let mut groups: Vec<GroupSpec> = Vec::new();
    for (n, entry) in tables.iter().enumerate() {
        let group = read_table(path, n + 1, entry, &groups)?;
        groups.push(group);
    }
    Ok(groups)
}

/// The `number`th `[[group]]` table (from 1), whose name none of the
/// tables `before` it may take.
fn read_table(
    path: &Path,
    number: usize,
    entry: &toml::Value,
    before: &[GroupSpec],
) -> Result<GroupSpec, EnvError> {
    let at = |key: &str| format!("group[{number}].{key}");
    let Some(entry) = entry.as_table() else {
        return Err(bad(
            path,
            format!("group[{number}]"),
            "a [[group]] table with name = \"ASG\" and target = N",
            entry,
        ));
    };
    if let Some(unknown) = entry.keys().find(|k| !GROUP_KEYS.contains(&k.as_str())) {
        return Err(EnvError::UnknownKey {
            key: at(unknown),
            origin: Origin::File(path.to_path_buf()),
            known: GROUP_KEYS.join(", "),
        });
    }
    let asg = name(path, at("name"), entry.get("name"))?;
    if before.iter().any(|g| g.asg == asg) {
        return Err(bad(
            path,
            at("name"),
            "a group no other [[group]] table names",
            &toml::Value::String(asg),
        ));
    }
    Ok(GroupSpec {
        asg,
        target: target(path, at("target"), entry.get("target"))?,
        select: select(path, at("select"), entry.get("select"))?,
        complete_lifecycle_hooks: entry
            .get("complete_lifecycle_hooks")
            .map(|v| {
                value::hook_names(Raw::Toml(v)).map_err(|expected| EnvError::BadValue {
                    key: at("complete_lifecycle_hooks"),
                    origin: Origin::File(path.to_path_buf()),
                    expected,
                    given: Raw::Toml(v).given(),
                })
            })
            .transpose()?
            .unwrap_or_default(),
    })
}

/// A table's `name`: required, the ASG's, non-empty and without ':'.
fn name(path: &Path, key: String, value: Option<&toml::Value>) -> Result<String, EnvError> {
    let Some(v) = value else {
        return Err(EnvError::BadValue {
            key,
            origin: Origin::File(path.to_path_buf()),
            expected: "name = \"ASG\", the Auto Scaling group this table rolls".to_string(),
            given: "nothing".to_string(),
        });
    };
    v.as_str()
        .filter(|s| !s.trim().is_empty() && !s.contains(':'))
        .map(str::to_string)
        .ok_or_else(|| {
            bad(
                path,
                key,
                "the Auto Scaling group's name (a non-empty string without ':')",
                v,
            )
        })
}

/// A table's `target`, when it has one: at least one agent.
fn target(path: &Path, key: String, value: Option<&toml::Value>) -> Result<Option<u32>, EnvError> {
    value
        .map(|v| {
            v.as_integer()
                .and_then(|i| u32::try_from(i).ok())
                .filter(|i| *i > 0)
                .ok_or_else(|| {
                    bad(
                        path,
                        key,
                        "the number of agents the group must have when done (at least 1)",
                        v,
                    )
                })
        })
        .transpose()
}

/// A table's `select`, when it has one: a string, parsed with the
/// request's other settings.
fn select(
    path: &Path,
    key: String,
    value: Option<&toml::Value>,
) -> Result<Option<String>, EnvError> {
    value
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| bad(path, key, "all, outdated or older-than=AGE, as a string", v))
        })
        .transpose()
}

/// A value of the file's `[[group]]` tables that is not what `key` takes.
pub(super) fn bad(path: &Path, key: String, expected: &str, given: &toml::Value) -> EnvError {
    EnvError::BadValue {
        key,
        origin: Origin::File(path.to_path_buf()),
        expected: expected.to_string(),
        given: Raw::Toml(given).given(),
    }
}
