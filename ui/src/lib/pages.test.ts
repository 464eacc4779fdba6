import { describe, expect, it } from 'vitest';
import { PAGE, PageCache, pagesFor } from './pages';

describe('pagesFor', () => {
  it('covers the visible lines with a margin, inside the text', () => {
    expect(pagesFor(0, 40, 100_000)).toEqual([0, 1]);
    expect(pagesFor(PAGE * 10 + 3, PAGE * 10 + 60, 100_000)).toEqual([9, 10, 11]);
    expect(pagesFor(99_990, 99_999, 100_000)).toEqual([198, 199]);
    expect(pagesFor(0, 10, 0)).toEqual([]);
  });
  it('asks for few pages even on a 200 MB text', () => {
    expect(pagesFor(1_000_000, 1_000_050, 3_000_000).length).toBeLessThanOrEqual(3);
  });
});

describe('PageCache', () => {
  const page = (p: number) => Array.from({ length: PAGE }, (_, i) => ({ n: p * PAGE + i + 1, text: `l${p * PAGE + i + 1}`, bytes: 2, cut: false }));
  it('finds a line by index once its page is loaded', () => {
    const c = new PageCache(2);
    c.set(3, page(3));
    expect(c.line(3 * PAGE + 7)?.n).toBe(3 * PAGE + 8);
    expect(c.line(0)).toBeUndefined();
  });
  it('drops the least recently used page', () => {
    const c = new PageCache(2);
    c.set(0, page(0));
    c.set(1, page(1));
    c.get(0);
    c.set(2, page(2));
    expect(c.size).toBe(2);
    expect(c.get(1)).toBeUndefined();
    expect(c.get(0)).toBeDefined();
  });
});
