// The app at scale, each directory with a warm index (made by `mctl runs` beforehand, in the
// cache directory the app is given, as a user's earlier start made it):
// - the first list painted, from the launch of the process (the app logs it and the page keeps
//   it), on a directory of one run (the floor: starting WebKit and the webview), then on 5,000 and
//   on 50,000 archived runs; on 50,000 also the run holding a 200 MB value opened from the list,
//   and the app's CPU while nothing changes;
// - on 10,000 runs, the what-if slider's steps.
// Prints the figures (the README's Performance section quotes them); asserts what is shown.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { bigValueRun, manyRuns } from './fixtures.mjs';
import { openRun } from './scenarios.mjs';
import { app, mctl, removeDirs, sleep, startApp, waitFor } from './session.mjs';

// The release `mctl` beside the release app makes the indexes (a debug one takes a minute for
// 50,000 runs); the index is the same either way.
const releaseMctl = path.join(path.dirname(app), 'mctl');
const indexer = process.env.MCTL ? mctl : fs.existsSync(releaseMctl) ? releaseMctl : mctl;
const port = Number(process.env.E2E_PORT ?? 4444) + 4;
const timings = {};
const made = [];
let session;

/** A scratch runs directory (removed after the file) and its cache directory. */
function scratch(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mc-e2e-scale-${name}-`));
  made.push(dir, `${dir}-cache`, `${dir}-home`);
  return { dir, cache: `${dir}-cache` };
}

/** Lists `dir` with `mctl`, as a user's earlier listing did: the index is warm after. */
function warmIndex(dir, cache, runs) {
  const env = { ...process.env, MCTL_CACHE_DIR: cache, MCTL_NO_INDEX: '' };
  const listed = JSON.parse(execFileSync(indexer, ['--runs-dir', dir, 'runs', '--json'], { env, maxBuffer: 1 << 30 }));
  assert.equal(listed.length, runs);
  // What was just written goes to disk now, not while the app starts (a user's archive is not
  // being written out as the app starts on it).
  execFileSync('sync');
}

/** The CPU time (user + system, in seconds) process `pid` has used. */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Starts the app on `dir` and waits for its first list: the time from the launch of the process
 *  to the list painted, as the app measured it. Checks the count shown. */
async function firstPaint(dir, cache, runs) {
  await session?.stop(); // one app at a time, whatever the test before left
  session = await startApp(dir, port, { MCTL_CACHE_DIR: cache });
  const browser = session.browser;
  const ms = await waitFor(
    () => browser.execute(() => document.documentElement.dataset.paintedSinceStartMs),
    'the first list painted',
  );
  // The count, with or without a separator of thousands.
  const count = String(runs).replace(/\B(?=(\d{3})+$)/g, ',?');
  assert.match(await (await browser.$('[data-testid="runs-count"]')).getText(), new RegExp(`^${count}\\b`));
  // Virtualized: a page of rows, not thousands.
  const rows = (await browser.$$('[data-testid="run-row"]')).length;
  assert.ok(rows >= Math.min(runs, 5) && rows < 200, `${rows} rows in the page`);
  return Number(ms);
}

after(async () => {
  await session?.stop();
  console.log('timings (ms):', JSON.stringify(timings));
  removeDirs(...made);
});

describe('the first list painted, from the launch, with a warm index', () => {
  let floor;
  const { dir, cache } = scratch('start');

  it('on one run: the floor of starting the webview', async () => {
    manyRuns(dir, 1);
    warmIndex(dir, cache, 1);
    floor = await firstPaint(dir, cache, 1);
    timings['launch to first list paint: 1 run (the floor)'] = floor;
    await session.stop();
  });

  it('on 5,000 runs', async () => {
    manyRuns(dir, 5_000);
    warmIndex(dir, cache, 5_000);
    const ms = await firstPaint(dir, cache, 5_000);
    timings['launch to first list paint: 5,000 runs'] = ms;
    timings['5,000 runs over the floor'] = ms - floor;
    await session.stop();
  });

  it('on 50,000 runs; the run of a 200 MB value opened from the list; idle', async () => {
    manyRuns(dir, 50_000);
    bigValueRun(dir);
    warmIndex(dir, cache, 50_001);
    const ms = await firstPaint(dir, cache, 50_001);
    timings['launch to first list paint: 50,000 runs'] = ms;
    timings['50,000 runs over the floor'] = ms - floor;
    const browser = session.browser;
    // Once the start has settled: the watcher's first look over, and the list read again after
    // it (a click in the second after the paint shares both cores with those).
    await sleep(3_000);
    const started = Date.now();
    await openRun(browser, 'run_200mb_value');
    await waitFor(async () => (await browser.$('[data-testid="open-result"]')).isExisting(), 'the timeline of the big run');
    timings['50,000 runs: click to the timeline of the 200 MB value run'] = Date.now() - started;
    await waitFor(
      async () => (await (await browser.$('[data-testid="retention"]')).getText()).includes('1 value retained'),
      'the retained value',
    );
    // Nothing changing: the app's own process (its watcher of 50,000 transcripts), measured once
    // the verdict of every byte of the value (a few seconds of work) is in.
    await sleep(5_000);
    const [pid] = execFileSync('pgrep', ['-f', '--', `--runs-dir ${dir}( |$)`]).toString().trim().split('\n').map(Number);
    const before = cpuSeconds(pid);
    await sleep(10_000);
    timings['50,000 runs: idle CPU of the app process, % of a core'] = Math.round((cpuSeconds(pid) - before) * 1000) / 100;
  });
});

describe('an archive of 10,000 runs with a warm index', () => {
  const { dir, cache } = scratch('whatif');

  it('answers each what-if step after the first from the sizes it read', async () => {
    await session?.stop();
    manyRuns(dir, 10_000);
    warmIndex(dir, cache, 10_000);
    await firstPaint(dir, cache, 10_000);
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
    }, dir, steps);
    assert.equal(answers.length, steps.length);
    // Every step counts every result of the 10,000 runs, whatever the threshold.
    assert.ok(answers.every((a) => a.results === answers[0].results && a.results > 0), JSON.stringify(answers));
    assert.ok(answers[3].retained >= answers[0].retained, 'a lower threshold keeps more out');
    const later = answers.slice(1).map((a) => a.ms).sort((a, b) => a - b);
    timings['what-if, 10,000 runs: first step'] = Math.round(answers[0].ms);
    timings['what-if, 10,000 runs: each later step (median)'] = Math.round(later[Math.floor(later.length / 2)]);
  });
});
