//! The JSON API for scripts: each answer's body is exactly what the same `mctl` command prints
//! with `--json` (`GET /api/runs` is `mctl runs --json`, and so on), from the same core calls.
//! `?dir=` names one of the runs directories served (the first when absent).

use super::guard::{bytes_response, error_response};
use super::Server;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mission_control::export::{ExportFormat, ExportOptions, ExportValues};
use mission_control::gc::{self, GcPolicy};
use mission_control::pins::{PinChange, Pins};
use mission_control::retained::{ByteSource, PeekRequest, ValueText};
use mission_control::runs::{now_ms, RunsDir};
use mission_control::service::read_only;
use mission_control::{Error, ErrorCode};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

type Params = Query<HashMap<String, String>>;

/// Runs `f` on the blocking pool with the runs directory `?dir=` names, and answers its result
/// as the CLI prints it (pretty JSON and a newline).
async fn with_dir<T: Serialize + Send + 'static>(
    s: Arc<Server>,
    params: &HashMap<String, String>,
    f: impl FnOnce(RunsDir) -> Result<T, Error> + Send + 'static,
) -> Response {
    let dir = params.get("dir").cloned();
    let Ok(turn) = s.reads.clone().acquire_owned().await else {
        return error_response(Error::new(ErrorCode::Io, "the server is stopping"));
    };
    let done = tokio::task::spawn_blocking(move || {
        let _turn = turn;
        f(s.open_dir(dir.as_deref())?)
    })
    .await;
    match done {
        Ok(Ok(value)) => json_response(&value),
        Ok(Err(e)) => error_response(e),
        Err(e) => error_response(Error::new(
            ErrorCode::Io,
            format!("the request failed: {e}"),
        )),
    }
}

/// `value` as `mctl --json` prints it.
pub fn json_response(value: &impl Serialize) -> Response {
    match serde_json::to_vec_pretty(value) {
        Ok(mut body) => {
            body.push(b'\n');
            bytes_response("application/json", body)
        }
        Err(e) => error_response(Error::new(ErrorCode::Io, e.to_string())),
    }
}

/// `GET /api/runs` = `mctl runs --json`.
pub async fn runs(State(s): State<Arc<Server>>, Query(p): Params) -> Response {
    with_dir(s, &p, |d| d.list()).await
}

/// `GET /api/runs/{run}` = `mctl show RUN --json`.
pub async fn show(
    State(s): State<Arc<Server>>,
    Path(run): Path<String>,
    Query(p): Params,
) -> Response {
    with_dir(s, &p, move |d| d.detail(&run)).await
}

/// `GET /api/runs/{run}/results/{call}/stub` = `mctl stub RUN CALL --json`.
pub async fn stub(
    State(s): State<Arc<Server>>,
    Path((run, call)): Path<(String, String)>,
    Query(p): Params,
) -> Response {
    with_dir(s, &p, move |d| d.stub(&run, &call)).await
}

/// `GET /api/runs/{run}/results/{call}/peek?lines=A-B` or `?query=TEXT` = `mctl peek --json`.
pub async fn peek(
    State(s): State<Arc<Server>>,
    Path((run, call)): Path<(String, String)>,
    Query(p): Params,
) -> Response {
    let request = match (p.get("lines"), p.get("query")) {
        (Some(lines), None) => match crate::cli::parse_lines(lines) {
            Ok((start, end)) => PeekRequest::Range { start, end },
            Err(e) => return error_response(Error::new(ErrorCode::Invalid, e)),
        },
        (None, Some(text)) => PeekRequest::Query { text: text.clone() },
        _ => {
            let message = "give one of ?lines=A-B and ?query=TEXT";
            return error_response(Error::new(ErrorCode::Invalid, message));
        }
    };
    with_dir(s, &p, move |d| d.peek(&run, &call, &request)).await
}

/// `GET /api/runs/{run}/results/{call}/full?offset=&limit=` = the bytes `mctl full RUN CALL`
/// prints, from byte `offset` (0) for at most `limit` bytes (all); the whole size is in the
/// `X-Total-Bytes` header.
pub async fn full(
    State(s): State<Arc<Server>>,
    Path((run, call)): Path<(String, String)>,
    Query(p): Params,
) -> Response {
    let number = |name: &str| -> Result<Option<u64>, Error> {
        p.get(name)
            .map(|v| v.parse::<u64>())
            .transpose()
            .map_err(|_| {
                Error::new(
                    ErrorCode::Invalid,
                    format!("?{name}= takes a number of bytes"),
                )
            })
    };
    let (offset, limit) = match (number("offset"), number("limit")) {
        (Ok(o), Ok(l)) => (o.unwrap_or(0), l),
        (Err(e), _) | (_, Err(e)) => return error_response(e),
    };
    let dir = p.get("dir").cloned();
    let Ok(turn) = s.reads.clone().acquire_owned().await else {
        return error_response(Error::new(ErrorCode::Io, "the server is stopping"));
    };
    let done = tokio::task::spawn_blocking(move || {
        let found = s.open_dir(dir.as_deref())?.find_result(&run, &call)?;
        let total = found.content.len();
        let start = offset.min(total);
        let end = limit.map_or(total, |l| offset.saturating_add(l).min(total));
        Ok::<_, Error>((found.content, total, start, end.max(start)))
    })
    .await;
    let (text, total, start, end) = match done {
        Ok(Ok(found)) => found,
        Ok(Err(e)) => return error_response(e),
        Err(e) => {
            return error_response(Error::new(
                ErrorCode::Io,
                format!("the request failed: {e}"),
            ))
        }
    };
    // Streaming the range holds two chunks: it needs no turn, and a slow client holds none.
    drop(turn);
    let mut resp = Response::new(stream_range(text, start, end));
    let headers = resp.headers_mut();
    headers.insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&total.to_string()) {
        headers.insert("x-total-bytes", v);
    }
    resp
}

/// Bytes `start..end` of `text` as a streamed body: read a chunk at a time on the blocking
/// pool, only as fast as the client takes them (the channel holds two), and not at all once it
/// has gone away. A client that stops reading holds no thread: the send waits, not a reader.
fn stream_range(text: ValueText, start: u64, end: u64) -> axum::body::Body {
    const CHUNK: u64 = 256 << 10;
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(2);
    let text = Arc::new(text);
    tokio::spawn(async move {
        let mut at = start;
        while at < end {
            let next = (at + CHUNK).min(end);
            let source = text.clone();
            let chunk = tokio::task::spawn_blocking(move || source.read_range(at, next))
                .await
                .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
            let failed = chunk.is_err();
            if tx.send(chunk).await.is_err() || failed {
                return;
            }
            at = next;
        }
    });
    axum::body::Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// `GET /api/runs/{run}/export?format=html|md&values=stub|full|none&redact=true|false` = the
/// document `mctl export RUN` prints (html, stub, redacted unless asked), as a download named
/// after the run's title. It is written as it is made: a run with a value of hundreds of
/// megabytes is read a piece at a time, only as fast as the client takes it, and not at all
/// once it has gone away.
pub async fn export(
    State(s): State<Arc<Server>>,
    Path(run): Path<String>,
    Query(p): Params,
) -> Response {
    let opts = match export_options(&p) {
        Ok(o) => o,
        Err(e) => return error_response(e),
    };
    let dir = p.get("dir").cloned();
    let Ok(turn) = s.reads.clone().acquire_owned().await else {
        return error_response(Error::new(ErrorCode::Io, "the server is stopping"));
    };
    // Read (and its secrets counted) under a turn; written, as fast as the client reads, without.
    let prepared = tokio::task::spawn_blocking(move || {
        let _turn = turn;
        mission_control::export::prepare(&s.open_dir(dir.as_deref())?, &run, &opts)
    })
    .await;
    let prepared = match prepared {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => return error_response(e),
        Err(e) => {
            return error_response(Error::new(
                ErrorCode::Io,
                format!("the request failed: {e}"),
            ))
        }
    };
    let name = prepared.file_name();
    let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(2);
    tokio::task::spawn_blocking(move || {
        let mut out = ChannelWriter {
            tx,
            buf: Vec::with_capacity(ChannelWriter::CHUNK),
        };
        if let Err(e) = prepared.write_to(&mut out) {
            // The body ends in an error, never as if whole (a client that left sees nothing).
            tracing::debug!("an export stopped: {}", e.message);
            let _ = out.tx.blocking_send(Err(std::io::Error::other(e.message)));
        }
    });
    let body = axum::body::Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx));
    let mut resp = Response::new(body);
    let headers = resp.headers_mut();
    let kind = match opts.format {
        ExportFormat::Html => "text/html; charset=utf-8",
        ExportFormat::Md => "text/markdown; charset=utf-8",
    };
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    // The name is the run's title in letters and digits, which may be any script's: RFC 6266's
    // `filename*` carries it whole.
    if let Ok(v) =
        HeaderValue::from_str(&format!("attachment; filename*=UTF-8''{}", percent(&name)))
    {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    resp
}

/// The export options a query names, `mctl export`'s defaults for what it leaves out.
fn export_options(p: &HashMap<String, String>) -> Result<ExportOptions, Error> {
    let bad = |name: &str, v: &str, allowed: &str| {
        Error::new(
            ErrorCode::Invalid,
            format!("?{name}={v} is not one of {allowed}"),
        )
    };
    let format = match p.get("format").map(String::as_str) {
        None | Some("html") => ExportFormat::Html,
        Some("md") => ExportFormat::Md,
        Some(v) => return Err(bad("format", v, "html, md")),
    };
    let values = match p.get("values").map(String::as_str) {
        None | Some("stub") => ExportValues::Stub,
        Some("full") => ExportValues::Full,
        Some("none") => ExportValues::None,
        Some(v) => return Err(bad("values", v, "stub, full, none")),
    };
    let redact = match p.get("redact").map(String::as_str) {
        None | Some("true") => true,
        Some("false") => false,
        Some(v) => return Err(bad("redact", v, "true, false")),
    };
    Ok(ExportOptions {
        format,
        values,
        redact,
    })
}

/// `text` with every byte but letters, digits and `-._~` percent-encoded (RFC 3986).
fn percent(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A writer whose bytes go to a streamed body, in chunks, waiting while the client is two
/// chunks behind; once the client has gone, every write fails, which ends the export.
struct ChannelWriter {
    tx: tokio::sync::mpsc::Sender<std::io::Result<Vec<u8>>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    const CHUNK: usize = 64 << 10;

    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(Self::CHUNK));
        self.tx
            .blocking_send(Ok(chunk))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client left"))
    }
}

impl std::io::Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(buf);
        if self.buf.len() >= Self::CHUNK {
            self.send()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// The body of `POST /api/gc`: the policy (as `mctl gc` takes it, in `GcPolicy`'s JSON
/// fields), the runs directory, and whether to apply the plan.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GcBody {
    #[serde(flatten)]
    policy: GcPolicy,
    #[serde(default)]
    apply: bool,
    #[serde(default)]
    dir: Option<String>,
}

/// `POST /api/gc` = `mctl gc --json` (with `"apply": true`, `mctl gc --apply --json`).
pub async fn gc(State(s): State<Arc<Server>>, body: axum::body::Bytes) -> Response {
    let body: GcBody = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => {
            return error_response(Error::new(
                ErrorCode::Invalid,
                format!("a malformed GC request: {e}"),
            ))
        }
    };
    if body.apply && !s.allow_gc {
        return error_response(read_only("garbage collection"));
    }
    let mut params = HashMap::new();
    if let Some(d) = body.dir {
        params.insert("dir".to_string(), d);
    }
    let (policy, apply) = (body.policy, body.apply);
    with_dir(s, &params, move |d| {
        let pins = Pins::load_in(d.config_dir())?;
        let plan = gc::plan(&d, &policy, &pins, now_ms())?;
        if !apply {
            return Ok(plan);
        }
        let never = std::sync::atomic::AtomicBool::new(false);
        gc::apply(&d, &plan, &policy, now_ms(), &never, |_| {})
    })
    .await
}

/// `PUT /api/pins/{run}` = `mctl pin RUN --json`.
pub async fn pin(s: State<Arc<Server>>, run: Path<String>, p: Params) -> Response {
    set_pin(s, run, p, true).await
}

/// `DELETE /api/pins/{run}` = `mctl unpin RUN --json`.
pub async fn unpin(s: State<Arc<Server>>, run: Path<String>, p: Params) -> Response {
    set_pin(s, run, p, false).await
}

async fn set_pin(
    State(s): State<Arc<Server>>,
    Path(run): Path<String>,
    Query(p): Params,
    pinned: bool,
) -> Response {
    if !s.allow_gc {
        return error_response(read_only(if pinned { "pinning" } else { "unpinning" }));
    }
    with_dir(s, &p, move |d| {
        let (id, changed) = d.set_pinned(&run, pinned)?;
        Ok(PinChange {
            run: id,
            pinned,
            changed,
        })
    })
    .await
}

/// Any other path under `/api/`.
pub async fn not_found() -> Response {
    let e = Error::new(ErrorCode::Invalid, "no such API endpoint");
    (StatusCode::NOT_FOUND, axum::Json(e)).into_response()
}
