//! The mirror of a bucket's prefix in the user's cache, through which every command reads it.
//!
//! A look at the bucket is one paginated LIST; an object is fetched again only when its size,
//! entity tag or time changed since the mirror last held it (kept in `manifest.json` beside the
//! files). What is fetched:
//! - transcripts, summaries and every other file: whole (a listing reads them all);
//! - a value file (`<run>.values/<id>.txt`) of at most 128 KiB: whole;
//! - a bigger value file: only its first and last 64 KiB (what a listing compares with the
//!   transcript), in a sparse file of its true size. Its middle is read from the bucket by ranged
//!   GETs when a command reads it ([`super::ranged`]), or fetched whole when a command asks for
//!   the run's values ([`Hydrate`]).
//!
//! Each file takes the time the uploader recorded (`mtime` metadata, as `mctl push` and
//! `rclone` write it), else the object's own: a run's age and its running state read the same
//! as on the machine that wrote it. A key no file could have (an empty, `.` or `..` part) never
//! gets here: the S3 client refuses the listing that holds it. One no local name can take (a
//! part over 255 bytes) is skipped and said in the log, as is a folder marker beside its keys.
//!
//! A look that finds an object replaced between its LIST and its GET keeps what the mirror
//! held of it and says so in the log: the next look fetches it (a transcript re-uploaded by a
//! `push --watch` while it runs).

use super::ranged::MirrorValues;
use super::shared::{BucketDeletes, BucketPins};
use super::{Bucket, Listed, RemoteError, RemoteErrorKind, RemoteUrl};
use crate::model::values::SAMPLE;
use futures_util::{StreamExt, TryStreamExt};
use object_store::{Attribute, GetOptions, GetRange, ObjectStore};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Fetches at once during a look.
const PARALLEL_FETCHES: usize = 8;

/// Which value files a look fetches whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hydrate {
    /// None beyond the small ones: a big value's middle is read by ranged GETs if at all.
    Nothing,
    /// Those of these runs (by id).
    Runs(Vec<String>),
    /// Every one (search, export of everything).
    All,
}

/// What one look at the bucket did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    /// Objects under the prefix.
    pub listed: usize,
    /// Objects fetched (whole or by their ends).
    pub fetched: usize,
    /// Bytes received for them.
    pub bytes: u64,
    /// Files dropped from the mirror because their object is gone.
    pub removed: usize,
    /// Keys skipped because no local file could hold them safely.
    pub skipped: usize,
}

/// How much of an object the mirror holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Fill {
    /// Its first and last [`SAMPLE`] bytes, in a sparse file of its size.
    Ends,
    /// Every byte.
    Whole,
}

/// An object as the mirror holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Held {
    pub(crate) size: u64,
    pub(crate) etag: Option<String>,
    pub(crate) modified_ms: i64,
    fill: Fill,
}

impl Held {
    /// True when the mirror holds only the object's ends.
    pub(crate) fn partial(&self) -> bool {
        self.fill == Fill::Ends
    }

    /// The object as a listing gives it.
    pub(crate) fn listed(&self, rel: &str) -> Listed {
        Listed {
            rel: rel.to_owned(),
            size: self.size,
            etag: self.etag.clone(),
            modified_ms: self.modified_ms,
        }
    }

    fn is(&self, listed: &Listed) -> bool {
        self.size == listed.size
            && self.etag == listed.etag
            && self.modified_ms == listed.modified_ms
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Manifest {
    url: String,
    objects: BTreeMap<String, Held>,
}

/// A bucket's prefix mirrored in the cache.
pub struct Mirror {
    bucket: Arc<Bucket>,
    home: PathBuf,
    manifest: Manifest,
    /// Set when nobody wants the look any more: fetches not started yet are left for later.
    cancel: Option<Arc<AtomicBool>>,
}

impl Mirror {
    /// The mirror of `url` (created empty the first time), connected to its bucket.
    pub fn open(url: &RemoteUrl) -> Result<Self, RemoteError> {
        let cache = crate::config::cache_dir().ok_or_else(|| {
            RemoteError::new(
                RemoteErrorKind::Other,
                url,
                "no cache directory to mirror it in (set MCTL_CACHE_DIR)".to_owned(),
            )
        })?;
        Self::open_in(url, &cache)
    }

    /// [`open`](Self::open) with the cache at `cache`.
    pub fn open_in(url: &RemoteUrl, cache: &Path) -> Result<Self, RemoteError> {
        let home = cache.join("remote").join(folder_name(url));
        let local = |e: std::io::Error| {
            RemoteError::new(
                RemoteErrorKind::Other,
                url,
                format!("cannot use its mirror {}: {e}", home.display()),
            )
        };
        fs::create_dir_all(home.join("files")).map_err(local)?;
        fs::create_dir_all(home.join("tmp")).map_err(local)?;
        let manifest = read_manifest(&home, url);
        Ok(Self {
            bucket: Arc::new(Bucket::connect(url)?),
            home,
            manifest,
            cancel: None,
        })
    }

    /// Ends a look early once `flag` is set: the fetches running finish (and are kept), the
    /// others are left for the next look, and the look fails saying so.
    pub fn cancel_with(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }

    /// The local directory the commands read.
    pub fn root(&self) -> PathBuf {
        self.home.join("files")
    }

    /// The bucket behind the mirror.
    pub fn bucket(&self) -> &Arc<Bucket> {
        &self.bucket
    }

    /// From now on in this process, the mirror is its bucket's stand-in for the runs directory
    /// opened at `runs_root` (the mirror's root, or a store folder in it): reads of the value
    /// files it holds only the ends of are answered from the bucket, whoever opens them; its
    /// pins are the bucket's (`.mission-control/pins.json`); and GC deletes in the bucket what
    /// it collects, each object only if it is still the version of the mirror's last look.
    /// Each hook reads the mirror's manifest again whenever a look (of any process) changed it.
    pub fn attach(&self, runs_root: &Path) {
        let root = self.root();
        let view = Arc::new(ManifestView::new(
            self.home.clone(),
            self.bucket.url().clone(),
        ));
        crate::retained::read_elsewhere(
            root.clone(),
            Arc::new(MirrorValues::new(
                self.bucket.clone(),
                root.clone(),
                view.clone(),
            )),
        );
        crate::pins::share_pins(
            runs_root,
            Arc::new(BucketPins {
                bucket: self.bucket.clone(),
            }),
        );
        // GC names a file relative to the runs directory; the manifest, to the mirror's root.
        let under = runs_root
            .strip_prefix(&root)
            .ok()
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        crate::gc::delete_elsewhere(
            runs_root.to_path_buf(),
            Arc::new(BucketDeletes {
                bucket: self.bucket.clone(),
                under,
                view,
            }),
        );
    }

    /// Brings the mirror up to the bucket: one LIST, then what changed, fetched as the module
    /// says, and the value files `hydrate` names fetched whole.
    pub fn sync(&mut self, hydrate: &Hydrate) -> Result<SyncReport, RemoteError> {
        let _lock = self.lock()?;
        // Another process (a watch, a server, a command) may have looked since this one did.
        self.manifest = read_manifest(&self.home, self.bucket.url());
        let listed = self.bucket.list()?;
        let root = self.root();
        // What a fetch that died left behind (the lock says no fetch runs now).
        if let Ok(entries) = fs::read_dir(self.home.join("tmp")) {
            for entry in entries.flatten() {
                let _ = fs::remove_file(entry.path());
            }
        }
        // A key that is also a folder of other keys (a console's folder marker `a.values/`,
        // listed as `a.values`) cannot be a file beside them.
        let folders: std::collections::HashSet<&str> = listed
            .iter()
            .flat_map(|o| o.rel.match_indices('/').map(|(i, _)| &o.rel[..i]))
            .collect();
        let listed: Vec<Listed> = listed
            .iter()
            .filter(|o| {
                let folder = folders.contains(o.rel.as_str());
                if folder {
                    tracing::warn!(key = %o.rel, "skipped: a folder of other keys");
                }
                !folder
            })
            .cloned()
            .collect();
        let mut report = SyncReport {
            listed: listed.len(),
            ..SyncReport::default()
        };
        let mut wanted = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for object in listed {
            let Some(path) = local_path(&root, &object.rel) else {
                tracing::warn!(key = %object.rel, "skipped: no safe local name for this key");
                report.skipped += 1;
                continue;
            };
            seen.insert(object.rel.clone());
            let fill = wanted_fill(&object, hydrate);
            let held = self.manifest.objects.get(&object.rel);
            let current = held.is_some_and(|h| {
                h.is(&object)
                    && h.fill >= fill
                    && fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == h.size)
            });
            if !current {
                // A transcript that grew is fetched from where the mirror's copy ends.
                let grew_from = held
                    .filter(|h| {
                        h.fill == Fill::Whole && fill == Fill::Whole && h.size < object.size
                    })
                    .filter(|h| fs::symlink_metadata(&path).is_ok_and(|m| m.len() == h.size))
                    .map_or(0, |h| h.size);
                wanted.push((object, path, fill, grew_from));
            }
        }
        let gone: Vec<String> = self
            .manifest
            .objects
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for rel in gone {
            self.manifest.objects.remove(&rel);
            if let Some(path) = local_path(&root, &rel) {
                if fs::remove_file(&path).is_ok() {
                    report.removed += 1;
                }
                prune_empty_parents(&root, &path);
            }
        }
        let results = self.fetch_all(wanted);
        let first_error = self.absorb(results, &mut report);
        // What was fetched is kept even when another fetch failed: the next look resumes.
        if report.fetched > 0 || report.removed > 0 {
            self.save()?;
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(report),
        }
    }

    /// Takes the fetches' results into the manifest and `report`; the first error that is not
    /// an object replaced meanwhile (kept as it was held, for the next look).
    fn absorb(
        &mut self,
        results: Vec<Result<(String, Held, u64), RemoteError>>,
        report: &mut SyncReport,
    ) -> Option<RemoteError> {
        let mut first_error = None;
        for result in results {
            match result {
                Ok((rel, held, bytes)) => {
                    report.fetched += 1;
                    report.bytes += bytes;
                    self.manifest.objects.insert(rel, held);
                }
                Err(e) if e.kind == RemoteErrorKind::Conflict => {
                    tracing::info!(error = %e, "kept as held until the next look");
                    report.skipped += 1;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error
    }

    /// Fetches whole the value files `hydrate` names that the mirror holds by their ends, as
    /// the last look listed them (no new LIST).
    pub fn hydrate(&mut self, hydrate: &Hydrate) -> Result<SyncReport, RemoteError> {
        let _lock = self.lock()?;
        self.manifest = read_manifest(&self.home, self.bucket.url());
        let root = self.root();
        let wanted: Vec<_> = self
            .manifest
            .objects
            .iter()
            .filter(|(_, held)| held.fill == Fill::Ends)
            .filter_map(|(rel, held)| {
                let object = Listed {
                    rel: rel.clone(),
                    size: held.size,
                    etag: held.etag.clone(),
                    modified_ms: held.modified_ms,
                };
                let fill = wanted_fill(&object, hydrate);
                let path = local_path(&root, rel)?;
                (fill == Fill::Whole).then_some((object, path, fill, 0))
            })
            .collect();
        let mut report = SyncReport::default();
        let results = self.fetch_all(wanted);
        let first_error = self.absorb(results, &mut report);
        if report.fetched > 0 {
            self.save()?;
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(report),
        }
    }

    /// Fetches every `(object, path, fill, grew_from)`, a few at once.
    fn fetch_all(
        &self,
        wanted: Vec<(Listed, PathBuf, Fill, u64)>,
    ) -> Vec<Result<(String, Held, u64), RemoteError>> {
        let bucket = &self.bucket;
        let tmp = self.home.join("tmp");
        let cancel = self.cancel.as_deref();
        let jobs = futures_util::stream::iter(wanted.into_iter().enumerate().map(
            |(n, (object, path, fill, grew_from))| {
                let tmp = tmp.join(format!("{}-{n}", std::process::id()));
                async move {
                    if cancel.is_some_and(|c| c.load(Ordering::Acquire)) {
                        return Err(RemoteError::new(
                            RemoteErrorKind::Other,
                            bucket.url(),
                            "the look was stopped: the bucket is no longer followed".to_owned(),
                        ));
                    }
                    let appended = match grew_from {
                        0 => None,
                        from => append(bucket, &object, &path, from).await?,
                    };
                    let bytes = match appended {
                        Some(bytes) => bytes,
                        None => fetch(bucket, &object, &tmp, &path, fill).await?,
                    };
                    Ok((
                        object.rel.clone(),
                        Held {
                            size: object.size,
                            etag: object.etag.clone(),
                            modified_ms: object.modified_ms,
                            fill,
                        },
                        bytes,
                    ))
                }
            },
        ))
        .buffer_unordered(PARALLEL_FETCHES)
        .collect::<Vec<_>>();
        bucket.rt.block_on(jobs)
    }

    fn save(&self) -> Result<(), RemoteError> {
        let path = self.home.join("manifest.json");
        let tmp = self.home.join("manifest.json.tmp");
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            serde_json::to_writer(&mut f, &self.manifest)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            RemoteError::new(
                RemoteErrorKind::Other,
                self.bucket.url(),
                format!("cannot write its mirror's manifest: {e}"),
            )
        })
    }

    /// One look at a time per mirror, across processes.
    fn lock(&self) -> Result<File, RemoteError> {
        let file =
            lock_file(&self.home, rustix::fs::FlockOperation::LockExclusive).map_err(|e| {
                RemoteError::new(
                    RemoteErrorKind::Other,
                    self.bucket.url(),
                    format!("cannot lock its mirror: {e}"),
                )
            })?;
        Ok(file)
    }
}

/// The mirror's lock file, locked as `how` (held until the file is dropped).
fn lock_file(home: &Path, how: rustix::fs::FlockOperation) -> std::io::Result<File> {
    let file = File::create(home.join("lock"))?;
    loop {
        match rustix::fs::flock(&file, how) {
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
            Ok(()) => return Ok(file),
        }
    }
}

/// A file's time, size and inode: when they are the same, so is the file (it is replaced whole).
type FileStampOf = (SystemTime, u64, u64);

/// The manifest as the last look of any process left it, read again whenever it changed on
/// disk: a watch, a server and a command may keep one mirror, each looking in turn.
pub(crate) struct ManifestView {
    home: PathBuf,
    url: RemoteUrl,
    /// The manifest file's stamp when read, and what it held.
    cached: Mutex<(Option<FileStampOf>, Arc<Manifest>)>,
}

impl ManifestView {
    fn new(home: PathBuf, url: RemoteUrl) -> Self {
        Self {
            home,
            url,
            cached: Mutex::new((None, Arc::default())),
        }
    }

    /// Object `rel` as the mirror holds it now.
    pub(crate) fn held(&self, rel: &str) -> Option<Held> {
        use std::os::unix::fs::MetadataExt;
        let stamp = fs::metadata(self.home.join("manifest.json"))
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len(), m.ino())));
        let mut cached = crate::sync::lock(&self.cached);
        if cached.0.is_none() || cached.0 != stamp {
            *cached = (stamp, Arc::new(read_manifest(&self.home, &self.url)));
        }
        cached.1.objects.get(rel).cloned()
    }

    /// [`held`](Self::held) for a mirror file of `len` bytes: when the manifest does not
    /// describe it (a look of another process is placing files and has not yet saved what it
    /// placed), waits for that look to end and asks again, so no file is taken as whole that a
    /// look just placed by its ends.
    pub(crate) fn held_settled(&self, rel: &str, len: u64) -> Option<Held> {
        let held = self.held(rel);
        if held.as_ref().is_some_and(|h| h.size == len) {
            return held;
        }
        let _shared = lock_file(&self.home, rustix::fs::FlockOperation::LockShared).ok()?;
        self.held(rel)
    }
}

/// What the mirror in `home` holds, as its last look left it (empty when it has none, or one
/// of another URL).
fn read_manifest(home: &Path, url: &RemoteUrl) -> Manifest {
    fs::read(home.join("manifest.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
        .filter(|m| m.url == url.to_string())
        .unwrap_or_else(|| Manifest {
            url: url.to_string(),
            objects: BTreeMap::new(),
        })
}

/// The mirror's folder for `url`: readable, and unique by a hash of the whole URL.
fn folder_name(url: &RemoteUrl) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(url.to_string().as_bytes());
    let readable: String = format!("{}-{}", url.bucket, url.prefix)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(48)
        .collect();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{readable}-{hex}")
}

/// Where object `rel` lives under `root`, or `None` for a key that could not be a file there:
/// an empty, `.` or `..` part, a NUL, or a part too long for a file name.
pub(crate) fn local_path(root: &Path, rel: &str) -> Option<PathBuf> {
    let mut path = root.to_path_buf();
    for part in rel.split('/') {
        if part.is_empty() || part == "." || part == ".." || part.contains('\0') || part.len() > 255
        {
            return None;
        }
        path.push(part);
    }
    Some(path)
}

/// True for `<run>.values/<id>` keys: the harness's value files.
fn is_value_file(rel: &str) -> bool {
    let mut parts = rel.rsplit('/');
    parts.next();
    parts.next().is_some_and(|dir| dir.ends_with(".values"))
}

/// The run a value file belongs to.
fn value_run(rel: &str) -> Option<&str> {
    let mut parts = rel.rsplit('/');
    parts.next();
    parts.next()?.strip_suffix(".values")
}

fn wanted_fill(object: &Listed, hydrate: &Hydrate) -> Fill {
    if !is_value_file(&object.rel) || object.size <= 2 * SAMPLE {
        return Fill::Whole;
    }
    match hydrate {
        Hydrate::All => Fill::Whole,
        Hydrate::Runs(ids)
            if value_run(&object.rel).is_some_and(|r| ids.iter().any(|i| i == r)) =>
        {
            Fill::Whole
        }
        _ => Fill::Ends,
    }
}

/// Fetches `object` into `tmp`, then moves it to `path`; returns the bytes received.
async fn fetch(
    bucket: &Bucket,
    object: &Listed,
    tmp: &Path,
    path: &Path,
    fill: Fill,
) -> Result<u64, RemoteError> {
    let what = bucket.what(&object.rel);
    let key = bucket.key(&object.rel)?;
    let store = &bucket.store;
    let io = |e: std::io::Error| RemoteError::new(RemoteErrorKind::Other, &what, e.to_string());
    let file = File::create(tmp).map_err(io)?;
    let mut received = 0u64;
    let mut mtime = None;
    let ranges = match fill {
        Fill::Whole => vec![None],
        Fill::Ends => vec![Some(0..SAMPLE), Some(object.size - SAMPLE..object.size)],
    };
    for range in ranges {
        let options = GetOptions {
            range: range.clone().map(GetRange::Bounded),
            if_match: object.etag.clone(),
            ..GetOptions::default()
        };
        let got = store
            .get_opts(&key, options)
            .await
            .map_err(|e| RemoteError::from_store(&what, &e))?;
        if got.meta.size != object.size {
            // Replaced since the LIST (and no entity tag to hold the GET to it): never pad or
            // cut a file to the listed size.
            let _ = fs::remove_file(tmp);
            return Err(RemoteError::new(
                RemoteErrorKind::Conflict,
                &what,
                "changed in the bucket while it was read: look again".to_owned(),
            ));
        }
        mtime = mtime.or_else(|| uploader_mtime(&got.attributes));
        let mut at = range.map_or(0, |r| r.start);
        let want = got.range.end - got.range.start;
        let mut body = got.into_stream();
        let first = at;
        while let Some(chunk) = body
            .try_next()
            .await
            .map_err(|e| RemoteError::from_store(&what, &e))?
        {
            file.write_all_at(&chunk, at).map_err(io)?;
            at += chunk.len() as u64;
            received += chunk.len() as u64;
        }
        if at - first != want {
            let _ = fs::remove_file(tmp);
            return Err(RemoteError::new(
                RemoteErrorKind::Other,
                &what,
                format!("the store sent {} of {want} bytes", at - first),
            ));
        }
        bucket.count(0);
    }
    bucket
        .traffic
        .received
        .fetch_add(received, std::sync::atomic::Ordering::Relaxed);
    let placed = (|| {
        file.set_len(object.size)?;
        let when = mtime.unwrap_or_else(|| {
            SystemTime::UNIX_EPOCH + Duration::from_millis(object.modified_ms.max(0) as u64)
        });
        file.set_modified(when)?;
        drop(file);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::rename(tmp, path)
    })();
    if let Err(e) = placed {
        let _ = fs::remove_file(tmp);
        return Err(io(e));
    }
    Ok(received)
}

/// Bytes of the mirror's copy compared with the object before its tail is appended.
const OVERLAP: u64 = 4096;

/// Appends to the mirror's copy of `object` (its first `from` bytes) what the object has past
/// them, when the object still starts with them (its last [`OVERLAP`] bytes are compared):
/// a watcher of the mirror then sees lines appended, as on the machine that wrote them.
/// `None` when the object was rewritten otherwise: the caller fetches it whole.
async fn append(
    bucket: &Bucket,
    object: &Listed,
    path: &Path,
    from: u64,
) -> Result<Option<u64>, RemoteError> {
    let what = bucket.what(&object.rel);
    let io = |e: std::io::Error| RemoteError::new(RemoteErrorKind::Other, &what, e.to_string());
    let start = from.saturating_sub(OVERLAP);
    let options = GetOptions {
        range: Some(GetRange::Bounded(start..object.size)),
        if_match: object.etag.clone(),
        ..GetOptions::default()
    };
    let got = bucket
        .store
        .get_opts(&bucket.key(&object.rel)?, options)
        .await
        .map_err(|e| RemoteError::from_store(&what, &e))?;
    let mtime = uploader_mtime(&got.attributes);
    let body = got
        .bytes()
        .await
        .map_err(|e| RemoteError::from_store(&what, &e))?;
    bucket.count(body.len() as u64);
    let overlap = (from - start) as usize;
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io)?;
    let mut mine = vec![0u8; overlap];
    file.read_exact_at(&mut mine, start).map_err(io)?;
    if body.len() as u64 != object.size - start || body[..overlap] != mine[..] {
        return Ok(None);
    }
    file.write_all_at(&body[overlap..], from).map_err(io)?;
    let when = mtime.unwrap_or_else(|| {
        SystemTime::UNIX_EPOCH + Duration::from_millis(object.modified_ms.max(0) as u64)
    });
    file.set_modified(when).map_err(io)?;
    Ok(Some(body.len() as u64))
}

/// The time the uploader recorded: `mtime` metadata in seconds since the epoch, with a fraction
/// (`mctl push` and `rclone` write it so).
fn uploader_mtime(attributes: &object_store::Attributes) -> Option<SystemTime> {
    let value = attributes.get(&Attribute::Metadata("mtime".into()))?;
    parse_mtime(value.as_ref())
}

/// `SECONDS[.FRACTION]`, read exactly (a float would round away the nanoseconds).
fn parse_mtime(text: &str) -> Option<SystemTime> {
    let (secs, fraction) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    let secs: u64 = secs.parse().ok()?;
    let digits: String = fraction.chars().take(9).collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos: u32 = format!("{digits:0<9}").parse().ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
}

/// Removes the empty folders from `path`'s parent up to (not including) `root`.
fn prune_empty_parents(root: &Path, path: &Path) {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_could_leave_the_mirror_have_no_local_path() {
        let root = Path::new("/m");
        assert_eq!(
            local_path(root, "a/b.txt"),
            Some(PathBuf::from("/m/a/b.txt"))
        );
        for bad in [
            "../x",
            "a/../../x",
            "a//b",
            "/a",
            "a/",
            ".",
            "a/./b",
            "a\0b",
        ] {
            assert_eq!(local_path(root, bad), None, "{bad:?}");
        }
    }

    #[test]
    fn only_big_value_files_are_held_by_their_ends() {
        let object = |rel: &str, size| Listed {
            rel: rel.to_owned(),
            size,
            etag: None,
            modified_ms: 0,
        };
        let big = 1 << 20;
        assert_eq!(
            wanted_fill(&object("r.jsonl", big), &Hydrate::Nothing),
            Fill::Whole
        );
        assert_eq!(
            wanted_fill(&object("r.values/c.txt", 2 * SAMPLE), &Hydrate::Nothing),
            Fill::Whole
        );
        assert_eq!(
            wanted_fill(&object("r.values/c.txt", big), &Hydrate::Nothing),
            Fill::Ends
        );
        let runs = Hydrate::Runs(vec!["r".to_owned()]);
        assert_eq!(
            wanted_fill(&object("r.values/c.txt", big), &runs),
            Fill::Whole
        );
        assert_eq!(
            wanted_fill(&object("s.values/c.txt", big), &runs),
            Fill::Ends
        );
        assert_eq!(
            wanted_fill(&object("s.values/c.txt", big), &Hydrate::All),
            Fill::Whole
        );
    }

    #[test]
    fn uploader_times_are_read_to_the_nanosecond() {
        let at = |s, n| Some(SystemTime::UNIX_EPOCH + Duration::new(s, n));
        assert_eq!(
            parse_mtime("1796414672.566123456"),
            at(1796414672, 566123456)
        );
        assert_eq!(parse_mtime("1796414672.5"), at(1796414672, 500_000_000));
        assert_eq!(parse_mtime("1796414672"), at(1796414672, 0));
        for bad in ["", "x", "-1.0", "1.2e3", "1.-5"] {
            assert_eq!(parse_mtime(bad), None, "{bad}");
        }
    }

    #[test]
    fn urls_name_a_bucket_and_a_clean_prefix() {
        let u = RemoteUrl::parse("s3://team-runs/ci/main/").unwrap();
        assert_eq!(
            (u.bucket.as_str(), u.prefix.as_str()),
            ("team-runs", "ci/main")
        );
        assert_eq!(u.to_string(), "s3://team-runs/ci/main");
        assert_eq!(u.relative("ci/main/a.jsonl"), Some("a.jsonl"));
        assert_eq!(u.relative("ci/mainx/a.jsonl"), None);
        assert_eq!(RemoteUrl::parse("s3://b").unwrap().prefix, "");
        for bad in [
            "s3://",
            "s3:///p",
            "s3://b/a/../c",
            "s3://b/a//c",
            "gs://b/p",
            "s3://b c/p",
        ] {
            assert!(RemoteUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
