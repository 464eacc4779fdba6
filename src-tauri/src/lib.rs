//! Mission Control's desktop shell: settings, a few commands that call the core, and the
//! window's safety rails. Everything that knows the runs-directory format is in the core.

mod commands;
mod logging;
mod settings;
mod state;
mod window;

use clap::Parser;
use mission_control::service::{Allowed, Service};
use state::AppState;
use tauri::Manager;

/// Starts the app; returns the process exit code.
pub fn main() -> i32 {
    // Set while no other thread runs (nothing has started one yet): read by WebKit as it starts.
    draw_without_compositing();
    // The start's steps are logged with the time since here (`app_setup`, `list_runs`, the
    // watch's first look): how long the launch took to its first list.
    mission_control::start_clock();
    let args = settings::Args::parse();
    // How many files are read at once: `$MCTL_JOBS`, as for `mctl`, else every core.
    if let Err(e) = mission_control::init_jobs(None) {
        eprintln!("mission-control: MCTL_JOBS: {e}");
        return 1;
    }
    if cfg!(target_os = "linux")
        && std::env::var_os("DISPLAY").is_none()
        && std::env::var_os("WAYLAND_DISPLAY").is_none()
    {
        eprintln!("mission-control: no display (neither DISPLAY nor WAYLAND_DISPLAY is set).");
        eprintln!("Use the command line instead, e.g. `mctl runs`, `mctl show RUN`, `mctl peek RUN CALL --query TEXT`.");
        return 1;
    }
    match builder(args).run(tauri::generate_context!()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mission-control: {e}");
            1
        }
    }
}

/// Has the window drawn without WebKit's accelerated compositing, unless
/// `WEBKIT_DISABLE_COMPOSITING_MODE` says otherwise (`0` keeps it). Lists and text need none of
/// it, and where there is no GPU (a virtual machine, a remote desktop, Xvfb) WebKit composites
/// every frame with a software renderer: the page at rest, a running run's duration ticking each
/// second, took 5 % of a core that way against 0.6 % without.
fn draw_without_compositing() {
    const SWITCH: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    if cfg!(target_os = "linux") && std::env::var_os(SWITCH).is_none() {
        std::env::set_var(SWITCH, "1");
    }
}

/// The app, without its context (tests build it with a mock context).
pub fn builder(args: settings::Args) -> tauri::Builder<tauri::Wry> {
    tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_opener::init())
        .plugin(navigation_guard())
        .plugin(window::plugin())
        .setup(move |app| {
            let log_dir = match app.path().app_log_dir() {
                Ok(dir) => logging::init(&dir).then_some(dir),
                Err(e) => {
                    eprintln!("mission-control: no log directory ({e}): no log file");
                    None
                }
            };
            let setup = tracing::info_span!("app_setup").entered();
            let config_dir = app.path().app_config_dir().ok();
            let mut settings = settings::resolve(&args, config_dir.as_deref());
            // The About box says where to look.
            settings.log_dir = log_dir.map(|d| d.to_string_lossy().into_owned());
            let mut service = Service::new(settings, Allowed::ALL);
            if let Some(dir) = &config_dir {
                service = service.with_settings_file(settings::file(dir));
            }
            // The list paints before the watcher's first look takes the cores.
            service.hold_first_look_for_paint();
            service.start();
            app.manage(AppState { service });
            if let Some(main) = app.get_webview_window("main") {
                window::manage(&main);
            }
            tracing::info!(
                since_start_ms = mission_control::since_start_ms(),
                "set up: the settings read, the watch started, the window made"
            );
            drop(setup);
            Ok(())
        })
        .invoke_handler(handlers())
}

fn handlers() -> impl Fn(tauri::ipc::Invoke<tauri::Wry>) -> bool + Send + Sync + 'static {
    tauri::generate_handler![
        commands::settings,
        commands::set_runs_dirs,
        commands::save_settings,
        commands::pick_runs_dir,
        commands::list_runs,
        commands::scan_progress,
        commands::list_painted,
        commands::run_detail,
        commands::open_value,
        commands::verify_value,
        commands::value_lines,
        commands::value_text,
        commands::peek_value,
        commands::reveal_value,
        commands::storage,
        commands::gc_plan,
        commands::gc_apply,
        commands::gc_cancel,
        commands::set_pinned,
        commands::pinned,
        commands::watch_changes,
        commands::follow_run,
        commands::unfollow_run,
        commands::run_rows,
        commands::coverage,
        commands::what_if,
        commands::resume_preview,
        commands::search,
        commands::search_cancel,
        commands::export_run,
        commands::export_preview,
        commands::diff_runs,
        commands::diff_results,
        commands::save_export,
    ]
}

/// Transcripts are untrusted: whatever a rendered link or a stray script tries, the window never
/// leaves the app's own pages.
fn navigation_guard() -> tauri::plugin::TauriPlugin<tauri::Wry> {
    tauri::plugin::Builder::new("navigation-guard")
        .on_navigation(|_, url| {
            let host = url.host_str();
            let own = (url.scheme() == "tauri" && host == Some("localhost"))
                || (url.scheme() == "http" && host == Some("tauri.localhost"))
                // The dev server, in development builds only.
                || (cfg!(not(feature = "custom-protocol"))
                    && url.scheme() == "http"
                    && host == Some("localhost")
                    && url.port() == Some(5173));
            if !own {
                eprintln!("mission-control: blocked navigation to {url}");
            }
            own
        })
        .build()
}

#[cfg(test)]
mod tests {
    /// The handlers registered are exactly the commands of the core's contract, which the UI's
    /// generated `Commands` map is made from: a command added on one side only fails here.
    #[test]
    fn every_contract_command_is_registered_and_nothing_else() {
        let source = include_str!("lib.rs");
        let start = source.find("generate_handler![").expect("the handler list");
        let end = start + source[start..].find(']').expect("its end");
        let mut registered: Vec<&str> = source[start..end]
            .split(',')
            .filter_map(|item| item.trim().rsplit("::").next())
            .filter(|name| !name.is_empty() && !name.contains('['))
            .collect();
        let mut contract: Vec<&str> = mission_control::wire::COMMANDS
            .iter()
            .map(|c| c.name)
            .collect();
        registered.sort_unstable();
        contract.sort_unstable();
        assert_eq!(registered, contract);
    }
}
