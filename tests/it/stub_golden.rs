//! The stub's exact layout (docs/stub-layout.md), pinned byte for byte. Once shipped, a change
//! here is a format change: the model of every resumed run sees it.

use insta::assert_snapshot;
use mission_control::retained::{
    stub_for, stub_from_source, stub_layout, FileSource, LineIndex, STUB_MAX,
};

fn numbered(lines: usize, width: usize) -> String {
    (1..=lines)
        .map(|i| format!("{i:0width$} {}\n", "abcdefghij".repeat(3)))
        .collect()
}

#[test]
fn stub_of_many_short_lines() {
    let text = numbered(2000, 5);
    let stub = stub_for("toolu_01Xy7Qk", "read_file", &text);
    assert!(stub.len() <= STUB_MAX);
    assert_snapshot!("many_short_lines", stub);
}

#[test]
fn stub_of_one_enormous_line() {
    let text: String = (0..5000).map(|i| format!("{{\"k{i}\":{i}}},")).collect();
    assert_snapshot!(
        "one_enormous_line",
        stub_for("call_1-2945fb5c", "bash", &text)
    );
}

#[test]
fn stub_of_two_enormous_lines_with_crlf_and_unicode() {
    let text = format!("{}\r\n{}\r\n", "é".repeat(3000), "調".repeat(3000));
    let stub = stub_for("t", "fetch", &text);
    assert!(stub.len() <= STUB_MAX);
    assert!(!stub.contains('\r'), "a CR before LF is not part of a line");
    assert_snapshot!("two_enormous_lines", stub);
}

#[test]
fn stub_of_a_short_text_has_no_tail() {
    let stub = stub_layout("t", "bash", "one\ntwo\n");
    assert_eq!(stub.head, Some((1, 2)));
    assert_eq!(stub.tail, None);
    assert_snapshot!("short_text", stub.text);
}

#[test]
fn stub_of_an_empty_text() {
    assert_snapshot!("empty_text", stub_for("t", "bash", ""));
}

#[test]
fn hostile_tool_names_are_shown_safely() {
    let stub = stub_for(
        "t",
        &format!("evil\ntool\u{1b}[31m{}", "n".repeat(200)),
        "x\n",
    );
    let first = stub.lines().next().unwrap();
    assert!(first.starts_with("[retained #t] evil?tool?[31mnnn"));
    assert!(first.len() < 200);
}

#[test]
fn stub_from_a_value_file_equals_stub_from_the_text() {
    let text = numbered(5000, 4);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.txt");
    std::fs::write(&path, &text).unwrap();
    let src = FileSource::open(&path).unwrap();
    let index = LineIndex::build(&src).unwrap();
    let from_file = stub_from_source("v", "read_file", &src, &index).unwrap();
    assert_eq!(from_file, stub_layout("v", "read_file", &text));
    assert_eq!(from_file.head.map(|h| h.0), Some(1));
    assert_eq!(from_file.tail.map(|t| t.1), Some(5000));
}
