//! Cases real Claude Code sessions hold that a reader must not get wrong, each on a hand-built
//! session of the real shape: an image-only prompt, a last line whose newline never came, a
//! Bash output whose stderr holds only Claude Code's own note, two JSON objects glued on one
//! line, and `~/.claude` given instead of its `projects` folder.

use super::{stub, Session};
use crate::support::{mctl, mctl_json, set_mtime, stdout, OLD_MS};
use serde_json::{json, Value};

const SESSION: &str = "f1de1170-0000-4000-8000-000000000001";

fn events_of<'a>(show: &'a Value, kind: &str) -> Vec<&'a Value> {
    (show["events"].as_array().unwrap().iter())
        .filter(|e| e["type"] == kind)
        .collect()
}

#[test]
fn an_image_only_prompt_is_a_user_message_with_its_type_and_size() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    // 12 base64 characters with one `=`: 8 bytes once decoded.
    let image = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}});
    s.line(json!({"type": "user", "uuid": "u1", "sessionId": SESSION, "timestamp": "2026-04-02T10:00:01.000Z",
        "message": {"role": "user", "content": [image]}}))
        .answer("That is a screenshot of a failing build.");
    s.write();
    let show = mctl_json(store.path(), &["show", SESSION]);
    let users = events_of(&show, "user_message");
    assert_eq!(
        users.len(),
        1,
        "the image is the prompt the answer replies to"
    );
    assert_eq!(users[0]["text"], "[image image/png, 8 B]");
    assert_eq!(users[0]["attachments"][0]["mime"], "image/png");
    assert_eq!(users[0]["attachments"][0]["bytes"], 8);
    assert_eq!(show["run"]["dispatches"], 1);
}

/// A session whose last line (an answer with its usage) has no newline.
fn unterminated(dir: &std::path::Path) -> std::path::PathBuf {
    let mut s = Session::new(&dir.join("-home-ana-app"), SESSION);
    s.prompt("What does main do?")
        .call("toolu_R", "Read", json!({"file_path": "src/main.rs"}))
        .result("toolu_R", "fn main() {}", None)
        .answer("It does nothing yet.");
    let path = s.write();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.trim_end_matches('\n')).unwrap();
    path
}

#[test]
fn a_last_line_without_its_newline_is_the_last_line_once_the_file_is_idle() {
    let store = tempfile::tempdir().unwrap();
    let path = unterminated(store.path());
    set_mtime(&path, OLD_MS);
    let show = mctl_json(store.path(), &["show", SESSION]);
    assert_eq!(show["run"]["pendingBytes"], 0, "{}", show["run"]);
    assert_eq!(
        events_of(&show, "assistant_message").len(),
        2,
        "the answer is read"
    );
    assert_eq!(show["run"]["status"], "done");
    // The list says the same, through the index too.
    let runs = mctl_json(store.path(), &["runs"]);
    assert_eq!(runs[0]["pendingBytes"], 0);
    assert_eq!(runs[0]["status"], "done");

    // A file written to just now may still be writing that line: it waits for its newline.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    set_mtime(&path, now);
    let show = mctl_json(store.path(), &["show", SESSION]);
    assert!(show["run"]["pendingBytes"].as_u64().unwrap() > 0);
    assert_eq!(events_of(&show, "assistant_message").len(), 1);
}

#[test]
fn a_bash_output_is_recovered_when_stderr_holds_only_claude_codes_own_note() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    s.tool_results(); // the folder is there, the file is not
    let full = "test line\n".repeat(5000);
    let saved =
        format!("/home/ana/.claude/projects/-home-ana-app/{SESSION}/tool-results/toolu_B.txt");
    let note = "Shell cwd was reset to /home/ana/app";
    s.prompt("Run the tests")
        .call("toolu_B", "Bash", json!({"command": "cd /tmp && make test"}))
        .result("toolu_B", &stub("50KB", &saved, "test line"),
            Some(json!({"stdout": full, "stderr": note, "interrupted": false})))
        .call("toolu_E", "Bash", json!({"command": "make lint"}))
        .result("toolu_E", &stub("50KB", &saved.replace("toolu_B", "toolu_E"), "lint"),
            Some(json!({"stdout": full, "stderr": format!("{note}\nwarning: unused"), "interrupted": false})))
        .answer("Done.");
    s.write();
    let dir = store.path();
    assert_eq!(
        stdout(&mctl(dir, &["full", SESSION, "toolu_B"])),
        full,
        "recovered"
    );
    let peek = mctl_json(dir, &["peek", SESSION, "toolu_B", "--lines", "1-1"]);
    assert_eq!(peek["source"], "recovered");
    // Anything else on stderr: the stdout alone is not the output, and is not offered as it.
    let other = mctl_json(dir, &["peek", SESSION, "toolu_E", "--lines", "1-1"]);
    assert_eq!(other["source"], "transcript");
}

#[test]
fn two_json_objects_glued_on_one_line_are_both_read_with_a_warning() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    s.prompt("Summarise the README")
        .answer("It explains the build.");
    let path = s.write();
    // The writer lost the newline between the prompt and the answer.
    let text = std::fs::read_to_string(&path).unwrap();
    let glued = text.replacen("}\n{", "}{", 1);
    assert_ne!(glued, text);
    std::fs::write(&path, glued).unwrap();
    set_mtime(&path, OLD_MS);
    let show = mctl_json(store.path(), &["show", SESSION]);
    assert_eq!(events_of(&show, "user_message").len(), 1);
    assert_eq!(
        events_of(&show, "assistant_message").len(),
        1,
        "the answer is not lost"
    );
    assert_eq!(show["run"]["problems"], 0, "nothing is unreadable");
    let glued: Vec<&Value> = (show["problems"].as_array().unwrap().iter())
        .filter(|p| p["kind"] == "glued")
        .collect();
    assert_eq!(glued.len(), 1, "{}", show["problems"]);
    assert_eq!(glued[0]["line"], 1);
    assert_eq!(show["run"]["warnings"], 1);

    // A result on a glued line is read back from its own value, not the whole line.
    let other = "f1de1170-0000-4000-8000-000000000003";
    let mut r = Session::new(&store.path().join("-home-ana-app"), other);
    r.prompt("List the files")
        .call("toolu_L", "Bash", json!({"command": "ls"}))
        .result("toolu_L", "Cargo.toml\nsrc\n", None)
        .answer("Two entries.");
    let path = r.write();
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.find("\"tool_result\"").unwrap();
    let end = at + text[at..].find('\n').unwrap();
    let mut glued = text.clone();
    glued.replace_range(end..end + 1, "");
    std::fs::write(&path, glued).unwrap();
    set_mtime(&path, OLD_MS);
    assert_eq!(
        stdout(&mctl(store.path(), &["full", other, "toolu_L"])),
        "Cargo.toml\nsrc\n"
    );
}

#[test]
fn claude_codes_own_folder_is_read_as_its_projects() {
    let home = tempfile::tempdir().unwrap();
    let claude = home.path().join(".claude");
    let mut s = Session::new(&claude.join("projects/-home-ana-app"), SESSION);
    s.prompt("Hello").answer("Hi.");
    s.write();
    std::fs::write(claude.join("settings.json"), "{}").unwrap();
    let runs = mctl_json(&claude, &["runs"]);
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 1, "the session under projects/ is listed");
    assert_eq!(runs[0]["source"], "claude");
    assert_eq!(runs[0]["id"], SESSION);
}

#[test]
fn local_commands_are_their_own_events_never_prompts_nor_titles() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    let command = |name: &str, args: &str| {
        json!({"type": "user", "uuid": format!("c-{name}"), "sessionId": SESSION, "timestamp": "2026-04-02T10:00:00.000Z",
            "message": {"role": "user", "content": format!("<command-name>/{name}</command-name>\n<command-message>{name}</command-message>\n<command-args>{args}</command-args>")}})
    };
    let printed = |text: &str| {
        json!({"type": "user", "uuid": format!("o-{}", text.len()), "sessionId": SESSION, "timestamp": "2026-04-02T10:00:00.000Z",
            "message": {"role": "user", "content": format!("<local-command-stdout>{text}</local-command-stdout>")}})
    };
    s.line(command("clear", ""))
        .line(printed(""))
        .prompt("Fix the failing test")
        .answer("Fixed: the fixture had a stale date.")
        .line(command("exit", ""))
        .line(printed("Bye!"));
    s.write();
    let show = mctl_json(store.path(), &["show", SESSION]);
    let run = &show["run"];
    assert_eq!(run["title"], "Fix the failing test");
    assert_eq!(run["dispatches"], 1, "a command is no prompt");
    assert_eq!(run["status"], "done", "answered before the trailing /exit");
    let commands = events_of(&show, "local_command");
    assert_eq!(commands.len(), 4);
    assert_eq!(commands[0]["tool"], "/clear");
    assert_eq!(commands[2]["tool"], "/exit");
    assert_eq!(commands[3]["tool"], "/exit", "its output names the command");
    assert_eq!(commands[3]["text"], "Bye!");
    assert_eq!(events_of(&show, "user_message").len(), 1);
    let text = stdout(&mctl(store.path(), &["show", SESSION]));
    assert!(
        text.contains("local_command          /exit → Bye!"),
        "{text}"
    );
    let md = stdout(&mctl(store.path(), &["export", SESSION, "--format", "md"]));
    assert!(md.contains("Local command · /exit"), "{md}");
    assert!(!md.contains("<command-name>"), "{md}");

    // A session of commands only is titled by their arguments.
    let other = "f1de1170-0000-4000-8000-000000000002";
    let mut only = Session::new(&store.path().join("-home-ana-app"), other);
    only.line(command("init", "describe the build"));
    only.write();
    let show = mctl_json(store.path(), &["show", other]);
    assert_eq!(show["run"]["title"], "describe the build");
    assert_eq!(show["run"]["dispatches"], 0);
}

#[test]
fn lines_of_an_unknown_type_are_one_folded_row_and_left_out_of_an_export() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    let latch =
        |n: u32| json!({"type": "atis-latch", "sessionId": SESSION, "uuid": format!("x{n}")});
    s.prompt("Tidy the imports")
        .line(latch(1))
        .line(latch(2))
        .line(latch(3))
        .answer("Tidied.")
        .line(latch(4));
    s.write();
    let show = mctl_json(store.path(), &["show", SESSION]);
    assert_eq!(show["run"]["warnings"], 4, "each counted, never fatal");
    let rows = events_of(&show, "atis-latch");
    assert_eq!(rows.len(), 2, "lines back to back are one row: {rows:?}");
    assert_eq!(rows[0]["unknownLines"], 3);
    assert_eq!(rows[0]["text"], "3 unknown lines of type `atis-latch`");
    assert_eq!(rows[1]["text"], "1 unknown line of type `atis-latch`");
    let text = stdout(&mctl(store.path(), &["show", SESSION]));
    assert!(
        text.contains("3 unknown lines of type `atis-latch`"),
        "{text}"
    );
    let md = stdout(&mctl(store.path(), &["export", SESSION, "--format", "md"]));
    assert!(!md.to_lowercase().contains("atis"), "{md}");
    assert!(md.contains("Tidied."), "{md}");
}

#[test]
fn a_session_ending_in_folded_unknown_lines_is_dated_alike_listed_and_shown() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    let latch = |n: u32, at: &str| json!({"type": "atis-latch", "sessionId": SESSION, "uuid": format!("x{n}"), "timestamp": at});
    // Its last lines, of one unknown type back to back, are one row of a timeline: the later
    // one's time still counts, in the listing (which keeps no rows) as in the timeline.
    s.prompt("Tidy the imports")
        .answer("Tidied.")
        .line(latch(1, "2031-01-01T00:00:00.000Z"))
        .line(latch(2, "2031-01-01T00:00:09.000Z"));
    s.write();
    let show = mctl_json(store.path(), &["show", SESSION]);
    assert_eq!(events_of(&show, "atis-latch").len(), 1, "one folded row");
    let listed = mctl_json(store.path(), &["runs"]);
    let listed = (listed.as_array().unwrap().iter())
        .find(|r| r["id"] == SESSION)
        .unwrap();
    let last = 1_924_992_009_000_i64; // 2031-01-01T00:00:09Z
    assert_eq!(show["run"]["updatedMs"], last);
    assert_eq!(listed["updatedMs"], last);
}

#[test]
fn a_lost_full_text_has_unknown_lines_and_nothing_in_its_stub_is_missed() {
    let store = tempfile::tempdir().unwrap();
    let mut s = Session::new(&store.path().join("-home-ana-app"), SESSION);
    s.tool_results(); // the folder is there, the file is not
    let saved =
        format!("/home/ana/.claude/projects/-home-ana-app/{SESSION}/tool-results/toolu_L.txt");
    let preview = "error: build failed\nerror: 3 tests failed";
    s.prompt("Build it")
        .call("toolu_L", "Bash", json!({"command": "make"}))
        .result("toolu_L", &stub("50KB", &saved, preview), None)
        .answer("It fails.");
    s.write();
    let dir = store.path();
    let show = mctl_json(dir, &["show", SESSION]);
    let r = &show["results"][0];
    assert_eq!(r["state"], "swept");
    assert!(r["lines"].is_null(), "unknown is not zero: {r}");

    let cov = mctl_json(dir, &["coverage", SESSION]);
    let v = &cov[0];
    assert!(v["totalLines"].is_null() && v["coverage"].is_null(), "{v}");
    assert_eq!(
        v["missedErrors"]["count"], 0,
        "the stub is what the model saw: nothing in it is missed"
    );
    let text = stdout(&mctl(dir, &["coverage", SESSION]));
    assert!(text.contains("total unknown"), "{text}");
    assert!(!text.contains("0.0%"), "{text}");

    let md = stdout(&mctl(dir, &["export", SESSION, "--format", "md"]));
    assert!(md.contains("lines unknown"), "{md}");
}
