//! The threshold what-if: over every tool result of the runs directory (or of one run), what
//! the harness would have kept out of context, written to disk and saved had its threshold been
//! T, with every value file write succeeding. Each result's size and the size of the stub the
//! core builds for it are all it takes; the index keeps both for every run.

use crate::error::{Error, Result};
use crate::index::Want;
use crate::model::{ResultSizes, RunOptions};
use crate::runs::{analyze_run, read_row, RunsDir};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use ts_rs::TS;

/// Results per power-of-two size bucket: sizes over `le / 2` and at most `le`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Bucket {
    /// Upper bound of the bucket in bytes, a power of two.
    pub le: u64,
    /// Results in the bucket.
    pub count: u64,
    /// The sum of their sizes in bytes.
    pub bytes: u64,
}

/// What a threshold does to a set of results.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    /// Tool results counted.
    pub results: u64,
    /// The sum of the results' sizes.
    pub total_bytes: u64,
    /// Results over the threshold: each would be a value file and a stub.
    pub retained: u64,
    /// Their bytes: the disk the value files would take.
    pub value_bytes: u64,
    /// What the results would cost in context: a result at or under the threshold its size, one
    /// over it its stub's.
    pub context_bytes: u64,
    /// `totalBytes - contextBytes` (below zero where stubs outweigh tiny results).
    pub saved_bytes: i64,
    /// `savedBytes / 4`, as the harness estimates tokens.
    pub saved_tokens: i64,
    /// Results per power-of-two size bucket, smallest first; empty buckets left out.
    pub histogram: Vec<Bucket>,
}

/// One threshold's answer (`mctl whatif --json` prints one per threshold, in an array).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WhatIf {
    /// The threshold tried, in bytes.
    pub threshold: u64,
    /// The figures over every result.
    #[serde(flatten)]
    #[ts(flatten)]
    pub figures: Figures,
    /// The same figures per tool name.
    pub per_tool: BTreeMap<String, Figures>,
}

impl Figures {
    /// Adds a result of `bytes` whose stub is `stub` bytes, at `threshold` (the histogram is
    /// counted once for all thresholds, by [`what_if`]).
    fn add(&mut self, bytes: u64, stub: u64, threshold: u64) {
        self.results += 1;
        self.total_bytes = self.total_bytes.saturating_add(bytes);
        let context = if bytes > threshold {
            self.retained += 1;
            self.value_bytes = self.value_bytes.saturating_add(bytes);
            stub
        } else {
            bytes
        };
        self.context_bytes = self.context_bytes.saturating_add(context);
    }

    fn close(&mut self, histogram: &Histogram) {
        self.saved_bytes = self.total_bytes as i64 - self.context_bytes as i64;
        self.saved_tokens = self.saved_bytes / 4;
        self.histogram = histogram
            .iter()
            .enumerate()
            .filter(|(_, (count, _))| *count > 0)
            .map(|(k, &(count, bytes))| Bucket {
                le: 1 << k,
                count,
                bytes,
            })
            .collect();
    }
}

/// Results and bytes per power of two (bucket `k` ends at `2^k`).
type Histogram = [(u64, u64); 64];

/// The power of two a size's bucket ends at: the smallest one at or over it (1 for 0 and 1).
pub fn bucket(bytes: u64) -> u64 {
    1 << bucket_index(bytes)
}

fn bucket_index(bytes: u64) -> usize {
    match bytes {
        0 | 1 => 0,
        // Past 2^63 there is no higher power of two: the last bucket holds the rest.
        b => (64 - (b - 1).leading_zeros()).min(63) as usize,
    }
}

/// The what-if of each of `thresholds` over the results of `runs`, in one pass over them.
pub fn what_if(runs: &[ResultSizes], thresholds: &[u64]) -> Vec<WhatIf> {
    // Tools by name, each with its figures per threshold and its histogram.
    let mut tools: HashMap<&str, usize> = HashMap::new();
    let mut per_tool: Vec<(Vec<Figures>, Histogram)> = Vec::new();
    let mut all = vec![Figures::default(); thresholds.len()];
    let mut histogram: Histogram = [(0, 0); 64];
    for run in runs {
        let ids: Vec<usize> = run
            .tools
            .iter()
            .map(|t| {
                let next = per_tool.len();
                let id = *tools.entry(t.as_str()).or_insert(next);
                if id == next {
                    per_tool.push((vec![Figures::default(); thresholds.len()], [(0, 0); 64]));
                }
                id
            })
            .collect();
        for &(tool, bytes, stub) in &run.results {
            let Some(&id) = ids.get(tool as usize) else {
                continue; // sizes the index kept wrong are never read (they decode or not at all)
            };
            let k = bucket_index(bytes);
            let (figures, tool_histogram) = &mut per_tool[id];
            for (i, &t) in thresholds.iter().enumerate() {
                all[i].add(bytes, stub, t);
                figures[i].add(bytes, stub, t);
            }
            for h in [&mut histogram[k], &mut tool_histogram[k]] {
                h.0 += 1;
                h.1 = h.1.saturating_add(bytes);
            }
        }
    }
    thresholds
        .iter()
        .enumerate()
        .map(|(i, &threshold)| {
            let mut figures = std::mem::take(&mut all[i]);
            figures.close(&histogram);
            let per_tool = tools
                .iter()
                .map(|(name, &id)| {
                    let (tool_figures, tool_histogram) = &mut per_tool[id];
                    let mut f = std::mem::take(&mut tool_figures[i]);
                    f.close(tool_histogram);
                    ((*name).to_owned(), f)
                })
                .collect();
            WhatIf {
                threshold,
                figures,
                per_tool,
            }
        })
        .collect()
}

/// The size and stub size of every tool result of the runs directory, or of run `run`, per
/// run: from the index for every run it vouches for, the other runs read (and kept).
pub fn result_sizes(dir: &RunsDir, run: Option<&str>) -> Result<Vec<ResultSizes>> {
    let layout = dir.layout()?;
    let opts = RunOptions {
        measure_stubs: true,
        ..dir.listing_opts(dir.opts.now_ms)
    };
    if let Some(run) = run {
        let id = dir.resolve_run(&layout, run)?;
        let detail = analyze_run(&layout, &id, &opts, false)
            .map_err(|e| Error::io(format!("reading run {id}"), &e))?;
        return Ok(ResultSizes::of(&detail.results).into_iter().collect());
    }
    let read = |id: &str| match read_row(&layout, id, &opts) {
        crate::index::ReadRun::Read(detail) => ResultSizes::of(&detail.results),
        // A run that cannot be read has no results to count; the listing shows why.
        _ => None,
    };
    Ok(match dir.index() {
        Some(mut index) => index
            .entries(&layout, &opts, Want::Sizes, |id| {
                read_row(&layout, id, &opts)
            })
            .into_iter()
            .filter_map(|(_, e)| e.sizes)
            .collect(),
        None => {
            use rayon::prelude::*;
            let ids: Vec<&String> = layout.runs.keys().collect();
            let per_run: Vec<Option<ResultSizes>> = ids.par_iter().map(|id| read(id)).collect();
            per_run.into_iter().flatten().collect()
        }
    })
}

/// The threshold what-if of each of `thresholds` over the runs directory, or run `run`.
pub fn what_if_runs(dir: &RunsDir, thresholds: &[u64], run: Option<&str>) -> Result<Vec<WhatIf>> {
    let sizes = result_sizes(dir, run)?;
    Ok(what_if(&sizes, thresholds))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One run's sizes: (tool, bytes, stub bytes) each.
    fn sizes(results: &[(&str, u64, u64)]) -> ResultSizes {
        let mut s = ResultSizes::default();
        for &(tool, bytes, stub) in results {
            let i = s.tools.iter().position(|t| t == tool).unwrap_or_else(|| {
                s.tools.push(tool.to_owned());
                s.tools.len() - 1
            });
            s.results.push((i as u32, bytes, stub));
        }
        s
    }

    #[test]
    fn buckets_are_powers_of_two_at_or_over_the_size() {
        assert_eq!(bucket(0), 1);
        assert_eq!(bucket(1), 1);
        assert_eq!(bucket(2), 2);
        assert_eq!(bucket(3), 4);
        assert_eq!(bucket(20_480), 32_768);
        assert_eq!(bucket(16_384), 16_384);
        assert_eq!(bucket(u64::MAX), 1 << 63);
    }

    #[test]
    fn the_threshold_itself_stays_inline_one_byte_over_is_retained() {
        // Two runs: the tools of each are named in its own table.
        let sizes = [
            sizes(&[("read", 100, 40), ("bash", 5, 30)]),
            sizes(&[("read", 101, 41)]),
        ];
        let [at] = what_if(&sizes, &[100]).try_into().unwrap();
        assert_eq!(at.figures.retained, 1);
        assert_eq!(at.figures.value_bytes, 101);
        assert_eq!(at.figures.context_bytes, 100 + 41 + 5);
        assert_eq!(at.figures.saved_bytes, 206 - 146);
        assert_eq!(at.figures.saved_tokens, 15);
        assert_eq!(at.per_tool["bash"].retained, 0);
        assert_eq!(at.per_tool["read"].retained, 1);
        // A stub longer than the tiny result it replaces costs context.
        let [tiny] = what_if(&sizes, &[1]).try_into().unwrap();
        assert_eq!(tiny.per_tool["bash"].saved_bytes, -25);
        assert_eq!(
            tiny.figures.histogram,
            [
                Bucket {
                    le: 8,
                    count: 1,
                    bytes: 5
                },
                Bucket {
                    le: 128,
                    count: 2,
                    bytes: 201
                }
            ]
        );
    }
}
