// The one door to the backend: every command the app calls, typed by the command contract
// generated from Rust (src/gen/commands.ts: each command's name, request, response and streamed
// item). Views import from here, never from @tauri-apps/api, and never know which transport
// carries the commands: the desktop app's IPC, or HTTP when the page is served by `mctl serve`
// (chosen once, at start).
import { Channel, invoke } from '@tauri-apps/api/core';
import { SseParser } from './sse';
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
function call<K extends CommandName>(cmd: K, req: Request<K>, onItem?: (item: Item<K>) => void): Promise<Response<K>> {
  return overHttp ? callHttp(cmd, req, onItem) : callTauri(cmd, req, onItem);
}

/** The page was served by `mctl serve` rather than loaded by the desktop app. */
const overHttp = typeof window !== 'undefined' && !('__TAURI_INTERNALS__' in window);

async function callTauri<K extends CommandName>(
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

// Over HTTP: `POST /api/call/{cmd}` with the request as the body; a command that streams answers
// with server-sent events (`item`s, then `done` or `error`; live streams go on after `done`).
// The page's token comes in the URL fragment (`#token=...`, never sent to the server in the
// URL): it is exchanged once for a cookie its scripts cannot read, then removed from the
// address bar. Each page names itself (`X-Mctl-Client`) so it has its own live session.

/** A random name for this page. */
export function pageId(random: (a: Uint8Array) => Uint8Array = (a) => crypto.getRandomValues(a)): string {
  return Array.from(random(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

let page: string | null = null;
let session: Promise<void> | null = null;

/** The token of the URL fragment, exchanged for the session cookie (once per page). */
function startSession(): Promise<void> {
  session ??= (async () => {
    const token = new URLSearchParams(location.hash.slice(1)).get('token');
    if (!token) return; // a reload: the cookie is already set
    history.replaceState(null, '', location.pathname + location.search);
    const r = await fetch('/api/session', { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    if (!r.ok) throw new CommandError('ipc', `the server refused the token (${r.status})`);
  })();
  return session;
}

async function failure(r: globalThis.Response): Promise<CommandError> {
  const body: unknown = await r.json().catch(() => null);
  if (isCoreError(body)) return new CommandError(body.code, body.message);
  if (r.status === 401) return new CommandError('ipc', 'this page has no valid token: open the URL mctl serve printed');
  return new CommandError('ipc', `the server answered ${r.status} ${r.statusText}`);
}

async function callHttp<K extends CommandName>(
  cmd: K,
  req: Request<K>,
  onItem?: (item: Item<K>) => void,
): Promise<Response<K>> {
  await startSession();
  page ??= pageId();
  let r: globalThis.Response;
  try {
    r = await fetch(`/api/call/${cmd}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Mctl-Client': page },
      body: JSON.stringify(req),
    });
  } catch (e) {
    throw new CommandError('ipc', `the server cannot be reached: ${errorMessage(e)}`);
  }
  if (!r.ok) throw await failure(r);
  if (!r.body || !(r.headers.get('Content-Type') ?? '').startsWith('text/event-stream')) return (await r.json()) as Response<K>;
  return readStream(r.body, onItem);
}

/** Hands each `item` to `onItem` and resolves with `done` (reading on after it: a live stream
 *  goes on), or rejects with `error` or when the stream ends before `done`. */
function readStream<T, R>(body: ReadableStream<Uint8Array>, onItem?: (item: T) => void): Promise<R> {
  return new Promise<R>((resolve, reject) => {
    let settled = false;
    const parser = new SseParser();
    const reader = body.getReader();
    const text = new TextDecoder();
    (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const e of parser.push(text.decode(value, { stream: true }))) {
          const data: unknown = JSON.parse(e.data);
          if (e.event === 'item') onItem?.(data as T);
          else if (e.event === 'done' && !settled) {
            settled = true;
            resolve(data as R);
          } else if (e.event === 'error' && !settled) {
            settled = true;
            reject(isCoreError(data) ? new CommandError(data.code, data.message) : new CommandError('ipc', e.data));
          }
        }
      }
      if (!settled) reject(new CommandError('ipc', 'the connection to the server was lost'));
    })().catch((e) => {
      if (!settled) reject(new CommandError('ipc', errorMessage(e)));
    });
  });
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
