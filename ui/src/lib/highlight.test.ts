import { describe, expect, it } from 'vitest';
import { Highlights, parseRange } from './highlight';

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
