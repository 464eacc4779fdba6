//! Every real session file in `../shared/data/agents/` read as a run, its counts pinned, and
//! the two real `<persisted-output>` stubs opened with and without their value files. A clone
//! without `../shared` says so and checks the hand-built stores only (claude.rs, codex.rs).

use crate::support::{mctl_json, OLD_MS};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn shared() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/agents");
    if dir.is_dir() {
        return Some(dir);
    }
    eprintln!(
        "{} is absent: the real session files are not read here; the hand-built Claude Code \
         and Codex stores in tests/it/agents cover the same formats",
        dir.display()
    );
    None
}

/// Per file: the runs it reads as, then events, tool calls, results and failed results over
/// them, the file's side lines, and persisted-output results. Calls, results and failures
/// agree with the files' provenance notes, counted independently. An older build's session
/// file holds its subagents' side conversations: each is a run under the session.
const CLAUDE: &[(&str, usize, [u64; 6])] = &[
    ("alfredjeanlab__claudeless__v2.1.29_bash-permission-dialog_f3ba0bdb", 1, [8, 1, 1, 1, 0, 0]),
    ("alfredjeanlab__claudeless__v2.1.29_compact-command_8aa54c1d", 1, [11, 0, 0, 0, 0, 0]),
    ("alfredjeanlab__claudeless__v2.1.29_compact-command_subagents_agent-aprompt_suggestion-029c25", 1, [2, 0, 0, 0, 2, 0]),
    ("alfredjeanlab__claudeless__v2.1.29_edit-permission-dialog_c2fc3a3f", 1, [19, 3, 3, 1, 0, 0]),
    ("alfredjeanlab__claudeless__v2.1.29_hook-stop_d266fdf5", 1, [12, 1, 1, 0, 0, 0]),
    ("chiphuyen__sniffly__d3ad4cdc-5657-435d-98fa-0035d53e383d", 1, [195, 59, 58, 4, 0, 0]),
    ("chiphuyen__sniffly__fed8ce56-bc79-401f-a83e-af084253362f", 1, [27, 7, 7, 2, 0, 0]),
    ("chiphuyen__sniffly__ff71dbed-a4f2-4284-a4fc-fe2fb90de929", 1, [0, 0, 0, 0, 0, 0]),
    ("codemie-ai__codemie-code__incremental-subagents_turn-1_subagents_agent-a485154", 1, [64, 20, 20, 1, 44, 1]),
    ("codemie-ai__codemie-code__incremental-subagents_turn-2", 1, [59, 14, 14, 0, 0, 0]),
    ("codemie-ai__codemie-code__session-196820da", 1, [278, 65, 65, 2, 0, 0]),
    ("codemie-ai__codemie-code__session-9eda1058", 1, [22, 3, 3, 1, 0, 0]),
    ("d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7", 3, [73, 21, 21, 3, 22, 0]),
    ("d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b", 6, [603, 167, 167, 23, 405, 0]),
    ("jnarowski__agentcmd__full-session-five", 1, [19, 5, 5, 0, 0, 0]),
    ("jnarowski__agentcmd__full-session-four", 1, [108, 27, 27, 1, 0, 0]),
    ("jnarowski__agentcmd__full-session-two", 1, [44, 10, 10, 1, 0, 0]),
    ("jnarowski__agentcmd__full-session", 1, [72, 23, 20, 0, 0, 0]),
    ("kfischer-okarin__scripts-and-tools__0f13eeba-e6ed-42ea-ad8c-d8db37e1304e", 1, [0, 0, 0, 0, 0, 0]),
    ("kfischer-okarin__scripts-and-tools__agent-a434715", 1, [10, 2, 2, 0, 8, 0]),
    ("kfischer-okarin__scripts-and-tools__b3edadab-bca0-4054-9b41-f7ffa6941260", 1, [56, 7, 7, 0, 0, 0]),
    ("marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20", 1, [635, 177, 177, 13, 0, 1]),
    ("marot__spotter__8463c716_subagents_agent-a7be2f0", 1, [71, 19, 19, 2, 131, 0]),
    ("marot__spotter__8463c716_subagents_agent-acompact-f46190", 1, [2, 0, 0, 0, 7, 0]),
    ("marot__spotter__short", 1, [11, 2, 2, 2, 0, 0]),
    ("marot__spotter__subagent", 1, [63, 16, 16, 0, 0, 0]),
    ("marot__spotter__tool_heavy", 1, [27, 6, 6, 0, 0, 0]),
];

const CODEX: &[(&str, [u64; 6])] = &[
    ("codemie-ai__codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799", [322, 102, 102, 4, 5, 0]),
    ("codemie-ai__codemie-code__rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80", [121, 38, 38, 1, 3, 0]),
    ("jnarowski__agentcmd__rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08", [521, 123, 123, 8, 1, 0]),
    ("jnarowski__agentcmd__rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5", [70, 16, 16, 3, 0, 0]),
];

/// The one run of a store of kind `source` holding one file, as `mctl show --json` tells it.
/// The kind is given: an empty file alone says nothing of what it is. The listing's row must
/// be the run `show` tells: a listing skips what only a timeline shows, never a figure.
fn only_run(dir: &Path, source: &str) -> Value {
    let runs = mctl_json(dir, &["--source", source, "runs"]);
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 1, "one run in {}", dir.display());
    let id = runs[0]["id"].as_str().unwrap().to_owned();
    let show = mctl_json(dir, &["--source", source, "show", &id]);
    assert_eq!(
        show["run"],
        runs[0],
        "the listing and `show` agree in {}",
        dir.display()
    );
    show
}

fn counts(show: &Value, sixth: &str) -> [u64; 6] {
    let run = &show["run"];
    let n = |k: &str| run[k].as_u64().unwrap();
    let failed = show["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ok"] == false)
        .count() as u64;
    let persisted = n("retained") + n("unretained") + n("damaged") + n("swept");
    [
        n("events"),
        n("toolCalls"),
        n("results"),
        failed,
        n(sixth),
        persisted,
    ]
}

/// Each file alone in a project folder, named as Claude Code names it (a subagent's file
/// `agent-<id>.jsonl`, as older builds put them beside the sessions).
fn claude_store(file: &Path, name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("-home-ana-app")
        .join(format!("{}.jsonl", stored_name(name)));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(file, &path).unwrap();
    crate::support::set_mtime(&path, OLD_MS);
    dir
}

#[test]
fn every_real_session_and_side_conversation_reads_as_scanned_as_whole() {
    let Some(shared) = shared() else { return };
    let (mut started, mut ended, mut passed_over) = (0, 0, 0);
    for (name, _, _) in CLAUDE {
        let store = claude_store(&shared.join(format!("claude-code/{name}.jsonl")), name);
        let reads = super::subagents::reads_as_scanned(store.path());
        started += reads.started;
        ended += reads.ended;
        passed_over += reads.passed_over;
    }
    // The two sessions of an older build hold seven side conversations, none on line 1; the
    // reads of those that have lines of the session after their last stop there; both
    // sessions pass over their side lines.
    assert_eq!((started, ended, passed_over), (7, 7, 2));
}

#[test]
fn every_real_claude_code_session_reads_with_its_counts() {
    let Some(shared) = shared() else { return };
    let files: Vec<_> = std::fs::read_dir(shared.join("claude-code"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_owned))
        .collect();
    assert_eq!(files.len(), CLAUDE.len(), "a count for every file");
    for (name, runs, want) in CLAUDE {
        let store = claude_store(&shared.join(format!("claude-code/{name}.jsonl")), name);
        let dir = store.path();
        let listed = mctl_json(dir, &["--source", "claude", "runs"]);
        let listed = listed.as_array().unwrap();
        assert_eq!(listed.len(), *runs, "{name}: its runs");
        // The file's own run is named by its file; the others are its side conversations.
        let own = stored_name(name);
        let shows: Vec<Value> = (listed.iter())
            .map(|r| {
                mctl_json(
                    dir,
                    &["--source", "claude", "show", r["id"].as_str().unwrap()],
                )
            })
            .collect();
        let mut got = [0u64; 6];
        for (show, row) in shows.iter().zip(listed) {
            // A listing builds no timeline, and skips what only a timeline shows: its figures
            // are still those of a whole reading.
            assert_eq!(show["run"], *row, "{name}: the listing and `show` agree");
            assert_eq!(show["run"]["source"], "claude", "{name}");
            assert_eq!(show["run"]["problems"], 0, "{name}: no unreadable line");
            let c = counts(show, "sidechainLines");
            for i in [0, 1, 2, 3, 5] {
                got[i] += c[i];
            }
            if show["run"]["id"] == own {
                got[4] = c[4];
            }
        }
        assert_eq!(got, *want, "{name}");
        let sides: Vec<&Value> = (shows.iter().map(|s| &s["run"]))
            .filter(|r| r["id"] != own)
            .collect();
        let side_lines: u64 = sides
            .iter()
            .map(|r| r["sidechainLines"].as_u64().unwrap())
            .sum();
        if !sides.is_empty() {
            assert_eq!(
                side_lines, want[4],
                "{name}: every side line is one side run's"
            );
        }
        let own_show = shows.iter().find(|s| s["run"]["id"] == own).unwrap();
        for side in sides {
            assert_eq!(side["parentId"], own, "{name}: nested under the session");
            // The session's Task call that started it, as its first message says.
            let call = side["parentCall"]
                .as_str()
                .expect("the call that started it");
            let started = (own_show["events"].as_array().unwrap().iter())
                .any(|e| e["type"] == "tool_call_started" && e["toolCallId"] == call);
            assert!(started, "{name}: {call} is a call of the session");
        }
    }
}

/// The name `claude_store` gives a file in its project folder, without `.jsonl`.
fn stored_name(name: &str) -> &str {
    name.rfind("agent-").map_or(name, |at| &name[at..])
}

#[test]
fn every_real_codex_rollout_reads_with_its_counts() {
    let Some(shared) = shared() else { return };
    for (name, want) in CODEX {
        let dir = tempfile::tempdir().unwrap();
        let day = dir.path().join("2026/05/11");
        std::fs::create_dir_all(&day).unwrap();
        let stored = &name[name.find("rollout-").unwrap()..];
        let path = day.join(format!("{stored}.jsonl"));
        std::fs::copy(shared.join(format!("codex/{name}.jsonl")), &path).unwrap();
        let show = only_run(dir.path(), "codex");
        assert_eq!(show["run"]["source"], "codex", "{name}");
        assert_eq!(counts(&show, "truncated"), *want, "{name}");
        assert_eq!(
            show["run"]["id"],
            &stored[stored.len() - 36..],
            "{name}: the thread id"
        );
    }
}

/// The raw output a real persisted result's line kept (`toolUseResult.stdout`).
fn recorded_stdout(session: &Path, call: &str) -> String {
    let text = std::fs::read_to_string(session).unwrap();
    text.lines()
        .filter(|l| l.contains(call) && l.contains("persisted-output"))
        .find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            v["toolUseResult"]["stdout"].as_str().map(str::to_owned)
        })
        .expect("the stub's line keeps the raw output")
}

#[test]
fn the_real_persisted_outputs_open_with_their_file_and_without() {
    let Some(shared) = shared() else { return };
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-USER-spotter");
    let session = "8463c716-a2ea-4c14-9efa-87158ebd9f20";
    let call = "toolu_019CpL49DWBenUxVVCWEXz3L";
    std::fs::create_dir_all(&project).unwrap();
    let path = project.join(format!("{session}.jsonl"));
    std::fs::copy(
        shared.join(format!("claude-code/marot__spotter__{session}.jsonl")),
        &path,
    )
    .unwrap();
    let stdout = recorded_stdout(&path, call);
    let dir = store.path();

    // Without its file: swept, the raw output recovered from the transcript.
    let show = mctl_json(dir, &["show", session]);
    let r = show["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["toolCallId"] == call)
        .unwrap();
    assert_eq!(r["state"], "swept");
    assert_eq!(r["bytes"], stdout.len());
    let stub = mctl_json(dir, &["stub", session, call]);
    assert!(stub["text"]
        .as_str()
        .unwrap()
        .starts_with("<persisted-output>\nOutput too large (141KB)"));
    assert_eq!(
        crate::support::stdout(&crate::support::mctl(dir, &["full", session, call])),
        stdout
    );

    // With the file the stub names, written beside it: retained, read from the file.
    let values = project.join(session).join("tool-results");
    std::fs::create_dir_all(&values).unwrap();
    std::fs::write(values.join(format!("{call}.txt")), &stdout).unwrap();
    let run = &mctl_json(dir, &["show", session])["run"];
    assert_eq!(
        (run["retained"].as_u64(), run["retainedBytes"].as_u64()),
        (Some(1), Some(stdout.len() as u64))
    );
    let peek = mctl_json(dir, &["peek", session, call, "--lines", "1-2"]);
    assert_eq!(peek["source"], "file");

    // A file that disagrees with the recorded output is damaged.
    std::fs::write(
        values.join(format!("{call}.txt")),
        stdout.replace("test", "TEST"),
    )
    .unwrap();
    assert_eq!(mctl_json(dir, &["show", session])["run"]["damaged"], 1);

    // The subagent's stub names its parent session's folder.
    let parent = "e9fb405b-169f-40eb-9396-7e75076f045d";
    let sub_call = "toolu_bdrk_01CaTZ658VzFpoM9YptVLjGg";
    let project = store.path().join("-Users-User-codemie");
    let agents = project.join(parent).join("subagents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::copy(
        shared.join("claude-code/codemie-ai__codemie-code__incremental-subagents_turn-2.jsonl"),
        project.join(format!("{parent}.jsonl")),
    )
    .unwrap();
    let agent = agents.join("agent-a485154.jsonl");
    std::fs::copy(
        shared.join("claude-code/codemie-ai__codemie-code__incremental-subagents_turn-1_subagents_agent-a485154.jsonl"),
        &agent,
    )
    .unwrap();
    let sub_stdout = recorded_stdout(&agent, sub_call);
    let run = &mctl_json(dir, &["show", "agent-a485154"])["run"];
    assert_eq!(
        (run["swept"].as_u64(), run["parentId"].as_str()),
        (Some(1), Some(parent))
    );
    let values = project.join(parent).join("tool-results");
    std::fs::create_dir_all(&values).unwrap();
    std::fs::write(values.join(format!("{sub_call}.txt")), &sub_stdout).unwrap();
    let run = &mctl_json(dir, &["show", "agent-a485154"])["run"];
    assert_eq!(run["retained"], 1, "found in the parent session's folder");
    let runs = mctl_json(dir, &["runs"]);
    assert_eq!(
        runs.as_array().unwrap().len(),
        3,
        "two sessions and one subagent"
    );
}

#[test]
fn the_real_subagents_know_the_calls_that_started_them() {
    let Some(shared) = shared() else { return };
    let store = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &Path| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(shared.join("claude-code").join(from), to).unwrap();
    };
    // A newer build: `subagents/agent-<id>.jsonl`, named by the session's progress lines.
    let spotter = store.path().join("-home-USER-spotter");
    let session = "8463c716-a2ea-4c14-9efa-87158ebd9f20";
    copy(
        &format!("marot__spotter__{session}.jsonl"),
        &spotter.join(format!("{session}.jsonl")),
    );
    copy(
        "marot__spotter__8463c716_subagents_agent-a7be2f0.jsonl",
        &spotter.join(session).join("subagents/agent-a7be2f0.jsonl"),
    );
    // An older build: `agent-<id>.jsonl` beside the sessions, named by the Task result.
    let scripts = store.path().join("-Users-user-project");
    let older = "b3edadab-bca0-4054-9b41-f7ffa6941260";
    copy(
        &format!("kfischer-okarin__scripts-and-tools__{older}.jsonl"),
        &scripts.join(format!("{older}.jsonl")),
    );
    copy(
        "kfischer-okarin__scripts-and-tools__agent-a434715.jsonl",
        &scripts.join("agent-a434715.jsonl"),
    );
    let runs = mctl_json(store.path(), &["runs"]);
    for (id, parent, call) in [
        ("agent-a7be2f0", session, "toolu_017SvvKc8KLbhGMG3tXkf21Z"),
        ("agent-a434715", older, "toolu_014b1V7NgWhMapv346LFg4Y3"),
    ] {
        let run = crate::support::find(&runs, id);
        assert_eq!(run["parentId"], parent, "{id}");
        assert_eq!(run["parentCall"], call, "{id}");
    }
}
