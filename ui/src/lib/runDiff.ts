// The Diff view's logic, apart from its markup: each side's figures with the difference,
// which rows show, the runs offered as the other side, and a text diff flattened to lines.
import type { DiffRow } from '../gen/DiffRow';
import type { DiffSide } from '../gen/DiffSide';
import type { RunDiff } from '../gen/RunDiff';
import type { RunRow } from '../gen/RunRow';
import type { TextDiff } from '../gen/TextDiff';
import type { DiffLine } from '../gen/DiffLine';
import { bytes, cost, count, duration } from './format';

/** One figure of both runs: as shown, and which side has less of it (less is the better side
 *  for every figure here: tokens, cost, time, calls, failures, context). */
export interface Figure {
  label: string;
  a: string;
  b: string;
  delta: string;
  less: 'a' | 'b' | null;
}

const FIGURES: [string, (s: DiffSide) => number | null, (n: number) => string][] = [
  ['Input tokens', (s) => s.inputTokens, count],
  ['Output tokens', (s) => s.outputTokens, count],
  ['Cost', (s) => s.costUsd, cost],
  ['Duration', (s) => s.durationMs, duration],
  ['Tool calls', (s) => s.toolCalls, String],
  ['Failed results', (s) => s.failedResults, String],
  ['Retained', (s) => s.retainedBytes, bytes],
  ['Context on resume', (s) => s.contextBytes, bytes],
];

export function figures(d: RunDiff): Figure[] {
  return FIGURES.map(([label, get, show]) => {
    const [a, b] = [get(d.a), get(d.b)];
    if (a == null || b == null) return { label, a: a == null ? '–' : show(a), b: b == null ? '–' : show(b), delta: '', less: null };
    const diff = b - a;
    let delta = '';
    if (diff !== 0) {
      const sign = diff > 0 ? '+' : '−';
      delta = `${sign}${show(Math.abs(diff))}`;
      if (a > 0) delta += ` (${sign}${Math.round((Math.abs(diff) / a) * 100)}%)`;
    }
    return { label, a: show(a), b: show(b), delta, less: diff === 0 ? null : diff > 0 ? 'a' : 'b' };
  });
}

/** The rows shown: every row, or only those that are not the same on both sides. Returns their
 *  indices in `rows`. */
export function shownRows(rows: DiffRow[], onlyDifferences: boolean): number[] {
  const out: number[] = [];
  rows.forEach((r, i) => {
    if (!onlyDifferences || r.status !== 'same') out.push(i);
  });
  return out;
}

/** The mark of a row's status, as `mctl diff` prints it. */
export function mark(r: DiffRow): string {
  return { same: '=', differs: '≠', 'only-a': '◀', 'only-b': '▶' }[r.status];
}

/** A row on both sides with a result on each: it opens as a text diff. */
export function comparable(r: DiffRow): boolean {
  return r.kind === 'tool' && !!r.a?.result && !!r.b?.result && !!r.a.toolCallId && !!r.b.toolCallId;
}

export interface Candidate {
  dir: string;
  run: string;
  title: string;
  model: string | null;
  updatedMs: number | null;
  /** Same title as run A: most likely the same task. */
  sameTask: boolean;
}

/** The runs offered as the other side of a diff with run `a`: every other run, those with the
 *  same title first (the same task, given again), then the most recent; `filter` narrows them
 *  by title, id or model. */
export function candidates(rows: RunRow[], dirs: string[], a: { dir: string; run: string }, filter = ''): Candidate[] {
  const title = rows.find((r) => dirs[r.dir] === a.dir && r.run.id === a.run)?.run.title ?? '';
  const f = filter.trim().toLowerCase();
  return rows
    .filter((r) => !(dirs[r.dir] === a.dir && r.run.id === a.run))
    .map((r) => ({
      dir: dirs[r.dir] ?? '',
      run: r.run.id,
      title: r.run.title,
      model: r.run.model,
      updatedMs: r.run.updatedMs,
      sameTask: !!title && r.run.title === title,
    }))
    .filter((c) => !f || c.title.toLowerCase().includes(f) || c.run.toLowerCase().includes(f) || (c.model ?? '').toLowerCase().includes(f))
    .sort((x, y) => Number(y.sameTask) - Number(x.sameTask) || (y.updatedMs ?? 0) - (x.updatedMs ?? 0));
}

/** A line of a text diff as the view lists it: a hunk's header, or one of its lines. */
export type TextRow = { kind: 'hunk'; header: string } | { kind: 'line'; line: DiffLine };

export function textRows(d: TextDiff): TextRow[] {
  const out: TextRow[] = [];
  for (const h of d.hunks) {
    out.push({ kind: 'hunk', header: `@@ −${h.aStart},${h.aLen} +${h.bStart},${h.bLen} @@` });
    for (const line of h.lines) out.push({ kind: 'line', line });
  }
  return out;
}
