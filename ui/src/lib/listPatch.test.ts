import { describe, expect, it } from 'vitest';
import type { Change } from '../gen/Change';
import type { RunList } from '../gen/RunList';
import { applyPatches, pollingNotice, touchedRuns, withChildren } from './listPatch';
import { row, run } from './testing';

const list: RunList = {
  dirs: [
    { path: '/a', error: null, runs: 2, source: 'klide' },
    { path: '/b', error: null, runs: 1, source: 'klide' },
  ],
  runs: [row({ id: 'x', events: 1 }), row({ id: 'y' }), row({ id: 'x' }, 1)],
};

describe('touchedRuns', () => {
  it('names each run once, in order, and skips directory notices', () => {
    const changes: Change[] = [
      { kind: 'appended', dir: '/a', run: 'x', lines: [{ line: 2, type: 'user_message' }], pendingBytes: 0 },
      { kind: 'polling', dir: '/a', reason: 'r', intervalMs: 500 },
      { kind: 'run-added', dir: '/b', run: 'z' },
      { kind: 'scanned', dir: '/b' },
      { kind: 'finished', dir: '/a', run: 'x', status: 'done' },
      { kind: 'value-files-removed', dir: '/a', run: 'y', values: ['c1'] },
    ];
    expect(touchedRuns(changes)).toEqual([
      { dir: '/a', run: 'x' },
      { dir: '/b', run: 'z' },
      { dir: '/a', run: 'y' },
    ]);
  });
});

describe('applyPatches', () => {
  it('replaces a row in place, adds a new run first, removes a gone run, and recounts', () => {
    const out = applyPatches(list, [
      { dir: '/a', id: 'x', run: run({ id: 'x', events: 9 }) },
      { dir: '/b', id: 'z', run: run({ id: 'z' }) },
      { dir: '/a', id: 'y', run: null },
      { dir: '/elsewhere', id: 'q', run: run({ id: 'q' }) },
    ]);
    expect(out.runs.map((r) => `${r.dir}/${r.run.id}`)).toEqual(['1/z', '0/x', '1/x']);
    expect(out.runs[1].run.events).toBe(9);
    expect(out.dirs.map((d) => d.runs)).toEqual([1, 2]);
    expect(list.runs.length).toBe(3); // the old list is left as it was
  });
  it('ignores the removal of a run it does not show', () => {
    expect(applyPatches(list, [{ dir: '/a', id: 'nope', run: null }]).runs.length).toBe(3);
  });
});

describe('pollingNotice', () => {
  it('is silent while every directory is watched', () => {
    expect(pollingNotice([{ kind: 'run-added', dir: '/a', run: 'x' }])).toBeNull();
  });
  it('says which directory is polled, how often and why', () => {
    const notice = pollingNotice([{ kind: 'polling', dir: '/mnt/share/runs', reason: 'native watching failed: No space left on device', intervalMs: 500 }]);
    expect(notice).toBe('/mnt/share/runs is polled every 500 ms instead of watched: native watching failed: No space left on device. Changes show up a little later.');
  });
});

describe('applyPatches and pollingNotice, more', () => {
  it('adds a run created and then updated in the same burst once', () => {
    const out = applyPatches(list, [
      { dir: '/a', id: 'new', run: run({ id: 'new', events: 1 }) },
      { dir: '/a', id: 'new', run: run({ id: 'new', events: 2 }) },
    ]);
    const added = out.runs.filter((r) => r.run.id === 'new');
    expect(added.map((r) => r.run.events)).toEqual([2]);
    expect(out.dirs[0].runs).toBe(3);
  });
  it('names a directory polled twice once', () => {
    const c: Change = { kind: 'polling', dir: '/a', reason: 'r', intervalMs: 500 };
    expect(pollingNotice([c, c])).toBe('/a is polled every 500 ms instead of watched: r. Changes show up a little later.');
  });
});

describe('withChildren', () => {
  // A session with a subagent, which has one of its own, in /a; a run of the same id in /b.
  const family: RunList = {
    dirs: [
      { path: '/a', error: null, runs: 3, source: 'claude' },
      { path: '/b', error: null, runs: 1, source: 'claude' },
    ],
    runs: [
      row({ id: 's', inputTokens: 100, outputTokens: 10, costUsd: 1, tokensWithChildren: 143, costWithChildrenUsd: 1.75 }),
      row({ id: 's@a', parentId: 's', inputTokens: 20, outputTokens: 2, costUsd: 0.5, tokensWithChildren: 33, costWithChildrenUsd: 0.75 }),
      row({ id: 's@b', parentId: 's@a', inputTokens: 10, outputTokens: 1, costUsd: 0.25, tokensWithChildren: 11, costWithChildrenUsd: 0.25 }),
      row({ id: 's@a', parentId: 's', inputTokens: 5, outputTokens: 0, costUsd: 0, tokensWithChildren: 5, costWithChildrenUsd: 0 }, 1),
    ],
  };

  it('keeps the totals of a patched parent, which come with its own figures alone', () => {
    // The session went on: its patch says 200 + 20 tokens, and its own figures as its totals.
    const out = applyPatches(family, [
      { dir: '/a', id: 's', run: run({ id: 's', inputTokens: 200, outputTokens: 20, costUsd: 2, tokensWithChildren: 220, costWithChildrenUsd: 2 }) },
    ]);
    const s = out.runs.find((r) => r.dir === 0 && r.run.id === 's')!;
    expect([s.run.tokensWithChildren, s.run.costWithChildrenUsd]).toEqual([253, 2.75]);
  });

  it("moves every parent's totals with a patched child's, in its own directory only", () => {
    const out = applyPatches(family, [
      { dir: '/a', id: 's@b', run: run({ id: 's@b', parentId: 's@a', inputTokens: 30, outputTokens: 3, costUsd: 0.25, tokensWithChildren: 33, costWithChildrenUsd: 0.25 }) },
    ]);
    const totals = out.runs.map((r) => [r.dir, r.run.id, r.run.tokensWithChildren]);
    expect(totals).toEqual([
      [0, 's', 165],
      [0, 's@a', 55],
      [0, 's@b', 33],
      [1, 's@a', 5],
    ]);
    // A row whose totals hold is the same row.
    expect(out.runs[3]).toBe(family.runs[3]);
  });

  it('has no cost with children when a run under it has none, and stops at a loop of parents', () => {
    const loop: RunList['runs'] = [
      row({ id: 'p', parentId: 'q', inputTokens: 1, outputTokens: 0, costUsd: 1 }),
      row({ id: 'q', parentId: 'p', inputTokens: 2, outputTokens: 0, costUsd: null }),
    ];
    const out = withChildren(loop).map((r) => [r.run.tokensWithChildren, r.run.costWithChildrenUsd]);
    expect(out).toEqual([
      [3, null],
      [3, null],
    ]);
  });
});
