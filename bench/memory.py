#!/usr/bin/env python3
"""Peak memory of every command and served request on a run with one huge tool result.

The harness writes a result's full text into its transcript line as well as into its value
file, so one BENCH_MB (300) MB tool output is a 300 MB line. This builds that run (a retained
result of that size, its value file, a peek of it, a small run beside it) and prints the peak
RSS (from wait4) of `mctl runs`, `show`, `stub`, `full`, `peek`, `coverage`, `resume`,
`export --format html`, `export --values full`, `search` and `diff`, all with --no-index; then
of `mctl serve` (its VmHWM and VmRSS from /proc) under one `full` range request, eight at once,
`GET` of the run, the export download with every value in full, and 20 `/api/events` streams
opened and closed.

Each figure is printed beside the same command on a run whose result is BENCH_SMALL_MB (1) MB:
the baseline. With BENCH_ALLOWANCE_MIB set, the script fails when a command's peak, or what one
request (one, eight at once, the run's detail) adds to the idle server, exceeds its baseline by
more than that allowance; and when the 20 streams take more than 256 MiB above idle, or the
server stays more than 64 MiB above idle once they closed (the test command runs it so at
30 MB): memory must follow what is shown, not how big a result is.

MCTL names the binary (default target/release/mctl, built here); BENCH_DIR (target/bench-memory)
holds the data, kept between runs.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from measure import measured, mctl_binary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MB = int(os.environ.get("BENCH_MB", "300"))
SMALL_MB = int(os.environ.get("BENCH_SMALL_MB", "1"))
BASE = os.environ.get("BENCH_DIR", os.path.join(ROOT, "target", "bench-memory"))
ALLOWANCE = os.environ.get("BENCH_ALLOWANCE_MIB")
RUN = "run_1700000000000_0000big1"
CALL = "toolu_big_output"


def line_of(n):
    """One line of the output: build-log-like, some with an error word, some non-ASCII."""
    if n % 997 == 0:
        return f"error[E0{n % 1000:03d}]: mismatched types in crate_{n % 17} — line {n}\n"
    return f"{n:09d} compiling module_{n % 4096} ok \"quoted\" tab\there é\n"


def build(root, mb):
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker):
        return
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, RUN + ".values"))
    target = mb * 1_000_000
    value_path = os.path.join(root, RUN + ".values", CALL + ".txt")
    with open(value_path, "w", encoding="utf-8") as f:
        n, size = 1, 0
        while size < target:
            chunk = "".join(line_of(i) for i in range(n, n + 10_000))
            f.write(chunk)
            size += len(chunk.encode())
            n += 10_000
    with open(value_path, encoding="utf-8") as f:
        content = f.read()
    ts = [1_700_000_000_000]
    lines = []

    def ev(e):
        ts[0] += 1000
        lines.append(json.dumps({"schemaVersion": 1, "runId": RUN, "seq": len(lines), "ts": ts[0],
                                 "event": dict(e, runId=RUN, ts=ts[0])}))

    ev({"type": "run_started", "cwd": "/work", "mode": "goal", "provider": "anthropic",
        "model": "claude-sonnet-4-5"})
    ev({"type": "user_message", "messageId": "u1", "text": "build everything and tell me what failed",
        "attachments": []})
    ev({"type": "assistant_message", "messageId": "a1",
        "content": [{"type": "tool_call", "toolCallId": CALL, "name": "bash", "input": {"command": "make"}}],
        "usage": {"promptTokens": 1200, "completionTokens": 40}})
    ev({"type": "tool_call_started", "toolCallId": CALL, "name": "bash", "input": {"command": "make"}})
    ev({"type": "tool_call_finished", "toolCallId": CALL,
        "result": {"ok": False, "content": content, "metadata": None}})
    del content
    peek = "toolu_peek_1"
    ev({"type": "assistant_message", "messageId": "a2",
        "content": [{"type": "tool_call", "toolCallId": peek, "name": "peek_value",
                     "input": {"id": CALL, "start": 1, "end": 40}}]})
    ev({"type": "tool_call_started", "toolCallId": peek, "name": "peek_value",
        "input": {"id": CALL, "start": 1, "end": 40}})
    with open(value_path, encoding="utf-8") as f:
        head = "".join(f.readline() for _ in range(40))
    ev({"type": "tool_call_finished", "toolCallId": peek, "result": {"ok": True, "content": head}})
    ev({"type": "run_result", "result": {"status": "done"}})
    with open(os.path.join(root, RUN + ".jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    small = "run_1700000001000_00small1"
    with open(os.path.join(root, small + ".jsonl"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"schemaVersion": 1, "runId": small, "seq": 0, "ts": 1_700_000_001_000,
                            "event": {"type": "user_message", "text": "a small run", "attachments": []}}) + "\n")
    open(marker, "w").close()


def commands(root):
    d = ["--runs-dir", root, "--no-index"]
    return [
        ("runs --json", ["runs", "--json", *d]),
        ("show --json", ["show", RUN, "--json", *d]),
        ("stub", ["stub", RUN, CALL, *d]),
        ("full", ["full", RUN, CALL, *d]),
        ("peek --lines 1000-1400", ["peek", RUN, CALL, "--lines", "1000-1400", *d]),
        ("coverage --json", ["coverage", RUN, "--json", *d]),
        ("resume --json", ["resume", RUN, "--json", *d]),
        ("export --format html", ["export", RUN, "--format", "html", *d]),
        ("export --values full", ["export", RUN, "--values", "full", *d]),
        ("search mismatched", ["search", "mismatched", "--json", *d]),
        ("diff (the run with itself)", ["diff", RUN, RUN, "--json", *d]),
    ]


def peak_mib(binary, args, env):
    """Peak RSS in MiB of one command, its output thrown away."""
    return measured([binary, *args], env, keep_output=False)[1]


def proc_mib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def reset_peak(pid):
    # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+).
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def serve_figures(binary, root, env):
    token = "bench-memory-token-0123456789"
    p = subprocess.Popen([binary, "serve", "--bind", "127.0.0.1:0", "--json", "--token", token,
                          "--runs-dir", root, "--no-index"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        info = json.loads(p.stdout.readline())
        base = "http://" + info["bind"]
        auth = {"Authorization": f"Bearer {token}"}

        def get(path, limit=None):
            req = urllib.request.Request(base + path, headers=auth)
            with urllib.request.urlopen(req, timeout=600) as r:
                return r.read(limit) if limit else r.read()

        get("/api/runs")
        time.sleep(0.5)
        idle = proc_mib(p.pid, "VmRSS")
        rows = [("serve: idle", idle)]

        def measure(label, work):
            reset_peak(p.pid)
            work()
            rows.append((label, proc_mib(p.pid, "VmHWM") - idle))

        full = f"/api/runs/{RUN}/results/{CALL}/full?offset=1000&limit=4096"
        measure("serve: one full range request (above idle)", lambda: get(full))

        def eight():
            ts = [threading.Thread(target=get, args=(full,)) for _ in range(8)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()

        measure("serve: eight at once (above idle)", eight)
        measure("serve: GET /api/runs/{run} (above idle)", lambda: get(f"/api/runs/{RUN}"))

        def download():
            # Read and thrown away a megabyte at a time: this process holds none of it.
            req = urllib.request.Request(base + f"/api/runs/{RUN}/export?values=full", headers=auth)
            with urllib.request.urlopen(req, timeout=600) as r:
                while r.read(1 << 20):
                    pass

        measure("serve: export download, full (above idle)", download)

        def streams():
            opened = []
            for _ in range(20):
                req = urllib.request.Request(base + "/api/events", headers=auth)
                opened.append(urllib.request.urlopen(req, timeout=600))
            for r in opened:
                r.read(1)
            time.sleep(1.0)
            for r in opened:
                r.close()

        measure("serve: 20 /api/events streams (above idle)", streams)
        time.sleep(2.0)
        rows.append(("serve: after they closed (above idle)", proc_mib(p.pid, "VmRSS") - idle))
        return rows
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)


def main():
    binary = mctl_binary()
    big_root = os.path.join(BASE, f"runs-{MB}mb")
    small_root = os.path.join(BASE, f"runs-{SMALL_MB}mb")
    print(f"building a run with a {MB} MB result (and a {SMALL_MB} MB baseline)...", file=sys.stderr)
    build(big_root, MB)
    build(small_root, SMALL_MB)
    cache = tempfile.mkdtemp(prefix="bench-memory-cache-")
    env = dict(os.environ, MCTL_CACHE_DIR=cache, MCTL_CONFIG_DIR=cache)
    env.pop("MCTL_RUNS_DIR", None)
    failed = []
    print(f"{'command':44} {'%d MB' % SMALL_MB:>10} {'%d MB' % MB:>10}   peak RSS, MiB")
    for (label, args_small), (_, args_big) in zip(commands(small_root), commands(big_root)):
        small = peak_mib(binary, args_small, env)
        big = peak_mib(binary, args_big, env)
        print(f"{'mctl ' + label:44} {small:10.1f} {big:10.1f}   ({big / small:.2f}x)")
        if ALLOWANCE and big - small > float(ALLOWANCE):
            failed.append(f"mctl {label}: {big:.1f} MiB, {big - small:.1f} over its baseline")
    small_serve = dict(serve_figures(binary, small_root, env))
    limits = {"serve: 20 /api/events streams (above idle)": 256.0,
              "serve: after they closed (above idle)": 64.0}
    for label, mib in serve_figures(binary, big_root, env):
        base = small_serve.get(label, 0.0)
        print(f"{label:44} {base:10.1f} {mib:10.1f}")
        if not ALLOWANCE or label == "serve: idle":
            continue
        if label in limits:
            if mib > limits[label]:
                failed.append(f"{label}: {mib:.1f} MiB, over {limits[label]:.0f}")
        elif mib - base > float(ALLOWANCE):
            failed.append(f"{label}: {mib:.1f} MiB, {mib - base:.1f} over its baseline")
    shutil.rmtree(cache, ignore_errors=True)
    if failed:
        sys.exit("memory grows with the result's size:\n  " + "\n  ".join(failed))


if __name__ == "__main__":
    main()
