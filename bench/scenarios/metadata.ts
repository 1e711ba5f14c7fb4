// describe (HEAD /object/{pid}) and getSystemMetadata (GET /meta/{pid}): requests/s, p50 and
// p99 at 16 and 64 connections, against a bare Hono route answering the same headers and body.
import { type AutocannonSummary, runLoad } from '../lib/common.js';
import type { Measure } from '../lib/interleave.js';
import { capture, startFixedHono } from '../lib/memberkit.js';
import type { Scenario } from '../lib/scenario.js';

const LOAD_RUNS = 4;

export const metadata: Scenario = {
  name: 'metadata',
  description: 'describe and getSystemMetadata: requests/s, p50/p99 at 16 and 64 connections vs a bare Hono route with the same body',
  cost: (o, subjects) => ({ seconds: 5 + LOAD_RUNS * subjects * o.repeat * (o.duration + 0.8), what: `${LOAD_RUNS} load runs of --duration per subject and round` }),
  async run(ctx) {
    const { options } = ctx;
    const nodes = await ctx.startNodes('metadata', (seed, dir) => seed.catalogue(dir, { count: 1, objectBytes: 4096 }));
    const pid = nodes.seeded[0]!;
    const ops = [
      { op: 'describe', method: 'HEAD' as const, path: `/v2/object/${encodeURIComponent(pid)}` },
      { op: 'getSystemMetadata', method: 'GET' as const, path: `/v2/meta/${encodeURIComponent(pid)}` },
    ];
    const head = nodes.of('memberkit');
    const routes = await Promise.all(ops.map((o) => capture(`${head.baseUrl}${o.path}`, o.method)));
    // The describe route answers GET with the HEAD's headers and no body; Hono sends HEAD to it.
    const baseline = await startFixedHono(ctx.folder('hono'), routes);
    const name = 'bare Hono route, same body';
    try {
      const measures: Measure[] = ops.flatMap((o) =>
        [16, 64].map((connections) => ({
          metrics: (['req/s', 'p50', 'p99'] as const).map((m) => ({
            metric: `${o.op} c=${connections} ${m}`,
            unit: m === 'req/s' ? 'req/s' : 'ms',
            higherIsBetter: m === 'req/s',
            baselineName: name,
          })),
          async run(subject) {
            const base = subject === 'baseline' ? `http://127.0.0.1:${baseline.port}/mn` : nodes.of(subject).baseUrl;
            // The raw-socket generator (bench/load-worker.ts 'http'): the lightest on the shared cores.
            const r = await runLoad<AutocannonSummary>({ kind: 'http', url: `${base}${o.path}`, method: o.method, connections, duration: options.duration });
            if (r.non2xx > 0 || r.errors > 0) throw new Error(`${o.op} (${subject}): ${r.non2xx} non-2xx, ${r.errors} errors`);
            return [r.rps, r.p50, r.p99];
          },
        })),
      );
      return await ctx.interleave(measures);
    } finally {
      await baseline.stop();
      await nodes.stop();
    }
  },
};
