import { describe, expect, it } from 'vitest';
import { filterRuns, statusCounts, words } from './runsFilter';
import { row } from './testing';

const rows = [
  row({ id: 'run_a', title: 'Upgrade dependencies', model: 'claude-sonnet-4-5', tools: ['read_file', 'peek_value'], updatedMs: 3, costUsd: 0.06, valueBytes: 600_000 }),
  row({ id: 'run_b', title: 'Fix the release build', model: 'gpt-5-codex', status: 'error', tools: ['bash'], updatedMs: 5, costUsd: 0.04, valueBytes: 60_000 }),
  row({ id: 'm3kq', title: 'What does useSession do?', model: 'claude-sonnet-4-5', status: 'running', tools: ['read_file'], updatedMs: 9, costUsd: 0.01 }),
];
const ids = (rs: typeof rows) => rs.map((r) => r.run.id);

describe('filterRuns', () => {
  it('sorts by last activity, newest first, by default', () => {
    expect(ids(filterRuns(rows, { text: '', statuses: new Set(), sort: 'activity' }))).toEqual(['m3kq', 'run_b', 'run_a']);
  });
  it('sorts by size and by cost', () => {
    expect(ids(filterRuns(rows, { text: '', statuses: new Set(), sort: 'size' }))).toEqual(['run_a', 'run_b', 'm3kq']);
    expect(ids(filterRuns(rows, { text: '', statuses: new Set(), sort: 'cost' }))).toEqual(['run_a', 'run_b', 'm3kq']);
  });
  it('matches every word against id, title, model and tool names, ignoring case', () => {
    const q = (text: string) => ids(filterRuns(rows, { text, statuses: new Set(), sort: 'activity' }));
    expect(q('PEEK_value')).toEqual(['run_a']);
    expect(q('sonnet read_file')).toEqual(['m3kq', 'run_a']);
    expect(q('run_b')).toEqual(['run_b']);
    expect(q('codex upgrade')).toEqual([]);
  });
  it('filters by status', () => {
    expect(ids(filterRuns(rows, { text: '', statuses: new Set(['error', 'running']), sort: 'activity' }))).toEqual(['m3kq', 'run_b']);
    expect(statusCounts(rows)).toEqual({ running: 1, done: 1, error: 1, cancelled: 0, interrupted: 0 });
  });
  it('splits words on whitespace', () => {
    expect(words('  a  B\tc ')).toEqual(['a', 'b', 'c']);
  });
});

describe('sources', () => {
  it('filters by the stores chosen and counts each', async () => {
    const { sourceCounts } = await import('./runsFilter');
    const rows = [row({ id: 'h', source: 'klide' }), row({ id: 'c', source: 'claude' }), row({ id: 'x', source: 'codex' }), row({ id: 'c2', source: 'claude' })];
    const shown = (sources: Set<'klide' | 'claude' | 'codex'>) =>
      filterRuns(rows, { text: '', statuses: new Set(), sources, sort: 'activity' }).map((r) => r.run.id);
    expect(shown(new Set())).toEqual(['c', 'c2', 'h', 'x']);
    expect(shown(new Set(['claude']))).toEqual(['c', 'c2']);
    expect(shown(new Set(['codex', 'klide']))).toEqual(['h', 'x']);
    expect([...sourceCounts(rows)]).toEqual([['klide', 1], ['claude', 2], ['codex', 1]]);
  });
});
