// Starting the real app under tauri-driver for an end-to-end test file, and waiting helpers.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { remote } from 'webdriverio';

export const root = path.resolve(import.meta.dirname, '../..');
// What cargo built: in CARGO_TARGET_DIR when it is set (a cache folder outside the clone).
const target = process.env.CARGO_TARGET_DIR ? path.resolve(root, process.env.CARGO_TARGET_DIR) : path.join(root, 'target');
export const app = process.env.MC_APP ?? path.join(target, 'release/mission-control');
export const mctl = process.env.MCTL ?? path.join(target, 'debug/mctl');
// Where the tests save their screenshots: the build directory, so a test run leaves the clone
// as it found it; `scripts/screenshots.sh` points this at docs/ when they are meant to change.
export const shots = process.env.MCTL_SHOTS_DIR ? path.resolve(root, process.env.MCTL_SHOTS_DIR) : path.join(target, 'screenshots');
fs.mkdirSync(shots, { recursive: true });

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(fn, what, timeout = 30_000) {
  const start = Date.now();
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() - start > timeout) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Resolves once something listens on `port` of loopback: the driver is ready for a session. */
export async function listening(port) {
  const open = () =>
    new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  await waitFor(open, `tauri-driver on port ${port}`);
}

/** The app's environment: the caller's, without any of Mission Control's own variables
 *  (`MCTL_WATCH=poll`, `MCTL_RUNS_DIR`, `MCTL_CONFIG_DIR` of the shell the tests run in), with a
 *  home and XDG directories of its own under `scratch`, plus `env`. */
function appEnv(scratch, env) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MCTL_')));
  const dirs = { HOME: 'home', XDG_CONFIG_HOME: 'config', XDG_DATA_HOME: 'data', XDG_CACHE_HOME: 'cache', XDG_STATE_HOME: 'state' };
  for (const [name, sub] of Object.entries(dirs)) {
    clean[name] = path.join(scratch, sub);
    fs.mkdirSync(clean[name], { recursive: true });
  }
  // No shader cache: the webview's GPU process would write one under the scratch home, and may
  // still be writing it while the test removes that home after the session ends.
  return { ...clean, MESA_SHADER_CACHE_DISABLE: 'true', MCTL_CONFIG_DIR: path.join(scratch, 'mission-control'), ...env };
}

/** Starts tauri-driver on `port` (and `port + 1`) with `env` added, and the app on `runsDir`;
 *  its home, pins and GC journal go to a scratch directory beside it. */
export async function startApp(runsDir, port, env = {}, args = []) {
  const scratch = path.join(runsDir, '..', `${path.basename(runsDir)}-home`);
  const driver = spawn('tauri-driver', ['--port', String(port), '--native-port', String(port + 1)], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: appEnv(scratch, env),
  });
  // Its own port, then the one of the WebKitWebDriver it starts behind it.
  await listening(port);
  await listening(port + 1);
  const browser = await remote({
    hostname: '127.0.0.1',
    port,
    logLevel: 'warn',
    capabilities: {
      browserName: 'wry',
      'wdio:enforceWebDriverClassic': true,
      'tauri:options': { application: app, args: ['--runs-dir', runsDir, ...args] },
    },
  });
  const exited = new Promise((resolve) => driver.once('exit', resolve));
  const stop = async () => {
    await browser.deleteSession().catch(() => {});
    driver.kill();
    await Promise.race([exited, sleep(5_000)]);
    await endApp(runsDir);
  };
  return { browser, stop, home: scratch };
}

/** Ends the app started on `runsDir` if it outlived its session (the driver may leave it
 *  running, still polling and writing its cache and log under the scratch home), and waits
 *  until it is gone. */
async function endApp(runsDir) {
  const pattern = `--runs-dir ${runsDir}( |$)`;
  const running = () => spawnSync('pgrep', ['-f', '--', pattern]).status === 0;
  if (!running()) return;
  spawnSync('pkill', ['-TERM', '-f', '--', pattern]);
  for (let i = 0; i < 50 && running(); i++) await sleep(100);
  if (running()) spawnSync('pkill', ['-KILL', '-f', '--', pattern]);
}

/** Removes the directories a test made. The webview's helper processes may still be writing
 *  (a shader cache under the scratch home) for a moment after the session ends, so a directory
 *  that filled up again while being removed is retried rather than failing the file. */
export function removeDirs(...dirs) {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
}
