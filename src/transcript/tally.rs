//! Counting what a big string decodes to as it streams by, without keeping it: its line
//! index, its format characters, its first bytes; and whether it is UTF-8 at all.

use super::spans::PLACEHOLDER_HEAD;
use crate::retained::lines::{utf8_prefix, LineIndexBuilder};
use crate::retained::{count_format_chars, LineIndex};

/// What a decoded text adds up to, counted chunk by chunk: its line index, its format
/// characters, its first bytes; and whether it is UTF-8 at all.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    index: LineIndexBuilder,
    /// The start of a character split between two chunks.
    carry: Vec<u8>,
    format_chars: u64,
    head: Vec<u8>,
}

const NOT_UTF8: &str = "a string is not UTF-8 text";

impl Tally {
    /// Bytes counted so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.index.bytes()
    }

    /// The next decoded bytes.
    pub(crate) fn feed(&mut self, decoded: &[u8]) -> Result<(), String> {
        self.index.feed(decoded);
        if self.head.len() < PLACEHOLDER_HEAD + 4 {
            let take = decoded.len().min(PLACEHOLDER_HEAD + 4 - self.head.len());
            self.head.extend_from_slice(&decoded[..take]);
        }
        let mut rest = decoded;
        if let Some(&lead) = self.carry.first() {
            let width = match lead {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            let need = (width - self.carry.len()).min(rest.len());
            self.carry.extend_from_slice(&rest[..need]);
            rest = &rest[need..];
            if self.carry.len() < width {
                return Ok(());
            }
            let c = std::str::from_utf8(&self.carry).map_err(|_| NOT_UTF8.to_owned())?;
            self.format_chars += count_format_chars(c);
            self.carry.clear();
        }
        let valid = match std::str::from_utf8(rest) {
            Ok(s) => s,
            // A character cut at the chunk's end: its start waits for the next chunk.
            Err(e) if e.error_len().is_none() => {
                let (valid, cut) = rest.split_at(e.valid_up_to());
                self.carry.extend_from_slice(cut);
                std::str::from_utf8(valid).expect("checked up to here")
            }
            Err(_) => return Err(NOT_UTF8.to_owned()),
        };
        self.format_chars += count_format_chars(valid);
        Ok(())
    }

    /// The text's first bytes (at most [`PLACEHOLDER_HEAD`], whole characters), its format
    /// characters and its line index.
    pub(crate) fn finish(self) -> Result<(String, u64, LineIndex), String> {
        if !self.carry.is_empty() {
            return Err(NOT_UTF8.to_owned());
        }
        let head = utf8_prefix(&self.head, PLACEHOLDER_HEAD);
        let head = String::from_utf8(head.to_vec()).map_err(|_| NOT_UTF8.to_owned())?;
        Ok((head, self.format_chars, self.index.finish()))
    }
}
