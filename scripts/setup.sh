#!/usr/bin/env bash
# Installs what Mission Control needs to build and test, on Debian or Ubuntu. Idempotent: it
# installs only what is missing, so running it again costs a few checks.
set -euo pipefail

need_apt=()
command -v cc > /dev/null || need_apt+=(build-essential)
command -v pkg-config > /dev/null || need_apt+=(pkg-config)
command -v curl > /dev/null || need_apt+=(curl ca-certificates)
command -v python3 > /dev/null || need_apt+=(python3)
[ -x /usr/bin/time ] || need_apt+=(time)

if [ ${#need_apt[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${need_apt[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${need_apt[@]}"
fi

if ! command -v cargo > /dev/null && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo > /dev/null; then
  echo "setup: installing the Rust toolchain with rustup" >&2
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component rustfmt,clippy
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if command -v rustup > /dev/null; then
  # rustfmt and clippy are part of the test command.
  rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
fi
