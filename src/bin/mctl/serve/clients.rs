//! The browser pages connected: each page (named by the random id its transport sends in
//! `X-Mctl-Client`) has its own service, as each desktop window has, so the run it follows, its
//! opened values, GC plan and search are its own, while the watch of the served directories
//! (its watcher, first scan and models) is the server's one, shared by every page and every
//! events stream (`Server::watch`); and one stream
//! (`GET /api/page`) that carries everything its commands stream. A page whose stream ends is
//! forgotten (its service stopped); one without a stream, after ten idle minutes.

use super::Server;
use mission_control::service::prefs;
use mission_control::service::{Allowed, Service};
use mission_control::sync::lock;
use mission_control::wire::DirsSource;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// The sending end of a page's stream, shared by whatever sends on it; `None` once it is given
/// up.
pub type Outlet = Arc<Mutex<Option<tokio::sync::mpsc::Sender<axum::response::sse::Event>>>>;
use tokio::sync::mpsc;

/// Pages kept at once. A page without a stream makes room for a new one; when every page has
/// its stream open, a new page is refused.
const MAX_PAGES: usize = 64;
/// A page without a stream that made no request for this long is forgotten.
const IDLE: Duration = Duration::from_secs(10 * 60);

struct Page {
    service: Arc<Service>,
    last: Instant,
    /// Where its commands' items go: its stream's sender while the stream is open.
    outlet: Outlet,
    /// Which opening of its stream is the current one.
    stream: Option<u64>,
}

#[derive(Default)]
pub struct Clients {
    pages: Mutex<HashMap<String, Page>>,
    streams_opened: Mutex<u64>,
    /// Services of `GET /api/events` and of scripts' streamed calls, stopped at shutdown.
    others: Mutex<Vec<Weak<Service>>>,
}

/// Whether `id` can name a page.
pub fn valid_id(id: &str) -> bool {
    (8..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Stops services off the async runtime and outside any lock: a stop waits for a read of the
/// followed run, or for a send to a slow page.
fn stop_later(services: Vec<Arc<Service>>) {
    if !services.is_empty() {
        std::thread::spawn(move || services.iter().for_each(|s| s.stop()));
    }
}

impl Server {
    /// A new service over the served directories, with what this server allows.
    pub fn new_service(&self) -> Service {
        let mut settings =
            mission_control::service::settings(self.dirs.clone(), DirsSource::Cli, self.threshold);
        // The server's settings are its command line's (its flags, else their variables): its
        // Settings view says so. The GC form starts from `$MCTL_GC_IDLE_GUARD`, as `mctl gc` does.
        settings.sources.threshold = DirsSource::Cli;
        if let Some(ms) = std::env::var(prefs::ENV_GC_IDLE_GUARD)
            .ok()
            .and_then(|v| prefs::parse_duration_ms(&v).ok())
        {
            settings.gc_idle_guard_ms = ms;
            settings.sources.gc_idle_guard = DirsSource::Env;
        }
        let allowed = Allowed {
            changes: self.allow_gc,
            desktop: false,
        };
        Service::new(settings, allowed)
            .with_run_options(self.running_window_ms, !self.no_index)
            .sharing_watch(&self.watch)
    }

    /// The service of page `id`, made (and started watching) on its first request; `None` when
    /// there is no room for another page.
    pub fn client(&self, id: &str) -> Option<Arc<Service>> {
        let mut evicted = Vec::new();
        let service = {
            let mut pages = lock(&self.clients.pages);
            if let Some(p) = pages.get_mut(id) {
                p.last = Instant::now();
                return Some(p.service.clone());
            }
            if pages.len() >= MAX_PAGES {
                let idle = pages
                    .iter()
                    .filter(|(_, p)| p.stream.is_none())
                    .min_by_key(|(_, p)| p.last)
                    .map(|(k, _)| k.clone())?;
                evicted.extend(pages.remove(&idle).map(|p| p.service));
            }
            let service = Arc::new(self.new_service());
            service.start();
            let page = Page {
                service: service.clone(),
                last: Instant::now(),
                outlet: Arc::new(Mutex::new(None)),
                stream: None,
            };
            pages.insert(id.to_string(), page);
            service
        };
        stop_later(evicted);
        Some(service)
    }

    /// Opens page `id`'s stream with `tx` (a stream opened before ends); returns which opening
    /// it is, for [`page_closed`](Self::page_closed).
    pub fn open_page(&self, id: &str, tx: mpsc::Sender<axum::response::sse::Event>) -> Option<u64> {
        self.client(id)?;
        let mine = {
            let mut n = lock(&self.clients.streams_opened);
            *n += 1;
            *n
        };
        let mut pages = lock(&self.clients.pages);
        let page = pages.get_mut(id)?;
        page.stream = Some(mine);
        *lock(&page.outlet) = Some(tx);
        Some(mine)
    }

    /// Where page `id`'s commands send their items, while its stream is open.
    pub fn page_outlet(&self, id: &str) -> Option<Outlet> {
        let pages = lock(&self.clients.pages);
        let page = pages.get(id)?;
        page.stream.map(|_| page.outlet.clone())
    }

    /// Page `id`'s stream (opening `stream`) ended: the page is gone, unless it opened another.
    pub fn page_closed(&self, id: &str, stream: u64) {
        let gone = {
            let mut pages = lock(&self.clients.pages);
            match pages.get(id) {
                Some(p) if p.stream == Some(stream) => pages.remove(id),
                _ => None,
            }
        };
        if let Some(p) = gone {
            tracing::debug!(page = id, "page gone");
            lock(&p.outlet).take();
            stop_later(vec![p.service]);
        }
    }
}

impl Clients {
    /// Keeps `service` (of a stream that is not a page's) to stop at shutdown.
    pub fn keep(&self, service: &Arc<Service>) {
        let mut others = lock(&self.others);
        others.retain(|w| w.strong_count() > 0);
        others.push(Arc::downgrade(service));
    }

    /// Stops every service and ends every page's stream, so a shutdown does not wait for them.
    pub fn stop_all(&self) {
        let mut services = Vec::new();
        for (_, p) in lock(&self.pages).drain() {
            lock(&p.outlet).take();
            services.push(p.service);
        }
        services.extend(lock(&self.others).drain(..).filter_map(|w| w.upgrade()));
        stop_later(services);
    }
}

/// Forgets pages without a stream idle for long, every minute.
pub async fn reap(server: Arc<Server>) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        let mut idle = Vec::new();
        lock(&server.clients.pages).retain(|_, p| {
            let keep = p.stream.is_some() || p.last.elapsed() < IDLE;
            if !keep {
                idle.push(p.service.clone());
            }
            keep
        });
        stop_later(idle);
    }
}
