//! GC of a Claude Code store: only the files of a session's `tool-results/` (directly inside or
//! one folder below) are ever deleted; never a transcript, `subagents/`, another file, a live
//! session's values, or anything through a link.

use super::{stub, Session};
use crate::support::{mctl, mctl_json, set_mtime, stderr, OLD_MS};
use serde_json::json;
use std::path::Path;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    set_mtime(path, OLD_MS);
}

#[test]
fn gc_takes_only_value_files_of_idle_sessions_and_follows_no_link() {
    let store = tempfile::tempdir().unwrap();
    let project = store.path().join("-home-ana-app");
    let old = "11111111-0000-4000-8000-000000000001";
    let live = "22222222-0000-4000-8000-000000000002";
    let path = |s: &str| format!("/home/ana/.claude/projects/-home-ana-app/{old}/tool-results/{s}");
    let mut s = Session::new(&project, old);
    s.prompt("Build")
        .call("toolu_1", "Bash", json!({"command": "make"}))
        .result("toolu_1", &stub("40KB", &path("toolu_1.txt"), "x"), None)
        .answer("Built.");
    s.write();
    let values = project.join(old).join("tool-results");
    write(&values.join("toolu_1.txt"), &"x\n".repeat(20_000));
    write(&values.join("hook-output.json"), "[]");
    write(&values.join("sub/nested.txt"), "one level down");
    write(&values.join("sub/deeper/too-deep.txt"), "two levels down");
    write(&values.join("notes.md"), "not a value");
    write(&project.join(old).join("subagents/agent-a1.jsonl"), "{}\n");
    write(
        &project.join(old).join("subagents/agent-a1.txt"),
        "not in tool-results",
    );
    // A live session: written just now.
    let mut l = Session::new(&project, live);
    l.prompt("Still going");
    let live_path = l.write();
    // Written again now: the session is live.
    std::fs::write(&live_path, std::fs::read(&live_path).unwrap()).unwrap();
    write(
        &project.join(live).join("tool-results/toolu_9.txt"),
        "live value",
    );
    // A session whose tool-results/ is a link to elsewhere, and a link inside a real one.
    let elsewhere = tempfile::tempdir().unwrap();
    write(&elsewhere.path().join("precious.txt"), "never deleted");
    let linked = "33333333-0000-4000-8000-000000000003";
    Session::new(&project, linked).prompt("linked").write();
    std::fs::create_dir_all(project.join(linked)).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), project.join(linked).join("tool-results"))
        .unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), values.join("linkdir")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join("precious.txt"),
        values.join("link.txt"),
    )
    .unwrap();
    // An orphan: the session's transcript is gone, its tool-results stayed.
    write(
        &project.join("gone-session/tool-results/toolu_o.txt"),
        "orphan",
    );

    let dir = store.path();
    let plan = mctl_json(dir, &["gc", "--older-than", "1d", "--orphans"]);
    let mut planned: Vec<String> = plan["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    planned.sort();
    let want = [
        format!("-home-ana-app/{old}/tool-results/hook-output.json"),
        format!("-home-ana-app/{old}/tool-results/sub/nested.txt"),
        format!("-home-ana-app/{old}/tool-results/toolu_1.txt"),
        "-home-ana-app/gone-session/tool-results/toolu_o.txt".to_owned(),
    ];
    assert_eq!(planned, want);
    assert_eq!(
        plan["files"][0]["contextBytes"], 0,
        "the transcript keeps the stub"
    );

    let out = mctl(dir, &["gc", "--older-than", "1d", "--orphans", "--apply"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for gone in &want {
        assert!(!dir.join(gone).exists(), "{gone} deleted");
    }
    for kept in [
        format!("-home-ana-app/{old}.jsonl"),
        format!("-home-ana-app/{old}/tool-results/notes.md"),
        format!("-home-ana-app/{old}/tool-results/sub/deeper/too-deep.txt"),
        format!("-home-ana-app/{old}/subagents/agent-a1.jsonl"),
        format!("-home-ana-app/{old}/subagents/agent-a1.txt"),
        format!("-home-ana-app/{live}/tool-results/toolu_9.txt"),
    ] {
        assert!(dir.join(&kept).exists(), "{kept} kept");
    }
    assert!(
        elsewhere.path().join("precious.txt").exists(),
        "nothing through a link"
    );
    // The session now reads its value as swept (the model got its stub); the transcript is
    // whole.
    let run = &mctl_json(dir, &["show", old])["run"];
    assert_eq!(
        (run["swept"].as_u64(), run["retained"].as_u64()),
        (Some(1), Some(0))
    );
}

#[test]
fn the_plan_says_what_claude_codes_own_cleanup_deletes_next() {
    let home = tempfile::tempdir().unwrap();
    let projects = home.path().join("projects");
    let project = projects.join("-home-ana-app");
    std::fs::write(
        home.path().join("settings.json"),
        r#"{"cleanupPeriodDays": 7}"#,
    )
    .unwrap();
    let old = "11111111-0000-4000-8000-000000000001";
    let new = "22222222-0000-4000-8000-000000000002";
    Session::new(&project, old).prompt("An old session").write();
    write(
        &project.join(old).join("tool-results/toolu_a.txt"),
        "old value",
    );
    write(&project.join(old).join("subagents/agent-x.jsonl"), "{}\n");
    let mut s = Session::new(&project, new);
    s.prompt("A new session");
    let path = s.write();
    std::fs::write(&path, std::fs::read(&path).unwrap()).unwrap(); // written now
                                                                   // A value older than the period goes by its own age, even in a session that stays.
    write(
        &project.join(new).join("tool-results/toolu_b.txt"),
        "old value in a new session",
    );
    let fresh = project.join(new).join("tool-results/toolu_c.txt");
    std::fs::write(&fresh, "new value").unwrap();

    let plan = mctl_json(&projects, &["gc", "--orphans"]);
    let sweep = &plan["agentSweep"];
    assert_eq!(sweep["periodDays"], 7);
    assert_eq!(
        sweep["settingsFile"],
        home.path().join("settings.json").to_string_lossy().as_ref()
    );
    let swept: Vec<&str> = sweep["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["run"].as_str().unwrap())
        .collect();
    assert_eq!(
        swept,
        [old],
        "the subagent's file is not swept; the new session stays"
    );
    assert_eq!(sweep["sessions"][0]["title"], "An old session");
    assert_eq!(sweep["valueFiles"], 2);
    assert_eq!(
        plan["files"].as_array().unwrap().len(),
        0,
        "the forecast deletes nothing"
    );
    let text = crate::support::stdout(&mctl(&projects, &["gc", "--orphans"]));
    assert!(
        text.contains("Claude Code's own cleanup (cleanupPeriodDays 7, from "),
        "{text}"
    );
    assert!(text.contains("1 session"), "{text}");
}
