// End-to-end: a Gemini CLI store and an opencode data folder (its JSON tree) open in the app,
// hand-built here in their own formats from the agents' source rules (no real file holds a
// saved output). A saved output opens in Stub | Full beside its file, its read-back counted as
// a peek and the agent's own read tool named; one whose file is gone shows as swept; the Storage
// view forecasts each agent's own cleanup. Saves other-agents-stub-full.png and
// other-agents-storage.png (see `shots`).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openRun } from './scenarios.mjs';
import { removeDirs, shots, startApp, waitFor } from './session.mjs';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-others-'));
const geminiTmp = path.join(base, 'gemini', 'tmp');
const opencodeData = path.join(base, 'opencode');
const port = Number(process.env.E2E_PORT ?? 4444) + 24;
const DAY = 86_400_000;
const CHAT = 'session-2026-10-20T10-00-a1b2c3d4';
const SESSION = 'a1b2c3d4-1111-4000-8000-000000000001';
const OC = 'ses_3000000000001aaaaaaaaaaaaa';

let session;
let browser;

function write(file, text, ageMs = 0) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  if (ageMs) {
    const t = new Date(Date.now() - ageMs);
    fs.utimesSync(file, t, t);
  }
}

const testLog = Array.from({ length: 3000 }, (_, i) => (i === 2411 ? 'FAIL checkout.test.ts > applies the discount' : `PASS test ${i + 1}`)).join('\n');

/** A Gemini CLI chat (v0.29+ stubs, 40 days old): a test run saved to a file, a build whose
 *  saved file the CLI's cleanup took, and a `read_file` of the saved test log. */
function geminiStore() {
  const project = path.join(geminiTmp, 'shop');
  const saved = path.join(project, 'tool-outputs', `session-${SESSION}`);
  const log = path.join(saved, 'run_shell_command_c1.txt');
  write(log, testLog, 40 * DAY);
  const stub = (file, head, tail) =>
    `Output too large. Showing first 8,000 and last 32,000 characters. For full output see: ${file}\n${head}\n\n... [21,000 characters omitted] ...\n\n${tail}`;
  const call = (id, name, args, output) => ({
    id, name, args, status: 'success', timestamp: '2026-10-20T10:00:05.000Z',
    result: [{ functionResponse: { id, name, response: { output } } }],
  });
  const read = 'IMPORTANT: The file content has been truncated.\nStatus: Showing lines 2401-2420 of 3000 total lines.\nAction: To read more of the file, use offset: 2420.\n\n--- FILE CONTENT (truncated) ---\n' +
    testLog.split('\n').slice(2400, 2420).join('\n');
  const chat = {
    sessionId: SESSION, projectHash: 'ab14fe39', startTime: '2026-10-20T10:00:00.000Z', lastUpdated: '2026-10-20T10:01:00.000Z',
    messages: [
      { id: 'u1', type: 'user', timestamp: '2026-10-20T10:00:01.000Z', content: 'The checkout tests fail since the discount change. Fix it.' },
      { id: 'g1', type: 'gemini', timestamp: '2026-10-20T10:00:30.000Z', content: 'The discount is applied twice; fixed in cart.ts.', model: 'gemini-2.5-pro',
        tokens: { input: 9000, output: 300, cached: 4000, thoughts: 50, tool: 0, total: 9350 },
        toolCalls: [
          call('c1', 'run_shell_command', { command: 'npm test' }, stub(log, 'PASS test 1', 'PASS test 3000')),
          call('c2', 'run_shell_command', { command: 'npm run build' }, stub(path.join(saved, 'run_shell_command_c2.txt'), 'vite building', 'built in 9.1s')),
          call('r1', 'read_file', { file_path: log, offset: 2400, limit: 20 }, read),
        ] },
    ],
  };
  write(path.join(project, 'chats', `${CHAT}.json`), JSON.stringify(chat, null, 2), 40 * DAY);
}

/** An opencode id of `ms`, as it names a saved output (`tool_` and 12 hex digits of
 *  `ms × 4096 + 1`, then 14 letters). */
function opencodeId(ms) {
  const enc = ((BigInt(ms) << 12n) | 1n) & ((1n << 48n) - 1n);
  return `tool_${enc.toString(16).padStart(12, '0')}QwErTyUiOpAsDf`;
}

/** An opencode data folder of the JSON era: one session whose test output opencode cut and
 *  saved to `tool-output/` eight days ago (its own sweep takes it at its next start). */
function opencodeStore() {
  const storage = path.join(opencodeData, 'storage');
  // The session ran eight days ago; its saved output's name holds the time it was saved.
  const t0 = Date.now() - 8 * DAY;
  const file = path.join(opencodeData, 'tool-output', opencodeId(t0 + 30_000));
  write(file, testLog);
  const cut = `PASS test 1\nPASS test 2\n\n...2998 lines truncated...\n\nThe tool call succeeded but the output was truncated. Full output saved to: ${file}\nUse Grep to search the full content or Read with offset/limit to view specific sections.`;
  const json = (p, v) => write(path.join(storage, p), JSON.stringify(v));
  json(`session/p/${OC}.json`, { id: OC, projectID: 'p', directory: '/home/ana/shop', title: 'Why do the checkout tests fail?', version: '1.1.60', time: { created: t0, updated: t0 + 90_000 } });
  json(`message/${OC}/msg_1.json`, { id: 'msg_1', sessionID: OC, role: 'user', time: { created: t0 + 1 } });
  json('part/msg_1/prt_1.json', { id: 'prt_1', messageID: 'msg_1', sessionID: OC, type: 'text', text: 'Why do the checkout tests fail?' });
  json(`message/${OC}/msg_2.json`, { id: 'msg_2', sessionID: OC, role: 'assistant', time: { created: t0 + 100, completed: t0 + 90_000 }, modelID: 'glm-4.6', providerID: 'zai', cost: 0, finish: 'stop', tokens: { input: 10, output: 2, reasoning: 0, cache: { read: 0, write: 0 } } });
  json('part/msg_2/prt_2.json', { id: 'prt_2', messageID: 'msg_2', sessionID: OC, type: 'tool', callID: 'call_test', tool: 'bash',
    state: { status: 'completed', input: { command: 'npm test' }, output: cut, title: 'npm test', metadata: { truncated: true, outputPath: file }, time: { start: t0 + 200, end: t0 + 60_000 } } });
  json('part/msg_2/prt_3.json', { id: 'prt_3', messageID: 'msg_2', sessionID: OC, type: 'text', text: 'One test fails: the discount is applied twice.' });
}

before(async () => {
  geminiStore();
  opencodeStore();
  session = await startApp(geminiTmp, port, {}, ['--runs-dir', opencodeData]);
  browser = session.browser;
  await waitFor(async () => (await browser.$$('[data-testid="run-row"]')).length === 2, 'both stores listed', 20_000);
});

after(async () => {
  await session?.stop();
  removeDirs(base, session?.home ?? '');
});

/** The results of the run open in the timeline. */
const results = () => browser.$$('[data-testid="timeline"] article[data-type="tool_call_finished"]');

describe('Gemini CLI and opencode stores in the app', () => {
  it('lists each store with its mark', async () => {
    const marks = await browser.execute(() =>
      Object.fromEntries([...document.querySelectorAll('[data-testid="run-row"]')].map((r) => [r.dataset.run, r.querySelector('[data-testid="source-mark"]')?.textContent])),
    );
    assert.deepEqual(marks, { [CHAT]: 'GM', [OC]: 'OC' });
  });

  it('opens a Gemini CLI saved output beside its file, its read-back a peek, and a swept one', async () => {
    await openRun(browser, CHAT);
    await waitFor(async () => (await results()).length === 3, 'the three results');
    const states = await browser.execute(() => [...document.querySelectorAll('[data-testid="timeline"] article[data-type="tool_call_finished"] [data-testid="state"]')].map((e) => e.textContent));
    assert.deepEqual(states, ['retained', 'swept', 'inline']);
    const note = await browser.execute(() => document.querySelector('[data-testid="swept-note"]')?.textContent ?? '');
    assert.match(note, /gone/);

    await (await browser.$$('[data-testid="timeline"] article[data-type="tool_call_finished"] [data-testid="open-result"]'))[0].click();
    const state = await browser.$('[data-testid="value-state"]');
    await waitFor(async () => (await state.getText()) === 'retained', 'the saved test log');
    const stub = await browser.execute(() => document.querySelector('[data-testid="stub-text"]')?.textContent ?? '');
    assert.ok(stub.startsWith('Output too large. Showing first 8,000'), stub.slice(0, 80));
    await waitFor(async () => (await (await browser.$('[data-testid="full-text"] [data-line="1"]')).getText()).includes('PASS test 1'), 'the full output from the file');
    const tool = await browser.execute(() => document.querySelector('[data-testid="read-tool"]')?.textContent ?? '');
    assert.match(tool, /read_file/, 'the tool its model reads the file with');
    // The read_file of lines 2401-2420 is the model's one peek of it.
    const peeks = await waitFor(async () => {
      const n = await browser.execute(() => document.querySelectorAll('[data-testid="model-peek"]').length);
      return n > 0 ? n : null;
    }, 'the read-back in the coverage strip');
    assert.equal(peeks, 1);
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'other-agents-stub-full.png'));
    await (await browser.$('[data-testid="back"]')).click();
  });

  it('opens an opencode output cut and saved to tool-output', async () => {
    await openRun(browser, OC);
    await waitFor(async () => (await results()).length === 1, 'the one result');
    await (await browser.$('[data-testid="timeline"] article[data-type="tool_call_finished"] [data-testid="open-result"]')).click();
    const state = await browser.$('[data-testid="value-state"]');
    await waitFor(async () => (await state.getText()) === 'retained', 'the saved test output');
    await waitFor(async () => (await (await browser.$('[data-testid="full-text"] [data-line="1"]')).getText()).includes('PASS test 1'), 'the full output from the file');
    const tool = await browser.execute(() => document.querySelector('[data-testid="read-tool"]')?.textContent ?? '');
    assert.match(tool, /read \(offset and limit\) or grep/);
    await (await browser.$('[data-testid="back"]')).click();
  });

  it("forecasts each agent's own cleanup in the Storage view", async () => {
    await (await browser.$('[data-testid="open-storage"]')).click();
    const choose = (dir) =>
      browser.execute((d) => {
        const select = document.querySelector('.storage header select');
        select.value = d;
        select.dispatchEvent(new Event('change', { bubbles: true }));
      }, dir);
    const sweepText = async (agent) =>
      waitFor(async () => {
        const t = await browser.execute(() => document.querySelector('[data-testid="agent-sweep"]')?.textContent ?? '');
        return t.includes(agent) ? t.replace(/\s+/g, ' ') : null;
      }, `the forecast of ${agent}'s cleanup`);
    await choose(opencodeData);
    const oc = await sweepText("opencode's own cleanup");
    assert.match(oc, /deletes every saved output older than 7 days/);
    assert.match(oc, /0 sessions \(0 B\) and 1 saved output/);
    await choose(geminiTmp);
    const gm = await sweepText("Gemini CLI's own cleanup");
    assert.match(gm, /older than 30 days \(general\.sessionRetention\.maxAge, its default\)/);
    assert.match(gm, /1 session .* and 1 saved output/);
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'other-agents-storage.png'));
  });
});
