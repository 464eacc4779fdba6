//! `mctl push DIR s3://BUCKET/PREFIX`: uploads what changed in a runs directory since the last
//! push, so the bucket holds exactly what the directory holds.
//!
//! What changed is told without reading a file: its size and modification time against what
//! the last push of the same directory to the same URL uploaded (kept in the user's cache), and
//! the object's size (and entity tag, when the store lists one) against one LIST of the prefix.
//! A file that changed, or whose object is missing or different, is uploaded whole (object
//! storage has no append). Order: value files first, transcripts last, so a reader never sees a
//! transcript naming a value that is not there yet. Each object appears whole or not at all: a
//! small file is one PUT, a big one a multipart upload completed only after its last part (an
//! interrupted one is aborted, and never visible). Each object carries its file's time as
//! `mtime` metadata (rclone's convention), which the mirror gives back to the file.
//!
//! Value files over 1 MiB get a line-offset sidecar ([`super::sidecar`]).
//!
//! Nothing is ever deleted from the bucket: a file removed locally (GC) stays there; and an
//! object deleted in the bucket (GC there) is not uploaded again while its file is unchanged.
//! Hidden files (temporary files, Claude Code's credentials) and the agents' credentials and
//! settings files ([`private`]) are never uploaded.

use super::sidecar::{sidecar_rel, Sidecar, SIDECAR_FROM};
use super::{Bucket, RemoteError, RemoteErrorKind, RemoteUrl};
use crate::retained::{FileSource, LineIndex};
use futures_util::StreamExt;
use object_store::{
    Attribute, Attributes, ObjectStore, PutMultipartOptions, PutOptions, PutPayload,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, File};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Files at least this big are uploaded in parts.
const MULTIPART_FROM: u64 = 16 << 20;
/// Size of each part (S3 wants at least 5 MiB but for the last).
const PART: u64 = 8 << 20;
/// Uploads at once.
const PARALLEL_UPLOADS: usize = 8;

/// How a push runs.
#[derive(Debug, Clone, Default)]
pub struct PushOptions {
    /// Where the record of past pushes is kept (default: the user's cache).
    pub cache: Option<PathBuf>,
}

/// What one push did; the last JSON line of `mctl push --json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PushReport {
    /// Where it pushed to.
    pub url: String,
    /// Files in the directory.
    pub files: usize,
    /// Files uploaded.
    pub uploaded: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Files already in the bucket as they are on disk.
    pub unchanged: usize,
    /// Line-offset sidecars written.
    pub sidecars: usize,
    /// Objects under the prefix before the push (one LIST).
    pub listed: usize,
}

/// One file uploaded, as `mctl push --json` says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Uploaded {
    /// Key relative to the prefix.
    pub key: String,
    /// Bytes uploaded.
    pub bytes: u64,
}

/// How far a push has come: files and bytes done, of those it has to upload.
#[derive(Debug, Clone, Copy, Default)]
pub struct PushProgress {
    /// Files uploaded so far.
    pub files_done: usize,
    /// Files to upload.
    pub files: usize,
    /// Bytes uploaded so far.
    pub bytes_done: u64,
    /// Bytes to upload.
    pub bytes: u64,
}

/// A file as the last push uploaded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Pushed {
    size: u64,
    mtime_ns: i128,
    etag: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    files: BTreeMap<String, Pushed>,
}

/// A file of the directory.
#[derive(Debug, Clone)]
struct Local {
    rel: String,
    path: PathBuf,
    size: u64,
    mtime_ns: i128,
}

/// Uploads what changed in `dir` to `url`; `on_upload` hears of each file uploaded and
/// `on_progress` of how far the push has come.
pub fn push(
    dir: &Path,
    url: &RemoteUrl,
    options: &PushOptions,
    mut on_upload: impl FnMut(&Uploaded),
    mut on_progress: impl FnMut(PushProgress),
) -> Result<PushReport, RemoteError> {
    let local_err = |what: &Path, e: std::io::Error| {
        RemoteError::new(RemoteErrorKind::Other, what.display(), e.to_string())
    };
    if !fs::metadata(dir).map_err(|e| local_err(dir, e))?.is_dir() {
        return Err(local_err(dir, std::io::Error::other("not a directory")));
    }
    let bucket = Bucket::connect(url)?;
    let record_path = record_path(dir, url, options)?;
    let mut record: Record = fs::read(&record_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let files = walk(dir).map_err(|e| local_err(dir, e))?;
    let listed = bucket.list_all()?;
    let mut report = PushReport {
        url: url.to_string(),
        files: files.len(),
        listed: listed
            .iter()
            .filter(|l| !l.rel.starts_with(super::OWN_PREFIX))
            .count(),
        ..PushReport::default()
    };
    let remote: HashMap<&str, &super::Listed> =
        listed.iter().map(|l| (l.rel.as_str(), l)).collect();
    let mut todo = Vec::new();
    let mut sidecars_missing = Vec::new();
    for file in &files {
        // Unchanged since its last push, and its object as that push left it, or gone: an
        // object deleted in the bucket (by GC there) is not brought back unless the file
        // changes.
        let pushed = record
            .files
            .get(&file.rel)
            .filter(|p| p.size == file.size && p.mtime_ns == file.mtime_ns);
        let same_remote = pushed.is_some_and(|p| match remote.get(file.rel.as_str()) {
            None => true,
            Some(l) => {
                l.size == file.size && (p.etag.is_none() || l.etag.is_none() || p.etag == l.etag)
            }
        });
        if same_remote {
            report.unchanged += 1;
            let wants_sidecar = needs_sidecar(&file.rel, file.size)
                && !remote.contains_key(sidecar_rel(&file.rel).as_str());
            if wants_sidecar {
                sidecars_missing.push(file.clone());
            }
        } else {
            todo.push(file.clone());
        }
    }
    // Values first, transcripts last.
    todo.sort_by_key(|f| (upload_rank(&f.rel), f.rel.clone()));
    let mut progress = PushProgress {
        files: todo.len(),
        bytes: todo.iter().map(|f| f.size).sum(),
        ..PushProgress::default()
    };
    on_progress(progress);
    let mut first_error = None;
    for rank in 0..3 {
        let batch: Vec<&Local> = todo
            .iter()
            .filter(|f| upload_rank(&f.rel) == rank)
            .collect();
        let uploads = futures_util::stream::iter(batch.into_iter().map(|file| {
            let bucket = &bucket;
            async move { (file, upload(bucket, file).await) }
        }))
        .buffer_unordered(PARALLEL_UPLOADS);
        let results: Vec<_> = bucket.rt.block_on(async {
            let mut out = Vec::new();
            let mut uploads = std::pin::pin!(uploads);
            while let Some(done) = uploads.next().await {
                out.push(done);
            }
            out
        });
        for (file, result) in results {
            match result {
                Ok(etag) => {
                    report.uploaded += 1;
                    report.bytes += file.size;
                    progress.files_done += 1;
                    progress.bytes_done += file.size;
                    on_progress(progress);
                    on_upload(&Uploaded {
                        key: file.rel.clone(),
                        bytes: file.size,
                    });
                    record.files.insert(
                        file.rel.clone(),
                        Pushed {
                            size: file.size,
                            mtime_ns: file.mtime_ns,
                            etag: etag.clone(),
                        },
                    );
                    if needs_sidecar(&file.rel, file.size) {
                        match put_sidecar(&bucket, file, etag) {
                            Ok(()) => report.sidecars += 1,
                            Err(e) => {
                                first_error.get_or_insert(e);
                            }
                        }
                    }
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if first_error.is_some() {
            // Transcripts wait for their values: none goes up after a value failed.
            break;
        }
    }
    if first_error.is_none() {
        for file in &sidecars_missing {
            let etag = remote.get(file.rel.as_str()).and_then(|l| l.etag.clone());
            match put_sidecar(&bucket, file, etag) {
                Ok(()) => report.sidecars += 1,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
    }
    // Files gone from the directory are forgotten (their objects stay).
    let present: HashSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
    record.files.retain(|rel, _| present.contains(rel.as_str()));
    save_record(&record_path, &record).map_err(|e| local_err(&record_path, e))?;
    match first_error {
        Some(e) => Err(e),
        None => Ok(report),
    }
}

/// 0 for value files, 1 for everything else but transcripts, 2 for transcripts.
fn upload_rank(rel: &str) -> u8 {
    let mut parts = rel.rsplit('/');
    let name = parts.next().unwrap_or_default();
    if parts.next().is_some_and(|d| d.ends_with(".values")) {
        0
    } else if name.ends_with(".jsonl") {
        2
    } else {
        1
    }
}

fn needs_sidecar(rel: &str, size: u64) -> bool {
    upload_rank(rel) == 0 && size > SIDECAR_FROM
}

/// Uploads `file` (its first `size` bytes, as walked: a transcript that grows meanwhile goes up
/// as it was, and the next push takes the rest); returns the new object's entity tag.
async fn upload(bucket: &Bucket, file: &Local) -> Result<Option<String>, RemoteError> {
    let what = bucket.what(&file.rel);
    let key = bucket.key(&file.rel)?;
    let io = |e: std::io::Error| {
        RemoteError::new(
            RemoteErrorKind::Other,
            file.path.display(),
            format!("cannot be read for {what}: {e}"),
        )
    };
    let handle = File::open(&file.path).map_err(io)?;
    let read = |at: u64, len: u64| -> Result<Vec<u8>, RemoteError> {
        let mut buf = vec![0u8; len as usize];
        handle.read_exact_at(&mut buf, at).map_err(io)?;
        Ok(buf)
    };
    let mut attributes = Attributes::new();
    attributes.insert(
        Attribute::Metadata("mtime".into()),
        mtime_metadata(file.mtime_ns).into(),
    );
    let store = &bucket.store;
    let result = if file.size < MULTIPART_FROM {
        let body = read(0, file.size)?;
        let options = PutOptions {
            attributes,
            ..PutOptions::default()
        };
        store
            .put_opts(&key, PutPayload::from(body), options)
            .await
            .map_err(|e| RemoteError::from_store(&what, &e))?
    } else {
        let options = PutMultipartOptions {
            attributes,
            ..PutMultipartOptions::default()
        };
        let mut upload = store
            .put_multipart_opts(&key, options)
            .await
            .map_err(|e| RemoteError::from_store(&what, &e))?;
        let mut sent = Ok(());
        let mut at = 0;
        while at < file.size {
            let len = PART.min(file.size - at);
            let part = match read(at, len) {
                Ok(part) => part,
                Err(e) => {
                    sent = Err(e);
                    break;
                }
            };
            if let Err(e) = upload.put_part(PutPayload::from(part)).await {
                sent = Err(RemoteError::from_store(&what, &e));
                break;
            }
            bucket.count(0);
            at += len;
        }
        let done = match sent {
            Ok(()) => upload
                .complete()
                .await
                .map_err(|e| RemoteError::from_store(&what, &e)),
            Err(e) => Err(e),
        };
        if done.is_err() {
            // Nothing of an unfinished upload is ever visible; its parts are dropped.
            let _ = upload.abort().await;
        }
        done?
    };
    bucket.count(0);
    bucket.traffic.sent.fetch_add(file.size, Ordering::Relaxed);
    Ok(result.e_tag)
}

/// Writes the line-offset sidecar of value `file`, uploaded with entity tag `etag`.
fn put_sidecar(bucket: &Bucket, file: &Local, etag: Option<String>) -> Result<(), RemoteError> {
    let index = FileSource::open(&file.path)
        .and_then(|src| LineIndex::build(&src))
        .map_err(|e| {
            RemoteError::new(RemoteErrorKind::Other, file.path.display(), e.to_string())
        })?;
    if index.bytes() != file.size {
        // Changed since it was uploaded: the next push uploads it again, with its sidecar.
        return Ok(());
    }
    let body = serde_json::to_vec(&Sidecar::of(&index, etag)).map_err(|e| {
        RemoteError::new(RemoteErrorKind::Other, file.path.display(), e.to_string())
    })?;
    bucket.put_small(&sidecar_rel(&file.rel), body)
}

/// Every regular file under `dir`, symbolic links followed (as `aws s3 sync` does), each folder
/// once.
fn walk(dir: &Path) -> std::io::Result<Vec<Local>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = stack.pop() {
        let meta = fs::metadata(&path)?;
        if !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        for entry in fs::read_dir(&path)? {
            let entry = entry?;
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                tracing::warn!(path = %entry.path().display(), "skipped: its name is not UTF-8");
                continue;
            };
            if private(&name) {
                continue;
            }
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            // A link to nowhere is skipped; a file that vanished meanwhile too.
            let Ok(meta) = fs::metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push((entry.path(), child));
            } else if meta.is_file() {
                out.push(Local {
                    rel: child,
                    path: entry.path(),
                    size: meta.len(),
                    mtime_ns: i128::from(meta.mtime()) * 1_000_000_000
                        + i128::from(meta.mtime_nsec()),
                });
            }
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// Names a push never uploads: hidden files and folders (an agent's temporary files, as the
/// harness's `.<run>.summary.json.klide-tmp`; Claude Code's `.credentials.json`), and the
/// credentials and settings files agents keep beside their sessions, should a whole agent
/// folder be pushed (Codex's `auth.json` and `config.toml`, Gemini CLI's `oauth_creds.json` and
/// `google_accounts.json`, Claude Code's and Gemini CLI's `settings.json`).
fn private(name: &str) -> bool {
    const SECRETS: [&str; 7] = [
        "auth.json",
        "config.toml",
        "oauth_creds.json",
        "google_accounts.json",
        "settings.json",
        "settings.local.json",
        "credentials.json",
    ];
    name.starts_with('.') || SECRETS.contains(&name)
}

/// A file's time as `mtime` metadata: seconds since the epoch with nine decimals.
fn mtime_metadata(mtime_ns: i128) -> String {
    let secs = mtime_ns.div_euclid(1_000_000_000);
    let nanos = mtime_ns.rem_euclid(1_000_000_000);
    format!("{secs}.{nanos:09}")
}

/// Where the record of pushing `dir` to `url` is kept.
fn record_path(dir: &Path, url: &RemoteUrl, options: &PushOptions) -> Result<PathBuf, RemoteError> {
    use sha2::Digest;
    let cache = options
        .cache
        .clone()
        .or_else(crate::config::cache_dir)
        .ok_or_else(|| {
            RemoteError::new(
                RemoteErrorKind::Other,
                url,
                "no cache directory to keep the record of pushes in (set MCTL_CACHE_DIR)"
                    .to_owned(),
            )
        })?;
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let digest = sha2::Sha256::digest(format!("{}\n{url}", dir.display()).as_bytes());
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    Ok(cache.join("push").join(format!("{hex}.json")))
}

fn save_record(path: &Path, record: &Record) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension("json.tmp");
    fs::write(&tmp, serde_json::to_vec(record)?)?;
    fs::rename(tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_go_up_before_summaries_and_transcripts_last() {
        assert_eq!(upload_rank("r.values/c.txt"), 0);
        assert_eq!(upload_rank("r.summary.json"), 1);
        assert_eq!(upload_rank("r.jsonl"), 2);
        assert_eq!(upload_rank("proj/s.jsonl"), 2);
        assert!(needs_sidecar("r.values/c.txt", SIDECAR_FROM + 1));
        assert!(!needs_sidecar("r.values/c.txt", SIDECAR_FROM));
        assert!(!needs_sidecar("r.jsonl", SIDECAR_FROM * 4));
    }

    #[test]
    fn hidden_files_and_credentials_stay_home() {
        for name in [
            ".run_1.summary.json.klide-tmp",
            ".credentials.json",
            "auth.json",
            ".git",
            "oauth_creds.json",
            "settings.json",
        ] {
            assert!(private(name), "{name}");
        }
        for name in [
            "run_1.jsonl",
            "run_1.values",
            "toolu_1.txt",
            "rollout-1.jsonl",
        ] {
            assert!(!private(name), "{name}");
        }
    }

    #[test]
    fn times_are_written_as_rclone_writes_them() {
        assert_eq!(
            mtime_metadata(1_700_000_000_123_456_789),
            "1700000000.123456789"
        );
        assert_eq!(mtime_metadata(5), "0.000000005");
    }
}
