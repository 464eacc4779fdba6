//! Locks shared by threads of one process.

use std::sync::{Mutex, MutexGuard};

/// The guard of `m`, taken even when a thread panicked while holding it: what a lock here
/// guards is plain data (lists, maps, buffers) that a panic leaves whole, and a front end goes
/// on showing runs rather than failing every later call.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
