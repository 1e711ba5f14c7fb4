// Time to first byte and throughput of a BagIt package of 1 GiB against MNRead.get of the same
// bytes, on an in-process node (SQLite catalogue, filesystem storage) over loopback HTTP.
// Run: TSX_TSCONFIG_PATH=tsconfig.dev.json node --conditions=@memberkit/source --import tsx packages/views/bench/package-throughput.ts [GiB=1] [members=64]
import { createHash } from 'node:crypto';
import { MemberNodeClient } from '@memberkit/client';
import { resourceMap, startViewsNode, sysmeta } from '../test/support/node.js';
import { EML, EML_FORMAT, ORE_FORMAT } from '../test/support/dataset.js';

const GiB = Number(process.argv[2] ?? 1);
const MEMBERS = Number(process.argv[3] ?? 64);
const MEMBER_BYTES = Math.floor((GiB * 1024 ** 3) / MEMBERS);
const MiB = 1024 * 1024;

async function drain(url: string): Promise<{ bytes: number; ttfbMs: number; totalMs: number }> {
  const started = performance.now();
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  let ttfbMs: number | undefined;
  let bytes = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    ttfbMs ??= performance.now() - started;
    bytes += value.byteLength;
  }
  return { bytes, ttfbMs: ttfbMs ?? 0, totalMs: performance.now() - started };
}

const node = await startViewsNode();
try {
  const client = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
  const base = Buffer.alloc(MEMBER_BYTES);
  for (let i = 0; i + 4 <= MEMBER_BYTES; i += 4) base.writeUInt32LE((i * 2654435761) >>> 0, i);
  const pids = Array.from({ length: MEMBERS }, (_, i) => `bench-member-${i}.bin`);
  const upStart = performance.now();
  for (const [i, pid] of pids.entries()) {
    base.writeUInt32BE(i, 0);
    await client.create(pid, base, sysmeta(pid, { size: base.length, md5: createHash('md5').update(base).digest('hex') }, { fileName: pid }));
  }
  await client.create('bench-eml', EML, sysmeta('bench-eml', EML, { formatId: EML_FORMAT }));
  const map = resourceMap('bench-map', 'bench-eml', pids);
  await client.create('bench-map', map, sysmeta('bench-map', Buffer.from(map), { formatId: ORE_FORMAT }));
  console.log(`uploaded ${MEMBERS} × ${(MEMBER_BYTES / MiB).toFixed(1)} MiB in ${((performance.now() - upStart) / 1000).toFixed(1)} s`);

  for (let round = 1; round <= 2; round++) {
    // get: the same bytes, one object after another.
    let getBytes = 0;
    let getMs = 0;
    let firstGetTtfb = 0;
    for (const [i, pid] of pids.entries()) {
      const r = await drain(`${node.baseUrl}/v2/object/${encodeURIComponent(pid)}`);
      if (i === 0) firstGetTtfb = r.ttfbMs;
      getBytes += r.bytes;
      getMs += r.totalMs;
    }
    const pkg = await drain(`${node.baseUrl}/v2/packages/application%2Fbagit-097/bench-map`);
    const bag10 = await drain(`${node.baseUrl}/v2/packages/application%2Fbagit-1.0/bench-map`);
    const rate = (b: number, ms: number) => `${(b / MiB / (ms / 1000)).toFixed(0)} MiB/s`;
    console.log(`round ${round}:`);
    console.log(`  get ×${MEMBERS}:  ${(getBytes / MiB).toFixed(0)} MiB, TTFB ${firstGetTtfb.toFixed(1)} ms (first object), ${rate(getBytes, getMs)}`);
    console.log(`  package:  ${(pkg.bytes / MiB).toFixed(0)} MiB, TTFB ${pkg.ttfbMs.toFixed(1)} ms, ${rate(pkg.bytes, pkg.totalMs)}`);
    console.log(`  package (BagIt 1.0): ${(bag10.bytes / MiB).toFixed(0)} MiB, TTFB ${bag10.ttfbMs.toFixed(1)} ms, ${rate(bag10.bytes, bag10.totalMs)}`);
  }
} finally {
  await node.stop();
}
