//! The command contract: every command of the desktop app, by name, with its request, response
//! and streamed item types. The shell's handler for command `x` takes `command::x::Request` and
//! answers `command::x::Response` (streaming `command::x::Stream` items on a channel when it has
//! one); the UI's `ipc.ts` calls commands through the generated `Commands` map. So a renamed
//! command, parameter or field fails a type check on one side or the other, not at run time.
//!
//! On the wire a command is invoked with `{ req }` (its request, absent for `()`) and, when it
//! streams, `{ channel }`.

use super::prefs::SavedSettings;
use super::{ResultRef, Settings};
use crate::diff::{RunDiff, TextDiff};
use crate::export::Export;
use crate::gc::{GcReport, Progress, StorageStats};
use crate::insights::{ResumePreview, ValueCoverage, WhatIf};
use crate::model::RunDetail;
use crate::retained::open::LinesPage;
use crate::runs::{PeekAnswer, ValueInfo, ValueVerdict};
use crate::search::SearchSummary;
use crate::watch::{Change, RunList, RunPatch, RunUpdate};
use crate::{Error, ErrorCode, ScanProgress};
use std::collections::BTreeMap;
use std::path::Path;
use ts_rs::{Config, TypeVisitor, TS};

#[allow(clippy::wildcard_imports)]
use super::requests::*;

/// One command of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// The command's name, as the front ends invoke it (`run_detail`).
    pub name: &'static str,
    /// Whether it streams items on a channel.
    pub streams: bool,
}

macro_rules! contract {
    ($( $(#[doc = $doc:literal])* $name:ident : $req:ty => $resp:ty $(, stream $item:ty)? ; )*) => {
        /// Each command's types, in a module named after the command.
        #[allow(non_snake_case)]
        pub mod command {
            $(
                $(#[doc = $doc])*
                pub mod $name {
                    #[allow(unused_imports)]
                    use super::super::*;
                    /// What the command takes (`()` when nothing).
                    pub type Request = $req;
                    /// What the command answers.
                    pub type Response = $resp;
                    /// What the command streams on its channel (`()` when it streams nothing).
                    pub type Stream = contract!(@item $($item)?);
                }
            )*
        }

        /// Every command, in the order of the contract.
        pub const COMMANDS: &[CommandSpec] = &[
            $( CommandSpec { name: stringify!($name), streams: contract!(@streams $($item)?) } ),*
        ];

        /// Each command's TypeScript request, response and item types.
        fn signatures(cfg: &Config) -> Vec<(&'static str, [String; 3])> {
            vec![$(
                (
                    stringify!($name),
                    [
                        <$req as TS>::name(cfg),
                        <$resp as TS>::name(cfg),
                        <contract!(@item $($item)?) as TS>::name(cfg),
                    ],
                )
            ),*]
        }

        /// Visits every type the contract names (its dependencies are reached from those).
        fn visit_all(v: &mut impl TypeVisitor) {
            $(
                v.visit::<$req>();
                v.visit::<$resp>();
                v.visit::<contract!(@item $($item)?)>();
            )*
            v.visit::<Error>();
            v.visit::<ErrorCode>();
        }
    };
    (@item) => { () };
    (@item $item:ty) => { $item };
    (@streams) => { false };
    (@streams $item:ty) => { true };
}

/// The commands, each with its request, response and streamed item types: given to macro
/// `$callback`, which makes of them what it needs (the types and the list here, the dispatch in
/// `crate::service::dispatch`). The one list of the contract.
macro_rules! with_contract {
    ($callback:ident) => {
        $callback! {
            /// The settings the app started with.
            settings: () => Settings;
            /// Shows these runs directories from now on and saves them; answers the settings then.
            set_runs_dirs: SetRunsDirsRequest => Settings;
            /// Saves the Settings view's choices; answers the settings then in effect (the command
            /// line and the environment still win).
            save_settings: SavedSettings => Settings;
            /// The system folder picker; `null` when the user cancels.
            pick_runs_dir: () => Option<String>;
            /// Every run of the directories shown, as the list shows them.
            list_runs: ListRunsRequest => RunList;
            /// How far the listings' reads have come since the process started: runs and
            /// transcript bytes to read and read (shown while a list is read cold).
            scan_progress: () => ScanProgress;
            /// The list is on screen (the front end says so once, after its first paint): the
            /// last step of the start, logged with the time since the launch, which it answers
            /// in milliseconds.
            list_painted: () => u64;
            /// One run's figures, timeline, results, problems and strays (`mctl show`).
            run_detail: RunDetailRequest => RunDetail;
            /// Opens a result for the compare view: its figures, its stub, its full text indexed.
            open_value: ResultRef => ValueInfo;
            /// Every byte of a value opened `verified: sampled` compared with the transcript.
            verify_value: ResultRef => ValueVerdict;
            /// One page of a result's full text, with its true line numbers.
            value_lines: ValueLinesRequest => LinesPage;
            /// Lines of a result's full text as one string, for the clipboard (at most 16 MiB).
            value_text: ValueTextRequest => String;
            /// What `peek_value` returns the model for this request (`mctl peek`).
            peek_value: PeekValueRequest => PeekAnswer;
            /// Shows a result's value file in the system's file manager (the desktop app).
            reveal_value: ResultRef => ();
            /// Where a runs directory's value bytes are: per run, per tool, per age, orphans.
            storage: DirRequest => StorageStats;
            /// Plans a garbage collection (`mctl gc`); the plan is kept for `gc_apply`.
            gc_plan: GcPlanRequest => GcReport;
            /// Applies the plan last made for the directory, streaming each file's progress.
            gc_apply: DirRequest => GcReport, stream Progress;
            /// Stops a running `gc_apply` between two files.
            gc_cancel: () => ();
            /// Pins or unpins a run (`mctl pin`); answers whether anything changed.
            set_pinned: SetPinnedRequest => bool;
            /// The ids of a directory's pinned runs.
            pinned: DirRequest => Vec<String>;
            /// Streams every change in the runs directories shown, in order, from now on.
            watch_changes: () => (), stream Change;
            /// Follows a run: streams its new timeline entries after line `shown`, and its figures.
            follow_run: FollowRunRequest => (), stream RunUpdate;
            /// Ends a follow, by its token.
            unfollow_run: UnfollowRunRequest => ();
            /// The runs named, as they stand now; `run: null` for one that is gone.
            run_rows: RunRowsRequest => Vec<RunPatch>;
            /// What the model was shown of each value of a run (`mctl coverage`).
            coverage: CoverageRequest => Vec<ValueCoverage>;
            /// The threshold what-if (`mctl whatif`).
            what_if: WhatIfRequest => Vec<WhatIf>;
            /// The messages a resume of a run would replay (`mctl resume`).
            resume_preview: ResumeRequest => ResumePreview;
            /// Searches every run of the directories named (`mctl search`); a new search cancels the
            /// one before it.
            search: SearchRequest => SearchSummary, stream SearchBatch;
            /// Stops the running search.
            search_cancel: () => ();
            /// A run as one file to share, secrets redacted unless asked not to (`mctl export`).
            export_run: ExportRequest => Export;
            /// The same export's figures (its size, the secrets redacted per kind) without the document:
            /// what the Export dialog shows before anything is written.
            export_preview: ExportRequest => Export;
            /// Writes the export where the user chooses in the system's save dialog (the desktop app);
            /// the path written, or `null` when the user cancels.
            save_export: ExportRequest => Option<String>;
            /// Two runs side by side, their events aligned (`mctl diff`).
            diff_runs: DiffRunsRequest => RunDiff;
            /// Two tool results' texts as a line diff (`mctl diff --results`).
            diff_results: DiffResultsRequest => TextDiff;
        }
    };
}
pub(crate) use with_contract;

with_contract!(contract);

/// Writes the TypeScript of every type the contract names into `out`, each in its own file,
/// and `commands.ts` with the `Commands` map (name → request, response, stream).
pub fn export_typescript(out: &Path) -> std::io::Result<()> {
    let cfg = Config::new().with_large_int("number").with_out_dir(out);
    struct Export<'a> {
        cfg: &'a Config,
        /// File name (without `.ts`) of every exported type, for the imports of commands.ts.
        names: BTreeMap<String, String>,
        error: Option<ts_rs::ExportError>,
    }
    impl TypeVisitor for Export<'_> {
        fn visit<T: TS + 'static + ?Sized>(&mut self) {
            if let Some(path) = T::output_path() {
                let stem = path.with_extension("").to_string_lossy().into_owned();
                self.names.insert(T::ident(self.cfg), stem);
                if let Err(e) = T::export_all(self.cfg) {
                    self.error.get_or_insert(e);
                }
            } else {
                // `Vec<T>`, `Option<T>`: export what they hold.
                T::visit_dependencies(self);
                T::visit_generics(self);
            }
        }
    }
    let mut export = Export {
        cfg: &cfg,
        names: BTreeMap::new(),
        error: None,
    };
    visit_all(&mut export);
    if let Some(e) = export.error {
        return Err(std::io::Error::other(e.to_string()));
    }
    std::fs::write(out.join("commands.ts"), commands_ts(&cfg, &export.names))
}

fn commands_ts(cfg: &Config, names: &BTreeMap<String, String>) -> String {
    let mut text = String::from(
        "// Generated from src/wire/commands.rs: the app's commands by name. Do not edit.\n",
    );
    let signatures = signatures(cfg);
    // Import what the signatures name (an identifier of an exported type, as a whole word).
    let used = |ident: &str| {
        signatures.iter().any(|(_, types)| {
            types.iter().any(|t| {
                t.split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == ident)
            })
        })
    };
    for (ident, stem) in names {
        if used(ident) {
            text.push_str(&format!("import type {{ {ident} }} from './{stem}';\n"));
        }
    }
    text.push_str("\nexport interface Commands {\n");
    for (name, [req, resp, item]) in &signatures {
        text.push_str(&format!(
            "  {name}: {{ request: {req}; response: {resp}; stream: {item} }};\n"
        ));
    }
    text.push_str("}\n\nexport type CommandName = keyof Commands;\n");
    text
}
