#!/usr/bin/env bash
# Takes the screenshots in docs/ again from the real app: builds the release app and mctl, then
# runs the end-to-end tests with their screenshots saved into docs/ instead of the build
# directory (where the test command leaves them, so that a test run never changes the clone).
#   scripts/screenshots.sh             every end-to-end test file
#   scripts/screenshots.sh app search  only e2e/app.test.mjs and e2e/search.test.mjs
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

scripts/build-app.sh --release
cargo build --locked --bin mctl --features test-hooks

files=()
for name in "$@"; do files+=("e2e/$name.test.mjs"); done
[ ${#files[@]} -gt 0 ] || files=(e2e/)
export MCTL_SHOTS_DIR="$PWD/docs"
(cd ui && xvfb-run -a -s "-screen 0 1440x900x24" node --test --test-concurrency=1 "${files[@]}")
echo "screenshots saved in docs/; see git status" >&2
