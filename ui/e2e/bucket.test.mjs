// End-to-end: a bucket added in the app (Folder… → Add bucket…), against a real S3 server on
// loopback (s3s-fs, which scripts/setup.sh installs). The demo is pushed with `mctl push`; the
// app shows the bucket by its URL, lists its runs, opens one, follows a run pushed meanwhile,
// and remembers the URL (not its mirror) in its settings. Saves bucket-add.png and
// bucket-list.png.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { demo, liveRun } from './fixtures.mjs';
import { openRun } from './scenarios.mjs';
import { mctl, removeDirs, shots, sleep, startApp, waitFor } from './session.mjs';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-bucket-'));
const runsDir = path.join(base, 'local');
const pushed = path.join(base, 'pushed');
const store = path.join(base, 's3');
const port = Number(process.env.E2E_PORT ?? 4444) + 26;
const BUCKET = 's3://team/runs';

let server;
let session;
let browser;
let aws;

/** s3s-fs: on the PATH, or where `cargo install` puts it. */
function s3sFs() {
  const dirs = [...(process.env.PATH ?? '').split(':'), path.join(os.homedir(), '.cargo/bin')];
  const found = dirs.map((d) => path.join(d, 's3s-fs')).find((p) => fs.existsSync(p));
  if (!found) throw new Error('s3s-fs (a real S3 server) is not installed: scripts/setup.sh installs it');
  return found;
}

async function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = srv.address();
      srv.close(() => resolve(p));
    });
  });
}

function push() {
  execFileSync(mctl, ['push', pushed, BUCKET], { env: { ...process.env, ...aws, MCTL_CACHE_DIR: path.join(base, 'push-cache') }, stdio: 'ignore' });
}

const rows = () => browser.$$('[data-testid="run-row"]');
const settingsFile = () => path.join(session.home, 'config', 'app.missioncontrol.desktop', 'settings.json');

/** A screenshot once the window has drawn what the page holds: under Xvfb it repaints on its
 *  own clock, and a page changed within the last second may not be on screen yet. */
async function shot(name) {
  await sleep(1500);
  await browser.saveScreenshot(path.join(shots, name));
}

before(async () => {
  fs.mkdirSync(path.join(store, 'team'), { recursive: true });
  fs.mkdirSync(runsDir, { recursive: true });
  const s3Port = await freePort();
  server = spawn(s3sFs(), ['--host', '127.0.0.1', '--port', String(s3Port), '--access-key', 'AKTEAM', '--secret-key', 'SKTEAMSECRET', store], { stdio: 'ignore' });
  aws = {
    AWS_ACCESS_KEY_ID: 'AKTEAM',
    AWS_SECRET_ACCESS_KEY: 'SKTEAMSECRET',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL: `http://127.0.0.1:${s3Port}`,
    AWS_ALLOW_HTTP: 'true',
  };
  await waitFor(
    () => new Promise((resolve) => net.connect(s3Port, '127.0.0.1').once('connect', function () { this.end(); resolve(true); }).once('error', () => resolve(false))),
    's3s-fs listening',
  );
  demo(mctl, pushed);
  push();
  // The app starts on an empty folder; the bucket is added from the list.
  session = await startApp(runsDir, port, { ...aws, MCTL_BUCKET_POLL: '1s' });
  browser = session.browser;
  await waitFor(async () => (await browser.$('[data-testid="runs-count"]')).isExisting(), 'the first list paint');
});

after(async () => {
  await session?.stop();
  server?.kill();
  removeDirs(base, session?.home ?? `${runsDir}-home`);
});

async function addBucket(url) {
  await (await browser.$('[data-testid="add-dir"]')).click();
  await (await browser.$('[data-testid="add-bucket"]')).click();
  const input = await browser.$('[data-testid="bucket-url"]');
  await input.setValue(url);
  await (await browser.$('[data-testid="bucket-add"]')).click();
}

describe('a bucket added in the app', () => {
  it('refuses what is not a bucket URL, and says why', async () => {
    await addBucket('gs://team/runs');
    const problem = await waitFor(async () => {
      const el = await browser.$('[data-testid="bucket-problem"]');
      return (await el.isExisting()) ? el.getText() : null;
    }, 'the problem said');
    assert.match(problem, /Only s3:\/\//);
    // The backend's own check: a prefix with an empty part names no key.
    await (await browser.$('[data-testid="bucket-url"]')).setValue('s3://team/a/../runs');
    await (await browser.$('[data-testid="bucket-add"]')).click();
    await waitFor(async () => /empty|part|prefix/i.test(await (await browser.$('[data-testid="bucket-problem"]')).getText()), 'the backend refusing the URL');
    const dirs = await browser.execute(() => document.querySelectorAll('[data-testid="runs-dir"]').length);
    assert.equal(dirs, 1, 'nothing was added');
    assert.ok(!fs.existsSync(settingsFile()), 'nothing was saved');
  });

  it('shows the bucket by its URL and lists its runs', async () => {
    await (await browser.$('[data-testid="bucket-url"]')).setValue(BUCKET);
    await shot('bucket-add.png');
    await (await browser.$('[data-testid="bucket-add"]')).click();
    const want = fs.readdirSync(pushed).filter((f) => f.endsWith('.jsonl')).length;
    await waitFor(async () => (await rows()).length >= want, `the ${want} runs of the bucket`, 60_000);
    const shown = await browser.execute(() => [...document.querySelectorAll('[data-testid="runs-dir"]')].map((d) => d.textContent.trim()));
    assert.ok(shown.some((t) => t.includes(BUCKET)), `the bucket shown by its URL: ${shown.join(' | ')}`);
    assert.ok(!shown.some((t) => t.includes('/remote/')), 'never its mirror path');
    await waitFor(async () => !(await (await browser.$('[data-testid="bucket-note"]')).isExisting()), 'the first look ending');
    await shot('bucket-list.png');
  });

  it('does not add the same bucket twice', async () => {
    await addBucket(`${BUCKET}/`);
    const problem = await waitFor(async () => {
      const el = await browser.$('[data-testid="bucket-problem"]');
      return (await el.isExisting()) ? el.getText() : null;
    }, 'the bucket said to be shown already');
    assert.match(problem, /shown already/);
    await (await browser.$('[data-testid="bucket-cancel"]')).click();
    const dirs = await browser.execute(() => document.querySelectorAll('[data-testid="runs-dir"]').length);
    assert.equal(dirs, 2);
  });

  it('opens a run of the bucket', async () => {
    const first = await (await rows())[0].getAttribute('data-run');
    await openRun(browser, first);
    await waitFor(async () => (await browser.$$('[data-testid="timeline"] article')).length > 0, 'its timeline');
  });

  it('follows a run pushed meanwhile', async () => {
    liveRun(pushed, 'run_from_ci', 2);
    push();
    await waitFor(async () => (await browser.$('[data-run="run_from_ci"]')).isExisting(), 'the run pushed after the app looked', 30_000);
  });

  it('remembers the URL, never the mirror, in its settings', async () => {
    const saved = JSON.parse(fs.readFileSync(settingsFile(), 'utf8'));
    assert.deepEqual(saved.runsDirs, [runsDir, BUCKET]);
  });
});
