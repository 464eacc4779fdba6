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

/// Per file: events, tool calls, results, failed results, sidechain lines (Claude Code) or cut
/// results (Codex), persisted-output results. Calls, results and failures agree with the
/// files' provenance notes, counted independently.
const CLAUDE: &[(&str, [u64; 6])] = &[
    ("alfredjeanlab__claudeless__v2.1.29_bash-permission-dialog_f3ba0bdb", [8, 1, 1, 1, 0, 0]),
    ("alfredjeanlab__claudeless__v2.1.29_compact-command_8aa54c1d", [11, 0, 0, 0, 0, 0]),
    ("alfredjeanlab__claudeless__v2.1.29_compact-command_subagents_agent-aprompt_suggestion-029c25", [2, 0, 0, 0, 2, 0]),
    ("alfredjeanlab__claudeless__v2.1.29_edit-permission-dialog_c2fc3a3f", [19, 3, 3, 1, 0, 0]),
    ("alfredjeanlab__claudeless__v2.1.29_hook-stop_d266fdf5", [12, 1, 1, 0, 0, 0]),
    ("chiphuyen__sniffly__d3ad4cdc-5657-435d-98fa-0035d53e383d", [195, 59, 58, 4, 0, 0]),
    ("chiphuyen__sniffly__fed8ce56-bc79-401f-a83e-af084253362f", [27, 7, 7, 2, 0, 0]),
    ("chiphuyen__sniffly__ff71dbed-a4f2-4284-a4fc-fe2fb90de929", [0, 0, 0, 0, 0, 0]),
    ("codemie-ai__codemie-code__incremental-subagents_turn-1_subagents_agent-a485154", [64, 20, 20, 1, 44, 1]),
    ("codemie-ai__codemie-code__incremental-subagents_turn-2", [59, 14, 14, 0, 0, 0]),
    ("codemie-ai__codemie-code__session-196820da", [278, 65, 65, 2, 0, 0]),
    ("codemie-ai__codemie-code__session-9eda1058", [22, 3, 3, 1, 0, 0]),
    ("d-kimuson__claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7", [73, 21, 21, 3, 22, 0]),
    ("d-kimuson__claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b", [603, 167, 167, 23, 405, 0]),
    ("jnarowski__agentcmd__full-session-five", [19, 5, 5, 0, 0, 0]),
    ("jnarowski__agentcmd__full-session-four", [108, 27, 27, 1, 0, 0]),
    ("jnarowski__agentcmd__full-session-two", [44, 10, 10, 1, 0, 0]),
    ("jnarowski__agentcmd__full-session", [72, 23, 20, 0, 0, 0]),
    ("kfischer-okarin__scripts-and-tools__0f13eeba-e6ed-42ea-ad8c-d8db37e1304e", [0, 0, 0, 0, 0, 0]),
    ("kfischer-okarin__scripts-and-tools__agent-a434715", [10, 2, 2, 0, 8, 0]),
    ("kfischer-okarin__scripts-and-tools__b3edadab-bca0-4054-9b41-f7ffa6941260", [56, 7, 7, 0, 0, 0]),
    ("marot__spotter__8463c716-a2ea-4c14-9efa-87158ebd9f20", [635, 177, 177, 13, 0, 1]),
    ("marot__spotter__8463c716_subagents_agent-a7be2f0", [71, 19, 19, 2, 131, 0]),
    ("marot__spotter__8463c716_subagents_agent-acompact-f46190", [2, 0, 0, 0, 7, 0]),
    ("marot__spotter__short", [11, 2, 2, 2, 0, 0]),
    ("marot__spotter__subagent", [63, 16, 16, 0, 0, 0]),
    ("marot__spotter__tool_heavy", [27, 6, 6, 0, 0, 0]),
];

const CODEX: &[(&str, [u64; 6])] = &[
    ("codemie-ai__codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799", [322, 102, 102, 4, 5, 0]),
    ("codemie-ai__codemie-code__rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80", [121, 38, 38, 1, 3, 0]),
    ("jnarowski__agentcmd__rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08", [521, 123, 123, 8, 1, 0]),
    ("jnarowski__agentcmd__rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5", [70, 16, 16, 3, 0, 0]),
];

/// The one run of a store of kind `source` holding one file, as `mctl show --json` tells it.
/// The kind is given: an empty file alone says nothing of what it is.
fn only_run(dir: &Path, source: &str) -> Value {
    let runs = mctl_json(dir, &["--source", source, "runs"]);
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 1, "one run in {}", dir.display());
    let id = runs[0]["id"].as_str().unwrap().to_owned();
    mctl_json(dir, &["--source", source, "show", &id])
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
    let persisted = n("retained") + n("unretained") + n("damaged");
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
    let stored = match name.rfind("agent-") {
        Some(at) => name[at..].to_owned(),
        None => name.to_owned(),
    };
    let path = dir
        .path()
        .join("-home-ana-app")
        .join(format!("{stored}.jsonl"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(file, &path).unwrap();
    crate::support::set_mtime(&path, OLD_MS);
    dir
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
    for (name, want) in CLAUDE {
        let store = claude_store(&shared.join(format!("claude-code/{name}.jsonl")), name);
        let show = only_run(store.path(), "claude");
        assert_eq!(show["run"]["source"], "claude", "{name}");
        assert_eq!(counts(&show, "sidechainLines"), *want, "{name}");
        assert_eq!(show["run"]["problems"], 0, "{name}: no unreadable line");
    }
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

    // Without its file: unretained, the raw output recovered from the transcript.
    let show = mctl_json(dir, &["show", session]);
    let r = show["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["toolCallId"] == call)
        .unwrap();
    assert_eq!(r["state"], "unretained");
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
        (run["unretained"].as_u64(), run["parentId"].as_str()),
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
