//! The server's connections: accepted by a loop of our own over hyper, because what keeps a
//! server up under abuse lives here and `axum::serve` offers none of it.
//! - A request's head must arrive within [`HEADER_TIMEOUT`] of the connection being ready for
//!   it: a socket that sends half a request (or a byte a second, or nothing) is closed, and so
//!   is a kept-alive connection that asks nothing more for as long (hyper's one timer serves
//!   both).
//! - At most [`Conns::cap`] connections are open at once, well below the process's descriptor
//!   limit (raised to its hard limit at start), so requests always have files to read. A new
//!   connection at the cap closes, in its place, the longest idle one that never showed the
//!   token; when there is none, the new one is closed at once. A connection told to close holds
//!   its socket until its task lets it go: while one does, no other is accepted (the newcomers
//!   wait in the listener's queue). Counting only the connections not yet told to close, a
//!   flood that opened sockets faster than the closed ones were let go ran the process out of
//!   descriptors.
//! - An `accept` that fails (no descriptor left, say) waits a little longer each time instead
//!   of spinning, and is counted in the periodic summary rather than logged each time.

use super::quiet::Tally;
use axum::body::Body;
use axum::Router;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use mission_control::sync::lock;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tower::ServiceExt as _;

/// How long a request's head may take to arrive, and a kept-alive connection may stay idle.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections open at once, at most: half the descriptors the process may open, within these.
const MIN_CAP: usize = 16;
const MAX_CAP: usize = 4096;
/// The longest wait after a failed `accept`.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// One open connection, as the cap sees it.
pub struct Conn {
    id: u64,
    /// A request on it carried the token: it is someone's page or script, never closed for a
    /// newcomer.
    authenticated: AtomicBool,
    /// Requests on it whose answer is not yet fully sent (a stream's lasts as long as it does).
    busy: AtomicUsize,
    /// When it last finished an answer (or opened).
    last: Mutex<Instant>,
    close: Notify,
}

impl Conn {
    /// Marks the connection as one that showed the token: never closed at the cap.
    pub fn authenticated(&self) {
        self.authenticated.store(true, Ordering::Relaxed);
    }
}

/// A request in progress on a connection, until its answer's body is dropped.
struct Busy(Arc<Conn>);

impl Busy {
    fn begin(conn: &Arc<Conn>) -> Self {
        conn.busy.fetch_add(1, Ordering::Relaxed);
        Self(conn.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *lock(&self.0.last) = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The open connections.
pub struct Conns {
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    /// Sockets not yet closed: the open connections, and those told to close whose task has
    /// not yet let their socket go.
    live: AtomicUsize,
    /// Told when a socket is let go.
    freed: Notify,
    next: AtomicU64,
    cap: usize,
    /// Connections closed to make room, or refused, since the last summary.
    pub shed: Arc<Tally>,
}

impl Conns {
    pub fn new(cap: usize) -> Self {
        Self {
            open: Mutex::new(HashMap::new()),
            live: AtomicUsize::new(0),
            freed: Notify::new(),
            next: AtomicU64::new(0),
            cap,
            shed: Arc::default(),
        }
    }

    /// The most connections held open at once.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Returns once no socket told to close is still held: at most the cap are then open, and
    /// one more may be accepted (at most one over the cap, for as long as it takes the
    /// connection it replaces to let its socket go).
    async fn room(&self) {
        while self.live.load(Ordering::Acquire) > self.cap {
            // A socket let go since the look left its permit: no wakeup is lost.
            self.freed.notified().await;
        }
    }

    /// Tells the longest idle connection that never showed the token to close; false when
    /// there is none. (Only such a one: a connection that showed it may still be sending an
    /// answer hyper has already taken whole (a single-chunk body), and it closes itself once
    /// idle for the header timeout anyway.)
    fn close_idle(&self, open: &mut HashMap<u64, Arc<Conn>>) -> bool {
        let idle = open
            .values()
            .filter(|c| {
                c.busy.load(Ordering::Relaxed) == 0 && !c.authenticated.load(Ordering::Relaxed)
            })
            .min_by_key(|c| *lock(&c.last))
            .map(|c| c.id);
        let Some(c) = idle.and_then(|id| open.remove(&id)) else {
            return false;
        };
        self.shed.note("idle without the token, closed at the cap");
        c.close.notify_one();
        true
    }

    /// A place for a connection just accepted (after [`Self::room`]), made by closing an idle
    /// one when the cap is reached; `None` when every open connection is busy or someone's.
    fn admit(&self) -> Option<Arc<Conn>> {
        let mut open = lock(&self.open);
        if open.len() >= self.cap && !self.close_idle(&mut open) {
            self.shed
                .note("refused at the cap (every connection busy or someone's)");
            return None;
        }
        self.live.fetch_add(1, Ordering::AcqRel);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            id,
            authenticated: AtomicBool::new(false),
            busy: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
            close: Notify::new(),
        });
        open.insert(id, conn.clone());
        Some(conn)
    }

    /// Connection `id`'s socket is let go.
    fn gone(&self, id: u64) {
        lock(&self.open).remove(&id);
        self.live.fetch_sub(1, Ordering::AcqRel);
        self.freed.notify_one();
    }
}

/// Raises the soft limit on open descriptors to the hard one, and returns the cap on
/// connections that leaves room for the files requests read.
pub fn cap_for_descriptors() -> usize {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if let (Some(current), Some(maximum)) = (limit.current, limit.maximum) {
        if current < maximum {
            limit.current = Some(maximum);
            if let Err(e) = setrlimit(Resource::Nofile, limit) {
                tracing::debug!("could not raise the descriptor limit: {e}");
            }
        }
    }
    let soft = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    usize::try_from(soft / 2)
        .unwrap_or(usize::MAX)
        .clamp(MIN_CAP, MAX_CAP)
}

fn header_timeout() -> Duration {
    // A test sets `MCTL_TEST_HEADER_TIMEOUT_MS` to see a slow socket dropped sooner.
    crate::hooks::duration("MCTL_TEST_HEADER_TIMEOUT_MS", HEADER_TIMEOUT)
}

/// Serves `router` on `listener` until `stop` resolves, then lets the connections finish their
/// answers (streams are ended by the caller).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    conns: Arc<Conns>,
    stop: impl Future<Output = ()>,
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_timeout());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut backoff = Duration::ZERO;
    tokio::pin!(stop);
    loop {
        // No socket accepted while a closed connection still holds its own.
        tokio::select! {
            () = conns.room() => {}
            () = &mut stop => break,
        }
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                backoff = Duration::ZERO;
                stream
            }
            Err(e) => {
                // Out of descriptors (or another passing failure): wait for some to be freed.
                conns.shed.note_error(&e);
                backoff = (backoff * 2).clamp(Duration::from_millis(10), MAX_BACKOFF);
                tokio::select! {
                    () = tokio::time::sleep(backoff) => continue,
                    () = &mut stop => break,
                }
            }
        };
        let Some(conn) = conns.admit() else {
            continue; // dropped: closed at once
        };
        let service = {
            let (conn, router) = (conn.clone(), router.clone());
            hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                let busy = Busy::begin(&conn);
                req.extensions_mut().insert(conn.clone());
                let router = router.clone();
                async move {
                    let resp = match router.oneshot(req).await {
                        Ok(resp) => resp,
                        Err(never) => match never {},
                    };
                    // The request ends with its answer's body, however long that streams.
                    let resp = resp.map(|body| {
                        Body::new(body.map_frame(move |frame| {
                            let _held = &busy;
                            frame
                        }))
                    });
                    Ok::<_, Infallible>(resp)
                }
            })
        };
        let served = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        let conns = conns.clone();
        tokio::spawn(async move {
            tokio::select! {
                done = served => {
                    if let Err(e) = done {
                        tracing::debug!("connection ended: {e}");
                    }
                }
                () = conn.close.notified() => {}
            }
            // The socket went with the connection's future, dropped above.
            conns.gone(conn.id);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `f` finishes within a tenth of a second.
    async fn soon(f: impl Future) -> bool {
        tokio::time::timeout(Duration::from_millis(100), f)
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn a_socket_told_to_close_holds_its_place_until_it_is_let_go() {
        let conns = Conns::new(2);
        let first = conns.admit().unwrap();
        // The older of the two idle ones, whatever the clock's grain.
        *lock(&first.last) -= Duration::from_secs(1);
        let second = conns.admit().unwrap();
        assert!(soon(conns.room()).await, "at the cap, room for a newcomer");
        // A newcomer at the cap: the longest idle one is told to close, and holds its socket.
        let third = conns.admit().unwrap();
        assert!(soon(first.close.notified()).await);
        assert!(!lock(&conns.open).contains_key(&first.id));
        assert!(!soon(conns.room()).await, "its socket is not yet let go");
        conns.gone(first.id);
        assert!(soon(conns.room()).await);

        // At the cap with every connection someone's or busy, a newcomer is refused at once,
        // and nothing is held for it.
        second.authenticated();
        let _busy = Busy::begin(&third);
        assert!(conns.admit().is_none());
        assert_eq!(lock(&conns.open).len(), 2);
        assert!(soon(conns.room()).await);
    }
}
