// get of a 4 KiB object: requests/s at 16 connections, against a bare node:http server piping
// the same stored file.
import { runLoad, startServerProcess, type AutocannonSummary } from '../lib/common.js';
import type { Scenario } from '../lib/scenario.js';

export const getSmall: Scenario = {
  name: 'get-small',
  description: 'get of a 4 KiB object: requests/s vs a bare node:http pipe of the same file',
  cost: (o, subjects) => ({ seconds: 5 + subjects * o.repeat * (o.duration + 0.8), what: 'one load run of --duration per subject and round' }),
  async run(ctx) {
    const { options } = ctx;
    const nodes = await ctx.startNodes('get-small', (seed, dir) => seed.large(dir, 'small-4k', 4096));
    const baseline = await startServerProcess('baselines/pipe-file.ts', [nodes.seeded.path]);
    const name = 'bare node:http pipe, same file';
    try {
      return await ctx.interleave([
        {
          metrics: [
            { metric: 'get 4 KiB c=16 req/s', unit: 'req/s', higherIsBetter: true, baselineName: name },
            { metric: 'get 4 KiB c=16 p99', unit: 'ms', higherIsBetter: false, baselineName: name },
          ],
          async run(subject) {
            const url = subject === 'baseline' ? `http://127.0.0.1:${baseline.port}/small-4k` : `${nodes.of(subject).baseUrl}/v2/object/small-4k`;
            const r = await runLoad<AutocannonSummary>({ kind: 'http', url, method: 'GET', connections: 16, duration: options.duration });
            if (r.non2xx > 0 || r.errors > 0) throw new Error(`get (${subject}): ${r.non2xx} non-2xx, ${r.errors} errors`);
            return [r.rps, r.p99];
          },
        },
      ]);
    } finally {
      await baseline.stop();
      await nodes.stop();
    }
  },
};
