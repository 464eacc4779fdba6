//! Pinned runs: never collected. Shared by the CLI and the app through Mission Control's config
//! directory (`pins.json`), keyed by runs directory; a runs directory mirrored from object
//! storage keeps its pins in its bucket instead ([`share_pins`]), so a team shares them.

use crate::config::{config_dir, dir_key, write_atomic};
use crate::elsewhere::ByRoot;
use crate::error::{Error, ErrorCode, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Pins kept somewhere shared rather than in the config directory (a bucket).
pub trait SharedPins: Send + Sync {
    /// The pinned runs, as they are now.
    fn load(&self) -> Result<BTreeSet<String>>;
    /// Pins or unpins `run` without losing a change another writer made meanwhile; returns
    /// whether anything changed and the pins after the change.
    fn change(&self, run: &str, pinned: bool) -> Result<(bool, BTreeSet<String>)>;
}

static SHARED: ByRoot<dyn SharedPins> = ByRoot::new();

/// From now on in this process, the pins of the runs directory at `root` are `shared`'s.
pub fn share_pins(root: &Path, shared: Arc<dyn SharedPins>) {
    SHARED.set(PathBuf::from(dir_key(root)), shared);
}

/// The pinned runs, per runs directory: GC never collects their values.
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
        let path = config.map(|d| d.join(PINS_FILE));
        let mut map = match &path {
            Some(p) => read_map(p)?,
            None => BTreeMap::new(),
        };
        overlay_shared(&mut map)?;
        Ok(Self { path, map })
    }

    /// Whether run `run` of `runs_dir` is pinned.
    pub fn is_pinned(&self, runs_dir: &Path, run: &str) -> bool {
        self.map
            .get(&dir_key(runs_dir))
            .is_some_and(|s| s.contains(run))
    }

    /// The pinned runs of `runs_dir`, to ask of many runs (its path is made canonical once).
    pub fn of_dir(&self, runs_dir: &Path) -> std::collections::HashSet<String> {
        self.map
            .get(&dir_key(runs_dir))
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The pinned runs of `runs_dir`, sorted.
    pub fn list(&self, runs_dir: &Path) -> Vec<String> {
        self.map
            .get(&dir_key(runs_dir))
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Pins or unpins `run`, and saves. Returns whether anything changed.
    ///
    /// The app and `mctl` may pin at the same moment: under an exclusive lock, the pins are read
    /// again from disk, changed and written, so neither change is lost. `self` then holds what
    /// is on disk.
    pub fn set(&mut self, runs_dir: &Path, run: &str, pinned: bool) -> Result<bool> {
        let key = dir_key(runs_dir);
        let shared = SHARED
            .all()
            .into_iter()
            .find(|(root, _)| root.as_os_str() == key.as_str());
        if let Some((_, shared)) = shared {
            let (changed, now) = shared.change(run, pinned)?;
            self.map.remove(&key);
            if !now.is_empty() {
                self.map.insert(key, now);
            }
            return Ok(changed);
        }
        let Some(path) = self.path.clone() else {
            // Nowhere to save: only a request that changes nothing can succeed.
            if change(&mut self.map, key, run, pinned) {
                return Err(Error::new(
                    ErrorCode::Io,
                    "no config directory to keep pins in",
                ));
            }
            return Ok(false);
        };
        let _lock = lock(&path)?;
        let mut map = read_map(&path)?;
        let changed = change(&mut map, key, run, pinned);
        if changed {
            let bytes = serde_json::to_vec_pretty(&map).expect("pins serialize");
            write_atomic(&path, &bytes)
                .map_err(|e| Error::io(format!("saving {}", path.display()), &e))?;
        }
        overlay_shared(&mut map)?;
        self.map = map;
        Ok(changed)
    }
}

/// `map` with the pins of every directory that keeps them elsewhere, as they are there now.
fn overlay_shared(map: &mut BTreeMap<String, BTreeSet<String>>) -> Result<()> {
    for (root, pins) in SHARED.all() {
        let key = root.to_string_lossy().into_owned();
        map.remove(&key);
        let set = pins.load()?;
        if !set.is_empty() {
            map.insert(key, set);
        }
    }
    Ok(())
}

const PINS_FILE: &str = "pins.json";

/// The pins saved at `path`; none when there is no such file.
fn read_map(path: &Path) -> Result<BTreeMap<String, BTreeSet<String>>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                ErrorCode::Io,
                format!("{} is not valid: {e}", path.display()),
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), &e)),
    }
}

/// Pins or unpins `run` of runs directory `key` in `map`; whether that changed anything.
fn change(
    map: &mut BTreeMap<String, BTreeSet<String>>,
    key: String,
    run: &str,
    pinned: bool,
) -> bool {
    if pinned {
        return map.entry(key).or_default().insert(run.to_owned());
    }
    let removed = map.get_mut(&key).is_some_and(|s| s.remove(run));
    map.retain(|_, s| !s.is_empty());
    removed
}

/// Holds `pins.lock` beside the pins file until dropped (or the process dies). Readers need no
/// lock: the file is replaced whole, by a rename.
fn lock(pins: &Path) -> Result<std::fs::File> {
    let path = pins.with_file_name("pins.lock");
    let file = crate::config::open_lock_file(&path)?;
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive) {
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                let e = std::io::Error::from(e);
                return Err(Error::io(format!("locking {}", path.display()), &e));
            }
            Ok(()) => return Ok(file),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_set_at_once_by_many_writers_are_all_kept() {
        const WRITERS: usize = 8;
        const EACH: usize = 4;
        let tmp = tempfile::tempdir().unwrap();
        let config = tmp.path().join("config");
        let runs = tmp.path().join("runs");
        std::fs::create_dir_all(&runs).unwrap();
        // Each writer loaded the pins before any was saved, as the app and `mctl` may. Every save
        // is fsynced, so the counts stay small: overlapping cycles are what the test needs.
        let writers: Vec<Pins> = (0..WRITERS)
            .map(|_| Pins::load_in(Some(&config)).unwrap())
            .collect();
        std::thread::scope(|s| {
            for (i, mut pins) in writers.into_iter().enumerate() {
                let runs = &runs;
                s.spawn(move || {
                    for j in 0..EACH {
                        assert!(pins.set(runs, &format!("run_{i}_{j}"), true).unwrap());
                    }
                });
            }
        });
        let pins = Pins::load_in(Some(&config)).unwrap();
        let want: BTreeSet<String> = (0..WRITERS)
            .flat_map(|i| (0..EACH).map(move |j| format!("run_{i}_{j}")))
            .collect();
        let got: BTreeSet<String> = pins.list(&runs).into_iter().collect();
        assert_eq!(got, want, "every pin is kept");
        // And unpinning at once loses no unpin either.
        std::thread::scope(|s| {
            for i in 0..WRITERS {
                let (runs, config) = (&runs, &config);
                s.spawn(move || {
                    let mut pins = Pins::load_in(Some(config)).unwrap();
                    for j in 0..EACH {
                        assert!(pins.set(runs, &format!("run_{i}_{j}"), false).unwrap());
                    }
                });
            }
        });
        assert!(Pins::load_in(Some(&config)).unwrap().list(&runs).is_empty());
    }

    #[test]
    fn a_set_sees_pins_saved_since_its_load() {
        let tmp = tempfile::tempdir().unwrap();
        let config = tmp.path().join("config");
        let mut app = Pins::load_in(Some(&config)).unwrap();
        let mut cli = Pins::load_in(Some(&config)).unwrap();
        assert!(cli.set(tmp.path(), "a", true).unwrap());
        assert!(app.set(tmp.path(), "b", true).unwrap());
        assert_eq!(app.list(tmp.path()), ["a", "b"]);
        assert!(
            !app.set(tmp.path(), "a", true).unwrap(),
            "already pinned on disk"
        );
    }
}

/// What `mctl pin` / `mctl unpin` did.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PinChange {
    /// Run id.
    pub run: String,
    /// Whether the run is pinned now.
    pub pinned: bool,
    /// False when the run was already so.
    pub changed: bool,
}
