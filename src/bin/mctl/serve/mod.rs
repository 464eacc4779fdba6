//! `mctl serve`: the app's UI and commands over HTTP, for runs directories on a machine without
//! a desktop (opened through an SSH tunnel, or shared read-only). The UI is embedded in the
//! binary (`assets.rs`); its commands are the core's service, called by name (`calls.rs`); a JSON
//! API mirrors the CLI's `--json` output for scripts (`api.rs`); every request passes the rules
//! of `guard.rs` (token, Host, Origin, headers); connections are accepted and capped by
//! `conns.rs`, and what is refused is summarised by `quiet.rs`. See docs/serve.md.

mod api;
mod assets;
mod calls;
mod clients;
mod conns;
mod guard;
mod hub;
mod quiet;

use crate::cli::{Global, ServeArgs};
use anyhow::Context as _;
use axum::routing::{get, post, put};
use axum::Router;
use clients::Clients;
use mission_control::runs::RunsDir;
use mission_control::{Error, ErrorCode};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Request bodies larger than this are refused (413): every request is a small JSON object.
const BODY_LIMIT: usize = 1 << 20;
/// Streams open at once (live changes, followed runs, searches, GC progress), over all clients.
const MAX_STREAMS: usize = 64;
/// Searches running at once, over all clients (each one already uses every core).
const MAX_SEARCHES: usize = 2;
/// Requests that read runs at once; more wait their turn. With a line of any transcript held to
/// about a megabyte and texts read in slices, each costs a few megabytes at most: this caps what
/// all of them together hold, however many clients ask at once.
const MAX_READS: usize = 4;
/// Threads reading files for requests at once; more requests wait their turn.
const BLOCKING_THREADS: usize = 32;
/// How long a shutdown waits for open streams to end.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What every request handler shares.
pub struct Server {
    pub token: String,
    pub bind: SocketAddr,
    /// Host names besides the bind address and loopback that the `Host` header may name.
    pub allow_hosts: Vec<String>,
    pub allow_gc: bool,
    pub dirs: Vec<String>,
    pub threshold: u64,
    pub running_window_ms: i64,
    pub no_index: bool,
    pub source: Option<mission_control::sources::SourceKind>,
    pub clients: Clients,
    pub streams: Arc<Semaphore>,
    pub searches: Arc<Semaphore>,
    /// Turns to read runs (see `MAX_READS`).
    pub reads: Arc<Semaphore>,
    /// The live watch every `GET /api/events` stream shares.
    pub events: hub::Hub,
    /// The one watch of the served directories, shared by every page and every events stream:
    /// one watcher, one first scan, one set of models, however many are open.
    pub watch: mission_control::watch::SharedWatch,
    /// Requests refused since the last summary in the log.
    pub refused: Arc<quiet::Tally>,
}

impl Server {
    /// The runs directory `dir` names (the first served when `None`), opened as the CLI opens
    /// it: never one that is not served.
    pub fn open_dir(&self, dir: Option<&str>) -> Result<RunsDir, Error> {
        let root = match dir {
            None => self.dirs.first(),
            Some(d) => self.dirs.iter().find(|s| *s == d),
        };
        let Some(root) = root else {
            let message = format!("{} is not a runs directory served", dir.unwrap_or("(none)"));
            return Err(Error::new(ErrorCode::Invalid, message));
        };
        let root = std::path::Path::new(root);
        crate::output::open_runs_dir(
            root,
            self.threshold,
            self.running_window_ms,
            self.no_index,
            self.source,
        )
    }
}

/// A 256-bit random token, as hex.
fn random_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks a token given by the user: long enough to resist guessing, and plain enough to sit
/// in a URL fragment and a header unescaped.
fn check_token(token: &str) -> anyhow::Result<()> {
    let plain = token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    anyhow::ensure!(
        token.len() >= 16 && plain,
        "--token must be at least 16 characters of letters, digits and - . _ ~"
    );
    Ok(())
}

pub fn run(g: &Global, args: &ServeArgs) -> anyhow::Result<()> {
    if !args.bind.ip().is_loopback() && args.token.is_none() {
        anyhow::bail!(
            "refusing to listen on {} without --token: anyone who can reach that address could \
             read every transcript. Give --token (or MCTL_TOKEN), or bind to 127.0.0.1 and use \
             an SSH tunnel",
            args.bind
        );
    }
    let token = match &args.token {
        Some(t) => {
            check_token(t)?;
            t.clone()
        }
        None => random_token()?,
    };
    // A bucket is served from its mirror, looked at again every few seconds; every value is
    // fetched whole, as a page may search or open any.
    let mut dirs = crate::output::runs_dirs(g)?;
    for dir in &mut dirs {
        if mission_control::remote::is_remote(dir) {
            let all = mission_control::remote::Hydrate::All;
            let mirror = crate::output::mirror_of(g, dir, &all)?;
            crate::output::attached(g, &mirror)?;
            *dir = mirror.root().display().to_string();
            crate::output::keep_in_step(mirror, all);
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
        .context("starting the server's runtime")?;
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.bind)
            .await
            .with_context(|| format!("listening on {}", args.bind))?;
        let bind = listener.local_addr()?;
        let conns = Arc::new(conns::Conns::new(conns::cap_for_descriptors()));
        tracing::info!(
            "at most {} connections at once; a request's head within {:?}",
            conns.cap(),
            conns::HEADER_TIMEOUT
        );
        let server = Arc::new(Server {
            token,
            bind,
            allow_hosts: args
                .allow_host
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
            allow_gc: args.allow_gc,
            dirs,
            threshold: g.threshold()?,
            running_window_ms: crate::output::window_ms(g),
            no_index: g.no_index,
            source: g.source,
            clients: Clients::default(),
            streams: Arc::new(Semaphore::new(MAX_STREAMS)),
            searches: Arc::new(Semaphore::new(MAX_SEARCHES)),
            reads: Arc::new(Semaphore::new(MAX_READS)),
            events: hub::Hub::default(),
            watch: mission_control::watch::SharedWatch::new(),
            refused: Arc::default(),
        });
        announce(&server, g.json, args.open)?;
        let app = router(server.clone());
        tokio::spawn(clients::reap(server.clone()));
        tokio::spawn(quiet::summarise(server.refused.clone(), conns.shed.clone()));
        let stop = Arc::new(tokio::sync::Notify::new());
        let serving = conns::serve(listener, app, conns, {
            let (server, stop) = (server.clone(), stop.clone());
            async move {
                shutdown_signal().await;
                tracing::info!("shutting down");
                // Streams that never end on their own (live changes) end now.
                server.clients.stop_all();
                server.events.close_all();
                stop.notify_one();
            }
        });
        tokio::select! {
            () = serving => {}
            () = async { stop.notified().await; tokio::time::sleep(SHUTDOWN_GRACE).await } => {
                tracing::warn!("some streams did not end in time; stopping anyway");
            }
        }
        anyhow::Ok(())
    });
    // Work still running on the blocking pool (a script's GC apply, journaled and resumable)
    // does not hold up the exit.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    served
}

/// The routes: the API behind the guard, the UI for everything else.
fn router(server: Arc<Server>) -> Router {
    let api = Router::new()
        .route("/api/call/{cmd}", post(calls::call))
        .route("/api/page", get(calls::page))
        .route("/api/events", get(calls::events))
        .route("/api/runs", get(api::runs))
        .route("/api/runs/{run}", get(api::show))
        .route("/api/runs/{run}/results/{call}/stub", get(api::stub))
        .route("/api/runs/{run}/results/{call}/full", get(api::full))
        .route("/api/runs/{run}/results/{call}/peek", get(api::peek))
        .route("/api/runs/{run}/export", get(api::export))
        .route("/api/gc", post(api::gc))
        .route("/api/pins/{run}", put(api::pin).delete(api::unpin))
        .route("/api/{*rest}", axum::routing::any(api::not_found));
    Router::new()
        .merge(api)
        .fallback(assets::serve)
        .layer(axum::middleware::from_fn_with_state(
            server.clone(),
            guard::guard,
        ))
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(server)
}

/// Prints where the server is: the URL with its token for people, or one JSON line.
fn announce(server: &Server, json: bool, open: bool) -> anyhow::Result<()> {
    // Bound to every address: the URL names loopback, which works on this machine.
    let mut shown = server.bind;
    if shown.ip().is_unspecified() {
        shown.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    let url = format!("http://{shown}/#token={}", server.token);
    if json {
        let line = serde_json::json!({
            "url": url,
            "bind": server.bind.to_string(),
            "token": server.token,
            "readOnly": !server.allow_gc,
        });
        println!("{line}");
    } else {
        println!("Mission Control is serving {} on", server.dirs.join(", "));
        println!("  {url}");
        if !server.allow_gc {
            println!("read-only: start with --allow-gc to allow pinning and garbage collection");
        }
    }
    use std::io::Write as _;
    std::io::stdout().flush()?;
    if open {
        open_browser(&url);
    }
    Ok(())
}

fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(url).spawn() {
        eprintln!("mctl: could not open a browser ({opener}: {e}); open the URL above");
    }
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return interrupt.await.unwrap_or(()),
            };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    interrupt.await.unwrap_or(());
}
