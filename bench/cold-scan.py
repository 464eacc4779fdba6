#!/usr/bin/env python3
"""A cold first scan on one core against every core, beside the bytes read by `cat`.

Builds a Claude Code projects directory of BENCH_SESSIONS (2,000) sessions: copies of the real
session files in ../shared/data/agents/claude-code (BENCH_SHARED) when they are there, each under a
session id of its own, else bench/agents-scale.py's generated ones (which ccusage does not count:
they carry no request ids). And a harness runs directory of BENCH_RUNS (5,000) runs of about 20 KB. Then, for each,
in one run on the same warm files (median of 3 each):
  - `cat` of every file (the floor: reading the bytes);
  - `mctl runs --json --no-index --jobs 1` (one core) and `--no-index` (every core);
  - a cold index build (a fresh cache each time), `--jobs 1` and every core;
  - with CCUSAGE naming a ccusage binary, `ccusage claude session --json --offline` on the
    Claude Code store (the tool the figures are compared with);
and checks that every answer equals the one-core answer, byte for byte. The peak RSS of each
mctl command is printed beside its time.

MCTL names the binary (default target/release/mctl, built here); the data lives in BENCH_DIR
(target/bench-cold-scan), kept between runs.
"""

import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from measure import measured, mctl_binary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SESSIONS = int(os.environ.get("BENCH_SESSIONS", "2000"))
RUNS = int(os.environ.get("BENCH_RUNS", "5000"))
BASE = os.environ.get("BENCH_DIR", os.path.join(ROOT, "target", "bench-cold-scan"))
CCUSAGE = os.environ.get("CCUSAGE")
OLD_MS = 1_700_000_000_000


SHARED = os.environ.get("BENCH_SHARED",
                        os.path.join(ROOT, "..", "shared", "data", "agents", "claude-code"))


def real_sessions():
    if not os.path.isdir(SHARED):
        return []
    return sorted(os.path.join(SHARED, f) for f in os.listdir(SHARED) if f.endswith(".jsonl"))


def claude_store(root):
    real = real_sessions()
    if real:
        for i in range(SESSIONS):
            project = os.path.join(root, f"-home-user-project-{i % 20:02d}")
            os.makedirs(project, exist_ok=True)
            shutil.copyfile(real[i % len(real)],
                            os.path.join(project, f"{i:08x}-0000-4000-8000-{i:012x}.jsonl"))
        return
    spec = importlib.util.spec_from_file_location(
        "agents_scale", os.path.join(ROOT, "bench", "agents-scale.py"))
    agents = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agents)
    agents.generate(root, SESSIONS)


def harness_store(root):
    os.makedirs(root, exist_ok=True)
    for r in range(RUNS):
        rid = f"run_{OLD_MS + r * 1000}_{r:08x}"
        ts = OLD_MS + r * 1000
        lines = []

        def ev(e):
            nonlocal ts
            ts += 1
            lines.append(json.dumps({"schemaVersion": 1, "runId": rid, "seq": len(lines), "ts": ts,
                                     "event": dict(e, runId=rid, ts=ts)}))

        ev({"type": "run_started", "cwd": "/work", "provider": "anthropic", "model": "claude-sonnet-4-5"})
        ev({"type": "user_message", "messageId": "u", "text": f"task {r}", "attachments": []})
        for i in range(12):
            call = f"toolu_{r:06d}_{i:03d}"
            ev({"type": "assistant_message", "messageId": f"a{i}",
                "content": [{"type": "tool_call", "toolCallId": call, "name": "read_file", "input": {"path": f"f{i}"}}],
                "usage": {"promptTokens": 1200 + i, "completionTokens": 40}})
            ev({"type": "tool_call_started", "toolCallId": call, "name": "read_file", "input": {"path": f"f{i}"}})
            ev({"type": "tool_call_finished", "toolCallId": call,
                "result": {"ok": True, "content": f"fn f{i}() {{}}\n" * 80}})
        ev({"type": "run_result", "result": {"status": "done"}})
        path = os.path.join(root, rid + ".jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.utime(path, ns=(ts * 1_000_000, ts * 1_000_000))


def build(name, make):
    root = os.path.join(BASE, name)
    if not os.path.exists(root + ".complete"):
        print(f"generating {name}...", file=sys.stderr)
        shutil.rmtree(root, ignore_errors=True)
        make(root)
        open(root + ".complete", "w").close()
    return root


def median_of_3(run):
    results = [run() for _ in range(3)]
    times = [r[0] for r in results]
    return statistics.median(times), max(r[1] for r in results), results[-1][2]


def cat_seconds(root):
    files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    size = sum(os.path.getsize(f) for f in files)

    def run():
        start = time.perf_counter()
        subprocess.run(["xargs", "-0", "cat"], input="\0".join(files).encode(),
                       stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start, 0.0, b""

    return median_of_3(run)[0], size, len(files)


def scan(label, root, source, binary):
    cache = os.path.join(BASE, "cache")
    env = dict(os.environ, MCTL_CACHE_DIR=cache)
    env.pop("MCTL_NO_INDEX", None)
    env.pop("MCTL_JOBS", None)
    base = [binary, "--runs-dir", root, "--source", source, "runs", "--json"]
    cat, size, files = cat_seconds(root)
    print(f"\n{label}: {files} files, {size / 1e6:.0f} MB")
    print(f"{'cat of every file (reading the bytes)':<52} {cat:8.3f}s")
    rows = []
    answers = {}
    for name, args in [("--no-index --jobs 1", ["--no-index", "--jobs", "1"]),
                       ("--no-index (every core)", ["--no-index"])]:
        took, rss, out = median_of_3(lambda: measured([*base, *args], env))
        answers[name] = out
        rows.append((f"mctl runs --json {name}", took, rss))
    for name, args in [("cold index, --jobs 1", ["--jobs", "1"]),
                       ("cold index (every core)", [])]:
        def cold():
            shutil.rmtree(cache, ignore_errors=True)
            return measured([*base, *args], env)
        took, rss, out = median_of_3(cold)
        answers[name] = out
        rows.append((f"mctl runs --json, {name}", took, rss))
    one = answers["--no-index --jobs 1"]
    for name, out in answers.items():
        if out != one:
            sys.exit(f"{label}: `{name}` answers otherwise than one core without the index")
    for what, took, rss in rows:
        print(f"{what:<52} {took:8.3f}s  {rss:6.1f} MiB")
    single, every = rows[0][1], rows[1][1]
    print(f"ratio: every core / one core = {every / single:.2f}x; / cat = {every / cat:.1f}x")
    if CCUSAGE and source == "claude":
        with tempfile.TemporaryDirectory() as home:
            os.symlink(root, os.path.join(home, "projects"))
            cenv = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_")}
            cenv.update(HOME=home, CLAUDE_CONFIG_DIR=home)
            took, rss, _ = median_of_3(lambda: measured(
                [CCUSAGE, "claude", "session", "--json", "--offline"], cenv))
        print(f"{'ccusage claude session --json --offline':<52} {took:8.3f}s  {rss:6.1f} MiB")
        print(f"ratio: mctl every core / ccusage = {every / took:.2f}x")


def main():
    binary = mctl_binary()
    print(f"cores: {os.cpu_count()}")
    kind = "real" if real_sessions() else "generated"
    scan(f"{SESSIONS} Claude Code sessions ({kind})", build(f"claude-{kind}-{SESSIONS}", claude_store),
         "claude", binary)
    scan(f"{RUNS} harness runs", build(f"harness-{RUNS}", harness_store), "klide", binary)


if __name__ == "__main__":
    main()
