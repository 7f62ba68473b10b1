//! A Query-protocol request as the facade reads it: the form's flat
//! `Name=value` pairs, the list conventions of the two services
//! (`X.member.N` for Auto Scaling, `X.N` for EC2), and the facade's error,
//! which the router writes in the envelope of the service that was asked.

use std::collections::{BTreeMap, HashMap};

use axum::http::StatusCode;

use crate::sim::world::AwsError;

/// Which service an action belongs to: they answer in different XML.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Service {
    AutoScaling,
    Ec2,
    CloudWatch,
}

impl Service {
    pub(super) fn version(self) -> &'static str {
        match self {
            Service::AutoScaling => "2011-01-01",
            Service::Ec2 => "2016-11-15",
            Service::CloudWatch => "2010-08-01",
        }
    }
}

/// An error answer: HTTP status, AWS error code and message. `sender`
/// is Auto Scaling's `<Type>` (the caller's fault, or AWS's own).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct QueryError {
    pub(super) status: StatusCode,
    pub(super) code: String,
    pub(super) message: String,
    pub(super) sender: bool,
}

impl QueryError {
    /// A 400 the caller caused.
    pub(super) fn sender(code: &str, message: impl Into<String>) -> QueryError {
        QueryError {
            status: StatusCode::BAD_REQUEST,
            code: code.to_string(),
            message: message.into(),
            sender: true,
        }
    }

    /// A 5xx of AWS's own making.
    pub(super) fn receiver(
        status: StatusCode,
        code: &str,
        message: impl Into<String>,
    ) -> QueryError {
        QueryError {
            status,
            code: code.to_string(),
            message: message.into(),
            sender: false,
        }
    }

    /// A bad or missing parameter, spelled as each service spells it.
    pub(super) fn invalid(service: Service, message: impl Into<String>) -> QueryError {
        match service {
            Service::AutoScaling => QueryError::sender("ValidationError", message),
            Service::Ec2 | Service::CloudWatch => {
                QueryError::sender("InvalidParameterValue", message)
            }
        }
    }
}

/// The request's parameters, by name.
pub(super) struct Params {
    service: Service,
    values: HashMap<String, String>,
}

impl Params {
    pub(super) fn new(service: Service, pairs: Vec<(String, String)>) -> Params {
        Params {
            service,
            values: pairs.into_iter().collect(),
        }
    }

    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Every parameter name sent.
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    pub(super) fn required(&self, name: &str) -> Result<&str, QueryError> {
        match self.get(name) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(match self.service {
                // What Auto Scaling answers for a missing member.
                Service::AutoScaling => QueryError::sender(
                    "ValidationError",
                    format!(
                        "1 validation error detected: Value null at '{}' failed to satisfy constraint: Member must not be null",
                        lower_first(name)
                    ),
                ),
                Service::Ec2 | Service::CloudWatch => QueryError::sender(
                    "MissingParameter",
                    format!("The request must contain the parameter {name}"),
                ),
            }),
        }
    }

    /// An integer parameter, if given.
    pub(super) fn int(&self, name: &str) -> Result<Option<i64>, QueryError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.parse::<i64>().map(Some).map_err(|_| {
                QueryError::invalid(
                    self.service,
                    format!("Value '{v}' for parameter {name} is not a valid integer"),
                )
            }),
        }
    }

    /// A non-negative size (MinSize, DesiredCapacity, …), if given.
    pub(super) fn size(&self, name: &str) -> Result<Option<u32>, QueryError> {
        match self.int(name)? {
            None => Ok(None),
            Some(n) => u32::try_from(n).map(Some).map_err(|_| {
                QueryError::invalid(
                    self.service,
                    format!(
                        "1 validation error detected: Value '{n}' at '{}' failed to satisfy constraint: Member must have value greater than or equal to 0",
                        lower_first(name)
                    ),
                )
            }),
        }
    }

    pub(super) fn bool(&self, name: &str) -> Result<Option<bool>, QueryError> {
        match self.get(name) {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(v) => Err(QueryError::invalid(
                self.service,
                format!("Value '{v}' for parameter {name} is not a boolean"),
            )),
        }
    }

    /// A list `prefix.1`, `prefix.2`, … in index order (`prefix` is
    /// e.g. `AutoScalingGroupNames.member` or EC2's `InstanceId`).
    pub(super) fn list(&self, prefix: &str) -> Vec<String> {
        let mut found: BTreeMap<u32, String> = BTreeMap::new();
        for (k, v) in &self.values {
            if let Some(n) = k
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_prefix('.'))
                .and_then(|n| n.parse::<u32>().ok())
            {
                found.insert(n, v.clone());
            }
        }
        found.into_values().collect()
    }

    /// A list of structures `prefix.N.Field=value`, as a map per N in
    /// index order.
    pub(super) fn structs(&self, prefix: &str) -> Vec<HashMap<String, String>> {
        let mut found: BTreeMap<u32, HashMap<String, String>> = BTreeMap::new();
        for (k, v) in &self.values {
            let Some(rest) = k.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) else {
                continue;
            };
            let Some((n, field)) = rest.split_once('.') else {
                continue;
            };
            if let Ok(n) = n.parse::<u32>() {
                found
                    .entry(n)
                    .or_default()
                    .insert(field.to_string(), v.clone());
            }
        }
        found.into_values().collect()
    }

    /// EC2 filters: `Filter.N.Name` with values `Filter.N.Value.M`.
    pub(super) fn filters(&self) -> Vec<(String, Vec<String>)> {
        self.structs("Filter")
            .into_iter()
            .map(|fields| {
                let name = fields.get("Name").cloned().unwrap_or_default();
                let mut values: Vec<(u32, String)> = fields
                    .iter()
                    .filter_map(|(k, v)| {
                        let n = k.strip_prefix("Value.")?.parse::<u32>().ok()?;
                        Some((n, v.clone()))
                    })
                    .collect();
                values.sort();
                (name, values.into_iter().map(|(_, v)| v).collect())
            })
            .collect()
    }
}

fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// One page of `items` after the item whose key is `token` (absent: from
/// the start), at most `max`, and the token of the next page if any. Keys
/// rather than offsets, so items added between pages (newer activities,
/// new instances) neither repeat nor vanish from a listing in progress.
pub(super) fn page<T>(
    service: Service,
    items: Vec<T>,
    key: impl Fn(&T) -> &str,
    token: Option<&str>,
    max: usize,
) -> Result<(Vec<T>, Option<String>), QueryError> {
    let start = match token {
        None | Some("") => 0,
        Some(t) => match items.iter().position(|i| key(i) == t) {
            Some(p) => p + 1,
            None => {
                return Err(match service {
                    Service::AutoScaling | Service::CloudWatch => {
                        QueryError::sender("InvalidNextToken", "The token is invalid.")
                    }
                    Service::Ec2 => QueryError::sender(
                        "InvalidParameterValue",
                        format!("Invalid value '{t}' for nextToken"),
                    ),
                });
            }
        },
    };
    let more = items.len() > start.saturating_add(max);
    let page: Vec<T> = items.into_iter().skip(start).take(max).collect();
    let next = if more {
        page.last().map(|i| key(i).to_string())
    } else {
        None
    };
    Ok((page, next))
}

/// DescribeAutoScalingGroups, DescribeScalingActivities and DescribeTags
/// cap pages here.
const MAX_RECORDS: usize = 100;

/// The world's refusal as AWS answers it (a Sender fault).
pub(super) fn world_error(e: AwsError) -> QueryError {
    QueryError::sender(e.code(), e.aws_message())
}

/// MaxRecords: 1 to 100, default 100, as AWS validates it.
pub(super) fn max_records(p: &Params) -> Result<usize, QueryError> {
    match p.int("MaxRecords")? {
        None => Ok(MAX_RECORDS),
        Some(n) if (1..=MAX_RECORDS as i64).contains(&n) => Ok(n as usize),
        Some(n) => Err(QueryError::sender(
            "ValidationError",
            format!(
                "1 validation error detected: Value '{n}' at 'maxRecords' failed to satisfy constraint: Member must have value between 1 and 100"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        Params::new(
            Service::AutoScaling,
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn lists_come_back_in_index_order_not_text_order() {
        let p = params(&[
            ("InstanceId.10", "j"),
            ("InstanceId.2", "b"),
            ("InstanceId.1", "a"),
            ("InstanceIdx.3", "not mine"),
        ]);
        assert_eq!(p.list("InstanceId"), ["a", "b", "j"]);
    }

    #[test]
    fn structures_and_filters_group_their_fields_by_index() {
        let p = params(&[
            ("Tags.member.2.Key", "k2"),
            ("Tags.member.1.Key", "k1"),
            ("Tags.member.1.Value", "v1"),
            ("Filter.1.Name", "instance-id"),
            ("Filter.1.Value.2", "i-2"),
            ("Filter.1.Value.1", "i-1"),
        ]);
        let tags = p.structs("Tags.member");
        assert_eq!(tags.len(), 2);
        assert_eq!(tags[0].get("Value").map(String::as_str), Some("v1"));
        assert_eq!(tags[1].get("Key").map(String::as_str), Some("k2"));
        assert_eq!(
            p.filters(),
            [("instance-id".to_string(), vec!["i-1".into(), "i-2".into()])]
        );
    }

    #[test]
    fn a_missing_member_is_auto_scalings_validation_error() {
        let err = params(&[]).required("AutoScalingGroupName").unwrap_err();
        assert_eq!(err.code, "ValidationError");
        assert!(
            err.message.contains("'autoScalingGroupName'"),
            "{}",
            err.message
        );
    }

    #[test]
    fn pages_follow_keys_and_an_unknown_token_is_refused() {
        let items = vec!["a", "b", "c", "d", "e"];
        let (p1, t1) = page(Service::AutoScaling, items.clone(), |s| s, None, 2).unwrap();
        assert_eq!((p1, t1.as_deref()), (vec!["a", "b"], Some("b")));
        let (p3, t3) = page(Service::AutoScaling, items.clone(), |s| s, Some("d"), 2).unwrap();
        assert_eq!((p3, t3), (vec!["e"], None));
        let (all, none) = page(Service::AutoScaling, items.clone(), |s| s, None, 5).unwrap();
        assert_eq!((all.len(), none), (5, None));
        let err = page(Service::AutoScaling, items, |s| s, Some("zz"), 2).unwrap_err();
        assert_eq!(err.code, "InvalidNextToken");
    }
}
