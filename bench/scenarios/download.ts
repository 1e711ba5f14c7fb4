// Streaming a large object (1 GiB; --quick 64 MiB): MiB/s against a bare node:http server
// piping the same stored file (target 0.8 or better), and the server's RSS.
import { MiB, row, runLoad, startServerProcess } from '../lib/common.js';
import { startMemberkit } from '../lib/memberkit.js';
import type { Scenario } from '../lib/scenario.js';
import { seedLarge } from '../lib/seed.js';

interface DownloadResult {
  runs: Array<{ bytes: number; seconds: number }>;
}

export const download: Scenario = {
  name: 'download',
  description: 'get of a large object: MiB/s vs a bare node:http pipe of the same file; server RSS',
  async run(ctx) {
    const { options } = ctx;
    const size = options.largeBytes;
    const dir = ctx.folder('download');
    const { path } = await seedLarge(dir, 'large', size);
    const node = await startMemberkit(dir);
    const baseline = await startServerProcess('baselines/pipe-file.ts', [path]);
    const repeat = 2;
    try {
      const rssBefore = node.rss().current;
      let rssMax = rssBefore;
      const sampler = setInterval(() => (rssMax = Math.max(rssMax, node.rss().current)), 50);
      const mk = await runLoad<DownloadResult>({ kind: 'download', url: `${node.baseUrl}/v2/object/large`, repeat });
      clearInterval(sampler);
      const blRssBefore = baseline.rss().current;
      let blRssMax = blRssBefore;
      const blSampler = setInterval(() => (blRssMax = Math.max(blRssMax, baseline.rss().current)), 50);
      const bl = await runLoad<DownloadResult>({ kind: 'download', url: `http://127.0.0.1:${baseline.port}/large`, repeat });
      clearInterval(blSampler);
      for (const r of mk.runs) if (r.bytes !== size) throw new Error(`download returned ${r.bytes} bytes, expected ${size}`);
      const best = (d: DownloadResult) => Math.max(...d.runs.map((r) => r.bytes / MiB / r.seconds));
      const name = 'bare node:http pipe, same file';
      const label = size >= 1024 * MiB ? `${size / 1024 / MiB} GiB` : `${size / MiB} MiB`;
      return [
        row('download', `stream ${label} MiB/s`, 'MiB/s', best(mk), best(bl), name, true, options.backend, `best of ${repeat}`),
        row('download', 'server RSS growth during download', 'MB', (rssMax - rssBefore) / MiB, (blRssMax - blRssBefore) / MiB, name, false, options.backend, `memberkit RSS before ${(rssBefore / MiB).toFixed(0)} MB`),
      ];
    } finally {
      await baseline.stop();
      await node.stop();
    }
  },
};
