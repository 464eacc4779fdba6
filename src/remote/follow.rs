//! A bucket a front end shows while it runs (the desktop app's "Add bucket…", `mctl serve`,
//! `mctl watch`): its mirror kept in step in the background, a look every
//! `$MCTL_BUCKET_POLL` (10 s by default), and how the last look went, for the front end to say.
//!
//! The runs directory shown is the mirror's root: the live session watches it like any folder
//! and hears of what a look brings in as files appearing there. The status is kept for every
//! bucket followed in this process ([`followed`]), so a front end shows the bucket's URL in place
//! of the mirror's path, and why its last look failed.

use super::{Hydrate, Mirror, RemoteUrl};
use crate::sync::lock;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;
use ts_rs::TS;

/// How a bucket shown is being kept in step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BucketStatus {
    /// The bucket's URL, as the user gave it (`s3://BUCKET/PREFIX`): what a front end shows.
    pub url: String,
    /// The mirror's root: the runs directory the commands read (a path of `runsDirs`).
    pub root: String,
    /// True until the first look of this process ends: the list is still filling.
    pub looking: bool,
    /// When the last look that succeeded ended (ms since the epoch); `null` before one.
    pub looked_ms: Option<i64>,
    /// Why the last look failed (in words, without a credential); `null` when it did not.
    pub error: Option<String>,
}

/// What the follower thread and the front end share.
struct Shared {
    status: Mutex<BucketStatus>,
    /// Set when the bucket is no longer followed; the mirror's look stops fetching at it.
    stop: Arc<AtomicBool>,
}

/// Every bucket followed in this process (a dropped one goes when its weak reference does).
static FOLLOWED: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

/// The status of every bucket followed in this process, in the order they were first followed
/// (one no longer followed is left out, even while a look it started is ending).
pub fn followed() -> Vec<BucketStatus> {
    let mut all = lock(&FOLLOWED);
    all.retain(|w| w.strong_count() > 0);
    all.iter()
        .filter_map(Weak::upgrade)
        .filter(|s| !s.stop.load(Ordering::Acquire))
        .map(|s| lock(&s.status).clone())
        .collect()
}

/// A bucket followed: looked at again in the background until this is dropped.
pub struct Following {
    shared: Arc<Shared>,
    url: RemoteUrl,
    root: PathBuf,
    thread: Option<JoinHandle<()>>,
}

impl Following {
    /// Follows `mirror`'s bucket, fetching what `hydrate` names at each look. `looked` says the
    /// caller has just brought the mirror up to the bucket: the first look waits a period;
    /// otherwise it starts now, in the background (a front end shows what the mirror held).
    pub fn start(mut mirror: Mirror, hydrate: Hydrate, looked: bool) -> Self {
        let url = mirror.bucket().url().clone();
        let root = mirror.root();
        let shared = Arc::new(Shared {
            status: Mutex::new(BucketStatus {
                url: url.to_string(),
                root: root.display().to_string(),
                looking: !looked,
                looked_ms: looked.then(crate::model::now_ms),
                error: None,
            }),
            stop: Arc::new(AtomicBool::new(false)),
        });
        mirror.cancel_with(shared.stop.clone());
        lock(&FOLLOWED).push(Arc::downgrade(&shared));
        let every = poll_period();
        let mine = shared.clone();
        let thread = std::thread::Builder::new()
            .name("bucket-follow".into())
            .spawn(move || {
                if looked {
                    std::thread::park_timeout(every);
                }
                while !mine.stop.load(Ordering::Acquire) {
                    let outcome = mirror.sync(&hydrate);
                    let mut status = lock(&mine.status);
                    status.looking = false;
                    match outcome {
                        Ok(report) => {
                            tracing::debug!(url = %status.url, fetched = report.fetched, removed = report.removed, "bucket looked at");
                            status.looked_ms = Some(crate::model::now_ms());
                            status.error = None;
                        }
                        // A look stopped because the bucket is no longer followed is no news.
                        Err(_) if mine.stop.load(Ordering::Acquire) => {}
                        Err(e) => {
                            tracing::warn!(error = %e, "the bucket could not be looked at");
                            status.error = Some(e.to_string());
                        }
                    }
                    drop(status);
                    std::thread::park_timeout(every);
                }
            })
            .map_err(|e| {
                // Said where the bucket is shown, instead of a look that never ends.
                let mut status = lock(&shared.status);
                status.looking = false;
                status.error = Some(format!("{url}: cannot follow it: {e}"));
            })
            .ok();
        Self {
            shared,
            url,
            root,
            thread,
        }
    }

    /// The bucket followed.
    pub fn url(&self) -> &RemoteUrl {
        &self.url
    }

    /// The mirror's root: the runs directory to show.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// How the following goes.
    pub fn status(&self) -> BucketStatus {
        lock(&self.shared.status).clone()
    }

    /// Follows for the rest of the process (a command that runs until it is stopped).
    pub fn for_good(mut self) {
        self.thread = None;
        std::mem::forget(self);
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        // The thread ends at its next wake. A look running fetches nothing more than what it
        // has started (kept, with the mirror whole), without anyone waiting for it here.
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = &self.thread {
            t.thread().unpark();
        }
    }
}

/// `$MCTL_BUCKET_POLL` (a duration: `10s`, `2m`), else 10 s.
pub fn poll_period() -> Duration {
    std::env::var("MCTL_BUCKET_POLL")
        .ok()
        .and_then(|v| humantime::parse_duration(&v).ok())
        .filter(|d| !d.is_zero())
        .unwrap_or(Duration::from_secs(10))
}
