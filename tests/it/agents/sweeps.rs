//! Gemini CLI's and opencode's saved outputs under GC, and their agents' own cleanups
//! forecast. The stores are hand-built from the agents' source rules (no real file holds a
//! saved output): GC may take only the files the source recognises as its saved outputs of a
//! session older than the policy, never a chat, the database or a file no session names.

use super::{gemini, opencode};
use crate::support::{mctl, mctl_json, set_mtime, stderr, stdout, OLD_MS};
use serde_json::Value;
use std::path::Path;

const DAY: i64 = 86_400_000;

fn now_ms() -> i64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    t.unwrap().as_millis() as i64
}

/// The paths a GC plan (or report) names, sorted.
fn planned(plan: &Value) -> Vec<String> {
    let mut paths: Vec<String> = (plan["files"].as_array().unwrap().iter())
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    paths.sort();
    paths
}

fn write_old(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    set_mtime(path, OLD_MS);
}

fn result<'a>(show: &'a Value, call: &str) -> &'a Value {
    (show["results"].as_array().unwrap().iter())
        .find(|r| r["toolCallId"] == call)
        .unwrap()
}

#[test]
fn gc_takes_a_gemini_sessions_saved_outputs_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    gemini::store(root);
    let session = format!("proj/tool-outputs/session-{}", gemini::SESSION);
    // Beside the saved outputs: a note that is not one, and a link out of the store.
    write_old(&root.join(&session).join("notes.md"), "mine");
    let elsewhere = tempfile::tempdir().unwrap();
    write_old(&elsewhere.path().join("precious.txt"), "not the store's");
    std::os::unix::fs::symlink(
        elsewhere.path().join("precious.txt"),
        root.join(&session).join("link.txt"),
    )
    .unwrap();
    // The saved outputs of a session whose chat is gone: an orphan. In another project, one
    // whose id starts as this project's chat's does: an orphan too, not that chat's.
    let orphan = "proj/tool-outputs/session-ffffffff-0000-4000-8000-00000000dead/shell_x.txt";
    write_old(&root.join(orphan), "orphan");
    std::fs::create_dir_all(root.join("proj2/chats")).unwrap();
    let lookalike = "proj2/tool-outputs/session-a1b2c3d4-9999-4000-8000-000000000009/shell_y.txt";
    write_old(&root.join(lookalike), "another project's");

    let plan = mctl_json(root, &["gc", "--older-than", "1d", "--orphans"]);
    let want = vec![
        format!("{session}/run_shell_command-1.txt"),
        format!("{session}/run_shell_command_c3_x.txt"),
        orphan.to_owned(),
        lookalike.to_owned(),
    ];
    assert_eq!(planned(&plan), want);
    let runs: Vec<&str> = (plan["files"].as_array().unwrap().iter())
        .filter(|f| f["path"].as_str().unwrap().starts_with(&session))
        .map(|f| f["run"].as_str().unwrap())
        .collect();
    assert_eq!(
        runs,
        [gemini::MAIN, gemini::MAIN],
        "the session's own files"
    );

    // A pinned session keeps them.
    assert!(mctl(root, &["pin", gemini::MAIN]).status.success());
    let pinned = mctl_json(root, &["gc", "--older-than", "1d"]);
    assert!(planned(&pinned).is_empty(), "{pinned}");
    assert!(mctl(root, &["unpin", gemini::MAIN]).status.success());

    let out = mctl(root, &["gc", "--older-than", "1d", "--orphans", "--apply"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for gone in &want {
        assert!(!root.join(gone).exists(), "{gone} deleted");
    }
    for kept in [
        format!("proj/chats/{}.jsonl", gemini::MAIN),
        format!("{session}/notes.md"),
        format!("{session}/link.txt"),
    ] {
        assert!(
            std::fs::symlink_metadata(root.join(&kept)).is_ok(),
            "{kept} kept"
        );
    }
    assert!(elsewhere.path().join("precious.txt").exists());

    // The model got stubs of them: they read as swept now, and still show what it got.
    let show = mctl_json(root, &["show", gemini::MAIN]);
    assert_eq!(
        show["run"]["swept"], 3,
        "the two collected and the one swept before"
    );
    assert_eq!(result(&show, "run_shell_command-1")["state"], "swept");
    let stub = stdout(&mctl(root, &["stub", gemini::MAIN, "run_shell_command-1"]));
    assert!(
        stub.contains("Output too large. Showing first 8,000"),
        "{stub}"
    );
}

/// Gemini CLI's chats under `.gemini/tmp/proj`, with `settings` as its settings file.
fn gemini_home(settings: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    gemini::store(&dir.path().join(".gemini/tmp"));
    if let Some(s) = settings {
        std::fs::write(dir.path().join(".gemini/settings.json"), s).unwrap();
    }
    dir
}

#[test]
fn gemini_clis_own_cleanup_is_forecast_from_its_settings() {
    let home = gemini_home(Some(
        r#"{"general": {"sessionRetention": {"enabled": true, "maxAge": "7d"}}}"#,
    ));
    let root = home.path().join(".gemini/tmp");
    // A chat five and a half days old: gone within two days, not at the next start.
    let recent = root.join("proj/chats/session-2026-11-28T10-00-0f0f0f0f.json");
    write_old(&recent, r#"{"sessionId": "0f0f0f0f-1", "messages": []}"#);
    set_mtime(&recent, now_ms() - 5 * DAY - DAY / 2);

    let plan = mctl_json(&root, &["gc", "--older-than", "400d"]);
    let sweep = &plan["agentSweep"];
    assert_eq!(sweep["agent"], "Gemini CLI");
    assert_eq!(sweep["setting"], "general.sessionRetention.maxAge");
    assert_eq!(sweep["periodDays"], 7);
    assert!(
        (sweep["settingsFile"].as_str().unwrap()).ends_with(".gemini/settings.json"),
        "{sweep}"
    );
    let swept: Vec<&str> = (sweep["sessions"].as_array().unwrap().iter())
        .map(|s| s["run"].as_str().unwrap())
        .collect();
    assert_eq!(swept, [gemini::MAIN], "the main chat, not its subagent's");
    assert_eq!(sweep["valueFiles"], 2, "its saved outputs go with it");
    assert_eq!(
        (sweep["soonSessions"].as_u64(), sweep["soonDays"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(planned(&plan).is_empty(), "the forecast deletes nothing");
    let text = stdout(&mctl(&root, &["gc", "--older-than", "400d"]));
    assert!(
        text.contains("Gemini CLI's own cleanup (general.sessionRetention.maxAge 7 days, from "),
        "{text}"
    );
    assert!(text.contains("within 2 days: 1 session"), "{text}");

    // `maxCount`: past the newest one of its project, a chat goes whatever its age.
    std::fs::write(
        home.path().join(".gemini/settings.json"),
        r#"{"general": {"sessionRetention": {"maxAge": "5000d", "maxCount": 1}}}"#,
    )
    .unwrap();
    let sweep = &mctl_json(&root, &["gc", "--older-than", "400d"])["agentSweep"];
    let swept: Vec<&str> = (sweep["sessions"].as_array().unwrap().iter())
        .map(|s| s["run"].as_str().unwrap())
        .collect();
    assert_eq!(swept, [gemini::MAIN], "the newest chat is kept: {sweep}");
    assert_eq!(sweep["maxCount"], 1);

    // Turned off: nothing is forecast.
    std::fs::write(
        home.path().join(".gemini/settings.json"),
        r#"{"general": {"sessionRetention": {"enabled": false}}}"#,
    )
    .unwrap();
    let plan = mctl_json(&root, &["gc", "--older-than", "400d"]);
    assert!(plan["agentSweep"].is_null(), "{plan}");

    // No settings file: the default, 30 days.
    let home = gemini_home(None);
    let sweep = &mctl_json(
        &home.path().join(".gemini/tmp"),
        &["gc", "--older-than", "400d"],
    )["agentSweep"];
    assert_eq!(
        (
            sweep["periodDays"].as_u64(),
            sweep["settingsFile"].is_null()
        ),
        (Some(30), true)
    );
}

/// An id as opencode gives a saved output at `ms` (`tool_` and 12 hex digits of
/// `ms × 4096 + 1`, then 14 letters).
fn opencode_id(ms: i64) -> String {
    let enc = (((ms as u64) << 12) | 1) & ((1 << 48) - 1);
    format!("tool_{enc:012x}QwErTyUiOpAsDf")
}

#[test]
fn gc_takes_only_the_opencode_files_a_session_names() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    opencode::store(root);
    let named = "tool-output/tool_cadf21750001AAAAAAAAAAAAAA";
    // A saved output no session names, and a file that is not one.
    let unnamed = format!("tool-output/{}", opencode_id(OLD_MS));
    write_old(&root.join(&unnamed), "whose?");
    write_old(&root.join("tool-output/notes.txt"), "mine");

    let plan = mctl_json(root, &["gc", "--older-than", "1d", "--orphans"]);
    assert_eq!(planned(&plan), [named]);
    assert_eq!(plan["files"][0]["run"], opencode::MAIN);
    let out = mctl(root, &["gc", "--older-than", "1d", "--orphans", "--apply"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!root.join(named).exists());
    for kept in [unnamed.as_str(), "tool-output/notes.txt", "opencode.db"] {
        assert!(root.join(kept).exists(), "{kept} kept");
    }
    let show = mctl_json(root, &["show", opencode::MAIN]);
    assert_eq!(result(&show, "call_kept")["state"], "swept");
    // The listing (through the index) says so too: the session's rows did not change, the
    // names of the saved files of its time did.
    let runs = mctl_json(root, &["runs"]);
    let main = (runs.as_array().unwrap().iter())
        .find(|r| r["id"] == opencode::MAIN)
        .unwrap();
    assert_eq!(
        (main["swept"].as_u64(), main["retained"].as_u64()),
        (Some(2), Some(0)),
        "{main}"
    );
}

#[test]
fn an_opencode_file_a_forked_session_names_too_is_never_collected() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    opencode::store(root);
    let named = "tool-output/tool_cadf21750001AAAAAAAAAAAAAA";
    // A fork of the session: opencode copies its parts, their saved paths with them.
    let conn = rusqlite::Connection::open(root.join("opencode.db")).unwrap();
    conn.execute(
        "INSERT INTO session VALUES ('ses_4fork', 'p', NULL, 'slug', '/home/ana/app', 'Fix the tests (fork #1)', '1.2.15', 1772444841143, 1772444863151)",
        [],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO message SELECT 'f' || id, 'ses_4fork', time_created, time_updated, data FROM message WHERE session_id = ?1",
        [opencode::MAIN],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO part SELECT 'f' || id, 'f' || message_id, 'ses_4fork', time_created, time_updated, data FROM part WHERE session_id = ?1",
        [opencode::MAIN],
    )
    .unwrap();
    drop(conn);
    set_mtime(&root.join("opencode.db"), OLD_MS);
    let show = mctl_json(root, &["show", "ses_4fork"]);
    assert_eq!(
        result(&show, "call_kept")["state"],
        "retained",
        "the fork reads the file too"
    );
    let plan = mctl_json(root, &["gc", "--older-than", "1d", "--orphans"]);
    assert!(
        planned(&plan).is_empty(),
        "neither session's to lose: {plan}"
    );
    let out = mctl(root, &["gc", "--older-than", "1d", "--orphans", "--apply"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(root.join(named).exists());
}

#[test]
fn opencodes_own_cleanup_is_forecast_by_the_time_in_each_files_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    opencode::store(root);
    // Only files of known ages: the store's own saved output goes.
    std::fs::remove_file(root.join("tool-output/tool_cadf21750001AAAAAAAAAAAAAA")).unwrap();
    let now = now_ms();
    for (age, text) in [(8 * DAY, "old"), (6 * DAY, "soon"), (DAY / 24, "new")] {
        // The name says when it was saved; its file's time says nothing.
        let path = root.join("tool-output").join(opencode_id(now - age));
        std::fs::write(&path, text).unwrap();
    }
    let plan = mctl_json(root, &["gc", "--older-than", "400d"]);
    let sweep = &plan["agentSweep"];
    assert_eq!(sweep["agent"], "opencode");
    assert!(sweep["setting"].is_null(), "a fixed period");
    assert_eq!(sweep["periodDays"], 7);
    assert_eq!(
        sweep["sessions"].as_array().unwrap().len(),
        0,
        "it keeps every session"
    );
    assert_eq!(
        (
            sweep["valueFiles"].as_u64(),
            sweep["soonValueFiles"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let text = stdout(&mctl(root, &["gc", "--older-than", "400d"]));
    assert!(text.contains("opencode's own cleanup (after 7 days) deletes at its next start: 0 sessions (0 B) and 1 saved output (3 B); within 2 days: 0 sessions (0 B) and 1 saved output (4 B) more"), "{text}");
}
