// End-to-end tests of the real desktop app: the release UI in the Tauri window, driven through
// WebDriver (tauri-driver over WebKitWebDriver) under Xvfb, on a `mctl demo` directory plus two
// big runs. Saves screenshots (see `shots` in session.mjs) and prints timings (not asserted).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Key } from 'webdriverio';
import { appendLive, bigValueRun, demo, escapesRun, liveRun, longRun, secretsRun } from './fixtures.mjs';
import { hostileResultState, openRun as open, rangePeek, timelineLine } from './scenarios.mjs';
import { mctl, removeDirs, shots, sleep, startApp, waitFor } from './session.mjs';

const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-e2e-'));
const timings = {};
// Another port lets two runs share a machine.
const port = Number(process.env.E2E_PORT ?? 4444);

let session;
let browser;

async function text(selector) {
  return (await browser.$(selector)).getText();
}

/** The open run's title, as the page holds it (its heading is cut to one line on screen). */
function runTitle() {
  return browser.execute(() => document.querySelector('[data-testid="run-title"]')?.textContent ?? '');
}

/** Types `value` into the runs filter (an empty value shows every run again). */
async function filterList(value) {
  await browser.execute((v) => {
    const el = document.querySelector('[data-testid="runs-filter"]');
    el.value = v;
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

const openRun = (id) => open(browser, id);

/** The pids of the web processes of the app started on `dir`: WebKit's processes under it. */
function webProcesses(dir) {
  const app = execFileSync('pgrep', ['-f', '--', `--runs-dir ${dir}( |$)`]).toString().trim().split('\n').map(Number);
  const parent = new Map();
  const names = new Map();
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      names.set(pid, stat.slice(stat.indexOf('(') + 1, close));
      parent.set(pid, Number(stat.slice(close + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const under = (pid) => {
    for (let p = parent.get(pid); p; p = parent.get(p)) if (app.includes(p)) return true;
    return false;
  };
  return [...names].filter(([pid, name]) => name.startsWith('WebKitWebProc') && under(pid)).map(([pid]) => pid);
}

/** User and system CPU ticks the processes used so far. */
function cpuTicks(pids) {
  return pids.reduce((sum, pid) => {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return sum + Number(fields[11]) + Number(fields[12]);
  }, 0);
}

/** The app's own process (its Rust side: the core, the shell and the window; WebKit's web and
 *  network processes are its children): its peak resident memory, and its file-backed and
 *  shared pages now (`RssFile` + `RssShmem`: WebKitGTK's libraries alone are over 100 MiB,
 *  fonts, the webview's shared buffers; the same for any app that shows a webview), in MiB. */
function appMemory(dir) {
  const pids = execFileSync('pgrep', ['-f', '--', `--runs-dir ${dir}( |$)`]).toString().trim().split('\n').map(Number);
  const own = pids.find((pid) => fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim().startsWith('mission-contr'));
  assert.ok(own, 'the app\'s process');
  const status = fs.readFileSync(`/proc/${own}/status`, 'utf8');
  const mib = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1]) / 1024;
  return { peak: mib('VmHWM'), libraries: mib('RssFile') + mib('RssShmem'), heap: mib('RssAnon') };
}

const ticksPerSecond = () => Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

before(async () => {
  demo(mctl, runsDir);
  longRun(runsDir);
  bigValueRun(runsDir);
  // A 1 MiB value whose file differs from its result in the middle only: a sampled check (its
  // size and ends) cannot tell, the check of every byte can.
  const mid = bigValueRun(runsDir, 'run_mid_damaged', 1);
  const midFile = path.join(runsDir, 'run_mid_damaged.values', `${mid.call}.txt`);
  const midBytes = fs.readFileSync(midFile);
  midBytes[midBytes.length >> 1] = midBytes[midBytes.length >> 1] === 0x23 ? 0x24 : 0x23;
  fs.writeFileSync(midFile, midBytes);
  liveRun(runsDir, 'run_live', 3);
  secretsRun(runsDir);
  escapesRun(runsDir);
  // The runs just written say their age in seconds, which the list rightly repaints every
  // second for a minute: written two and a half minutes ago instead (still running), the list
  // holds still and the idle check measures the page at rest.
  const recent = Date.now() - 90_000;
  for (const name of fs.readdirSync(runsDir)) {
    const file = path.join(runsDir, name);
    if (fs.statSync(file).mtimeMs > recent) fs.utimesSync(file, new Date(), new Date(Date.now() - 150_000));
  }
  const started = Date.now();
  session = await startApp(runsDir, port);
  browser = session.browser;
  await waitFor(async () => (await browser.$$('[data-testid="run-row"]')).length > 0, 'the first list paint');
  timings['driver and app start to first list paint'] = Date.now() - started;
});

after(async () => {
  await session?.stop();
  // The app kept its log where the README says, under its own home.
  const logs = path.join(session.home, 'data', 'app.missioncontrol.desktop', 'logs');
  const files = fs.readdirSync(logs).filter((f) => /^mission-control\.\d{4}-\d{2}-\d{2}\.log$/.test(f));
  const log = files.map((f) => fs.readFileSync(path.join(logs, f), 'utf8')).join('');
  // The fixtures go first: a failed check below must not leave hundreds of megabytes behind.
  removeDirs(runsDir, session.home);
  assert.ok(files.length > 0, `a log file in ${logs}`);
  // The start, step by step, with the time since the launch (INFO, the default).
  const steps = [
    /app_setup: .*close time\.busy=/,
    /app_setup: .*set up: .*since_start_ms=\d+/,
    /watch_first_look\{dirs=1\}: .*the watch is up: .*since_start_ms=\d+/,
    /list_runs\{reread=false\}: .*the list is answered .*since_start_ms=\d+/,
    /list_runs\{reread=false\}: .*close time\.busy=/,
  ];
  for (const step of steps) assert.match(log, step);
  timings['app log: launch to the first list answered'] = Number(/the list is answered .*since_start_ms=(\d+)/.exec(log)[1]);
  console.log('\nTimings (not asserted):');
  for (const [k, v] of Object.entries(timings)) console.log(`  ${k}: ${v}${k.endsWith('MiB') ? '' : ' ms'}`);
});

describe('Mission Control desktop app', () => {
  it('lists the demo runs', async () => {
    const count = await text('[data-testid="runs-count"]');
    assert.equal(Number(count), 18, 'the 12 demo runs, three big ones, a live one, one with secrets and one with escapes');
    const titles = await browser.execute(() => [...document.querySelectorAll('[data-testid="run-row"] .name')].map((e) => e.textContent));
    assert.ok(titles.some((t) => t.includes('left-pad')));
    assert.ok(titles.some((t) => t.includes('The release build is failing')));
    await browser.saveScreenshot(path.join(shots, 'runs-list.png'));
  });

  it('stays idle while nothing changes, a running run listed', async () => {
    assert.ok(await browser.execute(() => document.querySelectorAll('.dot.running').length > 0), 'a running run is listed');
    const web = webProcesses(runsDir);
    assert.ok(web.length > 0, "the app's web process is found");
    // The page at rest: the pulse of a run that started running has run out, and the web view
    // has finished starting (for about 8 s after the first paint it compiles and lays out).
    // On a loaded machine starting takes longer: up to six 10 s windows are measured, until
    // two in a row are quiet (a page that works in bursts is caught by one of the two).
    await sleep(10_000);
    const shares = [];
    for (let round = 0; round < 6; round++) {
      const before = cpuTicks(web);
      await sleep(10_000);
      shares.push((cpuTicks(web) - before) / ticksPerSecond() / 10);
      if (shares.length >= 2 && Math.max(...shares.slice(-2)) < 0.05) break;
    }
    // The busier of the last two windows.
    const share = Math.max(...shares.slice(-2));
    timings['idle web process: CPU per second, over 10 s'] = Math.round(share * 1000);
    const said = shares.map((s) => `${(s * 100).toFixed(1)} %`).join(', ');
    assert.ok(share < 0.05, `the idle web process used ${said} of a core in its last windows`);
  });

  it('says the same duration and cost in a run\'s row and in its header', async () => {
    for (const title of ['Add dark mode', 'The release build is failing', 'Which endpoints of the billing API']) {
      const id = await browser.execute((t) => [...document.querySelectorAll('[data-testid="run-row"]')].find((e) => e.textContent.includes(t))?.dataset.run, title);
      await openRun(id);
      await waitFor(async () => (await browser.$('[data-testid="elapsed"]')).isExisting(), 'the run header');
      // Read in one go (a running run's figures tick every second); a tick between reads retries.
      const agree = await waitFor(async () => {
        const f = await browser.execute((id) => ({
          rowDuration: document.querySelector(`[data-run="${id}"] [data-testid="row-duration"]`).textContent,
          header: document.querySelector('[data-testid="elapsed"]').textContent,
          rowCost: document.querySelector(`[data-run="${id}"] [data-testid="row-cost"]`).textContent,
          cost: document.querySelector('[data-testid="cost"]').textContent,
        }), id);
        return f.header.endsWith(` ${f.rowDuration}`) && f.cost === f.rowCost ? f : null;
      }, `the figures of "${title}" to agree`, 5_000);
      assert.match(agree.header, /^(running for|took) /);
    }
  });

  it('filters the list by text', async () => {
    const filter = await browser.$('[data-testid="runs-filter"]');
    // Where the sidebar's controls are: a filter that changes "18" to "1 of 18" moves none.
    const places = () =>
      browser.execute(() =>
        ['refresh', 'open-storage', 'open-whatif', 'open-search', 'runs-filter'].map((id) => {
          const r = document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect();
          return `${id} ${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)}`;
        }),
      );
    const before = await places();
    await filter.setValue('gemini');
    await waitFor(async () => (await text('[data-testid="runs-count"]')).startsWith('1 of'), 'the filtered list');
    assert.deepEqual(await places(), before, 'the sidebar header did not move');
    await filter.clearValue();
    await browser.execute(() => {
      const el = document.querySelector('[data-testid="runs-filter"]');
      el.value = '';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await waitFor(async () => (await text('[data-testid="runs-count"]')) === '18', 'the whole list again');
  });

  it('opens a run and shows its timeline', async () => {
    const id = await browser.execute(() => [...document.querySelectorAll('[data-run]')].find((e) => e.textContent.includes('left-pad'))?.dataset.run);
    await openRun(id);
    await waitFor(async () => (await browser.$$('[data-testid="timeline"] article')).length > 5, 'the timeline');
    const types = await browser.execute(() => [...document.querySelectorAll('[data-testid="timeline"] article')].map((a) => a.dataset.type));
    assert.ok(types.includes('user_message') && types.includes('tool_call_finished'));
    assert.match(await text('[data-testid="retention"]'), /1 value retained/);
    await browser.saveScreenshot(path.join(shots, 'run-timeline.png'));
  });

  it('opens a retained result: the stub the model saw beside the full text', async () => {
    const open = await browser.$('[data-testid="open-result"].primary');
    await open.click();
    const stub = await waitFor(async () => {
      const el = await browser.$('[data-testid="stub-text"]');
      return (await el.isExisting()) ? el.getText() : null;
    }, 'the stub');
    assert.match(stub, /^\[retained #toolu_01\w+\] read_file output: \d+ bytes, 15311 lines/);
    assert.equal(await text('[data-testid="value-state"]'), 'retained');
    const first = await waitFor(async () => {
      const t = await text('[data-testid="full-text"] [data-line="2"]');
      return t.includes('"name": "web-console"') ? t : null;
    }, 'the first lines of the full text').catch(async (e) => {
      await browser.saveScreenshot('/tmp/fail.png');
      console.log(await browser.execute(() => document.querySelector('[data-testid="full-text"]')?.outerHTML.slice(0, 3000)));
      throw e;
    });
    assert.match(first, /^2\s/);
  });

  it('answers a range peek and a query peek as the model would get them', async () => {
    const range = await rangePeek(browser, '10700-10710');
    const input = await browser.$('[data-testid="peek-input"]');
    assert.match(range, /^\[peek #toolu_01\w+: lines 10700-10710 of 15311\]/);
    assert.ok(range.includes('10705:     "node_modules/left-pad": {'));
    await waitFor(async () => (await browser.$$('[data-testid="full-text"] .row.peek')).length > 0, 'peeked lines highlighted');

    await (await browser.$('[data-testid="peek-mode-query"]')).click();
    await input.setValue('left-pad');
    await (await browser.$('[data-testid="peek-run"]')).click();
    const query = await waitFor(async () => {
      const t = await text('[data-testid="peek-output"]');
      return t.includes('contain') ? t : null;
    }, 'the query peek');
    assert.match(query, /^\[peek #toolu_01\w+: 1 of 15311 lines contain "left-pad"\]\n10705: /);
    await browser.saveScreenshot(path.join(shots, 'compare-view.png'));
  });

  it('gives Stub | Full the room at 1024×640, and copies lines with the word by the box', async () => {
    const room = () =>
      browser.execute(() => {
        const px = (sel) => document.querySelector(sel)?.getBoundingClientRect() ?? null;
        const titles = [...document.querySelectorAll('.pane-title')].map((t) => t.scrollHeight <= t.clientHeight + 1 && t.getBoundingClientRect().height < 32);
        return {
          overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          texts: px('[data-testid="full-text"]').height,
          console: px('[data-testid="peek-console"]').height,
          oneLineTitles: titles.every(Boolean) && titles.length === 2,
          copyBox: px('[data-testid="copy-range"]'),
          window: [window.innerWidth, window.innerHeight],
        };
      });
    const at1440 = await room();
    // With a peek answer shown, the texts still have more height than the console.
    assert.ok(at1440.texts > at1440.console, JSON.stringify(at1440));
    await browser.setWindowSize(1024, 640);
    try {
      const at1024 = await waitFor(async () => {
        const r = await room();
        return r.window[0] <= 1024 ? r : null;
      }, 'the window at 1024×640');
      assert.equal(at1024.overflow, 0, `no horizontal scrollbar: ${JSON.stringify(at1024)}`);
      assert.ok(at1024.oneLineTitles, `headers on one line: ${JSON.stringify(at1024)}`);
      assert.ok(at1024.copyBox.right <= at1024.window[0], `the copy box is whole: ${JSON.stringify(at1024)}`);
      assert.ok(at1024.texts >= at1024.console * 0.9, JSON.stringify(at1024));
      // Copying says so beside the copy box.
      await (await browser.$('[data-testid="copy-range"]')).setValue('1-3');
      await browser.keys('Enter');
      const copied = await waitFor(async () => {
        const el = await browser.$('[data-testid="copied"]');
        return (await el.isExisting()) ? el : null;
      }, 'the copy notice');
      assert.match(await copied.getText(), /^Copied lines 1-3 \(/);
      const [box, note] = await browser.execute(() => ['[data-testid="copy-range"]', '[data-testid="copied"]'].map((s) => document.querySelector(s).getBoundingClientRect().toJSON()));
      assert.ok(note.top - box.bottom < 40 && Math.abs(note.right - box.right) < 40, `beside the box: ${JSON.stringify([box, note])}`);
    } finally {
      await browser.setWindowSize(1440, 900);
    }
    await (await browser.$('[data-testid="back"]')).click();
  });

  it('renders hostile transcript text as text and runs none of it', async () => {
    const state = await hostileResultState(browser);
    assert.equal(state.pwned, null, 'no payload ran');
    assert.equal(state.scripts, 0);
    assert.equal(state.images, 0);
    assert.equal(state.handlers, false);
    assert.match(state.href, /^tauri:\/\/localhost/);
    const full = await text('[data-testid="full-text"]');
    assert.ok(full.includes('<img src=x onerror='), 'the markup shows as text');
    await (await browser.$('[data-testid="back"]')).click();
    const user = await text('[data-testid="timeline"] article[data-type="user_message"]');
    assert.ok(user.includes('<script>window.__mc_pwned'));
  });

  it('shows a right-to-left override as a mark, and obeys it nowhere', async () => {
    // In the list, the run view's title and the timeline: the mark is drawn, and `evil` after it
    // still reads left to right (with the override obeyed it would read `live`).
    const seen = await browser.execute(() => {
      const places = [
        document.querySelector('[data-run="run_hostile_markup"] .name'),
        document.querySelector('[data-testid="run-title"]'),
        document.querySelector('[data-testid="timeline"] article[data-type="user_message"]'),
      ];
      return places.map((place) => {
        const mark = place?.querySelector('.fmt');
        if (!mark) return null;
        const walker = document.createTreeWalker(place, NodeFilter.SHOW_TEXT);
        let node = walker.nextNode();
        while (node && !node.data.startsWith('evil')) node = walker.nextNode();
        if (!node) return null;
        const x = (i) => {
          const r = document.createRange();
          r.setStart(node, i);
          r.setEnd(node, i + 1);
          return r.getBoundingClientRect().left;
        };
        return {
          label: getComputedStyle(mark, '::before').content,
          copied: place.textContent.includes('\u202Eevil'),
          leftToRight: x(0) < x(1) && x(1) < x(2) && x(2) < x(3),
        };
      });
    });
    for (const [i, s] of seen.entries()) {
      assert.ok(s, `place ${i} shows the mark`);
      assert.equal(s.label, '"⟨U+202E⟩"', `place ${i}`);
      assert.ok(s.copied, `place ${i} keeps the real character for copying`);
      assert.ok(s.leftToRight, `place ${i}: "evil" is not reversed`);
    }
  });

  it('shows a coloured build log in colour, with its line numbers, and raw on request', async () => {
    const buttons = await browser.$$('[data-testid="timeline"] article[data-type="tool_call_finished"] [data-testid="open-result"]');
    await buttons[buttons.length - 1].click();
    const coloured = await waitFor(
      () => browser.execute(() => {
        const row = document.querySelector('[data-testid="full-text"] [data-line="1"]');
        const span = row?.querySelector('.sgr');
        return span ? { text: row.textContent, color: span.style.color, bold: span.classList.contains('bold') } : null;
      }),
      'the coloured first line',
    );
    assert.match(coloured.text, /^1\s+Compiling billing-core/);
    assert.ok(!coloured.text.includes('[1m'), 'no escape garbage');
    assert.ok(coloured.color && coloured.bold);
    // The failing test, in red, at its true line number.
    await (await browser.$('[data-testid="jump"]')).setValue('607');
    await browser.keys('Enter');
    const failed = await waitFor(
      () => browser.execute(() => {
        const row = document.querySelector('[data-testid="full-text"] [data-line="607"]');
        return row?.querySelector('.sgr') ? row.textContent : null;
      }),
      'line 607',
    );
    assert.match(failed, /case_0600 \.\.\. FAILED$/);
    await browser.saveScreenshot(path.join(shots, 'hostile-run.png'));
    await (await browser.$('[data-testid="show-raw"]')).click();
    await waitFor(async () => (await text('[data-testid="full-text"] [data-line="607"]')).includes('⟨ESC⟩[1;31mFAILED⟨ESC⟩[0m'), 'the raw escapes');
    await (await browser.$('[data-testid="back"]')).click();
  });

  it('shows terminal colours in messages as colours, and other escapes as marks', async () => {
    await openRun('run_escapes');
    const shown = await waitFor(async () => {
      return browser.execute(() => {
        const cards = [...document.querySelectorAll('[data-testid="timeline"] article')];
        const answer = cards.find((a) => a.dataset.type === 'assistant_message');
        if (!answer) return null;
        const red = answer.querySelector('.md span.sgr');
        return {
          text: answer.querySelector('.md').textContent,
          red: red ? [red.textContent, getComputedStyle(red).color, getComputedStyle(red.parentElement).color] : null,
          marks: [...answer.querySelectorAll('.md .ctl')].map((m) => m.textContent),
          bold: document.querySelector('[data-testid="timeline"] article[data-type="user_message"] .md .sgr-bold')?.textContent ?? null,
        };
      });
    }, 'the messages');
    assert.ok(!shown.text.includes('\u001b') && !shown.text.includes('[31m'), shown.text);
    assert.equal(shown.red[0], 'FAILED');
    assert.notEqual(shown.red[1], shown.red[2], 'coloured apart from the text around it');
    assert.deepEqual(shown.marks, ['⟨ESC[2K⟩', '⟨^G⟩']);
    assert.equal(shown.bold, 'cargo test');
  });

  it('shows where the value bytes are and collects orphans after a confirmation', async () => {
    await (await browser.$('[data-testid="open-storage"]')).click();
    await waitFor(async () => (await text('[data-testid="storage-total"]')).includes('B'), 'the storage figures');
    // Two runs of the demo share a title (the same task, two models): each has its own bar.
    const perRun = await browser.execute(() => {
      const figure = [...document.querySelectorAll('figure.bars')]
        .find((f) => f.querySelector('figcaption')?.textContent === 'Value bytes per run');
      return figure ? [...figure.querySelectorAll('.bar .label')].map((l) => l.textContent) : [];
    });
    const shared = 'The release build is failing on CI. Find out why and fix it.';
    assert.equal(perRun.filter((t) => t === shared).length, 2, `per-run bars: ${JSON.stringify(perRun)}`);
    const perRunIds = await browser.execute((shared) => [...document.querySelectorAll('[data-run]')].filter((e) => e.dataset.testid === 'run-row' && e.textContent.includes(shared.slice(0, 30))).map((e) => e.dataset.run), shared);
    assert.equal(perRunIds.length, 2, 'both rows in the runs list');
    // Older than 0.1 day (2.4 hours): both runs of the shared title are in the plan.
    await (await browser.$('[data-testid="gc-older"]')).setValue('0.1');
    const plan = await waitFor(async () => {
      const t = await text('[data-testid="gc-plan"]');
      return t.includes('resume carries again') ? t : null;
    }, 'a plan for older than 0.1 day');
    assert.match(plan, /the next resumes carry .* again/);
    // Every list of runs keeps both runs of the shared title apart (keyed by id, never by
    // title), and names them by title with the id at hand.
    const rowsOf = (testid) =>
      browser.execute((testid) => [...document.querySelectorAll(`[data-testid="${testid}"]`)].map((r) => [r.dataset.run, (r.querySelector('.run-title') ?? r.querySelector('label') ?? r).textContent.trim()]), testid);
    const twoShared = (rows, where) => {
      const ids = rows.filter(([, t]) => t === shared).map(([id]) => id);
      assert.equal(new Set(ids).size, 2, `${where}: ${JSON.stringify(rows)}`);
    };
    twoShared(await rowsOf('pin-row'), 'the Pin runs panel');
    twoShared(await rowsOf('plan-row'), 'the GC plan');
    await (await browser.$('[data-testid="gc-apply"]')).click();
    const confirm = await waitFor(
      () => browser.execute(() => {
        const items = document.querySelectorAll('[data-testid="gc-confirm-runs"] li');
        return items.length ? [...items].map((li) => li.textContent.trim()) : null;
      }),
      'the confirmation',
    );
    assert.equal(confirm.filter((l) => l.startsWith(shared)).length, 2, JSON.stringify(confirm));
    await (await browser.$('[data-testid="gc-keep"]')).click();
    await browser.saveScreenshot(path.join(shots, 'storage-view.png'));
    // Now only the orphan directory: one file.
    await (await browser.$('[data-testid="gc-older"]')).clearValue();
    await browser.execute(() => {
      const el = document.querySelector('[data-testid="gc-older"]');
      el.value = '';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await (await browser.$('[data-testid="gc-orphans"]')).click();
    await waitFor(async () => (await text('[data-testid="gc-plan"]')).includes('1 files'), 'the orphan plan');
    const orphanDir = path.join(runsDir, 'run_1790000000000_deadbeef.values');
    assert.ok(fs.existsSync(orphanDir), 'nothing is deleted before the confirmation');
    await (await browser.$('[data-testid="gc-apply"]')).click();
    await (await browser.$('[data-testid="gc-confirm"]')).click();
    const result = await waitFor(async () => {
      const el = await browser.$('[data-testid="gc-result"]');
      return (await el.isExisting()) ? el.getText() : null;
    }, 'the GC result');
    assert.match(result, /Deleted 1 file \(/);
    assert.ok(!fs.existsSync(orphanDir), 'the orphan directory is gone');
    // The audit log of the app's config directory names the file it deleted.
    const audit = fs.readFileSync(path.join(session.home, 'mission-control', 'gc-audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(audit.length, 1);
    assert.equal(path.basename(path.dirname(audit[0].path)), 'run_1790000000000_deadbeef.values');
    assert.equal(audit[0].reason, 'orphan');
  });

  it('grows an open run\'s timeline while its transcript is appended to, and lists new runs', async () => {
    await openRun('run_live');
    const count = () => timelineLine(browser);
    await waitFor(async () => (await count()) === 3, 'the live run');
    for (let i = 0; i < 5; i++) {
      appendLive(runsDir, 'run_live', 3 + i);
      await sleep(150);
    }
    const started = Date.now();
    await waitFor(async () => (await count()) === 8, 'the appended events');
    timings['appended event to timeline (after the last append)'] = Date.now() - started;
    liveRun(runsDir, 'run_appeared_live', 1);
    await waitFor(async () => (await browser.$('[data-run="run_appeared_live"]')).isExisting(), 'a new run in the list');
  });

  it('opens a stray value file and peeks it exactly as mctl peek does', async (t) => {
    t.after(() => filterList(''));
    await filterList('invoice module');
    const id = await waitFor(
      () => browser.execute(() => [...document.querySelectorAll('[data-run]')].find((e) => e.textContent.includes('Refactor the invoice module'))?.dataset.run),
      'the invoice refactoring run',
    );
    await openRun(id);
    const stray = await waitFor(async () => {
      const el = await browser.$('[data-stray="toolu_00stray.txt"]');
      return (await el.isExisting()) ? el : null;
    }, 'the stray value file in the run header');
    await stray.click();
    await waitFor(async () => (await text('[data-testid="value-state"]')) === 'stray', 'the stray opened');
    await (await browser.$('[data-testid="peek-mode-query"]')).click();
    await (await browser.$('[data-testid="peek-input"]')).setValue('FAILED');
    await (await browser.$('[data-testid="peek-run"]')).click();
    const shown = await waitFor(async () => {
      const t = await text('[data-testid="peek-output"]');
      return t.includes('contain') ? t : null;
    }, 'the stray peek');
    const cli = JSON.parse(execFileSync(mctl, ['--runs-dir', runsDir, 'peek', id, 'toolu_00stray', '--query', 'FAILED', '--json'], { encoding: 'utf8' }));
    assert.equal(cli.source, 'file');
    assert.equal(shown.trim(), cli.text.trim());
    await (await browser.$('[data-testid="back"]')).click();
  });

  it('shows value files removed by another process as unretained, in the run and in the list', async (t) => {
    t.after(() => filterList(''));
    await filterList('invoice module'); // the list is virtualized: this old run may be out of view
    const id = await waitFor(
      () => browser.execute(() => [...document.querySelectorAll('[data-run]')].find((e) => e.textContent.includes('Refactor the invoice module'))?.dataset.run),
      'the invoice refactoring run',
    );
    await openRun(id);
    // The demo run has a retained result, an unretained one and a damaged one (its file differs
    // from the result): with the files gone, all three are unretained.
    await waitFor(async () => (await text('[data-testid="retention"]')).includes('1 value retained'), 'the retained value');
    const values = path.join(runsDir, `${id}.values`);
    const files = fs.readdirSync(values).filter((f) => f.endsWith('.txt'));
    assert.ok(files.length > 0);
    // What a GC in another window or `mctl gc` does: the files go, the directory stays.
    for (const f of files) fs.rmSync(path.join(values, f));
    const started = Date.now();
    await waitFor(async () => {
      const t = await text('[data-testid="retention"]');
      return t.includes('0 values retained') && t.includes('3 unretained') && !t.includes('on disk');
    }, 'the run view to say the value is unretained');
    timings['value file removed to run view updated'] = Date.now() - started;
    await waitFor(async () => !(await browser.$(`[data-run="${id}"] .badge.retained`).isExisting()), 'the list row without its retained badge');
  });

  it('nests a subagent run under its parent, and opens each from the other', async () => {
    const parent = await browser.execute(() => [...document.querySelectorAll('[data-run]')].find((e) => e.textContent.includes('Upgrade our dependencies'))?.dataset.run);
    const child = `sub_${parent}_toolu_04${parent.slice(-6)}`;
    // Collapsed: the parent says how many runs are under it, and the child is no row.
    assert.equal(await text(`[data-run="${parent}"] [data-toggle]`), '▸ 1');
    assert.equal(await browser.$(`[data-run="${child}"]`).isExisting(), false);
    await openRun(parent);
    // The call is far down a virtualized timeline: scroll until its card is there, and click
    // it in the same step. (The timeline re-renders as it scrolls: a reference to the card
    // taken in one step may be gone by the next, and a pointer click may miss it.)
    await waitFor(async () => browser.execute(() => {
      const el = document.querySelector('[data-testid="open-subagent"]');
      if (!el) {
        const s = document.querySelector('[data-testid="timeline"]');
        s.scrollTop += s.clientHeight / 2;
        return false;
      }
      el.scrollIntoView({ block: 'center' });
      el.click();
      return true;
    }), 'the subagent tool call');
    await waitFor(async () => (await runTitle()) === 'Which dependency requires left-pad?', 'the child run');
    // The list shows it now, one level under its parent.
    await waitFor(async () => (await browser.$(`[data-run="${child}"]`).getAttribute('data-depth').catch(() => null)) === '1', 'the child row, nested');
    assert.equal(await text(`[data-run="${parent}"] [data-toggle]`), '▾ 1');
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'subagent-tree.png'));
    await (await browser.$('[data-testid="parent-run"]')).click();
    await waitFor(async () => (await runTitle()).startsWith('Upgrade our dependencies'), 'the parent run');
    assert.equal(await (await browser.$('[data-testid="child-run"]')).getAttribute('data-child'), child);
    // Collapsing hides the child row again.
    await (await browser.$(`[data-run="${parent}"] [data-toggle]`)).click();
    await waitFor(async () => !(await browser.$(`[data-run="${child}"]`).isExisting()), 'the child row hidden');
  });

  it('jumps between user messages and to the next error, marks the minimap, and lists every key on ?', async () => {
    const byTitle = (w) => browser.execute((w) => [...document.querySelectorAll('[data-run]')].find((e) => e.textContent.includes(w))?.dataset.run, w);
    // The event jumped to: its type and line.
    const focused = () =>
      browser.execute(() => {
        const a = document.querySelector('[data-testid="timeline"] .item.focused article');
        return a ? `${a.dataset.type}@${a.dataset.line}` : null;
      });
    await openRun(await byTitle('What does the `useSession` hook do?'));
    await waitFor(async () => (await browser.$$('[data-testid="timeline"] article')).length > 5, 'the timeline');
    await browser.keys([Key.Shift, 'j']);
    const first = await waitFor(focused, 'the first user message');
    assert.match(first, /^user_message@/);
    await browser.keys([Key.Shift, 'j']);
    const second = await waitFor(async () => ((await focused()) !== first ? focused() : null), 'the second user message');
    assert.match(second, /^user_message@/);
    await browser.keys([Key.Shift, 'k']);
    await waitFor(async () => (await focused()) === first, 'back to the first');
    // The highlight is drawn on the card itself, not on the wider row around it.
    assert.equal(await browser.execute(() => getComputedStyle(document.querySelector('[data-testid="timeline"] .item.focused article')).outlineStyle), 'solid');
    // Past the last user message, Shift+J says there is none rather than doing nothing.
    let said = null;
    for (let i = 0; i < 20 && !said; i++) {
      await browser.keys([Key.Shift, 'j']);
      said = await browser.execute(() => document.querySelector('[data-testid="jump-nowhere"]')?.textContent ?? null);
    }
    assert.equal(said, 'No later user message.');

    await openRun(await byTitle('The release build is failing on CI'));
    await waitFor(async () => (await runTitle()).startsWith('The release build'), 'the failing run');
    await browser.keys([Key.Shift, 'e']);
    const error = await waitFor(focused, 'the next error');
    assert.match(error, /^tool_call_finished@/);
    assert.equal(await browser.execute(() => document.querySelector('.item.focused .badge.error')?.textContent), 'error', 'a failed result');
    // The minimap marks it, and its tool calls.
    const kinds = () => browser.execute(() => [...document.querySelectorAll('[data-testid="minimap"] .mark')].map((m) => m.dataset.kind));
    assert.ok((await kinds()).includes('error') && (await kinds()).includes('tool'), (await kinds()).join());
    // A retained value's mark goes to it on a click.
    await openRun(await byTitle('Upgrade our dependencies'));
    await waitFor(async () => (await kinds()).includes('retained'), 'the retained value on the minimap');
    await browser.execute(() => document.querySelector('[data-testid="minimap"] .mark[data-kind="retained"]').click());
    await waitFor(async () => (await focused())?.startsWith('tool_call_finished@'), 'the retained value');
    assert.equal(await browser.execute(() => document.querySelector('.item.focused [data-testid="state"]')?.textContent), 'retained');

    await browser.keys('?');
    const help = await waitFor(async () => {
      const el = await browser.$('[data-testid="keys-help"]');
      return (await el.isExisting()) ? el.getText() : null;
    }, 'the keys help');
    assert.ok(help.includes('next user message') && help.includes('next error') && help.includes('search every run'));
    // Every group's keys and descriptions line up in the same two columns.
    const lefts = await browser.execute(() => [...new Set([...document.querySelectorAll('[data-testid="keys-help"] dd')].map((d) => Math.round(d.getBoundingClientRect().left)))]);
    assert.equal(lefts.length, 1, `description columns at ${lefts.join(', ')}`);
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'keys-help.png'));
    await browser.keys('Escape');
    await waitFor(async () => !(await (await browser.$('[data-testid="keys-help"]')).isExisting()), 'the help to close');
  });

  it('marks where new events began since a running run was last looked at', async () => {
    liveRun(runsDir, 'run_unread', 3);
    await openRun('run_unread');
    await waitFor(async () => (await browser.$$('[data-testid="timeline"] article')).length === 3, 'the run');
    assert.equal(await browser.$('[data-testid="unread"]').isExisting(), false, 'nothing unread on a first look');
    await openRun('run_secrets');
    await waitFor(async () => (await runTitle()).startsWith('Deploy it'), 'another run');
    appendLive(runsDir, 'run_unread', 3);
    appendLive(runsDir, 'run_unread', 4);
    await openRun('run_unread');
    await waitFor(async () => (await browser.$$('[data-testid="timeline"] article')).length === 5, 'the grown run');
    const at = await waitFor(
      () => browser.execute(() => document.querySelector('[data-testid="unread"]')?.closest('.item')?.querySelector('article')?.dataset.line ?? null),
      'the unread line',
    );
    assert.equal(at, '4', 'the line sits before the first event added since');
  });

  it('says in its About box which version runs and where its logs are', async () => {
    await (await browser.$('[data-testid="open-about"]')).click();
    const version = await waitFor(async () => {
      const t = await text('[data-testid="about-version"]');
      return t.length > 0 && t;
    }, 'the About box');
    // The same version and commit as `mctl --version` of this build.
    const mctlVersion = execFileSync(mctl, ['--version'], { encoding: 'utf8' }).trim();
    assert.equal(`mctl ${version}`, mctlVersion);
    const logs = path.join(session.home, 'data', 'app.missioncontrol.desktop', 'logs');
    assert.ok((await text('[data-testid="about-logs"]')).includes(logs), `the log directory ${logs}`);
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'about-box.png'));
    await browser.keys('Escape');
    await waitFor(async () => !(await (await browser.$('[data-testid="about"]')).isExisting()), 'the About box to close');
  });

  it('shows what an export redacts before it writes anything', async () => {
    await openRun('run_secrets');
    await (await browser.$('[data-testid="open-export"]')).click();
    const preview = async () => text('[data-testid="export-preview"]');
    await waitFor(async () => (await preview()).startsWith('Redacts 2 aws-access-key, 1 secret-assignment.'), 'the redaction counts');
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'export-dialog.png'));
    // Without redaction the dialog warns; without results only the message's key is left.
    await (await browser.$('[data-testid="export-redact"]')).click();
    await waitFor(async () => (await preview()).startsWith('Secrets will NOT be redacted.'), 'the warning');
    await (await browser.$('[data-testid="export-redact"]')).click();
    await (await browser.$('[data-testid="export-values"]')).selectByAttribute('value', 'none');
    await waitFor(async () => (await preview()).startsWith('Redacts 2 aws-access-key.'), 'the counts without results');
    await browser.keys('Escape');
    await waitFor(async () => !(await (await browser.$('[data-testid="export-dialog"]')).isExisting()), 'the dialog to close');
  });

  it('sets two runs of the same task side by side and diffs their results', async () => {
    const ids = await browser.execute(() =>
      Object.fromEntries([...document.querySelectorAll('[data-run]')].filter((e) => e.textContent.includes('The release build is failing')).map((e) => [e.textContent.includes('gpt-5-codex') ? 'codex' : 'sonnet', e.dataset.run])),
    );
    await openRun(ids.codex);
    await (await browser.$('[data-testid="open-diff"]')).click();
    // Run B is asked for: the run of the same task comes first, marked so.
    const first = await waitFor(async () => (await browser.$$('[data-testid="diff-candidate"]'))[0] ?? null, 'the runs offered as B');
    assert.equal(await first.getAttribute('data-run'), ids.sonnet);
    assert.match(await first.getText(), /same task/);
    // The picker names run A by its title, and offers the other run of that title as B.
    assert.equal(await text('[data-testid="diff-a-title"]'), 'The release build is failing on CI. Find out why and fix it.');
    assert.match(await browser.execute((el) => el.textContent, first), /The release build is failing on CI/);
    await first.click();
    const statuses = () => browser.execute(() => [...document.querySelectorAll('[data-testid="diff-row"]')].map((r) => `${r.dataset.kind} ${r.dataset.status}`));
    await waitFor(async () => (await statuses()).length === 9, 'the aligned rows');
    // What `mctl diff` says of the same two runs (its golden file pins it).
    assert.deepEqual(await statuses(), ['user same', 'tool same', 'tool differs', 'tool only-a', 'tool same', 'tool only-b', 'tool differs', 'tool same', 'answer differs']);
    assert.match(await text('[data-testid="diff-counts"]'), /4 rows the same · 3 differ \(1 result\) · 1 only in A · 1 only in B/);
    // (A table row's getText is empty here: its text is read from the page.)
    const cost = await browser.execute(() => [...document.querySelectorAll('[data-figure="Cost"] td')].map((td) => td.textContent));
    assert.deepEqual(cost, ['$0.04', '$0.11', '+$0.07 (+150%)']);
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'run-diff.png'));
    // Only the differences: the four rows the same go.
    await (await browser.$('[data-testid="diff-only"]')).click();
    await waitFor(async () => (await statuses()).length === 5, 'only the rows that differ');
    // The two peeks' results as a text diff: the log's last lines against the lines with "error[".
    await (await browser.$('[data-testid="diff-row"][data-status="differs"] [data-testid="diff-open-text"]')).click();
    await waitFor(async () => (await browser.$$('[data-testid="text-diff-line"]')).length > 5, 'the text diff');
    const summary = await text('[data-testid="text-diff-summary"]');
    assert.match(summary, /^−\d+ lines \+\d+ lines?$/);
    const lines = await browser.execute(() => [...document.querySelectorAll('[data-testid="text-diff-line"]')].map((l) => `${l.dataset.kind} ${l.textContent.replace(/\s+/g, ' ').trim()}`));
    assert.ok(lines[0].startsWith('hunk @@ −1,'), lines[0]);
    assert.ok(lines.some((l) => l.startsWith('context') && l.includes('1893: error[E0308]: mismatched types')), lines.join('\n'));
    assert.ok(lines.some((l) => l.startsWith('removed') && l.includes('could not compile')), lines.join('\n'));
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'result-diff.png'));
    // Esc closes the text diff first, then (below) the Diff view.
    await browser.keys('Escape');
    await waitFor(async () => !(await browser.$('[data-testid="text-diff"]').isExisting()), 'the text diff to close');
    assert.ok(await browser.$('[data-testid="diff-view"]').isExisting(), 'the Diff view still open');
    // Swapping sides swaps the marks of the rows on one side only.
    await (await browser.$('[data-testid="diff-swap"]')).click();
    await waitFor(async () => (await statuses()).join() === ['tool differs', 'tool only-b', 'tool only-a', 'tool differs', 'answer differs'].join(), 'the swapped diff');
    await browser.keys('Escape');
    await waitFor(async () => !(await browser.$('[data-testid="diff-view"]').isExisting()), 'the Diff view to close');
  });

  it('opens a run of 10,000 events', async () => {
    const started = Date.now();
    await openRun('run_10000_events');
    await waitFor(async () => (await text('[data-testid="retention"]')).includes('Nothing retained: the model saw every result whole.') && (await browser.$$('[data-testid="timeline"] article')).length > 3, 'the long timeline');
    timings['opening a 10,000-event run'] = Date.now() - started;
    const rendered = (await browser.$$('[data-testid="timeline"] article')).length;
    assert.ok(rendered < 100, `virtualized: ${rendered} cards in the page`);
  });

  it('paints a run from a sample of its values, then shows the verdict of every byte', async () => {
    await openRun('run_mid_damaged');
    await waitFor(async () => (await text('[data-testid="retention"]')).includes('1 damaged'), 'the value found damaged by the check of every byte');
  });

  it('opens a 200 MB value from its file, then checks every byte, and scrolls it', async () => {
    let started = Date.now();
    await openRun('run_200mb_value');
    const open = await waitFor(async () => {
      const el = await browser.$('[data-testid="open-result"]');
      return (await el.isExisting()) ? el : null;
    }, 'the big result');
    timings['opening the run of a 200 MB value'] = Date.now() - started;
    started = Date.now();
    await open.click();
    await waitFor(
      async () =>
        (await text('[data-testid="full-text"] [data-line="1"]')).includes('INFO worker-0') &&
        (await text('[data-testid="stub-text"]')).startsWith('[retained #'),
      'the stub and the first page of the big value',
      120_000,
    );
    timings['200 MB value: click to stub and first page painted'] = Date.now() - started;
    // The sampled verdict is said as such until every byte has been compared.
    await waitFor(async () => !(await (await browser.$('[data-testid="verifying"]')).isExisting()), 'the check of every byte', 120_000);
    timings['200 MB value: click to the verdict of every byte'] = Date.now() - started;
    assert.equal(await text('[data-testid="value-state"]'), 'retained');
    await (await browser.$('[data-testid="jump"]')).setValue('2000000');
    await browser.keys('Enter');
    await waitFor(async () => (await text('[data-testid="full-text"] [data-line="2000000"]')).includes('handled request 999'), 'line 2,000,000');
    // Memory follows what is shown: the whole session so far, this 200 MB value and its
    // transcript line included, held at most 200 MiB on the Rust side (its peak less the
    // libraries' pages, which any WebKitGTK app maps).
    const mem = appMemory(runsDir);
    timings['app process peak RSS after the 200 MB value, MiB'] = Math.round(mem.peak);
    timings['of which the libraries mapped, MiB'] = Math.round(mem.libraries);
    timings['app heap (anonymous) now, MiB'] = Math.round(mem.heap);
    const own = mem.peak - mem.libraries;
    timings['app (Rust side) peak, MiB'] = Math.round(own);
    assert.ok(own <= 200, `the app peaked at ${own.toFixed(1)} MiB beside its libraries`);
  });
  // Last: a saved threshold restarts the watch, whose rescan would slow the timed tests above.
  it('saves settings, applies those the command line leaves, and says which it decides', async () => {
    const codex = await browser.execute(() => [...document.querySelectorAll('[data-run]')].find((e) => e.textContent.includes('The release build is failing') && e.textContent.includes('gpt-5-codex'))?.dataset.run);
    await openRun(codex);
    await waitFor(async () => /1 value retained/.test(await text('[data-testid="retention"]')), 'the run at the default threshold');
    assert.doesNotMatch(await text('[data-testid="retention"]'), /unretained/);
    await (await browser.$('[data-testid="open-settings"]')).click();
    const source = (name) => browser.execute((n) => document.querySelector(`[data-testid="source-${n}"]`)?.dataset.source, name);
    await waitFor(async () => (await source('threshold')) === 'default', 'the Settings view');
    // The app was started with --runs-dir: that wins, and the view says so.
    assert.equal(await source('runsDirs'), 'cli');
    assert.match(await text('[data-testid="source-runsDirs"]'), /^Set by --runs-dir on the command line: it wins/);
    // (clearValue fires no input event here: the value is set and the event sent.)
    const set = (id, value) =>
      browser.execute(
        (id, v) => {
          const el = document.querySelector(`[data-testid="${id}"]`);
          el.value = v;
          el.dispatchEvent(new Event('input', { bubbles: true }));
        },
        id,
        value,
      );
    await set('settings-threshold', 'big');
    await (await browser.$('[data-testid="settings-save"]')).click();
    assert.match(await text('[data-testid="settings-error"]'), /is not a size above 0/);
    await set('settings-threshold', '8KiB');
    await set('settings-running-window', '90');
    await (await browser.$('[data-testid="theme-dark"]')).click();
    await (await browser.$('[data-testid="settings-save"]')).click();
    await waitFor(async () => (await source('threshold')) === 'saved', 'the saved threshold in effect');
    assert.match(await text('[data-testid="source-threshold"]'), /^In effect: 8\.0 KiB \(8,192 bytes\)\. Saved here\./);
    assert.match(await text('[data-testid="source-runningWindow"]'), /^In effect: 1h 30m\. Saved here\./);
    assert.equal(await browser.execute(() => document.documentElement.dataset.theme), 'dark');
    await waitFor(async () => (await text('[data-testid="refresh"]')) === 'Refresh', 'the runs read again');
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'settings.png'));
    // Saved where the app keeps its settings, whole.
    const file = path.join(session.home, 'config', 'app.missioncontrol.desktop', 'settings.json');
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.deepEqual([saved.threshold, saved.runningWindowMs, saved.theme], [8192, 5_400_000, 'dark']);
    assert.deepEqual(saved.runsDirs, [], 'the directories --runs-dir gives are not saved');
    // The runs are read at the new threshold: the 14.9 KiB file read is over it, with no value file.
    await openRun(codex);
    await waitFor(async () => /1 unretained/.test(await text('[data-testid="retention"]')), 'the run read at 8 KiB');
    // Back to the defaults, for the tests after this one.
    await (await browser.$('[data-testid="open-settings"]')).click();
    await waitFor(async () => (await source('threshold')) === 'saved', 'the Settings view again');
    await set('settings-threshold', '');
    await set('settings-running-window', '');
    await (await browser.$('[data-testid="theme-system"]')).click();
    await (await browser.$('[data-testid="settings-save"]')).click();
    await waitFor(async () => (await source('threshold')) === 'default', 'the default threshold again');
    assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).threshold, null);
    await openRun(codex);
    await waitFor(async () => !/unretained/.test(await text('[data-testid="retention"]')), 'the run at the default threshold again');
  });
});
