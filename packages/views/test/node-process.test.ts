// MNView and MNPackage in a node PROCESS started as users start it (`memberkit serve`, a
// configuration with both extensions on and a public node.baseURL): links come from the
// configured baseURL whatever X-Forwarded-* a client sends, pages carry their security
// headers, nothing runs in headless Chromium, and the package is one folder that unzip accepts.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { MemberNodeClient } from '@memberkit/client';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from '../../../test/support/node-process.js';
import { resourceMap, sysmeta } from './support/node.js';
import { EML, EML_FORMAT, ORE_FORMAT } from './support/dataset.js';
import { unzip } from './support/unzip.js';
import { bagRoot, validateBag } from './support/bagit.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PUBLIC_BASE = 'https://data.example.org/mn';
const WRITER = 'CN=writer';
const HOSTILE = Buffer.from(
  EML.toString('utf8')
    .replace(/<title>Soil temperature[^<]*<\/title>/, '<title>&lt;/script&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;</title>')
    .replace('<language>english</language>', '<language>english</language><h:script xmlns:h="http://www.w3.org/1999/xhtml">window.__pwned=2</h:script>')
    .replace('<url>https://spdx.org/licenses/CC-BY-4.0.html</url>', '<url>javascript:window.__pwned=3</url>'),
);

describe('views and packages in a node process', () => {
  let dir: string;
  let node: NodeProcess;
  const data = Buffer.from('a,b\n1,2\n');
  const get = (path: string, headers: Record<string, string> = {}): Promise<Response> => fetch(`${node.baseUrl}${path}`, { headers });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memberkit-views-process-'));
    writeConfig(dir, {
      node: { identifier: 'urn:node:VIEWSE2E', baseURL: PUBLIC_BASE },
      extensions: { views: true, packages: true, query: { enabled: false } },
    });
    node = await startNodeProcess(dir);
    const client = new MemberNodeClient({ baseUrl: node.baseUrl, token: await testToken(WRITER) });
    const mine = { rightsHolder: WRITER };
    await client.create('e2e-eml', HOSTILE, sysmeta('e2e-eml', HOSTILE, { formatId: EML_FORMAT, mediaType: { name: 'text/html', property: [] }, ...mine }));
    await client.create('e2e-data', data, sysmeta('e2e-data', data, { formatId: 'text/csv', fileName: 'e2e.csv', ...mine }));
    const map = resourceMap('e2e-map', 'e2e-eml', ['e2e-data']);
    await client.create('e2e-map', map, sysmeta('e2e-map', Buffer.from(map), { formatId: ORE_FORMAT, ...mine }));
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('canonical links and JSON-LD @id use node.baseURL; X-Forwarded-Host/Proto are ignored', async () => {
    const forged = { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'javascript' };
    const res = await get('/v2/views/default/e2e-data', forged);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`<link rel="canonical" href="${PUBLIC_BASE}/v2/views/default/e2e-data"/>`);
    expect(html).toContain(`href="${PUBLIC_BASE}/v2/packages/application%2Fbagit-097/e2e-map"`);
    expect(html).not.toContain('evil.example');
    const ld = (await (await get('/v2/views/jsonld/e2e-data', forged)).json()) as { '@id': string; distribution: Array<{ contentUrl: string }> };
    expect(ld['@id']).toBe(`${PUBLIC_BASE}/v2/views/default/e2e-data`);
    for (const d of ld.distribution) expect(d.contentUrl.startsWith(`${PUBLIC_BASE}/v2/object/`)).toBe(true);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await get('/v2/views/metadata/e2e-eml')).headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });

  it.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('nothing executes in headless Chromium', async () => {
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
      const page = await browser.newPage();
      for (const path of ['/v2/views/default/e2e-eml', '/v2/views/metadata/e2e-eml', '/v2/views/default/e2e-data', '/v2/views/default/e2e-map']) {
        expect((await page.goto(`${node.baseUrl}${path}`))?.status(), path).toBe(200);
        expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned), path).toBeUndefined();
        const hrefs = await page.locator('a[href]').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
        for (const href of hrefs) expect(href, path).toMatch(/^https?:\/\//);
      }
    } finally {
      await browser?.close();
    }
  }, 60_000);

  it('the package: one base folder, valid manifests, accepted by unzip; private and varying by caller', async () => {
    const res = await get('/v2/packages/application%2Fbagit-097/e2e-map');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private');
    expect(res.headers.get('vary')).toMatch(/Authorization/);
    const zip = Buffer.from(await res.arrayBuffer());
    const { base, entries } = bagRoot(unzip(zip));
    expect(base).toBe('e2e-map');
    expect(validateBag(entries)).toEqual([]);
    expect(entries.get('data/e2e.csv')?.data.equals(data)).toBe(true);
    const file = join(dir, 'package.zip');
    writeFileSync(file, zip);
    expect(execFileSync('unzip', ['-t', file]).toString()).toMatch(/No errors detected/);
    expect(execFileSync('unzip', ['-Z1', file]).toString().trim().split('\n').every((n) => n.startsWith('e2e-map/'))).toBe(true);
  });
});
