//! `roller plan show|<operation> --url URL`: the client of a live run's
//! plan API (`roller run --listen`). `show` prints what `--file` would
//! (the tree, or with `--json` the PlanInfo); an operation prints what the
//! server said. 200 and 208 ("already done") exit 0; the caller's mistakes
//! (400, 404, a missing or wrong token: 401) exit 2; a server that cannot
//! be reached or answers otherwise exits 1.

use std::io::Write;
use std::time::Duration;

use reqwest::{Method, StatusCode, Url};
use serde_json::Value;

use super::OperationArgs;
use super::error::CliError;
use super::output::write_json;
use crate::api::{PLAN, TOKEN_VARIABLE};
use crate::http::Secret;
use crate::plan::{self, Operation, PlanInfo};

/// A live run answers from memory: a slow answer means something is wrong.
const TIMEOUT: Duration = Duration::from_secs(10);

/// One answer: its status, the URL asked, and its body parsed as JSON
/// (`Value::Null` when it is not).
struct Answer {
    status: StatusCode,
    url: String,
    body: Value,
}

/// Who operated: sent with each operation (the plan API logs it), and
/// written in the checkpoint's event log by `roller plan --file`.
pub(super) fn operator() -> String {
    std::env::var("SUDO_USER")
        .or_else(|_| std::env::var("USER"))
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".to_string())
}

pub(super) fn show(url: &str, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let answer = call(Method::GET, url, &format!("/v1/plans/{PLAN}"), &[])?;
    match answer.status.as_u16() {
        // COMPLETE, IN_PROGRESS & co, ERROR: all are a plan to show.
        200 | 202 | 417 => {}
        _ => return Err(refusal(&answer)),
    }
    let info: PlanInfo = serde_json::from_value(answer.body.clone()).map_err(|err| {
        CliError::PlanApiUnreachable(format!(
            "{} answered {} with something that is not a plan ({err}): is it roller's plan API?",
            answer.url, answer.status
        ))
    })?;
    if json {
        // Read back and written again: the fields in `--file`'s order.
        write_json(out, &info)?;
    } else {
        out.write_all(plan::info_tree(&info).as_bytes())?;
    }
    Ok(())
}

pub(super) fn operate(
    operation: Operation,
    url: &str,
    args: &OperationArgs,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut query = Vec::new();
    if let Some(phase) = &args.phase {
        query.push(("phase", phase.as_str()));
    }
    if let Some(step) = &args.step {
        query.push(("step", step.as_str()));
    }
    let path = format!("/v1/plans/{PLAN}/{}", segment(operation));
    let answer = call(Method::POST, url, &path, &query)?;
    let text = |key: &str| answer.body.get(key).and_then(Value::as_str).unwrap_or("");
    let result = match answer.status.as_u16() {
        200 => "queued",
        208 => "already_done",
        _ => return Err(refusal(&answer)),
    };
    if args.json {
        return write_json(
            out,
            &serde_json::json!({"result": result, "status": answer.status.as_u16(), "answer": answer.body}),
        );
    }
    if result == "queued" {
        writeln!(
            out,
            "{operation} {}: accepted ({}); the run applies it at its next tick, and `roller plan \
             show --url {url}` shows it once applied",
            text("target"),
            text("message"),
        )?;
    } else {
        writeln!(
            out,
            "already done: {operation} changes nothing on {} ({}); nothing was queued",
            text("target"),
            text("status"),
        )?;
    }
    Ok(())
}

/// The path segment of an operation, as the SDK spells it.
fn segment(operation: Operation) -> &'static str {
    match operation {
        Operation::Continue => "continue",
        Operation::Interrupt => "interrupt",
        Operation::ForceComplete => "forceComplete",
        Operation::Restart => "restart",
        Operation::Start => "start",
        Operation::Stop => "stop",
    }
}

/// The error for an answer that is not what was asked for.
fn refusal(answer: &Answer) -> CliError {
    let said = |key: &str| answer.body.get(key).and_then(Value::as_str);
    let mut message = said("message")
        .map(str::to_string)
        .unwrap_or_else(|| format!("{} (not roller's plan API?)", answer.status));
    if let Some(detail) = said("detail") {
        message.push_str(&format!(": {detail}"));
    }
    if answer.status == StatusCode::UNAUTHORIZED {
        message.push_str(&format!(
            "; set {TOKEN_VARIABLE} or {TOKEN_VARIABLE}_FILE to the token the run was started with"
        ));
    }
    CliError::PlanApi {
        url: answer.url.clone(),
        status: answer.status.as_u16(),
        message,
    }
}

/// `base` + `path`: `base` is the server's root (`http://host:port`),
/// with or without a trailing slash.
fn endpoint(base: &str, path: &str) -> Result<Url, CliError> {
    let bad = |why: String| {
        CliError::BadFlag(format!(
            "--url {base}: {why}; give the root of the plan API, e.g. --url http://127.0.0.1:8080"
        ))
    };
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(bad("it must start with http:// or https://".to_string()));
    }
    Url::parse(&format!("{}{path}", base.trim_end_matches('/'))).map_err(|err| bad(err.to_string()))
}

fn call(
    method: Method,
    base: &str,
    path: &str,
    query: &[(&str, &str)],
) -> Result<Answer, CliError> {
    let url = endpoint(base, path)?;
    let token = crate::http::secret_from_env(TOKEN_VARIABLE)
        .map_err(|err| CliError::BadFlag(format!("the plan API's token: {err}")))?;
    let runtime = super::wiring::runtime()?;
    runtime.block_on(send(method, url, query, token.as_ref()))
}

async fn send(
    method: Method,
    url: Url,
    query: &[(&str, &str)],
    token: Option<&Secret>,
) -> Result<Answer, CliError> {
    let client = reqwest::Client::builder()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|err| CliError::Adapter(err.to_string()))?;
    let mut url = url;
    if !query.is_empty() {
        url.query_pairs_mut().extend_pairs(query);
    }
    let mut request = client
        .request(method, url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .header(crate::api::OPERATOR_HEADER, operator());
    if let Some(token) = token {
        request = request.bearer_auth(token.expose());
    }
    let response = request.send().await.map_err(|err| {
        let why = if err.is_connect() {
            "nothing accepts connections there (connection refused or no route): is a `roller run \
             --listen` serving that address? The API stops when the run ends"
                .to_string()
        } else if err.is_timeout() {
            format!("no answer within {} s", TIMEOUT.as_secs())
        } else {
            format!("the request failed: {err}")
        };
        CliError::PlanApiUnreachable(format!("cannot reach the plan API at {url}: {why}"))
    })?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|err| {
        CliError::PlanApiUnreachable(format!("{url} answered {status} and then failed: {err}"))
    })?;
    Ok(Answer {
        status,
        url: url.to_string(),
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_the_servers_root_with_or_without_a_slash_and_http_only() {
        for base in ["http://127.0.0.1:8080", "http://127.0.0.1:8080/"] {
            assert_eq!(
                endpoint(base, "/v1/plans/roll").unwrap().as_str(),
                "http://127.0.0.1:8080/v1/plans/roll"
            );
        }
        let err = endpoint("127.0.0.1:8080", "/v1/plans").unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("http://"), "{err}");
    }

    #[test]
    fn a_refusal_names_the_token_variables_on_401_and_exits_2_on_the_callers_mistakes() {
        let answer = |status: u16| Answer {
            status: StatusCode::from_u16(status).unwrap(),
            url: "http://x/v1/plans/roll".to_string(),
            body: serde_json::json!({"message": "Phase nope not found", "detail": "its phases are: a"}),
        };
        let unauthorized = refusal(&answer(401));
        assert_eq!(unauthorized.exit_code(), 2);
        assert!(unauthorized.to_string().contains("ROLLER_API_TOKEN"));
        let not_found = refusal(&answer(404));
        assert_eq!(not_found.exit_code(), 2);
        assert!(not_found.to_string().contains("its phases are"));
        assert_eq!(refusal(&answer(400)).exit_code(), 2);
        assert_eq!(refusal(&answer(503)).exit_code(), 1);
    }
}
