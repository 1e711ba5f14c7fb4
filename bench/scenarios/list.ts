// listObjects paging through N objects (count=1000; full run 100,000) and pages at deep
// offsets; getLogRecords likewise over N events. Median ms per page, against a bare Hono
// route answering a page of the same size. The catalogue and log are seeded once, directly
// through the backend's adapters (catalogue.apply / eventLog.append in batches of 5,000), not
// over HTTP; every round pages through them again.
import { median, runLoad, type Subject } from '../lib/common.js';
import type { Measure } from '../lib/interleave.js';
import { ADMIN, capture, startFixedHono } from '../lib/memberkit.js';
import type { Scenario } from '../lib/scenario.js';

interface PagesResult {
  times: number[][];
}

const PAGE = 1000;
const DEEP_REPEAT = 5;

export const list: Scenario = {
  name: 'list',
  description: 'listObjects and getLogRecords: median ms per page (count=1000), full paging and deep offsets, vs a bare Hono route with a page of the same size',
  cost: (o, subjects) => {
    const pages = Math.ceil(o.listObjects / PAGE);
    const seed = (o.listObjects / 100_000) * 15; // ~15 s per 100,000 objects and events, per node
    // Six load-worker runs (~0.7 s to start each) per subject and round: three full pagings and
    // three deep-offset runs, ~10 ms a page of 1,000 (measured: ~20 s a round for three subjects).
    return { seconds: 5 + (subjects - 1) * seed + subjects * o.repeat * (6 * 0.7 + (3 * pages + 3 * 3 * DEEP_REPEAT) * 0.01), what: `${o.listObjects} objects and events seeded once per node; 3 full pagings and 3 deep-offset runs per subject and round` };
  },
  async run(ctx) {
    const { options } = ctx;
    const n = options.listObjects;
    const seedStart = performance.now();
    const nodes = await ctx.startNodes('list', (seed, dir) => seed.catalogue(dir, { count: n, objectBytes: 1024, events: n }));
    const seedSeconds = (performance.now() - seedStart) / 1000;
    const head = nodes.of('memberkit');
    const admin = { Authorization: ADMIN };
    const routes = [
      await capture(`${head.baseUrl}/v2/object?start=0&count=${PAGE}`, 'GET', admin),
      await capture(`${head.baseUrl}/v2/log?start=0&count=${PAGE}`, 'GET', admin),
    ];
    const baseline = await startFixedHono(ctx.folder('hono'), routes);
    const baseUrl = `http://127.0.0.1:${baseline.port}/mn`;
    const starts = Array.from({ length: Math.ceil(n / PAGE) }, (_, i) => i * PAGE);
    const deep = [Math.floor(n / 2), Math.floor(n * 0.9), Math.max(0, n - PAGE)];
    const name = 'bare Hono route, same page size';
    const pages = (op: string, path: string, label: string, pageStarts: number[], repeat: number, headers: Record<string, string>, note?: string): Measure => ({
      metrics: [{ metric: `${op} ${label}`, unit: 'ms/page', higherIsBetter: false, baselineName: name, ...(note ? { note } : {}) }],
      async run(subject: Subject) {
        const urls = pageStarts.map((s) => (subject === 'baseline' ? `${baseUrl}/v2/${path}` : `${nodes.of(subject).baseUrl}/v2/${path}?start=${s}&count=${PAGE}`));
        const r = await runLoad<PagesResult>({ kind: 'pages', urls, headers, repeat });
        return [median(r.times.flat())];
      },
    });
    try {
      const seedNote = `${n} objects/events seeded per node through its own adapters in ${seedSeconds.toFixed(1)} s (all nodes)`;
      return await ctx.interleave([
        pages('listObjects', 'object', `page through ${n} (CN/admin)`, starts, 1, admin, seedNote),
        pages('listObjects', 'object', `deep offsets ${deep.join('/')} (CN/admin)`, deep, DEEP_REPEAT, admin),
        pages('listObjects', 'object', `page through ${n} (public)`, starts, 1, {}),
        pages('listObjects', 'object', 'deep offsets (public)', deep, DEEP_REPEAT, {}),
        pages('getLogRecords', 'log', `page through ${n} (admin)`, starts, 1, admin),
        pages('getLogRecords', 'log', 'deep offsets (admin)', deep, DEEP_REPEAT, admin),
      ]);
    } finally {
      await baseline.stop();
      await nodes.stop();
    }
  },
};
