#!/usr/bin/env bash
# Builds the desktop app with its UI bundled in.
#   (no flag)   a debug build of the app: target/debug/mission-control
#   --release   optimized, stripped builds of the app and of mctl (which embeds the UI for
#               `mctl serve`), in one cargo invocation so that they share every dependency:
#               target/release/mission-control and target/release/mctl
#   --deb       the same, then the Debian package of both (packaging/deb/build.sh):
#               target/release/bundle/deb/mission-control_<version>_<arch>.deb
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

release=0
deb=0
for a in "$@"; do
  case "$a" in
    --release) release=1 ;;
    --deb) release=1 deb=1 ;;
    *) echo "build-app: unknown option $a (--release, --deb)" >&2; exit 2 ;;
  esac
done

(cd ui && npm run --silent build)
if [ "$release" = 1 ]; then
  cargo build --release --locked -p mission-control-app -p mission-control \
    --features mission-control-app/custom-protocol
else
  cargo build --locked -p mission-control-app --features custom-protocol
fi
if [ "$deb" = 1 ]; then
  packaging/deb/build.sh
fi
