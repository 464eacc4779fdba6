//! The app's commands: each one the core service's handler of the same name
//! ([`mission_control::service::Service`]), run off the main thread so the window never blocks.
//! Their names and types are the core's command contract ([`mission_control::wire::command`]);
//! errors cross as `{code, message}`. Only what needs the desktop (the folder picker, the file
//! manager, the save dialog) is written here.

use crate::state::AppState;
use mission_control::service::{Service, Sink};
use mission_control::wire::command as c;
use mission_control::{Error, ErrorCode};
use serde::Serialize;
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

pub type Res<T> = Result<T, Error>;

/// Runs `f` on the blocking pool with the window's service: commands that read files (or wait
/// for a lock the watcher holds while it reads) never hold up an async runtime worker.
async fn blocking<T: Send + 'static>(
    app: AppHandle,
    f: impl FnOnce(&Service) -> Res<T> + Send + 'static,
) -> Res<T> {
    tauri::async_runtime::spawn_blocking(move || f(&app.state::<AppState>().service))
        .await
        .map_err(|e| Error::new(ErrorCode::Io, format!("background task failed: {e}")))?
}

/// Sends a command's streamed items on the window's channel, in order.
fn sink<T: Serialize + Clone + Send + Sync + 'static>(channel: Channel<T>) -> Sink<T> {
    // A closed window's channel: nothing to tell anymore.
    Box::new(move |item| {
        let _ = channel.send(item);
    })
}

/// Declares commands that pass their request to the service's handler of the same name.
macro_rules! served {
    ($($name:ident),* $(,)?) => {$(
        #[tauri::command]
        pub async fn $name(app: AppHandle, req: c::$name::Request) -> Res<c::$name::Response> {
            blocking(app, move |s| s.$name(req)).await
        }
    )*};
}

/// Declares commands that also stream items on a channel.
macro_rules! streamed {
    ($($name:ident),* $(,)?) => {$(
        #[tauri::command]
        pub async fn $name(
            app: AppHandle,
            req: c::$name::Request,
            channel: Channel<c::$name::Stream>,
        ) -> Res<c::$name::Response> {
            blocking(app, move |s| s.$name(req, sink(channel))).await
        }
    )*};
}

served!(
    set_runs_dirs,
    save_settings,
    list_runs,
    run_detail,
    open_value,
    verify_value,
    value_lines,
    value_text,
    peek_value,
    storage,
    gc_plan,
    set_pinned,
    pinned,
    unfollow_run,
    run_rows,
    coverage,
    what_if,
    resume_preview,
    export_run,
    export_preview,
    diff_runs,
    diff_results,
);
streamed!(gc_apply, follow_run, search);

#[tauri::command]
pub fn settings(state: State<'_, AppState>) -> Res<c::settings::Response> {
    state.service.settings(())
}

/// How far the listings' reads have come (at once: it reads counters).
#[tauri::command]
pub fn scan_progress(state: State<'_, AppState>) -> Res<c::scan_progress::Response> {
    state.service.scan_progress(())
}

/// The first list is on screen (at once: it logs the time since the launch).
#[tauri::command]
pub fn list_painted(state: State<'_, AppState>) -> Res<c::list_painted::Response> {
    state.service.list_painted(())
}

/// Stops a running apply between two files (at once: it only sets a flag).
#[tauri::command]
pub fn gc_cancel(state: State<'_, AppState>) -> Res<c::gc_cancel::Response> {
    state.service.gc_cancel(())
}

/// Stops the running search between two files.
#[tauri::command]
pub fn search_cancel(state: State<'_, AppState>) -> Res<c::search_cancel::Response> {
    state.service.search_cancel(())
}

/// Every change in the runs directories shown, in order, from now on.
#[tauri::command]
pub fn watch_changes(
    state: State<'_, AppState>,
    channel: Channel<c::watch_changes::Stream>,
) -> Res<c::watch_changes::Response> {
    state.service.watch_changes((), sink(channel))
}

/// Asks where to save an export (the system's save dialog, `<run>.html` or `.md` proposed),
/// then writes it there; `None` when the user cancels.
#[tauri::command]
pub async fn save_export(
    app: AppHandle,
    req: c::save_export::Request,
) -> Res<c::save_export::Response> {
    use tauri_plugin_dialog::DialogExt;
    // Its figures first (made and counted, nothing kept): the file name comes from the run's
    // title.
    let asked = req.clone();
    let export = blocking(app.clone(), move |s| s.export_preview(asked)).await?;
    let ext = export.format.extension();
    // Where people keep what they save (not the directory the app was started in).
    let paths = app.path();
    let folder = (paths.download_dir().ok())
        .or_else(|| paths.document_dir().ok())
        .or_else(|| paths.home_dir().ok());
    let dialog = app.clone();
    let name = export.file_name.clone();
    let picked = tauri::async_runtime::spawn_blocking(move || {
        let mut file = dialog
            .dialog()
            .file()
            .set_title("Export the run")
            .set_file_name(name)
            .add_filter(ext, &[ext]);
        if let Some(folder) = folder.filter(|f| f.is_dir()) {
            file = file.set_directory(folder);
        }
        file.blocking_save_file()
    })
    .await
    .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))?;
    let Some(path) = picked.and_then(|p| p.into_path().ok()) else {
        return Ok(None);
    };
    // Written as it is made: a run with a value of hundreds of megabytes is never held whole.
    blocking(app, move |s| {
        s.export_file(&req, &path)?;
        Ok(Some(path.to_string_lossy().into_owned()))
    })
    .await
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

/// Shows the value file in the system's file manager.
#[tauri::command]
pub async fn reveal_value(
    app: AppHandle,
    req: c::reveal_value::Request,
) -> Res<c::reveal_value::Response> {
    let handle = app.clone();
    let path = blocking(app, move |s| {
        s.opened(&req)?
            .info()
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
