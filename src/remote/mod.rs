//! Runs directories in object storage: `s3://BUCKET/PREFIX` holds what a runs directory holds
//! (`<run>.jsonl`, `<run>.values/<id>.txt`, summaries; a Claude Code or Codex store), as
//! `mctl push`, `aws s3 sync` or `rclone` uploads it.
//!
//! The core reads runs from a directory. A bucket is read through a mirror of it in the user's
//! cache ([`mirror`]), kept by one paginated LIST of the prefix and GETs of the objects that
//! changed since the last look: transcripts and summaries whole, big value files by their ends
//! (what a listing compares), their middles fetched by ranged GETs when read ([`ranged`]).
//! Every command then answers from the mirror exactly as it does from a local directory.
//!
//! The client is the Arrow project's `object_store`, configured from the standard AWS variables
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
//! `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`), and for what they leave unset, the AWS profile files
//! ([`profile`]). No credential is ever part of an error, a log line or
//! an answer: errors are ours, said in words, and scrubbed of every secret the environment holds.

mod follow;
pub mod mirror;
mod profile;
pub mod push;
mod ranged;
mod shared;
mod sidecar;

pub use follow::{followed, poll_period, BucketStatus, Following};
pub use mirror::{Hydrate, Mirror, SyncReport};
pub use push::{push, PushOptions, PushReport};

use crate::sync::lock;
use bytes::Bytes;
use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, RetryConfig};
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Where Mission Control keeps its own objects in a bucket's prefix: line-offset sidecars (and,
/// later, shared pins). Never mirrored as part of the runs directory.
pub const OWN_PREFIX: &str = ".mission-control";

/// True when `dir` names object storage rather than a local directory.
pub fn is_remote(dir: &str) -> bool {
    dir.contains("://")
}

/// A bucket and the prefix in it that holds a runs directory.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RemoteUrl {
    /// The bucket's name.
    pub bucket: String,
    /// The prefix, without a leading or trailing `/`; empty for the whole bucket.
    pub prefix: String,
}

impl RemoteUrl {
    /// Parses `s3://BUCKET` or `s3://BUCKET/PREFIX`.
    pub fn parse(url: &str) -> Result<Self, RemoteError> {
        let bad = |why: &str| RemoteError::new(RemoteErrorKind::Invalid, url, why.to_owned());
        let Some(rest) = url.strip_prefix("s3://") else {
            let scheme = url.split("://").next().unwrap_or_default();
            return Err(bad(&format!(
                "`{scheme}://` is not supported: give s3://BUCKET/PREFIX (any S3-compatible \
                 store, with AWS_ENDPOINT_URL for one that is not AWS)"
            )));
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let valid_bucket = !bucket.is_empty()
            && bucket
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
        if !valid_bucket {
            return Err(bad(
                "the bucket's name is missing or not a valid bucket name",
            ));
        }
        let prefix = prefix.trim_matches('/');
        if !prefix.is_empty() && Key::parse(prefix).ok().is_none_or(|k| k.as_ref() != prefix) {
            return Err(bad(
                "the prefix has an empty, `.` or `..` part, or a control character",
            ));
        }
        Ok(Self {
            bucket: bucket.to_owned(),
            prefix: prefix.to_owned(),
        })
    }

    /// The object key of `rel`, a path relative to the prefix with `/` between its parts,
    /// exactly as written: `None` for one no key can be (an empty, `.` or `..` part, a control
    /// character). (Keys are never percent-encoded: a listing gives them back as they are.)
    fn key(&self, rel: &str) -> Option<Key> {
        let whole = if self.prefix.is_empty() {
            rel.to_owned()
        } else {
            format!("{}/{rel}", self.prefix)
        };
        Key::parse(&whole).ok().filter(|k| k.as_ref() == whole)
    }

    /// `rel` of an object key under the prefix; `None` for a key outside it.
    fn relative<'a>(&self, key: &'a str) -> Option<&'a str> {
        if self.prefix.is_empty() {
            return Some(key);
        }
        key.strip_prefix(self.prefix.as_str())?.strip_prefix('/')
    }
}

impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.prefix.is_empty() {
            write!(f, "s3://{}", self.bucket)
        } else {
            write!(f, "s3://{}/{}", self.bucket, self.prefix)
        }
    }
}

/// What kind of failure talking to object storage was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteErrorKind {
    /// A URL that names no bucket we can read.
    Invalid,
    /// The store refused the credentials (or has none).
    Denied,
    /// No such bucket (or object).
    NotFound,
    /// The endpoint cannot be reached, or answered with something other than S3.
    Unreachable,
    /// A conditional write lost to another writer.
    Conflict,
    /// Anything else the store said.
    Other,
}

/// A failure reading or writing object storage: a message for people, never a credential.
#[derive(Debug, Clone)]
pub struct RemoteError {
    /// Its kind.
    pub kind: RemoteErrorKind,
    message: String,
}

impl RemoteError {
    fn new(kind: RemoteErrorKind, what: impl fmt::Display, why: String) -> Self {
        Self {
            kind,
            message: scrub(&format!("{what}: {why}")),
        }
    }

    /// A store's error on `what`, in words.
    fn from_store(what: impl fmt::Display, e: &object_store::Error) -> Self {
        use object_store::Error as E;
        let detail = chain(e);
        let (kind, why) = match e {
            E::NotFound { .. } => (RemoteErrorKind::NotFound, "not found".to_owned()),
            E::PermissionDenied { .. } | E::Unauthenticated { .. } => (
                RemoteErrorKind::Denied,
                "access denied: check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and \
                 AWS_SESSION_TOKEN) and the bucket's policy"
                    .to_owned(),
            ),
            E::Precondition { .. } | E::AlreadyExists { .. } => (
                RemoteErrorKind::Conflict,
                "changed by another writer meanwhile".to_owned(),
            ),
            _ => classify(&detail),
        };
        let why = if matches!(kind, RemoteErrorKind::Other | RemoteErrorKind::Unreachable) {
            format!("{why} ({detail})")
        } else {
            why
        };
        Self::new(kind, what, why)
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RemoteError {}

/// Every cause of `e`, on one line.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out.replace('\n', " ")
}

/// What a store's generic error means, from the S3 error code or transport failure it names.
fn classify(detail: &str) -> (RemoteErrorKind, String) {
    let has = |s: &str| detail.contains(s);
    if has("NoSuchBucket") {
        (RemoteErrorKind::NotFound, "no such bucket".to_owned())
    } else if has("InvalidAccessKeyId")
        || has("SignatureDoesNotMatch")
        || has("AccessDenied")
        || has("403 Forbidden")
        || has("401 Unauthorized")
    {
        (
            RemoteErrorKind::Denied,
            "access denied: check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and \
             AWS_SESSION_TOKEN) and the bucket's policy"
                .to_owned(),
        )
    } else if has("error sending request")
        || has("connect")
        || has("dns error")
        || has("timed out")
        || has("Connection refused")
    {
        (
            RemoteErrorKind::Unreachable,
            "cannot reach the endpoint (AWS_ENDPOINT_URL, AWS_ALLOW_HTTP for plain http)"
                .to_owned(),
        )
    } else {
        (RemoteErrorKind::Other, "the store refused".to_owned())
    }
}

/// The credentials taken from a profile file, for [`scrub`] to cut out as it does the
/// environment's.
static PROFILE_SECRETS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// `builder` given what the AWS profile files hold for what the environment does not set
/// ([`profile`]): the environment's variables win, each on its own.
fn with_profile(mut builder: AmazonS3Builder) -> AmazonS3Builder {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let p = profile::load();
    if !set("AWS_ACCESS_KEY_ID") {
        if let (Some(id), Some(secret)) = (p.access_key_id, p.secret_access_key) {
            // Each secret once: an app that follows buckets connects again and again.
            let mut secrets = lock(&PROFILE_SECRETS);
            let held = [Some(&id), Some(&secret), p.session_token.as_ref()];
            for secret in held.into_iter().flatten() {
                if !secrets.contains(secret) {
                    secrets.push(secret.clone());
                }
            }
            builder = builder
                .with_access_key_id(id)
                .with_secret_access_key(secret);
            if let Some(token) = p.session_token {
                builder = builder.with_token(token);
            }
        }
    }
    if !set("AWS_REGION") && !set("AWS_DEFAULT_REGION") {
        if let Some(region) = p.region {
            builder = builder.with_region(region);
        }
    }
    if !set("AWS_ENDPOINT_URL") && !set("AWS_ENDPOINT") {
        if let Some(endpoint) = p.endpoint_url {
            builder = builder.with_endpoint(endpoint);
        }
    }
    builder
}

/// `text` with every secret the environment (or a profile file) holds cut out: a store's
/// error may quote a header or a URL, and nothing we print may carry a credential.
fn scrub(text: &str) -> String {
    let mut out = text.to_owned();
    let from_env = [
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_ACCESS_KEY_ID",
    ]
    .into_iter()
    .filter_map(|var| std::env::var(var).ok());
    let from_profile = PROFILE_SECRETS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    for secret in from_env.chain(from_profile) {
        if secret.len() >= 4 {
            out = out.replace(&secret, "[redacted]");
        }
    }
    out
}

/// One object of a listing, its key relative to the prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// Key relative to the prefix, `/` between its parts.
    pub rel: String,
    /// Size in bytes.
    pub size: u64,
    /// The store's entity tag, when its listing gives one.
    pub etag: Option<String>,
    /// When the object was last written, in ms since the epoch.
    pub modified_ms: i64,
}

/// Bytes and requests this process has exchanged with object storage.
#[derive(Debug, Default)]
pub struct Traffic {
    /// Objects' bytes received (GET bodies).
    pub received: AtomicU64,
    /// Bytes sent (PUT bodies).
    pub sent: AtomicU64,
    /// Requests made (a LIST counts one per page of 1,000 keys).
    pub requests: AtomicU64,
}

static TRAFFIC: Traffic = Traffic {
    received: AtomicU64::new(0),
    sent: AtomicU64::new(0),
    requests: AtomicU64::new(0),
};

/// What this process has exchanged with object storage so far: requests, bytes received, bytes
/// sent.
pub fn traffic() -> (u64, u64, u64) {
    (
        TRAFFIC.requests.load(Ordering::Relaxed),
        TRAFFIC.received.load(Ordering::Relaxed),
        TRAFFIC.sent.load(Ordering::Relaxed),
    )
}

/// A connection to the bucket and prefix of one URL. Its calls block: the CLI and the core are
/// synchronous, and each bucket has a small runtime of its own for the client.
pub struct Bucket {
    url: RemoteUrl,
    store: Arc<AmazonS3>,
    rt: tokio::runtime::Runtime,
    traffic: &'static Traffic,
}

impl fmt::Debug for Bucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The store's own Debug would print its configuration, credentials included.
        f.debug_struct("Bucket").field("url", &self.url).finish()
    }
}

impl Bucket {
    /// Connects to `url` with the configuration the environment gives (the AWS variables).
    /// Nothing is sent until the first call.
    pub fn connect(url: &RemoteUrl) -> Result<Self, RemoteError> {
        // rustls needs one crypto provider for the process; a second install is refused
        // harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let retry = RetryConfig {
            max_retries: 2,
            retry_timeout: Duration::from_secs(15),
            ..RetryConfig::default()
        };
        let store = with_profile(AmazonS3Builder::from_env())
            .with_bucket_name(&url.bucket)
            .with_retry(retry)
            .build()
            .map_err(|e| RemoteError::from_store(url, &e))?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RemoteError::new(RemoteErrorKind::Other, url, e.to_string()))?;
        Ok(Self {
            url: url.clone(),
            store: Arc::new(store),
            rt,
            traffic: &TRAFFIC,
        })
    }

    /// The URL this bucket was opened with.
    pub fn url(&self) -> &RemoteUrl {
        &self.url
    }

    fn count(&self, received: u64) {
        self.traffic.requests.fetch_add(1, Ordering::Relaxed);
        self.traffic.received.fetch_add(received, Ordering::Relaxed);
    }

    /// Every object under the prefix (one paginated LIST), Mission Control's own excepted.
    pub fn list(&self) -> Result<Vec<Listed>, RemoteError> {
        let mut all = self.list_all()?;
        all.retain(|l| l.rel.split('/').next() != Some(OWN_PREFIX));
        Ok(all)
    }

    /// Every object under the prefix, Mission Control's own included.
    pub fn list_all(&self) -> Result<Vec<Listed>, RemoteError> {
        let prefix = match self.url.prefix.as_str() {
            "" => None,
            p => Some(Key::parse(p).map_err(|e| RemoteError::from_store(&self.url, &e.into()))?),
        };
        let metas: Vec<object_store::ObjectMeta> = self
            .rt
            .block_on(self.store.list(prefix.as_ref()).try_collect())
            .map_err(|e| RemoteError::from_store(&self.url, &e))?;
        // One request per page of 1,000 keys.
        let pages = (metas.len() as u64).div_ceil(1000).max(1);
        self.traffic.requests.fetch_add(pages, Ordering::Relaxed);
        Ok(metas
            .into_iter()
            .filter_map(|m| {
                Some(Listed {
                    rel: self.url.relative(m.location.as_ref())?.to_owned(),
                    size: m.size,
                    etag: m.e_tag,
                    modified_ms: m.last_modified.timestamp_millis(),
                })
            })
            .collect())
    }

    /// Writes object `rel` in one PUT.
    pub fn put_small(&self, rel: &str, body: Vec<u8>) -> Result<(), RemoteError> {
        let key = self.key(rel)?;
        let len = body.len() as u64;
        self.rt
            .block_on(self.store.put(&key, object_store::PutPayload::from(body)))
            .map_err(|e| RemoteError::from_store(self.what(rel), &e))?;
        self.count(0);
        self.traffic.sent.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    /// Bytes `range` of object `rel`, from the version with entity tag `etag` (when known) and
    /// size `size`: an error when the object was replaced, or the store gave fewer bytes.
    pub fn get_range_of(
        &self,
        rel: &str,
        range: Range<u64>,
        etag: Option<&str>,
        size: u64,
    ) -> Result<Bytes, RemoteError> {
        let key = self.key(rel)?;
        let want = range.end - range.start;
        let options = object_store::GetOptions {
            range: Some(object_store::GetRange::Bounded(range)),
            if_match: etag.map(str::to_owned),
            ..object_store::GetOptions::default()
        };
        let got = self.rt.block_on(async {
            let got = self.store.get_opts(&key, options).await?;
            let total = got.meta.size;
            got.bytes().await.map(|b| (total, b))
        });
        let (total, bytes) = got.map_err(|e| RemoteError::from_store(self.what(rel), &e))?;
        self.count(bytes.len() as u64);
        if total != size || bytes.len() as u64 != want {
            return Err(RemoteError::new(
                RemoteErrorKind::Conflict,
                self.what(rel),
                "changed in the bucket while it was read: look again".to_owned(),
            ));
        }
        Ok(bytes)
    }

    /// Object `rel` whole, or `None` when there is no such object.
    pub fn get_small(&self, rel: &str) -> Result<Option<Bytes>, RemoteError> {
        let key = self.key(rel)?;
        let got = self.rt.block_on(async {
            match self.store.get(&key).await {
                Ok(r) => r.bytes().await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        let got =
            got.map_err(|e| RemoteError::from_store(format_args!("{}/{rel}", self.url), &e))?;
        self.count(got.as_ref().map_or(0, |b| b.len() as u64));
        Ok(got)
    }

    /// Object `rel` as a listing would give it, or `None` when there is none.
    pub fn head(&self, rel: &str) -> Result<Option<Listed>, RemoteError> {
        let key = self.key(rel)?;
        let got = self.rt.block_on(self.store.head(&key));
        self.count(0);
        match got {
            Ok(m) => Ok(Some(Listed {
                rel: rel.to_owned(),
                size: m.size,
                etag: m.e_tag,
                modified_ms: m.last_modified.timestamp_millis(),
            })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(RemoteError::from_store(self.what(rel), &e)),
        }
    }

    /// Deletes object `rel`.
    pub fn delete(&self, rel: &str) -> Result<(), RemoteError> {
        let key = self.key(rel)?;
        let done = self.rt.block_on(self.store.delete(&key));
        self.count(0);
        done.map_err(|e| RemoteError::from_store(self.what(rel), &e))
    }

    /// Object `rel` whole with its entity tag, or `None` when there is none.
    pub fn get_tagged(&self, rel: &str) -> Result<Option<(Bytes, Option<String>)>, RemoteError> {
        let key = self.key(rel)?;
        let got = self.rt.block_on(async {
            match self.store.get(&key).await {
                Ok(r) => {
                    let etag = r.meta.e_tag.clone();
                    r.bytes().await.map(|b| Some((b, etag)))
                }
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        let got = got.map_err(|e| RemoteError::from_store(self.what(rel), &e))?;
        self.count(got.as_ref().map_or(0, |(b, _)| b.len() as u64));
        Ok(got)
    }

    /// Writes object `rel` only if it is still the version with entity tag `etag` (`None`: only
    /// if there is no such object yet). A lost race is a [`RemoteErrorKind::Conflict`].
    pub fn put_if(
        &self,
        rel: &str,
        body: Vec<u8>,
        etag: Option<String>,
    ) -> Result<(), RemoteError> {
        let key = self.key(rel)?;
        let mode = match etag {
            Some(e_tag) => object_store::PutMode::Update(object_store::UpdateVersion {
                e_tag: Some(e_tag),
                version: None,
            }),
            None => object_store::PutMode::Create,
        };
        let len = body.len() as u64;
        let options = object_store::PutOptions {
            mode,
            ..object_store::PutOptions::default()
        };
        let done = self.rt.block_on(self.store.put_opts(
            &key,
            object_store::PutPayload::from(body),
            options,
        ));
        self.count(0);
        done.map_err(|e| RemoteError::from_store(self.what(rel), &e))?;
        self.traffic.sent.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    /// The key of `rel`, or an error saying it can be none.
    fn key(&self, rel: &str) -> Result<Key, RemoteError> {
        self.url.key(rel).ok_or_else(|| {
            RemoteError::new(
                RemoteErrorKind::Invalid,
                self.what(rel),
                "no object key can have this name (an empty, `.` or `..` part, or a control \
                 character)"
                    .to_owned(),
            )
        })
    }

    fn what(&self, rel: &str) -> String {
        format!("{}/{rel}", self.url)
    }
}
