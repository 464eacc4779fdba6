//! The app's commands: each one a call into the core, run off the main thread so the window
//! never blocks. Their names and types are the core's command contract
//! ([`mission_control::wire::command`]); errors cross as `{code, message}`.

use crate::live::{change_sink, update_sink, Live};
use crate::state::{AppState, Opened};
use mission_control::wire::command as c;
use mission_control::wire::ResultRef;
use mission_control::{Error, ErrorCode};
use std::sync::Arc;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

pub type Res<T> = Result<T, Error>;

/// Runs `f` on the blocking pool with the app state: commands that read files (or wait for a
/// lock the watcher holds while it reads) never hold up an async runtime worker.
pub async fn blocking<T: Send + 'static>(
    app: AppHandle,
    f: impl FnOnce(&AppState, &Live) -> Res<T> + Send + 'static,
) -> Res<T> {
    tauri::async_runtime::spawn_blocking(move || f(&app.state::<AppState>(), &app.state::<Live>()))
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("background task failed: {e}")))?
}

#[tauri::command]
pub fn settings(state: State<'_, AppState>) -> c::settings::Response {
    state.settings()
}

/// Shows `dirs` from now on and remembers them for the next start.
#[tauri::command]
pub async fn set_runs_dirs(
    app: AppHandle,
    req: c::set_runs_dirs::Request,
) -> Res<c::set_runs_dirs::Response> {
    blocking(app, move |state, live| state.set_runs_dirs(req.dirs, live)).await
}

/// The system folder picker; `None` when the user cancels.
#[tauri::command]
pub async fn pick_runs_dir(app: AppHandle) -> Res<c::pick_runs_dir::Response> {
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
pub async fn list_runs(app: AppHandle, req: c::list_runs::Request) -> Res<c::list_runs::Response> {
    blocking(app, move |state, live| {
        state.forget_values();
        let dirs = state.settings().runs_dirs;
        Ok(live.list(&dirs, req.reread, |d| state.runs_dir(d)))
    })
    .await
}

#[tauri::command]
pub async fn run_detail(
    app: AppHandle,
    req: c::run_detail::Request,
) -> Res<c::run_detail::Response> {
    blocking(app, move |state, _| {
        state.runs_dir(&req.dir)?.detail(&req.run)
    })
    .await
}

/// The result opened for the compare view, kept open (its line index built once) while the
/// user scrolls it.
fn opened(state: &AppState, r: &ResultRef) -> Res<Arc<Opened>> {
    if let Some(hit) = state.cached(r) {
        return Ok(hit);
    }
    let (info, value) = state.runs_dir(&r.dir)?.open_value(&r.run, &r.call)?;
    let opened = Arc::new(Opened::new(info, value));
    state.remember(r.clone(), opened.clone());
    Ok(opened)
}

/// Opens a result for the compare view: its figures, its stub, and its full text indexed.
#[tauri::command]
pub async fn open_value(
    app: AppHandle,
    req: c::open_value::Request,
) -> Res<c::open_value::Response> {
    blocking(app, move |state, _| Ok(opened(state, &req)?.info())).await
}

/// Compares every byte of a value opened `verified: sampled` with the transcript: the UI asks
/// once the value is painted, and shows the verdict when it comes.
#[tauri::command]
pub async fn verify_value(
    app: AppHandle,
    req: c::verify_value::Request,
) -> Res<c::verify_value::Response> {
    blocking(app, move |state, _| {
        let verdict = state
            .runs_dir(&req.dir)?
            .verify_value(&req.run, &req.call)?;
        if let Some(o) = state.cached(&req) {
            o.settle(&verdict);
        }
        Ok(verdict)
    })
    .await
}

/// One page of the full text, with true line numbers.
#[tauri::command]
pub async fn value_lines(
    app: AppHandle,
    req: c::value_lines::Request,
) -> Res<c::value_lines::Response> {
    blocking(app, move |state, _| {
        let o = opened(state, &req.r)?;
        let page = o.value.page(req.first, req.count);
        page.map_err(|e| Error::io("reading the value", &e))
    })
    .await
}

/// Lines `first..=last` as text, for the clipboard (at most 16 MiB).
#[tauri::command]
pub async fn value_text(
    app: AppHandle,
    req: c::value_text::Request,
) -> Res<c::value_text::Response> {
    blocking(app, move |state, _| {
        let o = opened(state, &req.r)?;
        let text = o.value.text_of(req.first, req.last, 16 << 20);
        text.map_err(|e| Error::io("reading the value", &e))
    })
    .await
}

/// What `peek_value` returns for this request, exactly as the model would get it: the core's
/// one peek, which `mctl peek` calls too (a stray value file included).
#[tauri::command]
pub async fn peek_value(
    app: AppHandle,
    req: c::peek_value::Request,
) -> Res<c::peek_value::Response> {
    blocking(app, move |state, _| {
        let r = &req.r;
        state.runs_dir(&r.dir)?.peek(&r.run, &r.call, &req.request)
    })
    .await
}

/// Shows the value file in the system's file manager.
#[tauri::command]
pub async fn reveal_value(
    app: AppHandle,
    req: c::reveal_value::Request,
) -> Res<c::reveal_value::Response> {
    let handle = app.clone();
    let path = blocking(app, move |state, _| {
        let o = opened(state, &req)?;
        o.info()
            .value_path
            .ok_or_else(|| Error::new(ErrorCode::UnknownCall, "this result has no value file"))
    })
    .await?;
    use tauri_plugin_opener::OpenerExt;
    handle
        .opener()
        .reveal_item_in_dir(path)
        .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))
}

/// Every change in the runs directories shown, in order, from now on.
#[tauri::command]
pub fn watch_changes(live: State<'_, Live>, channel: Channel<c::watch_changes::Stream>) {
    live.subscribe(change_sink(channel));
}

/// Follows the open run: its new timeline entries after line `shown`, and its figures.
#[tauri::command]
pub async fn follow_run(
    app: AppHandle,
    req: c::follow_run::Request,
    channel: Channel<c::follow_run::Stream>,
) -> Res<c::follow_run::Response> {
    blocking(app, move |state, live| {
        state.runs_dir(&req.dir)?;
        let sink = update_sink(channel);
        live.follow_from(req.dir, req.run, req.shown, req.bytes, req.token, sink)
    })
    .await
}

/// Ends follow `token` (a newer follow goes on). On the blocking pool: it waits for a read of
/// the followed run in progress.
#[tauri::command]
pub async fn unfollow_run(
    app: AppHandle,
    req: c::unfollow_run::Request,
) -> Res<c::unfollow_run::Response> {
    blocking(app, move |_, live| {
        live.unfollow(req.token);
        Ok(())
    })
    .await
}

/// The runs named, as they stand now (from the watcher's models when it has them).
#[tauri::command]
pub async fn run_rows(app: AppHandle, req: c::run_rows::Request) -> Res<c::run_rows::Response> {
    blocking(app, move |state, live| {
        live.rows(req.runs, |d| state.runs_dir(d))
    })
    .await
}
