//! The handler of every command of the contract, one method each, named as the command: it
//! takes the command's request (and a [`Sink`] for a command that streams) and answers its
//! response. Each one calls into the core; what is here is only what a front end keeps between
//! commands (the opened values, the GC plan shown, the search running, the what-if's sizes).

use super::{lock, prefs, Service, Sink};
use crate::gc;
use crate::insights::ErrorPattern;
use crate::model::layout::is_valid_run_id;
use crate::model::now_ms;
use crate::pins::Pins;
use crate::search::{Batches, Kinds, SearchQuery, SearchSummary};
use crate::wire::command as c;
use crate::wire::{DirsSource, SearchBatch};
use crate::{Error, ErrorCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

type Res<T> = Result<T, Error>;

/// Hits per batch sent, at most, and how long hits wait to be sent with others.
const BATCH: usize = 2000;
const BATCH_WAIT: Duration = Duration::from_millis(80);

/// Said when the app has no config directory to keep its settings in.
const NOT_SAVED: &str =
    "there is no config directory to save settings in: they apply until the app closes";

/// What the desktop app alone can do (a system dialog, the file manager).
fn desktop_only(what: &str) -> Error {
    Error::new(
        ErrorCode::Forbidden,
        format!("{what} is only possible in the desktop app"),
    )
}

impl Service {
    /// Shows `dirs` from now on (the live session watches them), and remembers them for the
    /// next start in the settings file. A start with `--runs-dir` or `$MCTL_RUNS_DIR` shows
    /// those again.
    pub fn set_runs_dirs(&self, req: c::set_runs_dirs::Request) -> Res<c::set_runs_dirs::Response> {
        if !self.allowed.desktop {
            let message = "this server shows the runs directories it was started with";
            return Err(Error::new(ErrorCode::Forbidden, message));
        }
        let dirs: Vec<String> = req
            .dirs
            .into_iter()
            .filter(|d| !d.trim().is_empty())
            .collect();
        let mut settings = super::lock(&self.settings);
        let mut buckets = super::lock(&self.buckets);
        super::buckets::check_urls(&dirs, &buckets, &settings.runs_dirs)?;
        let saved = prefs::SavedSettings {
            runs_dirs: super::buckets::as_saved(dirs, &buckets),
            ..settings.saved.clone()
        };
        self.save_prefs(&saved)?;
        let dirs = super::buckets::follow(&saved.runs_dirs, &mut buckets);
        if !saved.dir_kinds.is_empty() {
            super::declare_kinds(&saved, &buckets);
        }
        drop(buckets);
        self.live
            .restart_with(&dirs, settings.threshold, settings.running_window_ms);
        settings.runs_dirs = dirs;
        settings.source = DirsSource::Saved;
        settings.sources.runs_dirs = DirsSource::Saved;
        settings.saved = saved;
        self.forget_values();
        drop(settings);
        Ok(self.current())
    }

    /// Saves the Settings view's choices and applies each one the command line and the
    /// environment do not override (they win, now as at the next start). A new threshold or
    /// new directories restart the watch; a new running window applies to what is read next.
    pub fn save_settings(
        &self,
        saved: c::save_settings::Request,
    ) -> Res<c::save_settings::Response> {
        if !self.allowed.desktop {
            let message = "this server's settings are its command line's";
            return Err(Error::new(ErrorCode::Forbidden, message));
        }
        if saved.threshold == Some(0)
            || saved.running_window_ms.is_some_and(|v| v < 0)
            || saved.gc_idle_guard_ms.is_some_and(|v| v < 0)
        {
            let message = "the threshold must be above 0, and durations cannot be negative";
            return Err(Error::new(ErrorCode::Invalid, message));
        }
        // Under the lock, as set_runs_dirs saves: the file and what is in effect agree.
        let mut settings = super::lock(&self.settings);
        let mut buckets = super::lock(&self.buckets);
        let known: Vec<String> = [&settings.runs_dirs, &settings.saved.runs_dirs]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        super::buckets::check_urls(&saved.runs_dirs, &buckets, &known)?;
        self.save_prefs(&saved)?;
        let before = (
            settings.runs_dirs.clone(),
            settings.threshold,
            settings.running_window_ms,
        );
        let kinds_before = settings.saved.dir_kinds.clone();
        prefs::apply_saved(&mut settings, saved);
        settings.runs_dirs = super::buckets::follow(&settings.runs_dirs, &mut buckets);
        let kinds_changed = settings.saved.dir_kinds != kinds_before;
        // A bucket's kind applies to its mirror, which a new bucket has only now.
        let buckets_changed = settings.runs_dirs != before.0;
        if kinds_changed || (buckets_changed && !settings.saved.dir_kinds.is_empty()) {
            super::declare_kinds(&settings.saved, &buckets);
        }
        drop(buckets);
        // A warning about the file it just replaced no longer holds.
        match &self.settings_file {
            Some(file) => {
                let path = file.display().to_string();
                settings.warnings.retain(|w| !w.starts_with(&path));
            }
            None if !settings.warnings.iter().any(|w| w == NOT_SAVED) => {
                settings.warnings.push(NOT_SAVED.to_owned());
            }
            None => {}
        }
        if kinds_changed
            || before
                != (
                    settings.runs_dirs.clone(),
                    settings.threshold,
                    settings.running_window_ms,
                )
        {
            self.live.restart_with(
                &settings.runs_dirs,
                settings.threshold,
                settings.running_window_ms,
            );
            self.forget_values();
        }
        drop(settings);
        Ok(self.current())
    }

    /// Writes `saved` to the settings file, when this front end has one.
    fn save_prefs(&self, saved: &prefs::SavedSettings) -> Res<()> {
        match &self.settings_file {
            Some(file) => prefs::save(file, saved)
                .map_err(|e| Error::io(format!("saving the settings to {}", file.display()), &e)),
            None => Ok(()),
        }
    }

    /// A run exported, its document included.
    pub fn export_run(&self, req: c::export_run::Request) -> Res<c::export_run::Response> {
        crate::export::export_run(&self.runs_dir(&req.dir)?, &req.run, &req.options)
    }

    /// An export's figures: the export made and counted as it is made, nothing kept.
    pub fn export_preview(
        &self,
        req: c::export_preview::Request,
    ) -> Res<c::export_preview::Response> {
        let dir = self.runs_dir(&req.dir)?;
        crate::export::export_to(&dir, &req.run, &req.options, &mut std::io::sink())
    }

    /// The export of `req` written to `path` as it is made (the desktop's save, after its
    /// dialog): its figures, with no document.
    pub fn export_file(
        &self,
        req: &c::save_export::Request,
        path: &std::path::Path,
    ) -> Result<crate::export::Export, Error> {
        crate::export::save_to(path, &self.runs_dir(&req.dir)?, &req.run, &req.options)
    }

    /// Two runs aligned; each may be of any directory shown.
    pub fn diff_runs(&self, req: c::diff_runs::Request) -> Res<c::diff_runs::Response> {
        let (a, b) = (self.runs_dir(&req.dir_a)?, self.runs_dir(&req.dir_b)?);
        crate::diff::diff_runs(&a, &req.run_a, &b, &req.run_b)
    }

    /// Two results' texts as a line diff.
    pub fn diff_results(&self, req: c::diff_results::Request) -> Res<c::diff_results::Response> {
        let (a, b) = (self.runs_dir(&req.a.dir)?, self.runs_dir(&req.b.dir)?);
        crate::diff::diff_results((&a, &req.a.run, &req.a.call), (&b, &req.b.run, &req.b.call))
    }

    /// Fails with `forbidden`: saving where the user chooses takes the desktop shell's dialog.
    pub fn save_export(&self, _: c::save_export::Request) -> Res<c::save_export::Response> {
        Err(desktop_only("saving a file where you choose"))
    }

    /// Fails with `forbidden`: the folder picker is the desktop shell's.
    pub fn pick_runs_dir(&self, _: ()) -> Res<c::pick_runs_dir::Response> {
        Err(desktop_only("choosing a folder"))
    }

    /// Every run: from the watcher's models (waiting for its first scan), or with `reread`
    /// every transcript read again.
    pub fn list_runs(&self, req: c::list_runs::Request) -> Res<c::list_runs::Response> {
        let _span = tracing::info_span!("list_runs", reread = req.reread).entered();
        self.forget_values();
        let dirs = self.current().runs_dirs;
        let list = self.live.list(&dirs, req.reread, |d| self.runs_dir(d));
        tracing::info!(
            dirs = dirs.len(),
            runs = list.runs.len(),
            since_start_ms = crate::since_start_ms(),
            "the list is answered"
        );
        Ok(list)
    }

    /// The front end painted its first list: the end of the start, logged at INFO. The
    /// watcher's first look, held back until now, starts.
    pub fn list_painted(&self, _: ()) -> Res<c::list_painted::Response> {
        let since_start_ms = crate::since_start_ms();
        tracing::info!(since_start_ms, "the list is painted");
        self.live.painted();
        Ok(since_start_ms)
    }

    /// How far the listings' reads have come since the process started.
    pub fn scan_progress(&self, _: ()) -> Res<c::scan_progress::Response> {
        Ok(crate::scan_progress())
    }

    /// One run's figures, timeline, results, problems and strays.
    pub fn run_detail(&self, req: c::run_detail::Request) -> Res<c::run_detail::Response> {
        let verify = match req.verify {
            Some(crate::wire::DetailVerify::Sampled) => crate::model::Verify::Sampled,
            Some(crate::wire::DetailVerify::Full) | None => crate::model::Verify::Full,
        };
        self.runs_dir(&req.dir)?.detail_verified(&req.run, verify)
    }

    /// Opens a result for the compare view: its figures, its stub, and its full text indexed.
    pub fn open_value(&self, req: c::open_value::Request) -> Res<c::open_value::Response> {
        Ok(self.opened(&req)?.info())
    }

    /// Compares every byte of a value opened `verified: sampled` with the transcript.
    pub fn verify_value(&self, req: c::verify_value::Request) -> Res<c::verify_value::Response> {
        let verdict = self.runs_dir(&req.dir)?.verify_value(&req.run, &req.call)?;
        if let Some(o) = self.cached(&req) {
            o.settle(&verdict);
        }
        Ok(verdict)
    }

    /// One page of the full text, with true line numbers.
    pub fn value_lines(&self, req: c::value_lines::Request) -> Res<c::value_lines::Response> {
        let page = self.opened(&req.r)?.value.page(req.first, req.count);
        page.map_err(|e| Error::io("reading the value", &e))
    }

    /// Lines `first..=last` as text, for the clipboard (at most 16 MiB).
    pub fn value_text(&self, req: c::value_text::Request) -> Res<c::value_text::Response> {
        let text = self
            .opened(&req.r)?
            .value
            .text_of(req.first, req.last, 16 << 20);
        text.map_err(|e| Error::io("reading the value", &e))
    }

    /// What `peek_value` returns for this request, exactly as the model would get it.
    pub fn peek_value(&self, req: c::peek_value::Request) -> Res<c::peek_value::Response> {
        let r = &req.r;
        self.runs_dir(&r.dir)?.peek(&r.run, &r.call, &req.request)
    }

    /// Fails with `forbidden`: showing a file in the file manager is the desktop shell's.
    pub fn reveal_value(&self, _: c::reveal_value::Request) -> Res<c::reveal_value::Response> {
        Err(desktop_only("showing a file in the file manager"))
    }

    /// Where the value bytes are: per run, per tool, per age, orphans.
    pub fn storage(&self, req: c::storage::Request) -> Res<c::storage::Response> {
        let d = self.runs_dir(&req.dir)?;
        let pins = Pins::load_in(d.config_dir())?;
        gc::storage(&d, &pins, now_ms())
    }

    /// Plans a collection; the plan is kept so that an apply deletes exactly what was shown.
    pub fn gc_plan(&self, req: c::gc_plan::Request) -> Res<c::gc_plan::Response> {
        let d = self.runs_dir(&req.dir)?;
        let pins = Pins::load_in(d.config_dir())?;
        let plan = gc::plan(&d, &req.policy, &pins, now_ms())?;
        *super::lock(&self.gc_plan) = Some((req.dir, req.policy, plan.clone()));
        Ok(plan)
    }

    /// Applies the plan last shown for `dir`, every file's progress sent to `progress`.
    pub fn gc_apply(
        &self,
        req: c::gc_apply::Request,
        progress: Sink<c::gc_apply::Stream>,
    ) -> Res<c::gc_apply::Response> {
        self.may_change("garbage collection")?;
        // Refused before the plan is taken: it is still there once the other apply is done.
        let Some(_applying) = Applying::start(&self.gc_applying) else {
            return Err(gc::busy());
        };
        // Taken only when it is this directory's: another's is kept for its own apply.
        let planned = {
            let mut slot = super::lock(&self.gc_plan);
            match slot.as_ref() {
                Some((planned_dir, ..)) if *planned_dir != req.dir => {
                    let message = "the plan was made for another runs directory";
                    return Err(Error::new(ErrorCode::Invalid, message));
                }
                _ => slot.take(),
            }
        };
        let Some((_, policy, plan)) = planned else {
            let message = "plan first: there is no plan to apply";
            return Err(Error::new(ErrorCode::Invalid, message));
        };
        let d = self.runs_dir(&req.dir)?;
        self.gc_cancel.store(false, Ordering::Relaxed);
        let report = gc::apply(&d, &plan, &policy, now_ms(), &self.gc_cancel, progress);
        self.forget_values();
        report
    }

    /// Stops the running apply between two files.
    pub fn gc_cancel(&self, _: ()) -> Res<c::gc_cancel::Response> {
        self.gc_cancel.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Pins or unpins a run (shared with `mctl pin`).
    pub fn set_pinned(&self, req: c::set_pinned::Request) -> Res<c::set_pinned::Response> {
        self.may_change(if req.pinned { "pinning" } else { "unpinning" })?;
        let d = self.runs_dir(&req.dir)?;
        Ok(d.set_pinned(&req.run, req.pinned)?.1)
    }

    /// The pinned runs of `dir`.
    pub fn pinned(&self, req: c::pinned::Request) -> Res<c::pinned::Response> {
        let d = self.runs_dir(&req.dir)?;
        Ok(Pins::load_in(d.config_dir())?.list(d.root()))
    }

    /// Every change in the runs directories shown, in order, from now on.
    pub fn watch_changes(
        &self,
        _: (),
        changes: Sink<c::watch_changes::Stream>,
    ) -> Res<c::watch_changes::Response> {
        self.live.subscribe(changes);
        Ok(())
    }

    /// Follows the open run: its new timeline entries after line `shown`, and its figures.
    /// Reads the transcript up to where the view is.
    pub fn follow_run(
        &self,
        req: c::follow_run::Request,
        updates: Sink<c::follow_run::Stream>,
    ) -> Res<c::follow_run::Response> {
        // The run is checked as every other door checks it: one the directory does not have
        // is refused, not followed in case it appears.
        let run = self.runs_dir(&req.dir)?.run_id(&req.run)?;
        let c::follow_run::Request {
            dir,
            shown,
            bytes,
            token,
            ..
        } = req;
        self.live
            .follow_from(dir, run, shown, bytes, token, updates)
    }

    /// Ends follow `token` (a newer follow goes on). It waits for a read of the followed run in
    /// progress.
    pub fn unfollow_run(&self, req: c::unfollow_run::Request) -> Res<c::unfollow_run::Response> {
        self.live.unfollow(req.token);
        Ok(())
    }

    /// The runs named, as they stand now (from the watcher's models when it has them). A run
    /// that is gone is answered `run: null` (its row is dropped); a name no run could have is
    /// refused as an unknown run, as every other command refuses it.
    pub fn run_rows(&self, req: c::run_rows::Request) -> Res<c::run_rows::Response> {
        if let Some(bad) = req.runs.iter().find(|k| !is_valid_run_id(&k.run)) {
            let message = format!("`{}` is not a run id", crate::runs::clipped(&bad.run));
            return Err(Error::new(ErrorCode::UnknownRun, message));
        }
        self.live.rows(req.runs, |d| self.runs_dir(d))
    }

    /// What the model was shown of each value of a run (the default error pattern).
    pub fn coverage(&self, req: c::coverage::Request) -> Res<c::coverage::Response> {
        let errors = ErrorPattern::default();
        crate::insights::coverage(
            &self.runs_dir(&req.dir)?,
            &req.run,
            req.call.as_deref(),
            &errors,
        )
    }

    /// The threshold what-if of a runs directory (or one run). The result sizes are read once
    /// per change the watcher reports: while nothing changed, each step of the slider answers
    /// from those in memory.
    pub fn what_if(&self, req: c::what_if::Request) -> Res<c::what_if::Response> {
        // Asked of a directory shown, whether the answer is kept or read; a kept answer does
        // not open the directory (a slider step is a few milliseconds).
        if !lock(&self.settings).runs_dirs.contains(&req.dir) {
            self.runs_dir(&req.dir)?; // says why
        }
        let key = self.live.settled(&req.dir);
        let kept = lock(&self.what_if_sizes)
            .as_ref()
            .filter(|s| s.dir == req.dir && s.run == req.run && Some(s.key) == key)
            .map(|s| Arc::clone(&s.sizes));
        let sizes = match kept {
            Some(sizes) => sizes,
            None => {
                let dir = self.runs_dir(&req.dir)?;
                let read = crate::insights::result_sizes(&dir, req.run.as_deref())?;
                let sizes = Arc::new(read);
                // Kept only when the watch can say whether it still holds.
                *lock(&self.what_if_sizes) = key.map(|key| super::SizesRead {
                    dir: req.dir.clone(),
                    run: req.run.clone(),
                    key,
                    sizes: Arc::clone(&sizes),
                });
                sizes
            }
        };
        Ok(crate::insights::what_if(&sizes, &req.thresholds))
    }

    /// Whether the what-if keeps the sizes it read of `dir` (for the tests of that memory).
    #[cfg(feature = "test-hooks")]
    pub fn what_if_kept(&self, dir: &str) -> bool {
        lock(&self.what_if_sizes)
            .as_ref()
            .is_some_and(|s| s.dir == dir && Some(s.key) == self.live.settled(dir))
    }

    /// The messages a resume of a run would replay, each cut for the view when asked.
    pub fn resume_preview(
        &self,
        req: c::resume_preview::Request,
    ) -> Res<c::resume_preview::Response> {
        let d = self.runs_dir(&req.dir)?;
        let mut preview = crate::insights::resume(&d, &req.run, req.shape, req.without_values)?;
        if let Some(max) = req.max_content {
            preview.clip(max);
        }
        Ok(preview)
    }

    /// Searches every directory named, its hits sent in batches as found; a new search
    /// cancels the one before it.
    pub fn search(
        &self,
        req: c::search::Request,
        batches: Sink<c::search::Stream>,
    ) -> Res<c::search::Response> {
        let cancel = self.start_search();
        let kinds = req.kinds.as_deref().map_or(Kinds::ALL, Kinds::of);
        let mut total = SearchSummary::default();
        for dir in &req.dirs {
            let d = self.runs_dir(dir)?;
            let query = SearchQuery {
                pattern: req.pattern.clone(),
                regex: req.regex,
                ignore_case: req.ignore_case,
                run: req.run.clone(),
                kinds,
                max: req.max.map(|m| m.saturating_sub(total.hits)),
            };
            let send = |hits| {
                batches(SearchBatch {
                    dir: dir.clone(),
                    hits,
                });
            };
            let pending = Batches::new(send, BATCH, BATCH_WAIT);
            let done = AtomicBool::new(false);
            // Hits found just after a batch went wait for the next to be found, or for this
            // tick: none waits longer than BATCH_WAIT.
            let summary = std::thread::scope(|s| {
                let ticker = s.spawn(|| {
                    while !done.load(Ordering::Relaxed) {
                        std::thread::park_timeout(BATCH_WAIT);
                        pending.flush();
                    }
                });
                let summary =
                    crate::search::search_runs(&d, &query, &cancel, &|hits| pending.push(hits));
                done.store(true, Ordering::Relaxed);
                ticker.thread().unpark();
                summary
            })?;
            pending.flush();
            total.merge(summary);
            if total.truncated || total.cancelled {
                break;
            }
        }
        Ok(total)
    }

    /// Stops the running search between two files.
    pub fn search_cancel(&self, _: ()) -> Res<c::search_cancel::Response> {
        self.start_search().store(true, Ordering::Relaxed);
        Ok(())
    }

    /// The directories shown and the threshold, and what this front end may do.
    pub fn settings(&self, _: ()) -> Res<c::settings::Response> {
        Ok(self.current())
    }
}

/// A front end's apply running, until dropped.
struct Applying<'a>(&'a AtomicBool);

impl<'a> Applying<'a> {
    /// `None` while another apply runs.
    fn start(running: &'a AtomicBool) -> Option<Self> {
        (!running.swap(true, Ordering::AcqRel)).then_some(Self(running))
    }
}

impl Drop for Applying<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Allowed;
    use crate::wire::DirsSource;

    #[test]
    fn a_second_apply_while_one_runs_is_refused_and_keeps_its_plan() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_string_lossy().into_owned();
        let settings = crate::service::settings(vec![root.clone()], DirsSource::Cli, 20_480);
        let svc = Service::new(settings, Allowed::ALL);
        // A plan shown (set here: planning reads the user's config folder).
        let policy: gc::GcPolicy = serde_json::from_value(serde_json::json!({})).unwrap();
        let plan = Some((root.clone(), policy, gc::GcReport::default()));
        *super::super::lock(&svc.gc_plan) = plan;
        let running = Applying::start(&svc.gc_applying).expect("none running");
        let apply = |dir: &str| {
            let req = c::gc_apply::Request {
                dir: dir.to_owned(),
            };
            svc.gc_apply(req, Box::new(|_| {})).unwrap_err()
        };
        assert_eq!(apply(&root).code, ErrorCode::Busy);
        assert!(super::super::lock(&svc.gc_plan).is_some(), "the plan stays");
        drop(running);
        assert!(
            Applying::start(&svc.gc_applying).is_some(),
            "done: another may run"
        );
        // An apply for another directory than the plan's is refused; the plan stays too.
        assert_eq!(apply("/elsewhere").code, ErrorCode::Invalid);
        assert!(super::super::lock(&svc.gc_plan).is_some(), "the plan stays");
    }
}
