//! Images a prompt carries, known by their media type and size: stores keep them as base64,
//! and the app shows `[image image/png, 12.4 KiB]`, never the bytes.

/// The size of base64 `data` once decoded: three bytes for every four characters, less its
/// `=` padding.
pub(crate) fn decoded_len(data: &str) -> u64 {
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() as u64 * 3 / 4).saturating_sub(padding as u64)
}

/// The media type and decoded size of a `data:<mime>;base64,<data>` URI (`None` for another
/// kind of URL).
pub(crate) fn data_uri(uri: &str) -> Option<(Option<String>, u64)> {
    let (head, data) = uri.strip_prefix("data:")?.split_once(',')?;
    let mime = head.split(';').next().filter(|m| !m.is_empty());
    Some((mime.map(str::to_owned), decoded_len(data)))
}

/// How an image-only prompt reads: `[image image/png, 12.4 KiB]`.
pub(crate) fn label(mime: Option<&str>, bytes: u64) -> String {
    let size = bytesize::ByteSize(bytes).display().iec().to_string();
    match mime {
        Some(m) => format!("[image {m}, {size}]"),
        None => format!("[image, {size}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_uri_gives_its_type_and_decoded_size() {
        assert_eq!(
            data_uri("data:image/png;base64,iVBORw0KGgo="),
            Some((Some("image/png".to_owned()), 8))
        );
        assert_eq!(data_uri("https://example.com/a.png"), None);
        assert_eq!(label(Some("image/png"), 8), "[image image/png, 8 B]");
    }
}
