//! The rules every request passes before a handler sees it, and the headers every answer
//! carries:
//! - the `Host` header names the bind address, loopback, `localhost` or a name given with
//!   `--allow-host` (else 421: a DNS-rebinding page cannot reach the API through its own name);
//! - an API request carries the token in an `Authorization: Bearer` header (else 401). There is
//!   no cookie: a browser sends a cookie to every port of its host, so any other local server
//!   the user visits would receive it. A token in the query string is refused, since URLs end
//!   up in logs and histories;
//! - a request that is not a GET carries a same-origin `Origin` (else 403), and a GET of the API
//!   that the browser says comes from another site is refused (403);
//! - every answer has a strict Content-Security-Policy, `nosniff` and `no-referrer`, and API
//!   answers `Cache-Control: no-store`.
//!
//! A refusal is counted for the log's summary (`quiet.rs`), and logged alone only at DEBUG.

use super::Server;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::IpAddr;
use std::sync::Arc;
use subtle::ConstantTimeEq;

pub async fn guard(State(s): State<Arc<Server>>, req: Request, next: Next) -> Response {
    let api = req.uri().path().starts_with("/api/");
    let mut resp = match refusal(&s, &req, api) {
        Some((status, reason, message)) => {
            tracing::debug!(method = %req.method(), path = req.uri().path(), %status, "refused: {message}");
            s.refused.note(reason);
            let body = serde_json::json!({ "code": code_of(status), "message": message });
            (status, axum::Json(body)).into_response()
        }
        None => {
            if api {
                // It showed the token: its connection is never closed to make room at the cap.
                if let Some(conn) = req.extensions().get::<Arc<super::conns::Conn>>() {
                    conn.authenticated();
                }
            }
            let resp = next.run(req).await;
            match api {
                true => json_error(resp).await,
                false => resp,
            }
        }
    };
    let h = resp.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, super::assets::csp());
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if api {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    resp
}

/// An error axum answered in plain text (a path that is not UTF-8, a body over the limit, a
/// method a route does not take) as the API's `{code, message}`, its status and other headers
/// kept: a script reads every error of the API one way.
async fn json_error(resp: Response) -> Response {
    let status = resp.status();
    let json = (resp.headers().get(header::CONTENT_TYPE))
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    if json || !(status.is_client_error() || status.is_server_error()) {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    // axum's own refusals are a line; a longer body is cut.
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let message = match text.trim() {
        "" => status.canonical_reason().unwrap_or("refused").to_owned(),
        said => said.to_owned(),
    };
    let code = if status.is_server_error() {
        "io"
    } else {
        "invalid"
    };
    let body = serde_json::json!({ "code": code, "message": message });
    let mut out = (status, axum::Json(body)).into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            out.headers_mut().append(name, value.clone());
        }
    }
    out
}

fn code_of(status: StatusCode) -> &'static str {
    match status {
        StatusCode::UNAUTHORIZED => "unauthorized",
        StatusCode::MISDIRECTED_REQUEST => "wrong-host",
        _ => "forbidden",
    }
}

/// Why `req` is refused, if it is: its status, the reason it is counted under, and what the
/// answer says.
fn refusal(s: &Server, req: &Request, api: bool) -> Option<(StatusCode, &'static str, String)> {
    let headers = req.headers();
    // One Host, and a request line that names none other (`GET http://other/...`): the name
    // checked is the one the request is for.
    let hosts = headers.get_all(header::HOST).iter().count();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let other = (req.uri().authority())
        .filter(|a| host.is_none_or(|h| !h.eq_ignore_ascii_case(a.as_str())));
    if hosts > 1 || other.is_some() {
        let message = "one Host header, and no other host in the request line".to_string();
        return Some((
            StatusCode::MISDIRECTED_REQUEST,
            "for another host (421)",
            message,
        ));
    }
    let Some(host) = host else {
        let message = "no Host header".to_string();
        return Some((
            StatusCode::MISDIRECTED_REQUEST,
            "without a Host (421)",
            message,
        ));
    };
    if !host_allowed(s, host) {
        let name = host_name(host);
        let message = format!("this server does not answer to {name:?}: start it with --allow-host {name} to allow that name");
        return Some((
            StatusCode::MISDIRECTED_REQUEST,
            "for another host (421)",
            message,
        ));
    }
    if !api {
        return None; // the UI's own files: nothing secret, and the page loads before it has the token
    }
    let query = req.uri().query().unwrap_or("");
    // Decoded, as a server or proxy logging the URL may decode it: `Token=`, `%74oken=`, the
    // token as a key, under any name or inside any value are the token in the URL all the same.
    let holds_token = |text: &str| !s.token.is_empty() && text.contains(s.token.as_str());
    let token_in_url = form_urlencoded::parse(query.as_bytes()).any(|(key, value)| {
        key.to_ascii_lowercase().contains("token") || holds_token(&key) || holds_token(&value)
    });
    if token_in_url {
        let message = "a token in the URL is refused (URLs end up in logs): send it in an Authorization: Bearer header";
        return Some((
            StatusCode::UNAUTHORIZED,
            "with a token in the URL (401)",
            message.into(),
        ));
    }
    if !authorized(s, headers) {
        let message = "this needs the server's token: an Authorization: Bearer header, or the URL with #token= it printed";
        return Some((
            StatusCode::UNAUTHORIZED,
            "without the token (401)",
            message.into(),
        ));
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
        // `https://` too: behind a TLS proxy that passes the Host on.
        let same =
            origin.is_some_and(|o| o == format!("http://{host}") || o == format!("https://{host}"));
        if !same {
            let message = "a request that changes something must come from this server's own page (same-origin Origin header)";
            return Some((
                StatusCode::FORBIDDEN,
                "from another origin (403)",
                message.into(),
            ));
        }
    }
    // Another site's page has no token to send; refused all the same, should one leak.
    let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    if matches!(site, Some("cross-site" | "same-site")) {
        let message = "a request from another site's page is refused";
        return Some((
            StatusCode::FORBIDDEN,
            "from another site's page (403)",
            message.into(),
        ));
    }
    None
}

/// The host part of a `Host` header (without the port; an IPv6 address without brackets);
/// empty, never allowed, when what follows the name is not a port (`127.0.0.1:80@evil`).
fn host_name(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    let (name, rest) = match host.strip_prefix('[') {
        // `[v6]` or `[v6]:port`
        Some(inner) => match inner.split_once(']') {
            Some((name, rest)) => (name, rest),
            None => return String::new(),
        },
        // `name` or `name:port`
        None => match host.split_once(':') {
            Some((name, _)) => (name, &host[name.len()..]),
            None => (host.as_str(), ""),
        },
    };
    let is_port = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    match rest.is_empty() || rest.strip_prefix(':').is_some_and(is_port) {
        true => name.to_owned(),
        false => String::new(),
    }
}

fn host_allowed(s: &Server, host: &str) -> bool {
    let name = host_name(host);
    if name.is_empty() {
        return false;
    }
    if name == "localhost" || s.allow_hosts.contains(&name) {
        return true;
    }
    match name.parse::<IpAddr>() {
        // An address is never rebound by DNS: loopback, the bind address, or any address of
        // this machine when bound to all of them.
        Ok(ip) => ip.is_loopback() || ip == s.bind.ip() || s.bind.ip().is_unspecified(),
        Err(_) => false,
    }
}

fn equal(given: &str, secret: &str) -> bool {
    bool::from(given.as_bytes().ct_eq(secret.as_bytes()))
}

fn authorized(s: &Server, headers: &HeaderMap) -> bool {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"));
    bearer.is_some_and(|(_, given)| equal(given.trim(), &s.token))
}

/// An error of the core as an HTTP answer: `{code, message}` with the status its code means.
pub fn error_response(e: mission_control::Error) -> Response {
    use mission_control::ErrorCode as C;
    let status = match e.code {
        C::UnknownRun | C::UnknownCall => StatusCode::NOT_FOUND,
        C::Invalid | C::Peek | C::NotRetained => StatusCode::BAD_REQUEST,
        C::Forbidden => StatusCode::FORBIDDEN,
        C::Busy => StatusCode::CONFLICT,
        C::RunsDir => StatusCode::SERVICE_UNAVAILABLE,
        C::Io => StatusCode::INTERNAL_SERVER_ERROR,
    };
    (status, axum::Json(e)).into_response()
}

/// An answer of `body`'s bytes with a content type.
pub fn bytes_response(content_type: &'static str, body: Vec<u8>) -> Response {
    let mut resp = Response::new(Body::from(body));
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    resp
}
