// The app on an archive of 10,000 runs whose index is warm (made by `mctl runs` beforehand, in
// the cache directory the app is given): how soon the list is painted. Prints timings (not
// asserted: the benchmark figures are in the README).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { manyRuns } from './fixtures.mjs';
import { mctl, removeDirs, startApp, waitFor } from './session.mjs';

const RUNS = 10_000;
const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-e2e-scale-'));
const cache = `${runsDir}-cache`;
const port = Number(process.env.E2E_PORT ?? 4444) + 4;
const timings = {};
let session;

before(() => {
  manyRuns(runsDir, RUNS);
  // The index, made as a user's earlier `mctl runs` (or an earlier start of the app) made it.
  const env = { ...process.env, MCTL_CACHE_DIR: cache, MCTL_NO_INDEX: '' };
  const listed = JSON.parse(execFileSync(mctl, ['--runs-dir', runsDir, 'runs', '--json'], { env, maxBuffer: 1 << 28 }));
  assert.equal(listed.length, RUNS);
});

after(async () => {
  await session?.stop();
  console.log('timings (ms):', JSON.stringify(timings));
  removeDirs(runsDir, cache, session?.home ?? `${runsDir}-home`);
});

describe('an archive of 10,000 runs with a warm index', () => {
  it('paints the list from the index', async () => {
    const started = Date.now();
    session = await startApp(runsDir, port, { MCTL_CACHE_DIR: cache });
    const browser = session.browser;
    await waitFor(async () => (await browser.$$('[data-testid="run-row"]')).length > 0, 'the first list paint');
    timings['driver and app start to first list paint'] = Date.now() - started;
    // The page's own clock: from its start (the webview loading the UI) to the list's rows.
    const paint = await waitFor(
      () => browser.execute(() => performance.getEntriesByName('first-list-paint')[0]?.startTime),
      'the first-list-paint mark',
    );
    timings['app: first list paint, 10,000 runs, warm index (from the page start)'] = Math.round(paint);
    timings['list_runs answered in'] = Number(await browser.execute(() => document.documentElement.dataset.listMs));
    assert.match(await (await browser.$('[data-testid="runs-count"]')).getText(), /^10,?000\b/);
    // Virtualized: a page of rows, not ten thousand.
    const rows = (await browser.$$('[data-testid="run-row"]')).length;
    assert.ok(rows > 5 && rows < 200, `${rows} rows in the page`);
  });

  it('answers each what-if step after the first from the sizes it read', async () => {
    const browser = session.browser;
    // The slider's steps, as the What-if view asks them: one threshold each.
    const steps = [20_480, 16_384, 32_768, 8_192, 65_536, 20_481];
    const answers = await browser.executeAsync(async (dir, thresholds, done) => {
      const out = [];
      for (const t of thresholds) {
        const start = performance.now();
        const [answer] = await window.__TAURI_INTERNALS__.invoke('what_if', { req: { dir, thresholds: [t] } });
        out.push({ ms: performance.now() - start, results: answer.results, retained: answer.retained });
      }
      done(out);
    }, runsDir, steps);
    assert.equal(answers.length, steps.length);
    // Every step counts every result of the 10,000 runs, whatever the threshold.
    assert.ok(answers.every((a) => a.results === answers[0].results && a.results > 0), JSON.stringify(answers));
    assert.ok(answers[3].retained >= answers[0].retained, 'a lower threshold keeps more out');
    const later = answers.slice(1).map((a) => a.ms).sort((a, b) => a - b);
    timings['what-if, 10,000 runs: first step'] = Math.round(answers[0].ms);
    timings['what-if, 10,000 runs: each later step (median)'] = Math.round(later[Math.floor(later.length / 2)]);
  });
});
