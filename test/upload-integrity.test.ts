// MNStorage.create under failure: "A create interrupted at any moment (client disconnects
// mid-upload, process killed) leaves neither bytes nor system metadata visible; of
// concurrent creates of one pid exactly one succeeds and the others get IdentifierNotUnique."
import { request } from 'node:http';
import { mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from './support/node-process.js';
import { clientSysmeta, createForm } from './support/sysmeta.js';

const WRITER = { Authorization: `Bearer ${await testToken('CN=writer')}` };

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** Send the head of a multipart create (pid and part of the object), then cut the connection. */
function interruptedCreate(port: number, pid: string, sendBytes: number, declaredObjectBytes: number): Promise<void> {
  const boundary = '----memberkitboundary';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="pid"\r\n\r\n${pid}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="object"; filename="object"\r\n\r\n`;
  const total = Buffer.byteLength(head) + declaredObjectBytes + 4096;
  return new Promise((resolve) => {
    const req = request({
      host: '127.0.0.1', port, method: 'POST', path: '/mn/v2/object',
      headers: { ...WRITER, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': total },
    });
    req.on('error', () => resolve());
    req.write(head);
    req.write(Buffer.alloc(sendBytes, 7), () => {
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
  });
}

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}

describe('create is all or nothing', () => {
  let dir: string;
  let node: NodeProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memberkit-upload-'));
    writeConfig(dir);
    node = await startNodeProcess(dir);
  });
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a client that disconnects mid-upload leaves no bytes and no system metadata', async () => {
    await interruptedCreate(node.port, 'cut-off', 3 * 1024 * 1024, 8 * 1024 * 1024);
    await waitFor(() => filesUnder(join(dir, 'objects', 'tmp')).length === 0);
    expect(filesUnder(join(dir, 'objects', 'tmp'))).toEqual([]);
    expect(filesUnder(join(dir, 'objects', 'objects'))).toEqual([]);
    const meta = await fetch(`${node.baseUrl}/v2/meta/cut-off`);
    expect(meta.status).toBe(404);
  });

  it('a checksum that disagrees with the bytes keeps nothing', async () => {
    const bytes = Buffer.from('the real bytes');
    const sysmeta = clientSysmeta('bad-sum', { size: bytes.length, sha1: '0'.repeat(40) });
    const res = await fetch(`${node.baseUrl}/v2/object`, { method: 'POST', headers: WRITER, body: createForm('bad-sum', bytes, sysmeta) });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('name="InvalidSystemMetadata"');
    expect(filesUnder(join(dir, 'objects', 'tmp'))).toEqual([]);
    expect(filesUnder(join(dir, 'objects', 'objects'))).toEqual([]);
    expect((await fetch(`${node.baseUrl}/v2/meta/bad-sum`)).status).toBe(404);
  });

  it('of concurrent creates of one pid exactly one succeeds; the others get IdentifierNotUnique', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const bytes = Buffer.from(`contender ${i}`);
        return fetch(`${node.baseUrl}/v2/object`, { method: 'POST', headers: WRITER, body: createForm('contested', bytes) }).then(async (r) => ({ status: r.status, body: await r.text(), bytes }));
      }),
    );
    const winners = attempts.filter((a) => a.status === 200);
    expect(winners).toHaveLength(1);
    for (const loser of attempts.filter((a) => a.status !== 200)) {
      expect(loser.status).toBe(409);
      expect(loser.body).toContain('name="IdentifierNotUnique"');
    }
    // The stored bytes are the winner's, and only its file exists.
    const got = Buffer.from(await (await fetch(`${node.baseUrl}/v2/object/contested`)).arrayBuffer());
    expect(got.equals(winners[0]!.bytes)).toBe(true);
    await waitFor(() => filesUnder(join(dir, 'objects', 'objects')).length === 1);
    expect(filesUnder(join(dir, 'objects', 'objects'))).toHaveLength(1);
    expect(filesUnder(join(dir, 'objects', 'tmp'))).toEqual([]);
  });
});

describe('a node killed mid-upload', () => {
  it('comes back with neither bytes nor system metadata of the interrupted create', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memberkit-kill-'));
    try {
      writeConfig(dir);
      const first = await startNodeProcess(dir);
      const upload = interruptedCreate(first.port, 'killed-mid-way', 2 * 1024 * 1024, 16 * 1024 * 1024);
      await new Promise((r) => setTimeout(r, 150));
      await first.stop('SIGKILL');
      await upload;
      const second = await startNodeProcess(dir);
      try {
        expect((await fetch(`${second.baseUrl}/v2/meta/killed-mid-way`)).status).toBe(404);
        const list = await (await fetch(`${second.baseUrl}/v2/object`)).text();
        expect(list).toContain('total="0"');
        expect(filesUnder(join(dir, 'objects', 'objects'))).toEqual([]);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
