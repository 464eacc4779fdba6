//! Value ids (spec B.2): the one function that turns a tool call id into the file name stem of
//! its retained value. Retention, replay, peek, the UI and GC all go through it.

/// Longest id that is used unchanged.
const CLEAN_MAX: usize = 64;
/// How many sanitized characters are kept before the hash suffix.
const SANITIZED_KEEP: usize = 40;

fn is_clean_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// True when `id` is used unchanged as a value id.
pub(crate) fn is_clean(id: &str) -> bool {
    !id.is_empty() && id.len() <= CLEAN_MAX && id.chars().all(is_clean_char)
}

/// FNV-1a, 32 bits, over the id's UTF-8 bytes.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for &b in bytes {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// `value_id(tool_call_id)` exactly as spec B.2 defines it.
///
/// The result is only ever made of `A-Z a-z 0-9 _ -`, so it can never be `.`, `..` or contain a
/// path separator: a value id is always a safe single file name stem. The function is also
/// idempotent (a value id maps to itself), which lets every command accept either form.
pub fn value_id(tool_call_id: &str) -> String {
    if is_clean(tool_call_id) {
        return tool_call_id.to_owned();
    }
    // "Every character" means every Unicode scalar value: `調べる` becomes `___`.
    let mut out: String = tool_call_id
        .chars()
        .take(SANITIZED_KEEP)
        .map(|c| if is_clean_char(c) { c } else { '_' })
        .collect();
    out.push('-');
    out.push_str(&format!("{:08x}", fnv1a32(tool_call_id.as_bytes())));
    out
}

/// The file name of a value inside its `<run>.values/` directory.
pub(crate) fn value_file_name(tool_call_id: &str) -> String {
    format!("{}.txt", value_id(tool_call_id))
}

/// A tool call id and its value id (`mctl value-id --json`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValueIdPair {
    /// The tool call id, as given.
    pub tool_call_id: String,
    /// Its value id: unchanged when clean, else sanitized with a hash (docs/runs-dir.md).
    pub value_id: String,
}

impl ValueIdPair {
    /// The value id of `tool_call_id`, with the id.
    pub fn of(tool_call_id: &str) -> Self {
        Self {
            tool_call_id: tool_call_id.to_owned(),
            value_id: value_id(tool_call_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_test_vectors() {
        let cases = [
            ("toolu_01Xy7Qk", "toolu_01Xy7Qk".to_owned()),
            ("turn3_tool_0", "turn3_tool_0".to_owned()),
            ("call.1", "call_1-2945fb5c".to_owned()),
            ("tool call", "tool_call-53b49089".to_owned()),
            ("a/../b", "a____b-eab86698".to_owned()),
            ("調べる", "___-05ac777f".to_owned()),
            ("", "-811c9dc5".to_owned()),
            (&"x".repeat(100), format!("{}-ac246ad5", "x".repeat(40))),
        ];
        for (input, expected) in cases {
            assert_eq!(value_id(input), expected, "value_id({input:?})");
        }
    }

    #[test]
    fn sixty_four_clean_chars_stay_sixty_five_do_not() {
        let at_limit = "a".repeat(64);
        assert_eq!(value_id(&at_limit), at_limit);
        let over = "a".repeat(65);
        let id = value_id(&over);
        assert_eq!(id.len(), 49);
        assert!(id.starts_with(&"a".repeat(40)));
    }

    #[test]
    fn file_name_has_txt_extension() {
        assert_eq!(value_file_name("call.1"), "call_1-2945fb5c.txt");
    }
}
