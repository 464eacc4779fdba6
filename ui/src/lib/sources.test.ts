import { describe, expect, it } from 'vitest';
import type { SourceInfo } from '../gen/SourceInfo';
import { described, isThresholdStore, sourceInfo } from './sources';

const caps = { retentionThreshold: false, resumeReplay: false, agentSweep: false, valueFiles: true, flatNames: false };
const kinds: SourceInfo[] = [
  { kind: 'klide', label: 'harness runs', noun: 'harness run', mark: 'H', readTool: 'peek_value', color: '', capabilities: { ...caps, retentionThreshold: true, resumeReplay: true, flatNames: true } },
  { kind: 'claude', label: 'Claude Code', noun: 'Claude Code session', mark: 'CC', readTool: 'Read (offset and limit) or Grep', color: '#b4532a', capabilities: { ...caps, agentSweep: true } },
];

describe('store kinds as the backend describes them', () => {
  it('answers a kind by what the backend sent', () => {
    expect(sourceInfo('claude', kinds).noun).toBe('Claude Code session');
    expect(isThresholdStore('klide', kinds)).toBe(true);
    expect(isThresholdStore('claude', kinds)).toBe(false);
  });

  it('answers a kind the backend did not describe by its name, with no capability', () => {
    const codex = sourceInfo('codex', kinds);
    expect(codex.label).toBe('codex');
    expect(codex.mark).toBe('CO');
    expect(isThresholdStore('codex', kinds)).toBe(false);
    expect(described('codex', kinds)).toBe(false);
    expect(described('claude', kinds)).toBe(true);
  });
});
