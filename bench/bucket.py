#!/usr/bin/env python3
"""A runs directory in object storage, against a real S3 server on loopback (s3s-fs).

Builds BENCH_RUNS (10,000) small runs and one run whose retained value is BENCH_BIG_MB (300) MB,
pushes them with `mctl push`, and prints, each the median of three rounds:
  - the baseline: one paginated ListObjectsV2 pass over the prefix (Python, the standard
    library's HTTP client on one kept-alive connection, SigV4 signed here), timed in-process;
  - `mctl runs --json` on the bucket, cold (an empty cache folder: every object fetched) and
    warm (the mirror and index kept, nothing changed: one LIST and no GET), with the ratio of
    the warm listing to the LIST pass (target: at most 2x);
  - `mctl push` of the unchanged directory (target: 0 uploads, and no request but the LIST);
  - `mctl peek` of the last 400 lines of the big value (target: at most 2 MiB received), beside
    `sed -n` of the same lines of the local file.
Requests and bytes are mctl's own count (`MCTL_LOG=info`: its "object storage traffic" line).
The bucket's listing must equal the directory's, byte for byte but for paths, and the peek the
local peek: the benchmark exits non-zero otherwise, or when a target is missed.

MCTL names the binary (default: the release build, built here); S3S_FS the server (default: on
PATH or in ~/.cargo/bin); the data lives in BENCH_DIR (target/bench-bucket), rebuilt each run.
"""

import hashlib
import hmac
import html
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
from datetime import datetime, timezone

from measure import measured, mctl_binary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = int(os.environ.get("BENCH_RUNS", "10000"))
BIG_MB = int(os.environ.get("BENCH_BIG_MB", "300"))
BASE = os.environ.get("BENCH_DIR", os.path.join(ROOT, "target", "bench-bucket"))
ROUNDS = 3
ACCESS, SECRET, REGION, BUCKET, PREFIX = "bench-access", "bench-secret", "us-east-1", "bench", "runs"
OLD_MS = 1_700_000_000_000


def s3s_fs():
    if os.environ.get("S3S_FS"):
        return os.environ["S3S_FS"]
    for d in os.environ.get("PATH", "").split(os.pathsep) + [os.path.expanduser("~/.cargo/bin")]:
        p = os.path.join(d, "s3s-fs")
        if os.path.isfile(p):
            return p
    sys.exit("s3s-fs is not installed: scripts/setup.sh installs it")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def envelope(run, seq, ts, event):
    event = dict(event, runId=run, ts=ts)
    return json.dumps({"schemaVersion": 1, "runId": run, "seq": seq, "ts": ts, "event": event})


def build(runs_dir):
    os.makedirs(runs_dir)
    for r in range(RUNS):
        run = f"run_{OLD_MS + r * 1000}_{r:08x}"
        ts = OLD_MS + r * 1000
        lines = [
            envelope(run, 0, ts, {"type": "user_message", "messageId": "u", "text": f"Task {r}", "attachments": []}),
            envelope(run, 1, ts + 1, {"type": "tool_call_started", "toolCallId": "toolu_1", "name": "bash", "input": {"command": "ls"}, "summary": "ls"}),
            envelope(run, 2, ts + 2, {"type": "tool_call_finished", "toolCallId": "toolu_1", "result": {"ok": True, "content": "a\nb\n", "metadata": None}}),
            envelope(run, 3, ts + 3, {"type": "run_result", "result": {"status": "done"}}),
        ]
        path = os.path.join(runs_dir, f"{run}.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.utime(path, ns=(ts * 1_000_000, ts * 1_000_000))
    # The big run: its value file and its transcript's copy of the same text.
    run, call = "run_big_value", "toolu_big_log"
    block = "".join(f"2026-11-29T10:00:{i % 60:02d}Z INFO worker-{i % 8} handled request {i} in {i % 97} ms\n" for i in range(1000))
    reps = max(1, BIG_MB * 1024 * 1024 // len(block))
    os.makedirs(os.path.join(runs_dir, f"{run}.values"))
    escaped = json.dumps(block)[1:-1]
    head = envelope(run, 2, OLD_MS + 2, {"type": "tool_call_finished", "toolCallId": call, "result": {"ok": True, "content": "@@", "metadata": None}})
    before, after = head.split("@@")
    with open(os.path.join(runs_dir, f"{run}.values", f"{call}.txt"), "w") as value, \
            open(os.path.join(runs_dir, f"{run}.jsonl"), "w") as t:
        t.write(envelope(run, 0, OLD_MS, {"type": "user_message", "messageId": "u", "text": "Summarize the log.", "attachments": []}) + "\n")
        t.write(envelope(run, 1, OLD_MS + 1, {"type": "tool_call_started", "toolCallId": call, "name": "bash", "input": {"command": "cat prod.log"}, "summary": "cat prod.log"}) + "\n")
        t.write(before)
        for _ in range(reps):
            value.write(block)
            t.write(escaped)
        t.write(after + "\n")
        t.write(envelope(run, 3, OLD_MS + 3, {"type": "run_result", "result": {"status": "done"}}) + "\n")
    return run, call, reps * 1000


def list_pass(port):
    """One paginated ListObjectsV2 over the prefix; (keys, pages)."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    token, keys, pages = None, 0, 0
    while True:
        query = {"list-type": "2", "prefix": PREFIX + "/"}
        if token:
            query["continuation-token"] = token
        qs = "&".join(f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}" for k, v in sorted(query.items()))
        now = datetime.now(timezone.utc)
        amz, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        payload = hashlib.sha256(b"").hexdigest()
        headers = {"host": f"127.0.0.1:{port}", "x-amz-content-sha256": payload, "x-amz-date": amz}
        signed = ";".join(sorted(headers))
        canonical = "\n".join(["GET", f"/{BUCKET}", qs, "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)), signed, payload])
        scope = f"{day}/{REGION}/s3/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", amz, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key = ("AWS4" + SECRET).encode()
        for part in (day, REGION, "s3", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["Authorization"] = f"AWS4-HMAC-SHA256 Credential={ACCESS}/{scope}, SignedHeaders={signed}, Signature={signature}"
        conn.request("GET", f"/{BUCKET}?{qs}", headers=headers)
        resp = conn.getresponse()
        body = resp.read().decode()
        if resp.status != 200:
            sys.exit(f"LIST failed: {resp.status} {body[:300]}")
        keys += body.count("<Key>")
        pages += 1
        m = re.search(r"<NextContinuationToken>([^<]+)</NextContinuationToken>", body)
        if not m:
            return keys, pages
        token = html.unescape(m.group(1))


def traffic(stderr):
    """(requests, bytes received, bytes sent) from mctl's log."""
    m = re.search(r"object storage traffic requests=(\d+) received=(\d+) sent=(\d+)", stderr)
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0)


def timed(cmd, env):
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True)
    took = time.perf_counter() - start
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {out.stderr.decode(errors='replace')[-600:]}")
    return took, out.stdout, traffic(out.stderr.decode(errors="replace"))


def main():
    mctl = mctl_binary()
    shutil.rmtree(BASE, ignore_errors=True)
    runs_dir = os.path.join(BASE, "runs")
    print(f"building {RUNS} runs and a run with a {BIG_MB} MB value in {runs_dir}", flush=True)
    big_run, big_call, big_lines = build(runs_dir)
    os.makedirs(os.path.join(BASE, "s3", BUCKET))
    port = free_port()
    server = subprocess.Popen([s3s_fs(), "--host", "127.0.0.1", "--port", str(port), "--access-key", ACCESS,
                               "--secret-key", SECRET, os.path.join(BASE, "s3")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    sys.exit("s3s-fs did not start")
                time.sleep(0.05)
        run(mctl, port, runs_dir, big_run, big_call, big_lines)
    finally:
        server.kill()
        server.wait()


def run(mctl, port, runs_dir, big_run, big_call, big_lines):
    url = f"s3://{BUCKET}/{PREFIX}"
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MCTL_"))}
    base_env.update(AWS_ACCESS_KEY_ID=ACCESS, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION=REGION,
                    AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_ALLOW_HTTP="true", MCTL_LOG="info")

    def env(cache):
        return dict(base_env, MCTL_CACHE_DIR=os.path.join(BASE, cache))

    took, out, (requests, _, sent) = timed([mctl, "push", runs_dir, url, "--json"], env("push-cache"))
    report = json.loads(out.decode().splitlines()[-1])
    print(f"first push: {report['uploaded']} files, {report['bytes'] / 2**20:.0f} MiB in {took:.1f} s ({requests} requests)")

    lists, colds, warms, pushes, peeks, seds = [], [], [], [], [], []
    listed_keys = pages = 0
    warm_traffic = push_traffic = peek_traffic = None
    local = None
    peek_range = f"{big_lines - 399}-{big_lines}"
    for r in range(ROUNDS):
        start = time.perf_counter()
        listed_keys, pages = list_pass(port)
        lists.append(time.perf_counter() - start)

        cache = f"cold-cache-{r}"
        shutil.rmtree(os.path.join(BASE, cache), ignore_errors=True)
        took, cold_out, _ = timed([mctl, "--runs-dir", url, "runs", "--json"], env(cache))
        colds.append(took)
        took, warm_out, warm_traffic = timed([mctl, "--runs-dir", url, "runs", "--json"], env(cache))
        warms.append(took)
        took, out, push_traffic = timed([mctl, "push", runs_dir, url, "--json"], env("push-cache"))
        pushes.append(took)
        again = json.loads(out.decode().splitlines()[-1])
        if again["uploaded"] != 0:
            sys.exit(f"an unchanged push uploaded {again['uploaded']} files")
        took, peek_out, peek_traffic = timed([mctl, "--runs-dir", url, "peek", big_run, big_call, "--lines", peek_range], env(cache))
        peeks.append(took)
        start = time.perf_counter()
        subprocess.run(["sed", "-n", f"{big_lines - 399},{big_lines}p", os.path.join(runs_dir, f"{big_run}.values", f"{big_call}.txt")],
                       stdout=subprocess.DEVNULL, check=True)
        seds.append(time.perf_counter() - start)

        if local is None:
            local = subprocess.run([mctl, "--runs-dir", runs_dir, "runs", "--json"], env=env("local-cache"),
                                   capture_output=True, check=True).stdout.decode()
            local_peek = subprocess.run([mctl, "--runs-dir", runs_dir, "peek", big_run, big_call, "--lines", peek_range],
                                        env=env("local-cache"), capture_output=True, check=True).stdout
        mirror = os.path.join(BASE, cache, "remote")
        mirror = os.path.join(mirror, os.listdir(mirror)[0], "files")
        for answer in (cold_out, warm_out):
            if answer.decode().replace(mirror, "DIR") != local.replace(runs_dir, "DIR"):
                sys.exit("the bucket's listing differs from the directory's")
        if peek_out != local_peek:
            sys.exit("the bucket's peek differs from the directory's")

    med = statistics.median
    print(f"\n{listed_keys} objects under {url} ({pages} LIST pages); medians of {ROUNDS} rounds:")
    print(f"  one LIST pass (Python, in-process)   {med(lists) * 1000:8.0f} ms   baseline")
    print(f"  mctl runs, cold (empty cache)         {med(colds) * 1000:8.0f} ms   {med(colds) / med(lists):5.1f}x")
    print(f"  mctl runs, warm                       {med(warms) * 1000:8.0f} ms   {med(warms) / med(lists):5.1f}x   target <= 2x;"
          f" {warm_traffic[0]} requests, {warm_traffic[1]} bytes of objects received")
    print(f"  mctl push, nothing changed            {med(pushes) * 1000:8.0f} ms   {med(pushes) / med(lists):5.1f}x   0 uploads;"
          f" {push_traffic[0]} requests, {push_traffic[2]} bytes sent")
    print(f"  mctl peek, last 400 lines of {BIG_MB} MB   {med(peeks) * 1000:8.0f} ms   {peek_traffic[1] / 2**10:.0f} KiB received"
          f" in {peek_traffic[0]} requests (target <= 2048 KiB); sed -n on the local file {med(seds) * 1000:.0f} ms")
    failed = []
    # Times are a target at full size on a release build; BENCH_STRICT=0 (a small run in the
    # test command) prints them only. What crosses the network is checked at every size.
    if med(warms) > 2 * med(lists) and os.environ.get("BENCH_STRICT", "1") != "0":
        failed.append(f"warm listing {med(warms) / med(lists):.1f}x one LIST pass")
    if warm_traffic[1] != 0 or warm_traffic[0] != pages:
        failed.append(f"warm listing made {warm_traffic[0]} requests and received {warm_traffic[1]} bytes of objects")
    if push_traffic[0] != pages or push_traffic[2] != 0:
        failed.append(f"unchanged push made {push_traffic[0]} requests and sent {push_traffic[2]} bytes")
    if peek_traffic[1] > 2 << 20:
        failed.append(f"peek received {peek_traffic[1]} bytes")
    for f in failed:
        print(f"target missed: {f}", file=sys.stderr)
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    main()
