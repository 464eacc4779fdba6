// The app on a runs directory it is told to poll (as for a network share written by another
// machine, `MCTL_WATCH=poll`): it says so, and still follows the runs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { appendLive, liveRun } from './fixtures.mjs';
import { removeDirs, shots, startApp, waitFor } from './session.mjs';

const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-e2e-poll-'));
// Beside the ports of app.test.mjs.
const port = Number(process.env.E2E_PORT ?? 4444) + 2;
let session;
let browser;

before(async () => {
  liveRun(runsDir, 'run_polled', 2);
  session = await startApp(runsDir, port, { MCTL_WATCH: 'poll' });
  browser = session.browser;
  await waitFor(async () => (await browser.$$('[data-testid="run-row"]')).length > 0, 'the first list paint');
});

after(async () => {
  await session?.stop();
  removeDirs(runsDir, session?.home ?? `${runsDir}-home`);
});

describe('a polled runs directory', () => {
  it('says it is polled, and why', async () => {
    const notice = await waitFor(async () => {
      const el = await browser.$('[data-testid="polling-notice"]');
      return (await el.isExisting()) ? el.getText() : null;
    }, 'the polling notice');
    assert.ok(notice.includes(runsDir), notice);
    assert.match(notice, /polled every 500 ms instead of watched: polling was asked for \(MCTL_WATCH=poll\)/);
    await browser.saveScreenshot(path.join(shots, 'polling-notice.png'));
  });

  it('still grows the open run and lists new runs', async () => {
    await (await browser.$('[data-run="run_polled"]')).click();
    const last = () => browser.execute(() => Math.max(0, ...[...document.querySelectorAll('[data-testid="timeline"] article')].map((a) => Number(a.dataset.line))));
    await waitFor(async () => (await last()) === 2, 'the polled run');
    appendLive(runsDir, 'run_polled', 2);
    appendLive(runsDir, 'run_polled', 3);
    await waitFor(async () => (await last()) === 4, 'the appended events, by polling');
    liveRun(runsDir, 'run_polled_new', 1);
    await waitFor(async () => (await browser.$('[data-run="run_polled_new"]')).isExisting(), 'a new run in the list');
  });
});
