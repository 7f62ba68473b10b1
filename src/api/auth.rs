//! Who may call the plan API, and who did. With a token configured,
//! every request (loopback too) must carry `Authorization: Bearer
//! <token>`, compared in constant time; the token is never logged or
//! echoed. Every admitted request gets a `Caller` naming its peer address
//! (and the operator name its client says, marked as said), which the
//! checkpoint's event log records with each operation.

use std::net::SocketAddr;

use axum::Json;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::ApiState;

/// The header `roller plan --url` sends with the operator's login name.
/// Unverified: the event log says "says".
pub(crate) const OPERATOR_HEADER: &str = "x-roller-operator";

/// Who called, as the event log names them: `api 127.0.0.1:54321`, and
/// `(says alice)` when the client named its operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Caller(pub(crate) String);

pub(super) async fn authorize(
    State(state): State<ApiState>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Some(token) = &state.token {
        let given = bearer(request.headers());
        if !given.is_some_and(|given| same(given.as_bytes(), token.expose().as_bytes())) {
            let message = if given.is_some() {
                "the bearer token is wrong"
            } else {
                "this API needs `Authorization: Bearer <token>` (the token the server read \
                 from ROLLER_API_TOKEN or ROLLER_API_TOKEN_FILE)"
            };
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                Json(serde_json::json!({ "message": message })),
            )
                .into_response();
        }
    }
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.to_string())
        .unwrap_or_else(|| "unknown".to_string());
    let mut caller = format!("api {peer}");
    if let Some(name) = operator(request.headers()) {
        caller.push_str(&format!(" (says {name})"));
    }
    request.extensions_mut().insert(Caller(caller));
    next.run(request).await
}

/// The credentials of `Authorization: Bearer <credentials>` (the scheme
/// is case-insensitive, RFC 9110).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, credentials) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// The operator name a client says, if it is a plausible login name:
/// anything else is dropped rather than written into the event log.
fn operator(headers: &HeaderMap) -> Option<&str> {
    let name = headers.get(OPERATOR_HEADER)?.to_str().ok()?;
    let plausible = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
    plausible.then_some(name)
}

/// Equal in time that depends on the lengths only, never on where the
/// first difference is.
fn same(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    let difference = given
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    std::hint::black_box(difference) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_equal_only_when_every_byte_is() {
        assert!(same(b"s3cret", b"s3cret"));
        assert!(!same(b"s3cret", b"s3cres"));
        assert!(!same(b"s3cret", b"s3cret!"));
        assert!(!same(b"", b"x"));
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive_and_other_schemes_are_not_bearer() {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "bearer abc".parse().unwrap());
        assert_eq!(bearer(&headers), Some("abc"));
        headers.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&headers), None);
    }

    #[test]
    fn an_implausible_operator_name_is_left_out_of_the_log() {
        let mut headers = HeaderMap::new();
        headers.insert(OPERATOR_HEADER, "alice".parse().unwrap());
        assert_eq!(operator(&headers), Some("alice"));
        headers.insert(OPERATOR_HEADER, "alice\tinterrupt".parse().unwrap());
        assert_eq!(operator(&headers), None);
    }
}
