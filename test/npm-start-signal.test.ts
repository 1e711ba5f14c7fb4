// `npm start` under a process manager (systemd, a container's init, a supervisor) that stops it
// with SIGTERM to npm's own process, not to its process group: npm forwards the signal to its
// child, so the child must be the node process (the script execs it). Before, npm's `sh -c`
// died and left the node running, holding the port, and the next start failed.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeConfig } from './support/node-process.js';
import { childEnv, processesOf } from './support/processes.js';

const ROOT = join(import.meta.dirname, '..');

async function until(what: string, check: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('npm start stopped with SIGTERM to npm alone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memberkit-npm-signal-'));
  afterAll(() => {
    for (const pid of processesOf(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops the node: the port is released and no process of the data folder is left', async () => {
    writeConfig(dir, { node: { identifier: 'urn:node:NPMSIGNAL' }, log: { level: 'warn' } });
    const npm = spawn('npm', ['start', '--', dir, '--port', '0', '--host', '127.0.0.1'], { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const port = await new Promise<number>((resolve, reject) => {
      const onData = (d: Buffer): void => {
        output += d.toString();
        const m = /memberkit node at https?:\/\/localhost:(\d+)/.exec(output);
        if (m) resolve(Number(m[1]));
      };
      npm.stdout.on('data', onData);
      npm.stderr.on('data', onData);
      npm.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
      setTimeout(() => reject(new Error(`npm start did not print its URL:\n${output}`)), 60_000).unref();
    });
    expect((await fetch(`http://127.0.0.1:${port}/mn/v2/monitor/ping`)).status).toBe(200);
    const exited = new Promise((resolve) => npm.once('exit', resolve));
    npm.kill('SIGTERM');
    await exited;
    await until('the node process ends', () => processesOf(dir).length === 0, 15_000);
    await expect(fetch(`http://127.0.0.1:${port}/mn/v2/monitor/ping`)).rejects.toThrow();
  }, 90_000);
});
