#!/usr/bin/env python3
"""Compares mctl's tokens and costs with ccusage's, per session file (scripts/agree.sh).

Each file is laid out alone as its agent's store (Claude Code: `projects/<project>/<file>`,
Codex: `sessions/YYYY/MM/DD/<file>`) and read by both. ccusage counts every usage in the file
under its session (a subagent's too); mctl's figures for the file are its runs' own figures
summed (a session file that holds side conversations reads as several runs). Claude Code's
input is compared part by part: fresh input, cache writes, cache reads; Codex's as fresh input
and cached input. Tokens must be equal; costs within 1 %.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile
from pathlib import Path

COST_TOLERANCE = 0.01

# A session laid out with its subagents, as Claude Code writes them: ccusage counts the
# subagents' usage under the session; mctl's session run says it "with subagents"
# (`tokensWithChildren`, `costWithChildrenUsd`).
FAMILIES = [
    ("marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20",
     ["marot__spotter__8463c716_subagents_agent-a7be2f0",
      "marot__spotter__8463c716_subagents_agent-acompact-f46190"]),
]


def run_json(cmd, env):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"agree: {' '.join(map(str, cmd))} failed: {out.stderr.strip()[:400]}")
    return json.loads(out.stdout)


def environment(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCTL_", "CLAUDE_", "CODEX_"))}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(home), CODEX_HOME=str(home),
               MCTL_CACHE_DIR=str(home / "cache"), MCTL_CONFIG_DIR=str(home / "config"))
    return env


def claude(args, path):
    name = path.stem
    stored = name[name.rfind("agent-"):] if "agent-" in name else name
    with tempfile.TemporaryDirectory() as t:
        home = Path(t)
        project = home / "projects" / "-home-user-project"
        project.mkdir(parents=True)
        shutil.copy(path, project / f"{stored}.jsonl")
        env = environment(home)
        theirs = run_json([args.ccusage, "claude", "session", "--json", "--offline"], env)
        ours = run_json([args.mctl, "--runs-dir", home / "projects", "--source", "claude",
                         "runs", "--json", "--no-index"], env)
    sessions = theirs.get("sessions", [])
    t = [sum(s.get(k, 0) for s in sessions)
         for k in ("inputTokens", "cacheCreationTokens", "cacheReadTokens", "outputTokens")]
    o = [sum(r[k] or 0 for r in ours)
         for k in ("uncachedInputTokens", "cacheWriteTokens", "cacheReadTokens", "outputTokens")]
    return t, o, sum(s.get("totalCost", 0) for s in sessions), cost_of(ours)


def codex(args, path):
    stored = path.name[path.name.find("rollout-"):]
    with tempfile.TemporaryDirectory() as t:
        home = Path(t)
        day = home / "sessions" / "2026" / "01" / "01"
        day.mkdir(parents=True)
        shutil.copy(path, day / stored)
        env = environment(home)
        theirs = run_json([args.ccusage, "codex", "session", "--json", "--offline"], env)
        ours = run_json([args.mctl, "--runs-dir", home / "sessions", "runs", "--json",
                         "--no-index"], env)
    sessions = theirs.get("sessions", [])
    t = [sum(s.get(k, 0) for s in sessions)
         for k in ("inputTokens", "cacheReadTokens", "outputTokens", "reasoningOutputTokens")]
    o = [sum(r[k] or 0 for r in ours)
         for k in ("uncachedInputTokens", "cacheReadTokens", "outputTokens", "reasoningTokens")]
    return t, o, sum(s.get("costUSD", 0) for s in sessions), cost_of(ours)


def family(args, parent, children):
    session = parent.rsplit("__", 1)[1]
    with tempfile.TemporaryDirectory() as t:
        home = Path(t)
        project = home / "projects" / "-home-user-project"
        (project / session / "subagents").mkdir(parents=True)
        shutil.copy(args.shared / "claude-code" / f"{parent}.jsonl", project / f"{session}.jsonl")
        for child in children:
            agent = child[child.rfind("agent-"):]
            shutil.copy(args.shared / "claude-code" / f"{child}.jsonl",
                        project / session / "subagents" / f"{agent}.jsonl")
        env = environment(home)
        theirs = run_json([args.ccusage, "claude", "session", "--json", "--offline"], env)
        ours = run_json([args.mctl, "--runs-dir", home / "projects", "--source", "claude",
                         "runs", "--json", "--no-index"], env)
    sessions = theirs.get("sessions", [])
    t = [sum(s.get(k, 0) for s in sessions for k in
             ("inputTokens", "cacheCreationTokens", "cacheReadTokens", "outputTokens"))]
    run = next(r for r in ours if r["id"] == session)
    return t, [run["tokensWithChildren"]], sum(s.get("totalCost", 0) for s in sessions), \
        run["costWithChildrenUsd"]


def cost_of(runs):
    costs = [r["costUsd"] for r in runs]
    return None if any(c is None for c in costs) else sum(costs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ccusage", required=True)
    p.add_argument("--mctl", required=True)
    p.add_argument("--shared", required=True, type=Path)
    args = p.parse_args()
    rows, bad = [], 0
    totals = {"claude": [0.0, 0.0], "codex": [0.0, 0.0]}
    for agent, read in (("claude", claude), ("codex", codex)):
        folder = args.shared / ("claude-code" if agent == "claude" else "codex")
        for path in sorted(folder.glob("*.jsonl")):
            theirs, ours, their_cost, our_cost = read(args, path)
            same_tokens = theirs == ours
            if our_cost is None:
                same_cost = their_cost == 0
            else:
                same_cost = abs(our_cost - their_cost) <= COST_TOLERANCE * max(their_cost, 1e-9) \
                    or abs(our_cost - their_cost) < 1e-9
            totals[agent][0] += their_cost
            totals[agent][1] += our_cost or 0
            ok = same_tokens and same_cost
            bad += not ok
            rows.append((agent, path.stem[:58], theirs, ours, their_cost, our_cost, ok))
    for parent, children in FAMILIES:
        if not (args.shared / "claude-code" / f"{parent}.jsonl").is_file():
            continue
        theirs, ours, their_cost, our_cost = family(args, parent, children)
        ok = theirs == ours and our_cost is not None \
            and abs(our_cost - their_cost) <= COST_TOLERANCE * max(their_cost, 1e-9)
        bad += not ok
        name = f"{parent[:40]} + {len(children)} subagents"
        rows.append(("claude", name, theirs, ours, their_cost, our_cost, ok))
    print(f"{'agent':<7} {'session file':<58} {'tokens (ccusage | mctl)':<60} {'cost ccusage':>13} {'mctl':>13}  ")
    for agent, name, theirs, ours, tc, oc, ok in rows:
        tokens = f"{theirs}" if theirs == ours else f"{theirs} | {ours}"
        mine = "—" if oc is None else f"${oc:.4f}"
        print(f"{agent:<7} {name:<58} {tokens:<60} {'$%.4f' % tc:>13} {mine:>13}  {'same' if ok else 'DIFFERENT'}")
    for agent, (tc, oc) in totals.items():
        print(f"total {agent}: ccusage ${tc:.4f}, mctl ${oc:.4f}")
    print(f"{len(rows) - bad} of {len(rows)} session files agree (tokens equal, costs within 1 %)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
