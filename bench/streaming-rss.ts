// Streams a large object up to a node and back down, in a separate node process, and
// reports the server's RSS growth. Target (issue #3): a 2 GiB object moves RSS by < 100 MB.
// Run: npm run bench:streaming -- [GiB, default 2]
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNodeProcess, testToken, writeConfig } from '../test/support/node-process.js';
import { clientSysmeta } from '../test/support/sysmeta.js';

const WRITER = `Bearer ${await testToken('CN=writer')}`;

const GiB = Number(process.argv[2] ?? 2);
const SIZE = Math.round(GiB * 1024 ** 3);
const CHUNK = 1 << 20;
const MiB = 1024 * 1024;

function block(i: number): Buffer {
  const b = Buffer.allocUnsafe(CHUNK);
  for (let o = 0; o < CHUNK; o += 4) b.writeUInt32LE((i * 2654435761 + o) >>> 0, o);
  return b;
}

async function upload(port: number, pid: string): Promise<{ status: number; body: string; seconds: number }> {
  const boundary = 'memberkit-bench-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="pid"\r\n\r\n${pid}\r\n--${boundary}\r\nContent-Disposition: form-data; name="object"; filename="big.bin"\r\n\r\n`;
  const sysmetaFor = (sha1: string) => `\r\n--${boundary}\r\nContent-Disposition: form-data; name="sysmeta"; filename="sysmeta.xml"\r\n\r\n${clientSysmeta(pid, { size: SIZE, sha1 })}\r\n--${boundary}--\r\n`;
  const tailLength = Buffer.byteLength(sysmetaFor('0'.repeat(40)));
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/mn/v2/object', headers: { Authorization: WRITER, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': Buffer.byteLength(head) + SIZE + tailLength } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, seconds: Number(process.hrtime.bigint() - started) / 1e9 }));
      },
    );
    req.on('error', reject);
    const hash = createHash('sha1');
    let i = 0;
    let sent = 0;
    const pump = () => {
      while (sent < SIZE) {
        const b = block(i++).subarray(0, Math.min(CHUNK, SIZE - sent));
        hash.update(b);
        sent += b.length;
        if (!req.write(b)) return void req.once('drain', pump);
      }
      req.end(sysmetaFor(hash.digest('hex')));
    };
    req.write(head);
    pump();
  });
}

async function download(url: string): Promise<{ bytes: number; seconds: number }> {
  const started = process.hrtime.bigint();
  const res = await fetch(url);
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return { bytes, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

const dir = mkdtempSync(join(tmpdir(), 'memberkit-bench-'));
try {
  writeConfig(dir, { storage: { fsync: true } });
  const node = await startNodeProcess(dir);
  await fetch(`${node.baseUrl}/v2/node`);
  const baseline = node.rss().current;
  const up = await upload(node.port, 'big-object');
  if (up.status !== 200) throw new Error(`upload failed: ${up.status} ${up.body}`);
  const afterUpload = node.rss();
  const down = await download(`${node.baseUrl}/v2/object/big-object`);
  if (down.bytes !== SIZE) throw new Error(`download returned ${down.bytes} bytes, expected ${SIZE}`);
  const afterDownload = node.rss();
  await node.stop();
  const row = {
    objectBytes: SIZE,
    uploadMiBps: +(SIZE / MiB / up.seconds).toFixed(1),
    downloadMiBps: +(SIZE / MiB / down.seconds).toFixed(1),
    serverRssBaselineMB: +(baseline / MiB).toFixed(1),
    serverRssPeakMB: +(afterDownload.peak / MiB).toFixed(1),
    serverRssGrowthMB: +((afterDownload.peak - baseline) / MiB).toFixed(1),
    afterUploadRssMB: +(afterUpload.current / MiB).toFixed(1),
  };
  console.table([row]);
  console.log(JSON.stringify(row));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
