// The benchmark runner in smoke mode: one cheap scenario, --quick, one round, a short load;
// checks that it runs end to end (node, baseline and load generator processes; with --compare
// a worktree of another commit and its own node) and that the JSON result has its shape. It
// never asserts timings. The statistics that turn interleaved samples into rows are checked
// on fixed numbers.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { cpuMs, reapedChildrenCpuMs } from '../bench/lib/common.js';
import { roundOrder } from '../bench/lib/interleave.js';
import { changeFlag, noiseOf, summarize } from '../bench/lib/stats.js';

const ROOT = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'memberkit-bench-smoke-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function bench(args: string[], timeout: number) {
  return promisify(execFile)(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(ROOT, 'bench/run.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') },
    timeout,
  });
}

type Row = Record<string, unknown> & { samples: Record<string, number[]>; ref?: Record<string, unknown> };

describe('npm run bench (smoke)', () => {
  it('runs --quick --repeat 1 --only get-small on every backend and writes a well-formed JSON result', async () => {
    const out = join(dir, 'bench-results.json');
    const { stdout } = await bench(['--quick', '--repeat', '1', '--only', 'get-small', '--backend', 'all', '--duration', '1', '--out', out], 88_000);
    expect(stdout).toMatch(/\| scenario +\| backend +\| metric +\| unit +\| memberkit +\| baseline +\| +ratio \(min…max\) \| noise/);
    const result = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    expect(result).toMatchObject({ schema: 'memberkit-bench/2', quick: true, options: { repeat: 1 }, scenarios: ['get-small'], backends: ['files+sqlite', 'files+postgres', 's3+sqlite'], failures: [], rounds: [['memberkit', 'baseline']] });
    expect(result.compare).toBeUndefined();
    expect(result.head).toMatchObject({ commit: expect.stringMatching(/^[0-9a-f]{40}$/), modified: expect.any(Boolean) });
    const rows = result.results as Row[];
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.backend))).toEqual(new Set(['files+sqlite', 'files+postgres', 's3+sqlite']));
    for (const r of rows) {
      expect(r).toMatchObject({ scenario: 'get-small' });
      expect(typeof r.metric).toBe('string');
      expect(typeof r.unit).toBe('string');
      expect(typeof r.higherIsBetter).toBe('boolean');
      expect(Object.keys(r.samples).sort()).toEqual(['baseline', 'memberkit']);
      expect(r.samples.memberkit).toHaveLength(1);
      expect(r.samples.baseline).toHaveLength(1);
      // One round: the medians are the samples, and the ratio's range is the ratio itself.
      expect(r.memberkit).toBe(r.samples.memberkit![0]);
      expect(r.baseline).toBe(r.samples.baseline![0]);
      expect(typeof r.ratio).toBe('number');
      expect(r.ratioMin).toBe(r.ratio);
      expect(r.ratioMax).toBe(r.ratio);
      expect(r.noise).toBe(0);
      expect(r.ref).toBeUndefined();
    }
  }, 90_000);

  it('--compare HEAD measures the committed HEAD from a temporary worktree in the same rounds, then removes the worktree', async () => {
    const out = join(dir, 'bench-compare.json');
    const { stdout, stderr } = await bench(['--quick', '--repeat', '1', '--only', 'get-small', '--duration', '1', '--compare', 'HEAD', '--out', out], 58_000);
    const result = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown> & { compare: { commit: string } };
    // HEAD as it was when the run started (other work may commit meanwhile).
    const commit = result.compare.commit;
    expect(execFileSync('git', ['cat-file', '-t', commit], { cwd: ROOT, encoding: 'utf8' }).trim()).toBe('commit');
    const short = commit.slice(0, 9);
    expect(stdout).toContain(`head vs ${short} (--compare HEAD)`);
    expect(stdout).toMatch(new RegExp(`\\| +head +\\| +${short} +\\| +baseline +\\| +head/baseline +\\| +${short}/baseline +\\| +head vs ${short} +\\| flag`));
    const worktree = /checked out in (\S+)/.exec(stderr)?.[1];
    expect(worktree).toBeTruthy();
    expect(existsSync(worktree!)).toBe(false);
    expect(execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: ROOT, encoding: 'utf8' })).not.toContain(worktree!);
    expect((result.head as { commit: string }).commit).toBe(commit);
    expect(result).toMatchObject({ schema: 'memberkit-bench/2', compare: { ref: 'HEAD' }, failures: [], rounds: [['memberkit', 'ref', 'baseline']] });
    const rows = result.results as Row[];
    expect(rows.map((r) => r.metric)).toEqual(['get 4 KiB c=16 req/s', 'get 4 KiB c=16 p99']);
    for (const r of rows) {
      expect(r.samples.ref).toHaveLength(1);
      expect(r.ref).toMatchObject({ value: r.samples.ref![0], flag: null });
      expect(r.ref!.ratio).toEqual(expect.objectContaining({ median: expect.any(Number) }));
      expect(r.ref!.change).toEqual(expect.objectContaining({ median: expect.any(Number) }));
    }
  }, 60_000);

  it('--compare of something that is not a commit fails with one line, before starting anything', async () => {
    const failed = await bench(['--quick', '--only', 'get-small', '--compare', 'no-such-ref-h5', '--out', join(dir, 'none.json')], 20_000).then(
      () => undefined,
      (err: { code: number; stderr: string; stdout: string }) => err,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stdout).toBe('');
    expect(failed?.stderr.trim()).toBe('--compare no-such-ref-h5: not a commit of this repository');
    expect(existsSync(join(dir, 'none.json'))).toBe(false);
  }, 30_000);
});

describe('bench statistics (interleaved samples to rows)', () => {
  it('rotates the order of the subjects from round to round', () => {
    expect([0, 1, 2, 3].map((r) => roundOrder(['memberkit', 'baseline'], r))).toEqual([
      ['memberkit', 'baseline'],
      ['baseline', 'memberkit'],
      ['memberkit', 'baseline'],
      ['baseline', 'memberkit'],
    ]);
    expect([0, 1, 2].map((r) => roundOrder(['memberkit', 'ref', 'baseline'], r).join(' '))).toEqual(['memberkit ref baseline', 'ref baseline memberkit', 'baseline memberkit ref']);
  });

  it('pairs each sample with the baseline of its own round, not medians with medians', () => {
    // The machine slowed down in round 2: both sides halved; the per-round ratio stays 0.5.
    const row = summarize('s', 'files+sqlite', { metric: 'req/s', unit: 'req/s', higherIsBetter: true, baselineName: 'bare' }, { memberkit: [100, 50, 100], baseline: [200, 100, 200] });
    expect(row).toMatchObject({ memberkit: 100, baseline: 200, ratio: 0.5, ratioMin: 0.5, ratioMax: 0.5, noise: 0 });
    // Latencies: lower is better, so the ratio is baseline/memberkit.
    const latency = summarize('s', 'b', { metric: 'p99', unit: 'ms', higherIsBetter: false, baselineName: 'bare' }, { memberkit: [10, 40, 20], baseline: [5, 10, 5] });
    expect(latency).toMatchObject({ ratio: 0.25, ratioMin: 0.25, ratioMax: 0.5, noise: 0.5 });
    // A zero sample has no speed: that round is left out of the ratio.
    expect(summarize('s', 'b', { metric: 'p50', unit: 'ms', higherIsBetter: false, baselineName: 'bare' }, { memberkit: [1, 2], baseline: [0, 1] })).toMatchObject({ ratio: 0.5, ratioMin: 0.5 });
    expect(summarize('s', 'b', { metric: 'p50', unit: 'ms', higherIsBetter: false, baselineName: 'bare' }, { memberkit: [1], baseline: [0] })).toMatchObject({ ratio: null, noise: null });
  });

  it('reports the change from the ref in percent and flags it only beyond the noise of both rows', () => {
    const spec = { metric: 'req/s', unit: 'req/s', higherIsBetter: true, baselineName: 'bare' };
    // memberkit 0.6 of the baseline in every round, the ref 0.4: +50 %, no noise at all: flagged.
    const faster = summarize('s', 'b', spec, { memberkit: [60, 30, 60], ref: [40, 20, 40], baseline: [100, 50, 100] });
    expect(faster.ref).toMatchObject({ value: 40, ratio: { median: 0.4, min: 0.4, max: 0.4 }, change: { median: 50, min: 50, max: 50 }, flag: 'faster' });
    // The same medians, but memberkit's ratio swings by ±60 %: the +50 % is inside its noise.
    const noisy = summarize('s', 'b', spec, { memberkit: [60, 24, 96], ref: [40, 40, 40], baseline: [100, 100, 100] });
    expect(noisy.noise).toBeCloseTo(0.6);
    expect(noisy.ref?.change?.median).toBe(50);
    expect(noisy.ref?.flag).toBeNull();
    // Slower: latencies twice as long as the ref's.
    const slower = summarize('s', 'b', { ...spec, unit: 'ms', higherIsBetter: false }, { memberkit: [20, 20], ref: [10, 10], baseline: [5, 5] });
    expect(slower.ref).toMatchObject({ change: { median: -50 }, flag: 'slower' });
    expect(changeFlag({ median: 1.5, min: 1.5, max: 1.5 }, 0, 0, 1)).toBeNull();
    expect(noiseOf({ median: 0.5, min: 0.4, max: 0.6 })).toBeCloseTo(0.2);
  });
});

describe('bench CPU accounting (cpuMs)', () => {
  it('counts the CPU of a process with its descendants (also one that ended), and of processes named as asked', async () => {
    // A shell whose child (a node process) spins until it used 400 ms of CPU and ends; the
    // shell then says so and waits. Counted through the shell's pid alone.
    const spin = `const t = process.cpuUsage(); while (process.cpuUsage(t).user < 400000);`;
    const shell = spawn('sh', ['-c', `"${process.execPath}" -e "${spin}"; echo done; sleep 30`], { stdio: ['ignore', 'pipe', 'ignore'] });
    const before = cpuMs([shell.pid]);
    await new Promise((resolve) => shell.stdout!.on('data', resolve));
    const used = cpuMs([shell.pid]) - before;
    shell.kill();
    expect(used).toBeGreaterThanOrEqual(300);
    expect(used).toBeLessThan(5_000);
    // By name: this very process is a 'node'.
    expect(cpuMs([], ['node'])).toBeGreaterThan(0);
    expect(cpuMs([undefined, 999_999_999])).toBe(0);
  });

  it('counts a synchronous child run (a shell and what it starts) through this process\'s reaped children', () => {
    const spin = `const t = process.cpuUsage(); while (process.cpuUsage(t).user < 300000);`;
    const before = reapedChildrenCpuMs();
    execFileSync('sh', ['-c', `"${process.execPath}" -e "${spin}" | cat > /dev/null`]);
    const used = reapedChildrenCpuMs() - before;
    expect(used).toBeGreaterThanOrEqual(250);
    expect(used).toBeLessThan(5_000);
  });

  it('a subject that reports no figure (NaN: an older --compare ref) has no value and no ratio, not NaN', () => {
    const spec = { metric: 'CPU per file', unit: 'µs', higherIsBetter: false, baselineName: 'bare' };
    const row = summarize('s', 'b', spec, { memberkit: [80, 90], ref: [NaN, NaN], baseline: [20, 20] });
    expect(row.memberkit).toBe(85);
    expect(row.ref).toMatchObject({ value: null, ratio: null, change: null });
  });
});
