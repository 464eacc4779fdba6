// The hits of a search as the Search view shows them: grouped by run and call (a run's messages
// in a group of their own), groups in the order their first hit came, and flattened into rows
// (a heading, then its hits) for a virtualized list.
import type { SearchBatch } from '../gen/SearchBatch';
import type { SearchHit } from '../gen/SearchHit';
import type { ResultRef } from './ipc';

export type Group = {
  key: string;
  dir: string;
  run: string;
  /** The tool call (or, for a stray file, the value) the hits are about; null for messages. */
  call: string | null;
  stray: boolean;
  hits: SearchHit[];
};

export type Row = { group: Group; hit: SearchHit | null };

export class SearchResults {
  groups: Group[] = [];
  private byKey = new Map<string, Group>();
  count = 0;

  add(batch: SearchBatch) {
    for (const h of batch.hits) {
      const call = h.kind === 'message' ? null : (h.toolCallId ?? h.valueId ?? null);
      const key = `${batch.dir}\n${h.run}\n${call ?? ''}`;
      let g = this.byKey.get(key);
      if (!g) {
        g = { key, dir: batch.dir, run: h.run, call, stray: h.stray, hits: [] };
        this.byKey.set(key, g);
        this.groups.push(g);
      }
      g.hits.push(h);
      this.count++;
    }
  }

  /** A heading row per group, then its hits. */
  rows(): Row[] {
    const out: Row[] = [];
    for (const g of this.groups) {
      out.push({ group: g, hit: null });
      for (const h of g.hits) out.push({ group: g, hit: h });
    }
    return out;
  }
}

/** The text of a hit around its match. */
export function hitParts(h: SearchHit): { before: string; match: string; after: string } {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  // Offsets are bytes of the UTF-8 text.
  const b = enc.encode(h.text);
  return {
    before: dec.decode(b.slice(0, h.matchStart)),
    match: dec.decode(b.slice(h.matchStart, h.matchEnd)),
    after: dec.decode(b.slice(h.matchEnd)),
  };
}

/** Where clicking a hit goes: a value, or a result whose full text the compare view shows,
 *  opens there at its line; a message, an input or a damaged result (the compare view shows
 *  its value file, other bytes) opens its run at the event; a stray file of a value directory
 *  without a run has nowhere to open. */
export type HitTarget =
  | { kind: 'value'; ref: ResultRef; line: number }
  | { kind: 'run'; dir: string; run: string; line: number | null }
  | { kind: 'none' };

export function hitTarget(dir: string, h: SearchHit): HitTarget {
  if (h.orphan) return { kind: 'none' };
  const call = h.toolCallId ?? h.valueId;
  const full = h.kind === 'value' || (h.kind === 'result' && h.state !== 'damaged');
  if (full && call) return { kind: 'value', ref: { dir, run: h.run, call }, line: h.textLine };
  return { kind: 'run', dir, run: h.run, line: h.line ?? null };
}

/** Where a hit is, for its gutter: a value's line, else the transcript line (and the line in
 *  the result's text). */
export function hitPlace(h: SearchHit): string {
  if (h.kind === 'value') return String(h.valueLine ?? h.textLine);
  if (h.kind === 'result') return `L${h.line}:${h.textLine}`;
  return `L${h.line ?? '?'}`;
}
