// Filtering and sorting the runs list: pure functions over the rows the backend sent.
import type { RunRow } from '../gen/RunRow';
import type { RunStatus } from '../gen/RunStatus';
import type { SourceKind } from '../gen/SourceKind';

export type SortKey = 'activity' | 'size' | 'cost';

export interface RunsQuery {
  text: string;
  statuses: Set<RunStatus>;
  /** The stores to show runs of; empty shows all. */
  sources?: Set<SourceKind>;
  sort: SortKey;
}

/** Every word of the filter must appear in the run's id, title, model or tool names. */
export function matches(row: RunRow, words: string[]): boolean {
  if (words.length === 0) return true;
  const r = row.run;
  const hay = [r.id, r.title, r.model ?? '', r.provider ?? '', ...r.tools].join('\n').toLowerCase();
  return words.every((w) => hay.includes(w));
}

export function words(text: string): string[] {
  return text.toLowerCase().split(/\s+/).filter(Boolean);
}

const sorters: Record<SortKey, (a: RunRow, b: RunRow) => number> = {
  activity: (a, b) => (b.run.updatedMs ?? 0) - (a.run.updatedMs ?? 0),
  size: (a, b) => b.run.valueBytes + b.run.transcriptBytes - (a.run.valueBytes + a.run.transcriptBytes),
  // An unknown cost sorts after every known one.
  cost: (a, b) => (b.run.costUsd ?? -1) - (a.run.costUsd ?? -1),
};

export function filterRuns(rows: RunRow[], q: RunsQuery): RunRow[] {
  const ws = words(q.text);
  const sources = q.sources ?? new Set();
  const out = rows.filter(
    (row) =>
      (q.statuses.size === 0 || q.statuses.has(row.run.status)) &&
      (sources.size === 0 || sources.has(row.run.source)) &&
      matches(row, ws),
  );
  // Ties keep a stable, readable order: by id.
  return out.sort((a, b) => sorters[q.sort](a, b) || a.run.id.localeCompare(b.run.id));
}

export function statusCounts(rows: RunRow[]): Record<RunStatus, number> {
  const c: Record<RunStatus, number> = { running: 0, done: 0, error: 0, cancelled: 0, interrupted: 0 };
  for (const row of rows) c[row.run.status]++;
  return c;
}

/** How many runs each store holds (a store with none is absent). */
export function sourceCounts(rows: RunRow[]): Map<SourceKind, number> {
  const c = new Map<SourceKind, number>();
  for (const row of rows) c.set(row.run.source, (c.get(row.run.source) ?? 0) + 1);
  return c;
}
