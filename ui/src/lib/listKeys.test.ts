import { describe, expect, it } from 'vitest';
import { listKey } from './listKeys';

describe('listKey', () => {
  it('moves with arrows and j/k, within the list', () => {
    expect(listKey('j', 0, 3)).toEqual({ kind: 'move', index: 1 });
    expect(listKey('ArrowDown', 2, 3)).toEqual({ kind: 'move', index: 2 });
    expect(listKey('k', 0, 3)).toEqual({ kind: 'move', index: 0 });
    expect(listKey('ArrowUp', -1, 3)).toEqual({ kind: 'move', index: 0 });
    expect(listKey('End', 0, 3)).toEqual({ kind: 'move', index: 2 });
  });
  it('opens with Enter and focuses the filter with /', () => {
    expect(listKey('Enter', 1, 3)).toEqual({ kind: 'open', index: 1 });
    expect(listKey('Enter', -1, 3)).toBeNull();
    expect(listKey('/', 0, 0)).toEqual({ kind: 'filter' });
    expect(listKey('x', 0, 3)).toBeNull();
  });
});
