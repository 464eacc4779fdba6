// Moving around a run's timeline: jumps to the previous or next user message and the next
// error, the minimap's marks, and where new events began since the run was last looked at.
// Pure functions over the events; the view scrolls.
import type { TimelineEvent } from '../gen/TimelineEvent';

export type Mark = 'error' | 'retained' | 'tool';

/** An event that went wrong: a run error, an unreadable line, a failed tool result. */
export function isError(e: TimelineEvent): boolean {
  return e.type === 'run_error' || e.type === 'unreadable' || (e.type === 'tool_call_finished' && e.result != null && !e.result.ok);
}

const is = {
  user: (e: TimelineEvent) => e.type === 'user_message',
  error: isError,
};

/** The index of the nearest `what` event after `from` (`step` 1) or before it (`step` -1);
 *  `null` when there is none that way. `from` -1 starts before the first event. */
export function jump(events: TimelineEvent[], from: number, what: keyof typeof is, step: 1 | -1): number | null {
  for (let i = from + step; i >= 0 && i < events.length; i += step) if (is[what](events[i])) return i;
  return null;
}

/** What an event shows on the minimap, if anything: errors first, then retained values, then
 *  tool calls. */
export function markOf(e: TimelineEvent): Mark | null {
  if (isError(e)) return 'error';
  if (e.type === 'tool_call_finished' && e.result && e.result.state !== 'inline') return 'retained';
  if (e.type === 'tool_call_started') return 'tool';
  return null;
}

const rank: Record<Mark, number> = { error: 3, retained: 2, tool: 1 };

/** The minimap: the timeline cut into at most `slots` equal slots, each with the weightiest
 *  mark among its events and the first event bearing it (what a click jumps to). Slots with
 *  nothing to mark are left out. */
export function minimap(events: TimelineEvent[], slots = 150): { slot: number; slots: number; mark: Mark; index: number }[] {
  const n = Math.min(slots, events.length);
  const out: { slot: number; slots: number; mark: Mark; index: number }[] = [];
  for (let s = 0; s < n; s++) {
    const lo = Math.floor((s * events.length) / n);
    const hi = Math.floor(((s + 1) * events.length) / n);
    let best: { mark: Mark; index: number } | null = null;
    for (let i = lo; i < hi; i++) {
      const m = markOf(events[i]);
      if (m && (!best || rank[m] > rank[best.mark])) best = { mark: m, index: i };
    }
    if (best) out.push({ slot: s, slots: n, ...best });
  }
  return out;
}

/** The index of the first event after line `seen` (the last line shown when the run was last
 *  looked at); `null` when nothing is newer or the run was never looked at. */
export function firstUnread(events: TimelineEvent[], seen: number | null): number | null {
  if (seen == null) return null;
  const i = events.findIndex((e) => e.line > seen);
  return i < 0 ? null : i;
}

/** Where the last line looked at of each run is kept between visits (and restarts). */
const key = (dir: string, run: string) => `mc.seen\n${dir}\n${run}`;

export function seenLine(dir: string, run: string): number | null {
  try {
    const v = localStorage.getItem(key(dir, run));
    return v == null ? null : Number(v);
  } catch {
    return null;
  }
}

export function markSeen(dir: string, run: string, line: number): void {
  try {
    localStorage.setItem(key(dir, run), String(line));
  } catch {
    // no storage (a private window): the unread line is only this visit's
  }
}
