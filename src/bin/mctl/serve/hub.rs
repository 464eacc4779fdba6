//! The one live watch behind every `GET /api/events` stream. The first stream starts it (one
//! watcher, one first scan of the served directories), every open stream gets each change from
//! it, and the last one to go away stops it: twenty scripts following the server cost what one
//! does, and nothing keeps reading for a stream that is gone.

use super::calls::{event, send, STALL};
use super::clients::Outlet;
use super::Server;
use mission_control::service::{dispatch, Service, Sink};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex, MutexGuard};

type Subscribers = Arc<Mutex<Vec<(u64, Outlet)>>>;

#[derive(Default)]
pub struct Hub {
    live: Mutex<Option<Live>>,
}

struct Live {
    service: Arc<Service>,
    subscribers: Subscribers,
    next: u64,
}

impl Hub {
    /// Adds a stream, starting the watch if none runs; returns its number for
    /// [`leave`](Self::leave).
    pub fn join(&self, server: &Server, outlet: Outlet) -> u64 {
        let mut live = lock(&self.live);
        let live = live.get_or_insert_with(|| start(server));
        live.next += 1;
        lock(&live.subscribers).push((live.next, outlet));
        live.next
    }

    /// Removes stream `id`; the last one out stops the watch (off the async runtime: a stop
    /// may wait for a read in progress).
    pub fn leave(&self, id: u64) {
        let stopped = {
            let mut live = lock(&self.live);
            let last = live.as_ref().is_some_and(|l| {
                let mut subs = lock(&l.subscribers);
                subs.retain(|(i, _)| *i != id);
                subs.is_empty()
            });
            if last {
                live.take().map(|l| l.service)
            } else {
                None
            }
        };
        if let Some(service) = stopped {
            tracing::debug!("the last events stream closed: the live watch stops");
            std::thread::spawn(move || service.stop());
        }
    }
}

impl Hub {
    /// Ends every stream and stops the watch, for a shutdown that does not wait for them.
    pub fn close_all(&self) {
        let Some(live) = lock(&self.live).take() else {
            return;
        };
        for (_, outlet) in lock(&live.subscribers).drain(..) {
            outlet.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
        std::thread::spawn(move || live.service.stop());
    }
}

fn start(server: &Server) -> Live {
    let service = Arc::new(server.new_service());
    server.clients.keep(&service);
    let subscribers = Subscribers::default();
    let (watching, subs) = (service.clone(), subscribers.clone());
    tokio::task::spawn_blocking(move || {
        watching.start();
        let to_all = subs.clone();
        let changes: Sink<Value> =
            Box::new(move |change| broadcast(&to_all, || event("change", &change)));
        if let Err(e) = dispatch(&watching, "watch_changes", Value::Null, changes) {
            broadcast(&subs, || event("error", &json!(e)));
        }
    });
    Live {
        service,
        subscribers,
        next: 0,
    }
}

/// Sends one event to every stream. A stream that stays behind for long is ended by `send`,
/// as its own watcher's would be.
fn broadcast(subs: &Subscribers, event: impl Fn() -> axum::response::sse::Event) {
    let outlets: Vec<Outlet> = lock(subs).iter().map(|(_, o)| o.clone()).collect();
    for outlet in outlets {
        send(&outlet, event(), STALL, false);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
