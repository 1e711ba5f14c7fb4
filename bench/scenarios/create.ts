// create: small objects per second (16 connections, unique PIDs), and a large upload
// (1 GiB; --quick 64 MiB) in MiB/s with checksums, against a bare server writing the same
// request bodies to disk with MD5, SHA-1 and SHA-256 and an fsync per file.
import { randomBytes } from 'node:crypto';
import { MiB, row, runLoad, startServerProcess, type AutocannonSummary, type ResultRow } from '../lib/common.js';
import { startMemberkit, WRITER } from '../lib/memberkit.js';
import type { Scenario } from '../lib/scenario.js';
import { clientSysmeta } from '../../test/support/sysmeta.js';

const BOUNDARY = 'memberkit-bench-boundary';

function part(name: string, value: string, filename?: string): string {
  const disposition = `form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}`;
  return `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n${value}\r\n`;
}

interface UploadResult {
  runs: Array<{ status: number; seconds: number; body: string }>;
}

export const create: Scenario = {
  name: 'create',
  description: 'create: small objects/s, and a large upload in MiB/s vs a bare server hashing (MD5+SHA-1+SHA-256) and writing to disk',
  async run(ctx) {
    const { options } = ctx;
    const dir = ctx.folder('create');
    const node = await startMemberkit(dir);
    const sink = await startServerProcess('baselines/upload-sink.ts', [ctx.folder('sink'), 'true']);
    const headers = { Authorization: WRITER, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` };
    const rows: ResultRow[] = [];
    try {
      // Small objects: 1 KiB of text each, a new PID per request.
      const small = randomBytes(512).toString('hex');
      const pid = 'small-{{n}}';
      const bodyTemplate =
        part('pid', pid) + part('object', small, 'object.bin') + part('sysmeta', clientSysmeta(pid, Buffer.from(small)), 'sysmeta.xml') + `--${BOUNDARY}--\r\n`;
      const job = (url: string) => ({ kind: 'autocannon', url, method: 'POST', connections: 16, duration: options.duration, headers, bodyTemplate });
      const mk = await runLoad<AutocannonSummary>(job(`${node.baseUrl}/v2/object`));
      const bl = await runLoad<AutocannonSummary>(job(`http://127.0.0.1:${sink.port}/`));
      if (mk.non2xx > 0 || mk.errors > 0) throw new Error(`create: ${mk.non2xx} non-2xx, ${mk.errors} errors`);
      const name = 'bare node:http, 3 hashes + fsync';
      rows.push(
        row('create', 'create 1 KiB c=16 objects/s', 'obj/s', mk.rps, bl.rps, name, true, options.backend),
        row('create', 'create 1 KiB c=16 p99', 'ms', mk.p99, bl.p99, name, false, options.backend),
      );

      // A large object, streamed; the SHA-1 in the sysmeta part is computed by the client beforehand.
      // Only where bytes go to a local folder: the baseline writes to disk (S3 transfers are
      // measured against s3rver by adapters/s3/bench/streaming-s3.ts).
      if (!options.backend.startsWith('files+')) return rows;
      const size = options.largeBytes;
      const largePid = 'large-{{n}}';
      const head = part('pid', largePid) + `--${BOUNDARY}\r\nContent-Disposition: form-data; name="object"; filename="large.bin"\r\n\r\n`;
      const tailTemplate = `\r\n` + part('sysmeta', clientSysmeta(largePid, { size, sha1: '{{sha1}}' }), 'sysmeta.xml') + `--${BOUNDARY}--\r\n`;
      const repeat = options.quick ? 1 : 2;
      const up = (url: string) => runLoad<UploadResult>({ kind: 'upload', url, headers, head, tailTemplate, size, repeat });
      const mkUp = await up(`${node.baseUrl}/v2/object`);
      const blUp = await up(`http://127.0.0.1:${sink.port}/`);
      for (const r of mkUp.runs) if (r.status !== 200) throw new Error(`large create failed: ${r.status} ${r.body}`);
      const best = (u: UploadResult) => Math.max(...u.runs.map((r) => size / MiB / r.seconds));
      const label = size >= 1024 * MiB ? `${size / 1024 / MiB} GiB` : `${size / MiB} MiB`;
      rows.push(row('create', `upload ${label} MiB/s`, 'MiB/s', best(mkUp), best(blUp), name, true, options.backend, `best of ${repeat}; fsync on`));
    } finally {
      await sink.stop();
      await node.stop();
    }
    return rows;
  },
};
