// End-to-end tests of browser mode: `mctl serve` on a demo directory, opened in Debian's
// headless chromium through chromedriver (both installed by scripts/setup.sh; nothing is
// downloaded). The same scenarios as the desktop suite where they apply: the list, a timeline,
// stub and full side by side, a peek, hostile text rendered as text, live growth; plus what
// only a server has: the token leaves the address bar, and a read-only server offers no GC.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { remote } from 'webdriverio';
import { appendLive, demo, liveRun, secretsRun } from './fixtures.mjs';
import { hostileResultState, openRun as open, rangePeek, timelineLine } from './scenarios.mjs';
import { listening, mctl, removeDirs, shots, sleep, waitFor } from './session.mjs';

const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-serve-'));
const home = `${runsDir}-home`;
// Where chromium saves what the page downloads (an export).
const downloads = `${runsDir}-downloads`;
const port = Number(process.env.E2E_PORT ?? 4444) + 16;

let server;
let driver;
let browser;
let announced;

async function text(selector) {
  return (await browser.$(selector)).getText();
}

const openRun = (id) => open(browser, id);

/** Starts `mctl serve` on a free port and resolves with the JSON line it prints. */
function serve() {
  fs.mkdirSync(home, { recursive: true });
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MCTL_')));
  server = spawn(mctl, ['--runs-dir', runsDir, 'serve', '--bind', '127.0.0.1:0', '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...env, HOME: home, XDG_CACHE_HOME: path.join(home, 'cache'), MCTL_CONFIG_DIR: path.join(home, 'mission-control') },
  });
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: server.stdout }).once('line', (line) => resolve(JSON.parse(line)));
    server.once('exit', (code) => reject(new Error(`mctl serve exited (${code})`)));
  });
}

before(async () => {
  demo(mctl, runsDir);
  liveRun(runsDir, 'run_live', 3);
  secretsRun(runsDir);
  fs.mkdirSync(downloads, { recursive: true });
  announced = await serve();
  driver = spawn('chromedriver', [`--port=${port}`], { stdio: 'ignore' });
  await listening(port);
  browser = await remote({
    hostname: '127.0.0.1',
    port,
    logLevel: 'warn',
    capabilities: {
      browserName: 'chrome',
      'wdio:enforceWebDriverClassic': true,
      'goog:chromeOptions': {
        binary: '/usr/bin/chromium',
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--window-size=1440,900', `--user-data-dir=${path.join(home, 'chromium')}`],
        prefs: { 'download.default_directory': downloads, 'download.prompt_for_download': false },
      },
    },
  });
  await browser.url(announced.url);
  await waitFor(async () => (await browser.$$('[data-testid="run-row"]')).length > 0, 'the first list paint');
});

after(async () => {
  await browser?.deleteSession().catch(() => {});
  driver?.kill();
  server?.kill('SIGTERM');
  await sleep(300);
  removeDirs(runsDir, home, downloads);
});

describe('Mission Control in a browser (mctl serve)', () => {
  it('takes the token from the URL fragment and then forgets it', async () => {
    assert.equal(announced.readOnly, true);
    assert.match(announced.bind, /^127\.0\.0\.1:\d+$/);
    const href = await browser.execute(() => location.href);
    assert.equal(href, `http://${announced.bind}/`, 'the token is no longer in the address bar');
    const cookie = await browser.execute(() => document.cookie);
    assert.equal(cookie, '', 'no cookie: the token goes in a header on every request');
  });

  it('keeps working across a reload, and a tab without the token asks for the URL', async () => {
    await browser.refresh();
    await waitFor(async () => (await browser.$$('[data-testid="run-row"]')).length > 0, 'the list after a reload');
    const mine = await browser.getWindowHandle();
    // A new tab of its own (not opened by the page): no token in its URL nor in its storage.
    const other = await browser.createWindow('tab');
    await browser.switchToWindow(other.handle);
    await browser.url(`http://${announced.bind}/`);
    const said = await waitFor(async () => {
      const el = await browser.$('[data-testid="token-needed"]');
      return (await el.isExisting()) ? el.getText() : null;
    }, 'the page asking for the URL');
    assert.match(said, /Open the URL mctl serve printed/);
    assert.equal((await browser.$$('[data-testid="run-row"]')).length, 0, 'nothing of the runs without the token');
    await browser.closeWindow();
    await browser.switchToWindow(mine);
  });

  it('lists the demo runs', async () => {
    assert.equal(Number(await text('[data-testid="runs-count"]')), 14, 'the 12 demo runs, a live one and one with secrets');
    const titles = await browser.execute(() => [...document.querySelectorAll('[data-testid="run-row"] .name')].map((e) => e.textContent));
    assert.ok(titles.some((t) => t.includes('left-pad')));
  });

  it('opens a run, a retained result beside its stub, and peeks it as the model would', async () => {
    const id = await browser.execute(() => [...document.querySelectorAll('[data-run]')].find((e) => e.textContent.includes('left-pad'))?.dataset.run);
    await openRun(id);
    await waitFor(async () => (await browser.$$('[data-testid="timeline"] article')).length > 5, 'the timeline');
    assert.match(await text('[data-testid="retention"]'), /1 value retained/);
    assert.ok(!(await (await browser.$('[data-testid="pin"]')).isEnabled()), 'no pinning on a read-only server');
    await (await browser.$('[data-testid="open-result"].primary')).click();
    const stub = await waitFor(async () => {
      const el = await browser.$('[data-testid="stub-text"]');
      return (await el.isExisting()) ? el.getText() : null;
    }, 'the stub');
    assert.match(stub, /^\[retained #toolu_01\w+\] read_file output: \d+ bytes, 15311 lines/);
    await waitFor(async () => (await text('[data-testid="full-text"] [data-line="2"]')).includes('"name": "web-console"'), 'the full text');
    const range = await rangePeek(browser, '10700-10710');
    assert.match(range, /^\[peek #toolu_01\w+: lines 10700-10710 of 15311\]/);
    assert.ok(range.includes('10705:     "node_modules/left-pad": {'));
    assert.equal(await browser.$('button=Reveal file').isExisting(), false, 'no file manager from a browser');
    await browser.saveScreenshot(path.join(shots, 'serve-browser.png'));
    await (await browser.$('[data-testid="back"]')).click();
  });

  it('renders hostile transcript text as text and runs none of it', async () => {
    const state = await hostileResultState(browser);
    assert.equal(state.pwned, null, 'no payload ran');
    assert.equal(state.scripts, 0);
    assert.equal(state.images, 0);
    assert.equal(state.handlers, false);
    assert.equal(state.href, `http://${announced.bind}/`);
    await (await browser.$('[data-testid="back"]')).click();
  });

  it('grows an open run\'s timeline while its transcript is appended to, and lists new runs', async () => {
    await openRun('run_live');
    const count = () => timelineLine(browser);
    await waitFor(async () => (await count()) === 3, 'the live run');
    for (let i = 0; i < 5; i++) {
      appendLive(runsDir, 'run_live', 3 + i);
      await sleep(150);
    }
    await waitFor(async () => (await count()) === 8, 'the appended events');
    liveRun(runsDir, 'run_appeared_live', 1);
    await waitFor(async () => (await browser.$('[data-run="run_appeared_live"]')).isExisting(), 'a new run in the list');
  });

  it('plans a collection but offers no deletion on a read-only server', async () => {
    await (await browser.$('[data-testid="open-storage"]')).click();
    await waitFor(async () => (await text('[data-testid="storage-total"]')).includes('B'), 'the storage figures');
    await (await browser.$('[data-testid="gc-orphans"]')).click();
    await waitFor(async () => (await text('[data-testid="gc-plan"]')).includes('1 files'), 'the orphan plan');
    assert.match(await text('[data-testid="read-only"]'), /Read-only/);
    assert.equal(await browser.$('[data-testid="gc-apply"]').isExisting(), false);
  });

  it('shows the server\'s settings read-only, and keeps a theme in the browser', async () => {
    await (await browser.$('[data-testid="open-settings"]')).click();
    await waitFor(async () => (await browser.$('[data-testid="settings-view"]')).isExisting(), 'the Settings view');
    assert.match(await text('[data-testid="settings-view"] header'), /the server's settings, set by the command line of mctl serve/);
    assert.equal(await browser.$('[data-testid="settings-save"]').isExisting(), false, 'nothing to save');
    assert.equal(await browser.$('[data-testid="settings-threshold"]').isEnabled(), false);
    await (await browser.$('[data-testid="theme-dark"]')).click();
    assert.equal(await browser.execute(() => document.documentElement.dataset.theme), 'dark');
    assert.equal(await browser.execute(() => localStorage.getItem('mc-theme')), 'dark');
    await (await browser.$('[data-testid="theme-system"]')).click();
    assert.equal(await browser.execute(() => localStorage.getItem('mc-theme')), 'system');
  });

  it('exports a run from its Export dialog: the secrets counted first, then downloaded redacted', async () => {
    await openRun('run_secrets');
    await (await browser.$('[data-testid="open-export"]')).click();
    const preview = await waitFor(async () => {
      const t = await text('[data-testid="export-preview"]');
      return t.startsWith('Redacts') && t;
    }, 'the export preview');
    // The key is in the message and in the title taken from it; the password in the output.
    assert.match(preview, /^Redacts 2 aws-access-key, 1 secret-assignment\. [\d.]+ KiB\.$/);
    await (await browser.$('[data-testid="export-go"]')).click();
    // Named after the run's title, as redacted: the key is not in the file's name either.
    const cli = JSON.parse(execFileSync(mctl, ['--runs-dir', runsDir, 'export', 'run_secrets', '--json'], { encoding: 'utf8' }));
    assert.match(cli.fileName, /^deploy-it-the-key-is-[a-z0-9-]+\.html$/);
    assert.ok(!cli.fileName.toLowerCase().includes('akiaiosfodnn7example'), cli.fileName);
    const file = path.join(downloads, cli.fileName);
    await waitFor(async () => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('</html>'), 'the download');
    const html = fs.readFileSync(file, 'utf8');
    assert.ok(!html.includes('AKIAIOSFODNN7EXAMPLE') && !html.includes('hunter2hunter2'), 'no secret in the file');
    assert.ok(html.includes('Secrets redacted: 2 aws-access-key, 1 secret-assignment.'));
    // What the dialog counted is what the command line counts.
    assert.deepEqual(cli.redactions, { 'aws-access-key': 2, 'secret-assignment': 1 });
    assert.equal(cli.document, html);
    await browser.keys('Escape');
  });

  // Last: it leaves the app's page.
  it('opens an export of the hostile run in the browser, and it runs nothing', async () => {
    const file = path.join(downloads, 'hostile.html');
    execFileSync(mctl, ['--runs-dir', runsDir, 'export', 'run_hostile_markup', '--values', 'full', '--out', file]);
    await browser.url(`file://${file}`);
    await sleep(500);
    const state = await browser.execute(() => ({
      pwned: window.__mc_pwned ?? null,
      scripts: document.scripts.length,
      images: document.images.length,
      frames: document.querySelectorAll('iframe, object, embed').length,
      links: document.links.length,
      handlers: [...document.querySelectorAll('*')].some((e) => [...e.attributes].some((a) => a.name.startsWith('on'))),
      text: document.body.innerText,
    }));
    assert.equal(state.pwned, null, 'no payload ran');
    assert.deepEqual([state.scripts, state.images, state.frames, state.links, state.handlers], [0, 0, 0, 0, false]);
    assert.ok(state.text.includes("<script>window.__mc_pwned='tool'</script>"), 'the payload is shown as text');
    assert.ok(state.text.includes('⟨U+202E⟩evil'), 'the right-to-left override is shown, not obeyed');
  });
});
