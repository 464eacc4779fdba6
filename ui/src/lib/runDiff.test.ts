import { describe, expect, it } from 'vitest';
import type { DiffSide } from '../gen/DiffSide';
import type { DiffRow } from '../gen/DiffRow';
import type { RunDiff } from '../gen/RunDiff';
import type { TextDiff } from '../gen/TextDiff';
import { candidates, comparable, figures, mark, shownRows, textRows } from './runDiff';
import { row } from './testing';

function side(over: Partial<DiffSide> = {}): DiffSide {
  return {
    run: 'a', title: 't', status: 'done', provider: null, model: null, inputTokens: 1000, outputTokens: 100, costUsd: 0.04, costEstimated: false,
    durationMs: 60_000, userMessages: 1, toolCalls: 6, failedResults: 1, retained: 1, retainedBytes: 2048, contextBytes: 4096, ...over,
  };
}

const diff = (a: DiffSide, b: DiffSide, rows: DiffRow[] = []): RunDiff => ({ a, b, rows, counts: { same: 0, differs: 0, onlyA: 0, onlyB: 0, resultsDiffer: 0 } });

const tool = (status: DiffRow['status'], withResults = true): DiffRow => {
  const item = (id: string) => ({ line: 1, toolCallId: id, tool: 'bash', result: withResults ? { ok: true, bytes: 1, lines: 1, state: 'inline' as const, valueId: id } : undefined });
  return { kind: 'tool', status, differs: [], a: status === 'only-b' ? null : item('x'), b: status === 'only-a' ? null : item('y') };
};

describe('figures', () => {
  it('shows both sides, the difference from A and its share, and which side has less', () => {
    const f = figures(diff(side(), side({ costUsd: 0.1, inputTokens: 1000, durationMs: 30_000 })));
    const cost = f.find((x) => x.label === 'Cost')!;
    expect(cost).toEqual({ label: 'Cost', a: '$0.04', b: '$0.10', delta: '+$0.06 (+150%)', less: 'a' });
    const time = f.find((x) => x.label === 'Duration')!;
    expect([time.delta, time.less]).toEqual(['−30s (−50%)', 'b']);
    const tokens = f.find((x) => x.label === 'Input tokens')!;
    expect([tokens.delta, tokens.less]).toEqual(['', null]);
  });

  it('says nothing of a difference when a side has no figure', () => {
    const time = figures(diff(side({ durationMs: null }), side())).find((x) => x.label === 'Duration')!;
    expect(time).toEqual({ label: 'Duration', a: '–', b: '1m 00s', delta: '', less: null });
  });

  it('gives no share of a difference from nothing', () => {
    const failed = figures(diff(side({ failedResults: 0 }), side({ failedResults: 2 }))).find((x) => x.label === 'Failed results')!;
    expect(failed.delta).toBe('+2');
  });
});

describe('rows', () => {
  const rows = [tool('same'), tool('differs'), tool('only-a'), tool('only-b')];
  it('shows every row, or only those that differ', () => {
    expect(shownRows(rows, false)).toEqual([0, 1, 2, 3]);
    expect(shownRows(rows, true)).toEqual([1, 2, 3]);
  });
  it('marks each status and opens a text diff only for a call with a result on both sides', () => {
    expect(rows.map(mark)).toEqual(['=', '≠', '◀', '▶']);
    expect(rows.map(comparable)).toEqual([true, true, false, false]);
    expect(comparable(tool('differs', false))).toBe(false);
  });
});

describe('candidates', () => {
  const dirs = ['/runs', '/other'];
  const list = [
    row({ id: 'r1', title: 'Fix the build', model: 'gpt', updatedMs: 10 }),
    row({ id: 'r2', title: 'Something else', model: 'claude', updatedMs: 30 }),
    row({ id: 'r3', title: 'Fix the build', model: 'claude', updatedMs: 20 }),
    row({ id: 'r4', title: 'Fix the build', model: 'gemini', updatedMs: 5 }, 1),
  ];
  it('offers the same task first, then the most recent, never run A itself', () => {
    expect(candidates(list, dirs, { dir: '/runs', run: 'r1' }).map((c) => [c.run, c.sameTask])).toEqual([
      ['r3', true],
      ['r4', true],
      ['r2', false],
    ]);
    expect(candidates(list, dirs, { dir: '/runs', run: 'r1' })[1].dir).toBe('/other');
  });
  it('narrows by title, id or model', () => {
    expect(candidates(list, dirs, { dir: '/runs', run: 'r1' }, 'GEMINI').map((c) => c.run)).toEqual(['r4']);
    expect(candidates(list, dirs, { dir: '/runs', run: 'r1' }, 'else').map((c) => c.run)).toEqual(['r2']);
  });
});

describe('textRows', () => {
  it('lists each hunk header, then its lines', () => {
    const line = (kind: 'context' | 'added' | 'removed', text: string) => ({ kind, aLine: 1, bLine: 1, text });
    const t: TextDiff = {
      a: { run: 'a', toolCallId: 'x', tool: 'bash', bytes: 1, lines: 1 },
      b: { run: 'b', toolCallId: 'y', tool: 'bash', bytes: 1, lines: 1 },
      identical: false, removed: 1, added: 1, truncated: false,
      hunks: [{ aStart: 7, aLen: 2, bStart: 7, bLen: 2, lines: [line('context', 'x'), line('removed', 'y'), line('added', 'z')] }],
    };
    expect(textRows(t).map((r) => (r.kind === 'hunk' ? r.header : r.line.text))).toEqual(['@@ −7,2 +7,2 @@', 'x', 'y', 'z']);
  });
});
