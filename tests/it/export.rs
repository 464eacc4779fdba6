//! `mctl export`: a run as HTML or Markdown to share, secrets redacted unless asked not to,
//! hostile text inert, values as asked.

use crate::support::{mctl, mctl_json, stderr, stdout, RunFile};
use serde_json::{json, Value};
use std::path::Path;

const AWS: &str = "AKIAIOSFODNN7EXAMPLE";
const GITHUB: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

/// A run whose message, tool input, inline result and retained value each hold a secret; the
/// retained one holds it in the middle, where its stub does not show it.
fn run_with_secrets(dir: &Path) {
    let mut big = String::new();
    for i in 0..2000 {
        big.push_str(&format!("line {i} of the build log\n"));
        if i == 1000 {
            big.push_str(&format!(
                "git push https://x:{GITHUB}@example.invalid/repo\n"
            ));
        }
    }
    let mut run = RunFile::new(dir, "run_secrets");
    run.user(&format!("Deploy with key {AWS} please"))
        .event(json!({"type": "tool_call_started", "toolCallId": "call_env", "name": "bash",
            "input": {"command": "export DB_PASSWORD=hunter2hunter2"}, "summary": "export"}))
        .event(json!({"type": "tool_call_finished", "toolCallId": "call_env",
            "result": {"ok": true, "content": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhYmMxMjMifQ.c2lnbmF0dXJlLWJ5dGVz", "metadata": null}}))
        .tool("call_log", "bash", &big, true)
        .done()
        .write();
}

fn export_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["export", "run_secrets", "--out"];
    let out = dir.join("out.html");
    let out = out.to_str().unwrap().to_owned();
    all.push(&out);
    all.extend_from_slice(args);
    let v = mctl_json(dir, &all);
    assert_eq!(v["out"], json!(out));
    v
}

#[test]
fn secrets_are_redacted_by_default_and_counted_per_kind() {
    let tmp = tempfile::tempdir().unwrap();
    run_with_secrets(tmp.path());
    let v = export_json(tmp.path(), &[]);
    assert_eq!(v["redacted"], json!(true));
    // The key is in the message and in the run's title, taken from it.
    assert_eq!(
        v["redactions"],
        json!({"aws-access-key": 2, "jwt": 1, "secret-assignment": 1})
    );
    let html = std::fs::read_to_string(tmp.path().join("out.html")).unwrap();
    assert_eq!(v["bytes"], json!(html.len()));
    assert!(!html.contains(AWS) && !html.contains("hunter2hunter2") && !html.contains("eyJhbGci"));
    assert!(html.contains("[redacted: aws-access-key]"));
    // The reader is told first.
    assert!(html.contains("Secrets redacted: 2 aws-access-key, 1 jwt, 1 secret-assignment."));
    // The stub of the big result is there; its middle is not.
    assert!(html.contains("[retained #"));
    assert!(!html.contains("line 1000 of the build log"));

    // With every value in full, the secret in the middle of the log is found and redacted too.
    let v = export_json(tmp.path(), &["--values", "full"]);
    assert_eq!(v["redactions"]["github-token"], json!(1));
    let html = std::fs::read_to_string(tmp.path().join("out.html")).unwrap();
    assert!(html.contains("line 1000 of the build log"));
    assert!(html.contains("<details><summary>Full output"));
    assert!(!html.contains(GITHUB));
}

#[test]
fn no_redact_keeps_secrets_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    run_with_secrets(tmp.path());
    let out = mctl(
        tmp.path(),
        &["export", "run_secrets", "--format", "md", "--no-redact"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let md = stdout(&out);
    assert!(md.contains(AWS));
    assert!(md.contains("Secrets were NOT redacted"));
    assert!(stderr(&out).contains("secrets NOT redacted"));
}

#[test]
fn values_none_leaves_every_result_out() {
    let tmp = tempfile::tempdir().unwrap();
    run_with_secrets(tmp.path());
    let out = mctl(tmp.path(), &["export", "run_secrets", "--values", "none"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = stdout(&out);
    assert!(!html.contains("Bearer") && !html.contains("[retained #"));
    assert!(html.contains("Results are left out"));
    // Without results, the key (message and title) and the tool input's password are left.
    assert!(stderr(&out).contains("secrets redacted: 2 aws-access-key, 1 secret-assignment"));
}

fn hostile_demo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let out = mctl(tmp.path(), &["demo", tmp.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    tmp
}

#[test]
fn hostile_text_is_inert_in_html() {
    let tmp = hostile_demo();
    let handler = regex::Regex::new(r"<[a-z][^>]*\son[a-z]+\s*=").unwrap();
    for values in ["stub", "full"] {
        let out = mctl(
            tmp.path(),
            &["export", "run_hostile_markup", "--values", values],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let html = stdout(&out);
        // The only elements are the export's own: no script, image, frame, link or handler.
        let lower = html.to_lowercase();
        for tag in ["<script", "<img", "<iframe", "<a ", "<b "] {
            assert!(!lower.contains(tag), "{values}: {tag} in the export");
        }
        assert!(
            !handler.is_match(&lower),
            "{values}: an element with a handler"
        );
        assert!(html.contains("&lt;script&gt;window.__mc_pwned"));
        assert!(html.contains(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';"
        ));
        // Terminal escapes are gone, the right-to-left override is shown as such.
        assert!(!html.contains('\u{1b}') && !html.contains('\u{202e}'));
        assert!(html.contains("⟨U+202E⟩evil"));
    }
}

#[test]
fn hostile_text_stays_in_its_fences_in_markdown() {
    let tmp = hostile_demo();
    let out = mctl(
        tmp.path(),
        &[
            "export",
            "run_hostile_markup",
            "--format",
            "md",
            "--values",
            "full",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let md = stdout(&out);
    // Outside fences (a fence line opens one and a line of the same backticks closes it),
    // nothing is raw HTML or a link.
    let mut fence: Option<String> = None;
    for line in md.lines() {
        let ticks: String = line.chars().take_while(|&c| c == '`').collect();
        match &fence {
            Some(f) if line == f => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => {
                assert!(!line.contains('<'), "raw HTML outside a fence: {line}");
                assert!(
                    !line.contains("](javascript"),
                    "a link outside a fence: {line}"
                );
            }
        }
    }
    assert!(fence.is_none(), "every fence is closed");
    assert!(
        md.contains("<script>window.__mc_pwned"),
        "the text is there, fenced"
    );
}

#[test]
fn an_unknown_run_is_a_clear_error() {
    let tmp = hostile_demo();
    let out = mctl(tmp.path(), &["export", "run_nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("run_nope"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
}

/// The name an export is offered under: the run's title as words, never a path or a hidden
/// file, the run id when the title gives nothing, and never a secret the export redacted.
#[test]
fn an_export_is_named_after_its_title() {
    use mission_control::export::{file_name, ExportFormat};
    let name = |title, run| file_name(title, run, ExportFormat::Html);
    assert_eq!(
        name("Fix the `flaky` test in CI!", "run_1"),
        "fix-the-flaky-test-in-ci.html"
    );
    assert_eq!(name("../../etc/passwd", "run_1"), "etc-passwd.html");
    assert_eq!(name("...", "run_17"), "run-17.html");
    assert_eq!(name("", ""), "run.html");
    assert_eq!(name("Réparer le build", "r"), "réparer-le-build.html");
    let long = "word ".repeat(40);
    let n = name(&long, "r");
    assert!(n.len() <= 60 + ".html".len(), "{n}");
    assert_eq!(
        file_name("Notes", "r", ExportFormat::Md),
        "notes.md",
        "the format's extension"
    );

    let tmp = tempfile::tempdir().unwrap();
    run_with_secrets(tmp.path());
    let v = export_json(tmp.path(), &[]);
    let offered = v["fileName"].as_str().unwrap();
    assert!(offered.ends_with(".html"), "{offered}");
    assert!(!offered.to_lowercase().contains("akia"), "{offered}");
}

/// A value bigger than the pieces an export writes it in (a megabyte) gives one document
/// whether it is written to a file, to stdout or inside `--json`, and every secret in it is
/// found: one in the first piece, a private key block that spans two pieces, and a `token =`
/// on the value's last line.
#[test]
fn a_full_value_bigger_than_a_piece_is_exported_the_same_every_way() {
    let tmp = tempfile::tempdir().unwrap();
    let mut big = String::new();
    for i in 0..100_000 {
        big.push_str(&format!("line {i:06} of the build log\n"));
        if i == 1_000 {
            big.push_str(&format!("uploaded with {AWS}\n"));
        }
        if i == 36_000 {
            // From about 0.99 MB to past 1 MiB: the first piece ends inside it.
            big.push_str("-----BEGIN RSA PRIVATE KEY-----\n");
            for k in 0..2_000 {
                big.push_str(&format!("MIIEowIBAAKCAQEA{k:06}xyzKEYBODY\n"));
            }
            big.push_str("-----END RSA PRIVATE KEY-----\n");
        }
    }
    big.push_str("token = abcdef123456");
    assert!(big.len() > 2 << 20);
    let mut run = RunFile::new(tmp.path(), "run_big");
    run.user("Build it")
        .tool("call_log", "bash", &big, true)
        .done()
        .write();

    let args = ["export", "run_big", "--values", "full"];
    let printed = mctl(tmp.path(), &args);
    assert!(printed.status.success(), "{}", stderr(&printed));
    let document = stdout(&printed);
    let out = tmp.path().join("big.html");
    let mut to_file = args.to_vec();
    to_file.extend(["--out", out.to_str().unwrap()]);
    let saved = mctl_json(tmp.path(), &to_file);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), document);
    let whole = mctl_json(tmp.path(), &args);
    assert_eq!(whole["document"].as_str().unwrap(), document);
    for v in [&saved, &whole] {
        assert_eq!(v["bytes"], json!(document.len()));
        assert_eq!(
            v["redactions"],
            // The last line is in the stub's tail too.
            json!({"aws-access-key": 1, "private-key": 1, "secret-assignment": 2})
        );
    }
    assert!(!document.contains(AWS) && !document.contains("KEYBODY"));
    assert!(!document.contains("abcdef123456"));
    assert_eq!(document.matches("[redacted: private-key]").count(), 1);
    // Every line around them is in the folded value, in order.
    let folded = &document[document.find("<details><summary>Full output").unwrap()..];
    let at = |text: &str| {
        folded
            .find(text)
            .unwrap_or_else(|| panic!("{text} is missing"))
    };
    assert!(at("line 036000 of") < at("[redacted: private-key]"));
    assert!(at("[redacted: private-key]") < at("line 036001 of"));
    assert!(at("line 036001 of") < at("line 099999 of"));
}

/// An export read only in part (`| head`) ends quietly, as every command's output does.
#[test]
fn an_export_into_a_closed_pipe_is_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    run_with_secrets(tmp.path());
    for json in [false, true] {
        let mut cmd = crate::support::mctl_command();
        cmd.arg("--runs-dir")
            .arg(tmp.path())
            .args(["export", "run_secrets", "--values", "full"]);
        if json {
            cmd.arg("--json");
        }
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(!stderr(&out).contains("Broken pipe"), "{}", stderr(&out));
    }
}
