#!/usr/bin/env bash
# Installs what is needed and starts Mission Control on your runs directory: --runs-dir DIR
# (or a bucket, s3://BUCKET/PREFIX), else $MCTL_RUNS_DIR, else the harness's own (~/.local/share/com.pierre.klide/runs). When
# there is none, it starts on a freshly generated demo directory instead. Without a display it
# says so and shows the runs with the `mctl` command line instead.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

runs_dir="${MCTL_RUNS_DIR:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs-dir) runs_dir="$2"; shift 2 ;;
    --runs-dir=*) runs_dir="${1#*=}"; shift ;;
    *) echo "start.sh: unknown argument $1 (use --runs-dir DIR)" >&2; exit 2 ;;
  esac
done

display=1
[ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ] || display=0
if [ "$display" = 1 ]; then
  # Both binaries in one build, so that they share every dependency.
  echo "building the desktop app and mctl (the first build takes a few minutes)..." >&2
  scripts/build-app.sh --release
else
  echo "building the UI and mctl (which embeds it for mctl serve)..." >&2
  (cd ui && npm run --silent build)
  cargo build --release --quiet --bin mctl
fi
target="${CARGO_TARGET_DIR:-$PWD/target}"
mctl="$target/release/mctl"

if [ -z "$runs_dir" ]; then
  runs_dir="${XDG_DATA_HOME:-$HOME/.local/share}/com.pierre.klide/runs"
  [ "$(uname)" = "Darwin" ] && runs_dir="$HOME/Library/Application Support/com.pierre.klide/runs"
fi
# A bucket (s3://BUCKET/PREFIX) is taken as it is: the app and mctl read it (docs/object-storage.md).
case "$runs_dir" in *://*) remote=1 ;; *) remote=0 ;; esac
if [ "$remote" = 0 ] && { [ ! -d "$runs_dir" ] || [ -z "$(ls -A "$runs_dir" 2>/dev/null)" ]; }; then
  demo="${XDG_STATE_HOME:-$HOME/.local/state}/mission-control/demo-runs"
  if [ ! -d "$demo" ]; then
    echo "no runs in $runs_dir: generating a demo runs directory in $demo" >&2
    "$mctl" demo "$demo" --now "$(date +%s)000" >&2
  else
    echo "no runs in $runs_dir: using the demo runs directory $demo" >&2
  fi
  runs_dir="$demo"
fi

if [ "$display" = 0 ]; then
  echo "No display here (neither DISPLAY nor WAYLAND_DISPLAY is set): the desktop app cannot open." >&2
  echo "Use the command line instead: $mctl --runs-dir '$runs_dir' runs | show RUN | peek RUN CALL --query TEXT" >&2
  echo "or the app in a browser: $mctl --runs-dir '$runs_dir' serve (then open the URL it prints; see docs/serve.md)" >&2
  exec "$mctl" --runs-dir "$runs_dir" runs
fi

echo "Mission Control on $runs_dir" >&2
exec "$target/release/mission-control" --runs-dir "$runs_dir"
