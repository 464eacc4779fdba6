import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../gen/TimelineEvent';
import { firstUnread, isError, jump, markOf, minimap } from './timelineNav';

const ev = (o: Partial<TimelineEvent>): TimelineEvent => ({ line: 1, type: 'other', toolCalls: [], attachments: [], ...o }) as TimelineEvent;
const result = (ok: boolean, state = 'inline') => ({ ok, state }) as TimelineEvent['result'];

// user, tool, failed result, assistant, user, tool, retained result, run error
const events = [
  ev({ line: 1, type: 'user_message' }),
  ev({ line: 2, type: 'tool_call_started' }),
  ev({ line: 3, type: 'tool_call_finished', result: result(false) }),
  ev({ line: 4, type: 'assistant_message' }),
  ev({ line: 5, type: 'user_message' }),
  ev({ line: 6, type: 'tool_call_started' }),
  ev({ line: 7, type: 'tool_call_finished', result: result(true, 'retained') }),
  ev({ line: 8, type: 'run_error' }),
];

describe('timeline navigation', () => {
  it('jumps to the next and the previous user message, and stops at the ends', () => {
    expect(jump(events, -1, 'user', 1)).toBe(0);
    expect(jump(events, 0, 'user', 1)).toBe(4);
    expect(jump(events, 4, 'user', 1)).toBe(null);
    expect(jump(events, 4, 'user', -1)).toBe(0);
    expect(jump(events, 0, 'user', -1)).toBe(null);
  });

  it('jumps to the next error: a failed result, a run error', () => {
    expect(jump(events, -1, 'error', 1)).toBe(2);
    expect(jump(events, 2, 'error', 1)).toBe(7);
    expect(jump(events, 7, 'error', 1)).toBe(null);
    expect(isError(ev({ type: 'unreadable' }))).toBe(true);
    expect(isError(ev({ type: 'tool_call_finished', result: result(true) }))).toBe(false);
  });

  it('marks errors over retained values over tool calls on the minimap', () => {
    expect(events.map(markOf)).toEqual([null, 'tool', 'error', null, null, 'tool', 'retained', 'error']);
    // Four slots of two events: the weightiest mark of each, and where it is.
    expect(minimap(events, 4)).toEqual([
      { slot: 0, slots: 4, mark: 'tool', index: 1 },
      { slot: 1, slots: 4, mark: 'error', index: 2 },
      { slot: 2, slots: 4, mark: 'tool', index: 5 },
      { slot: 3, slots: 4, mark: 'error', index: 7 },
    ]);
    // Fewer events than slots: one slot each.
    expect(minimap(events.slice(0, 3)).map((m) => m.slots)).toEqual([3, 3]);
  });

  it('finds where new events began since the last look', () => {
    expect(firstUnread(events, 5)).toBe(5);
    expect(firstUnread(events, 8)).toBe(null);
    expect(firstUnread(events, null)).toBe(null);
  });
});
