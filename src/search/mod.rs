//! Search across a runs directory (`mctl search`, the app's search box; `docs/search.md`):
//! message text, tool call inputs, tool results and value files, with ripgrep's own searcher
//! over both cores. A retained result is searched once, through its value file; every other
//! result through its text in the transcript; stray value files too. Each hit in a value says
//! whether the model was shown that line, by the coverage rule.

mod foreign;
mod hit;
mod matcher;
mod scan;
mod transcript;

pub use hit::{HitKind, SearchHit};
pub use scan::Skipped;

use crate::error::{Error, ErrorCode, Result};
use crate::index::Entry;
use crate::insights::{PeekCall, SeenLines};
use crate::model::layout::{Layout, RunFiles};
use crate::model::options::RunOptions;
use crate::model::values::ValueFile;
use crate::model::{ResultInfo, RetentionState};
use crate::retained::{stub_from_source, FileSource, LineIndex};
use crate::runs::{analyze_run, RunsDir};
use crate::sync::lock;
use hit::Origin;
use matcher::{Matcher, Pattern};
use scan::Ctx;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use transcript::{search_transcript, Transcript};
use ts_rs::TS;

/// Which kinds of text a search looks in (`--in messages,inputs,results,values`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds(u8);

impl Kinds {
    /// Every kind: messages, inputs, results and values.
    pub const ALL: Kinds = Kinds(0b1111);

    /// The kinds listed.
    pub fn of(kinds: &[HitKind]) -> Self {
        Kinds(kinds.iter().fold(0, |bits, k| bits | Self::bit(*k)))
    }

    /// `messages,inputs,results,values` (any of them, singular or plural).
    pub fn parse(list: &str) -> Result<Self> {
        let mut kinds = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            kinds.push(match word.trim_end_matches('s') {
                "message" => HitKind::Message,
                "input" => HitKind::Input,
                "result" => HitKind::Result,
                "value" => HitKind::Value,
                _ => {
                    return Err(Error::new(
                        ErrorCode::Invalid,
                        format!("unknown kind `{word}`: give messages, inputs, results or values"),
                    ))
                }
            });
        }
        if kinds.is_empty() {
            return Err(Error::new(ErrorCode::Invalid, "--in names no kind"));
        }
        Ok(Self::of(&kinds))
    }

    fn bit(k: HitKind) -> u8 {
        match k {
            HitKind::Message => 1,
            HitKind::Input => 2,
            HitKind::Result => 4,
            HitKind::Value => 8,
        }
    }

    /// Whether the search looks in kind `k`.
    pub fn has(self, k: HitKind) -> bool {
        self.0 & Self::bit(k) != 0
    }

    fn in_transcripts(self) -> bool {
        self.has(HitKind::Message) || self.has(HitKind::Input) || self.has(HitKind::Result)
    }
}

/// What to search for, and where.
#[derive(Debug, Clone)]
pub struct SearchQuery {
    /// What to look for: a literal substring, or a regex when `regex`.
    pub pattern: String,
    /// Rust regex syntax; else a literal substring.
    pub regex: bool,
    /// Match without regard to letter case.
    pub ignore_case: bool,
    /// One run (an id or a unique prefix of one); else every run.
    pub run: Option<String>,
    /// The kinds of text to look in.
    pub kinds: Kinds,
    /// Stop after this many hits.
    pub max: Option<u64>,
}

/// The end of a search (the last line of `mctl search --json`, with `"kind":"summary"`).
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchSummary {
    /// Matching lines found (at most `--max` when given).
    pub hits: u64,
    /// Transcripts and value files searched.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// How long the search took, in milliseconds (summed over the directories searched).
    pub elapsed_ms: u64,
    /// `--max` hits were found and the search stopped there.
    pub truncated: bool,
    /// The search was cancelled before it ended.
    pub cancelled: bool,
    /// Runs looked at (as many as the listing has, when every run is searched).
    pub runs: u64,
    /// Value directories without a run (strays) looked at besides the runs.
    pub value_dirs_without_run: u64,
    /// Files (or lines) that could not be searched, and why.
    pub skipped: Vec<Skipped>,
}

impl SearchSummary {
    /// Adds the figures of a search of another runs directory.
    pub fn merge(&mut self, s: SearchSummary) {
        self.hits += s.hits;
        self.files += s.files;
        self.bytes += s.bytes;
        self.elapsed_ms += s.elapsed_ms;
        self.truncated |= s.truncated;
        self.cancelled |= s.cancelled;
        self.runs += s.runs;
        self.value_dirs_without_run += s.value_dirs_without_run;
        self.skipped.extend(s.skipped);
    }
}

/// The runs (and value directories without a run) a search of `run` (every one when `None`)
/// reads: a run's id or a unique prefix of one, or the exact id of a value directory that has
/// no run; anything else is an unknown run.
pub fn run_ids(dir: &RunsDir, layout: &Layout, run: Option<&str>) -> Result<Vec<String>> {
    Ok(match run {
        // A value directory without a run is named by its exact id.
        Some(run) if !layout.runs.contains_key(run) && layout.value_dirs.contains_key(run) => {
            vec![run.to_owned()]
        }
        Some(run) => vec![dir.resolve_run(layout, run)?],
        None => {
            let mut ids: Vec<String> = layout.runs.keys().cloned().collect();
            // A value directory without a run holds only strays; they are searched too.
            ids.extend(
                (layout.value_dirs.keys())
                    .filter(|id| !layout.runs.contains_key(*id))
                    .cloned(),
            );
            ids
        }
    })
}

/// Whether a search's pattern compiles (not empty, a valid regex when `regex` says it is
/// one): what a search refuses before it reads anything, for a transport that answers a
/// search before it ends.
pub(crate) fn check_pattern(pattern: &str, regex: bool, ignore_case: bool) -> Result<()> {
    let text = pattern.to_owned();
    Matcher::new(&Pattern {
        text,
        regex,
        ignore_case,
    })
    .map(drop)
}

/// Searches the runs directory, handing each batch of hits to `emit` as it is found (from
/// several threads, one batch at a time per file, a file's hits in order). Stops early when
/// `cancel` is set or `query.max` hits were found.
pub fn search_runs(
    dir: &RunsDir,
    query: &SearchQuery,
    cancel: &AtomicBool,
    emit: &(dyn Fn(Vec<SearchHit>) + Sync),
) -> Result<SearchSummary> {
    let started = Instant::now();
    let matcher = Matcher::new(&Pattern {
        text: query.pattern.clone(),
        regex: query.regex,
        ignore_case: query.ignore_case,
    })?;
    let layout = dir.layout()?;
    let ids = run_ids(dir, &layout, query.run.as_deref())?;
    let opts = dir.listing_opts(dir.opts.now_ms);
    let indexed = dir
        .indexed_results(&layout, opts.now_ms)
        .unwrap_or_default();
    let ctx = Ctx::new(matcher, query.max, cancel, emit);
    let kinds = query.kinds;
    rayon::scope(|s| {
        for id in &ids {
            let (ctx, layout, opts, indexed) = (&ctx, &layout, &opts, &indexed);
            s.spawn(move |_| {
                if ctx.stopped() {
                    return; // cancelled: the runs not begun are not read at all
                }
                let mut run = RunSearch::new(ctx, layout, id, indexed.get(id), opts);
                if query.run.is_some() {
                    run.only_this_run();
                }
                // The run's value files are searched in tasks of their own, which borrow it.
                rayon::scope(|s| run.search(s, kinds));
            });
        }
    });
    let skipped = std::mem::take(&mut *ctx.skipped.lock().expect("skipped lock"));
    let runs = ids
        .iter()
        .filter(|id| layout.runs.contains_key(*id))
        .count() as u64;
    Ok(SearchSummary {
        hits: ctx.hits(),
        files: ctx.files.load(std::sync::atomic::Ordering::Relaxed),
        bytes: ctx.bytes.load(std::sync::atomic::Ordering::Relaxed),
        elapsed_ms: started.elapsed().as_millis() as u64,
        truncated: ctx.truncated(),
        cancelled: ctx.cancelled(),
        runs,
        value_dirs_without_run: ids.len() as u64 - runs,
        skipped,
    })
}

/// One run being searched: its transcript in one task, each value file in another.
struct RunSearch<'a> {
    ctx: &'a Ctx<'a>,
    /// The kind of store the run is in.
    store: &'static dyn crate::sources::Source,
    id: &'a str,
    transcript: Option<&'a Path>,
    value_dir: Option<&'a Path>,
    /// Whether the run exists (a transcript or a summary), not only its value directory.
    has_run: bool,
    /// Its results, with retention states as a listing tells them.
    results: Vec<ResultInfo>,
    /// The peeks of each run whose values had a hit (`peek_value` calls, or Claude Code's
    /// reads of a value file), read once.
    peeks: Mutex<HashMap<String, Arc<Vec<PeekCall>>>>,
    /// The results of the runs whose values share this run's folder (a Claude Code session's
    /// subagents), by run: read once, when the folder is searched.
    shared: OnceLock<Vec<(String, ResultInfo)>>,
    layout: &'a Layout,
    opts: &'a RunOptions,
    /// Only this run's values are searched (`--run`), in a folder it may share with others.
    only: bool,
    /// Whether `value_dir` is the run's own folder, not its session's.
    own_folder: bool,
}

impl<'a> RunSearch<'a> {
    fn new(
        ctx: &'a Ctx<'a>,
        layout: &'a Layout,
        id: &'a str,
        entry: Option<&Entry>,
        opts: &'a RunOptions,
    ) -> Self {
        let transcript = layout.runs.get(id).and_then(|f| f.transcript.as_deref());
        let value_dir = layout.value_dirs.get(id).map(|p| p.as_path());
        // Only a run with values has results searched elsewhere than in its transcript.
        let results = match (value_dir, transcript) {
            (Some(_), Some(path)) => match entry.and_then(|e| e.results.clone()) {
                Some(results) => results,
                None => read_results(ctx, layout, id, opts, path),
            },
            _ => Vec::new(),
        };
        Self {
            ctx,
            store: layout.store(),
            id,
            transcript,
            value_dir,
            has_run: layout.runs.contains_key(id),
            results,
            peeks: Mutex::default(),
            shared: OnceLock::new(),
            layout,
            opts,
            only: false,
            own_folder: true,
        }
    }

    /// Which of its transcript's lines are the run's (a file may hold several runs' lines).
    fn line_filter(&self) -> Box<dyn crate::sources::LineFilter> {
        match self.layout.runs.get(self.id) {
            Some(files) => self.store.line_filter(files),
            None => Box::new(crate::sources::store::AllLines),
        }
    }

    /// Searches this run's values alone: a Claude Code subagent's are in its session's folder,
    /// among the session's and its siblings'.
    fn only_this_run(&mut self) {
        self.only = true;
        // A folder not there yet holds nothing of it.
        let shared = (self.layout.runs.get(self.id))
            .and_then(|f| f.parent_values())
            .filter(|d| std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()));
        if let (None, Some(dir)) = (self.value_dir, shared) {
            self.value_dir = Some(dir);
            self.own_folder = false;
            if let Some(path) = self.transcript {
                self.results = read_results(self.ctx, self.layout, self.id, self.opts, path);
            }
        }
    }

    fn search<'s>(&'s self, scope: &rayon::Scope<'s>, kinds: Kinds) {
        let retained: Vec<&ResultInfo> = (self.results.iter())
            .filter(|r| r.state == RetentionState::Retained)
            .collect();
        if kinds.has(HitKind::Value) {
            if let Some(dir) = self.value_dir {
                self.search_values(scope, dir, &retained);
            }
        }
        if let (Some(path), true) = (self.transcript, kinds.in_transcripts()) {
            let skip: HashMap<u64, (u64, u64)> = (retained.iter())
                .map(|r| (r.line, (r.offset, r.bytes)))
                .collect();
            let states: HashMap<u64, RetentionState> =
                self.results.iter().map(|r| (r.line, r.state)).collect();
            let t = Transcript {
                run: self.id,
                path,
                skip: &skip,
                states: &states,
                kinds,
            };
            let searched = match self.store.envelopes() {
                true => search_transcript(self.ctx, &t),
                false => foreign::search_foreign(self.ctx, &t, self.store, self.line_filter()),
            };
            match searched {
                Ok(bytes) => self.ctx.searched(bytes),
                Err(e) => self.ctx.skip(path, reason(&e)),
            }
        }
    }

    /// Spawns a search of each value file: a retained result's, once, and each stray one.
    fn search_values<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        dir: &Path,
        retained: &[&'s ResultInfo],
    ) {
        let listed = self.store.list_values(dir);
        let files = match listed {
            Ok(files) => files,
            Err(e) => return self.ctx.skip(dir, reason(&e)),
        };
        let shared = self.shared.get_or_init(|| self.shared_results(dir));
        let named: HashSet<&str> = (self.results.iter())
            .chain(shared.iter().map(|(_, r)| r))
            .map(|r| r.value_id.as_str())
            .collect();
        // The last retained result of a value id is the one its file holds; a subagent's
        // result names a file of the folder its session's does not.
        let mut by_value: HashMap<&str, (&str, &ResultInfo)> = (retained.iter())
            .map(|r| (r.value_id.as_str(), (self.id, *r)))
            .collect();
        for (run, r) in shared {
            if r.state == RetentionState::Retained {
                by_value.entry(&r.value_id).or_insert((run, r));
            }
        }
        for (stem, file) in files {
            let owned = by_value.get(stem.as_str()).copied();
            if owned.is_none() && named.contains(stem.as_str()) {
                continue; // a damaged or unretained result's file: its text is the transcript's
            }
            let owner = owned.map_or(self.id, |(run, _)| run);
            // Asked of one run: another run's file is not its, nor a stray of its session's.
            if self.only && (owner != self.id || (owned.is_none() && !self.own_folder)) {
                continue;
            }
            let result = owned.map(|(_, r)| r);
            let origin = Origin {
                run: owner.to_owned(),
                line: result.map(|r| r.line),
                tool_call_id: result.map(|r| r.tool_call_id.clone()),
                value_id: Some(stem.clone()),
                stray: result.is_none(),
                orphan: self.transcript.is_none() && !self.has_run,
                state: result.map(|r| r.state),
            };
            scope.spawn(move |_| {
                if !self.ctx.stopped() {
                    self.search_value(&file, &origin, owned);
                }
            });
        }
    }

    /// The results of the other runs whose values are in `dir`, the folder of this run: a
    /// Claude Code session's subagents and side conversations.
    fn shared_results(&self, dir: &Path) -> Vec<(String, ResultInfo)> {
        // A store that names each run's files from its id shares no folder between runs.
        if self.store.capabilities().flat_names {
            return Vec::new();
        }
        let sharing = (self.layout.runs.iter())
            .filter(|(id, f)| *id != self.id && f.parent_values() == Some(dir));
        let mut out = Vec::new();
        for (id, files) in sharing {
            let path = files.transcript.as_deref().unwrap_or(dir);
            let results = read_results(self.ctx, self.layout, id, self.opts, path);
            out.extend(results.into_iter().map(|r| (id.clone(), r)));
        }
        out
    }

    /// Searches one value file; `owned` is the run and result it backs, if any.
    fn search_value(&self, file: &ValueFile, origin: &Origin, owned: Option<(&str, &ResultInfo)>) {
        let path = file.path.as_path();
        let mut seen: Option<Option<SeenLines>> = None;
        let mut finish = |hits: &mut [SearchHit]| {
            if hits.is_empty() {
                return;
            }
            // A stray file's lines were never shown: no stub, no peek named it.
            let Some((run, r)) = owned else {
                hits.iter_mut().for_each(|h| h.seen = Some(false));
                return;
            };
            let lines = seen.get_or_insert_with(|| self.seen_lines(path, run, r));
            for h in hits.iter_mut() {
                h.seen = lines.as_ref().map(|l| l.contains(h.text_line));
            }
        };
        match self
            .ctx
            .search_file(path, origin, HitKind::Value, &mut finish)
        {
            // Its size as listed: no second look at the file.
            Ok(_) => self.ctx.searched(file.bytes),
            Err(e) => self.ctx.skip(path, reason(&e)),
        }
    }

    /// The lines of result `r` of run `run`, whose value is `path`, that its model was shown:
    /// its stub's, and what it read back. `None` when that cannot be told.
    fn seen_lines(&self, path: &Path, run: &str, r: &ResultInfo) -> Option<SeenLines> {
        let files = self.layout.runs.get(run)?;
        let peeks = self.peeks_of(run, files)?;
        if let Some(texts) = self.store.recorded_texts(self.layout, run, r) {
            // Another agent's stub is the text its model got (Claude Code's preview shows the
            // first lines).
            let stub = self.store.stub_of_seen(&texts.ok()?.seen)?;
            return Some(SeenLines::of(&stub, &r.value_id, &peeks));
        }
        let src = FileSource::open_no_follow(path).ok()?;
        let index = LineIndex::build(&src).ok()?;
        let stub = stub_from_source(&r.value_id, &r.tool, &src, &index).ok()?;
        Some(SeenLines::of(&stub, &r.value_id, &peeks))
    }

    /// The peeks of run `run` (of `files`): its transcript's `peek_value` calls, or Claude
    /// Code's `Read` and `Grep` of a value file in the run's own lines.
    fn peeks_of(&self, run: &str, files: &RunFiles) -> Option<Arc<Vec<PeekCall>>> {
        let transcript = files.transcript.as_deref()?;
        let mut peeks = lock(&self.peeks);
        let read = || self.store.read_backs(transcript, run, files);
        let found = peeks
            .entry(run.to_owned())
            .or_insert_with(|| Arc::new(read().unwrap_or_default()));
        Some(Arc::clone(found))
    }
}

/// The results of run `id`, read from its transcript `path`; none when it cannot be read (the
/// search says it skipped the file, and why).
fn read_results(
    ctx: &Ctx<'_>,
    layout: &Layout,
    id: &str,
    opts: &RunOptions,
    path: &Path,
) -> Vec<ResultInfo> {
    match analyze_run(layout, id, opts, false) {
        Ok(detail) => detail.results,
        Err(e) => {
            ctx.skip(path, format!("the run could not be read: {e}"));
            Vec::new()
        }
    }
}

/// Why a file could not be searched, in words.
fn reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "it disappeared during the search".to_owned(),
        _ if scan::too_long(e) => format!(
            "a line longer than {} MiB: a regex or a case-insensitive search holds a line \
             whole, and stops at that size (a case-sensitive literal searches any line)",
            scan::LINE_LIMIT >> 20
        ),
        _ => e.to_string(),
    }
}

/// Hits gathered into fewer, bigger batches for a front end that pays per message (the app's
/// channel): the first batch goes at once (the first hit shows without delay), later ones when
/// `size` hits are waiting or `wait` has passed since the last went; `flush` sends the rest.
pub struct Batches<F: Fn(Vec<SearchHit>) + Sync> {
    pending: std::sync::Mutex<(Vec<SearchHit>, Option<Instant>)>,
    send: F,
    size: usize,
    wait: std::time::Duration,
}

impl<F: Fn(Vec<SearchHit>) + Sync> Batches<F> {
    /// Batches of at most `size` hits, sent to `send` at most every `wait` (the first at once).
    pub fn new(send: F, size: usize, wait: std::time::Duration) -> Self {
        Self {
            pending: std::sync::Mutex::new((Vec::new(), None)),
            send,
            size,
            wait,
        }
    }

    /// Adds hits; sends what waits when a batch is due.
    pub fn push(&self, hits: Vec<SearchHit>) {
        let mut p = self.pending.lock().expect("batches lock");
        p.0.extend(hits);
        let due = p.1.is_none_or(|last| last.elapsed() >= self.wait);
        if due || p.0.len() >= self.size {
            let batch = std::mem::take(&mut p.0);
            p.1 = Some(Instant::now());
            // Sent under the lock: batches go out in the order they were gathered.
            (self.send)(batch);
        }
    }

    /// Sends every hit still waiting.
    pub fn flush(&self) {
        let mut p = self.pending.lock().expect("batches lock");
        let batch = std::mem::take(&mut p.0);
        if !batch.is_empty() {
            (self.send)(batch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;

    fn hit(n: u64) -> SearchHit {
        SearchHit {
            run: "r".into(),
            kind: HitKind::Value,
            line: None,
            tool_call_id: None,
            value_id: None,
            value_line: Some(n),
            text_line: n,
            text_index: 0,
            text: String::new(),
            match_start: 0,
            match_end: 0,
            text_offset: 0,
            text_bytes: 0,
            line_bytes: 0,
            seen: None,
            stray: true,
            orphan: false,
            state: None,
        }
    }

    #[test]
    fn batches_send_the_first_at_once_then_gather_and_keep_the_order() {
        let sent = Mutex::new(Vec::<Vec<u64>>::new());
        let send = |hits: Vec<SearchHit>| {
            sent.lock()
                .unwrap()
                .push(hits.iter().map(|h| h.text_line).collect())
        };
        let b = Batches::new(send, 3, Duration::from_secs(3600));
        b.push(vec![hit(1)]);
        b.push(vec![hit(2)]);
        b.push(vec![hit(3)]);
        b.push(vec![hit(4)]);
        b.push(vec![hit(5)]);
        b.flush();
        b.flush();
        assert_eq!(*sent.lock().unwrap(), [vec![1], vec![2, 3, 4], vec![5]]);
    }
}
