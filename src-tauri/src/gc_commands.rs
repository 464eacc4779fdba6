//! Storage figures, garbage collection and pins: each command a call into the core's `gc`.

use crate::commands::{blocking, Res};
use crate::state::AppState;
use mission_control::gc::{self};
use mission_control::pins::Pins;
use mission_control::runs::now_ms;
use mission_control::wire::command as c;
use mission_control::{Error, ErrorCode};
use std::sync::atomic::Ordering;
use tauri::ipc::Channel;
use tauri::{AppHandle, State};

/// Where the value bytes are: per run, per tool, per age, orphans.
#[tauri::command]
pub async fn storage(app: AppHandle, req: c::storage::Request) -> Res<c::storage::Response> {
    blocking(app, move |state, _| {
        let d = state.runs_dir(&req.dir)?;
        let pins = Pins::load_in(d.config_dir())?;
        gc::storage(&d, &pins, now_ms())
    })
    .await
}

/// Plans a collection; the plan is kept so that an apply deletes exactly what was shown.
#[tauri::command]
pub async fn gc_plan(app: AppHandle, req: c::gc_plan::Request) -> Res<c::gc_plan::Response> {
    blocking(app, move |state, _| {
        let d = state.runs_dir(&req.dir)?;
        let pins = Pins::load_in(d.config_dir())?;
        let plan = gc::plan(&d, &req.policy, &pins, now_ms())?;
        *state.gc_plan.lock().expect("gc plan lock") = Some((req.dir, req.policy, plan.clone()));
        Ok(plan)
    })
    .await
}

/// Applies the plan last shown for `dir`, reporting progress on `channel` (ordered).
#[tauri::command]
pub async fn gc_apply(
    app: AppHandle,
    req: c::gc_apply::Request,
    channel: Channel<c::gc_apply::Stream>,
) -> Res<c::gc_apply::Response> {
    blocking(app, move |state, _| {
        let planned = state.gc_plan.lock().expect("gc plan lock").take();
        let Some((planned_dir, policy, plan)) = planned else {
            return Err(Error::new(
                ErrorCode::Invalid,
                "plan first: there is no plan to apply",
            ));
        };
        if planned_dir != req.dir {
            let message = "the plan was made for another runs directory";
            return Err(Error::new(ErrorCode::Invalid, message));
        }
        let d = state.runs_dir(&req.dir)?;
        state.gc_cancel.store(false, Ordering::Relaxed);
        let report = gc::apply(&d, &plan, &policy, now_ms(), &state.gc_cancel, |p| {
            let _ = channel.send(p);
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
pub async fn set_pinned(
    app: AppHandle,
    req: c::set_pinned::Request,
) -> Res<c::set_pinned::Response> {
    blocking(app, move |state, _| {
        let d = state.runs_dir(&req.dir)?;
        let mut pins = Pins::load_in(d.config_dir())?;
        pins.set(d.root(), &req.run, req.pinned)
    })
    .await
}

/// The pinned runs of `dir`.
#[tauri::command]
pub async fn pinned(app: AppHandle, req: c::pinned::Request) -> Res<c::pinned::Response> {
    blocking(app, move |state, _| {
        let d = state.runs_dir(&req.dir)?;
        Ok(Pins::load_in(d.config_dir())?.list(d.root()))
    })
    .await
}
