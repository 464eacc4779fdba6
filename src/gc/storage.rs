//! Where the value bytes are: per run, per tool, per age, and in orphan directories. What the
//! Storage view charts and what a GC policy is chosen from.

use super::candidates::runs_with_results;
use crate::error::{Error, Result};
use crate::pins::Pins;
use crate::runs::RunsDir;
use serde::Serialize;
use std::collections::HashMap;
use ts_rs::TS;

/// Value bytes of one group of files: a tool, an age or an orphan directory.
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StorageRow {
    /// The group: a tool name (`stray` for none), an age bucket, or an orphan directory's run id.
    pub label: String,
    /// Size of the group's files in bytes.
    pub bytes: u64,
    /// Value files in the group.
    pub files: u64,
}

/// The value files of one run.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StorageRun {
    /// Run id.
    pub run: String,
    /// The run's title: its first user message, whitespace collapsed.
    pub title: String,
    /// Size of the run's value files in bytes.
    pub bytes: u64,
    /// Value files of the run.
    pub files: u64,
    /// Last activity, in milliseconds since the Unix epoch; `null` when unknown.
    pub updated_ms: Option<i64>,
    /// The run is pinned: GC never collects its values.
    pub pinned: bool,
}

/// Where a runs directory's value bytes are (what the Storage view charts).
#[derive(Debug, Clone, Default, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct StorageStats {
    /// Bytes of every value file, orphans included.
    pub total_bytes: u64,
    /// Number of value files, orphans included.
    pub files: u64,
    /// Largest first.
    pub runs: Vec<StorageRun>,
    /// By the tool whose result a value file backs (`stray` when none), largest first.
    pub tools: Vec<StorageRow>,
    /// By the run's last activity: under a day, a week, a month, older.
    pub ages: Vec<StorageRow>,
    /// Value directories whose run is gone.
    pub orphans: Vec<StorageRow>,
    /// For a store whose agent cleans up after itself (Claude Code, Gemini CLI, opencode): what
    /// its own cleanup deletes at its next start.
    #[serde(default)]
    pub agent_sweep: Option<crate::sources::sweep::AgentSweep>,
}

const AGES: [(&str, i64); 4] = [
    ("under 1 day", 86_400_000),
    ("1-7 days", 7 * 86_400_000),
    ("7-30 days", 30 * 86_400_000),
    ("older", i64::MAX),
];

/// Where the value bytes of `dir` are: runs aged by the clock `now_ms`, pinned per `pins`.
pub fn storage(dir: &RunsDir, pins: &Pins, now_ms: i64) -> Result<StorageStats> {
    let layout = dir.layout()?;
    let pinned = pins.of_dir(dir.root());
    let mut stats = StorageStats::default();
    let mut tools: HashMap<String, StorageRow> = HashMap::new();
    let mut ages: Vec<StorageRow> = AGES
        .iter()
        .map(|(l, _)| StorageRow {
            label: (*l).to_owned(),
            ..Default::default()
        })
        .collect();
    let owners = super::owners::Owners::of(&layout);
    for (id, vdir) in layout.orphan_value_dirs() {
        let files = owners
            .list(vdir)
            .map_err(|e| Error::io(format!("reading {}", vdir.display()), &e))?;
        let bytes: u64 = files.values().map(|f| f.bytes).sum();
        stats.total_bytes += bytes;
        stats.files += files.len() as u64;
        stats.orphans.push(StorageRow {
            label: id.to_owned(),
            bytes,
            files: files.len() as u64,
        });
    }
    for (id, listed) in runs_with_results(dir, &layout, now_ms) {
        let (files, run, results) =
            listed.map_err(|e| Error::io(format!("reading run {id}"), &e))?;
        // In a folder every session shares, a session with no file of its own has no row.
        if files.is_empty() && owners.named_only() {
            continue;
        }
        let bytes: u64 = files.values().map(|f| f.bytes).sum();
        stats.total_bytes += bytes;
        stats.files += files.len() as u64;
        let tool_of: HashMap<&str, &str> = results
            .iter()
            .map(|r| (r.value_id.as_str(), r.tool.as_str()))
            .collect();
        for f in files.values() {
            let tool = tool_of.get(f.stem.as_str()).copied().unwrap_or("stray");
            let row = tools.entry(tool.to_owned()).or_insert_with(|| StorageRow {
                label: tool.to_owned(),
                ..Default::default()
            });
            row.bytes += f.bytes;
            row.files += 1;
        }
        let age = now_ms.saturating_sub(run.updated_ms.unwrap_or(0));
        let bucket = AGES
            .iter()
            .position(|(_, max)| age < *max)
            .unwrap_or(AGES.len() - 1);
        ages[bucket].bytes += bytes;
        ages[bucket].files += files.len() as u64;
        stats.runs.push(StorageRun {
            run: id.clone(),
            title: run.title.clone(),
            bytes,
            files: files.len() as u64,
            updated_ms: run.updated_ms,
            // A session's folder is also kept by a pin of a run whose values share it.
            pinned: owners.pinned(&id, &pinned),
        });
    }
    stats
        .runs
        .sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.run.cmp(&b.run)));
    let mut tools: Vec<StorageRow> = tools.into_values().collect();
    tools.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.label.cmp(&b.label)));
    stats.tools = tools;
    stats.ages = ages;
    stats.orphans.sort_by_key(|o| std::cmp::Reverse(o.bytes));
    stats.agent_sweep = agent_sweep(dir, &layout, now_ms);
    Ok(stats)
}

/// What the agent's own cleanup deletes of its store at its next start; `None` for a store
/// whose agent has none.
pub(crate) fn agent_sweep(
    dir: &RunsDir,
    layout: &crate::model::Layout,
    now_ms: i64,
) -> Option<crate::sources::sweep::AgentSweep> {
    let store = layout.store();
    if !store.capabilities().agent_sweep {
        return None;
    }
    let runs = dir.list().unwrap_or_default();
    let title = |id: &str| {
        runs.iter()
            .find(|r| r.id == id)
            .map(|r| r.title.clone())
            .unwrap_or_default()
    };
    store.sweep(layout, now_ms, &title)
}
