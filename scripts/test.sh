#!/usr/bin/env bash
# Runs every test: formatting, lints, and the core + CLI test suite (unit, integration, golden
# and property tests). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

echo "== cargo fmt --check" >&2
cargo fmt --all -- --check
echo "== cargo clippy -D warnings" >&2
cargo clippy --all-targets --locked -- -D warnings
echo "== cargo test" >&2
cargo test --locked
