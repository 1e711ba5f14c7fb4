// create: small objects per second (16 connections, unique PIDs; each subject first takes an
// unmeasured load run of the same length, so the figure is a warmed node's rate; with the CPU the
// server, and PostgreSQL on that backend, spent per create), and a large upload
// (1 GiB; --quick 64 MiB) in MiB/s with checksums, against a bare server writing the same
// request bodies to disk with MD5, SHA-1 and SHA-256 and an fsync per file.
import { randomBytes } from 'node:crypto';
import { cpuMs, MiB, runLoad, startServerProcess, type AutocannonSummary, type Subject } from '../lib/common.js';
import type { Measure } from '../lib/interleave.js';
import { WRITER } from '../lib/memberkit.js';
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

/** Where bytes go to a local folder: the baseline writes to disk (S3 transfers are measured by adapters/s3/bench/streaming-s3.ts). */
const uploads = (backend: string) => backend.startsWith('files+');

export const create: Scenario = {
  name: 'create',
  description: 'create: small objects/s, and a large upload in MiB/s vs a bare server hashing (MD5+SHA-1+SHA-256) and writing to disk',
  cost: (o, subjects) => {
    // ~120 MiB/s with three digests and an fsync, and as long again to remove what was written.
    const upload = uploads(o.backend) ? (o.largeBytes / MiB / 120) * 1.2 + 0.8 : 0;
    return { seconds: 5 + subjects * o.repeat * (2 * (o.duration + 0.8) + upload), what: `a warm-up and a measured load run of --duration${upload ? ' and one large upload' : ''} per subject and round` };
  },
  async run(ctx) {
    const { options } = ctx;
    const nodes = await ctx.startNodes('create');
    const sink = await startServerProcess('baselines/upload-sink.ts', [ctx.folder('sink'), 'true']);
    const headers = { Authorization: WRITER, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` };
    const urlOf = (subject: Subject) => (subject === 'baseline' ? `http://127.0.0.1:${sink.port}/` : `${nodes.of(subject).baseUrl}/v2/object`);
    const name = 'bare node:http, 3 hashes + fsync';
    // The catalogue's server works for memberkit's creates too (its processes are named so).
    const databaseProcesses = options.backend.endsWith('+postgres') ? ['postgres'] : [];
    try {
      // Small objects: 1 KiB of text each, a new PID per request (round number and the load worker's `{{n}}`).
      const small = randomBytes(512).toString('hex');
      const measures: Measure[] = [
        {
          metrics: [
            { metric: 'create 1 KiB c=16 objects/s', unit: 'obj/s', higherIsBetter: true, baselineName: name },
            { metric: 'create 1 KiB c=16 p99', unit: 'ms', higherIsBetter: false, baselineName: name },
            // What a create costs in CPU: its ratio to the baseline's holds steadier than the rates' on shared cores.
            { metric: `create 1 KiB CPU per object (server${databaseProcesses.length > 0 ? ' + PostgreSQL' : ''})`, unit: 'ms', higherIsBetter: false, baselineName: name, note: 'all threads and processes of the server' },
          ],
          async run(subject, round) {
            const body = (pid: string) => part('pid', pid) + part('object', small, 'object.bin') + part('sysmeta', clientSysmeta(pid, Buffer.from(small)), 'sysmeta.xml') + `--${BOUNDARY}--\r\n`;
            // Unmeasured first: a node's first thousands of creates after it starts run about half
            // as fast, on the same folder after a restart too (so not its files growing): its
            // code is still being compiled (V8's background threads took ~0.9 s of CPU in the
            // first 3 s, nothing later; the main thread 1.8 ms a create, later 0.95). The
            // figure is the rate of a node that has been taking creates.
            const load = async (pids: string, what: string): Promise<AutocannonSummary> => {
              const r = await runLoad<AutocannonSummary>({ kind: 'autocannon', url: urlOf(subject), method: 'POST', connections: 16, duration: options.duration, headers, bodyTemplate: body(pids) });
              if (r.non2xx > 0 || r.errors > 0) throw new Error(`create (${what}): ${r.non2xx} non-2xx, ${r.errors} errors`);
              return r;
            };
            await load(`small-r${round}-warm-{{n}}`, `${subject}, warm-up`);
            const cpu = () => (subject === 'baseline' ? cpuMs([sink.child.pid]) : cpuMs([nodes.of(subject).child.pid], databaseProcesses));
            const before = cpu();
            const r = await load(`small-r${round}-{{n}}`, subject);
            return [r.rps, r.p99, (cpu() - before) / r.requests];
          },
        },
      ];
      if (uploads(options.backend)) {
        // A large object, streamed; the SHA-1 in the sysmeta part is computed by the client beforehand.
        const size = options.largeBytes;
        const label = size >= 1024 * MiB ? `${size / 1024 / MiB} GiB` : `${size / MiB} MiB`;
        measures.push({
          metrics: [{ metric: `upload ${label} MiB/s`, unit: 'MiB/s', higherIsBetter: true, baselineName: name, note: 'fsync on' }],
          async run(subject, round) {
            const pid = `large-r${round}`;
            const head = part('pid', pid) + `--${BOUNDARY}\r\nContent-Disposition: form-data; name="object"; filename="large.bin"\r\n\r\n`;
            const tailTemplate = `\r\n` + part('sysmeta', clientSysmeta(pid, { size, sha1: '{{sha1}}' }), 'sysmeta.xml') + `--${BOUNDARY}--\r\n`;
            const r = await runLoad<UploadResult>({ kind: 'upload', url: urlOf(subject), headers, head, tailTemplate, size, repeat: 1 });
            const run = r.runs[0]!;
            if (run.status !== 200) throw new Error(`large create (${subject}) failed: ${run.status} ${run.body}`);
            return [size / MiB / run.seconds];
          },
        });
      }
      return await ctx.interleave(measures);
    } finally {
      await sink.stop();
      await nodes.stop();
    }
  },
};
