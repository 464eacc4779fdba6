//! Pinned runs: never collected. Shared by the CLI and the app through Mission Control's config
//! directory (`pins.json`), keyed by runs directory.

use crate::config::{config_dir, dir_key, write_atomic};
use crate::error::{Error, ErrorCode, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Clone)]
pub struct Pins {
    path: Option<PathBuf>,
    map: BTreeMap<String, BTreeSet<String>>,
}

impl Pins {
    /// The pins of this user (an empty set when none were saved yet).
    pub fn load() -> Result<Self> {
        Self::load_in(config_dir().as_deref())
    }

    /// The pins kept in `config` (Mission Control's config directory).
    pub fn load_in(config: Option<&Path>) -> Result<Self> {
        let path = config.map(|d| d.join("pins.json"));
        let map = match &path {
            Some(p) => match std::fs::read(p) {
                Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                    Error::new(ErrorCode::Io, format!("{} is not valid: {e}", p.display()))
                })?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
                Err(e) => return Err(Error::io(format!("reading {}", p.display()), &e)),
            },
            None => BTreeMap::new(),
        };
        Ok(Self { path, map })
    }

    pub fn is_pinned(&self, runs_dir: &Path, run: &str) -> bool {
        self.map
            .get(&dir_key(runs_dir))
            .is_some_and(|s| s.contains(run))
    }

    pub fn list(&self, runs_dir: &Path) -> Vec<String> {
        self.map
            .get(&dir_key(runs_dir))
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Pins or unpins `run`, and saves. Returns whether anything changed.
    pub fn set(&mut self, runs_dir: &Path, run: &str, pinned: bool) -> Result<bool> {
        let key = dir_key(runs_dir);
        let changed = if pinned {
            self.map.entry(key).or_default().insert(run.to_owned())
        } else {
            let removed = self.map.get_mut(&key).is_some_and(|s| s.remove(run));
            self.map.retain(|_, s| !s.is_empty());
            removed
        };
        if changed {
            let path = self
                .path
                .as_ref()
                .ok_or_else(|| Error::new(ErrorCode::Io, "no config directory to keep pins in"))?;
            let bytes = serde_json::to_vec_pretty(&self.map).expect("pins serialize");
            write_atomic(path, &bytes)
                .map_err(|e| Error::io(format!("saving {}", path.display()), &e))?;
        }
        Ok(changed)
    }
}
