//! Decoding a JSON string as it streams by, a chunk at a time, with the checks a JSON parser
//! makes of its escapes (escape letters, surrogate pairs, control characters).

/// Why a string is not valid JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecodeError(&'static str);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

const BAD_ESCAPE: DecodeError = DecodeError("invalid escape in a string");
const LONE_SURROGATE: DecodeError = DecodeError("lone surrogate in a string's hex escape");
const CONTROL: DecodeError = DecodeError("control character in a string");

#[derive(Debug, Default, Clone, Copy)]
enum State {
    #[default]
    Normal,
    Escape,
    Hex {
        digits: u8,
        value: u16,
    },
}

/// The escapes of one JSON string, undone as its raw bytes (after the opening quote) arrive.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    state: State,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
    /// In the last [`feed`](Self::feed): the last place between escapes, as (raw bytes read,
    /// bytes decoded) — where decoding may restart even when the input ended inside an escape.
    last_clean: Option<(usize, usize)>,
}

impl Decoder {
    /// True between escapes: decoding may stop here and restart with a fresh decoder.
    pub(crate) fn clean(&self) -> bool {
        matches!(self.state, State::Normal) && self.high.is_none()
    }

    /// The last place between escapes in the last feed's input, as (raw bytes read, bytes
    /// decoded); the end of that input when the decoder is [`clean`](Self::clean) there.
    pub(crate) fn last_clean(&self, raw_len: usize, decoded: usize) -> Option<(usize, usize)> {
        if self.clean() {
            Some((raw_len, decoded))
        } else {
            self.last_clean
        }
    }

    /// Decodes `raw` onto `out`; `Some(n)` when the closing quote is byte `n - 1` of `raw`
    /// (what follows it is not read).
    pub(crate) fn feed(
        &mut self,
        raw: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<usize>, DecodeError> {
        let mut i = 0;
        let start = out.len();
        self.last_clean = None;
        while i < raw.len() {
            if self.clean() {
                self.last_clean = Some((i, out.len() - start));
            }
            match self.state {
                State::Normal => {
                    if self.high.is_some() {
                        // Only the low half's `\u` escape may follow a high surrogate.
                        if raw[i] != b'\\' {
                            return Err(LONE_SURROGATE);
                        }
                        self.state = State::Escape;
                        i += 1;
                        continue;
                    }
                    let rest = &raw[i..];
                    let Some(j) = rest
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    else {
                        out.extend_from_slice(rest);
                        return Ok(None);
                    };
                    out.extend_from_slice(&rest[..j]);
                    i += j + 1;
                    match rest[j] {
                        b'"' => return Ok(Some(i)),
                        b'\\' => self.state = State::Escape,
                        _ => return Err(CONTROL),
                    }
                }
                State::Escape => {
                    let b = raw[i];
                    i += 1;
                    if self.high.is_some() && b != b'u' {
                        return Err(LONE_SURROGATE);
                    }
                    let c = match b {
                        b'"' | b'\\' | b'/' => b,
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            self.state = State::Hex {
                                digits: 0,
                                value: 0,
                            };
                            continue;
                        }
                        _ => return Err(BAD_ESCAPE),
                    };
                    out.push(c);
                    self.state = State::Normal;
                }
                State::Hex { digits, value } => {
                    let digit = (raw[i] as char).to_digit(16).ok_or(BAD_ESCAPE)? as u16;
                    i += 1;
                    let value = value << 4 | digit;
                    if digits < 3 {
                        self.state = State::Hex {
                            digits: digits + 1,
                            value,
                        };
                        continue;
                    }
                    self.state = State::Normal;
                    let code = match (self.high.take(), value) {
                        (Some(high), 0xDC00..=0xDFFF) => {
                            0x10000
                                + ((u32::from(high) - 0xD800) << 10)
                                + (u32::from(value) - 0xDC00)
                        }
                        (Some(_), _) | (None, 0xDC00..=0xDFFF) => return Err(LONE_SURROGATE),
                        (None, 0xD800..=0xDBFF) => {
                            self.high = Some(value);
                            continue;
                        }
                        (None, v) => u32::from(v),
                    };
                    let c = char::from_u32(code).ok_or(LONE_SURROGATE)?;
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
            }
        }
        Ok(None)
    }
}
