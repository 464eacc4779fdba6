#!/usr/bin/env python3
"""`mctl search` beside ripgrep, in one run on the same warm tree.

A runs directory of BENCH_SEARCH_RUNS runs (1,000) holding BENCH_SEARCH_MB (1024) MiB of value
files in all, each retained result's text in its transcript too, as the harness writes them.
Printed, each the median of 3 with the page cache warm and the index warm:
  - `mctl search -- NEEDLE`           vs `rg -F NEEDLE DIR`        (target <= 1.2x, aim <= 1.0x)
  - `mctl search --regex RE`          vs `rg RE DIR`
  - time to the first hit of each.
The hits are checked, not only timed: mctl's value hits must be exactly rg's hits in the value
files. MCTL names the binary (else a release build is made); BENCH_DIR keeps the data.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = int(os.environ.get("BENCH_SEARCH_RUNS", "1000"))
MB = int(os.environ.get("BENCH_SEARCH_MB", "1024"))
BASE = os.environ.get("BENCH_DIR", os.path.join(ROOT, "target", "bench-search"))
NEEDLE = "FATAL deadlock"
REGEX = r"ERROR worker-\d+ FATAL dead[a-z]+"
VALUES_PER_RUN = 4


def mctl_path():
    if os.environ.get("MCTL"):
        return os.environ["MCTL"]
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "mctl"], cwd=ROOT, check=True)
    return os.path.join(ROOT, "target", "release", "mctl")


def value_id(call):
    # Tool call ids here are plain ASCII words: their value id is the id itself (spec B.2).
    return call


def generate(root):
    """Runs of a user message and VALUES_PER_RUN retained log outputs each."""
    os.makedirs(root, exist_ok=True)
    per_value = MB * 1024 * 1024 // (RUNS * VALUES_PER_RUN)
    levels = ["INFO", "DEBUG", "INFO", "WARN", "INFO"]
    lines = [
        f"2026-11-29T10:{i % 60:02d}:{i % 57:02d}.{i % 997:03d}Z {levels[i % 5]} worker-{i % 16} "
        f"request id=req_{i:08x} path=/v1/items/{i % 9973} status=200 took={i % 431}ms\n"
        for i in range(4000)
    ]
    block = "".join(lines)
    rare = "2026-11-29T11:00:00.000Z ERROR worker-3 FATAL deadlock detected in pool=payments\n"
    old = 1_700_000_000_000
    n = 0
    for r in range(RUNS):
        rid = f"run_{old + r * 1000}_{r:08x}"
        ts = old + r * 1000
        events = []

        def ev(e):
            nonlocal ts
            ts += 1
            e.update(runId=rid, ts=ts)
            events.append(json.dumps({"schemaVersion": 1, "runId": rid, "seq": len(events), "ts": ts, "event": e}))

        ev({"type": "run_started", "cwd": "/work", "provider": "anthropic", "model": "claude-sonnet-4-5"})
        ev({"type": "user_message", "messageId": "u", "text": f"task {r}: find the flaky test", "attachments": []})
        vdir = os.path.join(root, rid + ".values")
        os.makedirs(vdir, exist_ok=True)
        for i in range(VALUES_PER_RUN):
            n += 1
            call = f"toolu_{r:06d}_{i}"
            text = (block * (per_value // len(block) + 1))[:per_value]
            text = text[: text.rfind("\n") + 1]
            if n % 25 == 0:  # a rare line in one value of 25, in the middle
                mid = text.find("\n", len(text) // 2) + 1
                text = text[:mid] + rare + text[mid:]
            ev({"type": "tool_call_started", "toolCallId": call, "name": "bash", "input": {"command": "cargo test"}})
            ev({"type": "tool_call_finished", "toolCallId": call, "result": {"ok": True, "content": text}})
            with open(os.path.join(vdir, value_id(call) + ".txt"), "w") as f:
                f.write(text)
        ev({"type": "run_result", "result": {"status": "done"}})
        with open(os.path.join(root, rid + ".jsonl"), "w") as f:
            f.write("\n".join(events) + "\n")


def timed(cmd, env=None):
    """Wall seconds of `cmd` (its output read and counted), and seconds to its first line."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
    first = None
    lines = []
    for line in p.stdout:
        if first is None:
            first = time.perf_counter() - start
        lines.append(line)
    p.wait()
    return time.perf_counter() - start, first, lines, p.returncode


def median3(cmd, env=None):
    runs = [timed(cmd, env) for _ in range(3)]
    wall = statistics.median(r[0] for r in runs)
    first = statistics.median(r[1] if r[1] is not None else r[0] for r in runs)
    return wall, first, runs[-1][2], runs[-1][3]


def main():
    if not shutil.which("rg"):
        sys.exit("bench/search.py: ripgrep (rg) is the baseline and is not installed")
    mctl = mctl_path()
    root = os.path.join(BASE, f"runs-{RUNS}-{MB}")
    if not os.path.exists(root + ".complete"):
        print(f"generating {RUNS} runs with {MB} MiB of value files...", file=sys.stderr, flush=True)
        shutil.rmtree(root, ignore_errors=True)
        generate(root)
        open(root + ".complete", "w").close()
    env = dict(os.environ, MCTL_CACHE_DIR=os.path.join(BASE, "cache"))
    env.pop("MCTL_NO_INDEX", None)
    base = [mctl, "--runs-dir", root]
    subprocess.run(base + ["runs", "--json"], env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cat"] + [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs],
                   stdout=subprocess.DEVNULL, check=True)  # the page cache warm for all alike
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)
    print(f"search over {RUNS} runs, {MB} MiB of value files, {size / 2**20:.0f} MiB in all")
    print(f"{'':44} {'mctl':>9} {'rg':>9} {'ratio':>7} {'mctl 1st':>9} {'rg 1st':>9}")
    for label, ours, theirs in [
        (f"literal {NEEDLE!r}", base + ["search", "--json", "--", NEEDLE], ["rg", "-F", "--json", NEEDLE, root]),
        (f"regex {REGEX!r}", base + ["search", "--json", "--regex", REGEX], ["rg", "--json", REGEX, root]),
    ]:
        ow, of, olines, orc = median3(ours, env)
        tw, tf, tlines, trc = median3(theirs)
        check(olines, tlines, label)
        print(f"{label:44} {ow:8.3f}s {tw:8.3f}s {ow / tw:6.2f}x {of:8.3f}s {tf:8.3f}s")
    # For scale: rg given only the value directories (it then skips the transcripts, which
    # mctl reads for their messages, inputs and results).
    values = [os.path.join(root, d) for d in sorted(os.listdir(root)) if d.endswith(".values")]
    vw, vf, _, _ = median3(["rg", "-F", "--json", NEEDLE] + values)
    print(f"{'rg -F on the value directories alone':44} {'':>9} {vw:8.3f}s {'':>7} {'':>9} {vf:8.3f}s")


def check(ours, theirs, label):
    """mctl's value hits are exactly rg's matches in value files (its transcript hits, in the
    same texts' copies, are the transcripts' business)."""
    got = sorted(
        (h["valueId"], h["valueLine"])
        for h in map(json.loads, ours)
        if h.get("kind") == "value"
    )
    want = sorted(
        (os.path.basename(m["data"]["path"]["text"])[:-4], m["data"]["line_number"])
        for m in map(json.loads, theirs)
        if m["type"] == "match" and ".values/" in m["data"]["path"]["text"]
    )
    if got != want or not got:
        sys.exit(f"{label}: mctl found {len(got)} value hits, rg {len(want)}")


if __name__ == "__main__":
    main()
