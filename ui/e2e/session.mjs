// Starting the real app under tauri-driver for an end-to-end test file, and waiting helpers.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { remote } from 'webdriverio';

export const root = path.resolve(import.meta.dirname, '../..');
export const app = process.env.MC_APP ?? path.join(root, 'target/debug/mission-control-app');
export const mctl = process.env.MCTL ?? path.join(root, 'target/debug/mctl');

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

/** Starts tauri-driver on `port` (and `port + 1`) with `env` added, and the app on `runsDir`;
 *  pins and the GC journal go to a scratch config directory beside it. */
export async function startApp(runsDir, port, env = {}) {
  const config = path.join(runsDir, '..', `${path.basename(runsDir)}-config`);
  const driver = spawn('tauri-driver', ['--port', String(port), '--native-port', String(port + 1)], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, MCTL_CONFIG_DIR: config, ...env },
  });
  await sleep(800);
  const browser = await remote({
    hostname: '127.0.0.1',
    port,
    logLevel: 'warn',
    capabilities: {
      browserName: 'wry',
      'wdio:enforceWebDriverClassic': true,
      'tauri:options': { application: app, args: ['--runs-dir', runsDir] },
    },
  });
  const stop = async () => {
    await browser.deleteSession().catch(() => {});
    driver.kill();
  };
  return { browser, stop };
}
