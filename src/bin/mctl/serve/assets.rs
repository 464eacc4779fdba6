//! The UI, embedded in the binary at build time from `ui/dist` (so `mctl` alone serves it), and
//! the Content-Security-Policy its pages get: the desktop app's own (from
//! `src-tauri/tauri.conf.json`), with the page allowed to call back only its own origin.

use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::sync::OnceLock;

#[derive(rust_embed::Embed)]
#[folder = "ui/dist"]
#[allow_missing = true]
struct Ui;

/// The app's policy, as one header value.
pub fn csp() -> HeaderValue {
    static CSP: OnceLock<HeaderValue> = OnceLock::new();
    CSP.get_or_init(|| {
        let conf: serde_json::Value =
            serde_json::from_str(include_str!("../../../../src-tauri/tauri.conf.json"))
                .unwrap_or_default();
        let mut rules: Vec<String> = conf["app"]["security"]["csp"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| *k != "connect-src")
                    .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or("'none'")))
                    .collect()
            })
            .unwrap_or_default();
        if rules.is_empty() {
            rules.push("default-src 'self'".into()); // never no policy at all
        }
        rules.push("connect-src 'self'".into());
        rules.push("frame-ancestors 'none'".into());
        HeaderValue::from_str(&rules.join("; "))
            .unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'"))
    })
    .clone()
}

/// `GET` of any path outside `/api/`: a file of the UI, `index.html` for `/`.
pub async fn serve(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    match Ui::get(path) {
        Some(file) => {
            let mime = file.metadata.mimetype();
            let mut resp = file.data.into_owned().into_response();
            let h = resp.headers_mut();
            if let Ok(v) = HeaderValue::from_str(mime) {
                h.insert(header::CONTENT_TYPE, v);
            }
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            resp
        }
        None if Ui::get("index.html").is_none() => (
            StatusCode::SERVICE_UNAVAILABLE,
            "This mctl was built without its UI (ui/dist was missing): build the UI with \
             `cd ui && npm run build`, then build mctl again. The JSON API under /api/ works.\n",
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "not found\n").into_response(),
    }
}
