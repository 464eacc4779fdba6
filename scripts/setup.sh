#!/usr/bin/env bash
# Installs what Mission Control needs to build, run and test, on Debian or Ubuntu: system
# libraries for the desktop app (WebKitGTK), Xvfb and WebKitWebDriver for its end-to-end tests,
# chromium and chromedriver for the browser-mode tests, what builds and checks the Debian package
# (dpkg-dev, desktop-file-utils, appstream, x11-utils), the Rust toolchain, the UI's npm packages,
# tauri-driver and s3s-fs (an S3 server the tests start). Idempotent: it installs only what
# is missing, so running it again costs a few checks.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

apt_packages=(
  build-essential pkg-config file curl ca-certificates python3 time
  libssl-dev libxdo-dev libwebkit2gtk-4.1-dev librsvg2-dev
  xvfb xauth webkit2gtk-driver
  ripgrep chromium chromium-driver
  dpkg-dev desktop-file-utils appstream x11-utils procps
)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node > /dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The UI's build tool (Vite) runs on Node.js 20.19+ or 22.12+; an older one (Debian 12 ships 18)
# fails later with an obscure error, so say it here.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
  process.exit((a === 20 && b >= 19) || (a === 22 && b >= 12) || a > 22 ? 0 : 1)'; then
  echo "setup: the UI needs Node.js 20.19 or later (this machine has $(node --version)); install a newer one and run again" >&2
  exit 1
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
  rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
fi
export PATH="$HOME/.cargo/bin:$PATH"

# tauri-driver bridges WebDriver to the app's webview (Debian's WebKitWebDriver underneath).
if ! command -v tauri-driver > /dev/null; then
  echo "setup: installing tauri-driver" >&2
  cargo install tauri-driver --version 2.1.0 --locked
fi

# s3s-fs is a real S3 server over a local folder: the object-storage tests start it on
# loopback (0.14.1: later releases need a newer Rust than the one installed here).
if ! command -v s3s-fs > /dev/null; then
  echo "setup: installing s3s-fs (an S3 server for the object-storage tests)" >&2
  cargo install s3s-fs --version 0.14.1 --features binary --locked
fi

# The UI's packages, reinstalled only when the lock file changed.
stamp="$root/ui/node_modules/.installed-lock"
if [ ! -f "$stamp" ] || ! cmp -s "$root/ui/package-lock.json" "$stamp"; then
  echo "setup: installing the UI's npm packages" >&2
  (cd "$root/ui" && npm ci --no-audit --no-fund)
  cp "$root/ui/package-lock.json" "$stamp"
fi
