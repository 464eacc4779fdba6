//! The app's commands: each one a call into the core, run off the main thread so the window
//! never blocks. Errors cross as `{code, message}` ([`mission_control::Error`]).

use crate::live::Live;
use crate::state::{AppState, Opened};
use mission_control::gc::{self, GcPolicy, GcReport, Progress, StorageStats};
use mission_control::pins::Pins;
use mission_control::retained::open::LinesPage;
use mission_control::retained::{peek, Peek, PeekRequest};
use mission_control::runs::layout::is_valid_run_id;
use mission_control::runs::now_ms;
use mission_control::runs::RunDetail;
use mission_control::wire::{DirStatus, DirsSource, ResultRef, RunList, RunRow, Settings};
use mission_control::wire::{RunKey, RunPatch, RunUpdate};
use mission_control::{Error, ErrorCode};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

type Res<T> = Result<T, Error>;

/// Runs `f` on the blocking pool with the app state.
async fn blocking<T: Send + 'static>(
    app: AppHandle,
    f: impl FnOnce(&AppState) -> Res<T> + Send + 'static,
) -> Res<T> {
    tauri::async_runtime::spawn_blocking(move || f(&app.state::<AppState>()))
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("background task failed: {e}")))?
}

#[tauri::command]
pub fn settings(state: State<'_, AppState>) -> Settings {
    state.settings()
}

/// Shows `dirs` from now on and remembers them for the next start.
#[tauri::command]
pub fn set_runs_dirs(
    state: State<'_, AppState>,
    live: State<'_, Live>,
    dirs: Vec<String>,
) -> Res<Settings> {
    let dirs: Vec<String> = dirs.into_iter().filter(|d| !d.trim().is_empty()).collect();
    if let Some(config) = &state.config_dir {
        crate::settings::save(config, &dirs).map_err(|e| Error::io("saving settings", &e))?;
    }
    let mut settings = state.settings.lock().expect("settings lock");
    live.start(&dirs, settings.threshold);
    settings.runs_dirs = dirs;
    settings.source = DirsSource::Saved;
    state.forget_values();
    Ok(settings.clone())
}

/// The system folder picker; `None` when the user cancels.
#[tauri::command]
pub async fn pick_runs_dir(app: AppHandle) -> Res<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let picked = tauri::async_runtime::spawn_blocking(move || {
        app.dialog()
            .file()
            .set_title("Choose a runs directory")
            .blocking_pick_folder()
    })
    .await
    .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))?;
    Ok(picked
        .and_then(|p| p.into_path().ok())
        .map(|p| p.to_string_lossy().into_owned()))
}

#[tauri::command]
pub async fn list_runs(app: AppHandle, reread: bool) -> Res<RunList> {
    let handle = app.clone();
    blocking(app, move |state| {
        state.forget_values();
        let settings = state.settings();
        let mut list = RunList {
            dirs: Vec::new(),
            runs: Vec::new(),
        };
        // From the watcher's run models, unless the user asked to read everything again.
        let watched = if reread {
            vec![None; settings.runs_dirs.len()]
        } else {
            handle.state::<Live>().list(&settings.runs_dirs)
        };
        for ((i, path), watched) in settings.runs_dirs.iter().enumerate().zip(watched) {
            let listed = match watched {
                Some(runs) => Ok(runs),
                None => state.runs_dir(path).and_then(|d| d.list()),
            };
            let (runs, error) = match listed {
                Ok(runs) => (runs, None),
                Err(e) => (Vec::new(), Some(e.message)),
            };
            list.dirs.push(DirStatus {
                path: path.clone(),
                error,
                runs: runs.len() as u64,
            });
            list.runs
                .extend(runs.into_iter().map(|run| RunRow { dir: i as u32, run }));
        }
        Ok(list)
    })
    .await
}

#[tauri::command]
pub async fn run_detail(app: AppHandle, dir: String, run: String) -> Res<RunDetail> {
    blocking(app, move |state| state.runs_dir(&dir)?.detail(&run)).await
}

fn opened(state: &AppState, r: &ResultRef) -> Res<Arc<Opened>> {
    if let Some(hit) = state.cached(r) {
        return Ok(hit);
    }
    let (info, value) = state.runs_dir(&r.dir)?.open_value(&r.run, &r.call)?;
    let opened = Arc::new(Opened { info, value });
    state.remember(r.clone(), opened.clone());
    Ok(opened)
}

/// Opens a result for the compare view: its figures, its stub, and its full text indexed.
#[tauri::command]
pub async fn open_value(app: AppHandle, r: ResultRef) -> Res<mission_control::wire::ValueInfo> {
    blocking(app, move |state| Ok(opened(state, &r)?.info.clone())).await
}

/// One page of the full text, with true line numbers.
#[tauri::command]
pub async fn value_lines(app: AppHandle, r: ResultRef, first: u64, count: u64) -> Res<LinesPage> {
    blocking(app, move |state| {
        let o = opened(state, &r)?;
        o.value
            .page(first, count)
            .map_err(|e| Error::io("reading the value", &e))
    })
    .await
}

/// Lines `first..=last` as text, for the clipboard (at most 16 MiB).
#[tauri::command]
pub async fn value_text(app: AppHandle, r: ResultRef, first: u64, last: u64) -> Res<String> {
    blocking(app, move |state| {
        let o = opened(state, &r)?;
        o.value
            .text_of(first, last, 16 << 20)
            .map_err(|e| Error::io("reading the value", &e))
    })
    .await
}

/// What `peek_value` returns for this request, exactly as the model would get it.
#[tauri::command]
pub async fn peek_value(app: AppHandle, r: ResultRef, request: PeekRequest) -> Res<Peek> {
    blocking(app, move |state| {
        let o = opened(state, &r)?;
        peek(&o.info.value_id, &o.value.text, &o.value.index, &request)
            .map_err(|e| Error::new(ErrorCode::Peek, e.to_string()))
    })
    .await
}

/// Shows the value file in the system's file manager.
#[tauri::command]
pub async fn reveal_value(app: AppHandle, r: ResultRef) -> Res<()> {
    let handle = app.clone();
    let path = blocking(app, move |state| {
        let o = opened(state, &r)?;
        o.info
            .value_path
            .clone()
            .ok_or_else(|| Error::new(ErrorCode::UnknownCall, "this result has no value file"))
    })
    .await?;
    use tauri_plugin_opener::OpenerExt;
    handle
        .opener()
        .reveal_item_in_dir(path)
        .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))
}

/// Where the value bytes are: per run, per tool, per age, orphans.
#[tauri::command]
pub async fn storage(app: AppHandle, dir: String) -> Res<StorageStats> {
    blocking(app, move |state| {
        let d = state.runs_dir(&dir)?;
        let pins = Pins::load_in(d.config_dir())?;
        gc::storage(&d, &pins, now_ms())
    })
    .await
}

/// Plans a collection; the plan is kept so that an apply deletes exactly what was shown.
#[tauri::command]
pub async fn gc_plan(app: AppHandle, dir: String, policy: GcPolicy) -> Res<GcReport> {
    blocking(app, move |state| {
        let d = state.runs_dir(&dir)?;
        let pins = Pins::load_in(d.config_dir())?;
        let plan = gc::plan(&d, &policy, &pins, now_ms())?;
        *state.gc_plan.lock().expect("gc plan lock") = Some((dir, policy, plan.clone()));
        Ok(plan)
    })
    .await
}

/// Applies the plan last shown for `dir`, reporting progress on `progress` (ordered).
#[tauri::command]
pub async fn gc_apply(app: AppHandle, dir: String, progress: Channel<Progress>) -> Res<GcReport> {
    blocking(app, move |state| {
        let (planned_dir, policy, plan) = state
            .gc_plan
            .lock()
            .expect("gc plan lock")
            .take()
            .ok_or_else(|| {
                Error::new(ErrorCode::Invalid, "plan first: there is no plan to apply")
            })?;
        if planned_dir != dir {
            return Err(Error::new(
                ErrorCode::Invalid,
                "the plan was made for another runs directory",
            ));
        }
        let d = state.runs_dir(&dir)?;
        state.gc_cancel.store(false, Ordering::Relaxed);
        let report = gc::apply(&d, &plan, &policy, now_ms(), &state.gc_cancel, |p| {
            let _ = progress.send(p);
        });
        state.forget_values();
        report
    })
    .await
}

/// Stops a running apply between two files.
#[tauri::command]
pub fn gc_cancel(state: State<'_, AppState>) {
    state.gc_cancel.store(true, Ordering::Relaxed);
}

/// Pins or unpins a run (shared with `mctl pin`).
#[tauri::command]
pub async fn set_pinned(app: AppHandle, dir: String, run: String, pinned: bool) -> Res<bool> {
    blocking(app, move |state| {
        let d = state.runs_dir(&dir)?;
        let mut pins = Pins::load_in(d.config_dir())?;
        pins.set(d.root(), &run, pinned)
    })
    .await
}

/// The pinned runs of `dir`.
#[tauri::command]
pub async fn pinned(app: AppHandle, dir: String) -> Res<Vec<String>> {
    blocking(app, move |state| {
        let d = state.runs_dir(&dir)?;
        Ok(Pins::load_in(d.config_dir())?.list(d.root()))
    })
    .await
}

/// Every change in the runs directories shown, in order, from now on.
#[tauri::command]
pub fn watch_changes(live: State<'_, Live>, changes: Channel<mission_control::watch::Change>) {
    live.subscribe(changes);
}

/// Follows the open run: its new timeline entries after line `shown`, and its figures. Reading
/// the transcript up to where the view is happens off the main thread.
#[tauri::command]
pub async fn follow_run(
    app: AppHandle,
    dir: String,
    run: String,
    shown: u64,
    token: u64,
    updates: Channel<RunUpdate>,
) -> Res<()> {
    let handle = app.clone();
    blocking(app, move |state| {
        state.runs_dir(&dir)?;
        // A name like `../x` is no run: nothing outside the directory is read.
        if !is_valid_run_id(&run) {
            let message = format!("{run:?} is not a run id");
            return Err(Error::new(ErrorCode::UnknownRun, message));
        }
        handle
            .state::<Live>()
            .follow(dir, run, shown, token, updates);
        Ok(())
    })
    .await
}

/// Ends follow `token` (the token given to `follow_run`; a newer follow goes on). Async: it may
/// wait for the follower, which can be reading a run again, and must not hold up the window.
#[tauri::command]
pub async fn unfollow_run(live: State<'_, Live>, token: u64) -> Res<()> {
    live.unfollow(token);
    Ok(())
}

/// The runs named, as they stand now: from the watcher's run models (no transcript read
/// again) or, while it is still on its first scan, read from disk.
#[tauri::command]
pub async fn run_rows(app: AppHandle, runs: Vec<RunKey>) -> Res<Vec<RunPatch>> {
    let handle = app.clone();
    blocking(app, move |state| {
        let live = handle.state::<Live>();
        // A key of a directory no longer shown (removed meanwhile) is left out, not an error.
        let mut patches = Vec::with_capacity(runs.len());
        for key in runs {
            let run = match live.run(&key.dir, &key.run) {
                Some(known) => known,
                None => match state.runs_dir(&key.dir) {
                    Ok(dir) => dir.list_one(&key.run)?,
                    Err(_) => continue,
                },
            };
            patches.push(RunPatch {
                dir: key.dir,
                id: key.run,
                run,
            });
        }
        Ok(patches)
    })
    .await
}
