// The one door to the backend: every command the app calls, typed by the command contract
// generated from Rust (src/gen/commands.ts: each command's name, request, response and streamed
// item). Views import from here, never from @tauri-apps/api.
import { Channel, invoke } from '@tauri-apps/api/core';
import type { CommandName, Commands } from '../gen/commands';
import type { ErrorCode } from '../gen/ErrorCode';
import type { GcPolicy } from '../gen/GcPolicy';
import type { PeekRequest } from '../gen/PeekRequest';
import type { ReplayShape } from '../gen/ReplayShape';
import type { ResultRef } from '../gen/ResultRef';
import type { RunKey } from '../gen/RunKey';

/** An error from the backend: `code` is what a view branches on, `message` what it shows. */
export class CommandError extends Error {
  constructor(
    public code: ErrorCode | 'ipc',
    message: string,
  ) {
    super(message);
  }
}

/** What to show the user for an error thrown by a command (or anything else). */
export function errorMessage(e: unknown): string {
  return e instanceof CommandError || e instanceof Error ? e.message : String(e);
}

/** Whether `e` is the backend saying `code`. */
export function isError(e: unknown, code: ErrorCode): boolean {
  return e instanceof CommandError && e.code === code;
}

function isCoreError(e: unknown): e is { code: ErrorCode; message: string } {
  return typeof e === 'object' && e !== null && 'code' in e && 'message' in e;
}

type Request<K extends CommandName> = Commands[K]['request'];
type Response<K extends CommandName> = Commands[K]['response'];
type Item<K extends CommandName> = Commands[K]['stream'];

/** Invokes command `cmd` with its request (`null` for none) and, for a command that streams,
 *  `onItem` for every item it sends, in order. */
async function call<K extends CommandName>(
  cmd: K,
  req: Request<K>,
  onItem?: (item: Item<K>) => void,
): Promise<Response<K>> {
  const args: Record<string, unknown> = {};
  if (req !== null) args.req = req;
  if (onItem) {
    const channel = new Channel<Item<K>>();
    channel.onmessage = onItem;
    args.channel = channel;
  }
  try {
    return await invoke<Response<K>>(cmd, args);
  } catch (e) {
    if (isCoreError(e)) throw new CommandError(e.code, e.message);
    throw new CommandError('ipc', String(e));
  }
}

export const ipc = {
  settings: () => call('settings', null),
  setRunsDirs: (dirs: string[]) => call('set_runs_dirs', { dirs }),
  pickRunsDir: () => call('pick_runs_dir', null),
  /** Every run: from the watcher's models (waiting for its first scan), or with `reread`
   *  every transcript read again. */
  listRuns: (reread = false) => call('list_runs', { reread }),
  runDetail: (dir: string, run: string) => call('run_detail', { dir, run }),
  openValue: (r: ResultRef) => call('open_value', r),
  /** Every byte of a value opened `verified: 'sampled'` compared with the transcript. */
  verifyValue: (r: ResultRef) => call('verify_value', r),
  valueLines: (r: ResultRef, first: number, count: number) => call('value_lines', { r, first, count }),
  valueText: (r: ResultRef, first: number, last: number) => call('value_text', { r, first, last }),
  peek: (r: ResultRef, request: PeekRequest) => call('peek_value', { r, request }),
  revealValue: (r: ResultRef) => call('reveal_value', r),
  storage: (dir: string) => call('storage', { dir }),
  gcPlan: (dir: string, policy: GcPolicy) => call('gc_plan', { dir, policy }),
  /** Applies the plan last made for `dir`; `onProgress` hears of every file, in order. A GC
   *  already running elsewhere fails with code `busy`. */
  gcApply: (dir: string, onProgress: (p: Item<'gc_apply'>) => void) => call('gc_apply', { dir }, onProgress),
  gcCancel: () => call('gc_cancel', null),
  setPinned: (dir: string, run: string, pinned: boolean) => call('set_pinned', { dir, run, pinned }),
  pinned: (dir: string) => call('pinned', { dir }),
  /** Every change in the runs directories shown, in order, from now on. */
  watchChanges: (onChange: (c: Item<'watch_changes'>) => void) => call('watch_changes', null, onChange),
  /** Follows a run: new timeline entries after line `shown`, each once, with the run's figures.
   *  Returns the follow's token, for `unfollowRun`. */
  followRun: (dir: string, run: string, shown: number, bytes: number | null, onUpdate: (u: Item<'follow_run'>) => void) => {
    const token = nextFollow();
    const done = call('follow_run', { dir, run, shown, bytes, token }, onUpdate);
    return { token, done };
  },
  /** Ends the follow `token` (a newer one goes on, whatever order the backend sees them in). */
  unfollowRun: (token: number) => call('unfollow_run', { token }),
  /** The runs named, as they stand now; `run: null` for a run that is gone. */
  runRows: (runs: RunKey[]) => call('run_rows', { runs }),
  /** What the model was shown of each value of a run, or of the one `callId` names. */
  coverage: (dir: string, run: string, callId?: string) => call('coverage', { dir, run, call: callId }),
  /** The threshold what-if of a runs directory (or one run) at each threshold. */
  whatIf: (dir: string, thresholds: number[], run?: string) => call('what_if', { dir, thresholds, run }),
  /** The messages a resume of `run` would replay now (or after GC: `withoutValues`), each
   *  message's content cut to `maxContent` bytes for the view. */
  resumePreview: (dir: string, run: string, withoutValues: boolean, maxContent = 8192, shape?: ReplayShape) =>
    call('resume_preview', { dir, run, withoutValues, maxContent, shape }),
  /** Searches every run of `req.dirs`; `onHits` hears of each batch of hits as it is found.
   *  Starting a search cancels the one before it (its promise then ends `cancelled`). */
  search: (req: Request<'search'>, onHits: (b: Item<'search'>) => void) => call('search', req, onHits),
  searchCancel: () => call('search_cancel', null),
};

// Follow tokens grow in the order the user opens runs; the backend starts over when a window
// subscribes to changes (at load), so a counter is enough.
let follows = 0;
function nextFollow(): number {
  return ++follows;
}

export type { ResultRef };
