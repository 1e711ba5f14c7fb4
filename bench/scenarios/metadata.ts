// describe (HEAD /object/{pid}) and getSystemMetadata (GET /meta/{pid}): requests/s, p50 and
// p99 at 16 and 64 connections, against a bare Hono route answering the same headers and body.
import { row, runLoad, type AutocannonSummary, type ResultRow } from '../lib/common.js';
import { capture, startFixedHono, startMemberkit } from '../lib/memberkit.js';
import type { Scenario } from '../lib/scenario.js';
import { seedCatalogue } from '../lib/seed.js';

export const metadata: Scenario = {
  name: 'metadata',
  description: 'describe and getSystemMetadata: requests/s, p50/p99 at 16 and 64 connections vs a bare Hono route with the same body',
  async run(ctx) {
    const { options } = ctx;
    const dir = ctx.folder('metadata');
    const [pid] = await seedCatalogue(dir, { count: 1, objectBytes: 4096 });
    const node = await startMemberkit(dir);
    const ops = [
      { op: 'describe', method: 'HEAD' as const, path: `/v2/object/${pid}` },
      { op: 'getSystemMetadata', method: 'GET' as const, path: `/v2/meta/${pid}` },
    ];
    const routes = await Promise.all(ops.map((o) => capture(`${node.baseUrl}${o.path}`, o.method)));
    // The describe route answers GET with the HEAD's headers and no body; Hono sends HEAD to it.
    const baseline = await startFixedHono(dir, routes);
    const rows: ResultRow[] = [];
    try {
      for (const o of ops) {
        for (const connections of [16, 64]) {
          // autocannon for GET; node:http clients for HEAD (autocannon waits for a HEAD body).
          const job = (base: string) => ({ kind: o.method === 'HEAD' ? 'http' : 'autocannon', url: `${base}${o.path}`, method: o.method, connections, duration: options.duration });
          const mk = await runLoad<AutocannonSummary>(job(node.baseUrl));
          const bl = await runLoad<AutocannonSummary>(job(`http://127.0.0.1:${baseline.port}/mn`));
          if (mk.non2xx > 0 || mk.errors > 0) throw new Error(`${o.op}: ${mk.non2xx} non-2xx, ${mk.errors} errors`);
          const name = 'bare Hono route, same body';
          rows.push(
            row('metadata', `${o.op} c=${connections} req/s`, 'req/s', mk.rps, bl.rps, name, true, options.backend),
            row('metadata', `${o.op} c=${connections} p50`, 'ms', mk.p50, bl.p50, name, false, options.backend),
            row('metadata', `${o.op} c=${connections} p99`, 'ms', mk.p99, bl.p99, name, false, options.backend),
          );
        }
      }
    } finally {
      await baseline.stop();
      await node.stop();
    }
    return rows;
  },
};
