//! What the shell keeps: the core's [`Service`] for the window (its directories, live session,
//! opened values, GC plan and search, and where its settings are saved).

use mission_control::service::Service;

pub struct AppState {
    pub service: Service,
}
