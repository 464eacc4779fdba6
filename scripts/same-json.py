#!/usr/bin/env python3
"""Whether two builds of mctl answer every read command byte for byte alike.

    scripts/same-json.py OLD_MCTL NEW_MCTL

Builds three stores in a temporary folder: the demo runs directory (written by OLD_MCTL, with
a fixed seed and clock), a Claude Code projects directory and a Codex sessions directory of
the real session files in ../shared/data/agents (when that folder is there), every file set
to an old time so no run counts as running. Then runs each read command with `--json` (and
`export` as Markdown) with both builds, each with its own empty cache folder and the index
off and on, and prints every command whose output or exit code differs. Exits 1 on any
difference, 0 when every answer is the same.

A refactoring that must not change what the user sees is checked with it: build the old
commit's mctl, then the new one, and compare.
"""

import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "agents"
OLD_TIME = 1_700_000_000  # Nov 2023: every run is long idle


def run(mctl, cache, args):
    env = dict(os.environ, MCTL_CACHE_DIR=str(cache), NO_COLOR="1")
    env.pop("MCTL_RUNS_DIR", None)
    p = subprocess.run([mctl, *args], capture_output=True, env=env, timeout=600)
    return p.returncode, p.stdout


def comparable(args, out):
    """What of an answer must be the same: search hits arrive in the order the workers find
    them (one JSON line each), so they are compared as a sorted list; an agent's cleanup
    forecast counts from the clock (`cutoffMs`), which moves between two runs, and a search's
    summary says how long it took (`elapsedMs`)."""
    if "search" in args:
        return b"\n".join(sorted(re.sub(rb'"elapsedMs":\d+,', b"", line)
                                  for line in out.splitlines()))
    if "gc" in args:
        return re.sub(rb'"cutoffMs": ?\d+', b"", out)
    return out


def age(folder):
    for p in Path(folder).rglob("*"):
        os.utime(p, (OLD_TIME, OLD_TIME), follow_symlinks=False)


def stores(work, mctl):
    out = []
    demo = work / "demo"
    subprocess.run([mctl, "demo", str(demo), "--now", "1700000000000"], check=True,
                   capture_output=True)
    age(demo)
    out.append(("demo", demo))
    if not SHARED.is_dir():
        print(f"note: {SHARED} is absent: only the demo directory is compared", file=sys.stderr)
        return out
    claude = work / "claude" / "projects" / "-home-ana-app"
    claude.mkdir(parents=True)
    for f in sorted((SHARED / "claude-code").glob("*.jsonl")):
        name = f.name
        at = name.rfind("agent-")
        shutil.copy(f, claude / (name[at:] if at >= 0 else name))
    age(claude.parent)
    out.append(("claude", claude.parent))
    codex = work / "codex" / "sessions" / "2026" / "05" / "11"
    codex.mkdir(parents=True)
    for f in sorted((SHARED / "codex").glob("*.jsonl")):
        shutil.copy(f, codex / f.name[f.name.find("rollout-"):])
    age(work / "codex")
    out.append(("codex", work / "codex" / "sessions"))
    return out


def commands(mctl, cache, store):
    """Every read command over `store`, as argument lists (without --runs-dir)."""
    code, listed = run(mctl, cache, ["--runs-dir", str(store), "--json", "--no-index", "runs"])
    runs = json.loads(listed) if code == 0 else []
    cmds = [["runs"], ["whatif", "--threshold", "8KiB,20KiB,1MiB"],
            ["search", "error"], ["search", "--regex", "fail(ed|ure)"],
            ["gc", "--older-than", "1d"], ["gc", "--orphans"], ["gc", "--strays"], ["pins"]]
    for r in runs:
        rid = r["id"]
        cmds += [["show", rid], ["coverage", rid], ["resume", rid],
                 ["export", rid, "--format", "md"]]
        code, shown = run(mctl, cache, ["--runs-dir", str(store), "--json", "--no-index",
                                        "show", rid])
        if code != 0:
            continue
        results = json.loads(shown).get("results", [])
        for res in results[:6]:
            call = res["toolCallId"]
            cmds += [["stub", rid, call], ["full", rid, call],
                     ["peek", rid, call, "--lines", "1-40"],
                     ["peek", rid, call, "--query", "error"]]
    return cmds


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = (str(Path(a).resolve()) for a in sys.argv[1:])
    work = Path(tempfile.mkdtemp(prefix="same-json-"))
    try:
        differ = 0
        total = 0
        for name, store in stores(work, old):
            caches = {b: work / f"cache-{name}-{i}" for i, b in enumerate((old, new))}
            for index in (["--no-index"], []):
                for args in commands(old, caches[old], store):
                    full = ["--runs-dir", str(store), "--json", *index, *args]
                    a = run(old, caches[old], full)
                    b = run(new, caches[new], full)
                    a, b = (a[0], comparable(args, a[1])), (b[0], comparable(args, b[1]))
                    total += 1
                    if a != b:
                        differ += 1
                        print(f"DIFFERS [{name}] mctl {' '.join(args)} {' '.join(index)}"
                              f" (exit {a[0]} vs {b[0]}, {len(a[1])} vs {len(b[1])} bytes)")
        print(f"{total} answers compared, {differ} differ")
        return 1 if differ else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
