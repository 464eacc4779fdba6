// The HTTP transport of ipc.ts (a page served by `mctl serve`), against a fake server: the page
// sends the token of its URL fragment on every request (no cookie), opens its one stream, a
// streaming call's items and end come on it by call number, a lost stream fails what waits and
// says so, and a refused token is forgotten. (Under vitest there is no Tauri: ipc uses HTTP.)
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CommandError, ipc } from './ipc';

/** The page's stream, fed by the test. */
let feed: ReadableStreamDefaultController<Uint8Array>;
const calls: { url: string; headers: Record<string, string>; body?: string }[] = [];

function send(event: string, data: unknown) {
  feed.enqueue(new TextEncoder().encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
}

vi.stubGlobal('fetch', async (url: string, init: RequestInit = {}) => {
  const headers = (init.headers ?? {}) as Record<string, string>;
  calls.push({ url, headers, body: init.body as string | undefined });
  if (url === '/api/page') {
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) });
    return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
  }
  if (url === '/api/call/list_runs') return Response.json({ dirs: [], runs: [] });
  if (url === '/api/call/set_pinned') return Response.json({ code: 'forbidden', message: 'read-only' }, { status: 403 });
  if (url === '/api/call/storage') return Response.json({ code: 'unauthorized', message: 'this needs the server\'s token' }, { status: 401 });
  return Response.json({}, { status: 202 });
});
afterAll(() => void vi.unstubAllGlobals());

const tick = () => new Promise((r) => setTimeout(r, 0));

// The page was opened at the URL `mctl serve` printed.
const TOKEN = 'ab'.repeat(32);
history.replaceState(null, '', `/#token=${TOKEN}`);

describe('ipc over HTTP', () => {
  it('sends the URL fragment\'s token on every request, and takes it out of the address bar', async () => {
    expect(ipc.hasToken()).toBe(true);
    await ipc.settings();
    expect(location.hash).toBe('');
    expect(sessionStorage.getItem('mctl-token')).toBe(TOKEN);
    expect(calls.length).toBeGreaterThan(1);
    for (const c of calls) expect(c.headers.Authorization, c.url).toBe(`Bearer ${TOKEN}`);
    expect(calls.some((c) => c.url === '/api/session')).toBe(false);
  });

  it('calls a command with the request as the body, from a named page', async () => {
    expect(await ipc.listRuns(true)).toEqual({ dirs: [], runs: [] });
    const call = calls.find((c) => c.url === '/api/call/list_runs')!;
    expect(JSON.parse(call.body!)).toEqual({ reread: true });
    const page = calls.find((c) => c.url === '/api/page')!.headers['X-Mctl-Client'];
    expect(page).toMatch(/^[0-9a-f]{32}$/);
    expect(call.headers['X-Mctl-Client']).toBe(page);
  });

  it('hands a streaming call its items from the page stream, then its response', async () => {
    const hits: unknown[] = [];
    const done = ipc.search({ dirs: ['/r'], pattern: 'x', regex: false, ignoreCase: false }, (b) => hits.push(b));
    await tick();
    const n = Number(calls.at(-1)!.headers['X-Mctl-Call']);
    expect(calls.at(-1)!.url).toBe('/api/call/search');
    send('item', { call: n + 1, item: 'not mine' });
    send('item', { call: n, item: { dir: '/r', hits: [1] } });
    send('done', { call: n, value: { hits: 1 } });
    expect(await done).toEqual({ hits: 1 });
    expect(hits).toEqual([{ dir: '/r', hits: [1] }]);
  });

  it('fails a call with the error the server gives, by code', async () => {
    const refused = await ipc.setPinned('/r', 'run', true).catch((e) => e);
    expect(refused).toBeInstanceOf(CommandError);
    expect(refused.code).toBe('forbidden');
    const failing = ipc.gcApply('/r', () => {});
    await tick();
    const n = Number(calls.at(-1)!.headers['X-Mctl-Call']);
    send('error', { call: n, error: { code: 'busy', message: 'another GC' } });
    await expect(failing).rejects.toMatchObject({ code: 'busy', message: 'another GC' });
  });

  it('keeps a live call going after done, and says when the stream is lost', async () => {
    const changes: unknown[] = [];
    let lost = 0;
    const off = ipc.onDisconnect(() => lost++);
    const watching = ipc.watchChanges((c) => changes.push(c));
    await tick();
    const n = Number(calls.at(-1)!.headers['X-Mctl-Call']);
    send('done', { call: n, value: null });
    await watching;
    send('item', { call: n, item: { kind: 'scanned', dir: '/r' } });
    const pending = ipc.search({ dirs: ['/r'], pattern: 'y', regex: false, ignoreCase: false }, () => {});
    await tick();
    feed.close();
    await expect(pending).rejects.toMatchObject({ code: 'ipc', message: 'the connection to the server was lost' });
    expect(changes).toEqual([{ kind: 'scanned', dir: '/r' }]);
    expect(lost).toBe(1);
    off();
    // The next call opens a new page.
    const pages = calls.filter((c) => c.url === '/api/page').length;
    await ipc.listRuns();
    expect(calls.filter((c) => c.url === '/api/page').length).toBe(pages + 1);
  });

  it('forgets a token the server refuses, and says so', async () => {
    let told = 0;
    const off = ipc.onUnauthorized(() => told++);
    const refused = await ipc.storage('/r').catch((e) => e);
    expect(refused).toBeInstanceOf(CommandError);
    expect(refused.code).toBe('unauthorized');
    expect(told).toBe(1);
    expect(ipc.hasToken()).toBe(false);
    expect(sessionStorage.getItem('mctl-token')).toBe(null);
    off();
  });
});
