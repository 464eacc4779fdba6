//! Two things the binaries need from the build:
//! - the commit they were built from (`MC_BUILD_COMMIT`), printed by `--version` of `mctl` and
//!   of the app alike: `git rev-parse` when building from a clone, else `$MC_BUILD_COMMIT` as
//!   given by whoever builds from a source archive, else "unknown commit";
//! - the built UI: a release `mctl` embeds `ui/dist` (served by `mctl serve`), so it is built
//!   again when the UI changes (and warns when there is no `ui/dist` to embed). Debug builds read `ui/dist` from disk when serving, so a UI
//!   rebuild does not rebuild the core in the test suite.
use std::path::Path;
use std::process::Command;

fn main() {
    if std::env::var("PROFILE").as_deref() == Ok("release") {
        println!("cargo:rerun-if-changed=ui/dist");
        // A release mctl embeds the UI now or never: say so while it is being built, not when
        // `mctl serve` answers its first page with a 503.
        if !Path::new("ui/dist/index.html").exists() {
            println!(
                "cargo:warning=ui/dist is missing: this mctl will serve the JSON API without its \
                 UI. Build the UI first (cd ui && npm ci && npm run build), or use \
                 scripts/build-app.sh --release"
            );
        }
    } else {
        println!("cargo:rerun-if-changed=build.rs");
    }
    println!("cargo:rerun-if-env-changed=MC_BUILD_COMMIT");
    let commit = std::env::var("MC_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown commit".into());
    println!("cargo:rustc-env=MC_BUILD_COMMIT={commit}");
}

/// HEAD's commit, and the files whose change means HEAD moved (so that a new commit rebuilds
/// with its own id, and nothing else does).
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| text.trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    // Where each file is for this checkout (a linked worktree has its own HEAD and log, and
    // shares the refs).
    // (Given relative to the working directory, which is the package's.)
    let here = std::env::current_dir().unwrap_or_default();
    let path = |name: &str| git(&["rev-parse", "--git-path", name]).map(|p| here.join(p));
    let head = git(&["symbolic-ref", "-q", "HEAD"]);
    let watched = ["HEAD", "logs/HEAD", "packed-refs"]
        .into_iter()
        .map(str::to_owned)
        .chain(head)
        .filter_map(|name| path(&name));
    // Only the files there are: cargo counts a missing one as changed on every build, and
    // would build the whole crate again each time. A commit appends to `logs/HEAD`, whether
    // the branch's ref is written loose or packed (and a detached HEAD is HEAD itself).
    for file in watched.filter(|f| f.exists()) {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    Some(commit)
}
