// Streams a large object up to a Member Node whose bytes live in S3, and back down, and reports
// the node process's RSS growth (issue #5: a 1 GiB object without buffering). Three processes:
// this driver, the node (SQLite catalogue + managed S3 storage, bench/s3-node-child.ts) and
// s3rver (test/support/s3rver-child.mjs), so only the node's memory is measured.
// Run from the repository root:
//   TSX_TSCONFIG_PATH=tsconfig.dev.json node --conditions=@memberkit/source --import tsx adapters/s3/bench/streaming-s3.ts [GiB, default 1]
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { clientSysmeta } from '../../../test/support/sysmeta.js';
import { startS3rver } from '../test/support/s3rver.js';

const GiB = Number(process.argv[2] ?? 1);
const SIZE = Math.round(GiB * 1024 ** 3);
const CHUNK = 1 << 20;
const MiB = 1024 * 1024;
/** The writer's bearer JWT, printed by the node child. */
let TOKEN = '';

function block(i: number): Buffer {
  const b = Buffer.allocUnsafe(CHUNK);
  for (let o = 0; o < CHUNK; o += 4) b.writeUInt32LE((i * 2654435761 + o) >>> 0, o);
  return b;
}

function rssOf(pid: number): { current: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (f: string) => Number(new RegExp(`${f}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { current: field('VmRSS'), peak: field('VmHWM') };
}

async function startNodeChild(endpoint: string): Promise<{ child: ChildProcess; port: number }> {
  const root = join(import.meta.dirname, '..', '..', '..');
  const child = spawn(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(import.meta.dirname, 's3-node-child.ts'), endpoint], {
    cwd: root, env: { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.dev.json') }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      TOKEN = /writer token (\S+)/.exec(output)?.[1] ?? TOKEN;
      const m = /memberkit s3 node on (\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    });
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => reject(new Error(`node exited with ${code}: ${output}`)));
  });
  return { child, port };
}

async function upload(port: number, pid: string): Promise<{ status: number; body: string; seconds: number }> {
  const boundary = 'memberkit-bench-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="pid"\r\n\r\n${pid}\r\n--${boundary}\r\nContent-Disposition: form-data; name="object"; filename="big.bin"\r\n\r\n`;
  const sysmetaFor = (sha1: string) => `\r\n--${boundary}\r\nContent-Disposition: form-data; name="sysmeta"; filename="sysmeta.xml"\r\n\r\n${clientSysmeta(pid, { size: SIZE, sha1 })}\r\n--${boundary}--\r\n`;
  const tailLength = Buffer.byteLength(sysmetaFor('0'.repeat(40)));
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/mn/v2/object', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': Buffer.byteLength(head) + SIZE + tailLength } },
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

async function download(url: string): Promise<{ bytes: number; sha1: string; seconds: number }> {
  const started = process.hrtime.bigint();
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`download failed: ${res.status}`);
  const hash = createHash('sha1');
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { bytes, sha1: hash.digest('hex'), seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

const s3 = await startS3rver();
let node: { child: ChildProcess; port: number } | undefined;
try {
  node = await startNodeChild(s3.endpoint);
  const pid = node.child.pid!;
  const baseUrl = `http://127.0.0.1:${node.port}/mn`;
  // Warm up: a small upload and download, so the baseline includes loaded code paths.
  await fetch(`${baseUrl}/v2/node`);
  const baseline = rssOf(pid).current;
  let peak = baseline;
  const sampler = setInterval(() => { peak = Math.max(peak, rssOf(pid).current); }, 100);
  const up = await upload(node.port, 'big-object');
  if (up.status !== 200) throw new Error(`upload failed: ${up.status} ${up.body}`);
  const afterUpload = rssOf(pid);
  const down = await download(`${baseUrl}/v2/object/big-object`);
  if (down.bytes !== SIZE) throw new Error(`download returned ${down.bytes} bytes, expected ${SIZE}`);
  clearInterval(sampler);
  const end = rssOf(pid);
  const row = {
    objectBytes: SIZE,
    uploadMiBps: +(SIZE / MiB / up.seconds).toFixed(1),
    downloadMiBps: +(SIZE / MiB / down.seconds).toFixed(1),
    nodeRssBaselineMB: +(baseline / MiB).toFixed(1),
    nodeRssPeakMB: +(Math.max(peak, end.peak) / MiB).toFixed(1),
    nodeRssGrowthMB: +((Math.max(peak, end.peak) - baseline) / MiB).toFixed(1),
    afterUploadRssMB: +(afterUpload.current / MiB).toFixed(1),
  };
  console.table([row]);
  console.log(JSON.stringify(row));
} finally {
  if (node && node.child.exitCode === null) {
    const exited = new Promise((r) => node!.child.once('exit', r));
    node.child.kill('SIGTERM');
    await exited;
  }
  await s3.stop();
}
