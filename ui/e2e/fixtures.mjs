// Runs directories for the end-to-end tests: the demo (from `mctl demo`), plus a run of 10,000
// events and a run holding a 200 MB retained value, written the way the harness writes them.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const T0 = Date.now() - 3_600_000;

function envelope(runId, seq, ts, event) {
  return JSON.stringify({ schemaVersion: 1, runId, seq, ts, event: { ...event, runId, ts } });
}

export function demo(mctl, dir) {
  execFileSync(mctl, ['demo', dir, '--now', String(Date.now())], { stdio: 'ignore' });
}

/** A run of `n` events: user message, then tool calls and assistant messages. */
export function longRun(dir, id = 'run_10000_events', n = 10_000) {
  const lines = [];
  let ts = T0;
  const push = (e) => lines.push(envelope(id, lines.length, (ts += 500), e));
  push({ type: 'run_started', cwd: '/work/big', mode: 'goal', provider: 'anthropic', model: 'claude-sonnet-4-5' });
  push({ type: 'user_message', messageId: 'u1', text: 'Walk the whole repository, file by file.', attachments: [] });
  let i = 0;
  while (lines.length < n - 1) {
    const call = `toolu_${String(i).padStart(5, '0')}`;
    push({ type: 'assistant_message', messageId: `a${i}`, content: [{ type: 'text', text: `Reading file ${i}.` }, { type: 'tool_call', toolCallId: call, name: 'read_file', input: { path: `src/f${i}.rs` } }], usage: { promptTokens: 1000 + i, completionTokens: 20, costUsd: 0.0001 } });
    push({ type: 'tool_call_started', toolCallId: call, name: 'read_file', input: { path: `src/f${i}.rs` }, summary: `src/f${i}.rs` });
    push({ type: 'tool_call_finished', toolCallId: call, result: { ok: true, content: `fn f${i}() {}\n`, metadata: null } });
    i++;
  }
  push({ type: 'run_result', result: { status: 'done' } });
  fs.writeFileSync(path.join(dir, `${id}.jsonl`), lines.slice(0, n).join('\n') + '\n');
  return id;
}

/** A run whose one tool result is `mb` MiB: a value file and a transcript line of that size. */
export function bigValueRun(dir, id = 'run_200mb_value', mb = 200) {
  const call = 'toolu_big_log';
  const ts = T0;
  const block = Array.from({ length: 1000 }, (_, i) => `2026-11-29T10:00:${String(i % 60).padStart(2, '0')}Z INFO worker-${i % 8} handled request ${i} in ${i % 97} ms`).join('\n') + '\n';
  const reps = Math.ceil((mb * 1024 * 1024) / block.length);
  const valueDir = path.join(dir, `${id}.values`);
  fs.mkdirSync(valueDir, { recursive: true });
  const value = fs.openSync(path.join(valueDir, `${call}.txt`), 'w');
  const escaped = JSON.stringify(block).slice(1, -1);
  const transcript = fs.openSync(path.join(dir, `${id}.jsonl`), 'w');
  const w = (s) => fs.writeSync(transcript, s);
  w(envelope(id, 0, ts, { type: 'user_message', messageId: 'u', text: 'Summarize the production log.', attachments: [] }) + '\n');
  w(envelope(id, 1, ts + 1, { type: 'tool_call_started', toolCallId: call, name: 'bash', input: { command: 'cat prod.log' }, summary: 'cat prod.log' }) + '\n');
  const head = envelope(id, 2, ts + 2, { type: 'tool_call_finished', toolCallId: call, result: { ok: true, content: '@@', metadata: null } });
  const [before, after] = head.split('@@');
  w(before);
  for (let i = 0; i < reps; i++) {
    fs.writeSync(value, block);
    w(escaped);
  }
  w(after + '\n');
  w(envelope(id, 3, ts + 3, { type: 'run_result', result: { status: 'done' } }) + '\n');
  fs.closeSync(value);
  fs.closeSync(transcript);
  return { id, call, lines: reps * 1000 };
}

/** A small run that a test appends to while the app shows it. */
export function liveRun(dir, id, n) {
  const lines = [];
  lines.push(envelope(id, 0, T0, { type: 'user_message', messageId: 'u', text: 'Watch me grow.', attachments: [] }));
  for (let i = 1; i < n; i++) lines.push(envelope(id, i, T0 + i, { type: 'assistant_message', messageId: `a${i}`, content: [{ type: 'text', text: `step ${i}` }] }));
  fs.writeFileSync(path.join(dir, `${id}.jsonl`), lines.join('\n') + '\n');
}

/** Appends one assistant message (line `seq + 1`) to a live run. */
export function appendLive(dir, id, seq) {
  fs.appendFileSync(path.join(dir, `${id}.jsonl`), envelope(id, seq, Date.now(), { type: 'assistant_message', messageId: `a${seq}`, content: [{ type: 'text', text: `live step ${seq}` }] }) + '\n');
}

/** `n` finished runs of a few events each (a user message, a tool call and its result), dated
 *  long ago: an archive to list. */
export function manyRuns(dir, n) {
  const old = Date.parse('2026-01-01T00:00:00Z');
  for (let r = 0; r < n; r++) {
    const id = `run_${old + r * 1000}_${r.toString(16).padStart(8, '0')}`;
    const ts = old + r * 1000;
    const lines = [
      envelope(id, 0, ts, { type: 'user_message', messageId: 'u', text: `Archived task ${r}`, attachments: [] }),
      envelope(id, 1, ts + 1, { type: 'tool_call_started', toolCallId: 'toolu_1', name: 'bash', input: { command: 'ls' }, summary: 'ls' }),
      envelope(id, 2, ts + 2, { type: 'tool_call_finished', toolCallId: 'toolu_1', result: { ok: true, content: 'a\nb\n', metadata: null } }),
      envelope(id, 3, ts + 3, { type: 'run_result', result: { status: 'done' } }),
    ];
    const file = path.join(dir, `${id}.jsonl`);
    fs.writeFileSync(file, lines.join('\n') + '\n');
    const t = new Date(ts + 3);
    fs.utimesSync(file, t, t);
  }
}

/** A short run whose messages hold terminal escapes (colours, a line erase, a bell), as an
 *  agent that pastes terminal output into its answer writes them. */
export function escapesRun(dir, id = 'run_escapes') {
  const lines = [];
  let ts = T0 - 31 * 86_400_000;
  const push = (e) => lines.push(envelope(id, lines.length, (ts += 500), e));
  push({ type: 'user_message', messageId: 'u1', text: 'Why is \u001b[1mcargo test\u001b[0m red?', attachments: [] });
  push({ type: 'assistant_message', messageId: 'a1', content: [{ type: 'text', text: 'It printed \u001b[31mFAILED\u001b[0m for **two** tests\u001b[2K and rang\u0007.' }] });
  push({ type: 'run_result', result: { status: 'done' } });
  const file = path.join(dir, `${id}.jsonl`);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const old = new Date(ts);
  fs.utimesSync(file, old, old);
  return id;
}

/** A short run whose message and tool output hold secrets of two kinds: what an export of it
 *  redacts. */
export function secretsRun(dir, id = 'run_secrets') {
  const lines = [];
  let ts = T0;
  const push = (e) => lines.push(envelope(id, lines.length, (ts += 500), e));
  push({ type: 'user_message', messageId: 'u1', text: 'Deploy it; the key is AKIAIOSFODNN7EXAMPLE.', attachments: [] });
  push({ type: 'tool_call_started', toolCallId: 'toolu_env', name: 'bash', input: { command: 'cat .env' }, summary: 'cat .env' });
  push({ type: 'tool_call_finished', toolCallId: 'toolu_env', result: { ok: true, content: 'DB_PASSWORD=hunter2hunter2\nREGION=eu-west-1\n', metadata: null } });
  push({ type: 'run_result', result: { status: 'done' } });
  const file = path.join(dir, `${id}.jsonl`);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  // Older than the demo's runs: it does not top the list in the screenshots.
  const old = new Date(T0 - 30 * 86_400_000);
  fs.utimesSync(file, old, old);
  return id;
}
