// `npm start` as the README says, every extension on (issue #16 item 2): the README's start
// command runs in the repository (TypeScript sources through tsx and tsconfig.dev.json,
// exactly as users run it; the landing pages answered 500 there while only tests that
// compile differently covered them), on a data folder of its own (serve's [dir] argument
// and --port 0, so ./data and port 8080 stay untouched), with views, packages and query on.
// Every route of every extension is requested: listViews, every theme it lists, a BagIt
// package, listQueryEngines, the engine description and a query.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { testToken, writeConfig } from './support/node-process.js';
import { startServer, type Server } from './support/processes.js';
import { resourceMap, sysmeta } from '../packages/views/test/support/node.js';
import { EML, EML_FORMAT, ORE_FORMAT } from '../packages/views/test/support/dataset.js';

const ROOT = join(import.meta.dirname, '..');
const WRITER = 'CN=writer';

/** The start command of the README's "Two commands" block (`npm ci && npm start` → `npm start`). */
export function readmeStartCommand(readme: string): string {
  const block = /## Two commands\s+```bash\n([\s\S]*?)```/.exec(readme)?.[1];
  const line = block?.split('\n').find((l) => /\bstart\b/.test(l));
  const command = line?.replace(/#.*/, '').split('&&').pop()?.trim();
  if (!command) throw new Error('README.md has no start command in its "Two commands" block');
  return command;
}

describe('the README start command with every extension on', () => {
  let dir: string;
  let server: Server;
  let base: string;
  const data = Buffer.from('site,temp\nA,12.5\n');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memberkit-readme-start-'));
    writeConfig(dir, {
      node: { identifier: 'urn:node:READMESTART' },
      log: { level: 'warn' },
      extensions: { views: true, packages: true, query: { enabled: true } },
    });
    const start = readmeStartCommand(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(start).toBe('npm start');
    server = await startServer(`${start} -- ${dir} --port 0 --host 127.0.0.1`, ROOT);
    base = `http://127.0.0.1:${server.port}/mn/v2`;
    const client = new MemberNodeClient({ baseUrl: `http://127.0.0.1:${server.port}/mn`, token: await testToken(WRITER) });
    const mine = { rightsHolder: WRITER };
    await client.create('start-eml', EML, sysmeta('start-eml', EML, { formatId: EML_FORMAT, ...mine }));
    await client.create('start-data', data, sysmeta('start-data', data, { formatId: 'text/csv', fileName: 'start.csv', ...mine }));
    const map = resourceMap('start-map', 'start-eml', ['start-data']);
    await client.create('start-map', map, sysmeta('start-map', Buffer.from(map), { formatId: ORE_FORMAT, ...mine }));
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const get = async (path: string): Promise<Response> => {
    const res = await fetch(`${base}${path}`);
    if (res.status >= 500) throw new Error(`GET ${path}: ${res.status}\n${await res.text()}\nserver output:\n${server.output()}`);
    return res;
  };

  it('the capabilities list MNView, MNPackage and MNQuery as available', async () => {
    const xml = await (await get('/node')).text();
    for (const service of ['MNView', 'MNPackage', 'MNQuery']) expect(xml).toMatch(new RegExp(`name="${service}"[^>]*available="true"`));
  });

  it('every theme of listViews renders every object, the default theme as an HTML landing page', async () => {
    const list = await (await get('/views')).text();
    const themes = [...list.matchAll(/<option>([^<]+)<\/option>/g)].map((m) => m[1]!);
    expect(themes).toEqual(expect.arrayContaining(['default', 'metadata', 'jsonld']));
    expect((await get('/view')).status).toBe(200);
    for (const theme of themes) {
      for (const pid of ['start-eml', 'start-data', 'start-map']) {
        const res = await get(`/views/${theme}/${pid}`);
        expect(res.status, `${theme}/${pid}`).toBe(200);
        const body = await res.text();
        if (theme === 'default') {
          expect(res.headers.get('content-type'), `${theme}/${pid}`).toMatch(/^text\/html/);
          expect(body).toMatch(/^<!DOCTYPE html>/i);
          expect(body).toContain('application/ld+json');
        }
      }
    }
    const page = await (await get('/views/default/start-eml')).text();
    expect(page).toContain('Soil temperature');
  });

  it('a package of the resource map is a BagIt zip', async () => {
    const res = await get(`/packages/${encodeURIComponent('application/bagit-097')}/start-map`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/zip/);
    const zip = Buffer.from(await res.arrayBuffer());
    expect(zip.subarray(0, 4).toString('hex')).toBe('504b0304');
    expect(zip.includes(Buffer.from('bagit.txt'))).toBe(true);
  });

  it('listQueryEngines, the solr description and a query that finds the dataset', async () => {
    expect(await (await get('/query')).text()).toContain('solr');
    expect((await get('/query/solr')).status).toBe(200);
    // The index follows the catalogue in the background: bounded wait for the three objects.
    let body = '';
    for (let i = 0; i < 50; i++) {
      const res = await get('/query/solr/?q=*:*&fl=id&rows=10');
      expect(res.status).toBe(200);
      body = await res.text();
      if (body.includes('start-eml') && body.includes('start-map')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(body).toContain('start-eml');
  });
});
