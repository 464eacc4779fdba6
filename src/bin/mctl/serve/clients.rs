//! The browser pages connected: each page (named by the random id its transport sends in
//! `X-Mctl-Client`) has its own service, as each desktop window has, so its live changes, the
//! run it follows, its opened values, GC plan and search are its own. A page that closes its
//! live stream is forgotten; one idle for long is too.

use super::Server;
use mission_control::service::{Allowed, Service};
use mission_control::wire::DirsSource;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Pages kept at once; the one idle the longest goes first.
const MAX_CLIENTS: usize = 64;
/// A page without a live stream that made no request for this long is forgotten.
const IDLE: Duration = Duration::from_secs(10 * 60);

struct Client {
    service: Arc<Service>,
    last: Instant,
    /// Its live stream is open.
    watching: bool,
}

#[derive(Default)]
pub struct Clients {
    pages: Mutex<HashMap<String, Client>>,
    /// Services of `GET /api/events` streams, stopped at shutdown.
    streams: Mutex<Vec<std::sync::Weak<Service>>>,
}

/// Whether `id` can name a page.
pub fn valid_id(id: &str) -> bool {
    (8..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl Server {
    /// A new service over the served directories, with what this server allows.
    pub fn new_service(&self) -> Service {
        let settings =
            mission_control::service::settings(self.dirs.clone(), DirsSource::Cli, self.threshold);
        let allowed = Allowed {
            changes: self.allow_gc,
            desktop: false,
        };
        Service::new(settings, allowed)
    }

    /// The service of page `id`, made (and started watching) on its first request.
    pub fn client(&self, id: &str) -> Arc<Service> {
        let mut pages = lock(&self.clients.pages);
        if let Some(c) = pages.get_mut(id) {
            c.last = Instant::now();
            return c.service.clone();
        }
        if pages.len() >= MAX_CLIENTS {
            let oldest = pages
                .iter()
                .min_by_key(|(_, c)| (c.watching, c.last))
                .map(|(k, _)| k.clone());
            if let Some(c) = oldest.and_then(|k| pages.remove(&k)) {
                c.service.stop();
            }
        }
        let service = Arc::new(self.new_service());
        service.start();
        pages.insert(
            id.to_string(),
            Client {
                service: service.clone(),
                last: Instant::now(),
                watching: false,
            },
        );
        service
    }

    /// Page `id` opened (`true`) or closed its live stream; a page that closed it is gone.
    pub fn watching(&self, id: &str, open: bool) {
        let mut pages = lock(&self.clients.pages);
        if open {
            if let Some(c) = pages.get_mut(id) {
                c.watching = true;
            }
        } else if let Some(c) = pages.remove(id) {
            tracing::debug!(client = id, "page gone");
            c.service.stop();
        }
    }
}

impl Clients {
    /// Keeps `service` (of a live stream) to stop at shutdown.
    pub fn keep_stream(&self, service: &Arc<Service>) {
        let mut streams = lock(&self.streams);
        streams.retain(|w| w.strong_count() > 0);
        streams.push(Arc::downgrade(service));
    }

    /// Stops every service: their live streams end, so a shutdown does not wait for them.
    pub fn stop_all(&self) {
        for (_, c) in lock(&self.pages).drain() {
            c.service.stop();
        }
        for s in lock(&self.streams).drain(..).filter_map(|w| w.upgrade()) {
            s.stop();
        }
    }
}

/// Forgets pages idle for long, every minute.
pub async fn reap(server: Arc<Server>) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        let mut pages = lock(&server.clients.pages);
        pages.retain(|_, c| {
            let keep = c.watching || c.last.elapsed() < IDLE;
            if !keep {
                c.service.stop();
            }
            keep
        });
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
