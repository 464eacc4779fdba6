#!/usr/bin/env bash
# Builds the desktop app with its UI bundled in. `--release` for the optimized build; `--deb`
# for a Debian package (target/release/bundle/deb/).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

profile=()
deb=0
for a in "$@"; do
  case "$a" in
    --release) profile=(--release) ;;
    --deb) deb=1 ;;
  esac
done

(cd ui && npm run --silent build)
if [ "$deb" = 1 ]; then
  # The Tauri CLI ships inside its npm package; deb bundling works offline.
  ui/node_modules/.bin/tauri build --bundles deb
else
  cargo build "${profile[@]}" -p mission-control-app --features custom-protocol
fi
