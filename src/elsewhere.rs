//! Hooks a runs directory registers for the rest of the process when its bytes are not all on
//! this disk (a mirror of object storage, `crate::remote`): who reads a value file's middle,
//! who keeps its pins, who deletes what GC collects. A local directory registers none, and its
//! every lookup is one atomic load.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// Hooks of type `T`, each for the files under one folder.
pub(crate) struct ByRoot<T: ?Sized> {
    any: AtomicBool,
    hooks: RwLock<Vec<(PathBuf, Arc<T>)>>,
}

impl<T: ?Sized> ByRoot<T> {
    pub(crate) const fn new() -> Self {
        Self {
            any: AtomicBool::new(false),
            hooks: RwLock::new(Vec::new()),
        }
    }

    /// Registers `hook` for the files under `root`, replacing one registered before.
    pub(crate) fn set(&self, root: PathBuf, hook: Arc<T>) {
        let mut hooks = self.hooks.write().unwrap_or_else(|e| e.into_inner());
        hooks.retain(|(r, _)| *r != root);
        hooks.push((root, hook));
        self.any.store(true, Ordering::Release);
    }

    /// The hook for `path`, a file or folder under (or at) a registered root.
    pub(crate) fn under(&self, path: &Path) -> Option<Arc<T>> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        let hooks = self.hooks.read().unwrap_or_else(|e| e.into_inner());
        hooks
            .iter()
            .find(|(root, _)| path.starts_with(root))
            .map(|(_, h)| h.clone())
    }

    /// Every registered root with its hook.
    pub(crate) fn all(&self) -> Vec<(PathBuf, Arc<T>)> {
        if !self.any.load(Ordering::Acquire) {
            return Vec::new();
        }
        self.hooks.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
