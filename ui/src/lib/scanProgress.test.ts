import { describe, expect, it } from 'vitest';
import { scanLine } from './scanProgress';

const at = (runs: number, runsDone: number, bytes: number, bytesDone: number) => ({ runs, runsDone, bytes, bytesDone });

describe('scanLine', () => {
  it('says what this list has read, not what earlier lists of the process read', () => {
    const before = at(100, 100, 5_000_000, 5_000_000);
    expect(scanLine(before, at(5_100, 1_334, 1_352_000_000, 327_000_000))).toBe('Reading 1,234 of 5,000 runs · 307 MiB of 1.3 GiB');
  });

  it('says nothing while nothing is to read (a warm list)', () => {
    const before = at(12, 12, 900, 900);
    expect(scanLine(before, before)).toBeNull();
  });

  it('never says more read than there is', () => {
    expect(scanLine(at(0, 0, 0, 0), at(3, 5, 10, 20))).toBe('Reading 3 of 3 runs · 10 B of 10 B');
  });
});
