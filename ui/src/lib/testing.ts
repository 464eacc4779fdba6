// Builders for tests: a Run with every field at a neutral value.
import type { Run } from '../gen/Run';
import type { RunRow } from '../gen/RunRow';

export function run(over: Partial<Run> = {}): Run {
  return {
    id: 'run', source: 'klide', status: 'done', title: '', provider: null, model: null, mode: null, cwd: null, parentId: null, parentCall: null,
    startedMs: null, updatedMs: null, events: 0, problems: 0, warnings: 0, dispatches: 0, toolCalls: 0, results: 0,
    inline: 0, retained: 0, retainedBytes: 0, unretained: 0, unretainedBytes: 0, damaged: 0, truncated: 0, swept: 0,
    sidechainLines: 0, strays: 0,
    valueFiles: 0, valueBytes: 0, inputTokens: 0, outputTokens: 0, uncachedInputTokens: null, cacheWriteTokens: null, cacheReadTokens: null, reasoningTokens: null, costUsd: 0, costEstimated: false, tokensWithChildren: 0, costWithChildrenUsd: 0, models: [], modelMs: 0, transcriptBytes: 0,
    pendingBytes: 0, newerSchema: false, hasTranscript: true, hasSummary: false, errorCode: null,
    errorMessage: null, tools: [], compactedAtLine: null, ...over,
  };
}

export function row(over: Partial<Run> = {}, dir = 0): RunRow {
  return { dir, run: run(over) };
}
