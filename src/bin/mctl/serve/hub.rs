//! The one live subscription behind every `GET /api/events` stream, on the server's one watch
//! (which the pages share too). The first stream starts it, every open stream gets each change
//! from it, and the last one to go away stops it: twenty scripts following the server cost what
//! one does, and nothing keeps reading for a stream that is gone.

use super::calls::{event, send, STALL};
use super::clients::Outlet;
use super::Server;
use mission_control::service::{dispatch, Service, Sink};
use mission_control::sync::lock;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct Hub {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    live: Option<Live>,
    /// Numbers streams over the server's life, so a late `leave` never names a newer stream.
    next: u64,
    /// Set at shutdown: no watch starts again.
    closed: bool,
}

struct Live {
    service: Arc<Service>,
    streams: Arc<Mutex<Streams>>,
}

/// The open streams, and the `polling` notices sent so far: told again to a stream that joins
/// later (its user must know the directory is polled), under the same lock as the sending, so
/// none is lost or told twice.
#[derive(Default)]
struct Streams {
    open: Vec<(u64, Outlet)>,
    notices: Vec<Value>,
}

impl Hub {
    /// Adds a stream, starting the watch if none runs; returns its number for
    /// [`leave`](Self::leave), or `None` during a shutdown.
    pub fn join(&self, server: &Server, outlet: Outlet) -> Option<u64> {
        let mut state = lock(&self.state);
        if state.closed {
            return None;
        }
        state.next += 1;
        let id = state.next;
        let live = state.live.get_or_insert_with(|| start(server));
        let mut streams = lock(&live.streams);
        for notice in &streams.notices {
            send(&outlet, event("change", notice), STALL, false);
        }
        streams.open.push((id, outlet));
        Some(id)
    }

    /// Removes stream `id`; the last one out stops the watch (off the async runtime: a stop
    /// may wait for a read in progress).
    pub fn leave(&self, id: u64) {
        let stopped = {
            let mut state = lock(&self.state);
            let last = state.live.as_ref().is_some_and(|l| {
                let mut streams = lock(&l.streams);
                streams.open.retain(|(i, _)| *i != id);
                streams.open.is_empty()
            });
            if last {
                state.live.take().map(|l| l.service)
            } else {
                None
            }
        };
        if let Some(service) = stopped {
            tracing::debug!("the last events stream closed: the live watch stops");
            std::thread::spawn(move || service.stop());
        }
    }

    /// Ends every stream and stops the watch, for a shutdown that does not wait for them.
    pub fn close_all(&self) {
        let live = {
            let mut state = lock(&self.state);
            state.closed = true;
            state.live.take()
        };
        let Some(live) = live else {
            return;
        };
        for (_, outlet) in lock(&live.streams).open.drain(..) {
            lock(&outlet).take();
        }
        std::thread::spawn(move || live.service.stop());
    }
}

fn start(server: &Server) -> Live {
    let service = Arc::new(server.new_service());
    server.clients.keep(&service);
    let streams = Arc::new(Mutex::new(Streams::default()));
    let (watching, to_all) = (service.clone(), streams.clone());
    tokio::task::spawn_blocking(move || {
        watching.start();
        let sending = to_all.clone();
        let changes: Sink<Value> = Box::new(move |change| {
            // The streams are taken under the lock and sent to outside it: a join or a leave
            // never waits for a slow client.
            let open = {
                let mut streams = lock(&sending);
                if change["kind"] == "polling" {
                    streams.notices.push(change.clone());
                }
                streams.open.clone()
            };
            broadcast(&open, &event("change", &change));
        });
        if let Err(e) = dispatch(&watching, "watch_changes", Value::Null, changes) {
            let open = lock(&to_all).open.clone();
            broadcast(&open, &event("error", &json!(e)));
        }
    });
    Live { service, streams }
}

/// Sends one event to every stream. A stream that stays behind for long is ended by `send`, as
/// its own watcher's would be (and holds up the others that long: noted in docs/serve.md).
fn broadcast(open: &[(u64, Outlet)], event: &axum::response::sse::Event) {
    for (_, outlet) in open {
        send(outlet, event.clone(), STALL, false);
    }
}
