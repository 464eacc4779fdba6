// The runs list kept live: which runs a burst of changes touched, and the list with their new
// rows patched in (the backend answers from its watcher, without reading transcripts again).
import type { Change } from '../gen/Change';
import type { RunKey } from '../gen/RunKey';
import type { RunList } from '../gen/RunList';
import type { RunPatch } from '../gen/RunPatch';

/** The runs a burst of changes is about, each once, in the order first touched. */
export function touchedRuns(changes: Change[]): RunKey[] {
  const seen = new Map<string, RunKey>();
  for (const c of changes) {
    if (c.kind === 'polling' || c.kind === 'scanned') continue; // about a directory, not a run
    const key = `${c.dir}\n${c.run}`;
    if (!seen.has(key)) seen.set(key, { dir: c.dir, run: c.run });
  }
  return [...seen.values()];
}

/** `list` with each patch applied: a row replaced in place, a new run added first, a run gone
 *  removed; each directory's count follows. Patches of directories not shown are ignored. */
export function applyPatches(list: RunList, patches: RunPatch[]): RunList {
  const dirs = new Map(list.dirs.map((d, i) => [d.path, i]));
  const key = (dir: number, id: string) => `${dir}\n${id}`;
  // Rows by key (a Map keeps their order): tens of thousands of rows, patched in one pass.
  const rows = new Map(list.runs.map((r) => [key(r.dir, r.run.id), r]));
  const added = new Map<string, RunList['runs'][number]>();
  for (const p of patches) {
    const dir = dirs.get(p.dir);
    if (dir === undefined) continue;
    const k = key(dir, p.id);
    if (p.run && rows.has(k)) rows.set(k, { dir, run: p.run });
    else if (p.run) added.set(k, { dir, run: p.run });
    else {
      rows.delete(k);
      added.delete(k);
    }
  }
  const runs = withChildren([...[...added.values()].reverse(), ...rows.values()]);
  const counts = list.dirs.map(() => 0);
  for (const r of runs) counts[r.dir]++;
  return { dirs: list.dirs.map((d, i) => ({ ...d, runs: counts[i] })), runs };
}

/** How deep a chain of parents is followed: a loop of parents (a damaged summary) stops here. */
const DEPTH_MAX = 64;

/** `runs` with each one's tokens and cost with every run's under it (its subagents, theirs...),
 *  as the core's listing tells them (`model::family`): a patch brings a run's own figures, and
 *  a child's patch moves its parents' totals too. A child is found by its `parentId` among the
 *  runs of its own directory. Rows whose totals hold are kept as they are. */
export function withChildren(runs: RunList['runs']): RunList['runs'] {
  const key = (dir: number, id: string) => `${dir}\n${id}`;
  const at = new Map(runs.map((r, i) => [key(r.dir, r.run.id), i]));
  const parents = runs.map((r) => (r.run.parentId === null ? undefined : at.get(key(r.dir, r.run.parentId))));
  const tokens = runs.map((r) => r.run.inputTokens + r.run.outputTokens);
  const costs = runs.map((r) => r.run.costUsd);
  runs.forEach((r, child) => {
    const own = r.run.inputTokens + r.run.outputTokens;
    let next = parents[child];
    for (let depth = 0; depth < DEPTH_MAX && next !== undefined && next !== child; depth++) {
      tokens[next] += own;
      const cost = costs[next];
      costs[next] = cost === null || r.run.costUsd === null ? null : cost + r.run.costUsd;
      next = parents[next];
    }
  });
  return runs.map((r, i) => {
    const same = r.run.tokensWithChildren === tokens[i] && r.run.costWithChildrenUsd === costs[i];
    return same ? r : { ...r, run: { ...r.run, tokensWithChildren: tokens[i], costWithChildrenUsd: costs[i] } };
  });
}

/** What the window says about directories that are polled instead of watched. */
export function pollingNotice(changes: Change[]): string | null {
  const byDir = new Map(changes.flatMap((c) => (c.kind === 'polling' ? [[c.dir, c] as const] : [])));
  const polled = [...byDir.values()];
  if (!polled.length) return null;
  const c = polled[polled.length - 1];
  const more = polled.length > 1 ? ` (and ${polled.length - 1} more)` : '';
  const every = c.intervalMs >= 1000 ? `${c.intervalMs / 1000} s` : `${c.intervalMs} ms`;
  return `${c.dir}${more} is polled every ${every} instead of watched: ${c.reason}. Changes show up a little later.`;
}
