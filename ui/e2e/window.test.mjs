// The window's size and place: on a first start it fits the screen (here a 1024×640 screen of
// its own), and a start after that opens it where and as large as it was left.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { liveRun } from './fixtures.mjs';
import { removeDirs, sleep, startApp, waitFor } from './session.mjs';

const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-e2e-window-'));
const port = Number(process.env.E2E_PORT ?? 4444) + 22;
// A small screen of its own: the suite's is 1440×900, as large as the window's default.
const display = `:${90 + (process.pid % 50)}`;
let screen;
let session;

before(async () => {
  liveRun(runsDir, 'run_window', 2);
  screen = spawn('Xvfb', [display, '-screen', '0', '1024x640x24', '-nolisten', 'tcp'], { stdio: 'ignore' });
  await waitFor(async () => spawnSync('xdpyinfo', ['-display', display], { stdio: 'ignore' }).status === 0 || fs.existsSync(`/tmp/.X11-unix/X${display.slice(1)}`), 'the small screen');
});

after(async () => {
  await session?.stop();
  screen?.kill();
  removeDirs(runsDir, session?.home ?? `${runsDir}-home`);
});

async function start() {
  session = await startApp(runsDir, port, { DISPLAY: display });
  await waitFor(async () => (await session.browser.$$('[data-testid="run-row"]')).length > 0, 'the first list paint');
  return session.browser;
}

describe('the window', () => {
  it('fits a small screen on the first start', async () => {
    const browser = await start();
    const rect = await browser.getWindowRect();
    assert.ok(rect.width <= 1024 && rect.height <= 640, `the window fits 1024×640: ${JSON.stringify(rect)}`);
    assert.ok(rect.x >= 0 && rect.y >= 0 && rect.x + rect.width <= 1024 && rect.y + rect.height <= 640, JSON.stringify(rect));
  });

  it('opens where and as large as it was left', async () => {
    const browser = session.browser;
    const file = path.join(session.home, 'config', 'app.missioncontrol.desktop', '.window-state.json');
    const saved = () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null);
    // The state the first start saved, if any: the one after the resize is another, and the
    // last written (the first start's fit to the screen may be saved late, 400 ms after it).
    const first = saved();
    await browser.setWindowRect(20, 10, 980, 610);
    const left = await waitFor(async () => {
      const r = await browser.getWindowRect();
      return r.width === 980 && r.height === 610 ? r : null;
    }, 'the window resized');
    // The state is written a moment after a move or resize settles: it is taken once it has
    // stood for a second.
    let last = { text: saved(), since: Date.now() };
    await waitFor(async () => {
      const now = saved();
      if (now !== last.text) last = { text: now, since: Date.now() };
      return now !== null && now !== first && JSON.parse(now).main?.width > 0 && Date.now() - last.since > 1000;
    }, 'the saved state');
    await session.stop();
    const again = await start();
    const rect = await again.getWindowRect();
    assert.deepEqual([rect.x, rect.y, rect.width, rect.height], [left.x, left.y, left.width, left.height]);
  });
});
