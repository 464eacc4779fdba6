//! Live updates: the core's live session, its changes and run updates forwarded to the window
//! on ordered channels. All the logic (follow tokens, the wait for the first scan, the list
//! merge) is in [`mission_control::watch::LiveSession`]; this is only the glue to Tauri.

use mission_control::watch::{Change, LiveSession, RunUpdate};
use tauri::ipc::Channel;

/// Sends changes on the window's channel.
pub fn change_sink(channel: Channel<Change>) -> mission_control::watch::ChangeSink {
    Box::new(move |change| {
        // A closed window's channel: nothing to tell anymore.
        let _ = channel.send(change);
    })
}

/// Sends a followed run's updates on the run view's channel.
pub fn update_sink(channel: Channel<RunUpdate>) -> mission_control::watch::UpdateSink {
    Box::new(move |update| {
        let _ = channel.send(update);
    })
}

/// The app's one live session.
pub type Live = LiveSession;
