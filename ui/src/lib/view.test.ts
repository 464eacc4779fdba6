import { describe, expect, it } from 'vitest';
import { afterDirsChanged, afterReload, back, backLabel, RUN, type View } from './view';

const ref = { dir: '/runs', run: 'r1', call: 'c1' };

describe('one view at a time', () => {
  it('returns from a value to where it was opened', () => {
    expect(back({ kind: 'value', ref, line: 3, from: 'search' })).toEqual({ kind: 'search' });
    expect(back({ kind: 'value', ref, line: null, from: 'run' })).toEqual(RUN);
  });

  it('says on the Back button where it returns', () => {
    expect(backLabel({ kind: 'value', ref, line: 3, from: 'search' })).toBe('Search results');
    expect(backLabel({ kind: 'value', ref, line: null, from: 'run' })).toBe('Run');
    expect(backLabel({ kind: 'diff', a: { dir: '/runs', run: 'r1' }, b: null })).toBe('Run');
  });

  it('returns to the run from the diff, settings and search, and nowhere from the rest', () => {
    const diff: View = { kind: 'diff', a: { dir: '/runs', run: 'r1' }, b: null };
    for (const v of [diff, { kind: 'settings' }, { kind: 'search' }] as View[]) expect(back(v)).toEqual(RUN);
    for (const v of [{ kind: 'storage' }, { kind: 'whatIf' }, RUN] as View[]) expect(back(v)).toBe(v);
  });

  it('keeps a value, the diff and settings open when the run is read again', () => {
    const value: View = { kind: 'value', ref, line: null, from: 'run' };
    expect(afterReload(value)).toBe(value);
    expect(afterReload({ kind: 'storage' })).toEqual(RUN);
    expect(afterReload({ kind: 'search' })).toEqual(RUN);
  });

  it('closes a value when the directories change', () => {
    expect(afterDirsChanged({ kind: 'value', ref, line: null, from: 'search' })).toEqual(RUN);
    expect(afterDirsChanged({ kind: 'storage' })).toEqual({ kind: 'storage' });
  });
});
