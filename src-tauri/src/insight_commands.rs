//! What retention did: peek coverage, the threshold what-if and the resume preview, each a call
//! into the core's `insights`.

use crate::commands::{blocking, Res};
use mission_control::insights::ErrorPattern;
use mission_control::wire::command as c;
use tauri::AppHandle;

/// What the model was shown of each value of a run (the default error pattern).
#[tauri::command]
pub async fn coverage(app: AppHandle, req: c::coverage::Request) -> Res<c::coverage::Response> {
    blocking(app, move |state, _| {
        let errors = ErrorPattern::default();
        state
            .runs_dir(&req.dir)?
            .coverage(&req.run, req.call.as_deref(), &errors)
    })
    .await
}

/// The threshold what-if of a runs directory (or one run).
#[tauri::command]
pub async fn what_if(app: AppHandle, req: c::what_if::Request) -> Res<c::what_if::Response> {
    blocking(app, move |state, _| {
        state
            .runs_dir(&req.dir)?
            .what_if(&req.thresholds, req.run.as_deref())
    })
    .await
}

/// The messages a resume of a run would replay, each cut for the view when asked.
#[tauri::command]
pub async fn resume_preview(
    app: AppHandle,
    req: c::resume_preview::Request,
) -> Res<c::resume_preview::Response> {
    blocking(app, move |state, _| {
        let mut preview =
            state
                .runs_dir(&req.dir)?
                .resume(&req.run, req.shape, req.without_values)?;
        if let Some(max) = req.max_content {
            preview.clip(max);
        }
        Ok(preview)
    })
    .await
}
