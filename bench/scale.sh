#!/usr/bin/env bash
# Listing through the index against listing without it, in one run on the same warm tree:
#   - `mctl runs --json` on BENCH_RUNS runs (10,000) with a warm index, nothing changed, beside
#     the same with --no-index (the baseline, median of 3 each);
#   - after appending one event to 100 runs and adding 10 runs;
#   - the index's size against the transcripts' bytes;
#   - `mctl whatif` at three thresholds, warm index against --no-index (target: under 100 ms);
#   - with BENCH_BIG_RUNS (100,000; 0 skips it) small runs, a warm listing.
# BENCH_PROFILE=debug uses the debug build (the test command runs it small that way, so that it
# compiles nothing more). Data lives in BENCH_DIR (target/bench-scale), kept between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${BENCH_RUNS:-10000}
big=${BENCH_BIG_RUNS:-100000}
base=${BENCH_DIR:-target/bench-scale}
profile=${BENCH_PROFILE:-release}
if [ "$profile" = release ]; then
  cargo build --release --quiet --bin mctl
  mctl=target/release/mctl
else
  mctl=${MCTL:-target/debug/mctl}
fi
export MCTL_CACHE_DIR="$base/cache"
unset MCTL_NO_INDEX

# Runs of about 20 KB of transcript each (a user message, 12 tool calls, a result), dated long
# ago, like the archives this is for.
generate() { # DIR COUNT LINES_PER_RUN
  python3 - "$@" <<'PY'
import json, os, sys
root, runs, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(root, exist_ok=True)
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
    ev({"type": "run_started", "cwd": "/work", "mode": "goal", "provider": "anthropic", "model": "claude-sonnet-4-5"})
    ev({"type": "user_message", "messageId": "u", "text": f"task {r}: make the build green", "attachments": []})
    for i in range(calls):
        call = f"toolu_{r:06d}_{i:03d}"
        ev({"type": "assistant_message", "messageId": f"a{i}", "content": [{"type": "tool_call", "toolCallId": call, "name": "read_file", "input": {"path": f"src/f{i}.rs"}}], "usage": {"promptTokens": 1200 + i, "completionTokens": 40, "costUsd": 0.0013}})
        ev({"type": "tool_call_started", "toolCallId": call, "name": "read_file", "input": {"path": f"src/f{i}.rs"}, "summary": f"src/f{i}.rs"})
        ev({"type": "tool_call_finished", "toolCallId": call, "result": {"ok": True, "content": f"fn f{i}() {{}}\n" * 80, "metadata": None}})
    ev({"type": "run_result", "result": {"status": "done"}})
    path = os.path.join(root, rid + ".jsonl")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.utime(path, ns=(ts * 1_000_000, ts * 1_000_000))
PY
}

root="$base/runs-$runs"
if [ ! -f "$root.complete" ]; then
  echo "generating $runs runs..." >&2
  rm -rf "$root" && generate "$root" "$runs" 12 && touch "$root.complete"
fi
work="$base/work"
rm -rf "$work" "$MCTL_CACHE_DIR" && cp -a "$root" "$work"

median() { sort -n | sed -n 2p; }
time_of() { # wall seconds of a command
  local s e
  s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
  python3 -c "print(f'{$e - $s:.3f}')"
}
three() { for _ in 1 2 3; do time_of "$@"; done | median; }

"$mctl" --runs-dir "$work" runs --json > /dev/null # builds the index
plain=$(three "$mctl" --runs-dir "$work" --no-index runs --json)
warm=$(three "$mctl" --runs-dir "$work" runs --json)
# The same answer both ways.
"$mctl" --runs-dir "$work" runs --json > "$base/with.json"
"$mctl" --runs-dir "$work" --no-index runs --json > "$base/without.json"
cmp -s "$base/with.json" "$base/without.json" || { echo "the index's answer differs" >&2; exit 1; }

# The threshold what-if, from the sizes the index keeps of every result.
wif=(whatif --threshold 8KiB,20KiB,64KiB --json)
wi_plain=$(three "$mctl" --runs-dir "$work" --no-index "${wif[@]}")
wi_warm=$(three "$mctl" --runs-dir "$work" "${wif[@]}")
"$mctl" --runs-dir "$work" "${wif[@]}" > "$base/whatif-with.json"
"$mctl" --runs-dir "$work" --no-index "${wif[@]}" > "$base/whatif-without.json"
cmp -s "$base/whatif-with.json" "$base/whatif-without.json" || { echo "what-if: the index answered differently" >&2; exit 1; }

# One event appended to 100 runs, 10 runs added.
python3 - "$work" <<'PY'
import json, os, sys
root = sys.argv[1]
names = sorted(n for n in os.listdir(root) if n.endswith(".jsonl"))
for n in names[:100]:
    rid = n[:-6]
    with open(os.path.join(root, n), "a") as f:
        f.write(json.dumps({"schemaVersion": 1, "runId": rid, "seq": 999, "ts": 1_800_000_000_000, "event": {"type": "user_message", "messageId": "again", "text": "one more thing", "attachments": [], "runId": rid, "ts": 1_800_000_000_000}}) + "\n")
PY
generate "$base/extra" 10 12 && for f in "$base"/extra/*.jsonl; do mv "$f" "$work/new_$(basename "$f")"; done && rm -rf "$base/extra"
changed=$(time_of "$mctl" --runs-dir "$work" runs --json)

transcripts=$(du -cb "$work"/*.jsonl | tail -1 | cut -f1)
index_bytes=$("$mctl" --runs-dir "$work" index --json | python3 -c "import json,sys; print(json.load(sys.stdin)['bytes'])")

echo "tree: $runs runs, $(python3 -c "print(f'{$transcripts / 1e6:.0f}')") MB of transcripts ($profile build)"
printf '%-58s %8ss\n' "mctl runs --json --no-index (baseline)" "$plain"
printf '%-58s %8ss\n' "mctl runs --json, warm index, nothing changed" "$warm"
python3 -c "print(f'ratio: warm index / no index = {$warm / $plain:.3f}x (target <= 0.15x and <= 0.2 s)')"
printf '%-58s %8ss\n' "mctl whatif (3 thresholds) --no-index (baseline)" "$wi_plain"
printf '%-58s %8ss\n' "mctl whatif (3 thresholds), warm index" "$wi_warm"
python3 -c "print(f'ratio: what-if warm index / no index = {$wi_warm / $wi_plain:.3f}x (target < 0.1 s)')"
printf '%-58s %8ss\n' "after 1 event appended to 100 runs and 10 runs added" "$changed"
python3 -c "print(f'index size: {$index_bytes / 1e6:.2f} MB = {100 * $index_bytes / $transcripts:.2f} % of the transcripts (target <= 5 %)')"

if [ "$big" -gt 0 ]; then
  broot="$base/runs-small-$big"
  if [ ! -f "$broot.complete" ]; then
    echo "generating $big small runs..." >&2
    rm -rf "$broot" && generate "$broot" "$big" 1 && touch "$broot.complete"
  fi
  "$mctl" --runs-dir "$broot" runs --json > /dev/null
  bwarm=$(three "$mctl" --runs-dir "$broot" runs --json)
  bplain=$(time_of "$mctl" --runs-dir "$broot" --no-index runs --json)
  printf '%-58s %8ss\n' "$big small runs, warm index (target <= 1.5 s)" "$bwarm"
  printf '%-58s %8ss\n' "$big small runs, --no-index" "$bplain"
fi
