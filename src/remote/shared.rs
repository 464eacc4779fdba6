//! What a team shares through a bucket besides its runs: pins, in
//! `PREFIX/.mission-control/pins.json`, changed by conditional PUTs so two people pinning at
//! once lose nothing; and GC's deletes, each made only if the object is still the version the
//! plan saw.

use super::mirror::ManifestView;
use super::{Bucket, Listed, RemoteError, RemoteErrorKind, OWN_PREFIX};
use crate::error::{Error, ErrorCode, Result};
use crate::gc::{DeleteElsewhere, GcFile};
use crate::pins::SharedPins;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::Arc;

/// Tries of a pin change that keeps losing its race before it gives up.
const TRIES: usize = 16;

/// What `pins.json` in a bucket holds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct PinsFile {
    /// Ids of the pinned runs.
    pinned: BTreeSet<String>,
}

/// A bucket's pins.
pub(crate) struct BucketPins {
    pub(crate) bucket: Arc<Bucket>,
}

fn pins_rel() -> String {
    format!("{OWN_PREFIX}/pins.json")
}

fn core_error(e: RemoteError) -> Error {
    Error::new(ErrorCode::Io, e.to_string())
}

impl BucketPins {
    fn read(&self) -> Result<(BTreeSet<String>, Option<String>, bool)> {
        match self.bucket.get_tagged(&pins_rel()).map_err(core_error)? {
            None => Ok((BTreeSet::new(), None, false)),
            Some((bytes, etag)) => {
                let file: PinsFile = serde_json::from_slice(&bytes).map_err(|e| {
                    Error::new(
                        ErrorCode::Io,
                        format!("{}/{} is not valid: {e}", self.bucket.url(), pins_rel()),
                    )
                })?;
                Ok((file.pinned, etag, true))
            }
        }
    }
}

impl SharedPins for BucketPins {
    fn load(&self) -> Result<BTreeSet<String>> {
        Ok(self.read()?.0)
    }

    fn change(&self, run: &str, pinned: bool) -> Result<(bool, BTreeSet<String>)> {
        for _ in 0..TRIES {
            let (mut set, etag, exists) = self.read()?;
            let changed = if pinned {
                set.insert(run.to_owned())
            } else {
                set.remove(run)
            };
            if !changed {
                return Ok((false, set));
            }
            race_window();
            let body = serde_json::to_vec_pretty(&PinsFile {
                pinned: set.clone(),
            })
            .map_err(|e| Error::new(ErrorCode::Io, e.to_string()))?;
            // A store that lists no entity tag cannot say which version we read: then the
            // object is replaced whole, as the last writer's.
            let written = match (exists, etag) {
                (true, None) => self.bucket.put_small(&pins_rel(), body),
                (_, etag) => self.bucket.put_if(&pins_rel(), body, etag),
            };
            match written {
                Ok(()) => return Ok((true, set)),
                Err(e) if e.kind == RemoteErrorKind::Conflict => continue,
                Err(e) => return Err(core_error(e)),
            }
        }
        Err(Error::new(
            ErrorCode::Busy,
            format!(
                "{}: the pins kept changing under us; try again",
                self.bucket.url()
            ),
        ))
    }
}

/// Tests of two writers at once set `MCTL_TEST_PIN_RACE_MS`: the time between reading the pins
/// and writing them back, so that both read before either writes.
#[cfg(feature = "test-hooks")]
fn race_window() {
    if let Some(ms) = std::env::var("MCTL_TEST_PIN_RACE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

#[cfg(not(feature = "test-hooks"))]
fn race_window() {}

/// GC's deletes in a bucket: an object goes only if it is still the version the mirror held
/// at its last look.
pub(crate) struct BucketDeletes {
    pub(crate) bucket: Arc<Bucket>,
    /// The runs directory's folder under the mirror's root (`projects` for a whole `~/.claude`
    /// pushed), empty when they are the same: GC's paths are relative to the runs directory.
    pub(crate) under: String,
    pub(crate) view: Arc<ManifestView>,
}

impl DeleteElsewhere for BucketDeletes {
    fn delete(&self, f: &GcFile) -> std::result::Result<(), String> {
        let rel = if self.under.is_empty() {
            f.path.clone()
        } else {
            format!("{}/{}", self.under, f.path)
        };
        let Some(planned) = self.view.held(&rel).map(|h| h.listed(&rel)) else {
            return Err("not in the bucket's last listing".into());
        };
        match self.bucket.head(&rel) {
            Err(e) => Err(format!("the bucket could not be asked: {e}")),
            Ok(None) => Err("already gone from the bucket".into()),
            Ok(Some(now)) if !same_version(&now, &planned) => {
                Err("changed in the bucket since the plan".into())
            }
            Ok(Some(_)) => self
                .bucket
                .delete(&rel)
                .map_err(|e| format!("could not delete it in the bucket: {e}")),
        }
    }
}

/// Whether a HEAD and a listing describe the same version of an object: a HEAD's time has whole
/// seconds only (an HTTP date), a listing's milliseconds.
fn same_version(head: &Listed, listed: &Listed) -> bool {
    let etags_agree = match (&head.etag, &listed.etag) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    head.size == listed.size
        && etags_agree
        && head.modified_ms.div_euclid(1000) == listed.modified_ms.div_euclid(1000)
}
