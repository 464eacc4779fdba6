#!/usr/bin/env bash
# Installs the Debian package as a user would (`apt-get install ./...deb`, its dependencies
# resolved) and checks it, then removes it. scripts/test.sh runs it after building the package
# with scripts/build-app.sh --deb. Needs root (or sudo): it installs and removes a package.
#
# 1. Upgrade: an older version (this package as 0.0.1, also shipping the files the package had
#    before: the binary mission-control-app and "Mission Control.desktop") is installed, then
#    this one over it; every file of the old version that the new one does not list is gone.
# 2. What is installed: both binaries print the same version and commit, are stripped and under
#    their size limits (app 40 MB; mctl 25 MB, as it carries an S3 client, TLS included); the
#    man pages, completions, desktop entry, metainfo and icons are in place and valid.
# 3. It works: the installed mctl writes a demo and lists it; the installed app starts under
#    Xvfb on that demo, maps its window with the desktop entry's StartupWMClass and lists the
#    runs mctl lists (ui/e2e/installed-app.mjs, through WebDriver).
# 4. Removal: after `apt-get purge` no file the package listed is left, nor anything named
#    after it in /usr/bin, /usr/share or /etc.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
# tauri-driver, for the installed app's window check, is where setup.sh installs it.
export PATH="$HOME/.cargo/bin:$PATH"
app_id=app.missioncontrol.desktop
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)"
deb="$target/release/bundle/deb/mission-control_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { echo "package check: $deb is missing; run scripts/build-app.sh --deb" >&2; exit 1; }

fail() { echo "package check: $*" >&2; exit 1; }
say() { echo "package check: $*" >&2; }
# Without Recommends (xdg-utils): what is installed is exactly the package and what it depends on.
apt() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get -y -q "$@" > "$scratch/apt.log" 2>&1 || { cat "$scratch/apt.log" >&2; fail "apt-get $* failed"; }; }
install_deb() { apt install --no-install-recommends "$1"; }
purge() { apt purge mission-control; }
installed_version() { dpkg-query -W -f='${db:Status-Abbrev} ${Version}' mission-control 2>/dev/null || true; }
# The files (not directories) of a listing that are still on disk.
left_on_disk() {
  while IFS= read -r p; do
    if [ -L "$p" ] || { [ -e "$p" ] && [ ! -d "$p" ]; }; then echo "$p"; fi
  done
}

scratch="$(mktemp -d "${TMPDIR:-/tmp}/mc-package-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
# A run of the test command before may have left it installed.
case "$(installed_version)" in ""|un*) ;; *) say "removing an earlier install"; purge ;; esac

# 1. Upgrade over an older version.
dpkg-deb -R "$deb" "$scratch/old"
sed -i 's/^Version: .*/Version: 0.0.1/' "$scratch/old/DEBIAN/control"
cp "$scratch/old/usr/bin/mission-control" "$scratch/old/usr/bin/mission-control-app"
cp "$scratch/old/usr/share/applications/$app_id.desktop" "$scratch/old/usr/share/applications/Mission Control.desktop"
dpkg-deb --root-owner-group --build "$scratch/old" "$scratch/old.deb" > /dev/null
install_deb "$scratch/old.deb"
[[ "$(installed_version)" == "ii  0.0.1" ]] || fail "the old version did not install: $(installed_version)"
dpkg -L mission-control | sort > "$scratch/old.list"
install_deb "$deb"
[[ "$(installed_version)" == "ii  $version" ]] || fail "the upgrade did not install $version: $(installed_version)"
dpkg -L mission-control | sort > "$scratch/new.list"
strays="$(comm -23 "$scratch/old.list" "$scratch/new.list" | left_on_disk)"
[ -z "$strays" ] || fail "left behind by the upgrade: $strays"
[ "$(comm -23 "$scratch/old.list" "$scratch/new.list" | wc -l)" -ge 2 ] || fail "the old version's own files were not listed"
say "upgrade from 0.0.1 to $version: $(wc -l < "$scratch/old.list") paths before, $(wc -l < "$scratch/new.list") after, none left behind"

# 2. What is installed.
# The installed binaries, never another mctl on PATH; the commit is the one the build recorded.
built="$("$target/release/mctl" --version)"
[ "$(/usr/bin/mctl --version)" = "$built" ] || fail "mctl --version: $(/usr/bin/mctl --version), built: $built"
[[ "$built" == "mctl $version ("*")" ]] || fail "mctl --version names no version and commit: $built"
[ "$(/usr/bin/mission-control --version)" = "mission-control ${built#mctl }" ] \
  || fail "mission-control --version: $(/usr/bin/mission-control --version)"
for b in /usr/bin/mission-control /usr/bin/mctl; do
  file -b "$b" | grep -q ', stripped' || fail "$b is not stripped: $(file -b "$b")"
done
app_bytes="$(stat -c %s /usr/bin/mission-control)"
mctl_bytes="$(stat -c %s /usr/bin/mctl)"
[ "$app_bytes" -lt 40000000 ] || fail "/usr/bin/mission-control is $app_bytes bytes (limit 40 MB)"
[ "$mctl_bytes" -lt 25000000 ] || fail "/usr/bin/mctl is $mctl_bytes bytes (limit 25 MB)"
grep -q '^\.TH mctl 1' <(zcat /usr/share/man/man1/mctl.1.gz) || fail "mctl.1 is not a manual page"
[ -f /usr/share/man/man1/mctl-gc.1.gz ] || fail "no manual page for mctl gc"
bash -c 'source /usr/share/bash-completion/completions/mctl && complete -p mctl' > /dev/null || fail "the bash completion does not load"
grep -q 'serve' /usr/share/zsh/vendor-completions/_mctl || fail "the zsh completion lacks the commands"
grep -q 'complete -c mctl' /usr/share/fish/vendor_completions.d/mctl.fish || fail "the fish completion lacks the commands"
desktop-file-validate "/usr/share/applications/$app_id.desktop" || fail "the desktop entry is not valid"
appstreamcli validate --no-net "/usr/share/metainfo/$app_id.metainfo.xml" > "$scratch/appstream.log" 2>&1 \
  || { cat "$scratch/appstream.log" >&2; fail "the metainfo is not valid"; }
for size in 32x32 128x128 256x256 512x512; do
  [ -f "/usr/share/icons/hicolor/$size/apps/$app_id.png" ] || fail "no $size icon"
done
[ -f /usr/share/doc/mission-control/copyright ] || fail "no copyright file"
installed_kib="$(dpkg-query -W -f='${Installed-Size}' mission-control)"
say "installed: mission-control $app_bytes bytes, mctl $mctl_bytes bytes, Installed-Size $installed_kib KiB, package $(stat -c %s "$deb") bytes"

# 3. It works, as installed.
/usr/bin/mctl demo "$scratch/demo" --now "$(date +%s)000" > /dev/null
/usr/bin/mctl --runs-dir "$scratch/demo" runs --json > "$scratch/runs.json"
python3 -c 'import json,sys; ids=[r["id"] for r in json.load(open(sys.argv[1]))]; assert ids, "no runs"; json.dump(ids, open(sys.argv[2], "w"))' \
  "$scratch/runs.json" "$scratch/ids.json"
say "the installed mctl lists $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$scratch/ids.json") demo runs"
wm_class="$(sed -n 's/^StartupWMClass=//p' "/usr/share/applications/$app_id.desktop")"
(cd "$root/ui" && MC_APP=/usr/bin/mission-control xvfb-run -a -s "-screen 0 1440x900x24" \
  node e2e/installed-app.mjs "$scratch/demo" "$scratch/ids.json" "$wm_class" "$target/installed-app.png")

# 4. Removal.
purge
[ -z "$(installed_version | grep -v '^un')" ] || fail "still known to dpkg after purge: $(installed_version)"
left="$(left_on_disk < "$scratch/new.list")"
[ -z "$left" ] || fail "left behind by apt-get purge: $left"
named="$(find /usr/bin /usr/share /etc -xdev \( -name 'mission-control*' -o -name 'mctl*' -o -name "$app_id*" \) 2>/dev/null || true)"
[ -z "$named" ] || fail "left behind by apt-get purge: $named"
say "removed: nothing left of its $(wc -l < "$scratch/new.list") paths"
