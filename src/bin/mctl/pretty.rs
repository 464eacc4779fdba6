//! `--json` output as serde_json's pretty printer writes it, byte for byte, in fewer writes.
//!
//! serde_json's `PrettyFormatter` writes a line break and then the indent once per level, each a
//! write of its own: a listing of 7,000 runs (12 MB) makes millions of them, and printing was
//! the largest part of a warm `mctl runs --json`. This one writes the break and the whole
//! indent as one slice.

use mission_control::model::Run;
use mission_control::runs::Listing;
use serde::Serialize;
use serde_json::ser::Formatter;
use std::io::{self, Write};

/// A line break and the spaces of an indent up to 32 levels deep, written in one piece (a
/// deeper indent takes more pieces).
const BREAK: &[u8] = b"\n                                                                ";
/// The indent of one level, as `serde_json::to_writer_pretty` has it.
const INDENT: usize = 2;

/// serde_json's pretty output: two spaces a level, `": "` after a key, an empty array or object
/// as `[]` or `{}`.
#[derive(Default)]
pub struct Pretty {
    depth: usize,
    has_value: bool,
}

impl Pretty {
    /// A line break, then the current indent.
    fn line<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        let most = BREAK.len() - 1;
        let mut spaces = self.depth * INDENT;
        let at_once = spaces.min(most);
        w.write_all(&BREAK[..=at_once])?;
        spaces -= at_once;
        while spaces > 0 {
            let more = spaces.min(most);
            w.write_all(&BREAK[1..=more])?;
            spaces -= more;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.line(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        self.line(w)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `value` to `out` as `serde_json::to_writer_pretty` does.
pub fn to_writer<W: Write, T: ?Sized + serde::Serialize>(
    out: W,
    value: &T,
) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, Pretty::default());
    value.serialize(&mut ser)
}

/// Runs printed at once: each window's runs are unpacked and written on every core, then
/// printed in order. A window's texts are what is held (about 2 KB a run), three windows at
/// most: one being printed, one waiting, one being made.
const WINDOW: usize = 256;

/// A window of runs' texts, and the place of its first run in the listing.
type Window = (usize, Vec<serde_json::Result<Vec<u8>>>);

/// Writes `listing` to `out` as `to_writer` writes its array of runs, byte for byte: each run
/// is written on its own, on any core, at the indent of an item of the array. The windows are
/// printed on a thread of their own while the next ones are made: a listing read through a pipe
/// waits on its reader, and the cores would otherwise wait with it.
pub fn write_listing<W: Write + Send>(out: &mut W, listing: &Listing) -> io::Result<()> {
    use rayon::prelude::*;
    if listing.is_empty() {
        return out.write_all(b"[]");
    }
    let (made, to_print) = std::sync::mpsc::sync_channel::<Window>(1);
    std::thread::scope(|s| {
        let printer = s.spawn(move || print_windows(out, to_print));
        for start in (0..listing.len()).step_by(WINDOW) {
            let end = listing.len().min(start + WINDOW);
            let mut texts = Vec::with_capacity(end - start);
            (start..end)
                .into_par_iter()
                .map(|at| item_text(listing.run_at(at)))
                .collect_into_vec(&mut texts);
            if made.send((start, texts)).is_err() {
                // The printer stopped (a closed pipe): what it says is the answer.
                break;
            }
        }
        drop(made);
        printer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("printing the listing failed")))
    })
}

/// Prints the windows `to_print` gives, in order, as the items of one array.
fn print_windows<W: Write>(
    out: &mut W,
    to_print: std::sync::mpsc::Receiver<Window>,
) -> io::Result<()> {
    out.write_all(b"[")?;
    for (start, texts) in to_print {
        for (i, text) in texts.iter().enumerate() {
            out.write_all(if start + i == 0 { b"\n  " } else { b",\n  " })?;
            out.write_all(text.as_ref().map_err(|e| io::Error::other(e.to_string()))?)?;
        }
    }
    out.write_all(b"\n]")
}

/// A run as `to_writer` writes it as an item of an array.
fn item_text(run: Option<Run>) -> serde_json::Result<Vec<u8>> {
    let mut text = Vec::with_capacity(2048);
    let item = Pretty {
        depth: 1,
        has_value: false,
    };
    run.serialize(&mut serde_json::Serializer::with_formatter(&mut text, item))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ours(v: &serde_json::Value) -> String {
        let mut out = Vec::new();
        to_writer(&mut out, v).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_what_serde_json_writes() {
        let values = [
            json!([]),
            json!({}),
            json!([[], {}, [[]], {"a": {}}]),
            json!({"id": "run-1", "tokens": 12, "cost": 0.25, "tools": ["Bash", "Read"],
                   "usage": [{"model": "m", "input": 1, "nested": {"deep": [1, [2, {"x": null}]]}}],
                   "title": "quote \" and \\ and \u{1}", "empty": "", "yes": true}),
            json!("just a string"),
            json!(7),
        ];
        for v in &values {
            assert_eq!(ours(v), serde_json::to_string_pretty(v).unwrap(), "{v}");
        }
    }

    #[cfg(feature = "test-hooks")]
    #[test]
    fn a_listing_prints_as_serde_json_prints_its_runs() {
        let run = |id: &str, parent: Option<&str>, updated: i64| Run {
            id: id.into(),
            parent_id: parent.map(str::to_owned),
            updated_ms: Some(updated),
            input_tokens: 10,
            cost_usd: Some(0.5),
            title: format!("run \"{id}\"\n\u{7}"),
            tools: vec!["Bash".into()],
            ..Run::default()
        };
        // More than a window, so that items of several windows meet.
        let mut runs: Vec<Run> = (0..WINDOW as i64 * 2 + 3)
            .map(|i| run(&format!("r{i}"), None, i))
            .collect();
        runs.push(run("child", Some("r7"), 1));
        for runs in [Vec::new(), runs[..1].to_vec(), runs] {
            let listing = Listing::of_runs(runs);
            let mut ours = Vec::new();
            write_listing(&mut ours, &listing).unwrap();
            let theirs = serde_json::to_vec_pretty(&listing).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(theirs).unwrap()
            );
        }
    }

    /// A writer that takes `room` bytes, then fails as a closed pipe does.
    struct Closing {
        room: usize,
    }

    impl Write for Closing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let took = buf.len().min(self.room);
            self.room -= took;
            Ok(took)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[cfg(feature = "test-hooks")]
    #[test]
    fn a_listing_whose_reader_goes_away_stops_with_its_error() {
        let runs: Vec<Run> = (0..WINDOW * 4)
            .map(|i| Run {
                id: format!("r{i}"),
                updated_ms: Some(i as i64),
                ..Run::default()
            })
            .collect();
        let listing = Listing::of_runs(runs);
        // In the first window, in a later one, and at the very start.
        for room in [10, 2 * WINDOW * 1_000, 0] {
            let err = write_listing(&mut Closing { room }, &listing).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "room {room}");
        }
    }

    #[test]
    fn indents_past_the_one_piece_as_serde_json_does() {
        // 40 levels: 80 spaces, more than one slice of `BREAK` holds.
        let mut v = json!({"leaf": [1, 2]});
        for i in 0..40 {
            v = if i % 2 == 0 {
                json!([v, {"k": i}])
            } else {
                json!({"level": v, "n": []})
            };
        }
        assert!(40 * INDENT > BREAK.len());
        assert_eq!(ours(&v), serde_json::to_string_pretty(&v).unwrap());
    }
}
