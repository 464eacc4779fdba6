//! The command contract served: what one front end (the desktop window, a browser tab of
//! `mctl serve`) keeps between commands, and the handler of every command of
//! [`wire::COMMANDS`](crate::wire::COMMANDS) (`commands.rs`, one method per command, named as the
//! command). The desktop shell and the HTTP server both call these: a rule (which directories a
//! request may name, what a GC apply may delete, which search a new one cancels) is written once.
//!
//! Plain Rust, no Tauri, no HTTP: streamed items go to [`Sink`]s, and [`dispatch`] calls a command
//! by name with JSON in and out for transports that carry JSON.

mod buckets;
mod commands;
mod dispatch;
pub mod prefs;

pub use dispatch::{dispatch, precheck};

use crate::gc::{GcPolicy, GcReport};
use crate::model::RunOptions;
use crate::retained::OpenValue;
use crate::runs::{RunsDir, ValueInfo, ValueVerdict};
use crate::sync::lock;
use crate::watch::LiveSession;
use crate::wire::{DirsSource, ResultRef, Settings};
use crate::{Error, ErrorCode};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Receives the items a command streams, in order.
pub type Sink<T> = Box<dyn Fn(T) + Send + Sync>;

/// How many opened values stay indexed.
const OPEN_VALUES: usize = 8;

/// What a front end may do beyond reading the runs directories it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowed {
    /// Pin, unpin and apply a garbage collection (planning one is always allowed: it deletes
    /// nothing).
    pub changes: bool,
    /// The desktop: other runs directories than those it started with, the folder picker, the
    /// file manager.
    pub desktop: bool,
}

impl Allowed {
    /// The desktop app: everything.
    pub const ALL: Self = Self {
        changes: true,
        desktop: true,
    };
}

/// One front end's state: the directories it shows, the live session watching them, the values
/// opened in its compare view, its last GC plan and its running search.
pub struct Service {
    settings: Mutex<Settings>,
    allowed: Allowed,
    /// Where the Settings view's choices are saved (the desktop app's `settings.json`).
    settings_file: Option<std::path::PathBuf>,
    /// Whether lists go through the index (off with `--no-index`).
    indexed: bool,
    live: LiveSession,
    /// The last few values opened in the compare view, each with its line index, so scrolling a
    /// 200 MB value reads only its pages.
    open: Mutex<VecDeque<(ResultRef, Arc<Opened>)>>,
    /// The last GC plan shown, per runs directory: an apply deletes only what it lists.
    gc_plan: Mutex<Option<(String, GcPolicy, GcReport)>>,
    /// Set to stop a running apply between two files.
    gc_cancel: AtomicBool,
    /// Whether an apply is running. A front end has one Cancel, for the apply running: it
    /// runs one at a time, whichever runs directories they are of (the lock on disk lets
    /// applies on two directories run at once, from two processes).
    gc_applying: AtomicBool,
    /// The cancel flag of the search running (a new search sets it, then puts its own).
    search: Mutex<Arc<AtomicBool>>,
    /// The result sizes the what-if last read, with the directory, run and watch key they were
    /// read under: the slider's every step answers from them while nothing changed.
    what_if_sizes: Mutex<Option<SizesRead>>,
    /// The buckets among the directories shown, each followed through its mirror.
    buckets: Mutex<Vec<buckets::Shown>>,
}

/// Result sizes read for the what-if, and what they were read from.
pub(crate) struct SizesRead {
    pub dir: String,
    pub run: Option<String>,
    pub key: (u64, u64),
    pub sizes: Arc<Vec<crate::model::ResultSizes>>,
}

/// A value opened for the compare view.
pub struct Opened {
    /// Its figures; `verified: sampled` until `verify_value` settles them.
    info: Mutex<ValueInfo>,
    /// The full text, read page by page through its line index.
    pub value: OpenValue,
}

impl Opened {
    fn new(info: ValueInfo, value: OpenValue) -> Self {
        Self {
            info: Mutex::new(info),
            value,
        }
    }

    /// Its figures as they stand (settled once `verify_value` has checked every byte).
    pub fn info(&self) -> ValueInfo {
        lock(&self.info).clone()
    }

    /// Takes the verdict of every byte: a value opened again shows it without checking again.
    fn settle(&self, verdict: &ValueVerdict) {
        let mut info = lock(&self.info);
        info.state = verdict.state;
        info.verified = verdict.verified;
        info.stub = verdict.stub.clone();
        info.context_bytes = verdict.context_bytes;
    }
}

impl Service {
    /// A front end showing `settings.runs_dirs`; call [`start`](Self::start) to watch them.
    pub fn new(mut settings: Settings, allowed: Allowed) -> Self {
        settings.can_change = allowed.changes;
        settings.can_set_dirs = allowed.desktop;
        settings.can_reveal = allowed.desktop;
        let mut shown = Vec::new();
        settings.runs_dirs = buckets::follow(&settings.runs_dirs, &mut shown);
        // One table for the process: only a front end that declares kinds sets it.
        if !settings.saved.dir_kinds.is_empty() {
            declare_kinds(&settings.saved, &shown);
        }
        Self {
            settings: Mutex::new(settings),
            allowed,
            settings_file: None,
            indexed: true,
            live: LiveSession::new(),
            open: Mutex::new(VecDeque::new()),
            gc_plan: Mutex::new(None),
            gc_cancel: AtomicBool::new(false),
            gc_applying: AtomicBool::new(false),
            search: Mutex::new(Arc::new(AtomicBool::new(false))),
            what_if_sizes: Mutex::new(None),
            buckets: Mutex::new(shown),
        }
    }

    /// Reads runs with this running window and, unless `indexed` is false, through the index
    /// (the command line's `--running-window` and `--no-index`).
    pub fn with_run_options(mut self, running_window_ms: i64, indexed: bool) -> Self {
        let settings = self.settings.get_mut().unwrap_or_else(|e| e.into_inner());
        settings.running_window_ms = running_window_ms;
        settings.sources.running_window = DirsSource::Cli;
        self.indexed = indexed;
        self
    }

    /// Watches through `watch`, which other front ends share (the pages of `mctl serve`, which
    /// all show the directories it was started with): one watcher and one first scan for all.
    pub fn sharing_watch(mut self, watch: &crate::watch::SharedWatch) -> Self {
        self.live = LiveSession::sharing(watch);
        self
    }

    /// Saves what the Settings view saves (and the directories chosen) in `file`.
    pub fn with_settings_file(mut self, file: impl Into<std::path::PathBuf>) -> Self {
        self.settings_file = Some(file.into());
        self
    }

    /// Holds the watcher's first look back until the front end has painted its first list (a
    /// desktop window: see [`LiveSession::hold_first_look_for_paint`]). Call before `start`.
    pub fn hold_first_look_for_paint(&self) {
        self.live.hold_first_look_for_paint();
    }

    /// Starts watching the directories shown, in the background.
    pub fn start(&self) {
        let s = self.current();
        self.live
            .start_with(&s.runs_dirs, s.threshold, s.running_window_ms);
    }

    /// Stops watching, and stops a search or a GC apply running: the front end is gone.
    pub fn stop(&self) {
        self.live.stop();
        lock(&self.search).store(true, Ordering::Relaxed);
        self.gc_cancel.store(true, Ordering::Relaxed);
    }

    /// The directories shown now, the threshold, and what this front end may do.
    pub fn current(&self) -> Settings {
        let mut settings = lock(&self.settings).clone();
        if self.allowed.desktop {
            let shown = |p: &str| settings.runs_dirs.iter().any(|d| d == p);
            let declined = |p: &str| settings.saved.declined_agents.iter().any(|d| d == p);
            settings.agent_locations = crate::sources::default_locations()
                .into_iter()
                .filter(|l| !shown(&l.path) && !declined(&l.path))
                .collect();
        }
        // Those this front end follows, and those its server does (`mctl serve` shows a
        // bucket's mirror it follows itself).
        settings.buckets = crate::remote::followed()
            .into_iter()
            .filter(|b| settings.runs_dirs.contains(&b.root))
            .collect();
        settings
    }

    /// The live session watching the directories shown.
    pub fn live(&self) -> &LiveSession {
        &self.live
    }

    /// The runs directory `dir`, which must be one this front end shows: a request cannot make
    /// the service read anywhere else.
    pub fn runs_dir(&self, dir: &str) -> Result<RunsDir, Error> {
        let settings = self.current();
        if !settings.runs_dirs.iter().any(|d| d == dir) {
            return Err(Error::new(
                ErrorCode::Invalid,
                format!("{dir} is not one of the runs directories shown"),
            ));
        }
        if let Some(e) = buckets::failure(dir, &lock(&self.buckets)) {
            return Err(e);
        }
        let opts = RunOptions {
            threshold: settings.threshold,
            running_window_ms: settings.running_window_ms,
            ..RunOptions::default()
        };
        let d = RunsDir::open(dir, opts)?;
        // Only ever turned off here: `MCTL_NO_INDEX` may have turned it off already.
        Ok(if self.indexed { d } else { d.with_index(false) })
    }

    /// Fails with `forbidden` unless this front end may change things.
    fn may_change(&self, what: &str) -> Result<(), Error> {
        if self.allowed.changes {
            return Ok(());
        }
        Err(read_only(what))
    }

    /// The value `r` opened for the compare view, kept open (its line index built once) while
    /// the user scrolls it.
    pub fn opened(&self, r: &ResultRef) -> Result<Arc<Opened>, Error> {
        if let Some(hit) = self.cached(r) {
            return Ok(hit);
        }
        let (info, value) = self.runs_dir(&r.dir)?.open_value(&r.run, &r.call)?;
        let opened = Arc::new(Opened::new(info, value));
        let mut open = lock(&self.open);
        open.retain(|(k, _)| k != r);
        open.push_front((r.clone(), opened.clone()));
        open.truncate(OPEN_VALUES);
        Ok(opened)
    }

    fn cached(&self, r: &ResultRef) -> Option<Arc<Opened>> {
        let open = lock(&self.open);
        open.iter().find(|(k, _)| k == r).map(|(_, v)| v.clone())
    }

    /// Forgets opened values (after a refresh or a GC: files may have changed).
    fn forget_values(&self) {
        lock(&self.open).clear();
    }

    /// Cancels the search running, if any, and returns the flag of the one starting.
    fn start_search(&self) -> Arc<AtomicBool> {
        let fresh = Arc::new(AtomicBool::new(false));
        let mut current = lock(&self.search);
        current.store(true, Ordering::Relaxed);
        *current = fresh.clone();
        fresh
    }
}

/// The error of `what` (pinning, a GC apply) asked of a front end that may not change things.
pub fn read_only(what: &str) -> Error {
    let message =
        format!("{what} is not allowed: this server is read-only (start it with --allow-gc)");
    Error::new(ErrorCode::Forbidden, message)
}

/// Reads each directory the user gave a kind as that kind, everywhere in this process (a
/// bucket's mirror as its URL's kind).
fn declare_kinds(saved: &prefs::SavedSettings, shown: &[buckets::Shown]) {
    let kinds = buckets::kinds(&saved.dir_kinds, shown);
    crate::sources::force_kinds(kinds.iter().map(|(d, k)| (d.as_str(), *k)));
}

/// The settings of a front end that shows `dirs` from `source`.
pub fn settings(runs_dirs: Vec<String>, source: DirsSource, threshold: u64) -> Settings {
    Settings {
        runs_dirs,
        source,
        threshold,
        can_change: true,
        can_set_dirs: true,
        can_reveal: true,
        version: crate::VERSION.into(),
        log_dir: None,
        running_window_ms: RunOptions::default().running_window_ms,
        gc_idle_guard_ms: crate::gc::DEFAULT_IDLE_GUARD_MS,
        theme: prefs::Theme::System,
        sources: prefs::SettingSources {
            runs_dirs: source,
            ..Default::default()
        },
        saved: prefs::SavedSettings::default(),
        warnings: Vec::new(),
        agent_locations: Vec::new(),
        store_kinds: crate::sources::all_sources(),
        buckets: Vec::new(),
    }
}
