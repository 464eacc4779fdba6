//! What the watcher knows of one runs directory: a tail per transcript (its run model kept up to
//! date), the summaries, and the value files of each value directory.

use super::{Change, FirstLook, LineRef, Tail};
use crate::fold::Rows;
use crate::index::{Entry, ReadRun};
use crate::model::layout::VALUE_EXT;
use crate::model::layout::{
    is_link, is_regular_file, summary_name, transcript_name, value_dir_name, Layout, RunFiles,
    RunPaths, SUMMARY_SUFFIX, TEMP_SUFFIX, TRANSCRIPT_SUFFIX, VALUES_SUFFIX,
};
use crate::model::stamp::FileStamp;
#[cfg(doc)]
use crate::model::values::list_value_files;
use crate::model::SourceKind;
use crate::model::{Run, RunOptions};
use crate::runs::{analyze_run, sort_runs, unreadable_run, RunsDir};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::mpsc::Sender;
use std::sync::Arc;

mod value_dirs;
pub(super) use value_dirs::ValueWatch;

/// A directory changed this recently is listed again even when its time looks the same: on a
/// file system with coarse timestamps a removal in the same tick would not show.
const COARSE_TICK_MS: i64 = 2_000;

/// A value directory as last listed.
struct ValueDir {
    stamp: FileStamp,
    /// Stems (value ids) of its value files.
    files: BTreeSet<String>,
}

pub(super) struct DirState {
    /// Shared with its tails, which make their paths from it.
    root: Arc<Path>,
    pub(super) name: String,
    opts: RunOptions,
    tx: Sender<Change>,
    /// Boxed: a map of 100,000 runs holds twice as many slots, most of them empty, and a
    /// tail is over 200 bytes.
    tails: HashMap<String, Box<Tail>>,
    summaries: BTreeSet<String>,
    values: BTreeMap<String, ValueDir>,
    /// Calls of [`touched`](Self::touched).
    pub(super) wakeups: u64,
    /// The directory could not be listed at the last full look.
    unreadable: bool,
    /// The runs the index vouches for, taken at the first look: their tails start from the
    /// index, reading nothing until their files change.
    seeds: HashMap<String, Entry>,
    /// Whether (and from which index) the first look takes runs; `None` once it did.
    seed_from: Option<FirstLook>,
    /// Within the first look: a summary met is not news to a run the index vouches for.
    first_look: bool,
    /// The first look tells nothing but `polling` ([`FirstLook::Untold`]).
    untold: bool,
    /// Another agent's store, watched by looks at its whole layout instead.
    foreign: Option<super::foreign::ForeignWatch>,
    /// The kind of store the directory is, detected once by whoever watches it.
    kind: SourceKind,
    /// Within the first look: tails read ahead on every core, with what their first poll
    /// found, each taken when its transcript's turn comes.
    read_ahead: HashMap<String, (Tail, std::io::Result<super::TailUpdate>)>,
    /// Native watches on the value directories; `None` when the directory is polled (or is
    /// another agent's store), and every value directory is looked at each second.
    pub(super) value_watch: Option<ValueWatch>,
    /// Value directories looked at by the per-second look (those not watched natively).
    pub(super) value_looks: u64,
}

/// Sends `c`, unless it is said within an untold first look ([`FirstLook::Untold`]), which
/// tells only `polling`.
fn tell(tx: &Sender<Change>, untold: bool, c: Change) {
    if !untold || matches!(c, Change::Polling { .. }) {
        let _ = tx.send(c);
    }
}

/// How many transcripts the first look reads at once, the most recently written first.
const FIRST_BATCH: usize = 64;

impl DirState {
    /// The state of `root`, a store of kind `kind` (detected once, by whoever watches it).
    pub(super) fn new(
        root: &Path,
        kind: SourceKind,
        opts: RunOptions,
        tx: Sender<Change>,
        first: FirstLook,
    ) -> Self {
        Self {
            root: Arc::from(root),
            name: root.display().to_string(),
            opts,
            tx,
            tails: HashMap::new(),
            summaries: BTreeSet::new(),
            values: BTreeMap::new(),
            wakeups: 0,
            unreadable: false,
            seeds: HashMap::new(),
            foreign: super::foreign::ForeignWatch::of(kind, &first),
            kind,
            untold: matches!(first, FirstLook::Untold(_)),
            seed_from: Some(first),
            first_look: false,
            read_ahead: HashMap::new(),
            value_watch: None,
            value_looks: 0,
        }
    }

    /// Looks at another agent's store again, unless looks are spaced out now (`always`: at
    /// start, and when notices were lost); `false` for a runs directory.
    fn look_foreign(&mut self, always: bool) -> bool {
        let Some(mut f) = self.foreign.take() else {
            return false;
        };
        if !always && !f.due() {
            // The next look of the periodic check, once due, sees what changed meanwhile.
            self.foreign = Some(f);
            return true;
        }
        let opts = self.opts_now();
        let tx = self.tx.clone();
        // The first look is the only one that takes `seed_from`.
        let untold = self.untold && self.seed_from.take().is_some();
        self.unreadable = !f.look(&self.root, opts, |c| tell(&tx, untold, c));
        self.foreign = Some(f);
        true
    }

    /// Takes from the index the runs it vouches for (the first look only). Nothing is read
    /// here: a run the index cannot vouch for is read by its tail, as without an index.
    fn seed(&mut self) {
        let Some(cache) = self.seed_from.take().and_then(|f| f.index()) else {
            return;
        };
        let Ok(mut dir) = RunsDir::open_as(self.root.to_path_buf(), self.kind, self.opts) else {
            return;
        };
        if let Some(cache) = cache {
            dir = dir.with_cache_dir(cache);
        }
        let Some(mut index) = dir.index() else { return };
        let Ok(layout) = dir.layout() else { return };
        let opts = self.opts_now();
        self.seeds = index
            .entries(&layout, &opts, crate::index::Want::Runs, |_| ReadRun::Gone)
            .into_iter()
            .filter(|(_, e)| e.transcript_stamp.is_some())
            .collect();
        tracing::debug!(
            runs = self.seeds.len(),
            "the first look takes runs from the index"
        );
    }

    fn opts_now(&self) -> RunOptions {
        RunOptions {
            now_ms: crate::model::now_ms(),
            ..self.opts
        }
    }

    /// Run `id` as the lines read so far tell it (a run with only a summary is read from it).
    pub(super) fn run(&self, id: &str) -> Option<Run> {
        if let Some(f) = &self.foreign {
            return f.run(id, &self.opts_now());
        }
        match self.tails.get(id).map(|t| (t, t.error())) {
            Some((tail, None)) => return Some(tail.run()),
            // Gone since the last notice (the next one says so): what the summary tells, if any.
            Some((_, Some((std::io::ErrorKind::NotFound, _)))) | None => {}
            Some((_, Some((_, e)))) => return Some(unreadable_run(id, e)),
        }
        if !self.summaries.contains(id) {
            return None;
        }
        let paths = RunPaths::new(&self.root, id);
        let mut layout = Layout {
            root: self.root.to_path_buf(),
            ..Default::default()
        };
        let files = RunFiles {
            summary: Some(paths.summary()),
            ..Default::default()
        };
        layout.runs.insert(id.to_owned(), files);
        let values = paths.value_dir();
        if self.values.contains_key(id) {
            layout.value_dirs.insert(id.to_owned(), values);
        } else if is_link(&values) {
            layout.linked_value_dirs.insert(id.to_owned());
        }
        match analyze_run(&layout, id, &self.opts_now(), false) {
            Ok(detail) => Some(detail.run),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => Some(unreadable_run(id, &e)),
        }
    }

    /// Every run, in the order of a listing; `None` when the directory could not be read at
    /// the last look.
    pub(super) fn runs(&self) -> Option<Vec<Run>> {
        if self.unreadable {
            return None;
        }
        if let Some(f) = &self.foreign {
            return Some(f.runs(&self.opts_now()));
        }
        let ids: BTreeSet<&String> = self.tails.keys().chain(&self.summaries).collect();
        let mut runs: Vec<Run> = ids.into_iter().filter_map(|id| self.run(id)).collect();
        sort_runs(&mut runs);
        crate::model::family::add_children(&mut runs);
        Some(runs)
    }

    /// Reads run `id` again from the start (value files went: retention states changed). Lines
    /// that arrived meanwhile are still reported as appended, exactly once.
    fn reread(&mut self, id: &str) {
        let opts = self.opts_now();
        if !is_regular_file(&RunPaths::new(&self.root, id).transcript()) {
            return self.transcript(id, opts); // gone: said as such
        }
        let Some(t) = self.tails.get_mut(id) else {
            return;
        };
        if t.is_kept() {
            // Read whole now, with the value files as they are: what a read again does.
            t.read_kept();
            return self.transcript(id, opts);
        }
        if t.has_stash() {
            // A kept run read a moment ago (value files came): tell its lines first.
            self.transcript(id, opts);
        }
        let Some(t) = self.tails.get_mut(id) else {
            return;
        };
        let seen = t.lines();
        **t = Tail::new_in(self.root.clone(), id, opts, Rows::Lines);
        if let Ok(update) = t.poll() {
            let fresh: Vec<_> = update
                .events
                .into_iter()
                .filter(|e| e.line > seen)
                .collect();
            self.report(id, fresh, update.pending_bytes);
        }
    }

    pub(super) fn send(&self, c: Change) {
        tell(&self.tx, self.first_look && self.untold, c);
    }

    /// Looks at every entry (at start, and when the watcher lost events).
    pub(super) fn scan_all(&mut self) {
        if self.look_foreign(true) {
            return;
        }
        self.first_look = self.seed_from.is_some();
        self.seed();
        let listed = std::fs::read_dir(&self.root);
        self.unreadable = listed.is_err();
        let names: BTreeSet<String> = listed
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        if self.first_look {
            self.read_first(&names);
        }
        let mut all = names.clone();
        // Known runs that vanished are looked at too.
        all.extend(self.tails.keys().map(|id| transcript_name(id)));
        all.extend(self.values.keys().map(|id| value_dir_name(id)));
        all.extend(self.summaries.iter().map(|id| summary_name(id)));
        self.touched(&all);
        // What the first look did not meet (a run gone meanwhile) is not kept.
        self.seeds = HashMap::new();
        self.read_ahead = HashMap::new();
        if self.first_look && self.untold {
            // What is read from now on is told: each tail (a settled one too, when it is read
            // again) builds the place and kind of each line it reads.
            (self.tails.values_mut()).for_each(|t| t.set_rows(Rows::Lines));
        }
        self.first_look = false;
        self.settle_idle();
    }

    /// How many tails hold a fold's state (see [`WatchHandle::reading`](super::WatchHandle)).
    pub(super) fn reading(&self) -> usize {
        self.tails.values().filter(|t| !t.is_kept()).count()
    }

    /// Lets the tails of settled runs go of what reading on needs ([`Tail::settle`]): at the
    /// end of a full look, and now and then for the runs that went quiet since they were read.
    /// Only the tails still reading on are looked at (a stat each): the live runs, few.
    pub(super) fn settle_idle(&mut self) {
        let awake = self.tails.values_mut().filter(|t| !t.is_kept());
        let settled = awake.filter_map(|t| t.settle().then_some(())).count();
        if settled > 0 {
            tracing::debug!(dir = %self.name, settled, "settled runs let go of their reading");
        }
    }

    /// The first look's transcripts that nothing vouches for (no tail yet, nothing in the
    /// index) are read on every core, the most recently written first, a batch at a time; each
    /// is then told exactly as a read one by one tells it. What they hold counts in the
    /// process's listing progress.
    fn read_first(&mut self, names: &BTreeSet<String>) {
        use rayon::prelude::*;
        let opts = self.opts_now();
        let mut ids: Vec<(i64, u64, String)> = (names.iter())
            .filter_map(|n| n.strip_suffix(TRANSCRIPT_SUFFIX).filter(|s| !s.is_empty()))
            .filter(|id| !self.tails.contains_key(*id) && !self.seeds.contains_key(*id))
            .filter_map(|id| {
                // Only a regular file is read, as `transcript` reads one (never a link or a pipe).
                let path = RunPaths::new(&self.root, id).transcript();
                let meta = std::fs::symlink_metadata(path)
                    .ok()
                    .filter(|m| m.is_file())?;
                let stamp = FileStamp::from_meta(&meta);
                Some((stamp.mtime_ms(), stamp.len, id.to_owned()))
            })
            .collect();
        if ids.len() < 2 {
            return; // nothing to share out
        }
        ids.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.2.cmp(&b.2)));
        crate::progress::to_read(ids.len() as u64, ids.iter().map(|(_, len, _)| len).sum());
        let root = self.root.clone();
        // An untold look builds nothing of what it reads here (see `scan_all`).
        let rows = match self.untold {
            true => Rows::Nothing,
            false => Rows::Lines,
        };
        for batch in ids.chunks(FIRST_BATCH) {
            let read: Vec<_> = (batch.par_iter())
                .map(|(_, len, id)| {
                    let mut tail = Tail::new_in(root.clone(), id, opts, rows);
                    let update = tail.poll();
                    crate::progress::read_one(*len);
                    (id.clone(), (tail, update))
                })
                .collect();
            for (id, ahead) in read {
                self.read_ahead.insert(id.clone(), ahead);
                self.transcript(&id, opts);
                // Told: a settled run keeps only its figures (else the first look holds a
                // fold's state for every run of the directory).
                if let Some(tail) = self.tails.get_mut(&id) {
                    tail.settle();
                }
            }
        }
    }

    /// Re-reads what the names touched. Transcripts are read from their last complete line on.
    pub(super) fn touched(&mut self, names: &BTreeSet<String>) {
        self.wakeups += 1;
        if self.look_foreign(false) {
            return;
        }
        let opts = self.opts_now();
        for name in names {
            if name.ends_with(TEMP_SUFFIX) {
                continue;
            }
            if let Some(id) = name
                .strip_suffix(TRANSCRIPT_SUFFIX)
                .filter(|s| !s.is_empty())
            {
                self.transcript(id, opts);
            } else if let Some(id) = name.strip_suffix(SUMMARY_SUFFIX).filter(|s| !s.is_empty()) {
                let exists = is_regular_file(&self.root.join(name));
                let known = self.summaries.contains(id);
                if exists && !known && !self.tails.contains_key(id) {
                    self.send(Change::RunAdded {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                    });
                }
                if !self.first_look && self.tails.get(id).is_some_and(|t| t.is_kept()) {
                    // The index's run holds the summary it was read with: read the run now.
                    if let Some(t) = self.tails.get_mut(id) {
                        t.read_kept();
                    }
                    self.transcript(id, opts);
                }
                if exists {
                    self.summaries.insert(id.to_owned());
                    self.send(Change::Summarised {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                    });
                } else if known {
                    self.summaries.remove(id);
                    // Gone with its transcript: the run is gone; else the run changed.
                    let change = if self.tails.contains_key(id) {
                        Change::Summarised {
                            dir: self.name.clone(),
                            run: id.to_owned(),
                        }
                    } else {
                        Change::RunRemoved {
                            dir: self.name.clone(),
                            run: id.to_owned(),
                        }
                    };
                    self.send(change);
                }
            } else if let Some(id) = name.strip_suffix(VALUES_SUFFIX).filter(|s| !s.is_empty()) {
                let path = self.root.join(name);
                let meta = std::fs::symlink_metadata(&path).ok().filter(|m| m.is_dir());
                let known = self.values.contains_key(id);
                if let Some(meta) = meta.as_ref().filter(|_| !known) {
                    // Listed now: what is there already is not news; later files are. A run
                    // followed since before the directory came counts them now.
                    let files = stems(&path).unwrap_or_default();
                    // A run the index vouches for counts the files already (the directory's
                    // stamp matched).
                    let first_look = self.first_look;
                    let tail = self.tails.get_mut(id);
                    let mut reread = false;
                    if let Some(tail) = tail.filter(|t| !(first_look && t.is_kept())) {
                        // Made again with files for results already classified without them
                        // (a GC undone, say): those results' states change.
                        reread = files.iter().any(|v| tail.missed_value(v)) || tail.value_resized();
                        tail.add_values(&files.iter().cloned().collect::<Vec<_>>());
                    }
                    let seen = ValueDir {
                        stamp: FileStamp::from_meta(meta),
                        files,
                    };
                    self.values.insert(id.to_owned(), seen);
                    self.value_dir_met(id);
                    self.send(Change::ValuesAdded {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                    });
                    if reread {
                        self.reread(id);
                    }
                } else if meta.is_some() && known {
                    // Looked at again (a rescan): listed again when its time moved.
                    self.check_value_dir(id, false);
                } else if meta.is_none() && known {
                    self.values.remove(id);
                    self.value_dir_gone(id);
                    self.send(Change::ValuesRemoved {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                    });
                    // Its results are unretained now: the run model is read again.
                    self.reread(id);
                }
            }
        }
    }

    fn transcript(&mut self, id: &str, opts: RunOptions) {
        // What the first look read ahead is this call's alone, used or not.
        let (ahead, polled) = match self.read_ahead.remove(id) {
            Some((tail, update)) => (Some(tail), Some(update)),
            None => (None, None),
        };
        if !is_regular_file(&RunPaths::new(&self.root, id).transcript()) {
            if self.tails.remove(id).is_some() {
                // With its summary still there the run is one of a summary only now.
                let change = if self.summaries.contains(id) {
                    Change::Reset {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                        lines: 0,
                    }
                } else {
                    Change::RunRemoved {
                        dir: self.name.clone(),
                        run: id.to_owned(),
                    }
                };
                self.send(change);
            }
            return;
        }
        let dir = self.name.clone();
        let is_new = !self.tails.contains_key(id);
        let seed = self.seeds.remove(id);
        let tail = self.tails.entry(id.to_owned()).or_insert_with(|| {
            let root = || self.root.clone();
            let kept = |e| Tail::kept(root(), id, opts, e, Rows::Lines);
            let tail = (ahead.or_else(|| seed.and_then(kept)))
                .unwrap_or_else(|| Tail::new_in(root(), id, opts, Rows::Lines));
            Box::new(tail)
        });
        // (The fields, not `send`: the tail holds `tails`.)
        let untold = self.first_look && self.untold;
        if is_new && !self.summaries.contains(id) {
            let run = id.to_owned();
            tell(
                &self.tx,
                untold,
                Change::RunAdded {
                    dir: dir.clone(),
                    run,
                },
            );
        }
        let polled = match polled {
            Some(update) if is_new => update,
            _ => tail.poll(),
        };
        let Ok(update) = polled else { return };
        if update.reset {
            let (run, lines) = (id.to_owned(), tail.lines());
            tell(
                &self.tx,
                untold,
                Change::Reset {
                    dir: dir.clone(),
                    run,
                    lines,
                },
            );
        }
        self.report(id, update.events, update.pending_bytes);
    }

    /// Sends the appended events of run `id`, and `finished` when one of them ends a dispatch.
    fn report(&self, id: &str, events: Vec<crate::model::TimelineEvent>, pending_bytes: u64) {
        if events.is_empty() {
            return;
        }
        let dir = self.name.clone();
        let lines: Vec<LineRef> = events
            .iter()
            .map(|e| LineRef {
                line: e.line,
                kind: e.kind.clone(),
            })
            .collect();
        let finished = events
            .iter()
            .any(|e| e.kind == "run_result" || e.kind == "run_error");
        self.send(Change::Appended {
            dir: dir.clone(),
            run: id.to_owned(),
            lines,
            pending_bytes,
        });
        if finished {
            if let Some(t) = self.tails.get(id) {
                self.send(Change::Finished {
                    dir,
                    run: id.to_owned(),
                    status: t.run().status.as_str().to_owned(),
                });
            }
        }
    }
}

/// Stems of the value files of a value directory (those [`list_value_files`] lists); `None`
/// when it cannot be listed. Only names and kinds are read: no `stat` of each file.
fn stems(dir: &Path) -> Option<BTreeSet<String>> {
    let mut stems = BTreeSet::new();
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if let Some(stem) = name.strip_suffix(VALUE_EXT).filter(|s| !s.is_empty()) {
            stems.insert(stem.to_owned());
        }
    }
    Some(stems)
}
