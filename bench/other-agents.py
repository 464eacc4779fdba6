#!/usr/bin/env python3
"""Listing a Gemini CLI store and an opencode database through the index against without one.

Generates BENCH_CHATS (2,000) Gemini CLI chats (20 messages, 8 tool calls each, in 20 project
folders; a tenth of them logs, the rest JSON documents) and an opencode database of
BENCH_SESSIONS (2,000) sessions (10 messages, 30 parts each; a minute apart, and every tenth with
one output cut and saved to `tool-output/`, as opencode names such a file). Then, for each
store, in one run on the same warm files (median of 3 each):
  - `mctl runs --json --no-index` (the baseline: every chat or session read);
  - `mctl runs --json` with a warm index, nothing changed;
  - (opencode) the same after one session got a new message: only it is read again;
  - (opencode) the same after opencode's sweep deleted one saved file: only the sessions whose
    time holds the file's are read again;
and checks that every answer with the index equals the answer without it.

MCTL names the binary (default target/release/mctl, built here); the data lives in BENCH_DIR
(target/bench-other-agents), kept between runs.
"""

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHATS = int(os.environ.get("BENCH_CHATS", "2000"))
SESSIONS = int(os.environ.get("BENCH_SESSIONS", "2000"))
BASE = os.environ.get("BENCH_DIR", os.path.join(ROOT, "target", "bench-other-agents"))
MCTL = os.environ.get("MCTL")
OLD_S = 1_700_000_000


def chat(i):
    sid = f"{i:08x}-0000-4000-8000-000000000000"
    messages = []
    for t in range(10):
        messages.append({"id": f"u{i}-{t}", "timestamp": "2026-04-23T10:00:00.000Z", "type": "user",
                         "content": f"step {t} of task {i}"})
        calls = [{"id": f"run_shell_command-{i}-{t}-{c}", "name": "run_shell_command", "args": {"command": f"make t{c}"},
                  "result": [{"functionResponse": {"id": f"c{c}", "name": "run_shell_command",
                                                   "response": {"output": "ok\n" * 300}}}],
                  "status": "success", "timestamp": "2026-04-23T10:00:01.000Z"} for c in range(1 if t < 8 else 0)]
        messages.append({"id": f"g{i}-{t}", "timestamp": "2026-04-23T10:00:02.000Z", "type": "gemini",
                         "content": "done", "toolCalls": calls, "model": "gemini-2.5-pro",
                         "thoughts": [{"subject": "Plan", "description": "think " * 50}],
                         "tokens": {"input": 9000, "output": 40, "cached": 6000, "thoughts": 30, "tool": 0, "total": 9070}})
    meta = {"sessionId": sid, "projectHash": "ab" * 32, "startTime": "2026-04-23T10:00:00.000Z",
            "lastUpdated": "2026-04-23T10:05:00.000Z", "kind": "main"}
    return meta, messages


def generate_gemini(root, count):
    for i in range(count):
        chats = os.path.join(root, f"project-{i % 20:02d}", "chats")
        os.makedirs(chats, exist_ok=True)
        meta, messages = chat(i)
        name = f"session-2026-04-23T10-00-{i:08x}"
        if i % 10 == 0:
            path = os.path.join(chats, name + ".jsonl")
            with open(path, "w") as f:
                f.write(json.dumps(meta) + "\n")
                f.writelines(json.dumps(m) + "\n" for m in messages)
        else:
            path = os.path.join(chats, name + ".json")
            with open(path, "w") as f:
                json.dump({**meta, "messages": messages}, f, indent=2)
        os.utime(path, (OLD_S, OLD_S))


SCHEMA = """
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
 directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_idx ON message (session_id);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX part_message_idx ON part (message_id);
CREATE INDEX part_session_idx ON part (session_id);
"""


T0_MS = 1_772_000_000_000


def saved_name(ms):
    """A saved output's name as opencode gives it at `ms`: `tool_`, 12 hex digits of the low 48
    bits of `ms * 4096 + counter`, 14 letters."""
    return f"tool_{((ms << 12) | 1) & ((1 << 48) - 1):012x}BenchBenchBenc"


def generate_opencode(root, count):
    os.makedirs(os.path.join(root, "tool-output"), exist_ok=True)
    db = sqlite3.connect(os.path.join(root, "opencode.db"))
    db.executescript(SCHEMA)
    for i in range(count):
        sid = f"ses_{i:012x}bench000000000"
        start = T0_MS + i * 60_000
        db.execute("INSERT INTO session VALUES (?, 'p', NULL, 's', '/work/app', ?, '1.2.15', ?, ?)",
                   (sid, f"task {i}", start, start + 30_000))
        if i % 10 == 0:
            name = saved_name(start + 10_000)
            path = os.path.join(root, "tool-output", name)
            with open(path, "w") as f:
                f.write("test output line\n" * 4000)
            cut = f"test output line\n\n...3999 lines truncated...\n\nThe tool call succeeded but the output was truncated. Full output saved to: {path}"
            saved = {"type": "tool", "callID": f"call_{i}_cut", "tool": "bash",
                     "state": {"status": "completed", "input": {"command": "make test"}, "output": cut, "title": "make test",
                               "metadata": {"truncated": True, "outputPath": path}, "time": {"start": start + 5_000, "end": start + 10_000}}}
            db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (f"prt_{i:08x}_cut", f"msg_{i:08x}_01", sid, start + 10_000, start + 10_000, json.dumps(saved)))
        for m in range(10):
            mid = f"msg_{i:08x}_{m:02d}"
            if m % 2 == 0:
                data, parts = {"role": "user", "time": {"created": m}}, [{"type": "text", "text": f"step {m}"}]
            else:
                data = {"role": "assistant", "time": {"created": m, "completed": m}, "modelID": "claude-sonnet-4-5",
                        "providerID": "anthropic", "cost": 0.01, "finish": "stop" if m == 9 else "tool-calls"}
                parts = [{"type": "reasoning", "text": "think " * 40}]
                parts += [{"type": "tool", "callID": f"call_{i}_{m}_{c}", "tool": "bash",
                           "state": {"status": "completed", "input": {"command": "ls"}, "output": "file\n" * 200,
                                     "title": "ls", "metadata": {"truncated": False}, "time": {"start": m, "end": m}}}
                          for c in range(4)]
                parts.append({"type": "step-finish", "cost": 0.01,
                              "tokens": {"input": 900, "output": 40, "reasoning": 0, "cache": {"read": 8000, "write": 0}}})
            db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, m, m, json.dumps(data)))
            for p, part in enumerate(parts):
                db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (f"{mid}_{p:02d}", mid, sid, m, m, json.dumps(part)))
    db.commit()
    db.close()
    os.utime(os.path.join(root, "opencode.db"), (OLD_S, OLD_S))


def mctl(*args):
    return subprocess.run([MCTL, *args], capture_output=True, check=True).stdout


def timed(*args):
    times = []
    for _ in range(3):
        start = time.perf_counter()
        mctl(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def prepared(name, count, generate):
    tree = os.path.join(BASE, f"{name}-{count}")
    if not os.path.exists(tree + ".complete"):
        print(f"generating {count} {name}...", file=sys.stderr)
        shutil.rmtree(tree, ignore_errors=True)
        generate(tree, count)
        open(tree + ".complete", "w").close()
    work = os.path.join(BASE, f"work-{name}")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(tree, work)
    return work


def measure(label, work, change=None):
    runs = ["--runs-dir", work, "runs", "--json"]

    def same(what):
        with_index = json.loads(mctl(*runs))
        without = json.loads(mctl("--no-index", *runs))
        if with_index != without:
            sys.exit(f"{label}, {what}: the index's answer differs from a full read")
        return len(with_index)

    mctl(*runs)  # builds the index
    count = same("warm")
    plain = timed("--no-index", *runs)
    warm = timed(*runs)
    print(f"{label}: {count} runs")
    print(f"  {'mctl runs --json --no-index (baseline)':<56} {plain:8.3f}s")
    print(f"  {'mctl runs --json, warm index, nothing changed':<56} {warm:8.3f}s")
    print(f"  ratio: warm index / no index = {warm / plain:.3f}x")
    if change:
        change(work)
        start = time.perf_counter()
        mctl(*runs)
        print(f"  {'after one session got a new message':<56} {time.perf_counter() - start:8.3f}s")
        same("after a change")
        swept = sorted(os.listdir(os.path.join(work, "tool-output")))[-1]
        os.remove(os.path.join(work, "tool-output", swept))
        start = time.perf_counter()
        mctl(*runs)
        print(f"  {'after opencode swept one saved output':<56} {time.perf_counter() - start:8.3f}s")
        same("after a sweep")


def new_message(work):
    db = sqlite3.connect(os.path.join(work, "opencode.db"))
    sid = db.execute("SELECT id FROM session LIMIT 1").fetchone()[0]
    db.execute("INSERT INTO message VALUES ('msg_new', ?, 99, 99, ?)", (sid, json.dumps({"role": "user", "time": {"created": 99}})))
    db.execute("INSERT INTO part VALUES ('prt_new', 'msg_new', ?, 99, 99, ?)", (sid, json.dumps({"type": "text", "text": "one more"})))
    db.execute("UPDATE session SET time_updated = time_updated + 1 WHERE id = ?", (sid,))
    db.commit()
    db.close()


def main():
    global MCTL
    if not MCTL:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "mctl"], cwd=ROOT, check=True)
        MCTL = os.path.join(ROOT, "target", "release", "mctl")
    os.environ["MCTL_CACHE_DIR"] = os.path.join(BASE, "cache")
    os.environ.pop("MCTL_NO_INDEX", None)
    shutil.rmtree(os.environ["MCTL_CACHE_DIR"], ignore_errors=True)
    measure(f"Gemini CLI store of {CHATS} chats", prepared("gemini", CHATS, generate_gemini))
    measure(f"opencode database of {SESSIONS} sessions", prepared("opencode-saved", SESSIONS, generate_opencode), new_message)


if __name__ == "__main__":
    main()
