//! Keys that look like secrets: refused in the file, with where each
//! belongs instead.

/// The first key, at any depth, that looks like a secret, dotted, with
/// where that secret belongs.
pub(super) fn find_secret(table: &toml::Table, prefix: &str) -> Option<(String, &'static str)> {
    for (name, value) in table {
        let key = format!("{prefix}{name}");
        if let Some(instead) = secret_instead(name) {
            return Some((key, instead));
        }
        let nested: Vec<&toml::Table> = match value {
            toml::Value::Table(inner) => vec![inner],
            toml::Value::Array(items) => items.iter().filter_map(toml::Value::as_table).collect(),
            _ => Vec::new(),
        };
        for inner in nested {
            if let Some(found) = find_secret(inner, &format!("{key}.")) {
                return Some(found);
            }
        }
    }
    None
}

/// Where a secret named like `name` belongs, or `None` when `name` does not
/// look like a secret. Matched loosely (`pagerduty_routing_key`,
/// `marathon_token`): a false alarm costs a rename, a miss leaks a secret
/// into a file that gets copied around.
pub(super) fn secret_instead(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase().replace('-', "_");
    let is = |word: &str| name == word || name.ends_with(&format!("_{word}"));
    if is("routing_key") {
        Some("ROLLER_PAGERDUTY_ROUTING_KEY or ROLLER_PAGERDUTY_ROUTING_KEY_FILE")
    } else if is("webhook_url") {
        Some("ROLLER_WEBHOOK_URL or ROLLER_WEBHOOK_URL_FILE")
    } else if name.starts_with("aws_")
        && (name.contains("secret") || name.contains("access_key") || name.contains("token"))
    {
        Some(
            "the AWS credential chain (AWS_PROFILE, AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY, or an instance role)",
        )
    } else if is("api_token") || is("listen_token") {
        Some("ROLLER_API_TOKEN or ROLLER_API_TOKEN_FILE (the plan API's token, for --listen)")
    } else if is("token") {
        Some(
            "ROLLER_MARATHON_TOKEN or ROLLER_MARATHON_TOKEN_FILE (ROLLER_MESOS_TOKEN(_FILE) for Mesos)",
        )
    } else if is("password") || is("passwd") {
        Some(
            "ROLLER_MARATHON_USER with ROLLER_MARATHON_PASSWORD or ROLLER_MARATHON_PASSWORD_FILE (ROLLER_MESOS_* for Mesos)",
        )
    } else if is("secret") || is("api_key") || is("credentials") {
        Some("a ROLLER_* variable or its _FILE form (see docs/reference.md#the-environment-file)")
    } else {
        None
    }
}
