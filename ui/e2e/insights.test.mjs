// What retention did, in the real app on a demo directory: the coverage gutter and badges of a
// value, the Retention panel, the Resume tab with its "after GC" switch, and the what-if view's
// slider, each checked against what `mctl` answers for the same directory. Saves screenshots
// (see `shots` in session.mjs).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { demo } from './fixtures.mjs';
import { mctl, removeDirs, shots, startApp, waitFor } from './session.mjs';

const runsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-e2e-insights-'));
const port = Number(process.env.E2E_PORT ?? 4444) + 6;
let session;
let browser;

/** `mctl ... --json` on the demo directory, without touching the user's index. */
function cli(...args) {
  const env = { ...process.env, MCTL_NO_INDEX: '1' };
  return JSON.parse(execFileSync(mctl, ['--runs-dir', runsDir, ...args, '--json'], { env, maxBuffer: 1 << 26 }));
}

const text = async (selector) => (await browser.$(selector)).getText();
const count = async (selector) => (await browser.$$(selector)).length;
const click = async (selector) => (await browser.$(selector)).click();

/** Opens the run whose row contains `words` (its title, and its model when the same task ran
 *  twice); its id. */
async function openRunTitled(...words) {
  const id = await waitFor(
    () => browser.execute((w) => [...document.querySelectorAll('[data-run]')].find((e) => w.every((x) => e.textContent.includes(x)))?.dataset.run, words),
    `the run "${words.join(' ')}" in the list`,
  );
  // Right after the first paint the list is painted again (the watcher's first scan): a row
  // can be replaced under the click, which is then tried again.
  await waitFor(async () => {
    await click(`[data-run="${id}"]`);
    return browser.execute((run) => document.querySelector('[title="run id"]')?.textContent === run, id);
  }, 'the run view');
  return id;
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

describe('what retention did, in the app', () => {
  it('lists every value of a run with what the model was shown of it', async () => {
    const id = await openRunTitled('The release build is failing', 'gpt-5-codex');
    const [expected] = cli('coverage', id);
    await click('[data-testid="tab-retention"]');
    const row = await waitFor(async () => {
      const el = await browser.$(`[data-testid="retention-row"][data-call="${expected.toolCallId}"]`);
      return (await el.isExisting()) ? el : null;
    }, 'the retention row');
    const cells = await row.getText();
    assert.ok(cells.includes('2.5%'), cells);
    assert.equal(expected.peeks.length, 2);
    assert.equal(expected.missedErrors.count, 1);
    assert.ok(expected.rereadLines > 0);
    // Every value sits under its header: each cell spans exactly its header's column.
    const columns = await browser.execute(() => {
      const panel = document.querySelector('[data-testid="retention-panel"]');
      const edges = (els) => [...els].map((e) => { const r = e.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; });
      return { heads: edges(panel.querySelectorAll('thead th')), cells: edges(panel.querySelector('[data-testid="retention-row"]').children) };
    });
    assert.equal(columns.cells.length, columns.heads.length);
    assert.deepEqual(columns.cells, columns.heads);
    await browser.saveScreenshot(path.join(shots, 'retention-panel.png'));
    // (WebKitWebDriver clicks a cell, not a table row.)
    await (await row.$('td')).click();
  });

  it('marks the lines the model saw in the gutter, with badges and its peeks', async () => {
    await waitFor(async () => (await count('[data-testid="coverage"]')) > 0, 'the coverage strip');
    assert.equal(await text('[data-testid="coverage-percent"]'), 'coverage 2.5%');
    assert.match(await text('[data-testid="missed-errors"]'), /^1 error-looking line never shown/);
    assert.equal(await count('[data-testid="model-peek"]'), 2);
    assert.equal(await count('[data-testid="never-peeked"]'), 0);
    // The stub's head is marked in the gutter from the first page.
    await waitFor(async () => (await count('[data-testid="full-text"] .n.seen-stub')) > 0, 'the stub lines in the gutter');
    // A peek picked highlights its lines and jumps to them, in its own shade.
    const peeks = await browser.$$('[data-testid="model-peek"]');
    await peeks[0].click();
    await waitFor(async () => (await count('[data-testid="full-text"] .row.chosen')) > 0, "the chosen peek's lines");
    assert.ok((await count('[data-testid="full-text"] .n.seen-0')) > 0);
    // The jump lands on the error nobody saw, marked as such.
    await click('[data-testid="missed-errors"]');
    const missed = await waitFor(async () => {
      const el = await browser.$('[data-testid="full-text"] .row:has(.n.missed)');
      return (await el.isExisting()) ? el.getText() : null;
    }, 'the missed error line');
    assert.match(missed, /failed on its first attempt/);
    await browser.saveScreenshot(path.join(shots, 'coverage-gutter.png'));
    await click('[data-testid="back"]');
  });

  it('says when a value was never peeked', async () => {
    await openRunTitled('Profile the invoice export');
    await click('[data-testid="open-result"].primary');
    await waitFor(async () => (await count('[data-testid="never-peeked"]')) > 0, 'the never-peeked badge');
    await click('[data-testid="back"]');
  });

  it('shows what a resume sends now and after GC', async () => {
    const id = await openRunTitled('left-pad');
    const now = cli('resume', id);
    const gone = cli('resume', id, '--without-values');
    await click('[data-testid="tab-resume"]');
    const figures = await waitFor(async () => {
      const t = await text('[data-testid="resume-figures"]').catch(() => '');
      return t.includes('message') ? t : null;
    }, 'the resume figures');
    assert.ok(figures.startsWith(`${now.messages.length} messages`), figures);
    await waitFor(async () => (await count('[data-testid="resume-stub"]')) === now.stubbed, 'the stubs marked');
    assert.ok(now.stubbed > 0);
    assert.match(await text('[data-testid="gc-cost"]'), /^GC first: \+/);
    await browser.saveScreenshot(path.join(shots, 'resume-tab.png'));
    await click('[data-testid="after-gc"]');
    await waitFor(async () => (await count('[data-testid="resume-stub"]')) === 0, 'no stub after GC');
    assert.equal(gone.stubbed, 0);
    assert.ok(gone.bytes > now.bytes);
  });

  it('moves the what-if figures with the threshold slider', async () => {
    await click('[data-testid="open-whatif"]');
    const [atDefault] = cli('whatif', '--threshold', '20480');
    const [at1k] = cli('whatif', '--threshold', '1024');
    assert.ok(at1k.retained > atDefault.retained, 'a lower threshold retains more');
    await waitFor(async () => (await text('[data-testid="whatif-retained"]').catch(() => '')) === String(atDefault.retained), 'the figures at 20,480');
    assert.equal(await text('[data-testid="threshold"]'), '20.0 KiB');
    await browser.execute(() => {
      const el = document.querySelector('[data-testid="threshold-slider"]');
      el.value = '10';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await waitFor(async () => (await text('[data-testid="whatif-retained"]')) === String(at1k.retained), 'the figures at 1 KiB');
    assert.equal(await text('[data-testid="threshold"]'), '1.0 KiB');
    // A lower threshold keeps more out of context and writes more value files.
    assert.match(await text('[data-testid="whatif-delta"]'), /^Against the default \(20,480 bytes\): [\d.]+ \w+ less in context on every resume, [\d.]+ \w+ more of value files on disk\.$/);
    // The box says where the slider is; a threshold typed in moves the slider with it.
    assert.equal(await browser.execute(() => document.querySelector('[data-testid="threshold-field"]').value), '1024');
    const [at64k] = cli('whatif', '--threshold', '65536');
    await (await browser.$('[data-testid="threshold-field"]')).setValue('65536');
    await waitFor(async () => (await text('[data-testid="whatif-retained"]')) === String(at64k.retained), 'the figures at 64 KiB');
    assert.equal(await browser.execute(() => document.querySelector('[data-testid="threshold-slider"]').value), '16');
    assert.equal(await text('[data-testid="threshold"]'), '64.0 KiB');
    // The histogram is drawn (a canvas with pixels, not an empty box).
    const drawn = await browser.execute(() => {
      const c = document.querySelector('[data-testid="whatif-chart"]');
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      return c.width > 100 && data.some((v, i) => i % 4 === 3 && v > 0);
    });
    assert.ok(drawn, 'the histogram is drawn');
    await browser.saveScreenshot(path.join(shots, 'whatif-view.png'));
  });
});
