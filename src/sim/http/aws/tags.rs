//! The Auto Scaling tag actions: DescribeTags, CreateOrUpdateTags and
//! DeleteTags over every group's tags, and the PropagateAtLaunch flags the
//! facade keeps for them (the world keeps tags as key → value).

use std::collections::{BTreeMap, BTreeSet};

use super::query::{Params, QueryError, Service, max_records, page, world_error};
use super::xml::Xml;
use crate::sim::world::{AwsError, World};

/// PropagateAtLaunch per group and tag key: the world keeps tags as key →
/// value, the facade remembers the flag so tags round-trip as AWS returns
/// them.
#[derive(Debug, Default)]
pub(super) struct TagFlags {
    pub(super) propagate: BTreeMap<(String, String), bool>,
}

impl TagFlags {
    pub(super) fn get(&self, group: &str, key: &str) -> bool {
        self.propagate
            .get(&(group.to_string(), key.to_string()))
            .copied()
            .unwrap_or(false)
    }
}

/// DescribeTags: every group's tags, narrowed by `Filters.member.N`
/// (`auto-scaling-group`, `key`, `value`, `propagate-at-launch`; values
/// of one filter are ORed, filters ANDed), paged by MaxRecords (1 to 100).
pub(super) fn describe_tags(
    w: &mut World,
    flags: &TagFlags,
    p: &Params,
) -> Result<String, QueryError> {
    let max = max_records(p)?;
    let mut filters = Vec::new();
    for fields in p.structs("Filters.member") {
        let name = fields.get("Name").cloned().unwrap_or_default();
        if !["auto-scaling-group", "key", "value", "propagate-at-launch"].contains(&name.as_str()) {
            return Err(QueryError::sender(
                "ValidationError",
                format!(
                    "Filter type {name} is not correct. Allowed Filter types are: auto-scaling-group key value propagate-at-launch"
                ),
            ));
        }
        let values: BTreeSet<String> = fields
            .iter()
            .filter(|(k, _)| k.starts_with("Values.member."))
            .map(|(_, v)| v.clone())
            .collect();
        filters.push((name, values));
    }
    let mut tags = Vec::new();
    for g in w.describe_groups(&[]) {
        for t in &g.tags {
            let propagate = flags.get(&g.name, &t.key);
            let keep = filters.iter().all(|(name, values)| {
                let field = match name.as_str() {
                    "auto-scaling-group" => g.name.clone(),
                    "key" => t.key.clone(),
                    "value" => t.value.clone(),
                    _ => propagate.to_string(),
                };
                values.contains(&field)
            });
            if keep {
                tags.push((g.name.clone(), t.key.clone(), t.value.clone(), propagate));
            }
        }
    }
    let keyed: Vec<(String, (String, String, String, bool))> = tags
        .into_iter()
        .map(|t| (format!("{}/{}", t.0, t.1), t))
        .collect();
    let (tags, next) = page(
        Service::AutoScaling,
        keyed,
        |(key, _)| key.as_str(),
        p.get("NextToken"),
        max,
    )?;
    let mut x = Xml::new();
    x.open("Tags");
    for (_, (group, key, value, propagate)) in &tags {
        x.open("member")
            .leaf("ResourceId", group)
            .leaf("ResourceType", "auto-scaling-group")
            .leaf("Key", key)
            .leaf("Value", value)
            .leaf("PropagateAtLaunch", *propagate)
            .close("member");
    }
    x.close("Tags").opt_leaf("NextToken", next);
    Ok(x.finish())
}

/// One tag of CreateOrUpdateTags / DeleteTags, checked like AWS does.
struct TagParam {
    group: String,
    key: String,
    value: String,
    propagate: bool,
}

fn tag_params(w: &World, p: &Params) -> Result<Vec<TagParam>, QueryError> {
    let raw = p.structs("Tags.member");
    if raw.is_empty() {
        return Err(QueryError::sender(
            "ValidationError",
            "1 validation error detected: Value null at 'tags' failed to satisfy constraint: Member must not be null",
        ));
    }
    let mut tags = Vec::with_capacity(raw.len());
    for t in raw {
        let field = |name: &str| t.get(name).cloned().unwrap_or_default();
        let (group, key) = (field("ResourceId"), field("Key"));
        if key.is_empty() {
            return Err(QueryError::sender(
                "ValidationError",
                "1 validation error detected: Value null at 'tags.member.key' failed to satisfy constraint: Member must not be null",
            ));
        }
        let kind = field("ResourceType");
        if kind != "auto-scaling-group" {
            return Err(QueryError::sender(
                "ValidationError",
                format!("Invalid resource type: '{kind}'; only auto-scaling-group is supported"),
            ));
        }
        if w.describe_groups(std::slice::from_ref(&group)).is_empty() {
            return Err(world_error(AwsError::GroupNotFound {
                action: "Tags",
                name: group,
            }));
        }
        let propagate = match t.get("PropagateAtLaunch").map(String::as_str) {
            None | Some("false") => false,
            Some("true") => true,
            Some(v) => {
                return Err(QueryError::sender(
                    "ValidationError",
                    format!("Value '{v}' for PropagateAtLaunch is not a boolean"),
                ));
            }
        };
        tags.push(TagParam {
            group,
            key,
            value: field("Value"),
            propagate,
        });
    }
    Ok(tags)
}

/// All tags are checked before any is written: a refused call changes
/// nothing, as on AWS.
pub(super) fn create_or_update_tags(
    w: &mut World,
    flags: &mut TagFlags,
    p: &Params,
) -> Result<(), QueryError> {
    for t in tag_params(w, p)? {
        w.put_tags(&t.group, &[(t.key.clone(), t.value)])
            .map_err(world_error)?;
        flags.propagate.insert((t.group, t.key), t.propagate);
    }
    Ok(())
}

pub(super) fn delete_tags(
    w: &mut World,
    flags: &mut TagFlags,
    p: &Params,
) -> Result<(), QueryError> {
    for t in tag_params(w, p)? {
        w.delete_tags(&t.group, std::slice::from_ref(&t.key))
            .map_err(world_error)?;
        flags.propagate.remove(&(t.group, t.key));
    }
    Ok(())
}
