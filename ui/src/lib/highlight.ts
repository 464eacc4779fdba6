// Which lines of a full text to highlight: where the stub's head and tail previews come from,
// which lines the last peek returned, and (in the gutter) what the model was shown: the stub's
// lines, each of its recorded peeks in its own shade, and the error-looking lines it never saw.
import type { Stub } from '../gen/Stub';
import type { ValueCoverage } from '../gen/ValueCoverage';

export type Mark = 'head' | 'tail' | 'peek' | 'chosen' | 'target';

/** How many shades the model's peeks cycle through in the gutter. */
export const PEEK_SHADES = 4;

export class Highlights {
  private ranges: Array<[number, number, Mark]> = [];
  private peeked = new Set<number>();
  private stubLines: Array<[number, number]> = [];
  private modelPeeks: Array<Array<[number, number]>> = [];
  private missed = new Set<number>();

  /** `coverage`: what the model was shown of this value; `chosen`: the index of one of its
   *  peeks, whose lines are highlighted; `target`: a line a search hit opened the value at. */
  constructor(stub: Stub | null, peekLines: number[] = [], coverage: ValueCoverage | null = null, chosen: number | null = null, target: number | null = null) {
    if (target != null) this.ranges.push([target, target, 'target']);
    if (stub?.head) this.ranges.push([stub.head[0], stub.head[1], 'head']);
    if (stub?.tail) this.ranges.push([stub.tail[0], stub.tail[1], 'tail']);
    for (const n of peekLines) this.peeked.add(n);
    if (coverage) {
      this.stubLines = coverage.stubLines;
      this.modelPeeks = coverage.peeks.map((p) => p.lines);
      for (const n of coverage.missedErrors.lines) this.missed.add(n);
      for (const [a, b] of chosen != null ? (coverage.peeks[chosen]?.lines ?? []) : []) this.ranges.push([a, b, 'chosen']);
    }
  }

  /** The marks of line `n` (1-based): a line can be both in a preview and in a peek. */
  marks(n: number): Mark[] {
    const out: Mark[] = [];
    for (const [a, b, m] of this.ranges) if (n >= a && n <= b) out.push(m);
    if (this.peeked.has(n)) out.push('peek');
    return out;
  }

  /** The gutter's mark of line `n`: `missed` (error-looking, never shown), `seen-k` (shown by
   *  the model's peek k, in shade k mod PEEK_SHADES; the first peek that showed it), `seen-stub`
   *  (shown in the stub only), or '' (never shown). */
  gutter(n: number): string {
    if (this.missed.has(n)) return 'missed';
    const within = (rs: Array<[number, number]>) => rs.some(([a, b]) => n >= a && n <= b);
    const k = this.modelPeeks.findIndex(within);
    if (k >= 0) return `seen-${k % PEEK_SHADES}`;
    return within(this.stubLines) ? 'seen-stub' : '';
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
