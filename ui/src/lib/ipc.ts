// The one door to the backend: every command the app calls, typed with the DTOs generated from
// Rust (src/gen, never edited by hand). Views import from here, never from @tauri-apps/api.
import { Channel, invoke } from '@tauri-apps/api/core';
import type { ErrorCode } from '../gen/ErrorCode';
import type { GcPolicy } from '../gen/GcPolicy';
import type { GcReport } from '../gen/GcReport';
import type { Progress } from '../gen/Progress';
import type { StorageStats } from '../gen/StorageStats';
import type { LinesPage } from '../gen/LinesPage';
import type { Peek } from '../gen/Peek';
import type { PeekRequest } from '../gen/PeekRequest';
import type { ResultRef } from '../gen/ResultRef';
import type { RunDetail } from '../gen/RunDetail';
import type { RunList } from '../gen/RunList';
import type { Settings } from '../gen/Settings';
import type { Change } from '../gen/Change';
import type { RunUpdate } from '../gen/RunUpdate';
import type { RunKey } from '../gen/RunKey';
import type { RunPatch } from '../gen/RunPatch';
import type { ValueInfo } from '../gen/ValueInfo';

/** An error from the backend: `code` is what a view branches on, `message` what it shows. */
export class CommandError extends Error {
  constructor(
    public code: ErrorCode | 'ipc',
    message: string,
  ) {
    super(message);
  }
}

function isCoreError(e: unknown): e is { code: ErrorCode; message: string } {
  return typeof e === 'object' && e !== null && 'code' in e && 'message' in e;
}

async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    if (isCoreError(e)) throw new CommandError(e.code, e.message);
    throw new CommandError('ipc', String(e));
  }
}

export const ipc = {
  settings: () => call<Settings>('settings'),
  setRunsDirs: (dirs: string[]) => call<Settings>('set_runs_dirs', { dirs }),
  pickRunsDir: () => call<string | null>('pick_runs_dir'),
  /** Every run: from the watcher's models (waiting for its first scan), or with `reread`
   *  every transcript read again. */
  listRuns: (reread = false) => call<RunList>('list_runs', { reread }),
  runDetail: (dir: string, run: string) => call<RunDetail>('run_detail', { dir, run }),
  openValue: (r: ResultRef) => call<ValueInfo>('open_value', { r }),
  valueLines: (r: ResultRef, first: number, count: number) => call<LinesPage>('value_lines', { r, first, count }),
  valueText: (r: ResultRef, first: number, last: number) => call<string>('value_text', { r, first, last }),
  peek: (r: ResultRef, request: PeekRequest) => call<Peek>('peek_value', { r, request }),
  revealValue: (r: ResultRef) => call<null>('reveal_value', { r }),
  storage: (dir: string) => call<StorageStats>('storage', { dir }),
  gcPlan: (dir: string, policy: GcPolicy) => call<GcReport>('gc_plan', { dir, policy }),
  /** Applies the plan last made for `dir`; `onProgress` hears of every file, in order. */
  gcApply: (dir: string, onProgress: (p: Progress) => void) => {
    const progress = new Channel<Progress>();
    progress.onmessage = onProgress;
    return call<GcReport>('gc_apply', { dir, progress });
  },
  gcCancel: () => call<null>('gc_cancel'),
  setPinned: (dir: string, run: string, pinned: boolean) => call<boolean>('set_pinned', { dir, run, pinned }),
  pinned: (dir: string) => call<string[]>('pinned', { dir }),
  /** Every change in the runs directories shown, in order, from now on. */
  watchChanges: (onChange: (c: Change) => void) => {
    const changes = new Channel<Change>();
    changes.onmessage = onChange;
    return call<null>('watch_changes', { changes });
  },
  /** Follows a run: new timeline entries after line `shown`, each once, with the run's figures.
   *  Returns the follow's token, for `unfollowRun`. */
  followRun: (dir: string, run: string, shown: number, onUpdate: (u: RunUpdate) => void) => {
    const updates = new Channel<RunUpdate>();
    updates.onmessage = onUpdate;
    const token = nextFollow();
    const done = call<null>('follow_run', { dir, run, shown, token, updates });
    return { token, done };
  },
  /** Ends the follow `token` (a newer one goes on, whatever order the backend sees them in). */
  unfollowRun: (token: number) => call<null>('unfollow_run', { token }),
  /** The runs named, as they stand now; `run: null` for a run that is gone. */
  runRows: (runs: RunKey[]) => call<RunPatch[]>('run_rows', { runs }),
};

// Follow tokens grow in the order the user opens runs; the backend starts over when a window
// subscribes to changes (at load), so a counter is enough.
let follows = 0;
function nextFollow(): number {
  return ++follows;
}

export type { ResultRef };
