//! Line-offset sidecars: `PREFIX/.mission-control/lines/<key>.json`, written by `mctl push`
//! beside each big value file. A sidecar holds the value's line index (its size, its line count
//! and the start of every 1,024th line), so a range peek near the end of a value of hundreds of
//! megabytes reads one window of it instead of counting its lines from the start.

use super::OWN_PREFIX;
use crate::retained::LineIndex;
use serde::{Deserialize, Serialize};

/// Value files bigger than this get a sidecar when pushed.
pub(crate) const SIDECAR_FROM: u64 = 1 << 20;

/// What a sidecar file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Sidecar {
    /// Format version: 1.
    pub version: u32,
    /// Size of the value it describes.
    pub bytes: u64,
    /// The value's entity tag as its upload returned it, when the store gave one.
    pub etag: Option<String>,
    /// Lines of the value (docs/runs-dir.md's line model).
    pub lines: u64,
    /// Lines between two checkpoints.
    pub stride: u64,
    /// Start offset of lines 1, stride + 1, 2 * stride + 1, ...
    pub checkpoints: Vec<u64>,
}

impl Sidecar {
    /// The sidecar of a value with index `index`, uploaded with entity tag `etag`.
    pub(crate) fn of(index: &LineIndex, etag: Option<String>) -> Self {
        Self {
            version: 1,
            bytes: index.bytes(),
            etag,
            lines: index.lines(),
            stride: crate::retained::lines::STRIDE,
            checkpoints: index.checkpoints().to_vec(),
        }
    }

    /// Its line index, when it describes the value listed with `size` and `etag`: a sidecar
    /// of another version of the value, or one that is not a valid index, is of no use.
    pub(crate) fn index_for(self, size: u64, etag: Option<&str>) -> Option<LineIndex> {
        let same_etag = match (self.etag.as_deref(), etag) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        let usable = self.version == 1
            && self.bytes == size
            && same_etag
            && self.stride == crate::retained::lines::STRIDE;
        usable
            .then(|| LineIndex::from_parts(self.bytes, self.lines, self.checkpoints))
            .flatten()
    }
}

/// The key of the sidecar of value file `rel` (relative to the prefix).
pub(crate) fn sidecar_rel(rel: &str) -> String {
    format!("{OWN_PREFIX}/lines/{rel}.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sidecar_gives_its_index_only_for_the_value_it_describes() {
        let text = "line\n".repeat(5000);
        let index = LineIndex::build(text.as_str()).unwrap();
        let car = Sidecar::of(&index, Some("\"e1\"".to_owned()));
        let json = serde_json::to_vec(&car).unwrap();
        let back: Sidecar = serde_json::from_slice(&json).unwrap();
        assert_eq!(
            back.clone().index_for(text.len() as u64, Some("\"e1\"")),
            Some(index.clone())
        );
        assert_eq!(back.clone().index_for(text.len() as u64, None), Some(index));
        assert_eq!(
            back.clone().index_for(text.len() as u64, Some("\"e2\"")),
            None
        );
        assert_eq!(
            back.clone()
                .index_for(text.len() as u64 + 1, Some("\"e1\"")),
            None
        );
        let mut bent = back;
        bent.checkpoints[2] = 1;
        assert_eq!(bent.index_for(text.len() as u64, None), None);
    }
}
