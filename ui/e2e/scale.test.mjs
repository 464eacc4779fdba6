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

/** The median of three measurements made one after the other: one start or click on a shared
 *  virtual machine varies by half a second from the next. */
async function median3(measure) {
  const got = [];
  for (let i = 0; i < 3; i++) got.push(await measure(i));
  return got.sort((a, b) => a - b)[1];
}

/** The median of three starts of the app on `dir`, each to its first list painted; the app of
 *  the last start is left running. */
function startPaint(dir, cache, runs) {
  return median3(async (i) => {
    const ms = await firstPaint(dir, cache, runs);
    if (i < 2) await session.stop();
    return ms;
  });
}

/** Clicks run `id`'s row and answers the milliseconds, timed in the page, until the frame after
 *  a result card of its timeline is in the document has been painted; returns once the run's
 *  reads are over. */
async function clickToTimeline(browser, id) {
  await waitFor(async () => (await browser.$(`[data-run="${id}"]`)).isExisting(), `run ${id} in the list`);
  const ms = await browser.executeAsync((id, done) => {
    const row = document.querySelector(`[data-run="${id}"]`);
    const title = row.querySelector('.name').textContent;
    const shown = () =>
      document.querySelector('[data-testid="run-title"]')?.textContent === title &&
      document.querySelector('[data-testid="open-result"]');
    if (shown()) return done(-1); // open already: nothing to time
    const start = performance.now();
    const seen = new MutationObserver(() => {
      if (!shown()) return;
      seen.disconnect();
      // The next frame's callbacks run before its paint; a task queued from them runs after.
      requestAnimationFrame(() => setTimeout(() => done(performance.now() - start)));
    });
    seen.observe(document.body, { childList: true, subtree: true, attributes: true });
    delete document.documentElement.dataset.runSettled;
    row.click();
  }, id);
  assert.ok(ms >= 0, `run ${id} was open before the click`);
  // Its work over (the verdict of every byte of a 200 MB value takes a second), so that the
  // next click does not share the cores with it.
  const settled = () => browser.execute(() => document.documentElement.dataset.runSettled);
  await waitFor(async () => (await settled()) === id, `run ${id} settled`);
  return Math.round(ms);
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
    floor = await startPaint(dir, cache, 1);
    timings['launch to first list paint: 1 run (the floor)'] = floor;
    await session.stop();
  });

  it('on 5,000 runs', async () => {
    manyRuns(dir, 5_000);
    warmIndex(dir, cache, 5_000);
    const ms = await startPaint(dir, cache, 5_000);
    timings['launch to first list paint: 5,000 runs'] = ms;
    timings['5,000 runs over the floor'] = ms - floor;
    await session.stop();
  });

  it('on 50,000 runs; the run of a 200 MB value opened from the list; idle', async () => {
    manyRuns(dir, 50_000);
    bigValueRun(dir);
    warmIndex(dir, cache, 50_001);
    const ms = await startPaint(dir, cache, 50_001);
    timings['launch to first list paint: 50,000 runs'] = ms;
    timings['50,000 runs over the floor'] = ms - floor;
    const browser = session.browser;
    // Once the start has settled: the watcher's first look over, and the list read again after
    // it (a click in the second after the paint shares both cores with those).
    await sleep(3_000);
    // Timed in the page, from the click on a row to the frame after its timeline's first
    // result card is in the document, painted: what the user waits for, without WebDriver's
    // round trips and polling. First a run of four small events in the same list: the
    // floor of painting a run view here (a software renderer under Xvfb); then the big run.
    const floorRun = await browser.execute(() =>
      [...document.querySelectorAll('[data-testid="run-row"]')].map((r) => r.dataset.run).find((id) => id !== 'run_200mb_value'),
    );
    // Three clicks on each, alternating, each once the last one's work is over (its verdict of
    // every byte); the medians are printed.
    const pairs = [];
    for (let i = 0; i < 3; i++) {
      const small = await clickToTimeline(browser, floorRun);
      const big = await clickToTimeline(browser, 'run_200mb_value');
      pairs.push([small, big]);
    }
    const mid = (k) => pairs.map((p) => p[k]).sort((a, b) => a - b)[1];
    const [clickFloor, inPage] = [mid(0), mid(1)];
    timings['50,000 runs: click to the timeline of a small run (the floor of painting a run)'] = clickFloor;
    timings['50,000 runs: click to the timeline of the 200 MB value run'] = inPage;
    timings['50,000 runs: the 200 MB value run over the small one'] = inPage - clickFloor;
    // The first of each: the first run view painted after the start pays the webview's own
    // first-use costs (its script compiled, its renderer's shaders), whichever run it is.
    timings['50,000 runs: the first clicks after the start (small, 200 MB)'] = pairs[0];
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
