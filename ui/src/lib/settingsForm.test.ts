import { describe, expect, it } from 'vitest';
import { fromForm, overridden, sourceNote, toForm } from './settingsForm';
import { resolveTheme } from './theme';

describe('settings form', () => {
  const saved = { runsDirs: ['/a'], threshold: 8192, runningWindowMs: 90 * 60_000, gcIdleGuardMs: 30_000, theme: 'dark' as const, declinedAgents: [], dirKinds: { '/a': 'claude' as const } };

  it('shows what is saved, and saves it back unchanged', () => {
    const f = toForm(saved);
    expect(f).toEqual({ threshold: '8192', runningWindowMinutes: '90', gcIdleGuardMinutes: '0.5', theme: 'dark' });
    expect(fromForm(f, ['/a'], [], saved.dirKinds)).toEqual({ saved });
  });

  it('takes sizes with units, and an empty field as the default', () => {
    const r = fromForm({ threshold: '1MiB', runningWindowMinutes: '', gcIdleGuardMinutes: '', theme: 'system' }, [], ['/declined']);
    expect(r).toEqual({ saved: { runsDirs: [], threshold: 1 << 20, runningWindowMs: null, gcIdleGuardMs: null, theme: 'system', declinedAgents: ['/declined'], dirKinds: {} } });
  });

  it('keeps the kind of a directory only while the directory is listed', () => {
    const base = toForm(saved);
    const kept = fromForm(base, ['/a', '/b'], [], { '/a': 'claude', '/gone': 'codex' });
    expect(kept).toEqual({ saved: expect.objectContaining({ dirKinds: { '/a': 'claude' } }) });
  });

  it('refuses what cannot be a setting, saying why', () => {
    const base = toForm(saved);
    expect(fromForm({ ...base, threshold: '0' }, [])).toHaveProperty('error');
    expect(fromForm({ ...base, threshold: 'big' }, [])).toEqual({ error: 'The threshold "big" is not a size above 0 (like 20480, 8KiB or 1MiB).' });
    expect(fromForm({ ...base, runningWindowMinutes: '-5' }, [])).toHaveProperty('error');
    expect(fromForm({ ...base, gcIdleGuardMinutes: 'soon' }, [])).toEqual({ error: 'The GC idle guard "soon" is not a number of minutes.' });
  });

  it('says where a setting comes from, and that the command line and the environment win', () => {
    expect(sourceNote('cli', '--threshold', 'MCTL_THRESHOLD')).toMatch(/^Set by --threshold on the command line: it wins/);
    expect(sourceNote('env', '--threshold', 'MCTL_THRESHOLD')).toMatch(/^Set by \$MCTL_THRESHOLD: it wins/);
    expect(sourceNote('saved', null, null)).toBe('Saved here.');
    expect([overridden('cli'), overridden('env'), overridden('saved'), overridden('default')]).toEqual([true, true, false, false]);
  });
});

describe('theme', () => {
  it('follows the system unless one is chosen', () => {
    expect([resolveTheme('system', true), resolveTheme('system', false)]).toEqual(['dark', 'light']);
    expect([resolveTheme('light', true), resolveTheme('dark', false)]).toEqual(['light', 'dark']);
  });
});
