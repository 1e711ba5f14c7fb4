// Streaming a large object (1 GiB; --quick 64 MiB): MiB/s against a bare node:http server
// piping the same stored file (target 0.8 or better), and the server's RSS growth. The object
// is seeded once; every round downloads it once per subject.
import { MiB, runLoad, startServerProcess, type Subject } from '../lib/common.js';
import type { Scenario } from '../lib/scenario.js';

interface DownloadResult {
  runs: Array<{ bytes: number; seconds: number }>;
}

export const download: Scenario = {
  name: 'download',
  description: 'get of a large object: MiB/s vs a bare node:http pipe of the same file; server RSS',
  cost: (o, subjects) => {
    const seconds = o.largeBytes / MiB / 200; // seeding writes it at ~200 MiB/s, a download reads it at ~1 GiB/s
    return { seconds: 5 + (subjects - 1) * seconds + subjects * o.repeat * (o.largeBytes / MiB / 800 + 1.5), what: `the object seeded once per node, one download per subject and round` };
  },
  async run(ctx) {
    const { options } = ctx;
    const size = options.largeBytes;
    const nodes = await ctx.startNodes('download', (seed, dir) => seed.large(dir, 'large', size));
    const baseline = await startServerProcess('baselines/pipe-file.ts', [nodes.seeded.path]);
    const name = 'bare node:http pipe, same file';
    const label = size >= 1024 * MiB ? `${size / 1024 / MiB} GiB` : `${size / MiB} MiB`;
    const server = (subject: Subject) => (subject === 'baseline' ? baseline : nodes.of(subject));
    // RSS growth is counted from each server's RSS before its first measured download, so a
    // server that kept what it streamed would grow round after round.
    const rssAtStart = new Map<Subject, number>();
    try {
      return await ctx.interleave([
        {
          metrics: [
            { metric: `stream ${label} MiB/s`, unit: 'MiB/s', higherIsBetter: true, baselineName: name },
            { metric: 'server RSS growth during download', unit: 'MB', higherIsBetter: false, baselineName: name, note: 'peak RSS while streaming minus RSS before the first download' },
          ],
          async run(subject) {
            const proc = server(subject);
            if (!rssAtStart.has(subject)) rssAtStart.set(subject, proc.rss().current);
            let rssMax = proc.rss().current;
            const sampler = setInterval(() => (rssMax = Math.max(rssMax, proc.rss().current)), 50);
            const url = subject === 'baseline' ? `http://127.0.0.1:${baseline.port}/large` : `${nodes.of(subject).baseUrl}/v2/object/large`;
            const r = await runLoad<DownloadResult>({ kind: 'download', url, repeat: 1 }).finally(() => clearInterval(sampler));
            const run = r.runs[0]!;
            if (run.bytes !== size) throw new Error(`download (${subject}) returned ${run.bytes} bytes, expected ${size}`);
            return [run.bytes / MiB / run.seconds, Math.max(0, rssMax - rssAtStart.get(subject)!) / MiB];
          },
        },
      ]);
    } finally {
      await baseline.stop();
      await nodes.stop();
    }
  },
};
