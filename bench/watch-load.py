#!/usr/bin/env python3
"""Load test and latency benchmark of live watching.

Appends 1,000 events per second, spread over 20 transcripts, for 30 seconds, while `mctl watch
--json` runs, and checks that every event was reported exactly once and in order. Beside it, in
the same run, `tail -F` follows the same 20 files: both report each append, and the script prints
the append-to-report latency (median and p99) of each, and the CPU time each used.

Settings: WATCH_SECONDS (30), WATCH_RATE (1000 events/s), WATCH_RUNS (20), MCTL (the binary).
"""
import json, os, statistics, subprocess, sys, tempfile, threading, time

seconds = float(os.environ.get("WATCH_SECONDS", 30))
rate = int(os.environ.get("WATCH_RATE", 1000))
nruns = int(os.environ.get("WATCH_RUNS", 20))
mctl = os.environ.get("MCTL", "target/release/mctl")
root = tempfile.mkdtemp(prefix="mc-watch-")
runs = [f"run_load_{i:02d}" for i in range(nruns)]
paths = [os.path.join(root, f"{r}.jsonl") for r in runs]
for p, r in zip(paths, runs):
    with open(p, "w") as f:  # every transcript exists before watching starts
        f.write(json.dumps({"schemaVersion": 1, "runId": r, "seq": 0, "ts": 0, "event": {"type": "user_message", "text": "go"}}) + "\n")

written = {}  # (run, line) -> time written
arrived_mctl, arrived_tail = {}, {}
order_ok = True
dupes = 0

# Native watching is what is measured: the caller's MCTL_* settings (MCTL_WATCH=poll) stay out.
clean = {k: v for k, v in os.environ.items() if not k.startswith("MCTL_")}
watch = subprocess.Popen([mctl, "--runs-dir", root, "watch", "--json"], stdout=subprocess.PIPE, text=True, bufsize=1, env=clean)
tail = subprocess.Popen(["tail", "-q", "-n", "0", "-F", *paths], stdout=subprocess.PIPE, text=True, bufsize=1)

def read_mctl():
    global order_ok, dupes
    last = {}
    for raw in watch.stdout:
        now = time.monotonic()
        c = json.loads(raw)
        if c.get("kind") != "appended":
            continue
        for l in c["lines"]:
            key = (c["run"], l["line"])
            if key in arrived_mctl:
                dupes += 1
            arrived_mctl[key] = now
            if l["line"] <= last.get(c["run"], 0):
                order_ok = False
            last[c["run"]] = l["line"]

def read_tail():
    for raw in tail.stdout:
        now = time.monotonic()
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        arrived_tail[(e["runId"], e["seq"] + 1)] = now

threading.Thread(target=read_mctl, daemon=True).start()
threading.Thread(target=read_tail, daemon=True).start()
time.sleep(1.5)  # both have read the existing lines

files = [open(p, "a", buffering=1) for p in paths]
line_no = [1] * nruns
interval = 1.0 / rate
start = time.monotonic()
n = 0
while time.monotonic() - start < seconds:
    i = n % nruns
    r = runs[i]
    ev = {"type": "assistant_message", "messageId": f"m{n}", "content": [{"type": "text", "text": f"event {n}"}]}
    files[i].write(json.dumps({"schemaVersion": 1, "runId": r, "seq": line_no[i], "ts": int(time.time() * 1000), "event": ev}) + "\n")
    line_no[i] += 1
    written[(r, line_no[i])] = time.monotonic()
    n += 1
    # Keep the rate: sleep until this event's slot.
    delay = start + n * interval - time.monotonic()
    if delay > 0:
        time.sleep(delay)
for f in files:
    f.close()
elapsed = time.monotonic() - start

deadline = time.monotonic() + 10
while time.monotonic() < deadline and (len(arrived_mctl) < len(written) or len(arrived_tail) < len(written)):
    time.sleep(0.05)
time.sleep(0.3)

def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(parts[11]) + int(parts[12])) / ticks

cpu_mctl, cpu_tail = cpu(watch.pid), cpu(tail.pid)
watch.kill()
tail.kill()

missing = [k for k in written if k not in arrived_mctl]
# Line 1 of each transcript was there before the load started: reported once at start.
extra = [k for k in arrived_mctl if k not in written and k[1] > 1]
def lat(arrived):
    xs = sorted((arrived[k] - t) * 1000 for k, t in written.items() if k in arrived)
    if not xs:
        return float("nan"), float("nan")
    return statistics.median(xs), xs[min(len(xs) - 1, int(len(xs) * 0.99))]

m_med, m_p99 = lat(arrived_mctl)
t_med, t_p99 = lat(arrived_tail)
print(f"appended {len(written)} events to {nruns} transcripts in {elapsed:.1f} s ({len(written) / elapsed:.0f}/s)")
print(f"mctl watch --json: {len(written) - len(missing)} reported, {len(missing)} missing, {dupes} duplicated, in order: {order_ok}")
print(f"{'':18} {'median':>9} {'p99':>9} {'CPU':>8}")
print(f"{'mctl watch':18} {m_med:7.1f}ms {m_p99:7.1f}ms {cpu_mctl:7.2f}s")
print(f"{'tail -F (baseline)':18} {t_med:7.1f}ms {t_p99:7.1f}ms {cpu_tail:7.2f}s")
print(f"ratio: median latency {m_med / max(t_med, 0.001):.0f}x tail -F's (floored at 1 us), CPU {cpu_mctl / max(cpu_tail, 0.01):.1f}x")
print("(mctl parses every event and folds it into the run model; tail -F copies bytes)")
ok = not missing and not extra and dupes == 0 and order_ok
# Not a performance target (the figures above are): a bound on "live". An event reported seconds
# late, as when a watcher waits for a busy file to go quiet, is a broken watcher.
LIVE_MS = 1000
late = not m_p99 <= LIVE_MS
if late:
    print(f"FAIL: p99 {m_p99:.0f} ms is not live (bound {LIVE_MS} ms)")
ok = ok and not late
print("PASS: every event reported once, in order, live" if ok else "FAIL")
sys.exit(0 if ok else 1)
