// Search across every run, in the real app on a demo directory: Ctrl+K opens it, hits stream in
// grouped by run and call and agree with `mctl search`, a value hit opens the compare view at
// its line (highlighted), an unseen line says so, a bad regex is one line. Saves search.png.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Key } from 'webdriverio';
import { demo } from './fixtures.mjs';
import { mctl, removeDirs, shots, sleep, startApp, waitFor } from './session.mjs';

const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-e2e-search-'));
const port = Number(process.env.E2E_PORT ?? 4444) + 8;
let session;
let browser;

/** Waits until the list holds `n` hits (batches can land after the search's answer). */
const listed = (n) =>
  waitFor(async () => (await (await browser.$('[data-testid="search-results"]')).getAttribute('data-found')) === String(n), `${n} hits in the list`);

/** `mctl search ... --json` on the demo directory: its hits and summary. */
function cli(...args) {
  const env = { ...process.env, MCTL_NO_INDEX: '1' };
  let out;
  try {
    out = execFileSync(mctl, ['--runs-dir', runsDir, 'search', '--json', ...args], { env, maxBuffer: 1 << 26 });
  } catch (e) {
    out = e.stdout; // exit 1: no hits
  }
  const lines = out.toString().trim().split('\n').map((l) => JSON.parse(l));
  return { hits: lines.slice(0, -1), summary: lines[lines.length - 1] };
}

const text = async (selector) => (await browser.$(selector)).getText();
const count = async (selector) => (await browser.$$(selector)).length;

async function search(pattern) {
  const input = await browser.$('[data-testid="search-input"]');
  await input.setValue(pattern);
  // The answer for this pattern (the one before stays shown until it comes).
  return waitFor(
    () =>
      browser.execute((p) => {
        const done = [...document.querySelectorAll('[data-testid="search-count"], [data-testid="search-error"]')].find((e) => e.dataset.pattern === p);
        if (!done) return null;
        // (Not `error`: an answer with that key reads as a WebDriver error.)
        return done.dataset.testid === 'search-count' ? { count: done.textContent, problem: '' } : { count: '', problem: done.textContent };
      }, pattern),
    `the search for ${pattern}`,
  );
}

before(async () => {
  demo(mctl, runsDir);
  session = await startApp(runsDir, port);
  browser = session.browser;
  await waitFor(async () => (await count('[data-testid="run-row"]')) > 0, 'the first list paint');
});

after(async () => {
  await session?.stop();
  removeDirs(runsDir, session?.home ?? `${runsDir}-home`);
});

describe('search across every run, in the app', () => {
  it('opens on Ctrl+K with the query box focused', async () => {
    await browser.keys([Key.Ctrl, 'k']);
    await waitFor(async () => (await count('[data-testid="search-view"]')) > 0, 'the search view');
    const focused = await browser.execute(() => document.activeElement?.dataset.testid);
    assert.equal(focused, 'search-input');
  });

  it('shows the hits grouped by run and call, as many as mctl finds', async () => {
    const want = cli('FAILED');
    const got = await search('FAILED');
    assert.equal(got.problem, '');
    assert.equal(got.count, `${want.summary.hits.toLocaleString('en-US')} hits`);
    await listed(want.summary.hits);
    // Grouped: the first heading comes before the hits, each hit's match highlighted.
    assert.ok((await count('[data-testid="search-group"]')) >= 1);
    const first = await browser.execute(() => document.querySelector('[data-testid="search-results"] .item:first-child [data-testid]')?.dataset.testid);
    assert.equal(first, 'search-group');
    const marks = await browser.execute(() => [...document.querySelectorAll('[data-testid="search-hit"] mark')].map((m) => m.textContent));
    assert.ok(marks.length > 0 && marks.every((m) => m === 'FAILED'), marks.join(','));
    // A hit the model was never shown says so.
    await waitFor(async () => (await count('[data-testid="unseen"]')) > 0, 'an unseen marker');
    // It counts the runs as the list does; the demo's value folder without a run, apart.
    const listed_ = await (await browser.$('[data-testid="runs-count"]')).getText();
    const status = await (await browser.$('[data-testid="search-status"]')).getText();
    assert.ok(status.includes(` of ${listed_} runs and 1 value folder without a run `), `${status} (list: ${listed_})`);
    assert.equal(want.summary.runs, Number(listed_));
  });

  it('tells every kind of hit apart, seen or not (the screenshot)', async () => {
    const want = cli('invoice');
    const kinds = new Set(want.hits.map((h) => h.kind));
    assert.deepEqual([...kinds].sort(), ['input', 'message', 'result', 'value']);
    const got = await search('invoice');
    assert.equal(got.count, `${want.summary.hits.toLocaleString('en-US')} hits`);
    await listed(want.summary.hits);
    // Shown a screen at a time: a few hundred rows at most exist in the page.
    const rows = await waitFor(async () => {
      const n = await count('[data-testid="search-results"] .item');
      return n > 10 ? n : null;
    }, 'a screenful of hits');
    assert.ok(rows < 200, `${rows} rows in the page`);
    await browser.saveScreenshot(path.join(shots, 'search.png'));
  });

  it('lands on the line of a value hit, highlighted', async () => {
    const want = cli('invoice::tests::case_0600');
    const value = want.hits.find((h) => h.kind === 'value');
    assert.ok(value && value.seen === false, JSON.stringify(want.hits));
    await search('invoice::tests::case_0600');
    const hit = await waitFor(async () => {
      const el = await browser.$(`[data-testid="search-hit"][data-kind="value"][data-line="${value.valueLine}"]`);
      return (await el.isExisting()) ? el : null;
    }, 'the value hit');
    assert.match(await hit.getText(), /the model never saw this line/);
    await hit.click();
    const row = await waitFor(async () => {
      const el = await browser.$(`[data-testid="full-text"] .row.target[data-line="${value.valueLine}"]`);
      return (await el.isExisting()) ? el : null;
    }, 'the highlighted line in the compare view');
    assert.match(await row.getText(), /case_0600/);
    // The list selects the run the value is of; Back says where it goes.
    await waitFor(async () => (await browser.$(`[data-testid="run-row"][aria-selected="true"][data-run="${value.run}"]`).isExisting()) || null, 'the value\'s run selected in the list');
    assert.equal(await (await browser.$$('[data-testid="run-row"][aria-selected="true"]')).length, 1);
    const back = await browser.$('[data-testid="back"]');
    assert.equal(await back.getText(), '← Search results');
    // Back returns to the search: its query and hits still there.
    await back.click();
    await listed(want.summary.hits);
    assert.equal(await (await browser.$('[data-testid="search-input"]')).getValue(), 'invoice::tests::case_0600');
  });

  it('starts over on each keystroke: the last query wins', async () => {
    const want = cli('invoice');
    const input = await browser.$('[data-testid="search-input"]');
    // Keystrokes slower than the view waits for: each starts a search (one letter matches
    // nearly every line) and the next cancels it; none of their hits may stay in the list.
    await input.setValue('i');
    await sleep(400);
    await input.addValue('nv');
    await sleep(400);
    await input.addValue('oice');
    const got = await search('invoice');
    assert.equal(got.count, `${want.summary.hits.toLocaleString('en-US')} hits`);
    await listed(want.summary.hits);
    const marks = await browser.execute(() => [...document.querySelectorAll('[data-testid="search-hit"] mark')].map((m) => m.textContent));
    assert.ok(marks.length > 0 && marks.every((m) => m === 'invoice'), marks.join(','));
  });

  it('says in one line what is wrong with a regex', async () => {
    await (await browser.$('[data-testid="search-regex"]')).click();
    const got = await search('a(b');
    assert.match(got.problem, /unclosed group/);
    assert.ok(!got.problem.includes('\n'));
    await (await browser.$('[data-testid="search-regex"]')).click();
  });
});
