import { describe, expect, it } from 'vitest';
import { ancestors, childrenOf, runTree, startingCall, type TreeRow } from './runTree';
import { row } from './testing';

// Three levels: a run, its subagent (named in the summary), and that subagent's own subagent
// (known by its id alone), plus an unrelated run and a run whose id looks like a subagent's
// of a run that is not there.
const top = row({ id: 'run_top', updatedMs: 9 });
const child = row({ id: 'sub_run_top_toolu_1', parentId: 'run_top', updatedMs: 8 });
const grandchild = row({ id: 'sub_sub_run_top_toolu_1_toolu_2', updatedMs: 7 });
const other = row({ id: 'run_other', updatedMs: 6 });
const orphan = row({ id: 'sub_run_gone_toolu_3', updatedMs: 5 });
const rows = [top, child, grandchild, other, orphan];
const shown = (t: TreeRow[]) => t.map((r) => `${'  '.repeat(r.depth)}${r.row.run.id} ${r.descendants}${r.expanded ? ' open' : ''}`);

describe('runTree', () => {
  it('nests subagents under their parent, collapsed, with a count of what is under it', () => {
    expect(shown(runTree(rows, new Set()))).toEqual(['run_top 2', 'run_other 0', 'sub_run_gone_toolu_3 0']);
  });

  it('shows three levels as each is expanded', () => {
    expect(shown(runTree(rows, new Set(['0/run_top'])))).toEqual([
      'run_top 2 open',
      '  sub_run_top_toolu_1 1',
      'run_other 0',
      'sub_run_gone_toolu_3 0',
    ]);
    expect(shown(runTree(rows, new Set(['0/run_top', '0/sub_run_top_toolu_1'])))).toEqual([
      'run_top 2 open',
      '  sub_run_top_toolu_1 1 open',
      '    sub_sub_run_top_toolu_1_toolu_2 0',
      'run_other 0',
      'sub_run_gone_toolu_3 0',
    ]);
  });

  it('shows a subagent the filter matched as a root when its parent is filtered out', () => {
    expect(shown(runTree([grandchild, other], new Set()))).toEqual(['sub_sub_run_top_toolu_1_toolu_2 0', 'run_other 0']);
  });

  it('keeps runs of another directory apart, and the longest parent id that fits', () => {
    const a = row({ id: 'run_x' });
    const ab = row({ id: 'run_x_y' });
    const sub = row({ id: 'sub_run_x_y_toolu_9' });
    const elsewhere = row({ id: 'sub_run_x_toolu_8' }, 1);
    expect(shown(runTree([a, ab, sub, elsewhere], new Set(['0/run_x', '0/run_x_y'])))).toEqual([
      'run_x 0 open',
      'run_x_y 1 open',
      '  sub_run_x_y_toolu_9 0',
      'sub_run_x_toolu_8 0',
    ]);
  });

  it('cuts a parent chain that loops instead of losing its runs', () => {
    const p = row({ id: 'run_p', parentId: 'run_q' });
    const q = row({ id: 'run_q', parentId: 'run_p' });
    const self = row({ id: 'run_s', parentId: 'run_s' });
    const t = runTree([p, q, self], new Set(['0/run_p', '0/run_q']));
    expect(t.map((r) => r.row.run.id).sort()).toEqual(['run_p', 'run_q', 'run_s']);
    // A run leading into a loop keeps its parent.
    const c = row({ id: 'run_c', parentId: 'run_p' });
    const all = runTree([c, p, q], new Set(['0/run_p', '0/run_q']));
    expect(all.find((r) => r.row.run.id === 'run_c')?.depth).toBeGreaterThan(0);
    expect(all.map((r) => r.row.run.id).sort()).toEqual(['run_c', 'run_p', 'run_q']);
  });

  it('names the ancestors that show a nested run', () => {
    expect(ancestors(rows, '0/sub_sub_run_top_toolu_1_toolu_2')).toEqual(['0/sub_run_top_toolu_1', '0/run_top']);
    expect(ancestors(rows, '0/run_other')).toEqual([]);
  });

  it("names a run's subagents and the tool call that started each", () => {
    expect(childrenOf(rows, '0/run_top').map((r) => r.run.id)).toEqual(['sub_run_top_toolu_1']);
    expect(childrenOf(rows, '0/sub_run_top_toolu_1').map((r) => r.run.id)).toEqual(['sub_sub_run_top_toolu_1_toolu_2']);
    expect(startingCall('run_top', { id: 'sub_run_top_toolu_1' })).toBe('toolu_1');
    expect(startingCall('run_top', { id: 'run_other' })).toBe(null);
    // A Claude Code subagent's store names the Task call that started it.
    expect(startingCall('9e0c', { id: 'sidechain-6690d10e', parentCall: 'toolu_01L' })).toBe('toolu_01L');
  });
});
