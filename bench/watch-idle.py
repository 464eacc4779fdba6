#!/usr/bin/env python3
"""What watching a big runs directory costs: the first read of `mctl watch` over the runs of a
tree (from its start to the `values-added` of the last value directory) beside `mctl runs --json`,
which reads the same runs once, in the same script; then the CPU `mctl watch` uses while nothing
changes, once its value directories are watched natively (it takes them a batch at a time after
the first read, SETTLE_SECONDS), beside `mctl watch --poll` (which lists the runs directory every
half second and reads the time of every value directory each second); and how soon it reports a
value file removed inside one of them.

Uses the tree of bench/gc-plan.sh (run it first, or set BENCH_DIR); for 100,000 runs:
  BENCH_RUNS=100000 BENCH_FILES_PER_RUN=1 BENCH_DIR=target/bench-100k bash bench/gc-plan.sh
  BENCH_DIR=target/bench-100k python3 bench/watch-idle.py
Settings: IDLE_SECONDS (10), SETTLE_SECONDS (40).
"""
import os, subprocess, sys, time

root = os.path.join(os.environ.get("BENCH_DIR", "target/bench-gc"), "runs")
mctl = os.environ.get("MCTL", "target/release/mctl")
idle = float(os.environ.get("IDLE_SECONDS", "10"))
settle = float(os.environ.get("SETTLE_SECONDS", "40"))
if not os.path.isdir(root):
    sys.exit(f"{root} is missing: run bench/gc-plan.sh first")
runs = sum(1 for n in os.listdir(root) if n.endswith(".jsonl"))
value_dirs = sum(1 for n in os.listdir(root) if n.endswith(".values"))

# An archive: each value directory as old as its run (the generator leaves them at the time
# they were made), as a runs directory written over months has them.
for n in os.listdir(root):
    if n.endswith(".values"):
        t = os.stat(os.path.join(root, n[: -len(".values")] + ".jsonl")).st_mtime_ns
        os.utime(os.path.join(root, n), ns=(t, t))

def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

started = time.monotonic()
subprocess.run([mctl, "--runs-dir", root, "runs", "--json"], stdout=subprocess.DEVNULL, check=True)
listing = time.monotonic() - started

def watching(*flags):
    """`mctl watch --json` started with `flags`, once its first read has told every value
    directory (its `values-added` lines)."""
    proc = subprocess.Popen([mctl, "--runs-dir", root, "watch", *flags, "--json"], stdout=subprocess.PIPE, text=True, bufsize=1)
    seen = 0
    for line in proc.stdout:
        if '"kind":"values-added"' in line:
            seen += 1
            if seen == value_dirs:
                break
    return proc

started = time.monotonic()
watch = watching()
first_scan = time.monotonic() - started

before = cpu(watch.pid)
time.sleep(settle)
settle_cpu = cpu(watch.pid) - before
before = cpu(watch.pid)
time.sleep(idle)
idle_cpu = cpu(watch.pid) - before

victim_dir = os.path.join(root, sorted(n for n in os.listdir(root) if n.endswith(".values"))[runs // 2])
victim = os.path.join(victim_dir, sorted(os.listdir(victim_dir))[0])
saved = open(victim, "rb").read()
removed = time.monotonic()
os.remove(victim)
for line in watch.stdout:
    if '"kind":"value-files-removed"' in line:
        break
seen_after = time.monotonic() - removed
with open(victim, "wb") as f:
    f.write(saved)
watch.kill()

# The baseline: the same directory polled (`--poll`): every value directory's time read each
# second, and the runs directory listed every half second.
polled = watching("--poll")
time.sleep(2)
before = cpu(polled.pid)
time.sleep(idle)
poll_cpu = cpu(polled.pid) - before
polled.kill()

print(f"{runs} runs, {value_dirs} value directories")
print(f"first read of mctl watch   {first_scan:6.2f} s")
print(f"mctl runs --json (baseline){listing:6.2f} s   ratio {first_scan / listing:.2f}x")
print(f"mctl watch, first {settle:.0f} s after the first read (value directories being watched): "
      f"{settle_cpu / settle * 100:.2f} % of one core")
print(f"idle CPU of mctl watch     {idle_cpu / idle * 100:6.2f} % of one core ({idle_cpu:.2f} s in {idle:.0f} s)")
print(f"idle CPU of mctl watch --poll (baseline) {poll_cpu / idle * 100:6.2f} % of one core   "
      f"ratio {idle_cpu / max(poll_cpu, 1e-9):.3f}x")
print(f"value file removed -> value-files-removed reported in {seen_after * 1000:.0f} ms")
