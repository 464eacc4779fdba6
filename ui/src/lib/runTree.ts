// Subagent runs nested under the run that started them, for the runs list: pure functions over
// the rows the backend sent. A run's parent is its summary's `parentId`, else the run its id
// names as `sub_<parent run id>_<tool call id>` (spec A.2), in the same runs directory.
import type { RunRow } from '../gen/RunRow';

/** A row as the list shows it: how deep it is nested, how many runs are under it, and whether
 *  those are shown. */
export interface TreeRow {
  row: RunRow;
  depth: number;
  descendants: number;
  expanded: boolean;
}

/** The key the list knows a run by: its directory's index and its id. */
export const rowKey = (row: RunRow) => `${row.dir}/${row.run.id}`;

/** The rows by key, and each directory's run ids: what finding a parent needs. */
function index(rows: RunRow[]): { byKey: Map<string, RunRow>; idsByDir: Map<number, Set<string>> } {
  const byKey = new Map<string, RunRow>();
  const idsByDir = new Map<number, Set<string>>();
  for (const r of rows) {
    byKey.set(rowKey(r), r);
    let ids = idsByDir.get(r.dir);
    if (!ids) idsByDir.set(r.dir, (ids = new Set()));
    ids.add(r.run.id);
  }
  return { byKey, idsByDir };
}

/** The key of the parent of `row` among `byKey`, if it has one there. With no `parentId`, the
 *  longest run id P of the same directory such that the id is `sub_P_<call>` (ids may hold
 *  underscores, so the longest one that fits wins). */
export function parentKey(row: RunRow, byKey: Map<string, RunRow>, idsByDir: Map<number, Set<string>>): string | null {
  const id = row.run.id;
  const named = row.run.parentId;
  if (named != null) {
    const k = `${row.dir}/${named}`;
    return named !== id && byKey.has(k) ? k : null;
  }
  if (!id.startsWith('sub_')) return null;
  // `sub_P_<call>`: try each `_` after `sub_` as the end of P, the longest P first.
  const ids = idsByDir.get(row.dir);
  for (let end = id.lastIndexOf('_'); end > 4; end = id.lastIndexOf('_', end - 1)) {
    const p = id.slice(4, end);
    if (p !== id && ids?.has(p)) return `${row.dir}/${p}`;
  }
  return null;
}

/**
 * The list's rows: `rows` (filtered and sorted) as a tree. A run whose parent is among `rows`
 * sits under it, in `rows`' order; the others are roots, so a filter that matches a subagent
 * and not its parent still shows it. Children show only under an expanded run (`expanded`
 * holds keys); every run's `descendants` counts the runs under it. A parent chain that loops
 * is cut where the loop closes.
 */
export function runTree(rows: RunRow[], expanded: ReadonlySet<string>): TreeRow[] {
  const { byKey, idsByDir } = index(rows);
  const parentOf = new Map<string, string>();
  for (const r of rows) {
    const p = parentKey(r, byKey, idsByDir);
    if (p != null) parentOf.set(rowKey(r), p);
  }
  // Cut loops where they close: the link back to a run already on the way up goes, so the
  // runs leading into the loop keep their parents.
  for (const k of [...parentOf.keys()]) {
    const seen = new Set([k]);
    for (let at = k, a = parentOf.get(k); a != null; at = a, a = parentOf.get(a)) {
      if (seen.has(a)) {
        parentOf.delete(at);
        break;
      }
      seen.add(a);
    }
  }
  const children = new Map<string, RunRow[]>();
  const roots: RunRow[] = [];
  for (const r of rows) {
    const p = parentOf.get(rowKey(r));
    if (p == null) roots.push(r);
    else {
      let list = children.get(p);
      if (!list) children.set(p, (list = []));
      list.push(r);
    }
  }
  const count = (k: string): number => (children.get(k) ?? []).reduce((n, c) => n + 1 + count(rowKey(c)), 0);
  const out: TreeRow[] = [];
  const walk = (r: RunRow, depth: number) => {
    const k = rowKey(r);
    const open = expanded.has(k);
    out.push({ row: r, depth, descendants: count(k), expanded: open });
    if (open) for (const c of children.get(k) ?? []) walk(c, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  return out;
}

/** The keys of every ancestor of `key` among `rows`: expanded, they show it. */
export function ancestors(rows: RunRow[], key: string): string[] {
  const { byKey, idsByDir } = index(rows);
  const out: string[] = [];
  let row = byKey.get(key);
  while (row) {
    const p = parentKey(row, byKey, idsByDir);
    if (p == null || out.includes(p) || p === key) break;
    out.push(p);
    row = byKey.get(p);
  }
  return out;
}

/** The runs directly under `key` among `rows`, in `rows`' order. */
export function childrenOf(rows: RunRow[], key: string): RunRow[] {
  const { byKey, idsByDir } = index(rows);
  return rows.filter((r) => rowKey(r) !== key && parentKey(r, byKey, idsByDir) === key);
}

/** The tool call of `parent` that started subagent run `child`: the one its store names
 *  (`parentCall`, Claude Code's Task calls), else the one its id says (`sub_<parent>_<call>`). */
export function startingCall(parent: string, child: { id: string; parentCall?: string | null }): string | null {
  if (child.parentCall) return child.parentCall;
  const prefix = `sub_${parent}_`;
  return child.id.startsWith(prefix) && child.id.length > prefix.length ? child.id.slice(prefix.length) : null;
}
