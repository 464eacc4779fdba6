//! The buckets a front end shows (`s3://BUCKET/PREFIX` among its runs directories): each is
//! shown through its mirror ([`crate::remote::Following`]), so the live session, the index and
//! every command read the mirror's root like any folder. What is saved, and what the user sees,
//! is the URL; what `runsDirs` holds, and every request names, is the mirror's root.

use crate::remote::{self, Following, Hydrate, Mirror, RemoteUrl};
use crate::{Error, ErrorCode};

/// A bucket among the directories shown.
pub(super) enum Shown {
    /// Followed: its mirror's root stands for it.
    Followed(Following),
    /// Could not be followed (no cache folder, a configuration the client refuses): its URL
    /// stays in `runsDirs`, and reading it says why.
    Failed { url: String, error: String },
}

/// Refuses a directory list naming a new bucket URL that does not parse: nothing is saved. One
/// among `before` (shown or saved already, as a command line may give it) is let through: its
/// failure is said where it is listed, and it must not block every other change.
pub(super) fn check_urls(dirs: &[String], shown: &[Shown], before: &[String]) -> Result<(), Error> {
    for dir in dirs.iter().filter(|d| remote::is_remote(d)) {
        if root_to_url(dir, shown).is_none() && !before.contains(dir) {
            RemoteUrl::parse(dir).map_err(|e| Error::new(ErrorCode::Invalid, e.to_string()))?;
        }
    }
    Ok(())
}

/// `dirs` as they are saved: a mirror's root shown for a bucket is its URL again, every URL
/// spelled one way (`s3://b//p/` is `s3://b/p`), and each directory once.
pub(super) fn as_saved(dirs: Vec<String>, shown: &[Shown]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let dir = root_to_url(&dir, shown)
            .or_else(|| canonical(&dir))
            .unwrap_or(dir);
        if !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// The one spelling of bucket URL `dir`; `None` for a folder, or a URL that does not parse.
fn canonical(dir: &str) -> Option<String> {
    remote::is_remote(dir)
        .then(|| RemoteUrl::parse(dir).ok())
        .flatten()
        .map(|u| u.to_string())
}

fn root_to_url(dir: &str, shown: &[Shown]) -> Option<String> {
    shown.iter().find_map(|s| match s {
        Shown::Followed(f) if f.root().to_str() == Some(dir) => Some(f.url().to_string()),
        _ => None,
    })
}

/// `dirs` as the live session reads them: each bucket URL replaced by its mirror's root. A
/// bucket already followed goes on; one newly named is followed from now on, its first look
/// starting in the background (the list shows what its mirror holds, and fills as it comes);
/// one no longer named stops being followed (its mirror stays in the cache for the next time).
/// Every value is fetched whole, as `mctl serve` fetches them: the app reads any of them at a
/// click.
pub(super) fn follow(dirs: &[String], shown: &mut Vec<Shown>) -> Vec<String> {
    let mut before = std::mem::take(shown);
    let mut out: Vec<String> = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let parsed = remote::is_remote(dir).then(|| RemoteUrl::parse(dir));
        // The same bucket twice (`s3://b/p` and `s3://b/p/`) is one mirror, shown once.
        let followed =
            |s: &Shown, url: &RemoteUrl| matches!(s, Shown::Followed(f) if f.url() == url);
        if let Some(Ok(url)) = &parsed {
            if shown.iter().any(|s| followed(s, url)) {
                continue;
            }
        }
        let Some(parsed) = parsed else {
            // The mirror's root of a bucket followed (settings given by the command line, kept
            // as they were) goes on being followed.
            let root =
                |s: &Shown| matches!(s, Shown::Followed(f) if f.root().to_str() == Some(dir));
            if let Some(i) = before.iter().position(root) {
                shown.push(before.swap_remove(i));
            }
            out.push(dir.clone());
            continue;
        };
        let url = match parsed {
            Ok(url) => url,
            Err(e) => {
                shown.push(Shown::Failed {
                    url: dir.clone(),
                    error: e.to_string(),
                });
                out.push(dir.clone());
                continue;
            }
        };
        // One that could not be followed is tried again.
        let entry = match before.iter().position(|s| followed(s, &url)) {
            Some(i) => before.swap_remove(i),
            None => match Mirror::open(&url) {
                Ok(mirror) => {
                    mirror.attach(&mirror.root());
                    Shown::Followed(Following::start(mirror, Hydrate::All, false))
                }
                Err(e) => Shown::Failed {
                    url: url.to_string(),
                    error: e.to_string(),
                },
            },
        };
        let at = match &entry {
            Shown::Followed(f) => f.root().display().to_string(),
            Shown::Failed { url, .. } => url.clone(),
        };
        if !out.contains(&at) {
            out.push(at);
        }
        shown.push(entry);
    }
    out
}

/// The kinds the user chose per directory, a bucket's applying to its mirror's root (what is
/// read) as well as to its URL (what is saved).
pub(super) fn kinds(
    chosen: &std::collections::BTreeMap<String, crate::sources::SourceKind>,
    shown: &[Shown],
) -> Vec<(String, crate::sources::SourceKind)> {
    let mut out: Vec<_> = chosen.iter().map(|(d, k)| (d.clone(), *k)).collect();
    for s in shown {
        if let Shown::Followed(f) = s {
            let url = f.url().to_string();
            // Saved under any spelling of the URL.
            let kind = chosen
                .iter()
                .find(|(d, _)| canonical(d).as_ref() == Some(&url))
                .map(|(_, k)| *k);
            if let Some(kind) = kind {
                out.push((f.root().display().to_string(), kind));
            }
        }
    }
    out
}

/// Why bucket `dir` (a URL left in `runsDirs`) cannot be read.
pub(super) fn failure(dir: &str, shown: &[Shown]) -> Option<Error> {
    shown.iter().find_map(|s| match s {
        Shown::Failed { url, error } if url == dir => {
            Some(Error::new(ErrorCode::Invalid, error.clone()))
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_that_does_not_parse_is_refused_before_anything_is_saved() {
        let err = check_urls(&["/runs".into(), "gs://team/runs".into()], &[], &[]).unwrap_err();
        assert_eq!(err.code, ErrorCode::Invalid);
        assert!(
            err.message.contains("`gs://` is not supported"),
            "{}",
            err.message
        );
        let err = check_urls(&["s3://team/a/../runs".into()], &[], &[]).unwrap_err();
        assert!(err.message.contains("`..` part"), "{}", err.message);
        assert!(check_urls(&["/runs".into(), "s3://team/runs".into()], &[], &[]).is_ok());
        // One given before (by the command line) does not block adding another directory.
        let before = ["gs://team/runs".to_owned()];
        assert!(check_urls(&["gs://team/runs".into(), "/more".into()], &[], &before).is_ok());
    }

    #[test]
    fn a_bucket_that_cannot_be_followed_stays_named_by_its_url_and_says_why() {
        let mut shown = Vec::new();
        let dirs = follow(&["/runs".into(), "gs://team/runs".into()], &mut shown);
        assert_eq!(dirs, ["/runs", "gs://team/runs"]);
        let e = failure("gs://team/runs", &shown).expect("its failure");
        assert!(e.message.contains("not supported"), "{}", e.message);
        assert!(failure("/runs", &shown).is_none());
        // Saved as given; dropped from what is shown, it is no longer a failure.
        assert_eq!(as_saved(dirs, &shown), ["/runs", "gs://team/runs"]);
        // A bucket URL is saved in its one spelling, once.
        let given = [
            "s3://team//runs/".into(),
            "s3://team/runs".into(),
            "/runs".into(),
        ];
        assert_eq!(as_saved(Vec::from(given), &[]), ["s3://team/runs", "/runs"]);
        follow(&["/runs".into()], &mut shown);
        assert!(shown.is_empty());
    }
}
