// Numbers for people: sizes, counts, ages, durations, money.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function bytes(n: number): string {
  if (!Number.isFinite(n) || n < 1024) return `${Math.max(0, Math.round(n || 0))} B`;
  let v = n;
  let unit = 0;
  while (v >= 1024 && unit < UNITS.length - 1) {
    v /= 1024;
    unit++;
  }
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${UNITS[unit]}`;
}

export function count(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** "3m", "5h", "2d" ago. */
export function age(nowMs: number, thenMs: number | null): string {
  if (thenMs == null) return '–';
  return short(Math.max(0, nowMs - thenMs));
}

/** A duration: "850 ms", "12s", "4m 05s", "3h 20m", "2d 4h"; "–" when unknown. The same rule as
 *  mctl's (`duration_text`), checked on the same cases (tests/fixtures/format/cases.json). */
export function duration(ms: number | null): string {
  if (ms == null || !Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** How long a run has taken: until now while it runs, else from its first event to its last.
 *  The list's rows and the run's header both say this. */
export function runSpan(run: { status: string; startedMs: number | null; updatedMs: number | null }, nowMs: number): number | null {
  if (run.startedMs == null) return null;
  const end = run.status === 'running' ? Math.max(nowMs, run.updatedMs ?? nowMs) : run.updatedMs;
  return end == null ? null : Math.max(0, end - run.startedMs);
}

function short(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** A cost in dollars: "$1.23"; "$0.0064" below a cent, so that a cheap run does not read as
 *  free; "<$0.0001" below that; "≈" before an estimate from the price table; "—" when unknown (a
 *  model with no price): never "$0.00" for what nobody knows. The same rule as mctl's
 *  (`cost_text`), checked on the same cases (tests/fixtures/format/cases.json). */
export function cost(usd: number | null, estimated = false): string {
  if (usd == null || !Number.isFinite(usd)) return '—';
  const mark = estimated ? '≈' : '';
  const v = Math.max(0, usd);
  if (v > 0 && v < 0.0001) return `${mark}<$0.0001`;
  // Rounded to whole cents (or hundredths of a cent) half up before it is written, as mctl does.
  const places = v > 0 && v < 0.01 ? 4 : 2;
  const scale = 10 ** places;
  return `${mark}$${(Math.round(v * scale) / scale).toFixed(places)}`;
}

/** An assistant message's usage line: "1,204 in · 70 out · $0.0065 · model 1s", each part
 *  only when the message records it. */
export function usageLine(u: { promptTokens?: number | null; completionTokens?: number | null; costUsd?: number | null; costEstimated?: boolean }, modelMs?: number | null): string {
  const parts = [`${(u.promptTokens ?? 0).toLocaleString('en-US')} in`, `${(u.completionTokens ?? 0).toLocaleString('en-US')} out`];
  if (u.costUsd != null) parts.push(cost(u.costUsd, u.costEstimated ?? false));
  if (modelMs != null) parts.push(`model ${duration(modelMs)}`);
  return parts.join(' · ');
}

/** Where a run's tokens went, for a tooltip: the cache's part where the store says it. */
export function tokenParts(r: { inputTokens: number; outputTokens: number; uncachedInputTokens: number | null; cacheWriteTokens: number | null; cacheReadTokens: number | null; reasoningTokens: number | null; costEstimated: boolean; costUsd: number | null }): string {
  const parts = [`${r.inputTokens.toLocaleString('en-US')} input`];
  if (r.uncachedInputTokens != null) parts.push(`${r.uncachedInputTokens.toLocaleString('en-US')} fresh, ${(r.cacheWriteTokens ?? 0).toLocaleString('en-US')} cache write, ${(r.cacheReadTokens ?? 0).toLocaleString('en-US')} cache read`);
  parts.push(`${r.outputTokens.toLocaleString('en-US')} output${r.reasoningTokens != null ? ` (${r.reasoningTokens.toLocaleString('en-US')} reasoning)` : ''}`);
  if (r.costUsd == null) parts.push('cost unknown: a model with no price in the price table');
  else if (r.costEstimated) parts.push('cost estimated from the price table');
  return parts.join(' · ');
}

/** About how many tokens a text of `n` bytes takes (the usual 4 bytes a token). */
export function tokensOf(n: number): number {
  return Math.round(n / 4);
}

export function time(ms: number | null | undefined): string {
  if (ms == null) return '';
  const d = new Date(ms);
  return d.toISOString().replace('T', ' ').slice(0, 19) + 'Z';
}

/** "1 line", "2 lines", "1,500 lines": a count with its noun in the right form (`many` for
 *  nouns whose plural is not `one` + "s"); "lines unknown" when nobody knows (a lost text). */
export function plural(n: number | null, one: string, many = `${one}s`): string {
  if (n == null) return `${many} unknown`;
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** A ratio as a percentage people read: "3.1%", "<0.1%" for a sliver, "100%". */
export function percent(ratio: number | null): string {
  if (ratio == null) return '?';
  if (!Number.isFinite(ratio) || ratio <= 0) return '0%';
  if (ratio >= 1) return '100%';
  const p = ratio * 100;
  if (p < 0.1) return '<0.1%';
  if (p < 10) return `${p.toFixed(1)}%`;
  // Rounded down: a value with lines unseen never reads 100%.
  return p >= 99 ? '>99%' : `${Math.floor(p)}%`;
}

/** [`plural`] with the count shortened as `count` does: "1 line", "1.9k lines". */
export function counted(n: number | null, one: string, many = `${one}s`): string {
  if (n == null) return `${many} unknown`;
  return `${count(n)} ${n === 1 ? one : many}`;
}
