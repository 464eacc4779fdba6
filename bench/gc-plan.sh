#!/usr/bin/env bash
# GC planning over 10,000 runs and 200,000 value files, beside `du -sb` on the same tree, in one
# run (page cache warm, median of 3). With a warm index, planning stats every run's files and
# every value file and takes which file backs which result (and what deleting it costs the next
# resume) from the index; without it (printed too) it reads every transcript. du only stats.
# Settings: BENCH_RUNS (10000), BENCH_FILES_PER_RUN (20), BENCH_DIR (target/bench-gc).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${BENCH_RUNS:-10000}
per=${BENCH_FILES_PER_RUN:-20}
root=${BENCH_DIR:-target/bench-gc}/runs
cargo build --release --quiet --bin mctl
mctl=target/release/mctl

if [ ! -f "$root/.complete-$runs-$per" ]; then
  echo "generating $runs runs with $per value files each..." >&2
  rm -rf "$root" && mkdir -p "$root"
  python3 - "$root" "$runs" "$per" <<'PY'
import json, os, sys
root, runs, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
old = 1_700_000_000_000
for r in range(runs):
    rid = f"run_{old + r * 1000}_{r:08x}"
    ts = old + r * 1000
    lines = []
    def ev(e):
        global ts
        ts += 1
        e.update(runId=rid, ts=ts)
        lines.append(json.dumps({"schemaVersion": 1, "runId": rid, "seq": len(lines), "ts": ts, "event": e}))
    ev({"type": "user_message", "messageId": "u", "text": "bench", "attachments": []})
    vdir = os.path.join(root, rid + ".values")
    os.mkdir(vdir)
    for i in range(per):
        call = f"toolu_{i:03d}"
        content = f"result {i} of {rid}\n" * 8
        ev({"type": "tool_call_started", "toolCallId": call, "name": "read_file", "input": {}, "summary": "x"})
        ev({"type": "tool_call_finished", "toolCallId": call, "result": {"ok": True, "content": content, "metadata": None}})
        with open(os.path.join(vdir, call + ".txt"), "w") as f:
            f.write(content)
    ev({"type": "run_result", "result": {"status": "done"}})
    path = os.path.join(root, rid + ".jsonl")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.utime(path, ns=(ts * 1_000_000, ts * 1_000_000))
PY
  touch "$root/.complete-$runs-$per"
fi

files=$(find "$root" -name '*.txt' | wc -l)
du -sb "$root" > /dev/null
median() { sort -n | sed -n 2p; }
time_of() { # wall seconds of a command, output discarded to a file
  local s e
  s=$(date +%s.%N); "$@" > "$root/../out.json"; e=$(date +%s.%N)
  python3 -c "print(f'{$e - $s:.3f}')"
}
export MCTL_CONFIG_DIR="$root/../config"
export MCTL_CACHE_DIR="$root/../cache"
unset MCTL_NO_INDEX
# Warm the index (twice: a file changed within the last 2 s is not trusted by its stamp).
"$mctl" --runs-dir "$root" --threshold 100 runs --json > /dev/null
sleep 2.1
"$mctl" --runs-dir "$root" --threshold 100 runs --json > /dev/null
ours=$(for _ in 1 2 3; do time_of "$mctl" --runs-dir "$root" --threshold 100 gc --older-than 1d --json; done | median)
cold=$(for _ in 1 2 3; do time_of "$mctl" --no-index --runs-dir "$root" --threshold 100 gc --older-than 1d --json; done | median)
base=$(for _ in 1 2 3; do time_of du -sb "$root"; done | median)
planned=$(python3 -c "import json; r=json.load(open('$root/../out.json')); print(len(r['files']))" 2>/dev/null || echo "?")
"$mctl" --runs-dir "$root" --threshold 100 gc --older-than 1d --json > "$root/../plan.json"
planned=$(python3 -c "import json; r=json.load(open('$root/../plan.json')); print(len(r['files']), r['contextBytes'])")
echo "tree: $runs runs, $files value files"
printf '%-44s %8ss\n' "mctl gc --older-than 1d (plan, warm index)" "$ours"
printf '%-44s %8ss\n' "the same with --no-index" "$cold"
printf '%-44s %8ss\n' "du -sb (same tree)" "$base"
python3 -c "print(f'ratio: plan takes {$ours / $base:.2f}x the time of du -sb (target <= 2x); {$cold / $base:.2f}x without the index')"
echo "plan: files and context bytes: $planned"
