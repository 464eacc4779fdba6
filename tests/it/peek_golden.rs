//! Peek answers (docs/peek-layout.md), pinned byte for byte.

use insta::assert_snapshot;
use mission_control::retained::{peek_text, PeekRequest, PEEK_MAX_BYTES};

fn range(start: u64, end: Option<u64>) -> PeekRequest {
    PeekRequest::Range { start, end }
}

fn query(q: &str) -> PeekRequest {
    PeekRequest::Query { text: q.to_owned() }
}

fn log(lines: usize) -> String {
    (1..=lines)
        .map(|i| {
            if i % 100 == 0 {
                format!("error at step {i}\n")
            } else {
                format!("ok step {i}\n")
            }
        })
        .collect()
}

#[test]
fn range_peek() {
    assert_snapshot!(
        "range_5_9",
        peek_text("v", &log(1000), &range(5, Some(9))).unwrap().text
    );
}

#[test]
fn range_clipped_to_the_last_line() {
    let p = peek_text("v", &log(1000), &range(998, Some(5000))).unwrap();
    assert_eq!(p.lines, [998, 999, 1000]);
    assert!(!p.cut);
    assert_snapshot!("range_clipped", p.text);
}

#[test]
fn without_end_a_range_reads_400_lines() {
    let p = peek_text("v", &log(1000), &range(101, None)).unwrap();
    assert_eq!(p.lines, (101..=500).collect::<Vec<_>>());
    assert!(!p.cut, "end defaults to start + 399: nothing was cut");
    assert!(p.text.starts_with("[peek #v: lines 101-500 of 1000]\n"));
    assert_eq!(
        peek_text("v", &log(1000), &range(990, None))
            .unwrap()
            .lines
            .len(),
        11
    );
}

#[test]
fn range_cut_by_the_400_line_limit_says_where_to_continue() {
    let p = peek_text("v", &log(1000), &range(1, Some(1000))).unwrap();
    assert_eq!(p.lines.len(), 400);
    assert!(p.cut);
    assert!(p
        .text
        .ends_with("[cut: at most 400 lines per peek; continue with start=401]\n"));
    assert!(p.text.starts_with("[peek #v: lines 1-400 of 1000]\n"));
}

#[test]
fn range_cut_by_the_byte_cap_says_where_to_continue() {
    let text: String = (1..=400)
        .map(|i| format!("{i} {}\n", "w".repeat(200)))
        .collect();
    let p = peek_text("v", &text, &range(1, Some(400))).unwrap();
    assert!(p.text.len() <= PEEK_MAX_BYTES);
    let next = p.lines.last().unwrap() + 1;
    assert!(
        p.text.ends_with(&format!("continue with start={next}]\n")),
        "{}",
        &p.text[p.text.len() - 200..]
    );
}

#[test]
fn range_of_one_enormous_line() {
    let text = "z".repeat(100_000);
    let p = peek_text("v", &text, &range(1, None)).unwrap();
    assert!(p.text.len() <= PEEK_MAX_BYTES);
    assert_snapshot!("enormous_line_footer", p.text.lines().last().unwrap());
}

#[test]
fn query_peek() {
    assert_snapshot!(
        "query_error",
        peek_text("v", &log(1000), &query("error")).unwrap().text
    );
}

#[test]
fn query_with_no_match() {
    assert_snapshot!(
        "query_none",
        peek_text("v", &log(10), &query("panic")).unwrap().text
    );
}

#[test]
fn query_on_a_long_line_shows_a_window_marked_as_cut() {
    let text = format!("short\n{}NEEDLE{}\n", "a".repeat(3000), "b".repeat(3000));
    assert_snapshot!(
        "query_window",
        peek_text("v", &text, &query("NEEDLE")).unwrap().text
    );
}

#[test]
fn query_cut_at_400_lines_names_the_next_match() {
    let p = peek_text("v", &log(50_000), &query("error")).unwrap();
    assert_eq!(p.matches, Some(500));
    assert_eq!(p.lines.len(), 400);
    assert!(p.text.ends_with(
        "The next match is on line 40100: continue with start=40100, or a narrower query]\n"
    ));
}

#[test]
fn errors_are_messages() {
    let t = log(10);
    let msg = |r| peek_text("v", &t, &r).unwrap_err().to_string();
    assert_eq!(
        msg(range(0, None)),
        "peek_value #v: start must be 1 or more (lines are numbered from 1)"
    );
    assert_eq!(
        msg(range(11, None)),
        "peek_value #v: start 11 is past the end: the value has 10 lines"
    );
    assert_eq!(
        msg(range(5, Some(4))),
        "peek_value #v: start 5 is after end 4"
    );
    assert_eq!(msg(query("")), "peek_value #v: the query is empty");
    assert!(msg(query("a\nb")).contains("line break"));
}

#[test]
fn a_long_multibyte_first_line_is_cut_on_a_character_boundary() {
    for text in ["調".repeat(10_000), format!("a{}", "調".repeat(10_000))] {
        let p = peek_text("v", &text, &range(1, None)).unwrap();
        assert!(p.text.len() <= PEEK_MAX_BYTES);
        assert!(!p.text.contains('\u{FFFD}'), "no character is split");
        let shown: usize = p
            .text
            .lines()
            .nth(1)
            .unwrap()
            .trim_start_matches("1: ")
            .trim_end_matches('…')
            .len();
        assert!(p
            .text
            .contains(&format!("only its first {shown} are shown")));
    }
}

#[test]
fn a_query_may_hold_a_lone_carriage_return_but_never_matches_a_crlf_line_end() {
    let text = "a\rb\na\r\nxa\r\r\n";
    let p = peek_text("v", text, &query("a\r")).unwrap();
    // Line 2 is "a" (its CR ends the line); line 3 is "xa\r".
    assert_eq!(p.lines, [1, 3]);
    assert_eq!(p.matches, Some(2));
}
