// Replicates a large object from node A to node B (separate processes) through the stub
// Coordinating Node and reports B's RSS growth and the transfer rate.
// Run: TSX_TSCONFIG_PATH=tsconfig.dev.json node --conditions=@memberkit/source --import tsx bench/replication-rss.ts [GiB, default 1]
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemberNodeClient } from '@memberkit/client';
import { startCoordinatingNodeStub } from '@memberkit/testkit';
import { startNodeProcess, testToken, writeConfig } from '../test/support/node-process.js';

const GiB = Number(process.argv[2] ?? 1);
const SIZE = Math.round(GiB * 1024 ** 3);
const CHUNK = 1 << 20;
const MiB = 1024 * 1024;
const CN_SUBJECT = 'CN=urn:node:CNSTUB,DC=dataone,DC=org';

function* blocks(): Generator<Buffer> {
  for (let sent = 0, i = 0; sent < SIZE; i++) {
    const b = Buffer.alloc(Math.min(CHUNK, SIZE - sent), i & 0xff);
    sent += b.length;
    yield b;
  }
}

const work = mkdtempSync(join(tmpdir(), 'memberkit-repl-bench-'));
const cn = await startCoordinatingNodeStub({ subject: CN_SUBJECT });
try {
  const tokens = { writer: await testToken('CN=writer'), cn: await testToken(CN_SUBJECT) };
  writeConfig(join(work, 'a'), { node: { identifier: 'urn:node:A' }, access: { cnSubjects: [CN_SUBJECT] }, federation: { cnBaseUrl: cn.baseUrl } });
  writeConfig(join(work, 'b'), { node: { identifier: 'urn:node:B', replicate: true }, access: { cnSubjects: [CN_SUBJECT] }, federation: { cnBaseUrl: cn.baseUrl } });
  const a = await startNodeProcess(join(work, 'a'));
  const b = await startNodeProcess(join(work, 'b'));
  for (const [id, n] of [['urn:node:A', a], ['urn:node:B', b]] as const) cn.nodes.set(id, { ...(await new MemberNodeClient({ baseUrl: n.baseUrl }).getCapabilities()), baseURL: n.baseUrl });
  const sha1 = createHash('sha1');
  for (const blk of blocks()) sha1.update(blk);
  const writer = new MemberNodeClient({ baseUrl: a.baseUrl, token: tokens.writer, timeoutMs: 600_000 });
  await writer.create('big', { stream: (async function* () { yield* blocks(); })(), size: SIZE }, {
    identifier: 'big', formatId: 'application/octet-stream', size: SIZE, checksum: { algorithm: 'SHA-1', value: sha1.digest('hex') },
    rightsHolder: 'CN=writer', accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] }, replica: [],
  });
  const sm = await writer.getSystemMetadata('big');
  const baseline = b.rss().current;
  const started = process.hrtime.bigint();
  await new MemberNodeClient({ baseUrl: b.baseUrl, token: tokens.cn }).replicate(sm, 'urn:node:A');
  await cn.waitForReplicationStatus('big', 'completed', 900_000);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const row = {
    objectBytes: SIZE,
    replicationMiBps: +(SIZE / MiB / seconds).toFixed(1),
    targetRssBaselineMB: +(baseline / MiB).toFixed(1),
    targetRssPeakMB: +(b.rss().peak / MiB).toFixed(1),
    targetRssGrowthMB: +((b.rss().peak - baseline) / MiB).toFixed(1),
    sourceRssPeakMB: +(a.rss().peak / MiB).toFixed(1),
  };
  console.table([row]);
  console.log(JSON.stringify(row));
  await writer.close();
  await Promise.all([a.stop(), b.stop()]);
} finally {
  await cn.stop();
  rmSync(work, { recursive: true, force: true });
}
