// memberkit benchmarks against the physical baselines of this machine (issues #8, #21).
//
//   npm run bench                          every scenario, full sizes, 5 rounds (--help: what each costs)
//   npm run bench -- --quick               smaller sizes, 2 rounds, a smoke run
//   npm run bench -- --only list,wrap      some scenarios
//   npm run bench -- --repeat 7            rounds per scenario (default 5, --quick 2)
//   npm run bench -- --only wrap --wrap-files 20000   files in the wrapped tree (default 100,000, --quick 2,000)
//   npm run bench -- --compare <git ref>   also measure that commit of memberkit, in the same rounds
//   npm run bench -- --out file.json       JSON results elsewhere (default bench-results.json)
//   npm run bench -- --duration 5          seconds per load run
//   npm run bench -- --backend all         files+sqlite (default), files+postgres, s3+sqlite or all
//
// Every node under test runs as `memberkit serve` in its own process, every baseline in
// another, and the load generator (bench/load-worker.ts) in a third: request rates on raw
// keep-alive sockets (the lightest generator on shared cores), creates with autocannon,
// transfers with node:http.
// Each scenario seeds its data once and then runs its measures in rounds (lib/interleave.ts):
// memberkit and its baseline (and the --compare ref) back to back, the order rotating, so
// every ratio compares two samples taken side by side. Output: a table on stdout (medians, the
// median per-round ratio with its min…max) and a JSON file with every sample.
//
// Backends (lib/backend.ts): the embedded default, a PostgreSQL catalogue, S3 storage on
// s3rver. Each runs the scenarios it changes; rows name their backend.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MiB, log, ROOT, type BenchOptions, type ResultRow } from './lib/common.js';
import { BACKENDS, createBackend, useBackend } from './lib/backend.js';
import { CompareError, prepareRef, type RefCheckout } from './lib/compare.js';
import { roundOrder } from './lib/interleave.js';
import { scenarioContext, type Scenario } from './lib/scenario.js';
import { compareTable, legend, table } from './lib/table.js';
import { create } from './scenarios/create.js';
import { download } from './scenarios/download.js';
import { getSmall } from './scenarios/get-small.js';
import { list } from './scenarios/list.js';
import { metadata } from './scenarios/metadata.js';
import { wrap } from './scenarios/wrap.js';
import { workers } from './scenarios/workers.js';

const SCENARIOS: Scenario[] = [metadata, getSmall, download, create, list, wrap, workers];

function usage(message: string): never {
  console.error(message);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string' },
      duration: { type: 'string' },
      repeat: { type: 'string' },
      'wrap-files': { type: 'string' },
      compare: { type: 'string' },
      backend: { type: 'string', default: 'files+sqlite' },
      help: { type: 'boolean', default: false },
    },
  });
} catch (err) {
  usage(err instanceof Error ? err.message : String(err));
}
const { values } = parsed;

const quick = values.quick;
const positive = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!(n > 0) || !Number.isFinite(n)) usage(`--${name} must be a positive number, got '${value}'`);
  return n;
};
const repeat = positive('repeat', values.repeat, quick ? 2 : 5);
if (!Number.isInteger(repeat)) usage(`--repeat must be a whole number, got '${values.repeat}'`);
const options: BenchOptions = {
  quick,
  duration: positive('duration', values.duration, quick ? 2 : 5),
  repeat,
  largeBytes: quick ? 64 * MiB : 1024 * MiB,
  listObjects: quick ? 5_000 : 100_000,
  wrapFiles: positive('wrap-files', values['wrap-files'], quick ? 2_000 : 100_000),
  backend: 'files+sqlite',
};

function minutes(seconds: number): string {
  return seconds < 90 ? `${Math.round(seconds)} s` : `${(seconds / 60).toFixed(seconds < 600 ? 1 : 0)} min`;
}

if (values.help) {
  console.log(`npm run bench -- [--quick] [--only ${SCENARIOS.map((s) => s.name).join(',')}] [--backend ${BACKENDS.join('|')}|all] [--repeat N] [--compare <git ref>] [--out file.json] [--duration s] [--wrap-files N]`);
  console.log(`\nScenarios, with what a run costs on 2 cores at the defaults (${options.repeat} rounds, ${options.duration} s load runs; files+sqlite; with --compare):`);
  let total = 0;
  let totalCompare = 0;
  for (const s of SCENARIOS) {
    const alone = s.cost(options, 2);
    const compared = s.cost(options, 3);
    total += alone.seconds;
    totalCompare += compared.seconds;
    console.log(`  ${s.name.padEnd(10)} ~${minutes(alone.seconds).padEnd(8)} (--compare ~${minutes(compared.seconds)}): ${alone.what}\n  ${''.padEnd(10)} ${s.description}`);
  }
  console.log(`  all        ~${minutes(total)} (--compare ~${minutes(totalCompare)}).`);
  for (const name of BACKENDS) console.log(`  ${name} runs ${(await createBackend(name)).scenarios.join(', ')}.`);
  console.log(`\n--compare <ref> checks the commit out in a temporary git worktree (removed at the end), links this checkout's node_modules into it, seeds its data folders through its own bench/lib/seed.ts and starts it with its own CLI; files+sqlite and files+postgres.`);
  process.exit(0);
}

const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
for (const name of only ?? []) {
  if (!SCENARIOS.some((s) => s.name === name)) usage(`unknown scenario '${name}'; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
}
const selected = SCENARIOS.filter((s) => !only || only.includes(s.name));
const outFile = values.out ?? join(ROOT, 'bench-results.json');
const backendNames = values.backend === 'all' ? [...BACKENDS] : (values.backend ?? '').split(',').map((s) => s.trim()).filter(Boolean);
for (const name of backendNames) if (!(BACKENDS as readonly string[]).includes(name)) usage(`unknown backend '${name}'; known: ${BACKENDS.join(', ')}, all`);
// The ref seeds through its own bench code, which would start an S3 server of its own.
if (values.compare !== undefined && backendNames.includes('s3+sqlite')) usage('--compare runs on files+sqlite and files+postgres (the ref would seed into an S3 server of its own)');

const tmp = mkdtempSync(join(tmpdir(), 'memberkit-bench-'));
let ref: RefCheckout | undefined;
const cleanUp = () => {
  ref?.remove();
  rmSync(tmp, { recursive: true, force: true });
};
// An interrupted run still removes its worktree (the nodes, in the same process group, stop too).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

/** What "memberkit" (head) was: the commit checked out here and whether tracked files differed from it. */
function headCommit(): { commit: string; modified: boolean } | null {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return { commit, modified: status.trim() !== '' };
  } catch {
    return null; // not a git checkout (an unpacked release)
  }
}

const startedAt = new Date();
const head = headCommit();
const rows: ResultRow[] = [];
const failures: Array<{ scenario: string; error: string }> = [];
let fatal: string | undefined;
try {
  if (values.compare !== undefined) {
    ref = prepareRef(values.compare, tmp);
    log(`--compare ${values.compare}: ${ref.commit} checked out in ${ref.root}`);
  }
  outer: for (const backendName of backendNames) {
    const backend = await createBackend(backendName);
    useBackend(backend);
    const backendOptions = { ...options, backend: backend.name };
    try {
      for (const scenario of selected.filter((s) => backend.scenarios.includes(s.name))) {
        const t0 = performance.now();
        log(`${scenario.name} [${backend.name}]: ${scenario.description} (${repeat} rounds, ~${minutes(scenario.cost(backendOptions, ref ? 3 : 2).seconds)})`);
        const scenarioTmp = join(tmp, `${scenario.name}-${backend.name.replace(/\W/g, '-')}`);
        mkdirSync(scenarioTmp);
        try {
          rows.push(...(await scenario.run(scenarioContext(scenario.name, backendOptions, scenarioTmp, ref))));
          log(`${scenario.name} [${backend.name}]: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        } catch (err) {
          if (err instanceof CompareError) {
            fatal = err.message;
            break outer;
          }
          failures.push({ scenario: `${scenario.name} [${backend.name}]`, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
          log(`${scenario.name} [${backend.name}]: FAILED ${String(err)}`);
        } finally {
          // A scenario's gigabytes go before the next one starts.
          const t1 = performance.now();
          rmSync(scenarioTmp, { recursive: true, force: true });
          if (performance.now() - t1 > 2000) log(`${scenario.name} [${backend.name}]: its folders removed in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
        }
      }
    } finally {
      await backend.stop();
    }
  }
} catch (err) {
  if (!(err instanceof CompareError)) throw err;
  fatal = err.message;
} finally {
  cleanUp();
}

if (fatal !== undefined) {
  console.error(fatal);
  process.exit(2);
}

const subjects = ref ? (['memberkit', 'ref', 'baseline'] as const) : (['memberkit', 'baseline'] as const);
const result = {
  schema: 'memberkit-bench/2',
  startedAt: startedAt.toISOString(),
  durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 100) / 10,
  quick,
  options,
  machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '', memoryBytes: totalmem() },
  backends: backendNames,
  scenarios: selected.map((s) => s.name),
  head,
  ...(ref ? { compare: { ref: ref.ref, commit: ref.commit } } : {}),
  // samples[subject][i] of every row was measured in round i, the subjects in this order.
  rounds: Array.from({ length: repeat }, (_, i) => roundOrder(subjects, i)),
  results: rows,
  failures,
};
writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n');
if (ref) {
  const what = head ? `${head.commit.slice(0, 9)}${head.modified ? ' with uncommitted changes' : ''}` : 'this checkout';
  console.log(`head vs ${ref.short} (--compare ${ref.ref}); head = ${what}\n`);
  console.log(compareTable(rows, ref.short));
  console.log(`\n${legend(repeat, ref.short)}\nJSON: ${outFile}`);
} else {
  console.log(table(rows));
  console.log(`\n${legend(repeat)}\nJSON: ${outFile}`);
}
if (failures.length > 0) {
  for (const f of failures) console.error(`FAILED ${f.scenario}: ${f.error}`);
  process.exitCode = 1;
}
