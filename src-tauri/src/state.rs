//! What the shell keeps: the core's [`Service`] for the window (its directories, live session,
//! opened values, GC plan and search), and where the settings are remembered.

use mission_control::service::Service;
use std::path::PathBuf;

pub struct AppState {
    pub service: Service,
    pub config_dir: Option<PathBuf>,
}
