import { describe, expect, it } from 'vitest';
import { MAX_HEIGHT, scrollTopFor, windowFor } from './scaledWindow';

describe('windowFor', () => {
  it('is one pixel row per line while the content fits', () => {
    expect(windowFor(0, 400, 1000, 20)).toEqual({ height: 20_000, first: 0, count: 21, top: 0 });
    expect(windowFor(2010, 400, 1000, 20)).toEqual({ height: 20_000, first: 100, count: 21, top: 2000 });
    expect(windowFor(19_990, 400, 1000, 20).first).toBe(999);
    expect(windowFor(0, 400, 5, 20).count).toBe(5);
  });
  it('maps the scrollbar onto line numbers for millions of lines', () => {
    const total = 3_000_000;
    const top = windowFor(0, 400, total, 20);
    expect(top.height).toBe(MAX_HEIGHT);
    expect(top.first).toBe(0);
    const bottom = windowFor(MAX_HEIGHT - 400, 400, total, 20);
    expect(bottom.first + bottom.count).toBe(total);
    const middle = windowFor((MAX_HEIGHT - 400) / 2, 400, total, 20);
    expect(Math.abs(middle.first - total / 2)).toBeLessThan(20);
  });
  it('scrolls to a line and shows it first', () => {
    for (const total of [1000, 3_000_000]) {
      for (const line of [0, 17, Math.floor(total / 3), total - 30]) {
        const w = windowFor(scrollTopFor(line, 400, total, 20), 400, total, 20);
        expect(Math.abs(w.first - line)).toBeLessThanOrEqual(1);
      }
    }
  });
});
