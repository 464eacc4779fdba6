// Paging a big text from the backend: the full view asks only for the pages that cover what is
// on screen (plus a margin), and keeps a bounded number of them.
import type { PageLine } from '../gen/PageLine';

export const PAGE = 500;

/** Page numbers (0-based) covering lines `first..=last` (0-based indexes), with `margin` pages. */
export function pagesFor(first: number, last: number, total: number, margin = 1): number[] {
  if (total <= 0 || last < first) return [];
  const lastPage = Math.floor((total - 1) / PAGE);
  const a = Math.max(0, Math.floor(first / PAGE) - margin);
  const b = Math.min(lastPage, Math.floor(Math.min(last, total - 1) / PAGE) + margin);
  const out = [];
  for (let p = a; p <= b; p++) out.push(p);
  return out;
}

/** A bounded cache of pages: the least recently used page goes first. */
export class PageCache {
  private pages = new Map<number, PageLine[]>();
  constructor(private capacity = 40) {}

  get(page: number): PageLine[] | undefined {
    const p = this.pages.get(page);
    if (p) {
      this.pages.delete(page);
      this.pages.set(page, p);
    }
    return p;
  }

  set(page: number, lines: PageLine[]) {
    this.pages.delete(page);
    this.pages.set(page, lines);
    while (this.pages.size > this.capacity) {
      const oldest = this.pages.keys().next().value as number;
      this.pages.delete(oldest);
    }
  }

  /** Line at 0-based `index`, if its page is loaded. */
  line(index: number): PageLine | undefined {
    return this.pages.get(Math.floor(index / PAGE))?.[index % PAGE];
  }

  get size() {
    return this.pages.size;
  }
}
