// The benchmark runner in smoke mode: one cheap scenario, --quick, a short load; checks that
// it runs end to end (node, baseline and load generator processes) and that the JSON result
// has its shape. It never asserts timings.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'memberkit-bench-smoke-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench (smoke)', () => {
  it('runs --quick --only get-small on every backend and writes a well-formed JSON result', async () => {
    const out = join(dir, 'bench-results.json');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=@memberkit/source', '--import', 'tsx', join(ROOT, 'bench/run.ts'), '--quick', '--only', 'get-small', '--backend', 'all', '--duration', '1', '--out', out],
      { cwd: ROOT, env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') }, timeout: 88_000 },
    );
    expect(stdout).toMatch(/\| scenario +\| backend +\| metric/);
    const result = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    expect(result).toMatchObject({ schema: 'memberkit-bench/1', quick: true, scenarios: ['get-small'], backends: ['files+sqlite', 'files+postgres', 's3+sqlite'], failures: [] });
    const rows = result.results as Array<Record<string, unknown>>;
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.backend))).toEqual(new Set(['files+sqlite', 'files+postgres', 's3+sqlite']));
    for (const r of rows) {
      expect(r).toMatchObject({ scenario: 'get-small' });
      expect(typeof r.metric).toBe('string');
      expect(typeof r.unit).toBe('string');
      expect(typeof r.memberkit).toBe('number');
      expect(typeof r.baseline).toBe('number');
      expect(r.ratio === null || typeof r.ratio === 'number').toBe(true);
      expect(typeof r.higherIsBetter).toBe('boolean');
    }
  }, 90_000);
});
