//! Reading one run whole: its store's fold over every line of its transcript, with its value
//! files, into the run model.

use crate::fold::{Analyzer, FileFigures};
use crate::model::options::modified_ms;
use crate::model::values::ValueFile;
use crate::model::{Layout, Problem, ProblemKind, RunDetail, RunOptions, RunStatus};
use crate::transcript::{settled_tail, split_glued, RawLine};
use std::collections::BTreeMap;
use std::fs;
use std::io;

/// Reads run `id` of a runs directory.
pub fn analyze_run(
    layout: &Layout,
    id: &str,
    opts: &RunOptions,
    keep_timeline: bool,
) -> io::Result<RunDetail> {
    let values = layout.store().run_values(layout, id)?;
    analyze_run_with(layout, id, opts, keep_timeline, values)
}

/// [`analyze_run`] with the run's value files already listed (GC lists them anyway).
pub(crate) fn analyze_run_with(
    layout: &Layout,
    id: &str,
    opts: &RunOptions,
    keep_timeline: bool,
    values: BTreeMap<String, ValueFile>,
) -> io::Result<RunDetail> {
    analyze_run_observed(layout, id, opts, keep_timeline, values, &mut |_, _| {})
}

/// [`analyze_run_with`], showing `observe` each line the store's reader gives, once the run
/// model took it (with the model as it stands then), so that a caller that needs the lines as
/// well reads the transcript once. A last line without its newline that the model takes as
/// settled is not shown: a reader of complete lines never sees it.
///
/// A Claude Code session whose file was written between its scan's stamp check and the end of
/// the read is read again without its scan's places, and `observe` then sees its lines again
/// (the resume replay, its only observer, reads harness runs, which have no places).
pub(crate) fn analyze_run_observed(
    layout: &Layout,
    id: &str,
    opts: &RunOptions,
    keep_timeline: bool,
    values: BTreeMap<String, ValueFile>,
    observe: &mut dyn FnMut(RawLine<'_>, &Analyzer),
) -> io::Result<RunDetail> {
    let how = (opts, keep_timeline, true);
    let (detail, held) = read_whole(layout, id, how, values, observe)?;
    if held {
        return Ok(detail);
    }
    let values = layout.store().run_values(layout, id)?;
    let how = (opts, keep_timeline, false);
    read_whole(layout, id, how, values, observe).map(|(detail, _)| detail)
}

/// One read of run `id`, with its scan's places when `places` (the third of `how`, after the
/// options and whether to keep the timeline), and whether the places it passed lines over by
/// still held when it ended.
fn read_whole(
    layout: &Layout,
    id: &str,
    (opts, keep_timeline, places): (&RunOptions, bool, bool),
    values: BTreeMap<String, ValueFile>,
    observe: &mut dyn FnMut(RawLine<'_>, &Analyzer),
) -> io::Result<(RunDetail, bool)> {
    let files = layout.runs.get(id).cloned().unwrap_or_default();
    let mut analyzer = Analyzer::new(id, values, *opts, keep_timeline);
    if let Some(mut fold) = layout.store().fold(layout, id, opts)? {
        if let Some(path) = files.transcript.as_deref().filter(|_| !places) {
            fold.forget_places(path);
        }
        analyzer = analyzer.with_source(layout.source, fold);
        // Several runs share a Claude Code session's folder: none can call a file a stray.
        analyzer.no_strays();
        analyzer.run_mut().parent_id = files.parent().map(str::to_owned);
        analyzer.run_mut().parent_call = files.parent_call().map(str::to_owned);
    }
    if layout.linked_value_dirs.contains(id) {
        analyzer.linked_values(&layout.store().value_folder_name(id));
    }
    let mut mtime = None;
    let mut transcript_bytes = 0;
    let mut pending = 0;
    // A side conversation shares its session's file: its own lines are its size, and its last
    // line's time (not the file's, which its session moves) is its last activity.
    let side = files.side().is_some();
    if let Some(path) = &files.transcript {
        #[cfg(test)]
        tests::before_read(path);
        let mut own_bytes = 0u64;
        let observing = std::cell::Cell::new(true);
        let mut take = |line: RawLine<'_>| {
            let len = line.raw_len;
            if analyzer.line_taken(line) {
                own_bytes += 1 + len;
            }
            if observing.get() {
                observe(line, &analyzer);
            }
        };
        let mut outcome = match files.start() {
            // No line before its first is the run's (a side conversation in its session's
            // file): the read starts there.
            Some(start) => {
                crate::sources::read_store_lines_at(path, start, files.end(), &mut take)?
            }
            None => layout.store().read_records(path, id, &mut take)?,
        };
        let modified = fs::metadata(path).ok().as_ref().and_then(modified_ms);
        // A last line without its newline in a file left alone for longer than the running
        // window will not get one: when it is one whole JSON value, it is the last line.
        // (A compressed rollout's tail is not at the file's offsets: it is left pending.)
        let plain = path.extension().is_none_or(|e| e != "zst");
        let idle =
            plain && modified.is_some_and(|m| opts.status_by_clock(m) == RunStatus::Interrupted);
        if let Some(tail) = idle.then(|| settled_tail(path, &outcome)).flatten() {
            observing.set(false);
            let number = outcome.cursor.lines + 1;
            split_glued(
                RawLine::whole(number, outcome.cursor.offset, &tail),
                &mut take,
            );
            outcome.pending_bytes = 0;
        }
        transcript_bytes = if side { own_bytes } else { outcome.file_len };
        // A torn last line is its session's until it is whole.
        pending = if side { 0 } else { outcome.pending_bytes };
        // A run that shares its file with others (a side conversation, a session of a
        // database) is not as recent as the file: its own records say when it was.
        if !side && files.revision().is_none() {
            mtime = modified;
        }
    } else {
        analyzer.problems.push(Problem {
            line: 0,
            kind: ProblemKind::Run,
            message: "no transcript: only a summary file".to_owned(),
        });
    }
    let held = analyzer.places_held();
    let mut detail = analyzer.finish(mtime);
    if files.parent_values().is_some() && layout.value_dir(id).is_none() {
        // Its values sit in its session's folder beside the session's and its siblings': its
        // own are the files its results name.
        shared_folder_figures(&mut detail);
    }
    let files = FileFigures {
        transcript: files.transcript.as_deref(),
        summary: files.summary.as_deref(),
        transcript_bytes,
        pending_bytes: pending,
    };
    files.complete(&mut detail.run, opts);
    Ok((detail, held))
}

/// The value files and bytes of a run whose values share a folder with other runs': those its
/// retained and damaged results name, each once.
fn shared_folder_figures(detail: &mut RunDetail) {
    let mut named = std::collections::HashMap::new();
    for r in &detail.results {
        if let Some(bytes) = r.value_file_bytes {
            named.insert(r.value_id.as_str(), bytes);
        }
    }
    detail.run.value_files = named.len() as u64;
    detail.run.value_bytes = named.values().fold(0u64, |a, b| a.saturating_add(*b));
}

#[cfg(test)]
mod tests {
    use crate::model::stamp::FileStamp;
    use crate::model::RunOptions;
    use crate::runs::RunsDir;
    use serde_json::json;
    use std::cell::RefCell;
    use std::path::Path;

    type Hook = Box<dyn FnOnce(&Path)>;

    thread_local! {
        /// What a test does to a run's file once its fold is made, before the read opens it.
        static BEFORE_READ: RefCell<Option<Hook>> = const { RefCell::new(None) };
    }

    pub(super) fn before_read(path: &Path) {
        if let Some(hook) = BEFORE_READ.with(|b| b.borrow_mut().take()) {
            hook(path);
        }
    }

    const SESSION: &str = "00000000-0000-4000-8000-00000000000a";

    fn line(uuid: &str, parent: Option<&str>, side: bool, message: serde_json::Value) -> String {
        let kind = message["role"].clone();
        let line = json!({"parentUuid": parent, "isSidechain": side, "type": kind,
            "uuid": uuid, "sessionId": SESSION, "timestamp": "2026-04-02T10:00:00.000Z",
            "message": message});
        format!("{line}\n")
    }

    fn answer(id: &str, text: &str) -> serde_json::Value {
        json!({"id": id, "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 10, "output_tokens": 5}})
    }

    #[test]
    fn a_session_written_in_place_after_its_places_were_checked_is_read_again_without_them() {
        let store = tempfile::tempdir().unwrap();
        let project = store.path().join("-home-ana-app");
        std::fs::create_dir_all(&project).unwrap();
        let path = project.join(format!("{SESSION}.jsonl"));
        let asked = |text: &str| json!({"role": "user", "content": text});
        let side_answer = line("s2", Some("s1"), true, answer("msg_s", "side answer!"));
        let call = json!({"id": "msg_m", "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                "input": {"command": "ls"}}]});
        let result = json!({"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": "toolu_1", "content": "file one\nfile two\n".repeat(50)}]});
        let filler = line("m4", Some("m3"), false, answer("msg_f", &"f".repeat(400)));
        let text = line("m1", None, false, asked("hello"))
            + &line("s1", None, true, asked("side question"))
            + &side_answer
            + &line("m2", Some("m1"), false, call)
            + &line("m3", Some("m2"), false, result)
            + &filler;
        std::fs::write(&path, &text).unwrap();
        let dir = RunsDir::open(store.path(), RunOptions::default()).unwrap();
        let layout = dir.layout().unwrap();
        assert!(
            layout.runs[SESSION].others().is_some(),
            "the scan read side lines"
        );
        let read = |layout: &crate::model::Layout| {
            let detail = super::analyze_run(layout, SESSION, &dir.opts, true).unwrap();
            serde_json::to_value(detail).unwrap()
        };
        let before = read(&layout);

        // Once the fold has checked the places, the side answer becomes the session's, the
        // file keeping its length.
        let main_answer = line("s2", Some("s1"), false, answer("msg_s", "side answer"));
        assert_eq!(main_answer.len(), side_answer.len());
        // And a line before where the scan found no replacement record becomes one.
        let record = |pad: usize| {
            let stub = format!("<persisted-output>{}</persisted-output>", "p".repeat(pad));
            let line = json!({"type": "content-replacement", "sessionId": SESSION,
                "replacements": [{"kind": "tool-result", "toolUseId": "toolu_1",
                    "replacement": stub}]});
            format!("{line}\n")
        };
        let record = record(filler.len() - record(0).len());
        assert_eq!(record.len(), filler.len());
        let rewritten = text
            .replace(&side_answer, &main_answer)
            .replace(&filler, &record);
        let hook = move |path: &Path| {
            let stamp = |p: &Path| FileStamp::from_meta(&std::fs::metadata(p).unwrap());
            let was = stamp(path);
            // (Written until its stamp moves, whatever the file system's clock.)
            while stamp(path) == was {
                std::fs::write(path, &rewritten).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        };
        BEFORE_READ.with(|b| *b.borrow_mut() = Some(Box::new(hook)));
        let shown = read(&layout);
        assert_ne!(shown, before, "the session's figures follow the write");
        assert_eq!(
            shown,
            read(&dir.layout().unwrap()),
            "as a listing made now reads it"
        );
    }

    /// A harness run names a result's tool by the call that started it, else by the message
    /// block that made the call: a listing (which keeps no timeline rows) as a timeline does.
    #[test]
    fn a_result_is_named_by_its_calls_block_when_no_line_started_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let envelope = |seq: u64, event: serde_json::Value| {
            let line = json!({"schemaVersion": 1, "runId": "r", "seq": seq, "ts": 1_000 + seq,
                "event": event});
            format!("{line}\n")
        };
        let text = envelope(0, json!({"type": "user_message", "text": "list it"}))
            + &envelope(
                1,
                json!({"type": "assistant_message", "content": [
                {"type": "text", "text": "listing"},
                {"type": "tool_call", "toolCallId": "c1", "name": "bash"},
                {"type": "tool_call", "toolCallId": "c2"}]}),
            )
            + &envelope(
                2,
                json!({"type": "tool_call_finished", "toolCallId": "c1",
                "result": {"ok": true, "content": "a\nb"}}),
            )
            + &envelope(
                3,
                json!({"type": "tool_call_finished", "toolCallId": "c2",
                "result": {"ok": true, "content": "c"}}),
            )
            + &envelope(
                4,
                json!({"type": "tool_call_finished", "toolCallId": "c3",
                "result": {"ok": true, "content": "d"}}),
            );
        std::fs::write(dir.path().join("r.jsonl"), text).unwrap();
        let runs = RunsDir::open(dir.path(), RunOptions::default()).unwrap();
        let layout = runs.layout().unwrap();
        for timeline in [false, true] {
            let detail = super::analyze_run(&layout, "r", &runs.opts, timeline).unwrap();
            let tools: Vec<&str> = detail.results.iter().map(|r| r.tool.as_str()).collect();
            assert_eq!(tools, ["bash", "tool", "tool"], "timeline: {timeline}");
        }
    }
}
