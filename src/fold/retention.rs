//! One result classified (spec B.1): inline, retained, unretained or damaged, by its size and
//! its value file, and what it costs in the model's context.

use super::Analyzer;
use crate::model::layout::stem_file_name;
use crate::model::values::{find_value_file, matches_content};
use crate::model::{Problem, ProblemKind, ResultInfo, RetentionState};
use crate::retained::{
    count_format_chars, count_lines, stub_for, stub_from_source, value_id, ByteSource,
};
use crate::transcript::spans::{LineText, SpanSource};

impl Analyzer {
    fn tool_name(&self, id: &str) -> String {
        self.names
            .get(id)
            .or_else(|| self.block_names.get(id))
            .cloned()
            .unwrap_or_else(|| "tool".to_owned())
    }

    /// A live run's value file for a result of `bytes`: looked up when it was not there when
    /// the directory was listed, and looked at again when it was listed with another size (it
    /// was being written: the harness writes it before the result's line). One whose size
    /// still differs is noted, to be looked at when its directory changes.
    fn look_up_value(&mut self, vid: &str, bytes: u64) {
        let Some(dir) = self.values_dir.as_deref() else {
            return;
        };
        let listed = self.values.get(vid).map(|f| f.bytes);
        if listed == Some(bytes) {
            return;
        }
        let Some(file) = find_value_file(dir, vid) else {
            return;
        };
        if file.bytes != bytes {
            self.unsized_values.insert(vid.to_owned());
        }
        match listed {
            None => self.add_value(file),
            Some(was) if was != file.bytes => {
                let run = &mut self.run;
                run.value_bytes = run
                    .value_bytes
                    .saturating_sub(was)
                    .saturating_add(file.bytes);
                self.values.insert(vid.to_owned(), file);
            }
            Some(_) => {}
        }
    }

    /// Classifies one result (spec B.1) and adds it to the run's figures.
    pub(super) fn result(
        &mut self,
        n: u64,
        offset: u64,
        ts: Option<i64>,
        id: &str,
        ok: bool,
        content: LineText<'_>,
    ) -> ResultInfo {
        let tool = self.tool_name(id);
        if !self.tool_names.contains(&tool) {
            self.tool_names.insert(tool.clone());
        }
        if let Some(f) = self.foreign_result.take() {
            return self.foreign_info(f, (n, offset, ts), id, tool, ok);
        }
        let vid = value_id(id);
        // A big string is read again from the transcript, in slices, for what needs its bytes.
        let span = match content {
            LineText::Span(big) => match SpanSource::open(big) {
                Ok(src) => Some(src),
                Err(e) => {
                    let msg = format!("the transcript cannot be read again: {e}");
                    self.problems.push(Problem {
                        line: n,
                        kind: ProblemKind::Run,
                        message: msg,
                    });
                    None
                }
            },
            LineText::Inline(_) => None,
        };
        let inline = match content {
            LineText::Inline(s) => s,
            LineText::Span(_) => "",
        };
        let text: &dyn ByteSource = match &span {
            Some(src) => src,
            None => &inline,
        };
        let bytes = match content {
            LineText::Span(big) => big.bytes(),
            LineText::Inline(_) => text.len(),
        };
        self.matched_values.insert(vid.clone());
        if bytes > self.opts.threshold {
            self.look_up_value(&vid, bytes);
        }
        let file = self.values.get(&vid);
        let state = if bytes <= self.opts.threshold {
            RetentionState::Inline
        } else {
            match file.map(|f| matches_content(f, text, self.opts.verify)) {
                None => RetentionState::Unretained,
                Some(Ok(true)) => RetentionState::Retained,
                Some(Ok(false)) => RetentionState::Damaged,
                Some(Err(e)) => {
                    let msg = format!("value file {} cannot be read: {e}", stem_file_name(&vid));
                    self.problems.push(Problem {
                        line: n,
                        kind: ProblemKind::Run,
                        message: msg,
                    });
                    RetentionState::Damaged
                }
            }
        };
        let run = &mut self.run;
        run.results += 1;
        match state {
            RetentionState::Inline => run.inline += 1,
            RetentionState::Retained => {
                run.retained += 1;
                run.retained_bytes = run.retained_bytes.saturating_add(bytes);
            }
            RetentionState::Unretained => {
                run.unretained += 1;
                run.unretained_bytes = run.unretained_bytes.saturating_add(bytes);
            }
            RetentionState::Damaged => run.damaged += 1,
            // Only a foreign store cuts a result in place, or sweeps its saved files (above).
            RetentionState::Truncated => run.truncated += 1,
            RetentionState::Swept => run.swept += 1,
        }
        // Spec B.5: a resume sends the stub whenever the value file exists (it does not compare
        // bytes), so a damaged result costs a stub too. Other results' stubs are measured only
        // when asked for (the threshold what-if asks what any of them would cost retained).
        let stubbed = matches!(state, RetentionState::Retained | RetentionState::Damaged);
        let stub_bytes = (stubbed || self.opts.measure_stubs).then(|| match (content, &span) {
            (LineText::Span(big), Some(src)) => {
                stub_from_source(&vid, &tool, src, big.index()).map_or(0, |s| s.text.len() as u64)
            }
            (LineText::Inline(s), _) => stub_for(&vid, &tool, s).len() as u64,
            (LineText::Span(_), None) => 0,
        });
        let context_bytes = match (stubbed, stub_bytes) {
            (true, Some(stub)) => stub,
            _ => bytes,
        };
        ResultInfo {
            tool_call_id: id.to_owned(),
            tool,
            ok,
            bytes,
            lines: Some(match content {
                LineText::Span(big) => big.index().lines(),
                LineText::Inline(s) => count_lines(s.as_bytes()),
            }),
            format_chars: match content {
                LineText::Span(big) => big.format_chars(),
                LineText::Inline(s) => count_format_chars(s),
            },
            state,
            value_id: vid,
            line: n,
            value_file_bytes: file.map(|f| f.bytes),
            context_bytes,
            stub_bytes,
            started_ms: self.started_ts.get(id).copied(),
            finished_ms: ts,
            offset,
        }
    }
}
