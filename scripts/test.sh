#!/usr/bin/env bash
# Runs every test: formatting and lints (Rust and Svelte), the core + CLI suite (unit,
# integration, golden, property tests, and the check that ui/src/gen is up to date), the UI's
# unit tests, the end-to-end tests of the real desktop app under Xvfb, and the Debian package,
# installed, used and removed. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

# Each step says how long the test command has run so far.
step() { echo "== [$((SECONDS / 60))m$((SECONDS % 60))s] $*" >&2; }
# Where cargo puts what it builds (a cache folder outside the clone, when CARGO_TARGET_DIR says so).
target="${CARGO_TARGET_DIR:-$PWD/target}"
# What git sees in the clone before the tests: they must leave it exactly so (screenshots and
# every other file a test writes go to the build directory or a temporary one).
clone_status() { git -c safe.directory="$PWD" status --porcelain --untracked-files=all 2>/dev/null || echo "(git cannot read this clone)"; }
clone_before="$(clone_status)"

step "cargo fmt --check"
cargo fmt --all -- --check
# Clippy lints our own crates as they are compiled for the tests and for the release: with
# clippy-driver as the workspace's rustc wrapper (how `cargo clippy` runs its lints), every
# target a build compiles of ours is linted, and nothing is checked apart from the build that
# compiles it (a separate `cargo clippy` checked every dependency and our targets once more).
with_clippy() {
  RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver" \
    CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__" "$@"
}
# The UI first: `mctl serve`'s tests serve its built files (debug builds read ui/dist from disk).
step "building the UI"
(cd ui && npm run --silent build)
# The core and the CLI are built with their test hooks (feature `test-hooks`) once, by the tests:
# the benchmarks below run the `mctl` this build leaves in the target folder (a `cargo build` of
# it apart would compile the core again, the tests' dev-dependencies unifying some of its
# dependencies' features otherwise). A release build has no hooks.
step "cargo test (core and CLI; clippy -D warnings on every target it compiles)"
# Real Claude Code and Codex sessions from public projects sit beside a checkout that has them;
# a clone without them is checked on the hand-built stores of the same formats (tests/it/agents).
if [ ! -d ../shared/data/agents ]; then
  echo "note: ../shared/data/agents is absent: the real agent session files are not read;" \
    "the hand-built Claude Code and Codex stores in tests/it/agents cover their formats" >&2
fi
with_clippy cargo test --locked --features test-hooks

step "svelte-check"
(cd ui && npx svelte-check --tsconfig ./tsconfig.json --fail-on-warnings)
step "vitest"
(cd ui && npx vitest run)
# The app is built once, as a user gets it: the release build that the package holds is also
# the one the end-to-end tests drive (a debug build as well would double the compiling). Clippy
# lints it while it builds (a separate `cargo clippy` would check every Tauri dependency once
# more: about 12 minutes on 2 cores).
step "building the release app and mctl (clippy -D warnings), and their Debian package"
with_clippy scripts/build-app.sh --deb
with_clippy cargo test --release --locked -p mission-control-app --features custom-protocol

step "end-to-end tests of the desktop app (Xvfb, tauri-driver, WebKitWebDriver)"
(cd ui && xvfb-run -a -s "-screen 0 1440x900x24" node --test --test-concurrency=1 e2e/)

step "the Debian package: upgraded over an older one, checked, started under Xvfb, removed"
packaging/deb/check.sh

step "the index at a small scale (its answer equals a full read; figures printed, not asserted)"
BENCH_RUNS=300 BENCH_BIG_RUNS=0 BENCH_PROFILE=debug BENCH_DIR="$target/bench-scale-small" MCTL="$target/debug/mctl" bench/scale.sh

step "a Claude Code store through the index at a small scale (answers equal a full read; figures printed)"
BENCH_SESSIONS=200 BENCH_DIR="$target/bench-agents-small" MCTL="$target/debug/mctl" python3 bench/agents-scale.py

step "a Gemini CLI store and an opencode database through the index at a small scale (answers equal a full read; figures printed)"
BENCH_CHATS=100 BENCH_SESSIONS=100 BENCH_DIR="$target/bench-other-agents-small" MCTL="$target/debug/mctl" python3 bench/other-agents.py

step "search beside ripgrep at a small scale (hits checked against rg's; figures printed)"
BENCH_SEARCH_RUNS=100 BENCH_SEARCH_MB=32 BENCH_DIR="$target/bench-search-small" MCTL="$target/debug/mctl" python3 bench/search.py

step "a cold scan beside ccusage and cat at a small scale (answers equal every way; figures printed)"
BENCH_SESSIONS=100 BENCH_ROLLOUTS=20 BENCH_RUNS=300 BENCH_DIR="$target/bench-cold-small" MCTL="$target/debug/mctl" python3 bench/cold.py

step "a runs directory in a bucket at a small scale (answers equal the directory's; no GET when warm; figures printed)"
BENCH_RUNS=300 BENCH_BIG_MB=20 BENCH_STRICT=0 BENCH_DIR="$target/bench-bucket-small" MCTL="$target/debug/mctl" python3 bench/bucket.py

step "memory on a run with a 30 MB result (no command's peak may grow with the result's size)"
BENCH_MB=30 BENCH_ALLOWANCE_MIB=24 BENCH_DIR="$target/bench-memory-small" MCTL="$target/debug/mctl" python3 bench/memory.py

step "tokens and costs beside ccusage's on the real session files (equal tokens, costs within 1 %)"
scripts/agree.sh "$target/debug/mctl"

step "load test of live watching (1,000 events/s to 20 transcripts for 30 s, each reported once, in order)"
MCTL="$target/debug/mctl" python3 bench/watch-load.py

step "the clone is as the tests found it"
if [ "$clone_before" = "(git cannot read this clone)" ]; then
  echo "note: not a git clone git can read here: whether the tests changed files is not checked" >&2
fi
clone_after="$(clone_status)"
if [ "$clone_after" != "$clone_before" ]; then
  echo "the tests changed files in the clone:" >&2
  diff <(echo "$clone_before") <(echo "$clone_after") >&2 || true
  exit 1
fi
