// #16 item 9, "Leftovers of a crash": a node killed with SIGKILL while several slow uploads
// are arriving leaves partial files in its storage's temp folder; the restarted node removes
// them at once (not an hour later), and every object acknowledged before the kill is intact.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from './support/node-process.js';
import { createForm } from './support/sysmeta.js';

const WRITER = { Authorization: `Bearer ${await testToken('CN=writer')}` };

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

async function waitFor(check: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** A create whose object part trickles in (64 KiB every 20 ms) until the connection dies. */
function slowUpload(node: NodeProcess, pid: string): void {
  const boundary = '----memberkitslow';
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="pid"\r\n\r\n${pid}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="object"; filename="object"\r\n\r\n`;
  const req = request({
    host: '127.0.0.1', port: node.port, method: 'POST', path: '/mn/v2/object',
    headers: { ...WRITER, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': 64 * 1024 * 1024 },
  });
  req.on('error', () => undefined);
  req.write(head);
  const chunk = Buffer.alloc(64 * 1024, 1);
  const timer = setInterval(() => {
    if (req.destroyed) clearInterval(timer);
    else req.write(chunk);
  }, 20);
  req.on('close', () => clearInterval(timer));
}

describe('a node killed with SIGKILL during uploads', () => {
  it('leaves no temp file once restarted, and every acknowledged object is intact', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memberkit-crash-'));
    const tmp = join(dir, 'objects', 'tmp');
    try {
      writeConfig(dir);
      const first = await startNodeProcess(dir);
      const acknowledged = new Map<string, Buffer>();
      // Objects acknowledged before and while the slow uploads run.
      const createOne = async (pid: string) => {
        const bytes = Buffer.from(`${pid}: ${createHash('sha256').update(pid).digest('hex').repeat(500)}`);
        const res = await fetch(`${first.baseUrl}/v2/object`, { method: 'POST', headers: WRITER, body: createForm(pid, bytes) });
        if (res.status === 200) acknowledged.set(pid, bytes);
      };
      await Promise.all(Array.from({ length: 4 }, (_, i) => createOne(`before-${i}`)));
      for (let i = 0; i < 8; i++) slowUpload(first, `slow-${i}`);
      await Promise.all(Array.from({ length: 4 }, (_, i) => createOne(`during-${i}`)));
      // Wait until each slow upload is spooling to a temp file, then kill.
      expect(await waitFor(() => filesUnder(tmp).length >= 8), `temp files: ${filesUnder(tmp).length}`).toBe(true);
      await first.stop('SIGKILL');
      const leftovers = filesUnder(tmp);
      expect(leftovers.length).toBeGreaterThanOrEqual(8);
      expect(acknowledged.size).toBe(8);

      const second = await startNodeProcess(dir);
      try {
        expect(filesUnder(tmp)).toEqual([]);
        for (const [pid, bytes] of acknowledged) {
          const res = await fetch(`${second.baseUrl}/v2/object/${pid}`);
          expect(res.status, pid).toBe(200);
          expect(Buffer.from(await res.arrayBuffer()).equals(bytes), pid).toBe(true);
        }
        for (let i = 0; i < 8; i++) expect((await fetch(`${second.baseUrl}/v2/meta/slow-${i}`)).status).toBe(404);
        const list = await (await fetch(`${second.baseUrl}/v2/object`, { headers: { Authorization: `Bearer ${await testToken('CN=admin')}` } })).text();
        expect(list).toContain(`total="${acknowledged.size}"`);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
