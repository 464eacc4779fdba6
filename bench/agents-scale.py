#!/usr/bin/env python3
"""Opening a Claude Code projects directory through the index against opening it without one.

Generates BENCH_SESSIONS (2,000) Claude Code sessions of about 150 KB each in 20 project
folders: a tenth are an older build's, their subagents' side conversations inside the session
file; a tenth have a subagent's own file under `subagents/`; each has a persisted output in its
`tool-results/`. Then, in one run on the same warm tree (median of 3 each):
  - `mctl runs --json --no-index` (the baseline: every session file read);
  - `mctl runs --json` with a warm index, nothing changed;
  - the same after a prompt appended to 20 sessions;
and checks that every answer with the index equals the answer without it.

MCTL names the binary (default target/release/mctl, built here); the data lives in BENCH_DIR
(target/bench-agents), kept between runs.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SESSIONS = int(os.environ.get("BENCH_SESSIONS", "2000"))
BASE = os.environ.get("BENCH_DIR", os.path.join(ROOT, "target", "bench-agents"))
MCTL = os.environ.get("MCTL")
OLD_S = 1_700_000_000


def line(session, n, kind, **extra):
    out = {"type": kind, "uuid": f"{session[:8]}-{n}", "sessionId": session, "cwd": "/work/app",
           "timestamp": "2026-04-02T10:00:00.000Z"}
    out.update(extra)
    return out


def session_lines(i, session):
    """About 150 KB: 40 tool calls with 3 KB results, one persisted, maybe side conversations."""
    lines = [line(session, 0, "user", message={"role": "user", "content": f"task {i}: fix the build"})]
    n = 1
    for c in range(40):
        call = f"toolu_{i:05d}_{c:02d}"
        lines.append(line(session, n, "assistant", message={
            "id": f"msg_{i}_{c}", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": call, "name": "Read", "input": {"file_path": f"src/f{c}.rs"}}],
            "usage": {"input_tokens": 1200, "cache_read_input_tokens": 9000, "output_tokens": 40}}))
        n += 1
        content = f"fn f{c}() {{}}\n" * 250
        if c == 0:
            content = ("<persisted-output>\nOutput too large (61KB). Full output saved to: "
                       f"/home/u/.claude/projects/p/{session}/tool-results/{call}.txt\n\n"
                       "Preview (first 2KB):\nfn f0() {}\n...\n</persisted-output>")
        lines.append(line(session, n, "user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": content}]}))
        n += 1
    if i % 10 == 1:  # an older build: two side conversations inside the file
        for side in range(2):
            prompt = f"subtask {side} of {i}"
            call = f"toolu_task_{i}_{side}"
            lines.append(line(session, n, "assistant", message={
                "id": f"msg_t{i}_{side}", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": call, "name": "Task", "input": {"prompt": prompt}}]}))
            n += 1
            root = f"{side}{i:07d}-side"
            lines.append({"type": "user", "uuid": root, "parentUuid": None, "isSidechain": True,
                          "sessionId": session, "message": {"role": "user", "content": prompt}})
            lines.append({"type": "assistant", "uuid": root + "-a", "parentUuid": root, "isSidechain": True,
                          "sessionId": session, "message": {"id": f"msg_s{i}_{side}", "role": "assistant",
                                                            "model": "claude-haiku-4-5",
                                                            "content": [{"type": "text", "text": "done"}]}})
            lines.append(line(session, n, "user", message={"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": "done"}]}))
            n += 1
    lines.append(line(session, n, "assistant", message={
        "id": f"msg_{i}_end", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "The build is green."}]}))
    return lines


def generate(root, count):
    for i in range(count):
        project = os.path.join(root, f"-work-app-{i % 20:02d}")
        session = f"{i:08x}-0000-4000-8000-000000000000"
        folder = os.path.join(project, session)
        os.makedirs(os.path.join(folder, "tool-results"), exist_ok=True)
        path = os.path.join(project, session + ".jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(l) + "\n" for l in session_lines(i, session))
        with open(os.path.join(folder, "tool-results", f"toolu_{i:05d}_00.txt"), "w") as f:
            f.write("fn f0() {}\n" * 5600)
        if i % 10 == 2:  # a subagent's own file
            agents = os.path.join(folder, "subagents")
            os.makedirs(agents, exist_ok=True)
            with open(os.path.join(agents, "agent-a1.jsonl"), "w") as f:
                f.write(json.dumps({"type": "user", "uuid": "x1", "isSidechain": True, "agentId": "a1",
                                    "sessionId": session, "message": {"role": "user", "content": "look"}}) + "\n")
        for dirpath, _, files in os.walk(folder):
            for name in files:
                os.utime(os.path.join(dirpath, name), (OLD_S, OLD_S))
            os.utime(dirpath, (OLD_S, OLD_S))
        os.utime(path, (OLD_S, OLD_S))


def mctl(*args):
    out = subprocess.run([MCTL, *args], capture_output=True, check=True)
    return out.stdout


def timed(*args):
    times = []
    for _ in range(3):
        start = time.perf_counter()
        mctl(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    global MCTL
    if not MCTL:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "mctl"], cwd=ROOT, check=True)
        MCTL = os.path.join(ROOT, "target", "release", "mctl")
    os.environ["MCTL_CACHE_DIR"] = os.path.join(BASE, "cache")
    os.environ.pop("MCTL_NO_INDEX", None)
    tree = os.path.join(BASE, f"projects-{SESSIONS}")
    if not os.path.exists(tree + ".complete"):
        print(f"generating {SESSIONS} sessions...", file=sys.stderr)
        shutil.rmtree(tree, ignore_errors=True)
        generate(tree, SESSIONS)
        open(tree + ".complete", "w").close()
    work = os.path.join(BASE, "work")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(os.environ["MCTL_CACHE_DIR"], ignore_errors=True)
    shutil.copytree(tree, work, symlinks=True)
    runs = ["--runs-dir", work, "runs", "--json"]

    def same(what):
        with_index = json.loads(mctl(*runs))
        without = json.loads(mctl("--no-index", *runs))
        if with_index != without:
            sys.exit(f"{what}: the index's answer differs from a full read")
        return len(with_index)

    mctl(*runs)  # builds the index
    count = same("warm")
    plain = timed("--no-index", *runs)
    warm = timed(*runs)
    projects = sorted(os.listdir(work))
    appended = 0
    for p in projects:
        for name in sorted(os.listdir(os.path.join(work, p))):
            if name.endswith(".jsonl") and appended < 20:
                with open(os.path.join(work, p, name), "a") as f:
                    f.write(json.dumps({"type": "user", "uuid": f"more-{appended}", "sessionId": name[:-6],
                                        "message": {"role": "user", "content": "one more thing"}}) + "\n")
                appended += 1
    start = time.perf_counter()
    mctl(*runs)
    changed = time.perf_counter() - start
    same("after appends")
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(work) for f in fs if f.endswith(".jsonl"))
    print(f"tree: {SESSIONS} Claude Code sessions, {count} runs, {size / 1e6:.0f} MB of session files")
    print(f"{'mctl runs --json --no-index (baseline)':<58} {plain:8.3f}s")
    print(f"{'mctl runs --json, warm index, nothing changed':<58} {warm:8.3f}s")
    print(f"ratio: warm index / no index = {warm / plain:.3f}x")
    print(f"{'after a prompt appended to 20 sessions':<58} {changed:8.3f}s")


if __name__ == "__main__":
    main()
