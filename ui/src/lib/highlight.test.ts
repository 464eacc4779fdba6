import { describe, expect, it } from 'vitest';
import type { ValueCoverage } from '../gen/ValueCoverage';
import { Highlights, PEEK_SHADES, parseRange } from './highlight';

describe('Highlights', () => {
  const h = new Highlights({ text: '', head: [1, 29], tail: [15289, 15311] }, [10705, 29]);
  it('marks the lines the stub previews come from', () => {
    expect(h.marks(1)).toEqual(['head']);
    expect(h.marks(30)).toEqual([]);
    expect(h.marks(15311)).toEqual(['tail']);
  });
  it('marks peeked lines, also inside a preview', () => {
    expect(h.marks(10705)).toEqual(['peek']);
    expect(h.marks(29)).toEqual(['head', 'peek']);
    expect(h.first('peek')).toBe(29);
    expect(h.first('tail')).toBe(15289);
  });
  it('works without a stub (an inline result)', () => {
    const none = new Highlights(null, []);
    expect(none.marks(1)).toEqual([]);
    expect(none.first('head')).toBeNull();
  });
});

describe('the coverage gutter', () => {
  const coverage: ValueCoverage = {
    toolCallId: 'c', valueId: 'c', tool: 'bash', state: 'retained', totalLines: 3000,
    stubLines: [[1, 60], [2950, 3000]],
    peeks: [
      { toolCallId: 'p1', line: 9, request: { start: 100, end: 199 }, lines: [[100, 199]], bytes: 900, ok: true },
      { toolCallId: 'p2', line: 11, request: { start: 150, end: 160 }, lines: [[150, 160]], bytes: 90, ok: true },
      { toolCallId: 'p3', line: 13, request: { query: 'x' }, lines: [[400, 400], [2000, 2000]], bytes: 40, ok: true },
      { toolCallId: 'p4', line: 15, request: { start: 0 }, lines: [], bytes: 30, ok: false },
      { toolCallId: 'p5', line: 17, request: { start: 700, end: 701 }, lines: [[700, 701]], bytes: 30, ok: true },
    ],
    seenLines: 0, coverage: 0, rereadLines: 0, peekBytes: 0, neverPeeked: false,
    missedErrors: { count: 1, lines: [1500] },
  };
  const h = new Highlights(null, [], coverage, 2);
  it('marks each line by the first peek that showed it, then the stub', () => {
    expect(h.gutter(150)).toBe('seen-0');
    expect(h.gutter(2000)).toBe('seen-2');
    expect(h.gutter(10)).toBe('seen-stub');
    expect(h.gutter(3000)).toBe('seen-stub');
    expect(h.gutter(300)).toBe('');
  });
  it('cycles the shades and marks the errors never shown', () => {
    expect(h.gutter(700)).toBe(`seen-${4 % PEEK_SHADES}`);
    expect(h.gutter(1500)).toBe('missed');
  });
  it('highlights the lines of the chosen peek', () => {
    expect(h.marks(2000)).toEqual(['chosen']);
    expect(h.marks(150)).toEqual([]);
  });
});

describe('parseRange', () => {
  it('reads A, A- and A-B', () => {
    expect(parseRange('120')).toEqual({ start: 120, end: null });
    expect(parseRange('120-')).toEqual({ start: 120, end: null });
    expect(parseRange(' 120 - 180 ')).toEqual({ start: 120, end: 180 });
  });
  it('refuses what a peek would refuse', () => {
    expect(parseRange('0-3')).toBeNull();
    expect(parseRange('9-3')).toBeNull();
    expect(parseRange('abc')).toBeNull();
  });
});
