import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../gen/TimelineEvent';
import { cardKind, compactionNote, currentToolCall, resultDuration } from './timeline';

const ev = (o: Partial<TimelineEvent>): TimelineEvent => ({ line: 1, type: 'other', toolCalls: [], attachments: [], ...o }) as TimelineEvent;

describe('timeline', () => {
  it('maps event types to cards, unknown ones included', () => {
    expect(cardKind(ev({ type: 'tool_call_finished' }))).toBe('result');
    expect(cardKind(ev({ type: 'context_compacted' }))).toBe('compaction');
    expect(cardKind(ev({ type: 'local_command' }))).toBe('command');
    expect(cardKind(ev({ type: 'unreadable' }))).toBe('unreadable');
    expect(cardKind(ev({ type: 'hologram_beamed' }))).toBe('other');
  });
  it('measures a tool call from start to finish', () => {
    const e = ev({ type: 'tool_call_finished', result: { startedMs: 1000, finishedMs: 95_000 } as TimelineEvent['result'] });
    expect(resultDuration(e)).toBe(94_000);
    expect(resultDuration(ev({}))).toBeNull();
  });
  it('finds the tool call still running', () => {
    const events = [
      ev({ type: 'tool_call_started', toolCallId: 'a', tool: 'read_file' }),
      ev({ type: 'tool_call_finished', toolCallId: 'a' }),
      ev({ type: 'tool_call_started', toolCallId: 'b', tool: 'bash' }),
    ];
    expect(currentToolCall(events)?.toolCallId).toBe('b');
    expect(currentToolCall(events.slice(0, 2))).toBeNull();
  });
  it('says what a compaction replaces', () => {
    expect(compactionNote(ev({ line: 9 }))).toContain('line 9');
  });
});
