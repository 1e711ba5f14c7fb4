import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SciencePool, ScienceCache } from '../src/index.js';
import { deepMap, keywordFloodEml } from './hostile.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const EML = 'https://eml.ecoinformatics.org/eml-2.2.0';

describe('SciencePool (worker threads, loaded from TypeScript source under vitest)', () => {
  const pool = new SciencePool({ threads: 2 });
  afterAll(() => pool.close());

  it('reads metadata (with its plain text) and maps in a worker', async () => {
    const md = await pool.metadata(EML, Buffer.from(fixture('eml-2.2.0.xml')), { withText: true });
    expect(md.status).toBe('read');
    if (md.status !== 'read') return;
    expect(md.value.title).toMatch(/^Soil temperature/);
    expect(md.text).toContain('Toolik Lake & the Kuparuk River');
    const map = await pool.resourceMap(fixture('resource-map.xml'));
    expect(map).toMatchObject({ status: 'read', value: { aggregated: ['urn:uuid:4c1d0a2e-8f51-4b9e-a7f3-1b2c3d4e5f60', 'toolik_soil_2016_2019.csv', 'sensor/calibration notes.pdf'] } });
    expect(await pool.metadata(EML, 'not xml')).toMatchObject({ status: 'unreadable' });
  });

  it('a map nested 32,000 deep (1.9 MB) is not indexed, in milliseconds', async () => {
    const t0 = performance.now();
    const r = await pool.resourceMap(deepMap(32_000, 1_900_000));
    expect(r).toEqual({ status: 'not-indexed', reason: 'elements nested more than 256 deep' });
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it('a document over the time budget: its worker is terminated, not indexed, the pool goes on', async () => {
    const slow = new SciencePool({ threads: 1, timeBudgetMs: 1 });
    try {
      // The first task waits for the worker to start (an allowance on top of the budget).
      expect((await slow.metadata(EML, '<eml:eml xmlns:eml="x"><dataset><title>t</title></dataset></eml:eml>')).status).toBe('read');
      const r = await slow.metadata(EML, keywordFloodEml(120_000));
      expect(r).toEqual({ status: 'not-indexed', reason: 'reading it took longer than 1 ms' });
    } finally {
      await slow.close();
    }
    expect((await pool.metadata(EML, fixture('eml-2.2.0.xml'))).status).toBe('read');
  });

  it('a document that needs more memory than the worker may use is not indexed, the process lives', async () => {
    // Budgets off, 16 MB of heap: the parser of a deep map runs out of memory in the worker.
    const small = new SciencePool({ threads: 1, maxOldGenerationSizeMb: 16, timeBudgetMs: 20_000, budgets: { maxDepth: 1e9, maxElements: 1e9 } });
    try {
      const r = await small.resourceMap(deepMap(40_000, 0));
      expect(r).toEqual({ status: 'not-indexed', reason: 'reading it needed more than 16 MB of memory' });
    } finally {
      await small.close();
    }
  });

  it('ScienceCache parses through the pool and caches "not indexed" per (pid, serialVersion)', async () => {
    let loads = 0;
    const cache = new ScienceCache({
      pool,
      objects: async () => {
        loads++;
        return Buffer.from(deepMap(40_000, 280_000));
      },
    });
    const ref = { pid: 'deep', formatId: 'http://www.openarchives.org/ore/terms', serialVersion: 1 };
    expect(await cache.resourceMapResult(ref)).toEqual({ status: 'not-indexed', reason: 'elements nested more than 256 deep' });
    expect(await cache.resourceMap(ref)).toBeUndefined();
    expect(loads).toBe(1);
    await cache.resourceMap({ ...ref, serialVersion: 2 });
    expect(loads).toBe(2);
  });
});

// The compiled package (dist/, built by `tsc -b`, which `npm test` runs first) in a plain node
// process without any loader: the worker is dist/worker.js, and idle workers let the process exit.
const DIST = new URL('../dist/index.js', import.meta.url);
describe.skipIf(!existsSync(fileURLToPath(DIST)))('SciencePool from compiled JS', () => {
  it('reads in a worker and lets the process exit without close()', async () => {
    const script = `
      import { SciencePool } from ${JSON.stringify(DIST.href)};
      const pool = new SciencePool({ threads: 1 });
      const md = await pool.metadata('${EML}', Buffer.from('<eml:eml xmlns:eml="x"><dataset><title>from dist</title></dataset></eml:eml>'));
      const deep = await pool.resourceMap('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' + '<a>'.repeat(40000) + '</a>'.repeat(40000) + '</rdf:RDF>');
      console.log(JSON.stringify([md.status === 'read' && md.value.title, deep]));`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout))),
    );
    expect(JSON.parse(out)).toEqual(['from dist', { status: 'not-indexed', reason: 'elements nested more than 256 deep' }]);
  }, 60_000);
});
