#!/usr/bin/env bash
# Cross-checks Mission Control's tokens and costs with ccusage's, per session, on every real
# Claude Code and Codex session file in ../shared/data/agents (docs/costs.md). ccusage 20.0.24
# is installed into a temporary prefix (the native package of later releases is missing from
# the registry) and run offline on each file laid out as its agent's store; so is `mctl`.
# Tokens must be equal, costs within 1 %. Prints a table of every session and exits non-zero on
# any difference.
#   scripts/agree.sh [MCTL]      (MCTL: the mctl to check; default target/debug/mctl)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${MCTL_SHARED:-$here/../shared/data/agents}"
mctl="${1:-${CARGO_TARGET_DIR:-$here/target}/debug/mctl}"
if [ ! -d "$shared" ]; then
  echo "agree: $shared is absent: no real session files to compare here" \
    "(tests/it/agents/costs.rs checks the same rules on hand-built sessions)"
  exit 0
fi
case "$(uname -m)" in
  x86_64) platform=linux-x64 ;;
  aarch64 | arm64) platform=linux-arm64 ;;
  *) echo "agree: no ccusage build for $(uname -m)" >&2; exit 1 ;;
esac
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
npm install --silent --no-save --no-audit --no-fund --prefix "$tmp/npm" "@ccusage/ccusage-$platform@20.0.24" >&2
ccusage="$tmp/npm/node_modules/@ccusage/ccusage-$platform/bin/ccusage"
# The platform package is not installed as a command: its binary may come without its mode.
chmod +x "$ccusage"
exec python3 "$here/scripts/agree.py" --ccusage "$ccusage" --mctl "$mctl" --shared "$shared"
