//! The UI's transport: `POST /api/call/{command}` with the command's request as the body calls
//! the core service's handler of that name (the same contract the desktop shell serves). A
//! command that streams answers with Server-Sent Events: an `item` event per item, then one
//! `done` event with the response (or an `error` event); live changes and a followed run go on
//! after `done`, until the page closes the stream or the command is superseded.
//! `GET /api/events` is the live stream for scripts: one `change` event per change.

use super::clients::valid_id;
use super::guard::error_response;
use super::Server;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use mission_control::service::{dispatch, Service, Sink};
use mission_control::wire::COMMANDS;
use mission_control::{Error, ErrorCode};
use serde_json::Value;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt as _;

/// Events waiting for a page to read them; a sender waits when they are this many.
const BUFFER: usize = 256;
/// A page that reads nothing for this long while events wait loses its stream (it ends), so it
/// never holds up what sends them.
const STALL: Duration = Duration::from_secs(10);

/// The sending end of one stream, shared by the command's sink and what sends `done`; `None`
/// once the stream was given up.
type Outlet = Arc<Mutex<Option<mpsc::Sender<Event>>>>;

/// Sends `event`, waiting while the page is behind, at most [`STALL`]; false when the stream is
/// gone. Called only off the async runtime's workers (from the blocking pool, the watcher's
/// thread or the search's threads).
fn send(outlet: &Outlet, mut event: Event) -> bool {
    let started = Instant::now();
    loop {
        let mut tx = outlet.lock().unwrap_or_else(|e| e.into_inner());
        let Some(sender) = tx.as_ref() else {
            return false;
        };
        match sender.try_send(event) {
            Ok(()) => return true,
            Err(TrySendError::Closed(_)) => {
                *tx = None; // the page is gone
                return false;
            }
            Err(TrySendError::Full(back)) => {
                if started.elapsed() > STALL {
                    tracing::warn!("a page stopped reading its stream: ending it");
                    *tx = None;
                    return false;
                }
                event = back;
            }
        }
        drop(tx);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends each item as event `name`; once the stream is gone, `gone` is called (a search nobody
/// reads stops).
fn sink(
    outlet: &Outlet,
    name: &'static str,
    gone: impl Fn() + Send + Sync + 'static,
) -> Sink<Value> {
    let outlet = outlet.clone();
    Box::new(move |item| {
        if !send(&outlet, Event::default().event(name).data(item.to_string())) {
            gone();
        }
    })
}

/// `POST /api/call/{command}`.
pub async fn call(
    State(s): State<Arc<Server>>,
    Path(cmd): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(spec) = COMMANDS.iter().find(|c| c.name == cmd) else {
        let e = Error::new(ErrorCode::Invalid, format!("there is no command {cmd:?}"));
        return (StatusCode::NOT_FOUND, axum::Json(e)).into_response();
    };
    let req: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return error_response(Error::new(
                    ErrorCode::Invalid,
                    format!("a malformed request: {e}"),
                ))
            }
        }
    };
    let client = headers
        .get("x-mctl-client")
        .and_then(|v| v.to_str().ok())
        .filter(|id| valid_id(id))
        .map(str::to_string);
    let service = match &client {
        Some(id) => s.client(id),
        // A script's call without a page: a service of its own, for this call only.
        None => Arc::new(s.new_service()),
    };
    // Searches wait their turn: each one already keeps every core busy.
    let _search = if spec.name == "search" {
        s.searches.clone().acquire_owned().await.ok()
    } else {
        None
    };
    if !spec.streams {
        let name = spec.name;
        let done =
            tokio::task::spawn_blocking(move || dispatch(&service, name, req, Box::new(|_| {})))
                .await;
        return match done {
            Ok(Ok(value)) => axum::Json(value).into_response(),
            Ok(Err(e)) => error_response(e),
            Err(e) => error_response(Error::new(ErrorCode::Io, format!("the call failed: {e}"))),
        };
    }
    let Ok(permit) = s.streams.clone().try_acquire_owned() else {
        let e = Error::new(
            ErrorCode::Busy,
            "too many streams are open: try again later",
        );
        return (StatusCode::SERVICE_UNAVAILABLE, axum::Json(e)).into_response();
    };
    let (tx, rx) = mpsc::channel(BUFFER);
    if spec.name == "watch_changes" {
        if client.is_none() {
            service.start();
        }
        on_close(&tx, s.clone(), client.clone(), service.clone());
    }
    let outlet: Outlet = Arc::new(Mutex::new(Some(tx)));
    let name = spec.name;
    tokio::task::spawn_blocking(move || {
        let searcher = service.clone();
        let items = sink(&outlet, "item", move || {
            if name == "search" {
                let _ = searcher.search_cancel(());
            }
        });
        let event = match dispatch(&service, name, req, items) {
            Ok(value) => Event::default().event("done").data(value.to_string()),
            Err(e) => Event::default()
                .event("error")
                .data(serde_json::to_string(&e).unwrap_or_default()),
        };
        send(&outlet, event);
        drop(_search);
    });
    events_response(rx, permit)
}

/// When the page closes its live stream (or goes away), its service stops.
fn on_close(
    tx: &mpsc::Sender<Event>,
    s: Arc<Server>,
    client: Option<String>,
    service: Arc<Service>,
) {
    let watch = tx.clone();
    match &client {
        Some(id) => s.watching(id, true),
        None => s.clients.keep_stream(&service),
    }
    tokio::spawn(async move {
        watch.closed().await;
        drop(watch);
        match client {
            Some(id) => s.watching(&id, false),
            None => {
                tokio::task::spawn_blocking(move || service.stop());
            }
        }
    });
}

/// `GET /api/events`: every change of the served directories, as `change` events, until the
/// client goes away.
pub async fn events(State(s): State<Arc<Server>>) -> Response {
    let Ok(permit) = s.streams.clone().try_acquire_owned() else {
        let e = Error::new(
            ErrorCode::Busy,
            "too many streams are open: try again later",
        );
        return (StatusCode::SERVICE_UNAVAILABLE, axum::Json(e)).into_response();
    };
    let (tx, rx) = mpsc::channel(BUFFER);
    let service = Arc::new(s.new_service());
    on_close(&tx, s, None, service.clone());
    let outlet: Outlet = Arc::new(Mutex::new(Some(tx)));
    tokio::task::spawn_blocking(move || {
        service.start();
        let changes = sink(&outlet, "change", || {});
        if let Err(e) = dispatch(&service, "watch_changes", Value::Null, changes) {
            let data = serde_json::to_string(&e).unwrap_or_default();
            send(&outlet, Event::default().event("error").data(data));
        }
    });
    events_response(rx, permit)
}

fn events_response(
    rx: mpsc::Receiver<Event>,
    permit: tokio::sync::OwnedSemaphorePermit,
) -> Response {
    // The permit is held as long as the stream is.
    let stream = ReceiverStream::new(rx).map(move |e| {
        let _held = &permit;
        Ok::<_, Infallible>(e)
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}
