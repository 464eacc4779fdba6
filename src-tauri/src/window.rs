//! The window's size and place: fitted to the screen on the first start, then as the user left
//! it (tauri-plugin-window-state keeps it in the app's config directory). The plugin writes its
//! file when the app exits; a move or a resize is also written a moment after it ends, so that
//! an app that is killed rather than closed still starts where it was left.

use std::sync::mpsc;
use std::time::Duration;
use tauri::{LogicalPosition, LogicalSize, Manager, WebviewWindow, WindowEvent, Wry};
use tauri_plugin_window_state::{AppHandleExt, StateFlags, DEFAULT_FILENAME};

/// What is remembered: size, position, maximized. Not whether it was visible or decorated.
const REMEMBERED: StateFlags = StateFlags::SIZE
    .union(StateFlags::POSITION)
    .union(StateFlags::MAXIMIZED);

/// How long after the last move or resize the state is written.
const SETTLE: Duration = Duration::from_millis(400);

pub fn plugin() -> tauri::plugin::TauriPlugin<Wry> {
    tauri_plugin_window_state::Builder::new()
        .with_state_flags(REMEMBERED)
        .build()
}

/// Called once the main window exists: fits it to the screen when no state was saved yet, and
/// writes the state again whenever a move or resize settles.
pub fn manage(window: &WebviewWindow<Wry>) {
    let app = window.app_handle().clone();
    let saved =
        (app.path().app_config_dir().ok()).is_some_and(|d| d.join(DEFAULT_FILENAME).exists());
    if !saved {
        match fit_to_screen(window) {
            Ok(true) => {}
            Ok(false) => tracing::info!("no screen to fit the window to: its configured size kept"),
            Err(e) => tracing::info!(error = %e, "could not fit the window to the screen"),
        }
    }
    // One thread waits for moves and resizes to settle; the save itself runs on the main
    // thread, where the plugin's own handlers take its lock (saving elsewhere would hold that
    // lock while asking the main thread for the window's geometry).
    let (settled, events) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        while events.recv().is_ok() {
            // Only the last event of a drag writes the file.
            while events.recv_timeout(SETTLE).is_ok() {}
            let handle = app.clone();
            let _ = app.run_on_main_thread(move || {
                if let Err(e) = handle.save_window_state(REMEMBERED) {
                    tracing::debug!(error = %e, "could not save the window's state");
                }
            });
        }
    });
    window.on_window_event(move |event| {
        if matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
            let _ = settled.send(());
        }
    });
}

/// The configured size (1440×900), or the screen's work area where that is smaller, centred in
/// it. The window may not be laid out yet when this runs (its size reads 0), so the size comes
/// from the configuration and the place is worked out here rather than by `center`. Nor may it
/// be on a screen yet (`current_monitor` then answers none), so the primary screen, or the first
/// one, stands in. False when there is no screen at all.
fn fit_to_screen(window: &WebviewWindow<Wry>) -> tauri::Result<bool> {
    let monitor = match window.current_monitor()? {
        Some(m) => Some(m),
        None => match window.primary_monitor()? {
            Some(m) => Some(m),
            None => window.available_monitors()?.into_iter().next(),
        },
    };
    let Some(monitor) = monitor else {
        return Ok(false);
    };
    let scale = monitor.scale_factor();
    let area = monitor.work_area();
    let (origin, room) = (
        area.position.to_logical::<f64>(scale),
        area.size.to_logical::<f64>(scale),
    );
    let config = window.app_handle().config();
    let wanted = (config.app.windows.iter())
        .find(|w| w.label == window.label())
        .map_or((1440.0, 900.0), |w| (w.width, w.height));
    let (w, h) = (wanted.0.min(room.width), wanted.1.min(room.height));
    window.set_size(LogicalSize::new(w, h))?;
    window.set_position(LogicalPosition::new(
        origin.x + (room.width - w) / 2.0,
        origin.y + (room.height - h) / 2.0,
    ))?;
    tracing::info!(width = w, height = h, "the window fitted to the screen");
    Ok(true)
}
