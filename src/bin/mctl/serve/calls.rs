//! The UI's transport. `POST /api/call/{command}` with the command's request as the body calls
//! the core service's handler of that name (the same contract the desktop shell serves).
//!
//! A page (`X-Mctl-Client`) first opens its stream, `GET /api/page`: server-sent events that
//! carry everything its commands stream, so a page holds one connection however many runs,
//! searches and live changes it shows (browsers allow six per server). A streaming command it
//! calls (numbered by the page, `X-Mctl-Call`) is answered `202` at once; its items come on the
//! page's stream as `item` events `{"call", "item"}`, then one `done` `{"call", "value"}` or
//! `error` `{"call", "error"}`; live changes and a followed run go on after `done`.
//!
//! A script's streaming call without a page gets the events on its own response instead
//! (`item`s, then `done` or `error`), and `GET /api/events` is the live stream for scripts: one
//! `change` event per change.

use super::clients::{valid_id, Outlet};
use super::guard::error_response;
use super::Server;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use mission_control::service::{dispatch, precheck, Service, Sink};
use mission_control::sync::lock;
use mission_control::wire::COMMANDS;
use mission_control::{Error, ErrorCode};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::{self, error::TrySendError};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt as _;

/// Events waiting for a client to read them.
const BUFFER: usize = 256;
/// How long a live change or a run update waits for a client that is behind before its stream
/// is ended: it never holds up what sends them for longer.
pub(super) const STALL: Duration = Duration::from_secs(10);

/// Sends `event`, waiting at most `patience` while the client is behind; false when the event
/// could not be sent. After `patience` the stream is ended (given up) unless `keep` says to
/// only drop the event. Called only off the async runtime's workers (the blocking pool, a
/// watcher's thread, a search's threads).
pub(super) fn send(outlet: &Outlet, mut event: Event, patience: Duration, keep: bool) -> bool {
    let started = Instant::now();
    loop {
        let mut tx = lock(outlet);
        let Some(sender) = tx.as_ref() else {
            return false;
        };
        match sender.try_send(event) {
            Ok(()) => return true,
            Err(TrySendError::Closed(_)) => {
                *tx = None; // the client is gone
                return false;
            }
            Err(TrySendError::Full(back)) => {
                if started.elapsed() >= patience {
                    if !keep {
                        tracing::warn!("a client stopped reading its stream: ending it");
                        *tx = None;
                    }
                    return false;
                }
                event = back;
            }
        }
        drop(tx);
        std::thread::sleep(Duration::from_millis(5));
    }
}

pub(super) fn event(name: &str, data: &Value) -> Event {
    Event::default().event(name).data(data.to_string())
}

/// `POST /api/call/{command}`.
pub async fn call(
    State(s): State<Arc<Server>>,
    Path(cmd): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(spec) = COMMANDS.iter().find(|c| c.name == cmd) else {
        let shown = mission_control::runs::clipped(&cmd);
        let e = Error::new(ErrorCode::Invalid, format!("there is no command `{shown}`"));
        return (StatusCode::NOT_FOUND, axum::Json(e)).into_response();
    };
    let req: Value = if body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => return invalid(format!("a malformed request: {e}")),
        }
    };
    let page = page_id(&headers);
    let service = match &page {
        Some(id) => match s.client(id) {
            Some(service) => service,
            None => return busy("too many pages are open: close one, or try again later"),
        },
        // A script's call without a page: a service of its own, for this call only.
        None => Arc::new(s.new_service()),
    };
    let name = spec.name;
    if !spec.streams {
        let Ok(turn) = s.reads.clone().acquire_owned().await else {
            return busy("the server is stopping");
        };
        let done = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            dispatch(&service, name, req, Box::new(|_| {}))
        })
        .await;
        return match done {
            Ok(Ok(value)) => axum::Json(value).into_response(),
            Ok(Err(e)) => error_response(e),
            Err(e) => error_response(Error::new(ErrorCode::Io, format!("the call failed: {e}"))),
        };
    }
    // A bad request is refused now, with the status a plain call gets, not at its stream's end.
    let checked = {
        let Ok(turn) = s.reads.clone().acquire_owned().await else {
            return busy("the server is stopping");
        };
        let (service, req) = (service.clone(), req.clone());
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            precheck(&service, name, &req)
        })
        .await
    };
    match checked {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return error_response(e),
        Err(e) => {
            return error_response(Error::new(ErrorCode::Io, format!("the call failed: {e}")))
        }
    }
    match page {
        Some(id) => on_page(&s, &id, service, name, req, &headers).await,
        None => on_response(&s, service, name, req).await,
    }
}

/// A page's streaming call: answered at once; its items, then its end, on the page's stream.
async fn on_page(
    s: &Arc<Server>,
    id: &str,
    service: Arc<Service>,
    name: &'static str,
    req: Value,
    headers: &HeaderMap,
) -> Response {
    let Some(n) = headers
        .get("x-mctl-call")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    else {
        return invalid("a streaming command needs X-Mctl-Call: N".into());
    };
    let Some(outlet) = s.page_outlet(id) else {
        let e = Error::new(
            ErrorCode::Invalid,
            "open the page's stream first (GET /api/page)",
        );
        return (StatusCode::CONFLICT, axum::Json(e)).into_response();
    };
    let searches = s.searches.clone();
    tokio::spawn(async move {
        // Searches wait their turn: each one already keeps every core busy.
        let permit = if name == "search" {
            searches.acquire_owned().await.ok()
        } else {
            None
        };
        let _ = tokio::task::spawn_blocking(move || {
            // A search never waits for its page: its hits come from the search's threads,
            // which every search shares. A page too far behind has its search stopped.
            let search = name == "search";
            let lost = Arc::new(AtomicBool::new(false));
            let items: Sink<Value> = {
                let (outlet, lost, service) = (outlet.clone(), lost.clone(), service.clone());
                Box::new(move |item| {
                    let data = json!({ "call": n, "item": item });
                    let patience = if search { Duration::ZERO } else { STALL };
                    if !send(&outlet, event("item", &data), patience, search) && search {
                        lost.store(true, Ordering::Relaxed);
                        let _ = service.search_cancel(());
                    }
                })
            };
            let end = match dispatch(&service, name, req, items) {
                _ if lost.load(Ordering::Relaxed) => {
                    let e = Error::new(
                        ErrorCode::Busy,
                        "the page fell behind reading the hits: the search was stopped",
                    );
                    event("error", &json!({ "call": n, "error": e }))
                }
                Ok(value) => event("done", &json!({ "call": n, "value": value })),
                Err(e) => event("error", &json!({ "call": n, "error": e })),
            };
            send(&outlet, end, STALL, false);
            drop(permit);
        })
        .await;
    });
    (StatusCode::ACCEPTED, axum::Json(json!({}))).into_response()
}

/// A script's streaming call: its items, then its end, as the events of this response.
async fn on_response(
    s: &Arc<Server>,
    service: Arc<Service>,
    name: &'static str,
    req: Value,
) -> Response {
    let Ok(permit) = s.streams.clone().try_acquire_owned() else {
        return busy("too many streams are open: try again later");
    };
    let searching = if name == "search" {
        s.searches.clone().acquire_owned().await.ok()
    } else {
        None
    };
    let (tx, rx) = mpsc::channel(BUFFER);
    if name == "watch_changes" {
        service.start();
    }
    s.clients.keep(&service);
    let outlet: Outlet = Arc::new(Mutex::new(Some(tx)));
    let stopped = service.clone();
    tokio::task::spawn_blocking(move || {
        let items: Sink<Value> = {
            let (outlet, service) = (outlet.clone(), service.clone());
            Box::new(move |item| {
                if !send(&outlet, event("item", &item), STALL, false) && name == "search" {
                    let _ = service.search_cancel(());
                }
            })
        };
        let end = match dispatch(&service, name, req, items) {
            Ok(value) => event("done", &value),
            Err(e) => event("error", &json!(e)),
        };
        send(&outlet, end, STALL, false);
        drop(searching);
    });
    // A client that goes away stops what it started (a live session, a search).
    events_response(rx, permit, move || stopped.stop())
}

/// `GET /api/page`: page `X-Mctl-Client`'s stream.
pub async fn page(State(s): State<Arc<Server>>, headers: HeaderMap) -> Response {
    let Some(id) = page_id(&headers) else {
        return invalid(
            "a page's stream needs X-Mctl-Client: a name of 8 to 64 letters, digits, - and _"
                .into(),
        );
    };
    let Ok(permit) = s.streams.clone().try_acquire_owned() else {
        return busy("too many streams are open: try again later");
    };
    let (tx, rx) = mpsc::channel(BUFFER);
    let Some(opened) = s.open_page(&id, tx) else {
        return busy("too many pages are open: close one, or try again later");
    };
    let server = s.clone();
    events_response(rx, permit, move || server.page_closed(&id, opened))
}

/// `GET /api/events`: every change of the served directories, as `change` events, until the
/// client goes away. Every such stream shares one live watch (see [`super::hub`]).
pub async fn events(State(s): State<Arc<Server>>) -> Response {
    let Ok(permit) = s.streams.clone().try_acquire_owned() else {
        return busy("too many streams are open: try again later");
    };
    let (tx, rx) = mpsc::channel(BUFFER);
    let outlet: Outlet = Arc::new(Mutex::new(Some(tx)));
    let Some(id) = s.events.join(&s, outlet) else {
        return busy("the server is stopping");
    };
    let server = s.clone();
    events_response(rx, permit, move || server.events.leave(id))
}

/// Runs its closure once, on a thread of its own, when dropped: when a stream's response ends,
/// however it ends (the client went away, or every sender was dropped).
struct OnDrop(Option<Box<dyn FnOnce() + Send>>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            // A stop may wait for a read or a send in progress: never on the async runtime.
            std::thread::spawn(f);
        }
    }
}

/// The events of `rx` as a response; the stream permit is held, and `ended` runs once the
/// response is over.
fn events_response(
    rx: mpsc::Receiver<Event>,
    permit: tokio::sync::OwnedSemaphorePermit,
    ended: impl FnOnce() + Send + 'static,
) -> Response {
    let guard = OnDrop(Some(Box::new(ended)));
    let stream = ReceiverStream::new(rx).map(move |e| {
        let _held = (&permit, &guard);
        Ok::<_, Infallible>(e)
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// The page a request comes from (`X-Mctl-Client`), when it names one validly.
fn page_id(headers: &HeaderMap) -> Option<String> {
    let id = headers.get("x-mctl-client")?.to_str().ok()?;
    valid_id(id).then(|| id.to_string())
}

fn invalid(message: String) -> Response {
    error_response(Error::new(ErrorCode::Invalid, message))
}

fn busy(message: &str) -> Response {
    let e = Error::new(ErrorCode::Busy, message);
    (StatusCode::SERVICE_UNAVAILABLE, axum::Json(e)).into_response()
}
