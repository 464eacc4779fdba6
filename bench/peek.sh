#!/usr/bin/env bash
# Peek on a 1 GiB value file, beside the tools a person would reach for, in one run:
#   range peek of the last 120 lines   vs  sed -n 'A,Bp'  (120 lines of this log fit the 16 KiB cap)
#   query peek                         vs  grep -F -n -m 400   (and rg, when installed)
# Prints wall time (median of 3, page cache warm), the ratio, and peak RSS of each command.
# Settings: BENCH_SIZE_MB (default 1024), BENCH_DIR (default target/bench).
set -euo pipefail
cd "$(dirname "$0")/.."

size_mb=${BENCH_SIZE_MB:-1024}
root=${BENCH_DIR:-target/bench}
runs="$root/runs"
value="$runs/bench.values/bench_call.txt"

cargo build --release --quiet --bin mctl
mctl=target/release/mctl

if [ ! -f "$value" ] || [ "$(stat -c %s "$value")" -lt $((size_mb * 1024 * 1024)) ]; then
  echo "generating a ${size_mb} MiB value file..." >&2
  mkdir -p "$runs/bench.values"
  printf '%s\n' '{"schemaVersion":1,"runId":"bench","seq":0,"ts":1790000000000,"event":{"type":"user_message","runId":"bench","ts":1790000000000,"messageId":"u","text":"bench","attachments":[]}}' > "$runs/bench.jsonl"
  python3 - "$value" "$size_mb" <<'PY'
import sys
path, size = sys.argv[1], int(sys.argv[2]) * 1024 * 1024
levels = ["INFO", "DEBUG", "INFO", "WARN", "INFO"]
block = []
for i in range(20000):
    block.append(f"2026-11-29T10:{i % 60:02d}:{i % 57:02d}.{i % 997:03d}Z {levels[i % 5]} worker-{i % 16} request id=req_{i:08x} path=/v1/items/{i % 9973} status=200 took={i % 431}ms\n")
block = "".join(block).encode()
written, n = 0, 0
with open(path, "wb") as f:
    while written < size:
        chunk = block
        n += 1
        if n % 40 == 0:  # a rare line to search for, spread through the file
            chunk = block + b"2026-11-29T11:00:00.000Z ERROR worker-3 FATAL deadlock detected in pool=payments\n"
        f.write(chunk)
        written += len(chunk)
PY
fi

bytes=$(stat -c %s "$value")
lines=$(wc -l < "$value")
cat "$value" > /dev/null   # warm the page cache for every contender alike
start=$((lines - 119))
query="FATAL deadlock"

# median wall seconds and max RSS (KiB) of 3 runs of a command. Output goes to a file, not
# /dev/null: GNU grep stops at the first match when it sees its output is /dev/null.
measure() {
  local times=() rss=0 out
  for _ in 1 2 3; do
    out=$( { /usr/bin/time -f '%e %M' "$@" > "$root/out.txt"; } 2>&1 | tail -n 1 )
    times+=("${out% *}")
    [ "${out#* }" -gt "$rss" ] && rss=${out#* }
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
  echo "$median $rss"
}

row() { # label ours_time ours_rss base_label base_time base_rss
  local ratio
  ratio=$(python3 -c "o,b=$2,$5; print('%.1fx faster' % (b/o) if o>0 and b>=o else ('%.1fx slower' % (o/b) if b>0 else 'n/a'))")
  printf '%-26s %8ss %9s MiB | %-24s %8ss %9s MiB | %s\n' "$1" "$2" "$(($3 / 1024))" "$4" "$5" "$(($6 / 1024))" "$ratio"
}

# The answers must agree before their speed is compared.
ours_range=$("$mctl" --runs-dir "$runs" peek bench bench_call --lines "$start-$lines" | sed '1d;s/^[0-9]*: //')
sed_range=$(sed -n "${start},${lines}p" "$value")
[ "$ours_range" = "$sed_range" ] || { echo "range peek and sed disagree" >&2; exit 1; }
ours_hits=$("$mctl" --runs-dir "$runs" peek bench bench_call --query "$query" | grep -c '^[0-9]*: ' || true)
grep_hits=$(grep -F -n -m 400 "$query" "$value" | wc -l)
[ "$ours_hits" = "$grep_hits" ] || { echo "query peek found $ours_hits lines, grep $grep_hits" >&2; exit 1; }

echo "value file: $bytes bytes, $lines lines; $grep_hits lines contain \"$query\""
printf '%-26s %9s %13s | %-24s %9s %13s | %s\n' "case" "ours" "peak RSS" "baseline" "time" "peak RSS" "ratio"
read -r ot orss <<<"$(measure "$mctl" --runs-dir "$runs" peek bench bench_call --lines "$start-$lines")"
read -r bt brss <<<"$(measure sed -n "${start},${lines}p" "$value")"
row "range: last 120 lines" "$ot" "$orss" "sed -n 'A,Bp'" "$bt" "$brss"
read -r bt brss <<<"$(measure sed -n "${start},${lines}p;${lines}q" "$value")"
row "range: last 120 lines" "$ot" "$orss" "sed -n 'A,Bp;Bq'" "$bt" "$brss"
read -r ot orss <<<"$(measure "$mctl" --runs-dir "$runs" peek bench bench_call --query "$query")"
read -r bt brss <<<"$(measure grep -F -n -m 400 "$query" "$value")"
row "query: \"$query\"" "$ot" "$orss" "grep -F -n -m 400" "$bt" "$brss"
if command -v rg > /dev/null; then
  read -r bt brss <<<"$(measure rg -F -n -m 400 --no-mmap "$query" "$value")"
  row "query: \"$query\"" "$ot" "$orss" "rg -F -n -m 400" "$bt" "$brss"
else
  echo "(rg not installed: apt-get install ripgrep to compare with it too)"
fi
