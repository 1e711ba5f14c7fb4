// MNStorage.create's object part as clients send it, against a node process: with a filename
// (the official clients), and without one (`curl -F 'object=<file'`, a FormData string entry),
// which a multipart parser would otherwise hand over as a small text field. The object part is
// streamed to storage either way, byte for byte and whatever its size.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXml } from '@memberkit/testkit';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from './support/node-process.js';
import { clientSysmeta } from './support/sysmeta.js';

const WRITER = { Authorization: `Bearer ${await testToken('CN=writer')}` };
const BOUNDARY = 'object-part-boundary-7f3a';

/** A create body whose object part carries `headers` (Content-Disposition first). */
function createBody(pid: string, bytes: Buffer, objectHeaders: string): Buffer {
  const text = (name: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  return Buffer.concat([
    Buffer.from(text('pid', pid)),
    Buffer.from(`--${BOUNDARY}\r\n${objectHeaders}\r\n\r\n`),
    bytes,
    Buffer.from(`\r\n${text('sysmeta', clientSysmeta(pid, bytes))}--${BOUNDARY}--\r\n`),
  ]);
}

describe('the object part of a create', () => {
  let dir: string;
  let node: NodeProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memberkit-object-part-'));
    writeConfig(dir);
    node = await startNodeProcess(dir);
  });
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function create(pid: string, bytes: Buffer, objectHeaders: string): Promise<Response> {
    return fetch(`${node.baseUrl}/v2/object`, {
      method: 'POST',
      body: createBody(pid, bytes, objectHeaders),
      headers: { ...WRITER, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
    });
  }

  async function expectStored(pid: string, bytes: Buffer): Promise<void> {
    const got = await fetch(`${node.baseUrl}/v2/object/${encodeURIComponent(pid)}`);
    expect(got.status).toBe(200);
    const body = Buffer.from(await got.arrayBuffer());
    expect(body.length).toBe(bytes.length);
    expect(createHash('sha1').update(body).digest('hex')).toBe(createHash('sha1').update(bytes).digest('hex'));
  }

  // Every byte value, CR and LF included: a part taken as text would be decoded and re-encoded.
  const everyByte = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));

  it('with a filename, as the official clients send it', async () => {
    const res = await create('part-with-filename', everyByte, 'Content-Disposition: form-data; name="object"; filename="data.bin"');
    expect(res.status, await res.clone().text()).toBe(200);
    validateXml(await res.text());
    await expectStored('part-with-filename', everyByte);
  });

  it('without a filename or a content type (curl -F "object=<file"): stored byte for byte', async () => {
    const res = await create('part-without-filename', everyByte, 'Content-Disposition: form-data; name="object"');
    expect(res.status, await res.clone().text()).toBe(200);
    validateXml(await res.text());
    await expectStored('part-without-filename', everyByte);
  });

  it('without a filename and larger than a small part may be (5 MiB): streamed, not refused', async () => {
    const big = Buffer.alloc(5 * 1024 * 1024, 'x');
    const res = await create('big-part-without-filename', big, 'Content-Disposition: form-data; name="object"\r\nContent-Type: text/plain');
    expect(res.status, await res.clone().text()).toBe(200);
    await expectStored('big-part-without-filename', big);
  });

  it('as a FormData string entry', async () => {
    const pid = 'formdata-string-object';
    const text = 'a table,of values;with no line break';
    const form = new FormData();
    form.append('pid', pid);
    form.append('object', text);
    form.append('sysmeta', new Blob([clientSysmeta(pid, Buffer.from(text))]), 'sysmeta.xml');
    const res = await fetch(`${node.baseUrl}/v2/object`, { method: 'POST', body: form, headers: WRITER });
    expect(res.status, await res.clone().text()).toBe(200);
    await expectStored(pid, Buffer.from(text));
  });

  it('a missing object part is still InvalidRequest naming it', async () => {
    const pid = 'no-object-part';
    const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="pid"\r\n\r\n${pid}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="sysmeta"\r\n\r\n${clientSysmeta(pid, Buffer.from('x'))}\r\n--${BOUNDARY}--\r\n`;
    const res = await fetch(`${node.baseUrl}/v2/object`, {
      method: 'POST', body, headers: { ...WRITER, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
    });
    expect(res.status).toBe(400);
    const xml = await res.text();
    validateXml(xml);
    expect(xml).toContain('name="InvalidRequest"');
    expect(xml).toMatch(/object/);
  });
});
