//! What the shell keeps between commands: the settings, and the last few values opened in the
//! compare view (each with its line index, so scrolling a 200 MB value reads only its pages).

use mission_control::gc::{GcPolicy, GcReport};
use mission_control::retained::OpenValue;
use mission_control::runs::{RunOptions, RunsDir};
use mission_control::runs::{ValueInfo, ValueVerdict};
use mission_control::watch::LiveSession;
use mission_control::wire::{DirsSource, ResultRef, Settings};
use mission_control::{Error, ErrorCode};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// How many opened values stay indexed.
const OPEN_VALUES: usize = 8;

pub struct AppState {
    pub settings: Mutex<Settings>,
    pub config_dir: Option<PathBuf>,
    open: Mutex<VecDeque<(ResultRef, Arc<Opened>)>>,
    /// The last GC plan shown, per runs directory: an apply deletes only what it lists.
    pub gc_plan: Mutex<Option<(String, GcPolicy, GcReport)>>,
    /// Set to stop a running apply between two files.
    pub gc_cancel: Arc<AtomicBool>,
    /// The cancel flag of the search running (a new search sets it, then puts its own).
    pub search: Mutex<Arc<AtomicBool>>,
}

pub struct Opened {
    /// Its figures; `verified: sampled` until `verify_value` settles them.
    info: Mutex<ValueInfo>,
    pub value: OpenValue,
}

impl Opened {
    pub fn new(info: ValueInfo, value: OpenValue) -> Self {
        Self {
            info: Mutex::new(info),
            value,
        }
    }

    pub fn info(&self) -> ValueInfo {
        self.info.lock().expect("opened value lock").clone()
    }

    /// Takes the verdict of every byte: a value opened again shows it without checking again.
    pub fn settle(&self, verdict: &ValueVerdict) {
        let mut info = self.info.lock().expect("opened value lock");
        info.state = verdict.state;
        info.verified = verdict.verified;
        info.stub = verdict.stub.clone();
        info.context_bytes = verdict.context_bytes;
    }
}

impl AppState {
    pub fn new(settings: Settings, config_dir: Option<PathBuf>) -> Self {
        Self {
            settings: Mutex::new(settings),
            config_dir,
            open: Mutex::new(VecDeque::new()),
            gc_plan: Mutex::new(None),
            gc_cancel: Arc::new(AtomicBool::new(false)),
            search: Mutex::new(Arc::new(AtomicBool::new(false))),
        }
    }

    pub fn settings(&self) -> Settings {
        self.settings.lock().expect("settings lock").clone()
    }

    /// Shows `dirs` from now on (the live session watches them) and remembers them for the
    /// next start.
    pub fn set_runs_dirs(&self, dirs: Vec<String>, live: &LiveSession) -> Result<Settings, Error> {
        let dirs: Vec<String> = dirs.into_iter().filter(|d| !d.trim().is_empty()).collect();
        if let Some(config) = &self.config_dir {
            crate::settings::save(config, &dirs).map_err(|e| Error::io("saving settings", &e))?;
        }
        let mut settings = self.settings.lock().expect("settings lock");
        live.start(&dirs, settings.threshold);
        settings.runs_dirs = dirs;
        settings.source = DirsSource::Saved;
        self.forget_values();
        Ok(settings.clone())
    }

    /// The runs directory `dir`, which must be one the app shows: the webview cannot make the
    /// shell read anywhere else.
    pub fn runs_dir(&self, dir: &str) -> Result<RunsDir, Error> {
        let settings = self.settings();
        if !settings.runs_dirs.iter().any(|d| d == dir) {
            return Err(Error::new(
                ErrorCode::Invalid,
                format!("{dir} is not one of the runs directories shown"),
            ));
        }
        let opts = RunOptions {
            threshold: settings.threshold,
            ..RunOptions::default()
        };
        RunsDir::open(dir, opts)
    }

    pub fn cached(&self, r: &ResultRef) -> Option<Arc<Opened>> {
        let open = self.open.lock().expect("open values lock");
        open.iter().find(|(k, _)| k == r).map(|(_, v)| v.clone())
    }

    pub fn remember(&self, r: ResultRef, opened: Arc<Opened>) {
        let mut open = self.open.lock().expect("open values lock");
        open.retain(|(k, _)| k != &r);
        open.push_front((r, opened));
        open.truncate(OPEN_VALUES);
    }

    /// Forgets opened values (after a refresh: files may have changed).
    pub fn forget_values(&self) {
        self.open.lock().expect("open values lock").clear();
    }
}
