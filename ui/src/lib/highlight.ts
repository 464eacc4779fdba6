// Which lines of a full text to highlight: where the stub's head and tail previews come from,
// and which lines the last peek returned.
import type { Stub } from '../gen/Stub';

export type Mark = 'head' | 'tail' | 'peek';

export class Highlights {
  private ranges: Array<[number, number, Mark]> = [];
  private peeked = new Set<number>();

  constructor(stub: Stub | null, peekLines: number[] = []) {
    if (stub?.head) this.ranges.push([stub.head[0], stub.head[1], 'head']);
    if (stub?.tail) this.ranges.push([stub.tail[0], stub.tail[1], 'tail']);
    for (const n of peekLines) this.peeked.add(n);
  }

  /** The marks of line `n` (1-based): a line can be both in a preview and in a peek. */
  marks(n: number): Mark[] {
    const out: Mark[] = [];
    for (const [a, b, m] of this.ranges) if (n >= a && n <= b) out.push(m);
    if (this.peeked.has(n)) out.push('peek');
    return out;
  }

  /** The first highlighted line of a kind, to jump to. */
  first(mark: Mark): number | null {
    if (mark === 'peek') return this.peeked.size ? Math.min(...this.peeked) : null;
    const r = this.ranges.find((x) => x[2] === mark);
    return r ? r[0] : null;
  }
}

/** Parses "120", "120-180" or "120-" into a 1-based inclusive range, or null. */
export function parseRange(text: string): { start: number; end: number | null } | null {
  const m = /^\s*(\d+)\s*(?:-\s*(\d*)\s*)?$/.exec(text);
  if (!m) return null;
  const start = Number(m[1]);
  const end = m[2] ? Number(m[2]) : null;
  if (start < 1 || (end != null && end < start)) return null;
  return { start, end };
}
