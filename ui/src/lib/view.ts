// What the right-hand side of the window shows: one view at a time, as one value, so every
// handler moves from one view to another the same way (and Back knows where it came from).
import type { ResultRef } from './ipc';

export interface RunRef {
  dir: string;
  run: string;
}

export type View =
  /** The selected run's timeline (or the start page when none is selected). */
  | { kind: 'run' }
  /** A result's Stub | Full, opened from the run's timeline or from a search hit; `line` is
   *  the line of the full text to show first (a hit's). */
  | { kind: 'value'; ref: ResultRef; line: number | null; from: 'run' | 'search' }
  | { kind: 'storage' }
  | { kind: 'whatIf' }
  /** Two runs side by side: run A, and run B once picked. */
  | { kind: 'diff'; a: RunRef; b: RunRef | null }
  | { kind: 'search' }
  | { kind: 'settings' };

export const RUN: View = { kind: 'run' };

/** Where Back (and Esc) goes from `v`: a value returns to what it was opened from; the diff,
 *  settings and search views to the run. The other views have no Back. */
export function back(v: View): View {
  switch (v.kind) {
    case 'value':
      return v.from === 'search' ? { kind: 'search' } : RUN;
    case 'diff':
    case 'settings':
    case 'search':
      return RUN;
    default:
      return v;
  }
}

/** What Back goes to from `v`, as its button says it: "Search results", "Run". */
export function backLabel(v: View): string {
  return back(v).kind === 'search' ? 'Search results' : 'Run';
}

/** The view once a run is read again in place (the list refreshed): a value, the diff and the
 *  settings stay open; the other views give way to the run they were opened over. */
export function afterReload(v: View): View {
  return v.kind === 'value' || v.kind === 'diff' || v.kind === 'settings' ? v : RUN;
}

/** The view once the directories shown changed: a value of a directory maybe gone closes. */
export function afterDirsChanged(v: View): View {
  return v.kind === 'value' ? RUN : v;
}
