import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { resourceMap, startViewsNode, sysmeta, type ViewsNode } from './support/node.js';
import { EML, EML_FORMAT, ORE_FORMAT } from './support/dataset.js';

const MEMBERS = 200;
const MEMBER_BYTES = 5 * 1024 * 1024;

/** 5 MiB of deterministic bytes, distinct per member (a counter in the first bytes). */
function memberBytes(base: Buffer, i: number): Buffer {
  const b = Buffer.from(base);
  b.writeUInt32BE(i, 0);
  b.writeUInt32BE(i * 2654435761 >>> 0, MEMBER_BYTES - 4);
  return b;
}

describe('a 200 × 5 MiB package streams with flat memory', () => {
  let node: ViewsNode;
  const mapPid = 'big-package-map';

  beforeAll(async () => {
    node = await startViewsNode();
    const client = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
    const base = Buffer.alloc(MEMBER_BYTES);
    for (let i = 0; i < MEMBER_BYTES; i += 4) base.writeUInt32LE((i * 2654435761) >>> 0, i);
    const pids = Array.from({ length: MEMBERS }, (_, i) => `big-member-${String(i).padStart(3, '0')}.bin`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < pids.length) {
          const i = next++;
          const bytes = memberBytes(base, i);
          await client.create(pids[i]!, bytes, sysmeta(pids[i]!, { size: bytes.length, md5: createHash('md5').update(bytes).digest('hex') }, { fileName: pids[i]! }));
        }
      }),
    );
    await client.create('big-eml', EML, sysmeta('big-eml', EML, { formatId: EML_FORMAT }));
    const map = resourceMap(mapPid, 'big-eml', pids);
    await client.create(mapPid, map, sysmeta(mapPid, Buffer.from(map), { formatId: ORE_FORMAT }));
  }, 300_000);
  afterAll(async () => node?.stop());

  it('first byte long before the last, RSS growth bounded, every member in the zip', async () => {
    (globalThis as { gc?: () => void }).gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 25);
    const started = performance.now();
    const res = await fetch(`${node.baseUrl}/v2/packages/application%2Fbagit-097/${mapPid}`);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let firstByteMs: number | undefined;
    let total = 0;
    let tail = Buffer.alloc(0);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      firstByteMs ??= performance.now() - started;
      total += value.byteLength;
      tail = Buffer.concat([tail, value]).subarray(-65536);
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const growthMb = (peak - baseline) / 1e6;
    console.log(
      `package of ${MEMBERS} × 5 MiB: ${(total / 2 ** 20).toFixed(0)} MiB, time to first byte ${firstByteMs!.toFixed(0)} ms, ${(total / 2 ** 20 / seconds).toFixed(0)} MiB/s, server+client RSS growth ${growthMb.toFixed(0)} MB`,
    );
    // Streamed while built: the first byte comes long before the last (a relative bound, so a
    // loaded CI machine does not make it flaky; the absolute figure is printed above).
    expect(firstByteMs!).toBeLessThan(seconds * 1000 * 0.25);
    expect(total).toBeGreaterThan(MEMBERS * MEMBER_BYTES);
    expect(growthMb).toBeLessThan(150);
    // The end of central directory record counts every entry: payload + tag files.
    const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    expect(eocd).toBeGreaterThan(0);
    const entries = tail.readUInt16LE(eocd + 10);
    // bagit.txt, 201 payload files, map, 202 sysmeta, pid-mapping, manifest-md5 (all members are MD5), bag-info, tagmanifest-md5
    expect(entries).toBe(1 + (MEMBERS + 1) + 1 + (MEMBERS + 2) + 1 + 1 + 1 + 1);
  }, 300_000);
  it('a client that goes away mid-package stops the stream; the node keeps serving', async () => {
    const controller = new AbortController();
    const res = await fetch(`${node.baseUrl}/v2/packages/application%2Fbagit-097/${mapPid}`, { signal: controller.signal });
    const reader = res.body!.getReader();
    let received = 0;
    while (received < 20 * MEMBER_BYTES) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value.byteLength;
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);
    expect(received).toBeGreaterThanOrEqual(20 * MEMBER_BYTES);
    const again = await fetch(`${node.baseUrl}/v2/monitor/ping`);
    expect(again.status).toBe(200);
    const view = await fetch(`${node.baseUrl}/v2/views/default/big-eml`);
    expect(view.status).toBe(200);
    expect(await view.text()).toContain('Download all files (zip)<small>201 files');
  }, 120_000);
});
