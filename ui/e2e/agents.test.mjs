// End-to-end: a Claude Code projects directory and a Codex sessions directory open in the app
// beside a harness runs directory, hand-built here in their own formats. A persisted output
// opens in Stub | Full; one whose file is gone shows the output recovered from the transcript;
// a Codex cut says so; another agent's store found on the machine is offered, and added only
// when accepted. Saves agents-list.png and agents-stub-full.png (see `shots`).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { demo } from './fixtures.mjs';
import { expandAll, openRun } from './scenarios.mjs';
import { mctl, removeDirs, shots, startApp, waitFor } from './session.mjs';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'mc-agents-'));
const runsDir = path.join(base, 'runs');
const claudeHome = path.join(base, 'claude');
const projects = path.join(claudeHome, 'projects');
const codexSessions = path.join(base, 'codex', 'sessions');
const offeredCodex = path.join(base, 'codex-offered');
const port = Number(process.env.E2E_PORT ?? 4444) + 20;
const SESSION = '9e0c5a1e-1d2b-4c3d-8e4f-5a6b7c8d9e0f';
const THREAD = '019e1625-789d-76c0-80ab-3724b5ddb799';
const OFFERED = '019e1695-0522-7c83-8b39-0dd379793f80';

let session;
let browser;

const jsonl = (lines) => lines.map((l) => JSON.stringify(l) + '\n').join('');

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** A Claude Code session: a test run whose output was persisted (its file kept), and a grep
 *  whose file is gone but whose raw output the transcript kept; a subagent under it. */
function claudeStore() {
  const project = path.join(projects, '-home-ana-shop');
  const values = path.join(project, SESSION, 'tool-results');
  const saved = (name) => `/home/ana/.claude/projects/-home-ana-shop/${SESSION}/tool-results/${name}`;
  const testLog = Array.from({ length: 3000 }, (_, i) => (i === 2411 ? 'FAIL checkout.test.ts > applies the discount' : `PASS test ${i + 1}`)).join('\n');
  const grepOut = Array.from({ length: 1500 }, (_, i) => `src/cart/line${i}.ts:3: // TODO price rounding`).join('\n');
  const stub = (size, name, preview) =>
    `<persisted-output>\nOutput too large (${size}). Full output saved to: ${saved(name)}\n\nPreview (first 2KB):\n${preview}\n...\n</persisted-output>`;
  let n = 0;
  const line = (type, extra) => ({ type, uuid: `u${++n}`, sessionId: SESSION, cwd: '/home/ana/shop', timestamp: `2026-11-30T10:00:${String(n).padStart(2, '0')}.000Z`, ...extra });
  const user = (content, extra = {}) => line('user', { message: { role: 'user', content }, ...extra });
  const assistant = (content, id) =>
    line('assistant', { message: { id, role: 'assistant', model: 'claude-sonnet-4-5', content, usage: { input_tokens: 1200, cache_read_input_tokens: 9000, output_tokens: 80 } } });
  const lines = [
    line('custom-title', { customTitle: 'Fix the checkout discount' }),
    user('The checkout tests fail since the discount change. Fix it.'),
    assistant([{ type: 'tool_use', id: 'toolu_test', name: 'Bash', input: { command: 'npm test' } }], 'msg_1'),
    user([{ type: 'tool_result', tool_use_id: 'toolu_test', content: stub('61.3KB', 'toolu_test.txt', testLog.slice(0, 1800)) }], { toolUseResult: { stdout: testLog, stderr: '', interrupted: false } }),
    assistant([{ type: 'tool_use', id: 'toolu_grep', name: 'Grep', input: { pattern: 'TODO price' } }], 'msg_2'),
    user([{ type: 'tool_result', tool_use_id: 'toolu_grep', content: stub('62.1KB', 'toolu_grep.txt', grepOut.slice(0, 1800)) }], { toolUseResult: { mode: 'content', content: grepOut } }),
    assistant([{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: saved('toolu_test.txt'), offset: 2400, limit: 20 } }], 'msg_3'),
    user([{ type: 'tool_result', tool_use_id: 'toolu_read', content: '2412→FAIL checkout.test.ts > applies the discount' }]),
    // The subagent: the progress line names the call that started it.
    assistant([{ type: 'tool_use', id: 'toolu_task', name: 'Task', input: { description: 'Survey', prompt: 'List the cart modules' } }], 'msg_5'),
    line('progress', { parentToolUseID: 'toolu_task', data: { type: 'agent_progress', agentId: 'a1b2c3d' } }),
    user([{ type: 'tool_result', tool_use_id: 'toolu_task', content: 'cart.ts, price.ts' }]),
    assistant([{ type: 'text', text: 'The discount is applied twice; fixed in cart.ts.' }], 'msg_4'),
  ];
  write(path.join(project, `${SESSION}.jsonl`), jsonl(lines));
  write(path.join(values, 'toolu_test.txt'), testLog);
  // Forty days old: Claude Code's own cleanup (30 days by default) deletes it at its next start.
  const old = new Date(Date.now() - 40 * 86_400_000);
  fs.utimesSync(path.join(project, `${SESSION}.jsonl`), old, old);
  n = 0;
  const agent = [
    line('user', { isSidechain: true, agentId: 'a1b2c3d', message: { role: 'user', content: 'List the cart modules' } }),
    line('assistant', { isSidechain: true, agentId: 'a1b2c3d', message: { id: 'msg_s1', role: 'assistant', model: 'claude-haiku-4-5', content: [{ type: 'text', text: 'cart.ts, price.ts' }] } }),
  ];
  write(path.join(project, SESSION, 'subagents', 'agent-a1b2c3d.jsonl'), jsonl(agent));
  fs.utimesSync(path.join(project, SESSION, 'subagents', 'agent-a1b2c3d.jsonl'), old, old);
}

function rollout(dir, thread, prompt) {
  const cut = 'Exit code: 1\nWall time: 12.5 seconds\nTotal output lines: 4120\nOutput:\n> shop@1.0.0 test\n…21533 tokens truncated…\nTests: 1 failed, 211 passed';
  const lines = [
    { timestamp: '2026-11-29T09:00:00.000Z', type: 'session_meta', payload: { id: thread, cwd: '/home/ana/shop', originator: 'codex_cli_rs', model_provider: 'openai' } },
    { timestamp: '2026-11-29T09:00:00.001Z', type: 'turn_context', payload: { cwd: '/home/ana/shop', model: 'gpt-5-codex' } },
    { timestamp: '2026-11-29T09:00:00.002Z', type: 'event_msg', payload: { type: 'user_message', message: prompt } },
    { timestamp: '2026-11-29T09:00:01.000Z', type: 'response_item', payload: { type: 'function_call', name: 'shell_command', arguments: '{"command":"npm test"}', call_id: 'call_test' } },
    { timestamp: '2026-11-29T09:00:13.500Z', type: 'response_item', payload: { type: 'function_call_output', call_id: 'call_test', output: cut } },
    { timestamp: '2026-11-29T09:00:14.000Z', type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'One test fails: the discount.' }] } },
  ];
  write(path.join(dir, '2026', '11', '29', `rollout-2026-11-29T09-00-00-${thread}.jsonl`), jsonl(lines));
}

before(async () => {
  fs.mkdirSync(runsDir);
  demo(mctl, runsDir);
  claudeStore();
  rollout(codexSessions, THREAD, 'Why do the checkout tests fail?');
  rollout(path.join(offeredCodex, 'sessions'), OFFERED, 'Offered: list the cart modules');
  session = await startApp(runsDir, port, { CLAUDE_CONFIG_DIR: claudeHome, CODEX_HOME: offeredCodex }, ['--runs-dir', projects, '--runs-dir', codexSessions]);
  browser = session.browser;
  await waitFor(async () => (await browser.$$('[data-testid="run-row"]')).length > 0, 'the first list paint');
});

after(async () => {
  await session?.stop();
  removeDirs(base, session?.home ?? '');
});

const count = () => browser.execute(() => document.querySelector('[data-testid="runs-count"]')?.textContent ?? '');

describe('Claude Code and Codex stores in the app', () => {
  it('lists every store, each run marked with its source, and filters by source', async () => {
    // 12 demo runs, the session and its subagent, the rollout.
    await waitFor(async () => (await count()) === '15', 'the three stores listed', 20_000);
    const marks = await browser.execute(() =>
      Object.fromEntries([...document.querySelectorAll('[data-testid="run-row"]')].map((r) => [r.dataset.run, r.querySelector('[data-testid="source-mark"]')?.textContent])),
    );
    assert.equal(marks[SESSION], 'CC');
    assert.equal(marks[THREAD], 'CX');
    assert.equal(marks.m3kq0z1x4f2a, 'H', 'with several stores shown, the harness runs are marked too');
    const titles = await browser.execute(() => [...document.querySelectorAll('[data-testid="run-row"] .name')].map((e) => e.textContent));
    assert.ok(titles.includes('Fix the checkout discount'), 'the custom-title names the session');
    await (await browser.$('[data-testid="source-chip"][data-source="claude"]')).click();
    await waitFor(async () => (await count()) === '2 of 15', 'only the Claude Code runs');
    await expandAll(browser);
    const depth = await browser.execute(() => document.querySelector('[data-run="agent-a1b2c3d"]')?.dataset.depth);
    assert.equal(depth, '1', 'the subagent sits under its session');
    // Two frames painted first: the capture is of what the page shows now.
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'agents-list.png'));
    await (await browser.$('[data-testid="source-chip"][data-source="claude"]')).click();
    await waitFor(async () => (await count()) === '15', 'every run again');
  });

  it('offers another agent store found on the machine, and adds it only when accepted', async () => {
    const offer = await browser.$('[data-testid="agent-offer"]');
    await waitFor(() => offer.isExisting(), 'the offer');
    assert.equal(await offer.getAttribute('data-source'), 'codex');
    assert.equal((await browser.$$('[data-testid="agent-offer"]')).length, 1, 'the Claude Code store shown already is not offered');
    await (await browser.$('[data-testid="agent-add"]')).click();
    await waitFor(async () => (await count()) === '16', 'the offered rollout listed', 20_000);
    assert.equal((await browser.$$('[data-testid="agent-offer"]')).length, 0, 'no longer offered once shown');
  });

  it('opens a persisted output in Stub | Full, and one whose file is gone as recovered', async () => {
    await openRun(browser, SESSION);
    await waitFor(async () => (await browser.$$('[data-testid="timeline"] article[data-type="tool_call_finished"]')).length === 4, 'the four results');
    const open = await browser.$$('[data-testid="timeline"] article[data-type="tool_call_finished"] [data-testid="open-result"]');
    await open[0].click();
    const state = await browser.$('[data-testid="value-state"]');
    await waitFor(async () => (await state.getText()) === 'retained', 'the retained test log');
    const stub = await browser.execute(() => document.querySelector('[data-testid="stub-text"]')?.textContent ?? '');
    assert.ok(stub.startsWith('<persisted-output>\nOutput too large (61.3KB)'), stub.slice(0, 80));
    await waitFor(async () => (await (await browser.$('[data-testid="full-text"] [data-line="1"]')).getText()).includes('PASS test 1'), 'the full output from the file');
    // Two frames painted first: the capture is of what the page shows now.
    await browser.executeAsync((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    await browser.saveScreenshot(path.join(shots, 'agents-stub-full.png'));
    await (await browser.$('[data-testid="back"]')).click();

    const again = await browser.$$('[data-testid="timeline"] article[data-type="tool_call_finished"] [data-testid="open-result"]');
    await again[1].click();
    await waitFor(async () => (await state.getText()) === 'swept', 'the grep whose file is gone');
    const recovered = await browser.execute(() => document.querySelector('[data-testid="recovered"]')?.textContent);
    assert.equal(recovered, 'recovered from the transcript');
    await waitFor(async () => (await (await browser.$('[data-testid="full-text"] [data-line="1"]')).getText()).includes('TODO price rounding'), 'the recovered output');
    await (await browser.$('[data-testid="back"]')).click();
  });

  it('opens the subagent from the Task call that started it', async () => {
    await openRun(browser, SESSION);
    // Found and clicked in one step: the virtualized timeline may draw its cards again between
    // two driver steps, and a card found in one is gone in the next.
    await waitFor(
      () =>
        browser.execute(() => {
          const el = document.querySelector('[data-testid="open-subagent"]');
          if (!el) return false;
          el.scrollIntoView({ block: 'center' });
          el.click();
          return true;
        }),
      'the Task call linked to its subagent',
    );
    const parent = () => browser.execute(() => document.querySelector('[data-testid="parent-run"]')?.textContent ?? '');
    await waitFor(async () => /Fix the checkout discount/.test(await parent()), 'the subagent run, under its session');
  });

  it('says in the Storage view what Claude Code\'s own cleanup deletes next', async () => {
    await (await browser.$('[data-testid="open-storage"]')).click();
    await browser.execute((dir) => {
      const select = document.querySelector('.storage header select');
      select.value = dir;
      select.dispatchEvent(new Event('change', { bubbles: true }));
    }, projects);
    const sweep = await waitFor(async () => {
      const el = await browser.$('[data-testid="sweep-sessions"]');
      return (await el.isExisting()) ? el : null;
    }, 'the forecast of Claude Code\'s cleanup');
    assert.equal(await sweep.getText(), '1 session');
    const text = await browser.execute(() => document.querySelector('[data-testid="agent-sweep"]')?.textContent ?? '');
    assert.match(text, /Fix the checkout discount/);
  });

  it('shows a Codex output cut in place as truncated', async () => {
    await openRun(browser, THREAD);
    const note = await waitFor(async () => {
      const el = await browser.$('[data-testid="truncated-note"]');
      return (await el.isExisting()) ? el : null;
    }, 'the cut output');
    assert.match(await note.getText(), /never reached the disk/);
  });

  it("leaves the other agents' stores out of the threshold what-if, and says so", async () => {
    await (await browser.$('[data-testid="open-whatif"]')).click();
    const note = await waitFor(async () => {
      const el = await browser.$('[data-testid="whatif-others"]');
      return (await el.isExisting()) ? el : null;
    }, 'the note on the stores left out');
    // The Claude Code store, the Codex store, and the Codex store the offer added.
    assert.match(await note.getText(), /^3 other agent's stores left out/);
    await waitFor(async () => (await browser.$('[data-testid="whatif-retained"]')).isExisting(), "the harness runs' figures");
  });
});
