#!/usr/bin/env python3
"""A cold first scan of a Claude Code store and a Codex store, beside ccusage and `cat`.

Builds BENCH_SESSIONS (5,000) Claude Code sessions and BENCH_ROLLOUTS (2,000) Codex rollouts
from the real files in ../shared/data/agents (BENCH_SHARED). Each copy gets fresh session,
message and request ids, so that no tool can skip a copy as a duplicate. Without the shared
files, sessions and rollouts of the same shapes are generated instead. A harness runs directory
of BENCH_RUNS (5,000) runs is built too.

Then, for each store, three rounds in one run on the same warm files, the commands alternating
within each round (the medians are printed):
  - `cat` of every file (the floor: reading the bytes), on one core and on every core;
  - mctl cold: `mctl runs --json` with an empty cache folder, on every core and with --jobs 1;
  - `mctl runs --json --no-index`, on every core;
  - `ccusage <agent> session --json --offline` (CCUSAGE names the binary; else, unless
    BENCH_CCUSAGE=0, ccusage 20.0.24 is installed from npm into a temporary prefix).
After the rounds: a warm listing (index kept, nothing changed; the fastest of WARM_RUNS) and a
listing after a line was appended to 10 files (the fastest of three appends, each undone after
its listing: a listing of a few tens of milliseconds moves by a third between runs here). For the harness runs, the watcher's first look too, every core and one:
`mctl watch --json` until its output stays quiet (a look that tells every line it reads), and
`mctl serve` with an event stream open, from an empty cache folder, until its watch is up (the
look the app waits for on a cold start, which tells nothing). Every mctl answer must equal the one-core cold answer, byte for byte, and
the cold build must equal the listing without an index: the benchmark exits non-zero otherwise.
The peak RSS of each mctl command is printed beside its time, with the targets. Last, how the
cold peak grows with the number of runs: the harness runs and BENCH_COPIES (8) times as many
(hard links under new names), then the Claude Code sessions and BENCH_PROJECT_COPIES (4) times
as many (each project folder again under a new name, its files hard links), each listed cold
three times; the growth per 1,000 runs and the number of runs at which the peak would pass
64 MiB are printed.

MCTL names the binary (default target/release/mctl, built here); the data lives in BENCH_DIR
(target/bench-cold), kept between runs.
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from measure import measured, mctl_binary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SESSIONS = int(os.environ.get("BENCH_SESSIONS", "5000"))
ROLLOUTS = int(os.environ.get("BENCH_ROLLOUTS", "2000"))
RUNS = int(os.environ.get("BENCH_RUNS", "5000"))
COPIES = int(os.environ.get("BENCH_COPIES", "8"))
PROJECT_COPIES = int(os.environ.get("BENCH_PROJECT_COPIES", "4"))
BASE = os.environ.get("BENCH_DIR", os.path.join(ROOT, "target", "bench-cold"))
SHARED = os.environ.get("BENCH_SHARED", os.path.join(ROOT, "..", "shared", "data", "agents"))
ROUNDS = 3
WARM_RUNS = 5
OLD_MS = 1_700_000_000_000

sys.path.insert(0, os.path.join(ROOT, "bench"))


def shared_files(agent):
    folder = os.path.join(SHARED, agent)
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".jsonl"))


def uuid_of(kind, i):
    return f"{kind:08x}-{i >> 16 & 0xffff:04x}-4{i >> 4 & 0xfff:03x}-8{i & 0xf:03x}-{i:012x}"


# The ids a copy renames: a message's and a request's (ccusage counts each pair once), the
# session's own.
MESSAGE_ID = re.compile(rb'"(id|requestId)":"((?:msg|req)_[A-Za-z0-9_]+)"')
SESSION_ID = re.compile(rb'"sessionId":"[^"]*"')


def claude_store(root):
    real = shared_files("claude-code")
    if not real:
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            "agents_scale", os.path.join(ROOT, "bench", "agents-scale.py"))
        agents = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(agents)
        return agents.generate(root, SESSIONS)
    texts = [open(f, "rb").read() for f in real]
    for i in range(SESSIONS):
        session = uuid_of(0xc1a0de, i)
        suffix = f"_{i:x}".encode()
        text = MESSAGE_ID.sub(lambda m: b'"%s":"%s%s"' % (m[1], m[2], suffix), texts[i % len(texts)])
        text = SESSION_ID.sub(b'"sessionId":"%s"' % session.encode(), text)
        project = os.path.join(root, f"-home-user-project-{i % 20:02d}")
        os.makedirs(project, exist_ok=True)
        path = os.path.join(project, f"{session}.jsonl")
        with open(path, "wb") as f:
            f.write(text)
        # Finished sessions, as a real store holds: last written a day ago, whenever the store
        # was built (a live session's scan is kept ready to be read on, and costs memory).
        os.utime(path, (time.time() - 86_400, time.time() - 86_400))


def generated_rollout(i):
    """A rollout of the real ones' shapes: a prompt, eight calls with their outputs and
    token counts, an answer."""
    ts = f"2026-01-{1 + i % 28:02d}T10:00:00.000Z"
    lines = [{"type": "session_meta", "payload": {"id": "ID", "timestamp": ts, "cwd": "/work",
                                                  "originator": "codex_cli_rs", "cli_version": "0.128.0"}},
             {"type": "turn_context", "payload": {"cwd": "/work", "model": "gpt-5-codex"}},
             {"type": "event_msg", "payload": {"type": "user_message", "message": f"task {i}"}}]
    total = 0
    for c in range(8):
        call = f"call_{i:06d}_{c}"
        lines.append({"type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": call,
            "arguments": json.dumps({"cmd": f"cat f{c}"})}})
        lines.append({"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": call,
            "output": "Process exited with code 0\nOutput:\n" + f"line {c}\n" * 300}})
        total += 3000
        usage = {"input_tokens": 3000, "cached_input_tokens": 2000, "output_tokens": 80,
                 "reasoning_output_tokens": 20, "total_tokens": 3080}
        lines.append({"type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": dict(usage, input_tokens=total), "last_token_usage": usage}}})
    lines.append({"type": "response_item", "payload": {
        "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}})
    return "".join(json.dumps(dict(l, timestamp=ts)) + "\n" for l in lines).encode()


def codex_store(root):
    real = shared_files("codex")
    texts = [open(f, "rb").read() for f in real]
    for i in range(ROLLOUTS):
        if texts:
            text = texts[i % len(texts)]
            old = re.search(rb'"type":"session_meta","payload":\{"id":"([^"]+)"', text)[1]
        else:
            text, old = generated_rollout(i), b"ID"
        rollout = uuid_of(0xc0de, i)
        suffix = f"_{i:x}".encode()
        text = MESSAGE_ID.sub(lambda m: b'"%s":"%s%s"' % (m[1], m[2], suffix), text)
        text = text.replace(old, rollout.encode())
        day = os.path.join(root, "2026", "01", f"{1 + i % 28:02d}")
        os.makedirs(day, exist_ok=True)
        name = f"rollout-2026-01-{1 + i % 28:02d}T10-{i // 60 % 60:02d}-{i % 60:02d}-{rollout}.jsonl"
        with open(os.path.join(day, name), "wb") as f:
            f.write(text)


def harness_store(root):
    os.makedirs(root, exist_ok=True)
    for r in range(RUNS):
        rid = f"run_{OLD_MS + r * 1000}_{r:08x}"
        ts = OLD_MS + r * 1000
        lines = []

        def ev(e):
            nonlocal ts
            ts += 1
            lines.append(json.dumps({"schemaVersion": 1, "runId": rid, "seq": len(lines), "ts": ts,
                                     "event": dict(e, runId=rid, ts=ts)}))

        ev({"type": "run_started", "cwd": "/work", "provider": "anthropic", "model": "claude-sonnet-4-5"})
        ev({"type": "user_message", "messageId": "u", "text": f"task {r}", "attachments": []})
        for i in range(12):
            call = f"toolu_{r:06d}_{i:03d}"
            ev({"type": "assistant_message", "messageId": f"a{i}",
                "content": [{"type": "tool_call", "toolCallId": call, "name": "read_file", "input": {"path": f"f{i}"}}],
                "usage": {"promptTokens": 1200 + i, "completionTokens": 40}})
            ev({"type": "tool_call_started", "toolCallId": call, "name": "read_file", "input": {"path": f"f{i}"}})
            ev({"type": "tool_call_finished", "toolCallId": call,
                "result": {"ok": True, "content": f"fn f{i}() {{}}\n" * 80}})
        ev({"type": "run_result", "result": {"status": "done"}})
        path = os.path.join(root, rid + ".jsonl")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.utime(path, ns=(ts * 1_000_000, ts * 1_000_000))


def build(name, make):
    root = os.path.join(BASE, name)
    if not os.path.exists(root + ".complete"):
        print(f"generating {name}...", file=sys.stderr)
        shutil.rmtree(root, ignore_errors=True)
        make(root)
        open(root + ".complete", "w").close()
    return root


def ccusage_binary(tmp):
    if os.environ.get("CCUSAGE"):
        return os.environ["CCUSAGE"]
    if os.environ.get("BENCH_CCUSAGE") == "0":
        return None
    platform = {"x86_64": "linux-x64", "aarch64": "linux-arm64"}.get(os.uname().machine)
    if not platform:
        return None
    package = f"@ccusage/ccusage-{platform}@20.0.24"
    done = subprocess.run(["npm", "install", "--silent", "--no-save", "--no-audit", "--no-fund",
                           "--prefix", tmp, package], capture_output=True)
    if done.returncode != 0:
        print(f"ccusage could not be installed: {done.stderr.decode()[:300]}", file=sys.stderr)
        return None
    binary = os.path.join(tmp, "node_modules", "@ccusage", f"ccusage-{platform}", "bin", "ccusage")
    os.chmod(binary, 0o755)
    return binary


def files_of(root):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)


def cat(files, jobs=1):
    """Seconds `cat` takes to read every file: one `cat` after another, or `jobs` at once."""
    spread = ["-P", str(jobs), "-n", str(max(1, len(files) // (jobs * 8)))] if jobs > 1 else []
    start = time.perf_counter()
    subprocess.run(["xargs", "-0", *spread, "cat"], input="\0".join(files).encode(),
                   stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start, 0.0, b""


def grown_listing(label, base, env, appended, check):
    """A listing after a line was appended to each of `appended`, then undone; with `check`, its
    answer must equal the one without an index."""
    # Put back as they were, times too: a file written minutes ago is a live session, read
    # otherwise, and the copies of the harness runs share these files.
    saved = {f: os.stat(f) for f in appended}
    try:
        for f in appended:
            with open(f, "rb+") as h:
                h.seek(0, 2)
                h.write(b'{"type":"system","note":"appended by the benchmark"}\n')
        grown = measured(base, env)
        if check and grown[2] != measured([*base, "--no-index"], env)[2]:
            sys.exit(f"{label}: the listing after 10 appends answers otherwise than no index")
        return grown
    finally:
        for f, st in saved.items():
            with open(f, "rb+") as h:
                h.truncate(st.st_size)
            os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))


def scan(label, root, source, binary, ccusage, agent):
    files = files_of(root)
    size = sum(os.path.getsize(f) for f in files)
    cache = os.path.join(BASE, "cache")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCTL_")}
    env.update(MCTL_CACHE_DIR=cache)
    base = [binary, "--runs-dir", root, "--source", source, "runs", "--json"]

    def cold(*args):
        shutil.rmtree(cache, ignore_errors=True)
        return measured([*base, *args], env)

    commands = [
        ("cat of every file (reading the bytes)", lambda: cat(files)),
        ("cat of every file, every core", lambda: cat(files, os.cpu_count() or 1)),
        ("mctl cold, every core", cold),
        ("mctl cold, --jobs 1", lambda: cold("--jobs", "1")),
        ("mctl --no-index, every core", lambda: measured([*base, "--no-index"], env)),
    ]
    if ccusage and agent:
        home = tempfile.mkdtemp()
        link = "projects" if agent == "claude" else "sessions"
        os.symlink(root, os.path.join(home, link))
        cenv = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_"))}
        cenv.update(HOME=home, CLAUDE_CONFIG_DIR=home, CODEX_HOME=home)
        commands.append((f"ccusage {agent} session --json --offline", lambda: measured(
            [ccusage, agent, "session", "--json", "--offline"], cenv, keep_output=False)))
    results = {name: [] for name, _ in commands}
    for _ in range(ROUNDS):
        for name, run in commands:
            results[name].append(run())
    one = results["mctl cold, --jobs 1"][0][2]
    for name, runs in results.items():
        for took, rss, out in runs:
            if name.startswith("mctl") and out != one:
                sys.exit(f"{label}: `{name}` answers otherwise than a cold build on one core")
    # Warm: the index kept from the last cold build, nothing changed; then 10 files appended to.
    warm = min((measured(base, env) for _ in range(WARM_RUNS)), key=lambda r: r[0])
    if warm[2] != one:
        sys.exit(f"{label}: the warm listing answers otherwise than the cold build")
    appended = files[:: max(1, len(files) // 10)][:10]
    # Each append is a change the index has not seen (the one before was undone, its times
    # too): every round re-reads the 10 files. The first round's answer is checked; the others
    # read the same bytes.
    grown = min((grown_listing(label, base, env, appended, check=i == 0) for i in range(ROUNDS)),
                key=lambda r: r[0])
    print(f"\n{label}: {len(files)} files, {size / 1e6:.0f} MB")
    medians = {}
    for name, runs in results.items():
        took = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        medians[name] = took
        memory = f"{rss:6.1f} MiB" if name.startswith("mctl") else ""
        print(f"  {name:<48} {took:8.3f}s  {memory}")
    print(f"  {'mctl warm (index kept, nothing changed)':<48} {warm[0]:8.3f}s  {warm[1]:6.1f} MiB")
    print(f"  {'mctl after 10 files grew':<48} {grown[0]:8.3f}s  {grown[1]:6.1f} MiB")
    every, single = medians["mctl cold, every core"], medians["mctl cold, --jobs 1"]
    peak = max(r[1] for name, runs in results.items() if name.startswith("mctl cold") for r in runs)
    print(f"  one core / every core = {single / every:.2f}x (target >= 1.7x on two cores)")
    print(f"  every core / cat = {every / medians['cat of every file (reading the bytes)']:.1f}x")
    print(f"  cold peak RSS = {peak:.1f} MiB (target <= 64 MiB)")
    theirs = next((t for n, t in medians.items() if n.startswith("ccusage")), None)
    if theirs:
        print(f"  mctl cold / ccusage = {every / theirs:.2f}x (target <= 0.5x)")
        # The floor under that target: no reader of every byte is faster than reading them.
        floor = medians["cat of every file, every core"]
        print(f"  half of ccusage = {theirs / 2:.3f}s; reading the bytes on every core = "
              f"{floor:.3f}s ({theirs / 2 / floor:.1f}x that floor)")


def first_look(binary, root, jobs=None):
    """Seconds from starting `mctl watch --json` to the last change of its first look (its
    output then stays quiet): a watcher reading cold and telling every line it reads."""
    import select
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCTL_")}
    if jobs:
        env["MCTL_JOBS"] = str(jobs)
    start = time.perf_counter()
    watch = subprocess.Popen([binary, "--runs-dir", root, "watch", "--json"], env=env,
                             stdout=subprocess.PIPE)
    fd, last, changes = watch.stdout.fileno(), start, 0
    # Quiet for 1.5 s once it has said something; before its first line, a cold read of
    # thousands of runs on one core may take longer than that.
    while select.select([fd], [], [], 1.5 if changes else 120)[0]:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        changes += chunk.count(b"\n")
        last = time.perf_counter()
    watch.kill()
    watch.wait()
    return last - start, changes


def app_first_look(binary, root, jobs=None):
    """Seconds from starting `mctl serve` (an empty cache folder, one event stream open: its
    watch starts with the first) to its log saying the watch is up: the first look the app
    waits for on a cold start, which tells nothing of what it reads."""
    import http.client
    import queue
    import threading
    import urllib.request
    cache = os.path.join(BASE, "cache-serve")
    shutil.rmtree(cache, ignore_errors=True)
    token = "bench-token-0123456789"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCTL_")}
    env.update(MCTL_CACHE_DIR=cache, MCTL_TOKEN=token, MCTL_LOG="mission_control=info",
               NO_COLOR="1")
    if jobs:
        env["MCTL_JOBS"] = str(jobs)

    def stream(url):
        asked = urllib.request.Request(url + "/api/events",
                                       headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(asked) as events:
                while events.read(1 << 12):
                    pass
        except (OSError, http.client.HTTPException):
            pass  # the server was stopped

    def log(lines, into):
        for line in lines:
            into.put(line)
        into.put(None)

    # A watch that never comes up (it failed and said so, or the stream never opened) ends the
    # benchmark after this long, with what the server said, instead of holding it forever.
    deadline = time.perf_counter() + 600
    start = time.perf_counter()
    serve = subprocess.Popen([binary, "serve", "--bind", "127.0.0.1:0", "--runs-dir", root,
                              "--source", "klide"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    said = queue.Queue()
    threading.Thread(target=log, args=(serve.stderr, said), daemon=True).start()
    try:
        for line in serve.stdout:
            found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
            if found:
                threading.Thread(target=stream, args=(found.group(1),), daemon=True).start()
                break
        heard = []
        while (left := deadline - time.perf_counter()) > 0:
            try:
                line = said.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            if "its first look is done" in line:
                return time.perf_counter() - start
            heard.append(line)
        sys.exit("mctl serve: no watch up (its log: " + "".join(heard[-5:]).strip() + ")")
    finally:
        serve.kill()
        serve.wait()


def watched(label, root, binary):
    every = [first_look(binary, root) for _ in range(ROUNDS)]
    one = [first_look(binary, root, jobs=1) for _ in range(ROUNDS)]
    if len({n for _, n in every + one}) != 1:
        sys.exit(f"{label}: the first looks told different numbers of changes")
    e, o = statistics.median(t for t, _ in every), statistics.median(t for t, _ in one)
    print(f"  {'mctl watch: first look, every core':<48} {e:8.3f}s  ({every[0][1]} changes)")
    print(f"  {'mctl watch: first look, --jobs 1':<48} {o:8.3f}s")
    e = statistics.median(app_first_look(binary, root) for _ in range(ROUNDS))
    o = statistics.median(app_first_look(binary, root, jobs=1) for _ in range(ROUNDS))
    print(f"  {'mctl serve: untold first look, every core':<48} {e:8.3f}s")
    print(f"  {'mctl serve: untold first look, --jobs 1':<48} {o:8.3f}s")


def linked_copies(root, copies):
    """The runs of `root` `copies` times over, as hard links under new names: a store of many
    runs without their bytes twice on disk."""
    many = f"{root}-x{copies}"
    if not os.path.exists(many + ".complete"):
        shutil.rmtree(many, ignore_errors=True)
        os.makedirs(many)
        for name in os.listdir(root):
            for k in range(copies):
                os.link(os.path.join(root, name), os.path.join(many, name.replace("run_", f"run{k}_", 1)))
        open(many + ".complete", "w").close()
    return many


def linked_projects(root, copies):
    """The sessions of Claude Code store `root` `copies` times over: each project folder again
    under a new name, its files hard links."""
    many = f"{root}-x{copies}"
    if not os.path.exists(many + ".complete"):
        shutil.rmtree(many, ignore_errors=True)
        os.makedirs(many)
        for k in range(copies):
            for name in os.listdir(root):
                source, copy = os.path.join(root, name), os.path.join(many, f"x{k}{name}")
                if os.path.isdir(source):
                    shutil.copytree(source, copy, copy_function=os.link)
                else:
                    os.link(source, copy)
        open(many + ".complete", "w").close()
    return many


def growth(binary, label, source, root, many):
    """The cold peak RSS of `mctl runs --json` over the runs of `root` and over `many` (the same
    runs several times over): what holding a listing costs per run."""
    cache = os.path.join(BASE, "cache")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCTL_")}
    env.update(MCTL_CACHE_DIR=cache)

    def cold(store):
        shutil.rmtree(cache, ignore_errors=True)
        return measured([binary, "--runs-dir", store, "--source", source, "runs", "--json"], env)

    peaks = {root: [], many: []}
    for _ in range(ROUNDS):
        for store in peaks:
            peaks[store].append(cold(store))
    plain = measured([binary, "--runs-dir", many, "--source", source, "--no-index", "runs", "--json"], env)
    if any(r[2] != plain[2] for r in peaks[many]):
        sys.exit("the cold listing of the copies answers otherwise than no index")
    print(f"\ncold peak RSS by runs listed ({label})")
    runs = {store: len(json.loads(peaks[store][0][2])) for store in peaks}
    files = {store: len(files_of(store)) for store in peaks}
    rss = {store: statistics.median(r[1] for r in peaks[store]) for store in peaks}
    took = {store: statistics.median(r[0] for r in peaks[store]) for store in peaks}
    for store in peaks:
        name = f"{runs[store]} runs ({files[store]} files)"
        print(f"  {name:<48} {took[store]:8.3f}s  {rss[store]:6.1f} MiB")
    per_run = (rss[many] - rss[root]) / (runs[many] - runs[root])
    print(f"  growth = {per_run * 1000:.2f} MiB per 1,000 runs")
    if per_run > 0:
        print(f"  64 MiB would be passed at about {runs[root] + (64 - rss[root]) / per_run:,.0f} runs")


def main():
    binary = mctl_binary()
    print(f"cores: {os.cpu_count()}; {ROUNDS} rounds, medians")
    kind = {a: "real copies" if shared_files(a) else "generated" for a in ("claude-code", "codex")}
    with tempfile.TemporaryDirectory() as tmp:
        ccusage = ccusage_binary(tmp)
        claude = build(f"claude-{SESSIONS}", claude_store)
        scan(f"{SESSIONS} Claude Code sessions ({kind['claude-code']})",
             claude, "claude", binary, ccusage, "claude")
        scan(f"{ROLLOUTS} Codex rollouts ({kind['codex']})",
             build(f"codex-{ROLLOUTS}", codex_store), "codex", binary, ccusage, "codex")
        harness = build(f"harness-{RUNS}", harness_store)
        scan(f"{RUNS} harness runs", harness, "klide", binary, None, None)
        watched(f"{RUNS} harness runs", harness, binary)
        growth(binary, f"harness runs, {COPIES} times over as links", "klide",
               harness, linked_copies(harness, COPIES))
        growth(binary, f"Claude Code sessions, {PROJECT_COPIES} times over as links", "claude",
               claude, linked_projects(claude, PROJECT_COPIES))


if __name__ == "__main__":
    main()
