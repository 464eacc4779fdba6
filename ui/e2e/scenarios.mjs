// Steps the desktop suite (app.test.mjs) and the browser-mode suite (serve.test.mjs) both take:
// the same UI, driven the same way, whatever carries its commands.
import { sleep, waitFor } from './session.mjs';

/** Clicks run `id` in the list, once it is there. */
export async function openRun(browser, id) {
  const row = await waitFor(async () => {
    const el = await browser.$(`[data-run="${id}"]`);
    return (await el.isExisting()) ? el : null;
  }, `run ${id} in the list`);
  await row.click();
}

/** Shows every subagent run in the list: expands each run with runs under it, until none is
 *  left collapsed. */
export async function expandAll(browser) {
  for (let i = 0; i < 50; i++) {
    const closed = await browser.$$('[data-toggle][data-expanded="false"]');
    if (closed.length === 0) return;
    await closed[0].click();
    await sleep(50);
  }
  throw new Error('runs still collapsed after 50 clicks');
}

/** The highest event line of the timeline shown (0 for none). */
export function timelineLine(browser) {
  return browser.execute(() => Math.max(0, ...[...document.querySelectorAll('[data-testid="timeline"] article')].map((a) => Number(a.dataset.line))));
}

/** Runs a range peek `range` ("A-B") in the compare view and returns what it answered. */
export async function rangePeek(browser, range) {
  await (await browser.$('[data-testid="peek-mode-range"]')).click();
  await (await browser.$('[data-testid="peek-input"]')).setValue(range);
  await (await browser.$('[data-testid="peek-run"]')).click();
  return waitFor(async () => {
    const t = await (await browser.$('[data-testid="peek-output"]')).getText();
    return t.startsWith('[peek #') ? t : null;
  }, 'the range peek');
}

/** Opens the hostile demo run's result, waits for its markup to show as text, and returns what
 *  the page holds then: whether a payload ran, inline scripts, images and frames, inline event
 *  handlers, and where the page is. */
export async function hostileResultState(browser) {
  await openRun(browser, 'run_hostile_markup');
  await waitFor(async () => (await browser.$$('[data-testid="timeline"] article')).length > 3, 'the hostile timeline');
  await (await browser.$('[data-testid="open-result"]')).click();
  await waitFor(async () => (await browser.$('[data-testid="stub-text"]')).isExisting(), 'the hostile stub');
  await waitFor(async () => (await (await browser.$('[data-testid="full-text"] [data-line="1"]')).getText()).includes('<script>'), 'the hostile full text');
  await sleep(500);
  return browser.execute(() => ({
    pwned: window.__mc_pwned ?? null,
    scripts: [...document.querySelectorAll('script')].filter((s) => !s.src).length,
    images: document.querySelectorAll('img, iframe').length,
    handlers: [...document.querySelectorAll('*')].some((e) => [...e.attributes].some((a) => a.name.startsWith('on'))),
    href: location.href,
  }));
}
