// Starts the installed app (MC_APP, e.g. /usr/bin/mission-control) under Xvfb through the same
// WebDriver route as the end-to-end tests, on a runs directory, and checks what a user sees:
// its window is mapped with the class its desktop entry names, and the list shows the runs
// `mctl runs` lists. Run by packaging/deb/check.sh, not by `node --test` (no .test. in the name).
//
//   node e2e/installed-app.mjs RUNS_DIR EXPECTED_RUN_IDS_JSON WM_CLASS SCREENSHOT_PNG
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expandAll } from './scenarios.mjs';
import { removeDirs, startApp, waitFor } from './session.mjs';

const [runsDir, idsFile, wmClass, shot] = process.argv.slice(2);
const ids = JSON.parse(fs.readFileSync(idsFile, 'utf8'));
const port = Number(process.env.E2E_PORT ?? 4444) + 20;

/** The top-level windows Xvfb has, as `xwininfo -tree` names them: title, instance, class. */
function windows() {
  const tree = execFileSync('xwininfo', ['-root', '-tree'], { encoding: 'utf8' });
  return [...tree.matchAll(/^\s+0x[0-9a-f]+ "([^"]*)": \("([^"]*)" "([^"]*)"\)\s+(\d+)x(\d+)/gm)].map((m) => ({
    title: m[1],
    instance: m[2],
    class: m[3],
    width: Number(m[4]),
    height: Number(m[5]),
  }));
}

const session = await startApp(runsDir, port);
try {
  const { browser } = session;
  await waitFor(async () => (await browser.$$('[data-testid="run-row"]')).length > 0, 'the runs list');
  // Subagent runs sit under their parent: shown, every run is a row.
  await expandAll(browser);
  const rows = await browser.$$('[data-testid="run-row"]');
  // Every run `mctl runs` lists that fits the window is a row, in the same order.
  const shown = [];
  for (const row of rows) shown.push(await row.getAttribute('data-run'));
  assert.ok(shown.length >= Math.min(ids.length, 5), `rows shown: ${shown.length}`);
  assert.deepEqual(shown, ids.slice(0, shown.length), 'the list shows the runs mctl lists, in its order');

  const main = windows().find((w) => w.title === 'Mission Control' && w.width >= 960);
  assert.ok(main, `a Mission Control window among ${JSON.stringify(windows())}`);
  assert.equal(main.instance, wmClass, "the window's WM_CLASS instance is the desktop entry's StartupWMClass");
  // The screenshot is of the last frame painted: wait for the rows to be in one.
  await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  await browser.saveScreenshot(shot);
  console.log(`installed app: window ${main.width}x${main.height} (${main.instance}, ${main.class}), ${shown.length} rows, screenshot ${shot}`);
} finally {
  await session.stop();
  removeDirs(path.join(runsDir, '..', `${path.basename(runsDir)}-home`));
}
