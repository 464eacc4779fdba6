//! Which runs a Claude Code store holds (docs/agents.md): a `projects` directory of project
//! folders, or one project folder. In a project folder, `<session>.jsonl` is a session and
//! `<session>/` its folder: `tool-results/` holds its persisted outputs (and its subagents'),
//! `subagents/agent-<id>.jsonl` its subagents. Older builds put `agent-<id>.jsonl` beside the
//! sessions. Links are never followed. An older build's session file may hold its subagents'
//! side conversations too: each is a run under the session ([`super::threads`]).

use super::scan_cache::{Scans, SessionMeta};
use super::threads::SessionScan;
use crate::model::layout::{Inside, Layout, Nesting, RunFiles};
use crate::model::stamp::FileStamp;
use crate::model::SourceKind;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The folder of a session that holds its persisted outputs.
pub(crate) const TOOL_RESULTS: &str = "tool-results";
/// The folder of a session that holds its subagents' transcripts.
pub(crate) const SUBAGENTS: &str = "subagents";
/// How a subagent's file (and its run id) is named: `agent-<agent id>`.
const AGENT_PREFIX: &str = "agent-";
/// How a side conversation without an agent id is named: `sidechain-` and the start of its
/// first line's `uuid`.
const SIDECHAIN_PREFIX: &str = "sidechain-";

/// The first eight characters of a uuid: enough to tell a session's side conversations apart.
fn short(uuid: &str) -> &str {
    uuid.char_indices().nth(8).map_or(uuid, |(i, _)| &uuid[..i])
}

/// Reads a projects directory or a project folder; what session files tell of the runs inside
/// them is kept in `cache` between processes.
pub(crate) fn read(root: &Path, cache: Option<&Path>) -> io::Result<Layout> {
    let mut projects = Vec::new();
    for entry in fs::read_dir(root)? {
        let entry = entry?;
        let (Ok(kind), Ok(name)) = (entry.file_type(), entry.file_name().into_string()) else {
            continue;
        };
        if kind.is_dir() && !is_session_folder(&entry.path()) && !has_transcript(root, &name) {
            projects.push(entry.path());
        }
    }
    // In name order, so that which of two same-named sessions keeps the bare id never changes.
    projects.sort();
    let mut listings = vec![Listing::of(root)?];
    // A project folder that vanished or cannot be read holds nothing to show. The folders are
    // listed on every core (a stat per session file), in their order.
    let listed: Vec<Option<Listing>> = (projects.par_iter()).map(|p| Listing::of(p).ok()).collect();
    listings.extend(listed.into_iter().flatten());
    // Every session file is scanned at once, on every core. (Allocated at its size: grown a
    // file at a time, it held twice that at the peak of a cold listing's layout.)
    let mut sessions: Vec<(&Path, SessionMeta)> =
        Vec::with_capacity(listings.iter().map(|l| l.sessions.len()).sum());
    sessions.extend((listings.iter().flat_map(|l| &l.sessions)).filter_map(SessionFile::to_scan));
    let mut scans = Scans::new(root, cache);
    let scanned = scans.scan_all(&sessions);
    drop(sessions);
    // Each scan goes back to its file, in the same order.
    let mut scanned = scanned.into_iter();
    for s in listings.iter_mut().flat_map(|l| &mut l.sessions) {
        if s.to_scan().is_some() {
            s.scan = scanned.next().flatten();
        }
    }
    debug_assert!(scanned.next().is_none(), "a scan for each file scanned");
    // Kept before the runs are told apart, not beside: writing the cache file holds a line's
    // worth of every session (about 2 MiB more at the peak of a cold listing of 20,000
    // sessions, for about 3 ms less after files changed).
    scans.save((listings.iter().flat_map(|l| &l.sessions)).filter_map(|s| {
        let (path, meta) = s.to_scan()?;
        Some((path, meta.stamp(), s.scan.as_deref()?))
    }));
    let mut found = Found::default();
    for listing in listings {
        found.project(listing);
    }
    Ok(found.into_layout(root))
}

/// A session file of a project folder.
struct SessionFile {
    stem: String,
    path: PathBuf,
    /// Its stamp and whether it is live, as listed (a whole `Metadata` is four times the
    /// size, and a store of tens of thousands of sessions holds one per file while it scans).
    meta: Option<SessionMeta>,
    /// What its scan found, once the store's files are scanned.
    scan: Option<Arc<SessionScan>>,
}

impl SessionFile {
    /// The file and its stamp, when it is scanned: an agent's own file is all side lines, all
    /// its own (nothing to scan), and a file that could not be stat'd is not read.
    fn to_scan(&self) -> Option<(&Path, SessionMeta)> {
        let agents_own = self.stem.starts_with(AGENT_PREFIX);
        Some((self.path.as_path(), self.meta.filter(|_| !agents_own)?))
    }
}

/// What a project folder holds: its session files and its folders, each in name order.
struct Listing {
    dir: PathBuf,
    sessions: Vec<SessionFile>,
    folders: Vec<(String, PathBuf)>,
}

impl Listing {
    fn of(project: &Path) -> io::Result<Self> {
        let mut sessions = Vec::new();
        let mut folders = Vec::new();
        for entry in fs::read_dir(project)? {
            let entry = entry?;
            let (Ok(kind), Ok(name)) = (entry.file_type(), entry.file_name().into_string()) else {
                continue;
            };
            if kind.is_file() {
                if let Some(stem) = name.strip_suffix(".jsonl").filter(|s| !s.is_empty()) {
                    // DirEntry::metadata does not follow a link (and this is no link).
                    sessions.push(SessionFile {
                        stem: stem.to_owned(),
                        path: entry.path(),
                        meta: entry.metadata().ok().as_ref().map(SessionMeta::of),
                        scan: None,
                    });
                }
            } else if kind.is_dir() {
                folders.push((name, entry.path()));
            }
        }
        sessions.sort_by(|a, b| a.stem.cmp(&b.stem));
        folders.sort();
        Ok(Self {
            dir: project.to_path_buf(),
            sessions,
            folders,
        })
    }
}

fn has_transcript(dir: &Path, name: &str) -> bool {
    crate::model::layout::is_regular_file(&dir.join(format!("{name}.jsonl")))
}

/// A session's folder: it holds `tool-results/` or `subagents/`.
fn is_session_folder(dir: &Path) -> bool {
    [TOOL_RESULTS, SUBAGENTS]
        .iter()
        .any(|sub| fs::symlink_metadata(dir.join(sub)).is_ok())
}

/// What the runs inside one session file share: the session's own, and those of its side
/// conversations.
struct SharedFile {
    path: PathBuf,
    /// See [`RunFiles::unreplaced_len`].
    unreplaced_len: u64,
    /// The stat the file's folder's listing took (see [`RunFiles::stamp`]).
    stamp: Option<FileStamp>,
}

#[derive(Default)]
struct Found {
    runs: BTreeMap<String, RunFiles>,
    value_dirs: BTreeMap<String, PathBuf>,
    linked: Vec<String>,
    /// Sessions whose transcript is gone but whose subagents still write to their folder: no
    /// orphans.
    owned: Vec<String>,
}

impl Found {
    /// The id a run of `project` gets: its file's stem, or, when another project already has a
    /// run of that name, the stem qualified by the project folder's name.
    fn id_for(&self, stem: &str, project: &Path) -> String {
        if !self.runs.contains_key(stem) && !self.value_dirs.contains_key(stem) {
            return stem.to_owned();
        }
        let folder = project
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{stem}@{folder}")
    }

    /// The runs of one project folder.
    fn project(&mut self, listing: Listing) {
        let Listing {
            dir,
            sessions,
            folders,
        } = listing;
        let project = dir.as_path();
        let mut ids = BTreeMap::new();
        let mut scans = Vec::new();
        for SessionFile {
            stem,
            path,
            meta,
            scan,
        } in sessions
        {
            let id = self.id_for(&stem, project);
            // The stat the folder's listing took stamps the runs of the file.
            let stamp = meta.map(|m| m.stamp());
            ids.insert(stem.clone(), id.clone());
            // Only the bytes a scan read are known to rewrite none of the results.
            let unreplaced_len = (scan.as_ref())
                .filter(|s| !s.replacements)
                .map_or(0, |s| s.scanned_to);
            let nesting = Nesting {
                others: scan.as_ref().and_then(|s| s.others(stamp)),
                ..Default::default()
            };
            if let Some(scan) = scan {
                if !scan.sidechains.is_empty() || !scan.agent_calls.is_empty() {
                    let file = SharedFile {
                        path: path.clone(),
                        unreplaced_len,
                        stamp,
                    };
                    scans.push((id.clone(), file, scan));
                }
            }
            self.runs.insert(
                id,
                RunFiles {
                    transcript: Some(path),
                    unreplaced_len,
                    stamp: stamp.map(Box::new),
                    nesting: nesting.boxed(),
                    ..Default::default()
                },
            );
        }
        for (name, folder) in folders {
            if !is_session_folder(&folder) {
                continue;
            }
            let session = match ids.get(&name) {
                Some(id) => id.clone(),
                // A session folder whose transcript is gone: its values are orphans.
                None => self.id_for(&name, project),
            };
            let tool_results = folder.join(TOOL_RESULTS);
            match fs::symlink_metadata(&tool_results) {
                Ok(m) if m.is_dir() => {
                    self.value_dirs
                        .insert(session.clone(), tool_results.clone());
                }
                Ok(m) if m.file_type().is_symlink() => self.linked.push(session.clone()),
                _ => {}
            }
            let values = self.values_of(&session);
            self.subagents(&folder.join(SUBAGENTS), &session, values);
        }
        for (session, file, scan) in scans {
            self.link(&session, project, &ids, &file, &scan);
        }
    }

    /// What a session's scan tells: the call that started each of its subagents' files, an
    /// older build's agent file beside the sessions as the session's subagent, and each side
    /// conversation inside its file as a run under it.
    /// `ids` are the run ids this project's files got, by file stem.
    fn link(
        &mut self,
        session: &str,
        project: &Path,
        ids: &BTreeMap<String, String>,
        file: &SharedFile,
        scan: &SessionScan,
    ) {
        // The session's own real folder (a link, or a folder that is one, is never read).
        let values = self.values_of(session);
        // One id for every run under the session.
        let parent: Arc<str> = Arc::from(session);
        // Each call started one run: the first link that names it keeps it.
        let mut used = std::collections::HashSet::new();
        for (agent, call) in &scan.agent_calls {
            let name = format!("{AGENT_PREFIX}{agent}");
            // Under `subagents/` (qualified by its session when the name was taken), or beside
            // the sessions (qualified by its project).
            let beside = ids.get(&name).cloned();
            for id in [Some(format!("{name}@{session}")), beside, Some(name)]
                .into_iter()
                .flatten()
            {
                let Some(files) = self.runs.get_mut(&id) else {
                    continue;
                };
                match files.parent() {
                    Some(p) if p != session => continue,
                    Some(_) => {}
                    None => {
                        // An older build's agent file beside the sessions, in the same project.
                        let dir = files.transcript.as_deref().and_then(Path::parent);
                        if dir != Some(project) {
                            continue;
                        }
                        let nesting = files.nesting_mut();
                        nesting.parent = Some(Arc::clone(&parent));
                        nesting.parent_values = values.clone();
                    }
                }
                if used.insert(call.clone()) {
                    (files.nesting_mut().parent_call).get_or_insert_with(|| call.clone());
                }
                break;
            }
        }
        for side in &scan.sidechains {
            let name = match side.side.by_agent {
                true => format!("{AGENT_PREFIX}{}", side.side.key),
                false => format!("{SIDECHAIN_PREFIX}{}", short(&side.side.key)),
            };
            let of_session = |f: &RunFiles| f.parent() == Some(session);
            if side.side.by_agent
                && [format!("{name}@{session}"), name.clone()]
                    .iter()
                    .any(|id| self.runs.get(id).is_some_and(of_session))
            {
                continue; // The agent's own file is its run.
            }
            let id = match self.runs.contains_key(&name) {
                false => name,
                true => format!("{name}@{session}"),
            };
            if self.runs.contains_key(&id) {
                continue; // Named twice over: the first keeps the name.
            }
            let call = scan.call_of(side).filter(|c| used.insert(c.clone()));
            self.runs.insert(
                id,
                RunFiles {
                    unreplaced_len: file.unreplaced_len,
                    stamp: file.stamp.map(Box::new),
                    ..RunFiles::nested(
                        file.path.to_path_buf(),
                        Nesting {
                            parent: Some(Arc::clone(&parent)),
                            parent_values: values.clone(),
                            parent_call: call,
                            others: None,
                            inside: Inside {
                                side: Some(side.side.clone()),
                                revision: None,
                                start: scan.start_of(side),
                                end: scan.end_of(side, file.stamp),
                            }
                            .boxed(),
                        },
                    )
                },
            );
        }
    }

    /// The subagents of `session`: `agent-<id>.jsonl` files, each a run whose parent is the
    /// session and whose values sit in the session's `tool-results/`.
    fn subagents(&mut self, dir: &Path, session: &str, values: Option<Arc<Path>>) {
        // A link is not followed; symlink_metadata does not follow one.
        if !fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut agents: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|k| k.is_file()))
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let stem = name.strip_suffix(".jsonl")?;
                stem.starts_with(AGENT_PREFIX)
                    .then(|| (stem.to_owned(), e.path()))
            })
            .collect();
        agents.sort();
        if !agents.is_empty() {
            self.owned.push(session.to_owned());
        }
        let parent: Arc<str> = Arc::from(session);
        for (stem, path) in agents {
            let id = match self.runs.contains_key(&stem) {
                false => stem,
                true => format!("{stem}@{session}"),
            };
            self.runs.insert(
                id,
                RunFiles::nested(
                    path,
                    Nesting {
                        parent: Some(Arc::clone(&parent)),
                        parent_values: values.clone(),
                        ..Default::default()
                    },
                ),
            );
        }
    }

    /// Session `session`'s value folder, shared by the runs under it.
    fn values_of(&self, session: &str) -> Option<Arc<Path>> {
        self.value_dirs
            .get(session)
            .map(|dir| Arc::from(dir.as_path()))
    }

    fn into_layout(self, root: &Path) -> Layout {
        let run_names = (self.owned.iter())
            .filter(|name| !self.runs.contains_key(*name))
            .cloned()
            .collect();
        Layout {
            root: root.to_path_buf(),
            source: SourceKind::Claude,
            runs: self.runs,
            value_dirs: self.value_dirs,
            linked_value_dirs: self.linked.into_iter().collect(),
            run_names,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_session_and_its_side_conversations_are_stamped_by_their_folders_listing() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("-home-me-project");
        fs::create_dir(&project).unwrap();
        let session = project.join("s1.jsonl");
        let lines = [
            r#"{"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,"message":{"content":"Hi"}}"#,
            r#"{"type":"user","uuid":"x1","parentUuid":null,"isSidechain":true,"message":{"content":"Aside"}}"#,
        ];
        fs::write(&session, lines.join("\n") + "\n").unwrap();
        let listed = FileStamp::of(&session);
        let layout = read(root.path(), None).unwrap();
        let stamps: Vec<(&str, Option<FileStamp>)> = (layout.runs.iter())
            .map(|(id, f)| (id.as_str(), f.stamp.as_deref().copied()))
            .collect();
        assert_eq!(
            stamps,
            [("s1", listed), ("sidechain-x1", listed)],
            "the session and the side conversation inside its file, both by the one stat"
        );
        // Written after the listing: the runs keep the listing's stamp (which the index and the
        // watch then find moved on their next listing), and the next listing stamps it anew.
        let mut file = fs::OpenOptions::new().append(true).open(&session).unwrap();
        file.write_all(lines[0].as_bytes()).unwrap();
        file.write_all(b"\n").unwrap();
        assert_eq!(layout.runs["s1"].transcript_stamp(), listed);
        let again = read(root.path(), None).unwrap();
        let now = FileStamp::of(&session);
        assert_ne!(now, listed);
        assert_eq!(again.runs["s1"].transcript_stamp(), now);
        assert_eq!(again.runs["sidechain-x1"].transcript_stamp(), now);
    }
}
