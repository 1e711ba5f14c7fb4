// memberkit benchmarks against the physical baselines of this machine (issue #8).
//
//   npm run bench                          every scenario, full sizes (~10 minutes on 2 cores)
//   npm run bench -- --quick               smaller sizes, a smoke run
//   npm run bench -- --only list,wrap      some scenarios
//   npm run bench -- --out file.json       JSON results elsewhere (default bench-results.json)
//   npm run bench -- --duration 5          seconds per autocannon run
//   npm run bench -- --backend all         files+sqlite (default), files+postgres, s3+sqlite or all
//
// Every node under test runs as `memberkit serve` in its own process, every baseline in
// another, and the load generator (bench/load-worker.ts, autocannon or node:http) in a third.
// Output: a table on stdout (ratio = memberkit's speed relative to the baseline: 1.0 = as
// fast, below 1 slower) and a JSON file.
//
// Backends (lib/backend.ts): the embedded default, a PostgreSQL catalogue, S3 storage on
// s3rver. Each runs the scenarios it changes; rows name their backend.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MiB, log, ROOT, type BenchOptions, type ResultRow } from './lib/common.js';
import { BACKENDS, createBackend, useBackend } from './lib/backend.js';
import { scenarioContext, type Scenario } from './lib/scenario.js';
import { create } from './scenarios/create.js';
import { download } from './scenarios/download.js';
import { getSmall } from './scenarios/get-small.js';
import { list } from './scenarios/list.js';
import { metadata } from './scenarios/metadata.js';
import { wrap } from './scenarios/wrap.js';

const SCENARIOS: Scenario[] = [metadata, getSmall, download, create, list, wrap];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
    duration: { type: 'string' },
    backend: { type: 'string', default: 'files+sqlite' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log(`npm run bench -- [--quick] [--only ${SCENARIOS.map((s) => s.name).join(',')}] [--backend ${BACKENDS.join('|')}|all] [--out file.json] [--duration s]`);
  for (const s of SCENARIOS) console.log(`  ${s.name.padEnd(10)} ${s.description}`);
  process.exit(0);
}

const quick = values.quick;
const options: BenchOptions = {
  quick,
  duration: values.duration !== undefined ? Number(values.duration) : quick ? 2 : 5,
  largeBytes: quick ? 64 * MiB : 1024 * MiB,
  listObjects: quick ? 5_000 : 100_000,
  wrapFiles: quick ? 2_000 : 100_000,
  backend: 'files+sqlite',
};

const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
for (const name of only ?? []) {
  if (!SCENARIOS.some((s) => s.name === name)) {
    console.error(`unknown scenario '${name}'; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
}
const selected = SCENARIOS.filter((s) => !only || only.includes(s.name));
const outFile = values.out ?? join(ROOT, 'bench-results.json');

function fmt(n: number | null): string {
  if (n === null) return '-';
  if (Math.abs(n) >= 1000) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

function table(rows: ResultRow[]): string {
  const head = ['scenario', 'backend', 'metric', 'unit', 'memberkit', 'baseline', 'ratio', 'baseline is'];
  const body = rows.map((r) => [r.scenario, r.backend, r.metric, r.unit, fmt(r.memberkit), fmt(r.baseline), r.ratio === null ? '-' : r.ratio.toFixed(2), r.baselineName]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i >= 4 && i <= 6 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  return [line(head), `|${widths.map((w, i) => (i >= 4 && i <= 6 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`, ...body.map(line)].join('\n');
}

const backendNames = values.backend === 'all' ? [...BACKENDS] : (values.backend ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const tmp = mkdtempSync(join(tmpdir(), 'memberkit-bench-'));
const startedAt = new Date();
const rows: ResultRow[] = [];
const failures: Array<{ scenario: string; error: string }> = [];
try {
  for (const backendName of backendNames) {
    const backend = await createBackend(backendName);
    useBackend(backend);
    const backendOptions = { ...options, backend: backend.name };
    try {
      for (const scenario of selected.filter((s) => backend.scenarios.includes(s.name))) {
        const t0 = performance.now();
        log(`${scenario.name} [${backend.name}]: ${scenario.description}`);
        try {
          const scenarioRows = await scenario.run(scenarioContext(backendOptions, tmp));
          rows.push(...scenarioRows);
          log(`${scenario.name} [${backend.name}]: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        } catch (err) {
          failures.push({ scenario: `${scenario.name} [${backend.name}]`, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
          log(`${scenario.name} [${backend.name}]: FAILED ${String(err)}`);
        }
      }
    } finally {
      await backend.stop();
    }
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

const result = {
  schema: 'memberkit-bench/1',
  startedAt: startedAt.toISOString(),
  durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 100) / 10,
  quick,
  options,
  machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '', memoryBytes: totalmem() },
  backends: backendNames,
  scenarios: selected.map((s) => s.name),
  results: rows,
  failures,
};
writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n');
console.log(table(rows));
console.log(`\nratio: memberkit's speed relative to the baseline (1.0 = as fast; below 1 = slower). JSON: ${outFile}`);
if (failures.length > 0) {
  for (const f of failures) console.error(`FAILED ${f.scenario}: ${f.error}`);
  process.exitCode = 1;
}
