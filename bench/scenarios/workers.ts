// `memberkit serve --workers N` against one worker (issue #21 item 5): describe and
// getSystemMetadata requests/s (and p99) with 64 requests in flight (16 connections, 4 pipelined
// on each), N = the machine's cores, on the same data and the same load generator. The
// generator shares the cores with the workers. Sending one request per write it cost 13 µs of
// CPU per request (with the kernel's loopback work) against 16 µs of one worker's
// (getSystemMetadata, measured per process from /proc), so on 2 cores N workers could not get
// more CPU than one: 1.01-1.08 × one worker, whatever the workers did. Pipelined it costs
// 7.5 µs, and the figure is the workers'. A worker still parses, routes and answers each
// request on its own; its reads take several requests at once (14.6 µs instead of 16), for
// one worker as for N.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { startNodeProcess, writeConfig, type NodeProcess } from '../../test/support/node-process.js';
import { currentBackend } from '../lib/backend.js';
import { log, runLoad, type AutocannonSummary, type Subject } from '../lib/common.js';
import type { Measure } from '../lib/interleave.js';
import type { Scenario, ScenarioContext } from '../lib/scenario.js';
import { seedCatalogue } from '../lib/seed.js';

const CONNECTIONS = 16;
/** Requests each connection sends in one write (see above): CONNECTIONS × PIPELINE in flight. */
const PIPELINE = 4;
/** Files of the wrapped tree (files+sqlite), 4 KiB each: the scan is over in a second. */
const TREE_FILES = 64;

/** Whether the CLI of a checkout has `serve --workers` (an older --compare ref has not). */
function knowsWorkers(root: string): boolean {
  try {
    return readFileSync(join(root, 'packages/cli/src/cli.ts'), 'utf8').includes("'--workers <n>'");
  } catch {
    return false;
  }
}

async function untilCatalogued(node: NodeProcess, total: number): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const body = await fetch(`${node.baseUrl}/v2/object?count=0`).then((r) => r.text());
    if (Number(/total="(\d+)"/.exec(body)?.[1] ?? 0) >= total) return;
    if (Date.now() > until) throw new Error(`the wrap scan did not catalogue ${total} files in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The data of one node under test: a wrapped tree (files+sqlite) or a seeded PostgreSQL catalogue; the PID measured. */
async function prepare(ctx: ScenarioContext, subject: Subject, tree: string): Promise<{ dir: string; pid: string; wrapped: boolean }> {
  const dir = ctx.folder(`workers-${subject}`);
  const backend = currentBackend();
  if (backend.name === 'files+sqlite') {
    writeConfig(dir, { storage: { type: 'tree', root: tree }, wrap: { rightsHolder: 'CN=bench' } });
    return { dir, pid: 'f-000.csv', wrapped: true };
  }
  const seed = { count: 1, objectBytes: 4096 };
  const pids = subject === 'ref' ? await ctx.ref!.seedCatalogue(dir, seed, backend.name) : await seedCatalogue(dir, seed);
  writeConfig(dir, await backend.config(dir));
  return { dir, pid: pids[0]!, wrapped: false };
}

export const workers: Scenario = {
  name: 'workers',
  description: `describe and getSystemMetadata, ${CONNECTIONS} connections × ${PIPELINE} pipelined: requests/s of --workers N (one per core) vs one worker, same data (files+sqlite: a wrapped tree, read-only; files+postgres: a managed node)`,
  cost: (o, subjects) => ({ seconds: 30 + 2 * subjects * o.repeat * (o.duration + 1.5), what: `2 load runs of --duration per subject and round, after ${subjects} node starts` }),
  async run(ctx) {
    const { options } = ctx;
    const n = Math.max(2, availableParallelism());
    const tree = ctx.folder('tree');
    for (let i = 0; i < TREE_FILES; i++) {
      const sub = join(tree, `site-${i % 4}`);
      mkdirSync(sub, { recursive: true });
      writeFileSync(join(i === 0 ? tree : sub, `f-${String(i).padStart(3, '0')}.csv`), `site,value\n${randomBytes(2040).toString('hex')}\n`);
    }
    // memberkit: N workers; the ref: N workers when it has the option; the baseline: this checkout in one process.
    const started = new Map<Subject, { node: NodeProcess; pid: string }>();
    try {
      for (const subject of ctx.subjects) {
        const { dir, pid, wrapped } = await prepare(ctx, subject, tree);
        const root = subject === 'ref' ? ctx.ref!.root : undefined;
        const count = subject === 'baseline' ? 1 : n;
        const node = await startNodeProcess(dir, [], root, root === undefined || knowsWorkers(root) ? { workers: count } : {});
        started.set(subject, { node, pid });
        if (wrapped) await untilCatalogued(node, TREE_FILES);
        // Every worker loads its lazily imported code before the first measure.
        await runLoad<AutocannonSummary>({ kind: 'autocannon', url: `${node.baseUrl}/v2/meta/${encodeURIComponent(pid)}`, method: 'GET', connections: 4 * count, duration: 1 });
      }
      log(`workers [${options.backend}]: ${n} worker processes vs 1 (${availableParallelism()} cores; the load generator runs beside them)`);
      const ops = [
        { op: 'describe', method: 'HEAD' as const, path: (pid: string) => `/v2/object/${encodeURIComponent(pid)}` },
        { op: 'getSystemMetadata', method: 'GET' as const, path: (pid: string) => `/v2/meta/${encodeURIComponent(pid)}` },
      ];
      const measures: Measure[] = ops.map((o) => ({
        metrics: (['req/s', 'p99'] as const).map((m) => ({
          metric: `${o.op} ${CONNECTIONS}×${PIPELINE} pipelined ${m}, ${n} workers`,
          unit: m === 'req/s' ? 'req/s' : 'ms',
          higherIsBetter: m === 'req/s',
          baselineName: 'memberkit, 1 worker',
        })),
        async run(subject) {
          const { node, pid } = started.get(subject)!;
          // The raw-socket generator, pipelined, for both: it costs the shared cores least, so the figure is the workers'.
          const r = await runLoad<AutocannonSummary>({ kind: 'http', url: `${node.baseUrl}${o.path(pid)}`, method: o.method, connections: CONNECTIONS, pipeline: PIPELINE, duration: options.duration });
          if (r.non2xx > 0 || r.errors > 0) throw new Error(`${o.op} (${subject}): ${r.non2xx} non-2xx, ${r.errors} errors`);
          return [r.rps, r.p99];
        },
      }));
      return await ctx.interleave(measures);
    } finally {
      for (const { node } of started.values()) await node.stop();
    }
  },
};
