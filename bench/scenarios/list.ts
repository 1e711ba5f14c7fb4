// listObjects paging through N objects (count=1000; full run 100,000) and pages at deep
// offsets; getLogRecords likewise over N events. Median ms per page, against a bare Hono
// route answering a page of the same size. The catalogue and log are seeded directly through
// the SQLite adapter (catalogue.apply / eventLog.append in batches of 5,000), not over HTTP.
import { median, row, runLoad, type ResultRow } from '../lib/common.js';
import { ADMIN, capture, startFixedHono, startMemberkit } from '../lib/memberkit.js';
import type { Scenario } from '../lib/scenario.js';
import { seedCatalogue } from '../lib/seed.js';

interface PagesResult {
  times: number[][];
}

const PAGE = 1000;

export const list: Scenario = {
  name: 'list',
  description: 'listObjects and getLogRecords: median ms per page (count=1000), full paging and deep offsets, vs a bare Hono route with a page of the same size',
  async run(ctx) {
    const { options } = ctx;
    const n = options.listObjects;
    const dir = ctx.folder('list');
    const seedStart = performance.now();
    await seedCatalogue(dir, { count: n, objectBytes: 1024, events: n });
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const node = await startMemberkit(dir);
    const admin = { Authorization: ADMIN };
    const routes = [
      await capture(`${node.baseUrl}/v2/object?start=0&count=${PAGE}`, 'GET', admin),
      await capture(`${node.baseUrl}/v2/log?start=0&count=${PAGE}`, 'GET', admin),
    ];
    const baseline = await startFixedHono(dir, routes);
    const baseUrl = `http://127.0.0.1:${baseline.port}/mn`;
    const rows: ResultRow[] = [];
    const starts = Array.from({ length: Math.ceil(n / PAGE) }, (_, i) => i * PAGE);
    const deep = [Math.floor(n / 2), Math.floor(n * 0.9), Math.max(0, n - PAGE)];
    const name = 'bare Hono route, same page size';
    try {
      const measure = async (op: string, path: string, label: string, pageStarts: number[], repeat: number, headers: Record<string, string>, note?: string) => {
        const mk = await runLoad<PagesResult>({ kind: 'pages', urls: pageStarts.map((s) => `${node.baseUrl}/v2/${path}?start=${s}&count=${PAGE}`), headers, repeat });
        const bl = await runLoad<PagesResult>({ kind: 'pages', urls: pageStarts.map(() => `${baseUrl}/v2/${path}`), headers, repeat });
        rows.push(row('list', `${op} ${label}`, 'ms/page', median(mk.times.flat()), median(bl.times.flat()), name, false, options.backend, note));
        return mk;
      };
      const seedNote = `${n} objects/events seeded via the SQLite adapter in ${seedSeconds.toFixed(1)} s`;
      await measure('listObjects', 'object', `page through ${n} (CN/admin)`, starts, 1, admin, seedNote);
      await measure('listObjects', 'object', `deep offsets ${deep.join('/')} (CN/admin)`, deep, 5, admin);
      await measure('listObjects', 'object', `page through ${n} (public)`, starts, 1, {});
      await measure('listObjects', 'object', `deep offsets (public)`, deep, 5, {});
      await measure('getLogRecords', 'log', `page through ${n} (admin)`, starts, 1, admin);
      await measure('getLogRecords', 'log', `deep offsets (admin)`, deep, 5, admin);
    } finally {
      await baseline.stop();
      await node.stop();
    }
    return rows;
  },
};
