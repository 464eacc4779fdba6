// The one door to the backend: every command the app calls, typed by the command contract
// generated from Rust (src/gen/commands.ts: each command's name, request, response and streamed
// item). Views import from here, never from @tauri-apps/api, and never know which transport
// carries the commands: the desktop app's IPC, or HTTP when the page is served by `mctl serve`
// (chosen once, at start).
import { Channel, invoke } from '@tauri-apps/api/core';
import { SseParser } from './sse';
import type { CommandName, Commands } from '../gen/commands';
import type { DetailVerify } from '../gen/DetailVerify';
import type { ErrorCode } from '../gen/ErrorCode';
import type { GcPolicy } from '../gen/GcPolicy';
import type { PeekRequest } from '../gen/PeekRequest';
import type { ReplayShape } from '../gen/ReplayShape';
import type { ResultRef } from '../gen/ResultRef';
import type { RunKey } from '../gen/RunKey';

/** An error from the backend: `code` is what a view branches on, `message` what it shows. */
export class CommandError extends Error {
  constructor(
    public code: ErrorCode | 'ipc' | 'unauthorized',
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

// Over HTTP (`mctl serve`, docs/serve.md). The page's token comes in the URL fragment (never
// sent to a server in a URL) and goes on every request as `Authorization: Bearer`, streams
// included (they are read with fetch): there is no cookie, which a browser would send to every
// port of the host. The token is kept for this tab only (sessionStorage, so a reload keeps
// working) and removed from the address bar. The page names itself (`X-Mctl-Client`, so it has
// its own followed run and opened values, as a desktop window has; the server watches its
// directories once for all pages) and opens one stream, `GET /api/page`, that
// carries the items of every command it calls that streams: browsers allow few connections per
// server. A command is `POST /api/call/{cmd}` with its request as the body; a streaming one is
// numbered (`X-Mctl-Call`), answered at once, and its items, then `done` or `error`, come on
// the stream.

const TOKEN_KEY = 'mctl-token';
let token: string | null | undefined;

/** The server's token: the URL fragment's (then kept for the tab and taken out of the address
 *  bar), else the one this tab kept. */
function serverToken(): string | null {
  if (token !== undefined) return token;
  const given = new URLSearchParams(location.hash.slice(1)).get('token');
  if (given) {
    try {
      sessionStorage.setItem(TOKEN_KEY, given);
    } catch {
      // no storage (a private window's quota): the token lives until a reload
    }
    history.replaceState(null, '', location.pathname + location.search);
    token = given;
  } else {
    try {
      token = sessionStorage.getItem(TOKEN_KEY);
    } catch {
      token = null;
    }
  }
  return token;
}

/** The server refused this tab's token (it was restarted with another, say): forget it. */
function refused() {
  token = null;
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // nothing kept
  }
  for (const f of unauthorized) f();
}

function authorization(): Record<string, string> {
  const t = serverToken();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

/** A random name for this page. */
export function pageId(random: (a: Uint8Array) => Uint8Array = (a) => crypto.getRandomValues(a)): string {
  return Array.from(random(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

interface Waiting {
  onItem?: (item: unknown) => void;
  resolve: (value: unknown) => void;
  reject: (e: unknown) => void;
  settled: boolean;
  /** Items go on after `done` (live changes, a followed run). */
  live: boolean;
}

let channel: Promise<string> | null = null;
let calls = 0;
const waiting = new Map<number, Waiting>();
const disconnected = new Set<() => void>();
const unauthorized = new Set<() => void>();
const LIVE: ReadonlySet<CommandName> = new Set(['watch_changes', 'follow_run']);

/** This page's stream, opened once (again after it ended); resolves with the page's name. */
function openChannel(): Promise<string> {
  if (!channel) {
    channel = (async () => {
      const page = pageId();
      const r = await fetch('/api/page', { headers: { ...authorization(), 'X-Mctl-Client': page } }).catch((e) => {
        throw new CommandError('ipc', `the server cannot be reached: ${errorMessage(e)}`);
      });
      if (!r.ok || !r.body) throw await failure(r);
      void readChannel(r.body);
      return page;
    })();
    channel.catch(() => (channel = null));
  }
  return channel;
}

async function readChannel(body: ReadableStream<Uint8Array>): Promise<void> {
  const parser = new SseParser();
  const reader = body.getReader();
  const text = new TextDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const e of parser.push(text.decode(value, { stream: true }))) deliver(e);
    }
  } catch {
    // the connection broke: the same as its end
  }
  // The server went away (or let this page go): every call waiting fails, and the next call
  // opens a new page.
  channel = null;
  const lost = new CommandError('ipc', 'the connection to the server was lost');
  for (const w of waiting.values()) if (!w.settled) w.reject(lost);
  waiting.clear();
  for (const f of disconnected) f();
}

function deliver(e: { event: string; data: string }) {
  let data: { call?: number; item?: unknown; value?: unknown; error?: unknown };
  try {
    data = JSON.parse(e.data);
  } catch {
    return;
  }
  const n = data.call ?? -1;
  const w = waiting.get(n);
  if (!w) return;
  if (e.event === 'item') {
    try {
      w.onItem?.(data.item);
    } catch (err) {
      console.error(err); // a view's failure must not stop the stream for the others
    }
  } else if (!w.settled && (e.event === 'done' || e.event === 'error')) {
    w.settled = true;
    if (!w.live || e.event === 'error') waiting.delete(n);
    if (e.event === 'done') w.resolve(data.value);
    else w.reject(isCoreError(data.error) ? new CommandError(data.error.code, data.error.message) : new CommandError('ipc', e.data));
  }
}

async function failure(r: globalThis.Response): Promise<CommandError> {
  const body: unknown = await r.json().catch(() => null);
  if (r.status === 401) {
    refused();
    const said = isCoreError(body) ? body.message : 'this needs the server\'s token';
    return new CommandError('unauthorized', said);
  }
  if (isCoreError(body)) return new CommandError(body.code, body.message);
  const said = typeof body === 'object' && body && 'message' in body ? String(body.message) : r.statusText;
  return new CommandError('ipc', `the server answered ${r.status}: ${said}`);
}

async function callHttp<K extends CommandName>(
  cmd: K,
  req: Request<K>,
  onItem?: (item: Item<K>) => void,
): Promise<Response<K>> {
  const page = await openChannel();
  const headers: Record<string, string> = { ...authorization(), 'Content-Type': 'application/json', 'X-Mctl-Client': page };
  let done: Promise<Response<K>> | null = null;
  const n = ++calls;
  if (onItem) {
    headers['X-Mctl-Call'] = String(n);
    done = new Promise<Response<K>>((resolve, reject) => {
      const w: Waiting = { onItem: onItem as (item: unknown) => void, resolve: resolve as (v: unknown) => void, reject, settled: false, live: LIVE.has(cmd) };
      waiting.set(n, w);
    });
  }
  let r: globalThis.Response;
  try {
    r = await fetch(`/api/call/${cmd}`, { method: 'POST', headers, body: JSON.stringify(req) });
  } catch (e) {
    waiting.delete(n);
    throw new CommandError('ipc', `the server cannot be reached: ${errorMessage(e)}`);
  }
  if (!r.ok) {
    waiting.delete(n);
    throw await failure(r);
  }
  return done ?? ((await r.json()) as Response<K>);
}

/** A served export as a file: the server writes it as it makes it (`GET /api/runs/{run}/export`,
 *  docs/serve.md), so a run with a value of hundreds of megabytes is never held whole there. */
async function downloadHttp(req: Request<'export_run'>): Promise<{ blob: Blob; fileName: string }> {
  const { format, values, redact } = req.options;
  const query = new URLSearchParams({ dir: req.dir, format, values, redact: String(redact) });
  let r: globalThis.Response;
  try {
    r = await fetch(`/api/runs/${encodeURIComponent(req.run)}/export?${query}`, { headers: authorization() });
  } catch (e) {
    throw new CommandError('ipc', `the server cannot be reached: ${errorMessage(e)}`);
  }
  if (!r.ok) throw await failure(r);
  return { blob: await r.blob(), fileName: exportFileName(r.headers.get('Content-Disposition'), req.run, format) };
}

/** The file name a download's `Content-Disposition: attachment; filename*=UTF-8''…` gives;
 *  the run's id when it gives none. */
export function exportFileName(disposition: string | null, run: string, format: string): string {
  const given = /filename\*=UTF-8''([^;]+)/i.exec(disposition ?? '')?.[1];
  if (given) {
    try {
      const name = decodeURIComponent(given);
      if (name && !/[\\/]/.test(name)) return name;
    } catch {
      // a malformed name: the run's id below
    }
  }
  return `${run}.${format}`;
}

export const ipc = {
  /** Whether the backend can be asked at all: always in the desktop app; a served page needs
   *  the token of the URL `mctl serve` printed (or the one its tab kept). */
  hasToken: () => !overHttp || serverToken() !== null,
  /** Calls `f` when the server refuses this tab's token (it was restarted with another, say).
   *  Returns what removes `f`. */
  onUnauthorized: (f: () => void) => {
    unauthorized.add(f);
    return () => void unauthorized.delete(f);
  },
  /** Calls `f` whenever the connection to the backend is lost (only a served page's can be):
   *  live changes and followed runs have stopped, and the next call connects again. Returns
   *  what removes `f`. */
  onDisconnect: (f: () => void) => {
    disconnected.add(f);
    return () => void disconnected.delete(f);
  },
  settings: () => call('settings', null),
  setRunsDirs: (dirs: string[]) => call('set_runs_dirs', { dirs }),
  pickRunsDir: () => call('pick_runs_dir', null),
  /** Every run: from the watcher's models (waiting for its first scan), or with `reread`
   *  every transcript read again. */
  listRuns: (reread = false) => call('list_runs', { reread }),
  /** How far the backend's listings have read since it started (polled while a list loads). */
  scanProgress: () => call('scan_progress', null),
  /** Tells the backend the first list is on screen (logged with the time since the launch);
   *  answers that time in milliseconds. */
  listPainted: () => call('list_painted', null),
  /** One run: its values compared with the transcript byte for byte, or (`sampled`) by their
   *  size and ends only, so that the run of a 200 MB value paints without that value file
   *  being compared whole (its transcript line is still read, streamed). */
  runDetail: (dir: string, run: string, verify?: DetailVerify) => call('run_detail', { dir, run, verify }),
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
  /** A run exported to share (`mctl export`), its document included. */
  exportRun: (req: Request<'export_run'>) => call('export_run', req),
  /** The same export's size and the secrets it redacts per kind, without the document. */
  exportPreview: (req: Request<'export_preview'>) => call('export_preview', req),
  /** A served page's export as a file to download, made and written by the server as it goes. */
  downloadExport: (req: Request<'export_run'>) => downloadHttp(req),
  /** The desktop app's save dialog, then the export written there; `null` when cancelled. */
  saveExport: (req: Request<'save_export'>) => call('save_export', req),
  /** Saves the Settings view's choices; answers the settings then in effect. */
  saveSettings: (saved: Request<'save_settings'>) => call('save_settings', saved),
  /** Two runs side by side, their events aligned (`mctl diff`). */
  diffRuns: (req: Request<'diff_runs'>) => call('diff_runs', req),
  /** Two tool results' texts as a line diff (`mctl diff --results`). */
  diffResults: (a: ResultRef, b: ResultRef) => call('diff_results', { a, b }),
};

// Follow tokens grow in the order the user opens runs; the backend starts over when a window
// subscribes to changes (at load), so a counter is enough.
let follows = 0;
function nextFollow(): number {
  return ++follows;
}

export type { ResultRef };
