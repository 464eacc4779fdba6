//! The watcher: notify on each runs directory (non-recursive), coalescing bursts,
//! a polling fallback, and a slow look at the value directories for files removed inside them.

use super::dir_state::{DirState, ValueWatch};
use super::Change;
use crate::model::layout::VALUES_SUFFIX;
use crate::model::stamp::FileStamp;
use crate::model::SourceKind;
use crate::model::{Run, RunOptions, Verify};
use crate::sync::lock;
use notify::{EventKind, RecursiveMode, Watcher};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long bursts are coalesced: notices within this long of the first of a batch go together.
const DEBOUNCE: Duration = Duration::from_millis(20);
/// The polling interval when native watching fails or polling is asked for.
pub const POLL: Duration = Duration::from_millis(500);
/// How often the value directories not watched natively are looked at (a `stat` each; those
/// unchanged for an hour only one time in ten). Files removed inside a value directory (by a
/// GC, or by hand) do not touch the runs directory.
pub const VALUES_CHECK: Duration = Duration::from_secs(1);
/// How often the tails of runs that went quiet let go of what reading on needs (see
/// `DirState::settle_idle`): a run settles only once its running window is over, so a minute
/// late is nothing.
const SETTLE_EVERY: Duration = Duration::from_secs(60);
/// How many value directories are given a native watch per tick of the ticker (about a
/// millisecond's work per hundred), after the first look: 100,000 take 25 s, while the rest
/// are looked at each second as before.
const WATCHES_PER_TICK: usize = 2_000;

type Shared = Arc<Mutex<DirState>>;

/// Keeps the watchers alive; dropping it stops them (the value check within [`VALUES_CHECK`]).
pub struct WatchHandle {
    /// Only kept alive (in a mutex, so the handle can be shared between threads).
    _watchers: Mutex<Vec<Box<dyn std::any::Any + Send>>>,
    _stop: Mutex<Sender<()>>,
    /// Each runs directory (as given to [`watch`]) and what the watcher knows of it.
    states: Vec<(String, Shared)>,
}

impl WatchHandle {
    fn state(&self, dir: &str) -> Option<&Shared> {
        self.states
            .iter()
            .find(|(name, _)| name == dir)
            .map(|(_, s)| s)
    }

    /// How many times the watcher has looked at entries it was told changed: a measure of its
    /// work, which stays put while nothing in the directories changes.
    pub fn wakeups(&self) -> u64 {
        self.states.iter().map(|(_, s)| lock(s).wakeups).sum()
    }

    /// Value directories watched natively, and how many times the per-second look has looked at
    /// one that is not: what watching costs while nothing changes.
    pub fn value_dirs(&self) -> (usize, u64) {
        self.states.iter().fold((0, 0), |(w, l), (_, s)| {
            let s = lock(s);
            let watched = s.value_watch.as_ref().map_or(0, ValueWatch::watched);
            (w + watched, l + s.value_looks)
        })
    }

    /// How many runs of runs directory `dir` are followed with a fold's state, ready to read on
    /// from their last line: the runs written within their running window (a settled run holds
    /// only its figures, and is read whole once should it change). What following costs.
    pub fn reading(&self, dir: &str) -> Option<usize> {
        Some(lock(self.state(dir)?).reading())
    }

    /// Whether runs directory `dir` (as given to [`watch`]) is watched by this handle.
    pub fn watches(&self, dir: &str) -> bool {
        self.state(dir).is_some()
    }

    /// Run `id` of runs directory `dir` (as given to [`watch`]) as the watcher knows it now,
    /// folded from the lines read so far: the same figures a whole read gives, without reading
    /// the transcript again. `None` when there is no such run.
    pub fn run(&self, dir: &str, id: &str) -> Option<Run> {
        lock(self.state(dir)?).run(id)
    }

    /// Every run of runs directory `dir` as the watcher knows it, in the order of
    /// [`RunsDir::list`](crate::runs::RunsDir::list); `None` when `dir` is not watched here or
    /// could not be read at the last look (a listing from disk then says why).
    pub fn runs(&self, dir: &str) -> Option<Vec<Run>> {
        lock(self.state(dir)?).runs()
    }
}

/// Watches `dirs`; every change is sent on the returned channel, in order per run. The runs
/// already there are reported as added, so a consumer starts from a full picture. Value files
/// are compared by size and their first and last 64 KiB ([`Verify::Sampled`]), as in a listing.
pub fn watch(
    dirs: &[PathBuf],
    opts: RunOptions,
) -> notify::Result<(WatchHandle, Receiver<Change>)> {
    start(dirs, opts, None, FirstLook::Read)
}

/// Where a watcher's first look takes the runs already there from.
#[derive(Debug, Clone, Default)]
pub enum FirstLook {
    /// Every transcript read, and its events reported as `appended` (what `mctl watch` says).
    #[default]
    Read,
    /// The runs the index vouches for taken from it: nothing of theirs is read, and only
    /// `run-added` is reported for them (for a consumer that lists the runs itself, as the app
    /// does). A run is read the first time its files change. The index of the default cache
    /// directory, or of the one given.
    Index(Option<PathBuf>),
    /// As [`Index`](Self::Index), and the first look tells nothing but `polling`: for a
    /// consumer that reads its whole list once the look is done and would drop the rest (the
    /// app). Without an index every run's lines would otherwise wait in the channel until the
    /// look ends, about 2 KB a run.
    Untold(Option<PathBuf>),
}

impl FirstLook {
    /// The cache directory whose index the first look takes runs from (`Some(None)`: the
    /// default one); `None` when it reads every run.
    pub(crate) fn index(&self) -> Option<Option<PathBuf>> {
        match self {
            FirstLook::Read => None,
            FirstLook::Index(cache) | FirstLook::Untold(cache) => Some(cache.clone()),
        }
    }
}

/// [`watch`] (or [`watch_polling`], with a `poll` reason) with its first look taken as `first`
/// says.
pub fn watch_with(
    dirs: &[PathBuf],
    opts: RunOptions,
    poll: Option<String>,
    first: FirstLook,
) -> notify::Result<(WatchHandle, Receiver<Change>)> {
    start(dirs, opts, poll, first)
}

/// [`watch`] by polling, for file systems where native notices miss changes made elsewhere
/// (a network share written by another machine). `reason` is what the `polling` change says.
pub fn watch_polling(
    dirs: &[PathBuf],
    opts: RunOptions,
    reason: &str,
) -> notify::Result<(WatchHandle, Receiver<Change>)> {
    start(dirs, opts, Some(reason.to_owned()), FirstLook::Read)
}

/// Why to poll, when the user asked for it: `--poll` (`flag`) or `MCTL_WATCH=poll`.
pub fn poll_asked(flag: bool) -> Option<String> {
    if flag {
        return Some("polling was asked for (--poll)".to_owned());
    }
    let env = std::env::var("MCTL_WATCH").unwrap_or_default();
    (env == "poll").then(|| "polling was asked for (MCTL_WATCH=poll)".to_owned())
}

/// [`start_kinds`] of `dirs`, each one's kind detected here, once.
fn start(
    dirs: &[PathBuf],
    opts: RunOptions,
    force_poll: Option<String>,
    first: FirstLook,
) -> notify::Result<(WatchHandle, Receiver<Change>)> {
    let kinds: Vec<(PathBuf, SourceKind)> = (dirs.iter())
        .map(|d| (d.clone(), crate::sources::detect(d)))
        .collect();
    start_kinds(&kinds, opts, force_poll, first)
}

/// Watches each directory as the kind of store given with it.
pub(crate) fn start_kinds(
    dirs: &[(PathBuf, SourceKind)],
    opts: RunOptions,
    force_poll: Option<String>,
    first: FirstLook,
) -> notify::Result<(WatchHandle, Receiver<Change>)> {
    let opts = RunOptions {
        verify: Verify::Sampled,
        ..opts
    };
    let (tx, rx) = mpsc::channel();
    let mut watchers: Vec<Box<dyn std::any::Any + Send>> = Vec::new();
    let mut states = Vec::new();
    let mut polled = Vec::new();
    for (dir, kind) in dirs {
        let state: Shared = Arc::new(Mutex::new(DirState::new(
            dir,
            *kind,
            opts,
            tx.clone(),
            first.clone(),
        )));
        let native = match &force_poll {
            Some(reason) => Err(reason.clone()),
            None => native_watch(dir, &state).map_err(|e| format!("native watching failed: {e}")),
        };
        match native {
            Ok(native) => {
                // The value directories of a store of flat names are watched with it (another
                // agent's store is looked at whole each second instead).
                if kind.capabilities().flat_names {
                    lock(&state).value_watch = Some(ValueWatch::new(native.clone()));
                }
                watchers.push(Box::new(native));
            }
            Err(reason) => {
                log_polling(dir, &reason, force_poll.is_some());
                let _ = tx.send(Change::Polling {
                    dir: dir.display().to_string(),
                    reason,
                    interval_ms: POLL.as_millis() as u64,
                });
                polled.push(Poller::new(dir, state.clone()));
            }
        }
        // Read what is there only now that changes are seen: nothing lands unseen in between.
        let scan = Instant::now();
        lock(&state).scan_all();
        tracing::debug!(dir = %dir.display(), elapsed_ms = ms(scan), "first scan done");
        states.push((dir.display().to_string(), state));
    }
    let (stop, stopped) = mpsc::channel::<()>();
    let checked = states.clone();
    let ticks_per_check = (VALUES_CHECK.as_millis() / POLL.as_millis()).max(1);
    let ticks_per_settle = (SETTLE_EVERY.as_millis() / POLL.as_millis()).max(1);
    std::thread::spawn(move || {
        for tick in 1u128.. {
            if !matches!(stopped.recv_timeout(POLL), Err(RecvTimeoutError::Timeout)) {
                return; // the handle was dropped
            }
            for poller in &mut polled {
                poller.poll();
            }
            for (_, state) in &checked {
                lock(state).watch_pending(WATCHES_PER_TICK);
            }
            if tick % ticks_per_check == 0 {
                for (_, state) in &checked {
                    lock(state).check_values();
                }
            }
            if tick % ticks_per_settle == 0 {
                for (_, state) in &checked {
                    lock(state).settle_idle();
                }
            }
        }
    });
    Ok((
        WatchHandle {
            _watchers: Mutex::new(watchers),
            _stop: Mutex::new(stop),
            states,
        },
        rx,
    ))
}

/// Polling asked for is news; polling because native watching failed is a warning: changes
/// now show up to [`POLL`] late, and the reason (often an inotify limit) is worth fixing.
fn log_polling(dir: &Path, reason: &str, asked: bool) {
    let interval_ms = POLL.as_millis() as u64;
    if asked {
        tracing::info!(dir = %dir.display(), interval_ms, "polling: {reason}");
    } else {
        tracing::warn!(dir = %dir.display(), interval_ms, "falling back to polling: {reason}");
    }
}

fn ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Polls a runs directory: lists it every [`POLL`] and hands the entries whose size, time or
/// file changed (or that came or went) to the watcher. notify's own poller compares times in
/// whole seconds, so a line appended in the same second as the last poll would wait for the
/// next write; this compares nanoseconds and sizes.
struct Poller {
    root: PathBuf,
    state: Shared,
    seen: HashMap<String, FileStamp>,
}

impl Poller {
    fn new(root: &Path, state: Shared) -> Self {
        let mut poller = Self {
            root: root.to_path_buf(),
            state,
            seen: HashMap::new(),
        };
        poller.seen = poller.list();
        poller
    }

    fn list(&self) -> HashMap<String, FileStamp> {
        let Ok(entries) = std::fs::read_dir(&self.root) else {
            return HashMap::new();
        };
        entries
            .filter_map(|e| {
                let e = e.ok()?;
                let meta = e.metadata().ok()?;
                let name = e.file_name().into_string().ok()?;
                Some((name, FileStamp::from_meta(&meta)))
            })
            .collect()
    }

    fn poll(&mut self) {
        let now = self.list();
        let mut changed: BTreeSet<String> = now
            .iter()
            .filter(|(name, stamp)| self.seen.get(*name) != Some(stamp))
            .map(|(name, _)| name.clone())
            .collect();
        changed.extend(self.seen.keys().filter(|n| !now.contains_key(*n)).cloned());
        self.seen = now;
        if !changed.is_empty() {
            lock(&self.state).touched(&changed);
        }
    }
}

/// The native watcher of one runs directory, shared by the handle (which keeps it alive) and
/// the directory's state (which adds its value directories to it).
type Native = Arc<Mutex<notify::RecommendedWatcher>>;

/// Native notices on `dir` (and, once its state adds them, on its value directories), handed
/// to its state in batches: every notice that arrives within [`DEBOUNCE`] of the first of a
/// batch goes with it. (A debouncer that waits for a file to be quiet never reports a
/// transcript appended to without pause until the appends stop; this reports within
/// [`DEBOUNCE`] however busy the file is.) The thread holds the state weakly, since the state
/// holds the watcher: it ends when the watcher goes with the last of them.
fn native_watch(dir: &Path, state: &Shared) -> notify::Result<Native> {
    let (tx, notices) = mpsc::channel::<notify::Result<notify::Event>>();
    let mut watcher = notify::recommended_watcher(tx)?;
    watcher.watch(dir, RecursiveMode::NonRecursive)?;
    // The notices name paths under the directory made absolute as notify makes it (joined to
    // the working directory, nothing resolved), whatever form it was given in.
    let root = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(notify::Error::io)?
            .join(dir)
    };
    let state = Arc::downgrade(state);
    std::thread::spawn(move || {
        while let Ok(first) = notices.recv() {
            let until = Instant::now() + DEBOUNCE;
            let mut batch = vec![first];
            let mut closed = false;
            loop {
                let left = until.saturating_duration_since(Instant::now());
                match notices.recv_timeout(left) {
                    Ok(notice) => batch.push(notice),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => {
                        closed = true;
                        break;
                    }
                }
            }
            let Some(state) = state.upgrade() else { return };
            handle_batch(&root, &mut lock(&state), &batch);
            if closed {
                return;
            }
        }
    });
    Ok(Arc::new(Mutex::new(watcher)))
}

/// What a batch of notices asks the state to look at: the runs directory's entries it names,
/// and the value directories a file came, went or was renamed in.
fn handle_batch(root: &Path, st: &mut DirState, batch: &[notify::Result<notify::Event>]) {
    let mut names = BTreeSet::new();
    let mut value_dirs = BTreeSet::new();
    for notice in batch {
        let Ok(event) = notice else {
            tracing::debug!(dir = %root.display(), "watch error: rescanning");
            return st.scan_all(); // the watcher failed to tell: look at everything
        };
        if is_read(&event.kind) {
            continue;
        }
        // The kernel's queue overflowed (notices were lost), or the runs directory itself
        // went or changed: look at everything.
        if event.need_rescan() || event.paths.iter().any(|p| p == root) {
            tracing::debug!(dir = %root.display(), "notices lost or the directory changed: rescan");
            return st.scan_all();
        }
        for path in &event.paths {
            let Some(parent) = path.parent() else {
                continue;
            };
            if parent == root {
                names.extend(path.file_name().and_then(|n| n.to_str()).map(str::to_owned));
            } else if parent.parent() == Some(root) && changes_listing(&event.kind) {
                let id = (parent.file_name().and_then(|n| n.to_str()))
                    .and_then(|n| n.strip_suffix(VALUES_SUFFIX))
                    .filter(|id| !id.is_empty());
                value_dirs.extend(id.map(str::to_owned));
            }
        }
    }
    if !names.is_empty() {
        st.touched(&names);
        // A value directory named by a notice of its own may be a new one under the old name
        // (removed and made again, moved away and back): watched anew.
        for name in &names {
            if let Some(id) = name.strip_suffix(VALUES_SUFFIX).filter(|id| !id.is_empty()) {
                st.value_dir_renamed(id);
            }
        }
    }
    if !value_dirs.is_empty() {
        st.value_dirs_changed(&value_dirs);
    }
}

/// Whether a notice on a file inside a value directory can change what it holds for its run: a
/// file came, went or was renamed, or one written to was closed (a file listed while it was
/// being written has its size now). Each write to a value file is not one.
fn changes_listing(kind: &EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    matches!(
        kind,
        EventKind::Create(_)
            | EventKind::Remove(_)
            | EventKind::Modify(ModifyKind::Name(_) | ModifyKind::Any)
            | EventKind::Access(AccessKind::Close(AccessMode::Write))
            | EventKind::Any
            | EventKind::Other
    )
}

/// Opening or reading a file is no change, and our own reads of every transcript would
/// otherwise wake the watcher again and again. Closing a file written to is one.
fn is_read(kind: &EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode};
    matches!(kind, EventKind::Access(a) if *a != AccessKind::Close(AccessMode::Write))
}
