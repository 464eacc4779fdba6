import { describe, expect, it } from 'vitest';
import type { SearchHit } from '../gen/SearchHit';
import { SearchResults, hitParts, hitPlace, hitTarget } from './searchResults';

function hit(over: Partial<SearchHit>): SearchHit {
  return {
    run: 'r1',
    kind: 'value',
    textLine: 1,
    textIndex: 0,
    text: 'a NEEDLE b',
    matchStart: 2,
    matchEnd: 8,
    textOffset: 0,
    textBytes: 10,
    lineBytes: 10,
    stray: false,
    orphan: false,
    ...over,
  };
}

describe('search results', () => {
  it('groups hits by run and call, messages apart, in the order groups first came', () => {
    const r = new SearchResults();
    r.add({ dir: '/d', hits: [hit({ toolCallId: 'c1', valueId: 'c1' }), hit({ kind: 'message', line: 3 })] });
    r.add({ dir: '/d', hits: [hit({ run: 'r2', kind: 'input', toolCallId: 'c9' }), hit({ kind: 'result', toolCallId: 'c1', textLine: 4 })] });
    r.add({ dir: '/e', hits: [hit({ toolCallId: 'c1', valueId: 'c1' })] });
    expect(r.count).toBe(5);
    expect(r.groups.map((g) => [g.dir, g.run, g.call, g.hits.length])).toEqual([
      ['/d', 'r1', 'c1', 2],
      ['/d', 'r1', null, 1],
      ['/d', 'r2', 'c9', 1],
      ['/e', 'r1', 'c1', 1],
    ]);
    const rows = r.rows();
    expect(rows.length).toBe(9);
    expect(rows[0].hit).toBeNull();
    expect(rows[1].hit?.kind).toBe('value');
    expect(rows[2].hit?.kind).toBe('result');
  });

  it('cuts the text at byte offsets of its UTF-8', () => {
    const h = hit({ text: 'é → NEEDLE ü', matchStart: 7, matchEnd: 13 }); // é is 2 bytes, → 3
    expect(hitParts(h)).toEqual({ before: 'é → ', match: 'NEEDLE', after: ' ü' });
  });

  it('opens a value or result at its line, a message in its run', () => {
    expect(hitTarget('/d', hit({ toolCallId: 'c1', valueId: 'v1', textLine: 40 }))).toEqual({ kind: 'value', ref: { dir: '/d', run: 'r1', call: 'c1' }, line: 40 });
    expect(hitTarget('/d', hit({ valueId: 'stray', stray: true, textLine: 2 }))).toEqual({ kind: 'value', ref: { dir: '/d', run: 'r1', call: 'stray' }, line: 2 });
    expect(hitTarget('/d', hit({ kind: 'message', line: 7 }))).toEqual({ kind: 'run', dir: '/d', run: 'r1', line: 7 });
    // A damaged result's compare view shows its value file: the hit opens the run instead.
    expect(hitTarget('/d', hit({ kind: 'result', line: 5, toolCallId: 'c', state: 'damaged' }))).toEqual({ kind: 'run', dir: '/d', run: 'r1', line: 5 });
    expect(hitTarget('/d', hit({ kind: 'result', line: 5, toolCallId: 'c', state: 'inline', textLine: 2 }))).toEqual({ kind: 'value', ref: { dir: '/d', run: 'r1', call: 'c' }, line: 2 });
    expect(hitTarget('/d', hit({ valueId: 'v', stray: true, orphan: true }))).toEqual({ kind: 'none' });
    expect(hitPlace(hit({ kind: 'result', line: 9, textLine: 3 }))).toBe('L9:3');
    expect(hitPlace(hit({ valueLine: 12, textLine: 12 }))).toBe('12');
  });
});
