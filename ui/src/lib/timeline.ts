// What the timeline shows for each event: a kind of card, a one-line summary, durations.
import type { TimelineEvent } from '../gen/TimelineEvent';

export type CardKind = 'user' | 'assistant' | 'tool' | 'result' | 'permission' | 'diff' | 'file' | 'end' | 'error' | 'compaction' | 'note' | 'command' | 'unreadable' | 'other';

export function cardKind(e: TimelineEvent): CardKind {
  switch (e.type) {
    case 'user_message':
      return 'user';
    case 'assistant_message':
      return 'assistant';
    case 'tool_call_started':
      return 'tool';
    case 'tool_call_finished':
      return 'result';
    case 'permission_requested':
    case 'permission_resolved':
      return 'permission';
    case 'diff_proposed':
    case 'diff_resolved':
      return 'diff';
    case 'file_changed':
      return 'file';
    case 'run_result':
      return 'end';
    case 'run_error':
      return 'error';
    case 'context_compacted':
      return 'compaction';
    case 'steering_injected':
    case 'user_question_requested':
    case 'user_question_resolved':
    case 'subagent_requested':
    case 'subagent_resolved':
    case 'advisor_requested':
    case 'advisor_resolved':
    case 'context_snapshot':
    case 'run_started':
      return 'note';
    case 'local_command':
      return 'command';
    case 'unreadable':
      return 'unreadable';
    default:
      return 'other';
  }
}

/** A tool result's duration: from its tool_call_started to its tool_call_finished. */
export function resultDuration(e: TimelineEvent): number | null {
  const r = e.result;
  if (!r || r.startedMs == null || r.finishedMs == null) return null;
  return Math.max(0, r.finishedMs - r.startedMs);
}

/** The compaction divider: everything above it is replaced by its summary on resume. */
export function compactionNote(e: TimelineEvent): string {
  return `Context compacted at line ${e.line}: on resume, everything above is replaced by this summary.`;
}

/** The tool call in progress: a started call with no result yet (for a running run). */
export function currentToolCall(events: TimelineEvent[]): TimelineEvent | null {
  const finished = new Set(events.filter((e) => e.type === 'tool_call_finished').map((e) => e.toolCallId));
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e.type === 'tool_call_started' && !finished.has(e.toolCallId)) return e;
  }
  return null;
}
