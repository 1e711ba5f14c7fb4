// `npm start` stopped by signals, as users stop it.
// - Under a process manager (systemd, a container's init, a supervisor) that sends SIGTERM to
//   npm's own process, not to its process group: npm forwards the signal to its child, so the
//   child must be the node process (the script execs it). Before, npm's `sh -c` died and left
//   the node running, holding the port, and the next start failed.
// - In a terminal, Ctrl-C sends SIGINT to the whole foreground group and npm forwards it to the
//   node again: the node gets it twice. Before, the copy that came after the node's one-time
//   listener had run met the default action and killed the node in the middle of its graceful
//   stop (a request in flight cut off); a Ctrl-C pressed again later does stop it at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testToken, writeConfig } from './support/node-process.js';
import { childEnv, processesOf } from './support/processes.js';
import { clientSysmeta } from './support/sysmeta.js';

const ROOT = join(import.meta.dirname, '..');

async function until(what: string, check: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function killAll(dir: string): void {
  for (const pid of processesOf(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

interface Started {
  npm: ChildProcess;
  port: number;
  /** The node process npm runs (the script execs node: npm's only child). */
  node: number;
  output(): string;
  /** npm's exit code once its output is read to the end. */
  closed: Promise<number | null>;
}

/** `npm start -- DIR` in its own process group (a terminal's foreground job); resolves once it printed its URL. */
async function npmStartInGroup(dir: string, extra: string[] = []): Promise<Started> {
  writeConfig(dir, { node: { identifier: 'urn:node:NPMSIGNAL' }, log: { level: 'info' } });
  const npm = spawn('npm', ['start', '--', dir, '--port', '0', '--host', '127.0.0.1', ...extra], { cwd: ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const closed = new Promise<number | null>((resolve) => npm.once('close', (code) => resolve(code)));
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
  const node = processesOf(dir).find((pid) => pid !== npm.pid);
  if (node === undefined) throw new Error(`no node process under npm start:\n${output}`);
  return { npm, port, node, output: () => output, closed };
}

/** A create whose body is sent in two halves: `between` runs after the first half is on the wire. */
async function createInTwoHalves(port: number, pid: string, between: () => Promise<void>): Promise<{ status: number; body: string }> {
  const bytes = Buffer.alloc(64 * 1024, 'x');
  const boundary = 'halves' + Date.now();
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="pid"\r\n\r\n${pid}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="object"; filename="object"\r\n\r\n`),
    bytes,
    Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="sysmeta"; filename="sysmeta.xml"\r\n\r\n`),
    Buffer.from(clientSysmeta(pid, { size: bytes.length, sha1: createHash('sha1').update(bytes).digest('hex') })),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const token = await testToken('CN=writer');
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port, method: 'POST', path: '/mn/v2/object',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': body.length },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    const half = body.length >> 1;
    req.write(body.subarray(0, half), () => {
      between().then(() => req.end(body.subarray(half)), reject);
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('npm start stopped with SIGTERM to npm alone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memberkit-npm-signal-'));
  afterAll(() => {
    killAll(dir);
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

describe('npm start stopped with Ctrl-C (SIGINT to its process group; npm forwards it again)', () => {
  const dirs: string[] = [];
  const folder = () => {
    const d = mkdtempSync(join(tmpdir(), 'memberkit-npm-ctrl-c-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) {
      killAll(d);
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('one Ctrl-C: the create in flight completes and is stored, the node stops once, gracefully, and npm exits 0', async () => {
    const dir = folder();
    const s = await npmStartInGroup(dir);
    const created = await createInTwoHalves(s.port, 'in-flight-at-ctrl-c', async () => {
      await sleep(200); // the node has the request's headers: it is in flight, not an idle connection
      process.kill(-s.npm.pid!, 'SIGINT');
      // npm's forwarded copy may come late on a busy machine: one sent after the stop began.
      await sleep(300);
      process.kill(s.node, 'SIGINT');
      await sleep(100);
    });
    expect(created.status, created.body).toBe(200);
    expect(created.body).toContain('in-flight-at-ctrl-c');
    expect(await s.closed).toBe(0);
    expect(s.output().match(/shutting down/g)).toHaveLength(1);
    expect(s.output()).not.toContain('exiting now');
    expect(processesOf(dir)).toEqual([]);

    // The object is there after a restart on the same folder.
    const again = await npmStartInGroup(dir);
    const meta = await fetch(`http://127.0.0.1:${again.port}/mn/v2/meta/in-flight-at-ctrl-c`);
    expect(meta.status).toBe(200);
    expect(await meta.text()).toContain('<size>65536</size>');
    process.kill(-again.npm.pid!, 'SIGINT');
    expect(await again.closed).toBe(0);
  }, 120_000);

  it.each([
    ['one process', []],
    ['--workers 2 (the workers end with the primary)', ['--workers', '2']],
  ])('Ctrl-C again while a request holds the graceful stop: the node exits at once with a line saying so (%s)', async (_, extra) => {
    const dir = folder();
    const s = await npmStartInGroup(dir, extra);
    const created = createInTwoHalves(s.port, 'held-open', async () => {
      await sleep(200);
      process.kill(-s.npm.pid!, 'SIGINT');
      // The rest of the body never comes before the second Ctrl-C.
      await new Promise<void>(() => undefined);
    }).catch((err: Error) => err);
    await until('the node logs its graceful stop', () => s.output().includes('shutting down'), 15_000);
    await sleep(2_500);
    process.kill(-s.npm.pid!, 'SIGINT');
    expect(await s.closed).not.toBe(0);
    expect(s.output()).toContain('SIGINT again while stopping: exiting now');
    expect(await created).toBeInstanceOf(Error);
    // At once: well before the graceful stop's 5 s grace would have ended (2.5 s from now).
    await until('no process of the folder is left', () => processesOf(dir).length === 0, 1_500);
  }, 120_000);
});
